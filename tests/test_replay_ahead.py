"""A replay's reads on a thread of their own (``server/store/ahead.py``): the states are
those folded in line, a read that fails is raised where it is read, and a replay that stops
early (a row that does not decode) leaves no thread reading behind it (issue 18 item 2)."""

from __future__ import annotations

import itertools
import sqlite3
import threading

import msgspec
import pytest

from conteur.server.cli.simulate import play
from conteur.server.core.service import Chronicle
from conteur.server.store import replay
from conteur.server.store.ahead import ReadAhead
from conteur.server.store.sqlite import SQLiteStore


def _reading_threads() -> list[threading.Thread]:
    return [t for t in threading.enumerate() if t.name == "conteur-read-ahead"]


@pytest.fixture(scope="module")
def night(tmp_path_factory):
    """Two nights of three sessions each, played side by side (interleaved seqs)."""
    db = tmp_path_factory.mktemp("ahead") / "c.db"
    with SQLiteStore(db, snapshot_every=10**9) as store:
        chronicle = Chronicle(store, snapshot_every=10**9)
        play(chronicle, "n1", events=1200, seed=8, close=False)
        play(chronicle, "n2", events=700, seed=9)
    return db


@pytest.mark.parametrize("chunk", [1, 97, 5000])
def test_sessions_folded_with_their_reads_ahead_are_those_folded_in_line(night, chunk):
    with SQLiteStore(night) as store:
        sessions = store.sessions()
        in_line = {s: store.load_state(s, use_snapshots=False) for s in sessions}
        folded = replay.fold_sessions(str(night), sessions, use_snapshots=False, chunk=chunk)
        assert list(folded) == sessions
        assert {s: f.state for s, f in folded.items()} == in_line
        assert all(f.folded > 0 for f in folded.values())
    assert _reading_threads() == []


def test_a_row_that_does_not_decode_stops_the_replay_and_leaves_no_thread_reading(night, tmp_path):
    db = tmp_path / "bad.db"
    src = sqlite3.connect(night)
    src.execute("VACUUM INTO ?", (str(db),))
    src.close()
    with SQLiteStore(db) as store:
        sessions = store.sessions()
        first = sessions[0]
    # a row written past the store, by hand: appended (the triggers refuse only UPDATE and
    # DELETE) in the first session's span, so the later sessions' reads are still ahead
    conn = sqlite3.connect(db)
    head = conn.execute("SELECT max(seq) FROM events").fetchone()[0]
    conn.execute("INSERT INTO events SELECT ?, session, type, ?, actor, device, 'forged', at, prev_hash, hash "
                 "FROM events WHERE session = ? ORDER BY seq DESC LIMIT 1", (head + 1, b'{"type":"met.nonsense"}', first))
    conn.execute("UPDATE heads SET last = ? WHERE session = ?", (head + 1, first))
    conn.commit()
    conn.close()
    with pytest.raises(msgspec.DecodeError):
        replay.fold_sessions(str(db), sessions, use_snapshots=False, chunk=50)
    assert _reading_threads() == []
    # the others still fold, from the same file
    rest = replay.fold_sessions(str(db), sessions[1:], use_snapshots=False, chunk=50)
    assert list(rest) == sessions[1:]


def test_what_the_reads_raise_is_raised_where_it_is_read_after_what_came_before():
    def reads():
        yield 1
        yield 2
        raise sqlite3.OperationalError("disk I/O error")

    got = []
    with ReadAhead(reads()) as ahead:
        with pytest.raises(sqlite3.OperationalError, match="disk I/O error"):
            for item in ahead:
                got.append(item)
    assert got == [1, 2]
    assert _reading_threads() == []


def test_reads_closed_early_stop_their_thread_even_when_it_waits_on_a_full_queue():
    ended = threading.Event()
    where = []

    def endless():
        try:
            yield from itertools.count()
        finally:
            where.append(threading.current_thread().name)
            ended.set()

    ahead = ReadAhead(endless(), depth=2)
    assert [next(ahead) for _ in range(3)] == [0, 1, 2]
    ahead.close()
    assert ended.is_set() and where == ["conteur-read-ahead"]
    assert _reading_threads() == []
    with pytest.raises(StopIteration):
        next(ahead)
