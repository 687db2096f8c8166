"""The store contract: every EventStore implementation must pass these (DESIGN, Event store;
docs/architecture.md, The store). Each method of ``EventStore`` is exercised here, and
``test_every_interface_method_is_exercised`` keeps it so.

A store joins the suite with one entry in ``STORES``: a function of a test's ``tmp_path``
that opens the store kept there (called twice with the same path, it opens the same data
again), and, in ``RAW``, a way to run a statement past the store (to show it refuses
edits)."""

from __future__ import annotations

import asyncio
import concurrent.futures
import inspect
import re
import sqlite3
import threading
from pathlib import Path

import msgspec
import pytest

from conteur.events import game
from conteur.events.game import CommandRejected
from conteur.server.cli.simulate import play
from conteur.server.core.service import Chronicle
from conteur.server.store.chain import GENESIS, verify_rows
from conteur.server.store.interface import EventStore, Outcome, Pending, StoreError, TokenRecord
from conteur.server.store.sqlite import SQLiteStore


def ev(n: int) -> CommandRejected:
    return CommandRejected(command_type="bid", code="rule", message=f"event {n}", character="anna")


def _sqlite_raw(store: SQLiteStore, statement: str) -> None:
    conn = sqlite3.connect(store.path)
    try:
        conn.execute(statement)
        conn.commit()
    finally:
        conn.close()


# a test's PostgreSQL database, by its tmp_path: reopening the store finds the same one
_PG_URLS: dict = {}


def _postgres(path):
    from conteur.server.store.postgres import PostgresStore

    return PostgresStore(_PG_URLS[path], snapshot_every=50)


def _postgres_raw(store, statement: str) -> None:
    import psycopg

    with psycopg.connect(store.url, autocommit=True) as conn:
        conn.execute(statement)


STORES = {"sqlite": lambda path: SQLiteStore(path / "chronicle.db", snapshot_every=50),
          "postgresql": _postgres}
RAW = {"sqlite": _sqlite_raw, "postgresql": _postgres_raw}  # (store, SQL) -> None, past the store's own code


@pytest.fixture(params=sorted(STORES))
def backend(request, tmp_path) -> str:
    if request.param == "postgresql":
        # a throwaway cluster (tests/support/pg_support.py), started only when a test asks for it
        _PG_URLS[tmp_path] = request.getfixturevalue("pg_url")
    yield request.param
    _PG_URLS.pop(tmp_path, None)


@pytest.fixture
def store(backend, tmp_path):
    s = STORES[backend](tmp_path)
    yield s
    s.close()


@pytest.fixture
def reopen(backend, tmp_path):
    """Opens the same store's data again (a restart, or a second process on it)."""
    opened = []

    def again() -> EventStore:
        opened.append(STORES[backend](tmp_path))
        return opened[-1]

    yield again
    for s in opened:
        s.close()


def test_a_store_is_an_event_store(store):
    assert isinstance(store, EventStore)
    assert store.snapshot_every > 0
    assert store.deadline > 0
    assert store.trouble() is None  # a healthy store can write


def test_append_then_read_after_is_exclusive_and_ordered(store):
    out = store.append_sync(Pending(session="s1", events=[ev(1), ev(2), ev(3)], actor="st"))
    assert out.seqs == (1, 2, 3)
    rows = store.read_after("s1", after=1)
    assert [r.seq for r in rows] == [2, 3]
    assert [msgspec.json.decode(r.data)["message"] for r in rows] == ["event 2", "event 3"]
    assert store.read_after("s1", after=3) == []


def test_read_entries_are_read_after_without_the_chain_columns(store):
    """What a review reads: seq, type, data, actor and at of the same
    rows as ``read_after``, in order, after a seq and within a limit, one session only."""
    store.append_sync(Pending(session="s1", events=[ev(1), ev(2)], actor="st", device="d1"))
    store.append_sync(Pending(session="s2", events=[ev(3)], actor="anna"))
    store.append_sync(Pending(session="s1", events=[ev(4), ev(5)], actor="bruno", device="d2", command_id="c9"))
    rows = store.read_after("s1", 0)
    assert [(e.seq, e.type, bytes(e.data), e.actor, e.at) for e in store.read_entries("s1")] == \
        [(r.seq, r.type, bytes(r.data), r.actor, r.at) for r in rows]
    assert [e.seq for e in store.read_entries("s1", after=2, limit=1)] == [4]
    assert store.read_entries("s1", after=5) == [] and store.read_entries("nobody") == []


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


def test_update_and_delete_are_refused(store, backend):
    store.append_sync(Pending(session="s", events=[ev(1)]))
    raw = RAW[backend]
    with pytest.raises(Exception, match="append-only"):
        raw(store, "UPDATE events SET actor='mallory' WHERE seq=1")
    with pytest.raises(Exception, match="append-only"):
        raw(store, "DELETE FROM events WHERE seq=1")
    assert [r.actor for r in store.rows()] == [""]


def test_a_closed_store_refuses_appends_and_closing_twice_is_harmless(store):
    store.append_sync(Pending(session="s", events=[ev(1)]))
    store.close()
    store.close()
    with pytest.raises(StoreError):
        store.append_sync(Pending(session="s", events=[ev(2)]))
    with pytest.raises(StoreError):
        store.submit(Pending(session="s", events=[ev(2)]))


def test_the_context_manager_closes_and_what_was_acknowledged_is_there_again(backend, tmp_path, reopen):
    with STORES[backend](tmp_path) as s:
        s.append_sync(Pending(session="s", events=[ev(1), ev(2)], device="d", command_id="c"))
    with pytest.raises(StoreError):
        s.append_sync(Pending(session="s", events=[ev(3)]))
    again = reopen()
    assert [r.seq for r in again.read_after("s")] == [1, 2]
    assert again.outcome_of("d", "c", "s").seqs == (1, 2)  # idempotency outlives a restart
    assert again.append_sync(Pending(session="s", events=[ev(9)], device="d", command_id="c")).replayed
    # the chain and the seqs go on from the stored tip
    assert again.append_sync(Pending(session="s", events=[ev(3)])).seqs == (3,)
    assert verify_rows(again.rows(), gapless=True) == (3, None)


# -- appends -----------------------------------------------------------------------------

def test_submit_resolves_after_commit_and_in_submission_order(store):
    futures = [store.submit(Pending(session=f"s{i % 3}", events=[ev(i)] * (1 + i % 2)))
               for i in range(30)]
    assert all(isinstance(f, concurrent.futures.Future) for f in futures)
    outcomes = [f.result(timeout=30) for f in futures]
    seqs = [q for o in outcomes for q in o.seqs]
    assert seqs == list(range(1, len(seqs) + 1))  # FIFO: seqs follow the order of submission
    assert store.head() == len(seqs)


def test_submit_on_resolves_on_the_callers_loop(store):
    async def main():
        loop = asyncio.get_running_loop()
        future = store.submit_on(loop, Pending(session="s", events=[ev(1), ev(2)]))
        assert isinstance(future, asyncio.Future) and future.get_loop() is loop
        return await future, await store.append(Pending(session="s", events=[ev(3)]))
    first, second = asyncio.run(main())
    assert first == Outcome(seqs=(1, 2)) and second == Outcome(seqs=(3,))


def test_head_is_the_last_committed_seq(store):
    assert store.head() == 0
    store.append_sync(Pending(session="a", events=[ev(1), ev(2)]))
    store.append_sync(Pending(session="b", events=[ev(3)]))
    assert store.head() == 3


def test_each_session_is_its_own_hash_chain(store):
    for n, sid in enumerate("abab"):
        store.append_sync(Pending(session=sid, events=[ev(n)], actor="st", device="tab", command_id=str(n)))
    rows = list(store.rows())
    assert [r.prev_hash for r in rows[:2]] == [GENESIS, GENESIS]
    assert rows[2].prev_hash == rows[0].hash and rows[3].prev_hash == rows[1].hash
    assert [(r.type, r.actor, r.device, r.command_id) for r in rows] == [
        ("command_rejected", "st", "tab", str(n)) for n in range(4)]
    # one session's rows verify alone
    assert verify_rows(store.read_after("b"))[1] is None


def test_outcome_of_with_a_session_looks_in_that_session_only(store):
    store.append_sync(Pending(session="a", events=[ev(1)], device="d", command_id="c"))
    assert store.outcome_of("d", "c", "a") == Outcome(seqs=(1,), replayed=True)
    assert store.outcome_of("d", "c") == Outcome(seqs=(1,), replayed=True)
    assert store.outcome_of("d", "c", "b") is None
    assert store.outcome_of("d", "other") is None and store.outcome_of("e", "c", "a") is None


def test_appends_without_a_command_id_are_never_deduplicated(store):
    assert store.append_sync(Pending(session="s", events=[ev(1)], device="d")).seqs == (1,)
    assert store.append_sync(Pending(session="s", events=[ev(1)], device="d")).seqs == (2,)
    assert store.outcome_of("d", "") is None


# -- reading the log ---------------------------------------------------------------------

def test_session_span_is_its_first_and_last_seq(store):
    assert store.session_span("a") is None
    store.append_sync(Pending(session="b", events=[ev(1)]))
    store.append_sync(Pending(session="a", events=[ev(2), ev(3)]))
    store.append_sync(Pending(session="b", events=[ev(4)]))
    assert store.session_span("a") == (2, 3)
    assert store.session_span("b") == (1, 4)
    assert store.sessions() == ["b", "a"]  # in the order of their first event


def test_read_after_honours_upto_and_limit(store):
    for n, sid in enumerate("aabaab"):
        store.append_sync(Pending(session=sid, events=[ev(n)]))
    assert [r.seq for r in store.read_after("a", upto=4)] == [1, 2, 4]
    assert [r.seq for r in store.read_after("a", after=1, upto=4)] == [2, 4]
    assert [r.seq for r in store.read_after("a", after=1, limit=2)] == [2, 4]
    assert [r.seq for r in store.read_after("a", upto=3, limit=5)] == [1, 2]
    assert store.read_after("a", after=4, upto=4) == []
    assert [r.seq for r in store.read_after("b", after=2, upto=2)] == []
    assert [r.seq for r in store.read_after("b", after=2, upto=3)] == [3]
    assert store.read_after("nobody") == []


def test_rows_are_every_session_in_seq_order_within_bounds(store):
    for n, sid in enumerate("abcab"):
        store.append_sync(Pending(session=sid, events=[ev(n)]))
    assert [(r.seq, r.session) for r in store.rows()] == list(enumerate("abcab", start=1))
    assert [r.seq for r in store.rows(after=2)] == [3, 4, 5]
    assert [r.seq for r in store.rows(after=1, upto=3)] == [2, 3]
    assert list(store.rows(after=5)) == [] and list(store.rows(upto=0)) == []
    assert all(len(r.hash) == 64 and len(r.prev_hash) == 64 for r in store.rows())


def test_iter_events_decodes_a_sessions_events_in_chunks(store):
    for n, sid in enumerate("aabaaba"):
        store.append_sync(Pending(session=sid, events=[ev(n)]))
    chunks = list(store.iter_events("a", chunk=2))
    assert [last for last, _ in chunks] == [2, 5, 7]
    assert [e.message for _, events in chunks for e in events] == [f"event {n}" for n in (0, 1, 3, 4, 6)]
    assert [e.message for _, es in store.iter_events("a", after=2, upto=5) for e in es] == ["event 3", "event 4"]
    assert list(store.iter_events("nobody")) == []
    assert all(len(events) <= 2 for _, events in chunks)


# -- state and snapshots -----------------------------------------------------------------

@pytest.fixture
def night(store):
    """A mixed night played through the command path on this store."""
    chronicle = Chronicle(store)
    summary = play(chronicle, "n", events=240, seed=7, close=False)
    return store, chronicle, summary.sessions


def _fold(store, session: str, upto: int | None = None):
    state = game.initial()
    for _, events in store.iter_events(session, upto=upto):
        for event in events:
            state = game.evolve(state, event)
    return state


def test_load_state_is_the_fold_of_the_log_at_any_seq(night):
    store, chronicle, sessions = night
    for sid in sessions:
        head = store.session_head(sid)
        assert head > 0
        state = store.load_state(sid, use_snapshots=False)
        assert state == msgspec.structs.replace(chronicle.state(sid), head=head)
        middle = store.read_after(sid)[len(store.read_after(sid)) // 2].seq
        at = store.load_state(sid, at=middle)
        assert at.head == middle
        assert at == msgspec.structs.replace(_fold(store, sid, middle), head=middle)
    assert store.load_state("nobody") == game.initial()


def test_load_state_reports_progress_and_snapshots_a_long_tail(night):
    store, _, sessions = night
    sid = sessions[0]
    counted = []
    assert store.latest_snapshot(sid) == (0, None) and store.snapshot_head(sid) == 0
    state = store.load_state(sid, progress=counted.append)
    assert sum(counted) == len(store.read_after(sid)) >= store.snapshot_every
    # the fold was long: it left a snapshot at the session's head
    assert store.snapshot_head(sid) == state.head == store.session_head(sid)
    assert store.latest_snapshot(sid) == (state.head, state)
    counted.clear()
    assert store.load_state(sid, progress=counted.append) == state
    assert sum(counted) == 0  # started from the snapshot: nothing left to fold


def test_snapshots_are_found_at_or_before_a_seq_and_pruned_with_keep(night):
    store, _, sessions = night
    sid = sessions[0]
    seqs = [r.seq for r in store.read_after(sid)]
    marks = seqs[3], seqs[10], seqs[20], seqs[30]
    for seq in marks:
        store.save_snapshot(sid, seq, store.load_state(sid, at=seq, use_snapshots=False))
    assert store.snapshot_head(sid) == marks[-1]
    assert store.latest_snapshot(sid, at=marks[2] + 1)[0] == marks[2]
    assert store.latest_snapshot(sid, at=marks[0] - 1) == (0, None)
    seq, state = store.latest_snapshot(sid, at=marks[1])
    assert seq == marks[1] and state == store.load_state(sid, at=marks[1], use_snapshots=False)
    # the fold from a snapshot is the fold from zero
    assert store.load_state(sid, at=marks[2] + 3) == store.load_state(sid, at=marks[2] + 3, use_snapshots=False)
    store.save_snapshot(sid, seqs[40], store.load_state(sid, at=seqs[40], use_snapshots=False), keep=2)
    assert store.latest_snapshot(sid, at=marks[2])[0] == 0  # older ones are gone
    assert store.latest_snapshot(sid, at=seqs[39])[0] == marks[3]
    assert store.latest_snapshot(sessions[1]) == (0, None)  # per session


def test_a_views_snapshot_is_one_per_session_and_view_replaced_and_seen_by_another_opening(store, reopen):
    """View snapshots (server/core/keep.py) are opaque bytes, the newest replacing the last."""
    assert store.load_view("s1", "player:anna") is None
    store.save_views("s1", 3, {"player:anna": b"\x00first", "player:anna#0": b"\x03"})
    store.save_views("s1", 7, {"player:anna": b"\x00second"})
    store.save_views("s1", 5, {"observers": b"\x01"})
    store.save_views("s2", 9, {"player:anna": b"\x02" * 100_000})
    again = reopen()
    assert again.load_view("s1", "player:anna") == (7, b"\x00second")
    assert again.load_view("s1", "player:anna#0") == (3, b"\x03")  # left as it was
    assert again.load_view("s1", "observers") == (5, b"\x01")
    assert again.load_view("s2", "player:anna") == (9, b"\x02" * 100_000)
    assert again.load_view("s2", "observers") is None


def test_load_states_gives_what_load_state_gives_one_by_one(night, reopen):
    store, _, sessions = night
    expected = {sid: store.load_state(sid, use_snapshots=False) for sid in sessions}
    assert store.load_states(use_snapshots=False, workers=1) == expected
    assert store.load_states([sessions[1], "nobody"]) == {sessions[1]: expected[sessions[1]],
                                                           "nobody": game.initial()}
    assert reopen().load_states(sessions, workers=2) == expected


def test_a_closed_night_verifies_from_the_store_alone(store):
    """verify's checks (chain, every fair draw, every verdict) over ``rows()``, and a
    session's revealed seed, stored as its secret, is the one its draws used."""
    from conteur.server.audit.verify import verify_store

    summary = play(Chronicle(store), "v", events=120, seed=3)
    report = verify_store(store, "contract")
    assert report.ok, report.text()
    assert report.events == store.head() == summary.head
    assert report.sessions_checked == len(summary.sessions) and report.draws_checked > 0
    closing = [msgspec.json.decode(r.data) for r in store.rows() if r.type == "session.closed"]
    assert sorted(bytes.fromhex(e["seed"]) for e in closing) == sorted(
        store.secret(sid) for sid in summary.sessions)


# -- tokens ------------------------------------------------------------------------------

def token(n: int, **fields) -> TokenRecord:
    return TokenRecord(hash=f"{n:064x}", **{"role": "player", "character": "anna", **fields})


def test_tokens_are_found_by_digest_until_revoked(store):
    store.add_tokens([token(1), token(2, session="s"), token(3, session="other"),
                      token(4, role="storyteller", character=None, name="Marie"),
                      token(5, character="bruno")])
    assert store.token(token(4).hash) == token(4, role="storyteller", character=None, name="Marie")
    assert store.token("f" * 64) is None
    assert store.count_tokens() == 5 and store.count_tokens("player") == 4
    assert store.count_tokens("observer") == 0
    # a player's tokens valid in "s": bound to it or to every session; not the storyteller's
    assert sorted(store.revoke_tokens(session="s", character="anna")) == [token(1).hash, token(2).hash]
    assert store.token(token(1).hash) is None and store.token(token(2).hash) is None
    assert store.token(token(3).hash) == token(3, session="other")
    assert store.revoke_tokens(session="s", character="anna") == []  # each is revoked once
    assert store.revoke_tokens(session="s", character="Marie") == []
    assert sorted(store.revoked_tokens()) == [token(1).hash, token(2).hash]
    assert store.count_tokens() == 3 and store.count_tokens("player") == 2


def test_any_token_is_listed_while_live_and_revoked_by_its_digest(store):
    store.add_tokens([token(1), token(2, session="s"), token(3, session="other"),
                      token(4, role="storyteller", character=None, name="Marie"),
                      token(5, role="observer", character=None, session="s")])
    assert [r.hash for r in store.live_tokens()] == [token(n).hash for n in range(1, 6)]
    assert store.live_tokens("s") == [token(1), token(2, session="s"),
                                      token(4, role="storyteller", character=None, name="Marie"),
                                      token(5, role="observer", character=None, session="s")]
    # a storyteller's and an observer's token are revoked like a player's: each once
    assert sorted(store.revoke_digests([token(4).hash, token(5).hash, "f" * 64])) == [token(4).hash, token(5).hash]
    assert store.revoke_digests([token(4).hash]) == [] and store.revoke_digests([]) == []
    assert store.token(token(4).hash) is None and store.token(token(5).hash) is None
    assert [r.hash for r in store.live_tokens("s")] == [token(1).hash, token(2).hash]
    assert sorted(store.revoked_tokens()) == [token(4).hash, token(5).hash]


def test_adding_tokens_is_all_or_nothing(store):
    store.add_tokens([token(1)])
    with pytest.raises(StoreError):
        store.add_tokens([token(2), token(1)])  # a digest already stored
    assert store.token(token(2).hash) is None and store.count_tokens() == 1


def test_a_revocation_by_another_opening_is_seen_at_once(store, reopen):
    store.add_tokens([token(1)])
    assert store.token(token(1).hash) is not None
    assert reopen().revoke_tokens(session="s", character="anna") == [token(1).hash]
    assert store.token(token(1).hash) is None
    assert store.revoked_tokens() == [token(1).hash]


# -- session secrets ---------------------------------------------------------------------

def test_the_first_secret_of_a_session_is_the_only_one(store, reopen):
    assert store.secret("s") is None
    assert store.create_secret("s", b"first") == b"first"
    assert store.create_secret("s", b"second") == b"first"
    assert reopen().create_secret("s", b"third") == b"first"
    assert store.secret("s") == b"first" and store.secret("t") is None
    assert store.create_secret("t", bytes(range(32))) == bytes(range(32))  # any bytes


# -- the suite itself --------------------------------------------------------------------

def test_every_interface_method_is_exercised():
    source = Path(__file__).read_text()
    methods = [name for name, _ in inspect.getmembers(EventStore, inspect.isfunction)
               if not name.startswith("_")]
    assert len(methods) > 20
    missing = [m for m in methods if not re.search(rf"\.{m}\(", source)]
    assert missing == []
