"""Issue 18 item 2: the start-up's replay folds the hottest kinds through replay-only
steps (``events.replay_steps``). It must give, byte for byte (the snapshot encoding, dict
order included), the states ``game.evolve`` gives event by event, on real SQLite files
holding random nights of the three rulesets played side by side."""

from __future__ import annotations

import dis
import functools

import msgspec
from hypothesis import HealthCheck, given, settings, strategies as st

from conteur.events import action, game, met, replay_steps, slim, v5
from conteur.server.cli.simulate import play
from conteur.server.core.service import Chronicle
from conteur.server.store import codec, replay, sqlite as store_sqlite
from conteur.server.store.sqlite import SQLiteStore
from tests.examples import examples

_encode = msgspec.msgpack.Encoder().encode  # a part alone, as a snapshot encodes it


def reference(events, state=None):
    """The fold as the deciders see it: one frozen state per event."""
    return functools.reduce(game.evolve, events, game.initial() if state is None else state)


def nights(store: SQLiteStore) -> dict[str, list]:
    return {sid: [e for _, chunk in store.iter_events(sid) for e in chunk] for sid in store.sessions()}


def same(a: game.GameState, b: game.GameState) -> bool:
    return a == b and codec.encode_state(a) == codec.encode_state(b)


@given(seed=st.integers(0, 10_000), sizes=st.tuples(st.integers(150, 800), st.integers(100, 500)))
@settings(max_examples=examples(4), deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
def test_the_start_ups_replay_of_random_nights_is_byte_identical_to_evolve(tmp_path_factory, seed, sizes):
    """Two nights of three sessions each (met, v5, action, played side by side): every
    session as ``fold_session`` and ``load_states`` fold it (the replay steps doing the hot
    kinds) is the reference fold with its head at its last row, byte for byte."""
    db = tmp_path_factory.mktemp("night") / "c.db"
    with SQLiteStore(db) as store:
        play(Chronicle(store), "n1", events=sizes[0], seed=seed, close=seed % 2 == 0)
        play(Chronicle(store), "n2", events=sizes[1], seed=seed + 1)
        truths = {sid: msgspec.structs.replace(reference(events), head=store.session_head(sid))
                  for sid, events in nights(store).items()}
        assert {sid.rsplit("-", 1)[1] for sid in truths} == {"met", "v5", "action"}
        for sid, truth in truths.items():
            one, folded = store_sqlite.fold_session(store._reader, sid, use_snapshots=False)
            assert same(one, truth), sid
            assert folded == len(nights(store)[sid])  # every row fed, the ignored ones as their tag
        many = replay.load_states(store, use_snapshots=False, workers=1)
        assert all(same(many[sid], truths[sid]) for sid in truths)


@given(seed=st.integers(0, 10_000), size=st.integers(200, 900), cuts=st.lists(st.integers(0, 900), max_size=8))
@settings(max_examples=examples(4), deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
def test_replay_steps_fold_as_evolve_and_never_change_what_a_caller_holds(tmp_path_factory, seed, size, cuts):
    """Fed in chunks cut anywhere (whole events and the store's slim ones), the parts a
    caller reads between feeds (the review's Builder does) are the reference's parts at
    that point, byte for byte, and stay so after later feeds: the steps' works copy what
    they change, and hand back frozen parts."""
    db = tmp_path_factory.mktemp("night") / "c.db"
    with SQLiteStore(db) as store:
        play(Chronicle(store), "n", events=size, seed=seed)
        for sid, events in nights(store).items():
            slimmed = codec.decode_fold(b",".join(codec.encode_event(e) for e in events
                                                  if e.__struct_config__.tag not in game.IGNORED))
            folded = [e for e in events if e.__struct_config__.tag not in game.IGNORED]
            for fed_events, base in ((events, events), (slimmed, folded)):
                bounds = sorted({0, len(fed_events), *(c % (len(fed_events) + 1) for c in cuts)})
                fed, held = game.Replay(), []
                for a, b in zip(bounds, bounds[1:]):
                    fed.feed(fed_events[a:b])
                    truth = reference(base[:b])  # the events no part folds change nothing
                    parts = list(fed.parts)
                    assert [_encode(p) for p in parts] == [_encode(getattr(truth, n)) for n in game.PART_NAMES]
                    held.append((parts, [_encode(p) for p in parts]))
                for parts, encoded in held:
                    assert [_encode(p) for p in parts] == encoded
                assert same(fed.state(), reference(events))


def test_every_replay_step_stands_for_its_evolver_on_every_event_of_its_kind(tmp_path):
    """Each step is registered for the evolver of its own part and kind (whole and slim);
    every event of a stepped kind in a night, folded by a replay onto the state before it,
    whole and slim, gives what ``evolve`` gives, byte for byte."""
    for kind, (part, evolver, _) in replay_steps.STEPS.items():
        whole = slim.SLIM.get(kind, kind)
        assert (part, evolver) in game.HANDLERS[whole], kind
        assert kind in game._FAST, kind
    with SQLiteStore(tmp_path / "c.db") as store:
        play(Chronicle(store), "k", events=2000, seed=21)
        seen: set[type] = set()
        for sid, events in nights(store).items():
            before = game.initial()
            for event in events:
                after = game.evolve(before, event)
                if type(event) in replay_steps.STEPS:
                    seen.add(type(event))
                    (mine,) = codec.decode_fold(codec.encode_event(event))
                    assert same(game.fold([event], before), after), event
                    assert same(game.fold([mine], before), after), event
                before = after
        # the hot kinds: every night holds them
        assert {action.ActionRolled, v5.PoolRolled, met.ThrowCommitted, met.ThrowsRevealed, met.RoundWon,
                met.ChallengeIssued, met.ChallengeResolved} <= seen, seen


def _own_names(evolver) -> tuple[set[str], set[str], int]:
    """(the attributes ``evolver`` reads on its first argument, its part; the keyword names
    of its calls: what a ``replace`` of the part sets; the uses of the part otherwise, and
    of keywords unpacked from a mapping: names this cannot see)."""
    code = evolver.__code__
    own = code.co_varnames[0]
    ops = list(dis.get_instructions(code))
    loads = [(op, after) for op, after in zip(ops, ops[1:]) if op.opname == "LOAD_FAST" and op.argval == own]
    reads = {after.argval for op, after in loads if after.opname in ("LOAD_ATTR", "LOAD_METHOD")}
    keywords = {name for op in ops if op.opname == "KW_NAMES" for name in code.co_consts[op.arg]}
    bare = sum(after.opname not in ("LOAD_ATTR", "LOAD_METHOD") for op, after in loads)
    return reads, keywords, bare + sum(op.opname == "CALL_FUNCTION_EX" for op in ops)


def test_a_step_run_on_the_works_own_part_touches_no_field_the_work_holds():
    """A step that runs its evolver on the work's ``own`` (``replay_steps._on_own``) is
    exact only while that evolver neither reads nor sets a field the work holds (and sets
    from itself when it is done)."""
    on_own = 0
    for kind, (part, evolver, step) in replay_steps.STEPS.items():
        if getattr(step, "evolver", None) is None:
            continue
        on_own += 1
        assert step.evolver is evolver, kind
        assert not hasattr(evolver, "__wrapped__") and evolver.__code__.co_argcount == 3, kind
        reads, keywords, elsewhere = _own_names(evolver)
        holds = replay_steps.WORKS[part].HOLDS
        assert reads and not reads & holds, (kind, reads & holds)
        assert keywords and not keywords & holds, (kind, keywords & holds)
        assert elsewhere == 1, kind  # the part itself only as the ``replace``d one
    assert on_own >= 4
