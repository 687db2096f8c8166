"""The replay-only fold (``game.Replay``, which ``game.fold`` and the stores' fold loop
use) gives exactly the states ``game.evolve`` gives event by event: for random nights of
all three rulesets, folded whole, in chunks cut anywhere, from a mid-night state (a
snapshot), and as each viewer folds what it was sent; and through the store's replays."""

from __future__ import annotations

import dis
import functools
import itertools
import random
import sqlite3

import pytest
import msgspec
from hypothesis import HealthCheck, given, settings, strategies as st

from conteur.events import action, game, met, replay_steps, session, slim, v5, views
from conteur.events.simulate import met as met_simulate
from conteur.events.model import STORYTELLER, Actor, DrawRecord
from conteur.events.narrate import Teller, sentence
from conteur.events.wire import Viewer
from conteur.server.audit import review as rv
from conteur.server.cli.simulate import play, simulate
from conteur.server.core.service import Chronicle
from conteur.server.store import codec, replay, sqlite as store_sqlite
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
            # unsettled between chunks (the review's short runs, server/audit/review.py): the
            # session part is current after each, the whole state once asked for
            unsettled, session_part = game.Replay(), game.PART_NAMES.index("session")
            for a, b in zip(bounds, bounds[1:]):
                unsettled.feed(events[a:b], settle=False)
                assert unsettled.parts[session_part] == reference(events[:b]).session
            assert unsettled.state() == truth
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
def test_events_no_part_folds_change_nothing_and_the_head_is_still_the_last_row(tmp_path, request, kind):
    """``game.IGNORED`` rows (refusals, comparisons, concessions) fold to nothing in a
    store's replay (SQLite's decodes them to their tag alone, PostgreSQL's leaves them
    out); the state is the same, its ``head`` still the seq of the session's last row at
    or before ``at``, even when that row is one of them."""
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


# ---------------------------------------------------------------- the store's replay path
# (issue 18 item 2): one blob a chunk (group_concat), the hot kinds decoded slim


def fold_blobs(store: SQLiteStore, sid: str) -> list[bytes]:
    """The bodies of each chunk of ``sid`` as the store's replay reads them (997 rows a
    chunk, so that a night has several)."""
    first, last = store.session_span(sid)
    after, blobs = first - 1, []
    while True:
        top, rows, bodies = store._reader.execute(store_sqlite._FOLD_SQL, (after, last, sid, 997)).fetchone()
        if not rows:
            return blobs
        after = top
        blobs.append(bodies)


def as_read(mine, whole) -> bool:
    """Whether ``mine``, an event as a store's replay decodes it, stands for ``whole``: its
    tag alone for a kind no part folds, every field a slim type keeps as the whole
    event's, or the whole event itself."""
    if type(mine) in game.SKIPPED:
        return game.SKIPPED[type(mine)] is type(whole)
    if type(mine) in slim.SLIM:
        return slim.SLIM[type(mine)] is type(whole) and \
            all(getattr(mine, f) == getattr(whole, f) for f in mine.__struct_fields__)
    return mine == whole


@given(seed=st.integers(0, 10_000), size=st.integers(200, 900), cuts=st.lists(st.integers(0, 900), max_size=4))
@settings(max_examples=examples(5), deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
def test_the_slim_replay_of_random_nights_is_the_fold_of_whole_events(tmp_path_factory, seed, size, cuts):
    """Every session of a random night of the three rulesets: the events as the store's
    replay decodes them (slim where it may, the ignored kinds to their tag, a chunk that
    holds a sealed opposed roll with that roll whole) fold, whole and in chunks cut
    anywhere, to the states of ``game.fold`` over whole events; no chunk of a night the
    server wrote falls back to decoding every kind whole; and ``load_state`` and
    ``fold_session`` at any ``at`` agree with it."""
    db = tmp_path_factory.mktemp("night") / "c.db"
    with SQLiteStore(db) as store:
        play(Chronicle(store), "n", events=size, seed=seed, close=seed % 2 == 0)
        for sid, events in nights(store).items():
            decode = codec.FoldDecoder()
            slimmed = [e for b in fold_blobs(store, sid) for e in decode(b)]
            assert len(slimmed) == len(events)
            assert all(as_read(mine, whole) for mine, whole in zip(slimmed, events))
            # whole only where the state keeps the event whole: each sealed opposed roll, alone
            assert [i for i, e in enumerate(slimmed) if type(e) in slim.READ] == \
                [i for i, e in enumerate(events) if isinstance(e, action.ActionRolled) and e.sealed
                 and e.opponent is not None]
            truth = game.fold(events)
            assert game.fold(slimmed) == truth
            bounds = sorted({0, len(slimmed), *(c % (len(slimmed) + 1) for c in cuts)})
            fed = game.Replay()
            for a, b in zip(bounds, bounds[1:]):
                fed.feed(slimmed[a:b])
            assert fed.state() == truth
            head = store.session_head(sid)
            assert store.load_state(sid, use_snapshots=False) == msgspec.structs.replace(truth, head=head)
            rows = store.read_after(sid, 0)
            for i in sorted({c % len(rows) for c in cuts} | {len(rows) // 2}):
                state, _ = store_sqlite.fold_session(store._reader, sid, rows[i].seq, use_snapshots=False)
                assert state == msgspec.structs.replace(reference(events[:i + 1]), head=rows[i].seq)


def test_every_event_kind_decodes_for_replay_to_its_own_fold(tmp_path):
    """Each event type the store replays: its slim form (or itself) has the tag and, for
    every field it keeps, in the whole type's order, the whole type's own type and default; the kinds slimmed are
    exactly ``slim.READ``'s, the kinds read as their tag alone exactly ``game.IGNORED``;
    and one event of each kind a night holds, folded as read onto the state before it,
    gives the state the whole event gives."""
    fold_types = {t.__struct_config__.tag: t for t in game.FOLD_TYPES}
    assert set(fold_types) == set(game.EVENT_BY_TAG)
    for tag, whole in game.EVENT_BY_TAG.items():
        mine = fold_types[tag]
        if mine is whole:
            assert whole not in slim.READ and tag not in game.IGNORED, tag
            continue
        if mine in game.SKIPPED:
            assert game.SKIPPED[mine] is whole and tag in game.IGNORED and not mine.__struct_fields__
            assert game._STEPS[mine] == game._STEPS[whole] == () and whole not in game._DRAWN
            continue
        assert slim.SLIM[mine] is whole and set(mine.__struct_fields__) == set(slim.READ[whole])
        # in the stored order (the whole type's): msgspec then finds each key at its first look
        assert mine.__struct_fields__ == tuple(n for n in whole.__struct_fields__ if n in slim.READ[whole])
        fields = {f.name: f for f in msgspec.structs.fields(whole)}
        for f in msgspec.structs.fields(mine):
            assert (f.type, f.default, f.default_factory) == (fields[f.name].type, fields[f.name].default,
                                                              fields[f.name].default_factory), (tag, f.name)
        assert game._STEPS[mine] == game._STEPS[whole] and (mine in game._DRAWN) == (whole in game._DRAWN)
    with SQLiteStore(tmp_path / "c.db") as store:
        play(Chronicle(store), "k", events=1500, seed=3)
        seen = set()
        for sid, events in nights(store).items():
            before = game.initial()
            for event in events:
                tag = event.__struct_config__.tag
                if tag not in seen:
                    seen.add(tag)
                    (mine,) = codec.decode_fold(codec.encode_event(event))
                    assert as_read(mine, event), tag
                    assert game.fold([mine], before) == game.evolve(before, event), tag
                before = game.evolve(before, event)
        assert {t.__struct_config__.tag for t in slim.READ} <= seen
        assert seen & game.IGNORED


def _event_reads(evolver, event_arg: int = 1) -> tuple[set[str], int]:
    """(the attributes ``evolver`` reads on its event argument, the places it uses the
    event otherwise: passes it on, keeps it)."""
    code = evolver.__code__
    name = code.co_varnames[event_arg]
    ops = list(dis.get_instructions(code))
    reads, escapes = set(), 0
    for op, after in zip(ops, ops[1:] + [None]):
        if op.opname == "LOAD_FAST" and op.argval == name:
            if after is not None and after.opname in ("LOAD_ATTR", "LOAD_METHOD"):
                reads.add(after.argval)
            else:
                escapes += 1
    return reads, escapes


def test_the_slim_kinds_hold_every_field_their_evolvers_read():
    """Read off the evolvers' bytecode: a slim type holds each field its kind's evolvers
    read; none hands the event on or keeps it, but ``evolve_action_rolled``, which keeps a
    sealed opposed roll, and a replay's reader decodes such a roll whole."""
    for whole, names in slim.READ.items():
        read, escapes = set(), 0
        for part, evolver in game.HANDLERS[whole]:
            r, e = _event_reads(evolver)
            read |= r
            escapes += e
        if whole in game._DRAWN:
            read.add("draws")
        assert read <= set(names), (whole, read - set(names))
        assert escapes == (1 if whole is action.ActionRolled else 0), whole
        # and its replay step: an action roll's hands it on (its group, the sealed roll
        # kept), a pool roll's keeps it in the work (its v5.Roll built later, by done)
        step_reads, step_escapes = _event_reads(replay_steps.STEPS[whole][2])
        if whole is v5.PoolRolled:
            step_reads |= _event_reads(replay_steps.V5Work._built, 2)[0]  # its local e
        assert step_reads <= set(names), (whole, step_reads - set(names))
        assert step_escapes == {action.ActionRolled: 2, v5.PoolRolled: 1}.get(whole, 0), whole
    rolled = [k for k, w in slim.SLIM.items() if w is action.ActionRolled]
    assert rolled == [slim.kept_kind(False), slim.kept_kind(True)]
    for kind in rolled:  # with its draw records and without (their stored summaries)
        opposed = b'{"type":"action.rolled","roll":"a1","character":"c","ps":1,"opponent":"d"'
        assert not slim.kept(msgspec.json.decode(opposed + b"}", type=kind))
        assert slim.kept(msgspec.json.decode(opposed + b',"sealed":true}', type=kind))


def test_a_sealed_opposed_roll_decodes_whole_and_folds_alike_whatever_its_bytes(tmp_path):
    """A sealed opposed roll (ACT-12: kept whole in the state) is decoded again whole,
    alone, wherever it stands in the chunk and however its body is written (keys
    reordered, stored as TEXT); the fold is the same, and the chunks after it decode slim."""
    with SQLiteStore(tmp_path / "c.db") as store:
        play(Chronicle(store), "k", events=1200, seed=5)
        sid = next(s for s in store.sessions() if s.endswith("action"))
        events = nights(store)[sid]
        sealed = next(e for e in events if isinstance(e, action.ActionRolled) and e.sealed and e.opponent)
        body = msgspec.json.decode(codec.encode_event(sealed))
        moved = msgspec.json.encode({"sealed": body.pop("sealed"), **body})
        bodies = [codec.encode_event(e) for e in events]
        decode = codec.FoldDecoder()
        plain = [e for e in events if not (isinstance(e, action.ActionRolled) and e.sealed and e.opponent)]
        first = decode(b",".join(codec.encode_event(e) for e in plain))
        assert not any(type(e) is action.ActionRolled for e in first)  # slim while none is met
        folded = decode(b",".join(bodies + [moved]))
        assert folded[-1] == sealed and all(as_read(m, w) for m, w in zip(folded, events))
        assert [e for e in folded if type(e) is action.ActionRolled] == \
            [e for e in events + [sealed] if isinstance(e, action.ActionRolled) and e.sealed and e.opponent]
        assert game.fold(folded) == game.fold(events + [sealed])
        again = decode(b",".join(codec.encode_event(e) for e in plain))
        assert not any(type(e) is action.ActionRolled for e in again)  # the next chunk slim again
        assert game.fold(again) == game.fold(plain)
    # through the store: every sealed opposed roll rewritten so (as TEXT) in a copy of the file
    copy = tmp_path / "edited.db"
    with sqlite3.connect(tmp_path / "c.db") as src, sqlite3.connect(copy) as dst:
        src.backup(dst)
    with sqlite3.connect(copy) as conn:
        conn.execute("DROP TRIGGER events_no_update")
        edits = []
        for seq, data in conn.execute("SELECT seq, data FROM events WHERE type = 'action.rolled'").fetchall():
            body = msgspec.json.decode(data)
            if body["sealed"] and body["opponent"] is not None:
                edits.append((msgspec.json.encode({"sealed": body.pop("sealed"), **body}).decode(), seq))
        assert edits
        conn.executemany("UPDATE events SET data = ? WHERE seq = ?", edits)
    with SQLiteStore(copy) as store:
        assert store.load_state(sid, use_snapshots=False) == \
            msgspec.structs.replace(reference(events), head=store.session_head(sid))


def test_a_log_inserted_out_of_order_replays_in_seq_order(tmp_path):
    """The read joins a chunk's bodies in seq order whatever order the rows were written
    in: a chronicle of three interleaved sessions copied row by row in shuffled order (the
    same seqs) replays to the same states, chunk after chunk."""
    with SQLiteStore(tmp_path / "c.db") as store:
        play(Chronicle(store), "s", events=1500, seed=9)
        expected = {sid: store.load_state(sid, use_snapshots=False) for sid in store.sessions()}
        truths = {sid: reference(events) for sid, events in nights(store).items()}
    for sid, state in expected.items():
        assert state == msgspec.structs.replace(truths[sid], head=state.head)
    shuffled = tmp_path / "shuffled.db"
    SQLiteStore(shuffled).close()  # the schema
    with sqlite3.connect(tmp_path / "c.db") as src, sqlite3.connect(shuffled) as dst:
        rows = src.execute("SELECT * FROM events").fetchall()
        random.Random(4).shuffle(rows)
        dst.executemany(f"INSERT INTO events VALUES ({','.join('?' * len(rows[0]))})", rows)
        dst.execute("DELETE FROM heads")
        dst.executemany("INSERT INTO heads VALUES (?,?,?)", src.execute("SELECT * FROM heads").fetchall())
    with SQLiteStore(shuffled) as store:
        assert {sid: store.load_state(sid, use_snapshots=False) for sid in store.sessions()} == expected
        for sid in expected:  # small chunks: the order holds within each and across them
            state, _ = store_sqlite.fold_session(store._reader, sid, use_snapshots=False)
            assert state == expected[sid]
            assert [e for b in fold_blobs(store, sid) for e in codec.decode_fold(b)] == \
                [e for e in codec.decode_fold(b",".join(fold_blobs(store, sid)))]


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_a_met_night_with_cancellable_retests_replays_as_evolve_does(seed):
    """A retest's step reads the session's options from the replay's parts (retest_cancel:
    the retest's result is kept to restore), a challenge's round changes wait in the met
    work: fed whole and as the store decodes them, one event at a time, in sevens and at
    once, the state after each feed is ``evolve``'s, byte for byte, and the parts a caller
    read between feeds are never changed by the later ones."""
    events, _, final = met_simulate.simulate(random.Random(seed), 1200, retest_cancel=True)
    assert final.session.options.retest_cancel
    assert any(isinstance(e, met.RetestTaken) for e in events)
    assert any(isinstance(e, met.RetestCancelled) for e in events)
    truths = list(itertools.accumulate(events, game.evolve, initial=game.initial()))
    folded = [i for i, e in enumerate(events, 1) if e.__struct_config__.tag not in game.IGNORED]
    slimmed = codec.decode_fold(b",".join(codec.encode_event(events[i - 1]) for i in folded))
    for fed_events, at in ((events, range(1, len(events) + 1)), (slimmed, folded)):
        for step in (1, 7, len(fed_events)):
            fed, held = game.Replay(), []
            for a in range(0, len(fed_events), step):
                fed.feed(fed_events[a:a + step])
                truth = truths[at[min(a + step, len(fed_events)) - 1]]
                assert fed.state() == truth
                assert codec.encode_state(fed.state()) == codec.encode_state(truth)
                held.append((list(fed.parts), msgspec.msgpack.encode(fed.parts)))
            assert all(msgspec.msgpack.encode(parts) == encoded for parts, encoded in held)
