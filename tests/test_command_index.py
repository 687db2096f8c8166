"""The SQLite store's idempotency index (issue 18: costs that do not grow with the night).

A retry of a stored command gets its first outcome (DESIGN "Offline behaviour": a phone
resends its outbox after a Wi-Fi drop). The index holds each command as two ints, a hash
of its key and its row in ``commands``, in two arrays of slots; these tests hold it to the outcomes themselves,
through group commits of many commands, a reopened file, a hash shared by two keys, and
the bytes it keeps.
"""

from __future__ import annotations

import asyncio
import gc
import tracemalloc

from conteur.events.game import CommandRejected
from conteur.server.store.interface import Pending
from conteur.server.store import sqlite
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


def test_a_hash_shared_by_two_keys_is_told_apart_by_the_row(tmp_path, monkeypatch):
    # Two keys with one Python hash cannot be made to order (it is salted per process): the
    # index's key is made to give a, b and "never" one hash, so b's entry is never added
    # (a holds the slot) and a lookup of b or "never" finds a's row, as a colliding key's would
    real = sqlite._key
    monkeypatch.setattr(sqlite, "_key", lambda device, command_id: 12345 if command_id in ("a", "b", "never")
                        else real(device, command_id))
    with SQLiteStore(tmp_path / "c.db") as store:
        a = store.append_sync(Pending(session="s", events=[ev(1)], device="d", command_id="a"))
        b = store.append_sync(Pending(session="s", events=[ev(2), ev(3)], device="d", command_id="b"))
        assert store._commands._of(store._reader, "s").used == 1  # one slot for the three keys
        assert store.outcome_of("d", "b", "s").seqs == b.seqs
        assert store.outcome_of("d", "a", "s").seqs == a.seqs
        assert store.outcome_of("d", "never", "s") is None
        assert store.append_sync(Pending(session="s", events=[ev(9)], device="d", command_id="b")).seqs == b.seqs
        fresh = store.append_sync(Pending(session="s", events=[ev(9)], device="d", command_id="never"))
        assert not fresh.replayed and fresh.seqs == (b.seqs[-1] + 1,)
        assert store.outcome_of("d", "never", "s").seqs == fresh.seqs
    with SQLiteStore(tmp_path / "c.db") as store:  # the index loaded from the file: the same slot
        assert store.outcome_of("d", "b", "s").seqs == b.seqs
        assert store.outcome_of("d", "never", "s").seqs == fresh.seqs
        assert store._commands._of(store._reader, "s").used == 1


def test_the_index_keeps_two_ints_a_command_not_its_key_and_outcome(tmp_path):
    path = tmp_path / "big.db"
    n = 6000
    with SQLiteStore(path) as store:
        asyncio.run(append_all(store, [command(i) for i in range(n)]))
    with SQLiteStore(path) as store:
        gc.collect()
        tracemalloc.start()
        try:
            before = tracemalloc.get_traced_memory()[0]
            store.outcome_of("phone-1", "c-1", "s")  # loads the session's index
            kept = tracemalloc.get_traced_memory()[0] - before
        finally:
            tracemalloc.stop()
        assert store.outcome_of("phone-1", "c-1", "s").replayed
    # the keys and outcomes held whole took about 410 bytes a command (BENCHMARKS,
    # session 7); a dict of two ints about 116; two arrays of slots, 24 to 48 (about 47 here)
    assert kept / n < 60, f"{kept / n:.0f} bytes a command"
