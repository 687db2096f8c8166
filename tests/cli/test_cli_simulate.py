"""`conteur simulate`, `replay` and `verify` over a session played through the real
decide-and-append path; snapshots + tail equal a replay from zero."""

from __future__ import annotations

import json

import msgspec
from hypothesis import HealthCheck, given, settings, strategies as st

from conteur.events import action, game, session
from conteur.server.cli.main import main
from conteur.server.core.service import Chronicle
from conteur.server.cli.simulate import play, simulate
from conteur.server.store.sqlite import SQLiteStore
from tests.support.examples import examples


def test_simulate_then_verify_then_replay(tmp_path, capsys):
    db = tmp_path / "sim.db"
    assert main(["simulate", "--db", str(db), "--events", "600", "--seed", "7", "--json"]) == 0
    summary = json.loads(capsys.readouterr().out)
    assert summary["events"] >= 600 and summary["accepted"] > summary["rejected"]
    assert main(["verify", str(db)]) == 0
    out = capsys.readouterr().out
    assert "3 closed session(s)" in out and " 0 draws" not in out
    assert main(["replay", "--db", str(db), "--session", "sim-7-met"]) == 0
    state = json.loads(capsys.readouterr().out)
    assert state["session"]["status"] == "closed"
    assert state["met"]["live"] or state["met"]["done"], "a simulated MET session has challenges"


def test_replay_at_a_seq_folds_only_up_to_it(tmp_path, capsys):
    db = tmp_path / "sim.db"
    simulate(str(db), events=300, seed=2, ruleset="met")
    assert main(["replay", "--db", str(db), "--session", "sim-2", "--at", "3"]) == 0
    state = json.loads(capsys.readouterr().out)
    assert state["head"] == 3 and state["session"]["status"] == "open"


def test_replay_of_an_unknown_session_is_a_clear_error(tmp_path, capsys):
    db = tmp_path / "sim.db"
    simulate(str(db), events=50, seed=2, ruleset="v5")
    assert main(["replay", "--db", str(db), "--session", "nope"]) == 2
    assert "no session 'nope'" in capsys.readouterr().err


def test_live_state_equals_replay_from_zero(tmp_path):
    with SQLiteStore(tmp_path / "live.db") as store:
        chronicle = Chronicle(store)
        play(chronicle, "live", events=800, seed=11, ruleset="met", close=False)
        live = chronicle.state("live")
        replayed = store.load_state("live", use_snapshots=False)
        assert msgspec.structs.replace(live, head=0) == msgspec.structs.replace(replayed, head=0)


@settings(max_examples=examples(8), deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(seed=st.integers(0, 10_000), every=st.integers(20, 200), ruleset=st.sampled_from(["met", "v5", "action"]))
def test_snapshot_plus_tail_equals_replay_from_zero(tmp_path_factory, seed, every, ruleset):
    db = tmp_path_factory.mktemp("snap") / "c.db"
    with SQLiteStore(db, snapshot_every=every) as store:
        play(Chronicle(store), "s", events=300, seed=seed, ruleset=ruleset, close=False)
        first = store.load_state("s")  # folds from zero, saves a snapshot
        assert store.latest_snapshot("s")[1] is not None
        play(Chronicle(store), "s", events=150, seed=seed + 1, ruleset=ruleset, close=False)
        from_snapshot = store.load_state("s")
        from_zero = store.load_state("s", use_snapshots=False)
        assert from_snapshot == from_zero
        all_events = [e for _, chunk in store.iter_events("s") for e in chunk]
        assert msgspec.structs.replace(game.fold(all_events), head=from_zero.head) == from_zero
        assert first.head < from_zero.head


def test_a_simulated_action_night_keeps_the_size_of_a_venue_night(tmp_path):
    # ACT-12: the defender answers an opposed roll at once; ACT-7: minute and hour modifiers
    # expire as the storyteller skips time; ACT-8: a sacrifice is rare, so the roster stays
    # a few dozen characters rather than growing with the length of the night
    db = tmp_path / "night.db"
    summary = simulate(str(db), events=5000, seed=2, ruleset="action")
    with SQLiteStore(db) as store:
        state = store.load_state(summary.sessions[0])
        events = [e for _, chunk in store.iter_events(summary.sessions[0]) for e in chunk]
    assert len(state.session.characters) <= 24
    assert len(state.action.waiting) <= 10 and len(state.action.pending) <= 20
    assert len(state.action.modifiers) <= 30
    settled = sum(isinstance(e, action.OppositionSettled) for e in events)
    skipped = sum(isinstance(e, session.TimeSkipped) for e in events)
    assert settled > 100 and skipped > 10
    assert 0.02 < summary.rejected / (summary.accepted + summary.rejected) < 0.1


def test_fixed_secrets_write_the_same_log_twice_and_it_verifies(tmp_path, capsys):
    """The proof a redesign of the rules changes no behaviour rests on this (tests/support/golden_log.py):
    with --fixed-secrets, the same arguments give the same events, draws included (FAIR-2:
    the seeds come from --seed), and the closed sessions still verify."""
    from tests.support.golden_log import dump

    texts = []
    for name in ("a", "b"):
        db = tmp_path / f"{name}.db"
        assert main(["simulate", "--db", str(db), "--events", "300", "--seed", "5",
                     "--fixed-secrets"]) == 0
        assert main(["verify", str(db)]) == 0
        capsys.readouterr()
        with open(tmp_path / f"{name}.txt", "w") as out:
            dump(db, out)
        texts.append((tmp_path / f"{name}.txt").read_text())
    assert texts[0] == texts[1]
    assert '"draws":[[' in texts[0], "the log holds draws, and they came out the same"
