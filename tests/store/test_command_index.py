"""The SQLite store's idempotency index: a UNIQUE index of the file on (session, device,
command id), nothing of it kept in memory.

A retry of a stored command gets its first outcome (DESIGN "Offline behaviour": a phone
resends its outbox after a Wi-Fi drop): through group commits of many commands, a
reopened file, a retry in the command's own group commit, and an older file without the
index.
"""

from __future__ import annotations

import asyncio
import sqlite3

import pytest

from conteur.events.game import CommandRejected
from conteur.server.store.interface import Pending
from conteur.server.store.sqlite import SQLiteStore


def ev(n: int) -> CommandRejected:
    return CommandRejected(command_type="bid", code="rule", message=f"event {n}", character="anna")


def command(i: int, session: str = "s") -> Pending:
    """Command ``i``: 0-3 events, every third one refused with its own message."""
    refused = i % 3 == 0
    return Pending(session=session, events=[ev(i * 10 + k) for k in range(i % 4)], actor="pc",
                   device=f"phone-{i % 7}", command_id=f"c-{i}",
                   code="rules" if refused else None, message=f"refused {i}" if refused else None)


async def append_all(store: SQLiteStore, commands: list[Pending]):
    # at once: the writer commits them in groups, several commands a transaction
    return await asyncio.gather(*(store.append(p) for p in commands))


def test_every_retry_gets_its_first_outcome_through_group_commits_and_a_reopened_file(tmp_path):
    path = tmp_path / "night.db"
    commands = [command(i, session=f"s{i % 2}") for i in range(400)]
    with SQLiteStore(path) as store:
        first = asyncio.run(append_all(store, commands))
        again = asyncio.run(append_all(store, [command(i, session=f"s{i % 2}") for i in range(400)]))
        assert [a.seqs for a in again] == [f.seqs for f in first]
        assert all(a.replayed for a in again) and not any(f.replayed for f in first)
        assert [(a.code, a.message) for a in again] == [(p.code, p.message) for p in commands]
        head = store.head()
    with SQLiteStore(path) as store:  # the index loaded from the file
        for i, f in enumerate(first):
            out = store.outcome_of(f"phone-{i % 7}", f"c-{i}", f"s{i % 2}")
            assert out is not None and out.seqs == f.seqs and out.replayed, i
        assert store.outcome_of("phone-0", "c-0", "s1") is None  # its key, another session
        assert store.outcome_of("phone-1", "c-0", "s0") is None  # its id, another device
        retried = store.append_sync(command(5, session="s1"))
        assert retried.seqs == first[5].seqs and retried.replayed
        assert store.head() == head  # nothing written twice


def test_the_keys_are_unique_in_the_file_and_a_retry_in_the_same_group_commit_gets_the_first(tmp_path):
    """The idempotency key is a UNIQUE index of the file: a row of a stored key written
    past the store is refused; a command and its retry in one group commit write once."""
    with SQLiteStore(tmp_path / "c.db") as store:
        a, again = asyncio.run(append_all(store, [command(2), command(2)]))
        assert again.seqs == a.seqs and again.replayed and not a.replayed
        assert store.outcome_of("phone-2", "c-2", "s").seqs == a.seqs
        assert store.outcome_of("phone-2", "c-2", "other") is None
    conn = sqlite3.connect(tmp_path / "c.db")
    with pytest.raises(sqlite3.IntegrityError):
        conn.execute("INSERT INTO commands VALUES ('phone-2', 'c-2', 's', '[99]', NULL, NULL)")
    conn.close()


def test_an_older_file_with_a_key_stored_twice_keeps_its_first_outcome(tmp_path):
    """A file of schema 1 had no index on its commands: one whose key was written twice by
    another tool opens, keeps the first row's outcome (what a retry got), and is indexed."""
    path = tmp_path / "old.db"
    with SQLiteStore(path) as store:
        first = store.append_sync(command(1))
    conn = sqlite3.connect(path)
    conn.execute("DROP INDEX commands_key")
    conn.execute("INSERT INTO commands VALUES ('phone-1', 'c-1', 's', '[99]', NULL, NULL)")
    conn.execute("PRAGMA user_version=1")
    conn.commit()
    conn.close()
    with SQLiteStore(path) as store:
        assert store.outcome_of("phone-1", "c-1", "s").seqs == first.seqs
        assert store.append_sync(command(1)).seqs == first.seqs
    conn = sqlite3.connect(path)
    assert conn.execute("SELECT count(*) FROM commands").fetchone() == (1,)
    assert conn.execute("SELECT 1 FROM sqlite_master WHERE name = 'commands_key'").fetchone() == (1,)
    conn.close()
