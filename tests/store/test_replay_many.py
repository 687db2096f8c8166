"""``conteur.server.store.replay``: many sessions folded over one scan of the log, in this process or in
worker processes, give exactly what ``load_state`` gives session by session."""

from __future__ import annotations

import pytest
from hypothesis import HealthCheck, given, settings, strategies as st

from conteur.server.store import replay
from conteur.server.web.app import create_app
from conteur.server.core.service import Chronicle
from conteur.server.cli.simulate import play
from conteur.server.store.sqlite import SQLiteStore
from tests.support.examples import examples


def _one_by_one(store: SQLiteStore, sessions, *, use_snapshots: bool = False) -> dict:
    return {s: store.load_state(s, use_snapshots=use_snapshots) for s in sessions}


@pytest.fixture(scope="module")
def night(tmp_path_factory):
    """Two simulated nights: three sessions each, played side by side (interleaved seqs)."""
    db = tmp_path_factory.mktemp("night") / "c.db"
    with SQLiteStore(db) as store:
        play(Chronicle(store), "n1", events=1500, seed=4, close=False)
        play(Chronicle(store), "n2", events=900, seed=5)
    return db


@pytest.mark.parametrize("workers", [1, 2, 3])
def test_interleaved_sessions_fold_as_one_by_one(night, workers):
    with SQLiteStore(night) as store:
        sessions = store.sessions()
        assert len(sessions) == 6
        many = replay.load_states(store, use_snapshots=False, workers=workers)
        assert list(many) == sessions
        assert many == _one_by_one(store, sessions)
        assert all(state.head > 0 for state in many.values())


def test_snapshots_are_the_starting_points_and_long_tails_leave_new_ones(tmp_path):
    db = tmp_path / "c.db"
    with SQLiteStore(db, snapshot_every=100) as store:
        # no periodic snapshots while playing: only load_state's and load_states' here
        chronicle = Chronicle(store, snapshot_every=10**9)
        play(chronicle, "a", events=600, seed=1, ruleset="met", close=False)
        store.load_state("a")  # leaves a snapshot at a's head
        snapped, _ = store.latest_snapshot("a")
        play(chronicle, "a", events=300, seed=2, ruleset="met", close=False)
        play(chronicle, "b", events=300, seed=3, ruleset="v5", close=False)
        assert store.latest_snapshot("b") == (0, None)
        many = replay.load_states(store, workers=2)
        assert many == _one_by_one(store, ["a", "b"])
        # b's whole log and a's tail (over 100 events each) were folded: both snapshotted
        assert store.latest_snapshot("a")[0] == many["a"].head > snapped
        assert store.latest_snapshot("b") == (many["b"].head, many["b"])


def test_a_session_asked_for_but_never_played_is_the_initial_state(night):
    with SQLiteStore(night) as store:
        many = replay.load_states(store, ["n1-met", "nobody"], workers=2)
        assert many == _one_by_one(store, ["n1-met", "nobody"])
        assert many["nobody"].head == 0


def test_a_worker_that_fails_is_an_error_naming_its_sessions(tmp_path):
    missing = str(tmp_path / "no-such-folder" / "c.db")
    with pytest.raises(RuntimeError, match="folding night-3"):
        replay._fold_in_processes(missing, [["night-3"], ["night-4"]], False)


def test_the_server_starts_with_every_session_loaded(night):
    from litestar.testing import TestClient

    with TestClient(create_app(str(night))) as client:
        chronicle = client.app.state.conteur.chronicle
        with SQLiteStore(night) as store:
            assert chronicle._states == _one_by_one(store, store.sessions(), use_snapshots=True)


@settings(max_examples=examples(50), deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(work=st.dictionaries(st.text("abc", min_size=1, max_size=4), st.integers(0, 10_000), max_size=12),
       workers=st.integers(1, 5))
def test_sessions_are_dealt_each_exactly_once_into_balanced_parts(work, workers):
    parts = replay.deal(work, workers)
    dealt = [s for part in parts for s in part]
    assert sorted(dealt) == sorted(work) and len(parts) <= workers
    if parts:
        loads = [sum(work[s] for s in part) for part in parts]
        # greedy, biggest first: no part exceeds another by more than its biggest session
        assert max(loads) - min(loads) <= max(work.values())


def test_workers_that_cannot_start_leave_the_fold_to_this_process(night, monkeypatch, caplog):
    """A venue machine where worker processes fail (a sandbox, a broken interpreter path)
    still starts: slower, never wrong."""
    monkeypatch.setattr("sys.executable", "/nonexistent/python")
    with SQLiteStore(night) as store:
        many = replay.load_states(store, use_snapshots=False, workers=2)
        assert many == _one_by_one(store, store.sessions())
    assert "replay workers failed" in caplog.text
