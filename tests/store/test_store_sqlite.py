"""What only the SQLite store promises, beyond the contract (tests/store/test_store_contract.py):
its pragmas, old files opening unchanged, snapshots it cannot read."""

from __future__ import annotations

import sqlite3

from conteur.events.game import CommandRejected
from conteur.server.store.dbfile import SCHEMA_VERSION
from conteur.server.store.interface import Pending, TokenRecord
from conteur.server.store.sqlite import SQLiteStore, file_rows


def ev(n: int) -> CommandRejected:
    return CommandRejected(command_type="bid", code="rule", message=f"event {n}", character="anna")


def test_pragmas_are_durable(tmp_path):
    with SQLiteStore(tmp_path / "c.db") as store:
        conn = store._reader
        assert conn.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
        assert conn.execute("PRAGMA synchronous").fetchone()[0] == 2
        assert conn.execute("PRAGMA busy_timeout").fetchone()[0] >= 1000


def _tables(path) -> dict[str, str]:
    conn = sqlite3.connect(path)
    try:
        return dict(conn.execute("SELECT name, sql FROM sqlite_master WHERE type IN ('table', 'trigger')"))
    finally:
        conn.close()


# the DDL the tokens and secrets tables had when auth.py and service.py made them: files
# written then must read the same, and new files must be the same
# the layout of before, with the one column device credentials added at its end (the
# join link a credential was made from), which an older file gains when it opens
OLD_TOKENS = ("CREATE TABLE tokens (hash TEXT PRIMARY KEY, role TEXT NOT NULL, "
              "character TEXT, session TEXT, name TEXT NOT NULL DEFAULT '', "
              "created TEXT NOT NULL, revoked TEXT, parent TEXT)")
OLD_SECRETS = "CREATE TABLE secrets (session TEXT PRIMARY KEY, seed BLOB NOT NULL)"


def test_tokens_and_secrets_tables_keep_their_layout(tmp_path):
    SQLiteStore(tmp_path / "c.db").close()
    tables = _tables(tmp_path / "c.db")
    assert tables["tokens"] == OLD_TOKENS and tables["secrets"] == OLD_SECRETS
    conn = sqlite3.connect(tmp_path / "c.db")
    assert conn.execute("PRAGMA user_version").fetchone()[0] == SCHEMA_VERSION
    conn.close()


def test_a_file_from_before_the_tokens_and_secrets_tables_opens_and_gains_them(tmp_path):
    path = tmp_path / "old.db"
    with SQLiteStore(path) as store:
        store.append_sync(Pending(session="s", events=[ev(1)]))
    conn = sqlite3.connect(path)
    conn.execute("DROP TABLE tokens")
    conn.execute("DROP TABLE secrets")
    conn.commit()
    conn.close()
    with SQLiteStore(path) as store:
        store.add_tokens([TokenRecord(hash="a" * 64, role="storyteller")])
        assert store.token("a" * 64).role == "storyteller"
        assert store.create_secret("s", b"seed") == b"seed"
        assert [r.seq for r in store.read_after("s")] == [1]


def test_a_file_with_tokens_written_the_old_way_reads_them(tmp_path):
    path = tmp_path / "old.db"
    SQLiteStore(path).close()
    conn = sqlite3.connect(path)
    conn.execute("INSERT INTO tokens (hash, role, character, session, name, created) "
                 "VALUES (?,?,?,?,?,?)", ("b" * 64, "player", "anna", None, "", "2026-01-01T00:00:00+00:00"))
    conn.execute("INSERT INTO secrets VALUES (?, ?)", ("s", b"old seed"))
    conn.commit()
    conn.close()
    with SQLiteStore(path) as store:
        assert store.token("b" * 64) == TokenRecord(hash="b" * 64, role="player", character="anna")
        assert store.secret("s") == b"old seed"


def test_a_snapshot_it_cannot_read_is_skipped(tmp_path):
    with SQLiteStore(tmp_path / "c.db") as store:
        store.append_sync(Pending(session="s", events=[ev(1), ev(2)]))
        conn = sqlite3.connect(store.path)
        conn.execute("INSERT INTO snapshots VALUES ('s', 2, 1, x'00ff')")
        conn.execute("INSERT INTO snapshots VALUES ('s', 1, 999, x'00')")  # another version
        conn.commit()
        conn.close()
        assert store.latest_snapshot("s") == (0, None)
        assert store.snapshot_head("s") == 2  # the version matches: the fold finds it unreadable
        assert store.load_state("s").head == 2


def test_file_rows_reads_without_writing(tmp_path):
    path = tmp_path / "c.db"
    with SQLiteStore(path) as store:
        store.append_sync(Pending(session="s", events=[ev(1)]))
        expected = list(store.rows())
    before = sorted(p.name for p in tmp_path.iterdir())
    assert list(file_rows(path)) == expected
    assert sorted(p.name for p in tmp_path.iterdir()) == before
