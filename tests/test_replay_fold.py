"""The replay-only fold (``game.Replay``, which ``game.fold`` and the stores' fold loop
use) gives exactly the states ``game.evolve`` gives event by event: for random nights of
all three rulesets, folded whole, in chunks cut anywhere, from a mid-night state (a
snapshot), and as each viewer folds what it was sent; and through the store's replays."""

from __future__ import annotations

import functools
import random

import pytest
from hypothesis import HealthCheck, given, settings, strategies as st

from conteur.events import game, session, views
from conteur.events.model import STORYTELLER, Actor, DrawRecord
from conteur.events.narrate import Teller, sentence
from conteur.events.wire import Viewer
from conteur.server.audit import review as rv
from conteur.server.cli.simulate import play, simulate
from conteur.server.core.service import Chronicle
from conteur.server.store import replay
from conteur.server.store.factory import open_store
from conteur.server.store.sqlite import SQLiteStore
from tests.examples import examples


def reference(events, state=None):
    """The fold as the deciders see it: one frozen state per event."""
    return functools.reduce(game.evolve, events, game.initial() if state is None else state)


def nights(store: SQLiteStore) -> dict[str, list]:
    return {sid: [e for _, chunk in store.iter_events(sid) for e in chunk] for sid in store.sessions()}


def viewers(state: game.GameState) -> list[Viewer]:
    players = [Viewer(role="player", character=c) for c in sorted(state.session.characters)]
    return [Viewer(role="storyteller"), Viewer(role="observer")] + players


@given(seed=st.integers(0, 10_000), size=st.integers(60, 700), cuts=st.lists(st.integers(0, 700), max_size=6))
@settings(max_examples=examples(6), deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
def test_random_nights_of_every_ruleset_replay_as_evolve_does(tmp_path_factory, seed, size, cuts):
    db = tmp_path_factory.mktemp("night") / "c.db"
    with SQLiteStore(db) as store:
        play(Chronicle(store), "n", events=size, seed=seed)
        logs = nights(store)
        assert {sid.rsplit("-", 1)[1] for sid in logs} == {"met", "v5", "action"}
        for sid, events in logs.items():
            truth = reference(events)
            assert game.fold(events) == truth
            # fed in chunks cut anywhere, and from a state mid-night (a snapshot's start)
            bounds = sorted({0, len(events), *(c % (len(events) + 1) for c in cuts)})
            fed = game.Replay()
            for a, b in zip(bounds, bounds[1:]):
                fed.feed(events[a:b])
                assert fed.state() == reference(events[:b])
            middle = bounds[len(bounds) // 2]
            assert game.fold(events[middle:], reference(events[:middle])) == truth
            # a viewer's partial fold (events.views): what a phone rebuilds
            for viewer in viewers(truth):
                seen = [s for s in (views.view(e, viewer) for e in events) if s is not None]
                assert game.fold(seen) == reference(seen), (sid, viewer)
            # the store's replays: one session, and all of them in one scan or in workers
            assert store.load_state(sid, use_snapshots=False) == game.GameState(
                **{f: getattr(truth, f) for f in truth.__struct_fields__ if f != "head"},
                head=store.session_head(sid))
        one_by_one = {sid: store.load_state(sid, use_snapshots=False) for sid in logs}
        assert replay.load_states(store, use_snapshots=False, workers=2) == one_by_one


def test_the_bench_chronicle_sample_replays_as_evolve_does(tmp_path):
    """``bench/load.py --quick``'s chronicle (``simulate(events=5000, seed=7)``), smaller."""
    db = tmp_path / "quick.db"
    simulate(str(db), events=examples(3000), seed=7)
    with SQLiteStore(db) as store:
        expected = {sid: functools.reduce(game.evolve, events, game.initial())
                    for sid, events in nights(store).items()}
        many = replay.load_states(store, use_snapshots=False, workers=1)
        assert {sid: game.GameState(**{f: getattr(s, f) for f in s.__struct_fields__ if f != "head"})
                for sid, s in many.items()} == expected
        assert all(many[sid].head == store.session_head(sid) for sid in many)


def test_draws_on_several_streams_in_one_event_count_as_evolve_counts():
    rng = random.Random(5)
    records = [DrawRecord(counter=rng.randrange(6), sides=6, face=1, stream=rng.choice(["a/open", "b/open", ""]))
               for _ in range(12)]
    records[0] = DrawRecord(counter=2, sides=6, face=1, stream="a/open")  # a streamed event
    streams = {"a/open": 3}
    expected = dict(streams)
    for r in records:  # FAIR-2: each stream's next counter is past every draw folded
        if r.counter >= expected.get(r.stream, 0):
            expected[r.stream] = r.counter + 1
    assert game.count_draws(streams, 7, records) == 7
    assert streams == expected
    # records from before streams count in the session-wide counter
    old = [DrawRecord(counter=c, sides=6, face=1) for c in (4, 9, 2)]
    assert game.count_draws({}, 3, old) == 10
    assert game.count_draws({}, 12, old) == 12


def _reads(own, event, state):
    return [own for _ in state.session.characters]


def _ignores(own, event, state):
    return own


@pytest.mark.parametrize("evolver, reads", [
    (_reads, True),  # in a comprehension (a closure in Python 3.11)
    (_ignores, False),
    (lambda own, e, state: state.met, True),
    (lambda own, e, state: own, False),
    (functools.partial(_ignores, None), True),  # not a plain function: taken to read it
])
def test_an_evolver_that_reads_the_whole_state_gets_it(evolver, reads):
    assert game._reads_state(evolver) is reads


@pytest.mark.parametrize("kind", ["sqlite", "postgresql"])
def test_events_no_part_folds_are_not_read_and_the_head_is_still_the_last_row(tmp_path, request, kind):
    """``game.IGNORED`` rows (refusals, comparisons, concessions) are left out of a store's
    replay (SQLite's and PostgreSQL's); the state is the same, its ``head`` still the seq
    of the session's last row at or before ``at``, even when that row is one of them."""
    assert "command_rejected" in game.IGNORED and "met.bids_compared" in game.IGNORED
    target = tmp_path / "c.db" if kind == "sqlite" else request.getfixturevalue("pg_url")
    with open_store(target, create=True) as store:
        play(Chronicle(store), "n", events=1200, seed=11, close=False)
        for sid in store.sessions():
            rows = store.read_after(sid, 0)
            events = [e for _, chunk in store.iter_events(sid) for e in chunk]
            ignored = [i for i, r in enumerate(rows) if r.type in game.IGNORED]
            assert ignored, sid
            for i in ignored[:3] + ignored[-2:] + [len(rows) - 1]:
                state = store.load_state(sid, rows[i].seq, use_snapshots=False)
                assert state.head == rows[i].seq
                assert game.GameState(**{f: getattr(state, f) for f in state.__struct_fields__ if f != "head"}) \
                    == reference(events[:i + 1])
        # a session whose last row is a refusal (an observer cannot act)
        sid = store.sessions()[0]
        executed = Chronicle(store).execute_sync(sid, session.NextTurn(), Actor(role="observer"),
                                                 device="wall", command_id="refused-last")
        assert executed.outcome.rejected
        assert store.read_after(sid, 0)[-1].type == "command_rejected"
        assert store.load_state(sid, use_snapshots=False).head == store.session_head(sid)


@given(seed=st.integers(0, 10_000), pieces=st.lists(st.integers(1, 400), min_size=1, max_size=5),
       lang=st.sampled_from(["en", "fr"]))
@settings(max_examples=examples(4), deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
def test_the_review_walk_folds_and_tells_as_event_by_event(tmp_path_factory, seed, pieces, lang):
    """The review's Builder folds through Replay in runs and tells each row when read:
    the viewer's state is its fold event by event, and each row's sentence is the one told
    with the roster's names as they stood at that event (a refusal naming a character
    added later keeps the bare id, as before)."""
    db = tmp_path_factory.mktemp("night") / "c.db"
    with SQLiteStore(db) as store:
        play(Chronicle(store), "r", events=700, seed=seed, close=False)
        sid = store.sessions()[seed % 3]
        rows, events = rv.read_session(store, sid)
        truth = reference(events)
        for actor in [STORYTELLER] + [Actor(role="player", character=c) for c in sorted(truth.session.characters)[:2]]:
            builder = rv.Builder(sid, actor, lang)
            at = 0
            for size in pieces + [len(rows)]:
                builder.extend(rows[at:at + size], events[at:at + size])
                at += size
            viewer = Viewer(role=actor.role, character=actor.character)
            seen = [s for s in (views.view(e, viewer) for e in events) if s is not None]
            assert game.GameState(**{f: getattr(builder.seen_state, f) for f in truth.__struct_fields__
                                     if f != "head"}) == reference(seen)
            names: dict[str, str] = {}
            scenes: dict[str, str] = {}
            told = []
            for event in events:  # the sentences as the walk told them before (issue 18)
                if isinstance(event, session.CharacterAdded):
                    names[event.character] = event.name or event.character
                elif isinstance(event, session.SceneOpened):
                    scenes[event.scene] = event.name or event.scene
                form = views.view(event, viewer)
                if form is not None:
                    told.append(sentence(form, Teller(dict(names), lang, dict(scenes))))
            assert [item.text for item in builder.items] == told


def test_a_row_told_late_names_characters_as_they_stood_at_it(tmp_path):
    """A refusal naming a character not yet on the roster keeps its bare id in the review,
    though the row is told only when read, after the character joined with a name."""
    with SQLiteStore(tmp_path / "c.db") as store:
        chronicle = Chronicle(store)
        for n, command in enumerate([session.OpenSession(name="n"), session.JoinScene(character="zed", scene="s1"),
                                     session.AddCharacter(character="zed", name="Zed Zorro")]):
            chronicle.execute_sync("s", command, STORYTELLER, device="st", command_id=f"c{n}")
        builder = rv.Builder("s")
        builder.extend(*rv.read_session(store, "s"))
        refused, added = builder.items[1], builder.items[2]
        assert refused.type == "command_rejected" and "zed" in refused.text and "Zorro" not in refused.text
        assert "Zed Zorro" in added.text
