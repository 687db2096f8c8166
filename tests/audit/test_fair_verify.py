"""FAIR-2 end to end: a simulated dice session played through the server's command path
verifies with `conteur verify`; a forger who changes one die and rewrites the whole hash
chain of the exported log after it is still caught, and the die is named."""

from __future__ import annotations

import json

import msgspec
import pytest

from conteur.server.store.chain import Row, row_hash, row_to_line
from conteur.server.cli.main import main
from conteur.server.store.sqlite import SQLiteStore


@pytest.fixture(scope="module")
def rows(tmp_path_factory):
    db = tmp_path_factory.mktemp("fair") / "dice.db"
    assert main(["simulate", "--db", str(db), "--events", "300", "--seed", "3", "--ruleset", "v5"]) == 0
    with SQLiteStore(db) as store:
        return list(store.rows())


def write_log(path, rows) -> None:
    path.write_bytes(b"".join(row_to_line(r) + b"\n" for r in rows))


def forge(rows: list[Row], index: int, data: bytes) -> list[Row]:
    """Replace one row's data and recompute every hash after it, as a forger would."""
    out = list(rows[:index])
    prev = {r.session: r.hash for r in out}
    for row in rows[index:]:
        body = data if row is rows[index] else row.data
        prev_hash = prev.get(row.session, "0" * 64)
        digest = row_hash(prev_hash, row.seq, row.session, row.type, body, row.actor,
                          row.device, row.command_id, row.at)
        out.append(msgspec.structs.replace(row, data=body, prev_hash=prev_hash, hash=digest))
        prev[row.session] = digest
    return out


def test_fair_2_a_simulated_dice_session_verifies(rows, tmp_path, capsys):
    log = tmp_path / "log.jsonl"
    write_log(log, rows)
    assert main(["verify", str(log)]) == 0
    out = capsys.readouterr().out
    assert "1 closed session(s)" in out and " 0 draws" not in out


def test_fair_2_one_changed_die_fails_verify_and_is_named(rows, tmp_path, capsys):
    index = next(i for i, r in enumerate(rows) if r.type == "v5.pool_rolled")
    event = json.loads(rows[index].data)
    counter, sides, face, entropy, stream = event["draws"][0]
    event["draws"][0] = [counter, sides, face % sides + 1, entropy, stream]
    event["normal" if event["normal"] else "hunger"][0] = face % sides + 1
    log = tmp_path / "forged.jsonl"
    write_log(log, forge(rows, index, json.dumps(event, separators=(",", ":")).encode()))
    assert main(["verify", str(log)]) == 1
    out = capsys.readouterr().out
    assert f"seq {rows[index].seq}" in out
    assert f"draw #{counter} of stream {stream} (d{sides}): recorded {face % sides + 1}, the seed gives {face}" in out
