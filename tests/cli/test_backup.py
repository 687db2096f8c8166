"""Backups of a live chronicle: consistent while the server appends, standalone,
and restorable without ever destroying the database they replace."""

from __future__ import annotations

import os
import sqlite3
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

from conteur.server.audit.verify import verify_path
from conteur.server.store.backup import BackupError, DatabaseInUse, backup, restore

# The events table as the store declares it (DESIGN.md, "Event store").
SCHEMA = """
CREATE TABLE IF NOT EXISTS events (
    seq INTEGER PRIMARY KEY,
    session TEXT NOT NULL,
    type TEXT NOT NULL,
    data BLOB NOT NULL,
    actor TEXT,
    device TEXT,
    command_id TEXT,
    at TEXT NOT NULL,
    prev_hash BLOB,
    hash BLOB NOT NULL
)
"""

# A stand-in for the server: a separate process appending one event per transaction,
# WAL + synchronous=FULL like the store, until the stop file appears.
APPENDER = textwrap.dedent("""
    import hashlib, os, sqlite3, sys
    db, stop = sys.argv[1], sys.argv[2]
    conn = sqlite3.connect(db, isolation_level=None, timeout=30)
    conn.execute("PRAGMA journal_mode=wal")
    conn.execute("PRAGMA synchronous=FULL")
    prev = conn.execute("SELECT hash FROM events ORDER BY seq DESC LIMIT 1").fetchone()
    prev = bytes.fromhex(prev[0]) if prev else b""
    while not os.path.exists(stop):
        data = os.urandom(200)
        digest = hashlib.sha256(prev + data).digest()
        conn.execute("BEGIN IMMEDIATE")
        conn.execute(
            "INSERT INTO events (session, type, data, actor, device, command_id, at,"
            " prev_hash, hash) VALUES ('s1', 'met.bid_declared', ?, 'p1', 'd1', '',"
            " '2026-11-29T19:00:00Z', ?, ?)", (data, prev.hex(), digest.hex()))
        conn.execute("COMMIT")
        prev = digest
""")


# A row as a server that died mid-night left it: never verified by the tests using it.
FAKE_ROW = ("INSERT INTO events (session, type, data, actor, device, command_id, at, prev_hash,"
            " hash) VALUES ('s1', 'session.frozen', x'00', '', '', '', '2026-11-29T19:00:00Z',"
            " '', '')")


def make_db(path: Path, rows: int) -> Path:
    """A real chronicle of ``rows`` events (more, on an existing one): restore verifies
    the hash chain of what it puts back, so the rows are the store's own."""
    from conteur.events.session import SceneOpened
    from conteur.server.store.sqlite import SQLiteStore, append_events

    with SQLiteStore(path) as store:
        append_events(store, "s1", [SceneOpened(scene=f"sc{i}", name="x" * 900) for i in range(rows)],
                      actor="st", device="d0")
    return path


def head(path: Path) -> int:
    conn = sqlite3.connect(path, timeout=30)
    try:
        return conn.execute("SELECT coalesce(max(seq), 0) FROM events").fetchone()[0]
    finally:
        conn.close()


def seqs(path: Path) -> list[int]:
    conn = sqlite3.connect(f"{path.as_uri()}?mode=ro", uri=True)
    try:
        return [row[0] for row in conn.execute("SELECT seq FROM events ORDER BY seq")]
    finally:
        conn.close()


def integrity(path: Path) -> list[tuple]:
    conn = sqlite3.connect(f"{path.as_uri()}?mode=ro", uri=True)
    try:
        return conn.execute("PRAGMA integrity_check").fetchall()
    finally:
        conn.close()


def wait_until(predicate, what: str) -> None:
    # A generous bound so a stuck appender fails the test instead of hanging it;
    # nothing asserts how long anything took.
    deadline = time.monotonic() + 60
    while not predicate():
        if time.monotonic() > deadline:
            pytest.fail(f"gave up waiting for {what}")
        time.sleep(0.01)


@pytest.fixture
def appender(tmp_path):
    """Start the appending process on a database; yields (db, process)."""
    db = make_db(tmp_path / "live.db", rows=20_000)
    stop = tmp_path / "stop"
    proc = subprocess.Popen([sys.executable, "-c", APPENDER, str(db), str(stop)])
    try:
        yield db, proc
    finally:
        stop.touch()
        proc.wait(timeout=60)


def test_backup_while_appending_holds_every_event_committed_before_it_began(appender, tmp_path):
    db, proc = appender
    wait_until(lambda: head(db) > 20_100, "the appender to start")
    committed_before = head(db)

    (tmp_path / "stick").mkdir()  # a mounted stick: backup never makes the folder
    count = backup(db, tmp_path / "stick" / "copy.db")

    copy = tmp_path / "stick" / "copy.db"
    assert integrity(copy) == [("ok",)]
    assert seqs(copy) == list(range(1, count + 1)), "seqs in the copy are gapless from 1"
    assert count >= committed_before
    # The appender kept going through the backup and is still alive: nothing blocked it.
    wait_until(lambda: head(db) > count + 100, "appends after the backup")
    assert proc.poll() is None


def test_backup_is_one_standalone_file(tmp_path):
    db = make_db(tmp_path / "live.db", rows=50)
    server = sqlite3.connect(db)  # the server holds the database open, -wal and all
    server.execute(FAKE_ROW)
    server.commit()
    stick = tmp_path / "stick"
    stick.mkdir()

    assert backup(db, stick / "copy.db") == 51

    assert sorted(p.name for p in stick.iterdir()) == ["copy.db"]
    moved = tmp_path / "elsewhere.db"
    os.replace(stick / "copy.db", moved)
    conn = sqlite3.connect(moved)
    assert conn.execute("PRAGMA journal_mode").fetchone() == ("delete",)
    assert conn.execute("SELECT count(*) FROM events").fetchone() == (51,)
    conn.close()
    server.close()


def test_backup_replaces_the_previous_copy_only_when_complete(tmp_path):
    db = make_db(tmp_path / "live.db", rows=10)
    target = tmp_path / "copy.db"
    target.write_bytes(b"an older backup")
    (tmp_path / "copy.db.partial").write_bytes(b"left over by a stick pulled mid-copy")

    assert backup(db, target) == 10
    assert seqs(target) == list(range(1, 11))
    assert not (tmp_path / "copy.db.partial").exists()


def test_backup_refuses_an_empty_file_and_makes_nothing(tmp_path):
    db = tmp_path / "empty.db"
    sqlite3.connect(db).close()  # 0 bytes: a failed copy, not a chronicle
    with pytest.raises(BackupError, match="empty"):
        backup(db, tmp_path / "copy.db")
    assert not (tmp_path / "copy.db").exists()


def test_backup_refuses_a_file_that_is_not_a_database(tmp_path):
    bogus = tmp_path / "notes.db"
    bogus.write_bytes(b"not sqlite at all" * 100)
    with pytest.raises(BackupError):
        backup(bogus, tmp_path / "copy.db")
    assert not (tmp_path / "copy.db").exists()
    with pytest.raises(BackupError, match="no database"):
        backup(tmp_path / "missing.db", tmp_path / "copy.db")


def test_restore_round_trip_gives_back_every_event(tmp_path):
    db = make_db(tmp_path / "live.db", rows=300)
    original = seqs(db)
    (tmp_path / "stick").mkdir()
    backup(db, tmp_path / "stick" / "copy.db")

    # The laptop died: a new machine, no database at all.
    (tmp_path / "new-machine").mkdir()
    fresh = tmp_path / "new-machine" / "conteur.db"
    assert restore(tmp_path / "stick" / "copy.db", fresh, verify=verify_path) == 300

    assert seqs(fresh) == original
    assert integrity(fresh) == [("ok",)]
    conn = sqlite3.connect(fresh)
    assert conn.execute("PRAGMA journal_mode").fetchone() == ("wal",)
    before = conn.execute("SELECT data, hash FROM events ORDER BY seq").fetchall()
    conn.close()
    conn = sqlite3.connect(db)
    assert conn.execute("SELECT data, hash FROM events ORDER BY seq").fetchall() == before
    conn.close()


def test_restore_refuses_a_database_the_server_has_open(tmp_path):
    db = make_db(tmp_path / "live.db", rows=5)
    backup(db, tmp_path / "copy.db")
    server = sqlite3.connect(db)
    server.execute("SELECT count(*) FROM events").fetchone()

    with pytest.raises(DatabaseInUse, match="server running"):
        restore(tmp_path / "copy.db", db, verify=verify_path)

    assert server.execute("SELECT count(*) FROM events").fetchone() == (5,)
    assert sorted(p.name for p in tmp_path.iterdir() if "before-restore" in p.name) == []
    server.close()


def test_restore_moves_the_replaced_database_aside_with_its_newer_events(tmp_path):
    db = make_db(tmp_path / "live.db", rows=5)
    backup(db, tmp_path / "copy.db")
    # Events appended after the backup, left in the -wal by a server that died.
    crashed = subprocess.run([sys.executable, "-c", textwrap.dedent(f"""
        import os, sqlite3
        conn = sqlite3.connect({str(db)!r})
        conn.execute({FAKE_ROW!r})
        conn.commit()
        os._exit(0)  # no clean close: the -wal stays
    """)])
    assert crashed.returncode == 0

    # the backup holds fewer events than the database: only --force restores it
    with pytest.raises(BackupError, match="--force"):
        restore(tmp_path / "copy.db", db, verify=verify_path)
    assert restore(tmp_path / "copy.db", db, verify=verify_path, force=True) == 5

    assert seqs(db) == [1, 2, 3, 4, 5]
    [aside] = [p for p in tmp_path.iterdir() if p.name.startswith("live.db.before-restore-")
               and not p.name.endswith(("-wal", "-shm"))]
    assert seqs(aside) == [1, 2, 3, 4, 5, 6]


def test_forced_restore_leaves_the_running_server_on_the_old_file(tmp_path):
    db = make_db(tmp_path / "live.db", rows=5)
    backup(db, tmp_path / "copy.db")
    make_db(db, rows=2)  # the live chronicle went on to 7 events
    server = sqlite3.connect(db)
    server.execute("SELECT count(*) FROM events").fetchone()  # opened, as a server has

    assert restore(tmp_path / "copy.db", db, verify=verify_path, force=True) == 5

    assert seqs(db) == [1, 2, 3, 4, 5]
    assert server.execute("SELECT count(*) FROM events").fetchone() == (7,)
    server.close()


def test_restore_refuses_a_damaged_backup_and_keeps_the_database(tmp_path):
    db = make_db(tmp_path / "live.db", rows=5)
    damaged = tmp_path / "copy.db"
    damaged.write_bytes(b"SQLite format 3\x00" + b"\xff" * 4000)
    with pytest.raises(BackupError):
        restore(damaged, db, verify=verify_path)
    assert seqs(db) == [1, 2, 3, 4, 5]


def test_cli_backup_into_a_folder_names_the_copy_by_time(tmp_path, capsys):
    from conteur.server.cli.backup import main

    db = make_db(tmp_path / "conteur.db", rows=7)
    stick = tmp_path / "stick"
    stick.mkdir()

    assert main(["backup", "--db", str(db), "--to", str(stick)]) == 0

    [copy] = stick.iterdir()
    assert copy.name.startswith("conteur-") and copy.suffix == ".db"
    assert seqs(copy) == list(range(1, 8))
    assert "backed up 7 events" in capsys.readouterr().out


def test_cli_restore_tells_to_stop_the_server_then_force_works(tmp_path, capsys):
    from conteur.server.cli.backup import main

    db = make_db(tmp_path / "conteur.db", rows=3)
    main(["backup", "--db", str(db), "--to", str(tmp_path / "copy.db")])
    server = sqlite3.connect(db)
    server.execute("SELECT count(*) FROM events").fetchone()  # opened, as a server has

    assert main(["restore", "--from", str(tmp_path / "copy.db"), "--db", str(db)]) == 4
    assert "systemctl stop conteur" in capsys.readouterr().err
    assert main(["restore", "--from", str(tmp_path / "copy.db"), "--db", str(db),
                 "--force"]) == 0
    assert "restored 3 events" in capsys.readouterr().out
    server.close()


@pytest.mark.skipif(os.geteuid() != 0, reason="needs root to run restore as `sudo` would")
def test_restore_as_root_gives_the_database_to_the_data_folders_owner(tmp_path):
    db = make_db(tmp_path / "live.db", rows=3)
    backup(db, tmp_path / "copy.db")
    data = tmp_path / "var-lib-conteur"
    data.mkdir()
    os.chown(data, 4242, 4242)  # the `conteur` user of the unit

    restore(tmp_path / "copy.db", data / "conteur.db", verify=verify_path)

    owner = (data / "conteur.db").stat()
    assert (owner.st_uid, owner.st_gid) == (4242, 4242)


def test_backup_and_restore_refuse_to_copy_a_file_onto_itself(tmp_path):
    db = make_db(tmp_path / "live.db", rows=4)
    with pytest.raises(BackupError, match="live database itself"):
        backup(db, tmp_path / "." / "live.db")
    with pytest.raises(BackupError, match="nothing to do"):
        restore(db, db, verify=verify_path)
    assert seqs(db) == [1, 2, 3, 4]
