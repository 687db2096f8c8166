"""The store contract: every EventStore implementation must pass these (DESIGN, Event store)."""

from __future__ import annotations

import asyncio
import sqlite3
import threading

import msgspec
import pytest

from conteur.events.game import CommandRejected
from conteur.server.store.chain import verify_rows
from conteur.server.store.sqlite import Outcome, Pending, SQLiteStore, StoreError


def ev(n: int) -> CommandRejected:
    return CommandRejected(command_type="bid", code="rule", message=f"event {n}", character="anna")


def _postgres(request, tmp_path):
    from conteur.server.store.postgres import PostgresStore

    return PostgresStore(request.getfixturevalue("pg_url"), snapshot_every=50)


# PostgreSQL against a throwaway cluster (tests/pg_support.py), started only when asked for
STORES = {
    "sqlite": lambda request, tmp_path: SQLiteStore(tmp_path / "chronicle.db", snapshot_every=50),
    "postgresql": _postgres,
}


@pytest.fixture(params=sorted(STORES))
def store(request, tmp_path):
    s = STORES[request.param](request, tmp_path)
    yield s
    s.close()


def raw_sql(store):
    """A connection of the store's own kind that bypasses the store (a hand edit):
    (connect, the exception type a refusal raises)."""
    if isinstance(store, SQLiteStore):
        return (lambda: sqlite3.connect(store.path, isolation_level=None)), sqlite3.DatabaseError
    import psycopg

    return (lambda: psycopg.connect(store.url, autocommit=True)), psycopg.Error


def test_append_then_read_after_is_exclusive_and_ordered(store):
    out = store.append_sync(Pending(session="s1", events=[ev(1), ev(2), ev(3)], actor="st"))
    assert out.seqs == (1, 2, 3)
    rows = store.read_after("s1", after=1)
    assert [r.seq for r in rows] == [2, 3]
    assert [msgspec.json.decode(r.data)["message"] for r in rows] == ["event 2", "event 3"]
    assert store.read_after("s1", after=3) == []


def test_sessions_are_separate_streams_with_global_seqs(store):
    store.append_sync(Pending(session="a", events=[ev(1)]))
    store.append_sync(Pending(session="b", events=[ev(2)]))
    store.append_sync(Pending(session="a", events=[ev(3)]))
    assert [r.seq for r in store.read_after("a")] == [1, 3]
    assert [r.seq for r in store.read_after("b")] == [2]
    assert sorted(store.sessions()) == ["a", "b"]
    assert verify_rows(store.rows(), gapless=True) == (3, None)


@pytest.mark.parametrize("order", ["aabab", "abbba", "baaab", "ab"])
def test_a_sessions_head_and_tail_agree_with_its_rows_however_sessions_interleave(store, order):
    for n, sid in enumerate(order):
        store.append_sync(Pending(session=sid, events=[ev(n), ev(n + 100)]))
    every = list(store.rows())
    for sid in set(order) | {"nobody"}:
        seqs = [r.seq for r in every if r.session == sid]
        assert store.session_head(sid) == (seqs[-1] if seqs else 0)
        for upto in range(0, len(every) + 2):
            assert store.session_head(sid, upto=upto) == max((q for q in seqs if q <= upto), default=0)
        for after in range(0, len(every) + 2):
            assert [r.seq for r in store.read_after(sid, after=after)] == [q for q in seqs if q > after]
    # a new append chains from the session's own last row, wherever it lies in the log
    store.append_sync(Pending(session=order[0], events=[ev(999)]))
    assert verify_rows(store.rows(), gapless=True) == (len(every) + 1, None)


def test_retried_command_gets_its_first_outcome(store):
    first = store.append_sync(Pending(session="s", events=[ev(1), ev(2)], device="phone", command_id="c-1"))
    again = store.append_sync(Pending(session="s", events=[ev(9)], device="phone", command_id="c-1"))
    assert again.seqs == first.seqs and again.replayed
    assert len(store.read_after("s")) == 2  # the retry appended nothing
    assert store.outcome_of("phone", "c-1").seqs == first.seqs
    # the same id from another device is another command
    other = store.append_sync(Pending(session="s", events=[ev(3)], device="tablet", command_id="c-1"))
    assert other.seqs == (3,)


def test_retried_rejection_gets_its_first_rejection(store):
    first = store.append_sync(Pending(session="s", events=[ev(1)], device="d", command_id="x",
                                      code="rule", message="bid 14 is above your cap"))
    assert first.rejected
    again = store.append_sync(Pending(session="s", events=[], device="d", command_id="x"))
    assert again.code == "rule" and again.message == "bid 14 is above your cap"
    assert again.seqs == first.seqs


def test_concurrent_appenders_get_gapless_seqs(store):
    async def main():
        outs = await asyncio.gather(*[
            store.append(Pending(session="s", events=[ev(i), ev(i)], device=f"d{i}", command_id="1"))
            for i in range(200)
        ])
        return outs
    outs = asyncio.run(main())
    seqs = sorted(s for o in outs for s in o.seqs)
    assert seqs == list(range(1, 401))
    for o in outs:  # a command's events are contiguous: they went in one savepoint
        assert o.seqs[1] == o.seqs[0] + 1
    assert verify_rows(store.rows(), gapless=True) == (400, None)


def test_threads_appending_at_once_get_gapless_seqs(store):
    def work(k):
        for i in range(20):
            store.append_sync(Pending(session="s", events=[ev(i)], device=f"t{k}", command_id=str(i)))
    threads = [threading.Thread(target=work, args=(k,)) for k in range(8)]
    [t.start() for t in threads]
    [t.join() for t in threads]
    assert [r.seq for r in store.read_after("s")] == list(range(1, 161))


class Unencodable(CommandRejected, frozen=True, kw_only=True, tag="test.unencodable"):
    blob: object = None


def test_an_exception_inside_a_batch_leaves_nothing_half_written(store):
    async def main():
        good1 = store.append(Pending(session="s", events=[ev(1)], device="a", command_id="1"))
        bad = store.append(Pending(session="s", events=[ev(2), Unencodable(command_type="x", code="c", message="m", blob=object())], device="b", command_id="1"))
        good2 = store.append(Pending(session="s", events=[ev(3)], device="c", command_id="1"))
        return await asyncio.gather(good1, bad, good2, return_exceptions=True)
    r1, r2, r3 = asyncio.run(main())
    assert isinstance(r1, Outcome) and isinstance(r3, Outcome)
    assert isinstance(r2, Exception)
    rows = store.read_after("s")
    assert [msgspec.json.decode(r.data)["message"] for r in rows] == ["event 1", "event 3"]
    assert [r.seq for r in rows] == [1, 2]  # gapless: the failed command took no seq
    assert store.outcome_of("b", "1") is None  # and it can be retried
    assert verify_rows(store.rows(), gapless=True) == (2, None)


def test_update_and_delete_are_refused(store):
    store.append_sync(Pending(session="s", events=[ev(1)]))
    connect, refused = raw_sql(store)
    conn = connect()
    with pytest.raises(refused, match="append-only"):
        conn.execute("UPDATE events SET actor='mallory' WHERE seq=1")
    with pytest.raises(refused, match="append-only"):
        conn.execute("DELETE FROM events WHERE seq=1")
    conn.close()
    assert verify_rows(store.rows(), gapless=True) == (1, None)


def test_pragmas_are_durable(store):
    if not isinstance(store, SQLiteStore):
        pytest.skip("SQLite's own settings (PostgreSQL's synchronous_commit: test_store_postgres)")
    conn = store._reader
    assert conn.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
    assert conn.execute("PRAGMA synchronous").fetchone()[0] == 2
    assert conn.execute("PRAGMA busy_timeout").fetchone()[0] >= 1000


def test_closed_store_refuses_appends(tmp_path):
    s = SQLiteStore(tmp_path / "x.db")
    s.close()
    with pytest.raises(StoreError):
        s.append_sync(Pending(session="s", events=[ev(1)]))
