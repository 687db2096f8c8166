"""`conteur verify` catches an edited, deleted, inserted or reordered event, in a database
and in an exported JSON Lines log (DESIGN, Event store)."""

from __future__ import annotations

import json
import sqlite3

import pytest

from conteur.events.game import CommandRejected
from conteur.server.store.chain import row_to_line
from conteur.server.cli.main import main
from conteur.server.store.sqlite import Pending, SQLiteStore


def ev(n):
    return CommandRejected(command_type="throw", code="rule", message=f"event {n}", character="bruno")


@pytest.fixture
def db(tmp_path):
    path = tmp_path / "chronicle.db"
    with SQLiteStore(path) as store:
        for i in range(1, 11):
            store.append_sync(Pending(session="s1" if i % 3 else "s2", events=[ev(i)], actor="st"))
    return path


def tamper(path, *sql):
    conn = sqlite3.connect(path)
    conn.executescript("DROP TRIGGER events_no_update; DROP TRIGGER events_no_delete;" + "".join(sql))
    conn.commit()
    conn.close()


def verify(capsys, path):
    code = main(["verify", str(path)])
    return code, capsys.readouterr().out


def test_intact_database_verifies(db, capsys):
    code, out = verify(capsys, db)
    assert code == 0 and out.startswith("OK") and "10 events" in out


def test_edited_event_is_named(db, capsys):
    tamper(db, "UPDATE events SET data = replace(data, 'event 5', 'event 6') WHERE seq=5;")
    code, out = verify(capsys, db)
    assert code == 1 and "seq 5" in out and "edited" in out


def test_edited_actor_is_named(db, capsys):
    tamper(db, "UPDATE events SET actor='mallory' WHERE seq=7;")
    code, out = verify(capsys, db)
    assert code == 1 and "seq 7" in out


def test_deleted_event_is_named(db, capsys):
    tamper(db, "DELETE FROM events WHERE seq=4;")
    code, out = verify(capsys, db)
    assert code == 1 and "seq 4" in out and "missing" in out


def test_inserted_event_is_named(db, capsys):
    # shift the tail up by one and insert a forged row at 5, with a self-consistent hash
    from conteur.server.store.chain import row_hash
    conn = sqlite3.connect(db)
    conn.executescript("DROP TRIGGER events_no_update; DROP TRIGGER events_no_delete;")
    rows = conn.execute("SELECT * FROM events WHERE seq >= 5 ORDER BY seq DESC").fetchall()
    for r in rows:
        conn.execute("UPDATE events SET seq = seq + 1 WHERE seq = ?", (r[0],))
    prev = conn.execute("SELECT hash, session FROM events WHERE seq=4").fetchone()
    data = b'{"type":"command_rejected","command_type":"bid","code":"rule","message":"forged"}'
    h = row_hash(prev[0], 5, prev[1], "command_rejected", data, "st", "", "", "2026-01-01")
    conn.execute("INSERT INTO events VALUES (5,?,?,?,?,?,?,?,?,?)",
                 (prev[1], "command_rejected", data, "st", "", "", "2026-01-01", prev[0], h))
    conn.commit()
    conn.close()
    code, out = verify(capsys, db)
    assert code == 1 and "seq 6" in out  # the forged row chains, the next real one no longer does


def test_reordered_events_are_named(db, capsys):
    tamper(db, "UPDATE events SET seq = 100 WHERE seq = 5;",
           "UPDATE events SET seq = 5 WHERE seq = 8;", "UPDATE events SET seq = 8 WHERE seq = 100;")
    code, out = verify(capsys, db)
    assert code == 1 and "seq 5" in out


def export(db, path):
    with SQLiteStore(db) as store:
        path.write_bytes(b"".join(row_to_line(r) + b"\n" for r in store.rows()))
    return path


def test_exported_log_verifies_and_an_edited_line_is_named(db, tmp_path, capsys):
    log = export(db, tmp_path / "log.jsonl")
    code, out = verify(capsys, log)
    assert code == 0 and "10 events" in out
    lines = log.read_text().splitlines()
    row = json.loads(lines[2])
    row["data"]["message"] = "I won"
    lines[2] = json.dumps(row, separators=(",", ":"))
    log.write_text("\n".join(lines) + "\n")
    code, out = verify(capsys, log)
    assert code == 1 and f"seq {row['seq']}" in out


def test_deleted_and_swapped_lines_in_a_log_are_named(db, tmp_path, capsys):
    log = export(db, tmp_path / "log.jsonl")
    lines = log.read_text().splitlines()
    log.write_text("\n".join(lines[:3] + lines[4:]) + "\n")
    code, out = verify(capsys, log)
    assert code == 1
    lines2 = lines[:]
    lines2[5], lines2[6] = lines2[6], lines2[5]
    log.write_text("\n".join(lines2) + "\n")
    code, out = verify(capsys, log)
    assert code == 1 and "out of order" in out


def test_garbage_log_line_is_named(tmp_path, capsys):
    log = tmp_path / "bad.jsonl"
    log.write_text('{"seq": 1}\n')
    code, out = verify(capsys, log)
    assert code == 1 and "line 1" in out
