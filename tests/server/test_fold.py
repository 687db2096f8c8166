"""One fold: every state the server builds is ``functools.reduce(game.evolve, ...)``.

The command path (``server/core/service.py``), the stores' replay, the review and the
views' projections all fold with ``game.fold``, which is ``evolve`` over the events; so an
evolver changed is what the live server folds. A file written by the previous schema (its
draw summaries beside the log) opens, folds and verifies."""

from __future__ import annotations

import functools
import gzip
import random
import shutil
import sqlite3
from pathlib import Path

import msgspec
import pytest

from conteur.events import game, met, session, views
from conteur.events.model import STORYTELLER, Actor, DrawRecord
from conteur.events.narrate import Teller, sentence
from conteur.events.wire import Viewer
from conteur.server.audit import review as rv
from conteur.server.audit.verify import verify_path
from conteur.server.cli.simulate import play, simulate
from conteur.server.core.projections import Projections
from conteur.server.core.service import Chronicle
from conteur.server.store import replay, sqlite as store_sqlite
from conteur.server.store.dbfile import SCHEMA_VERSION
from conteur.server.store.factory import open_store
from conteur.server.store.sqlite import SQLiteStore
from tests.support.examples import examples

OLD_FILE = Path(__file__).resolve().parents[1] / "support" / "chronicle_schema1.db.gz"


def reference(events, state=None):
    """The fold as the deciders see it: one frozen state per event."""
    return functools.reduce(game.evolve, events, game.initial() if state is None else state)


def headless(state: game.GameState) -> game.GameState:
    return msgspec.structs.replace(state, head=0)


def nights(store) -> dict[str, list]:
    return {sid: [e for _, chunk in store.iter_events(sid) for e in chunk] for sid in store.sessions()}


def _marked(own, e, state):
    """``met.evolve_round_won`` as a maintainer might change it: the ``by`` a round was won."""
    return met.evolve_round_won(own, msgspec.structs.replace(e, by=f"changed:{e.by}"), state)


def test_an_evolver_changed_is_what_the_command_path_the_store_and_the_review_fold(tmp_path, monkeypatch):
    """MET-3. Given ``met.evolve_round_won`` changed (every round won records another
    ``by``), when a MET night is played through the live command path, then the state the
    server holds, the store's replay from zero, the review's and each view's state all
    show the change, and each is ``reduce(evolve)`` over the stored events."""
    monkeypatch.setitem(game.EVOLVERS, met.RoundWon, game._composed((("met", _marked),)))
    with SQLiteStore(tmp_path / "c.db") as store:
        chronicle = Chronicle(store)
        play(chronicle, "n", events=600, seed=3, close=False, ruleset="met")
        events = nights(store)["n"]
        won = [e for e in events if isinstance(e, met.RoundWon)]
        assert won
        truth = reference(events)
        challenges = truth.met.challenges
        assert {challenges[e.challenge].by for e in won} <= {f"changed:{e.by}" for e in won}
        live = chronicle.state("n")
        assert headless(live) == truth
        assert headless(store.load_state("n", use_snapshots=False)) == truth
        builder = rv.Builder("n")
        builder.extend(*rv.read_session(store, "n"))
        assert headless(builder.seen_state) == truth
        player = next(iter(sorted(truth.session.characters)))
        viewer = Viewer(role="player", character=player)
        seen = [s for s in (views.view(e, viewer) for e in events) if s is not None]
        projected = Projections(store).state("n", Actor(role="player", character=player))
        assert headless(projected) == headless(reference(seen))
        assert any(c.by.startswith("changed:") for c in projected.met.challenges.values())
    # and without the change, the same night folds to what the evolvers say again
    monkeypatch.undo()
    assert not any(c.by.startswith("changed:") for c in reference(events).met.challenges.values())


def test_every_fold_of_the_server_calls_game_evolve_once_an_event(tmp_path, monkeypatch):
    """``game.evolve`` replaced, the command path, the store's replay and the review call it
    for every event they fold, in log order: no other fold runs beside it (the review
    passes over the events that fold to nothing, ``game.IGNORED``)."""
    with SQLiteStore(tmp_path / "c.db") as store:
        play(Chronicle(store), "e", events=200, seed=5, close=False, ruleset="v5")
        events = nights(store)["e"]
        truth = reference(events)
        seen: list = []
        real = game.evolve

        def counted(state, event):
            seen.append(event)
            return real(state, event)

        monkeypatch.setattr(game, "evolve", counted)
        assert game.fold(events) == truth and seen == events
        seen.clear()
        store.load_state("e", use_snapshots=False)
        assert seen == events
        seen.clear()
        rv.build(store, "e")
        # the review leaves out the events that fold to nothing (``game.IGNORED``)
        assert seen == [e for e in events if e.__struct_config__.tag not in game.IGNORED]
        seen.clear()
        chronicle = Chronicle(store)
        chronicle.execute_sync("e", session.NextTurn(), STORYTELLER, device="st", command_id="one-more")
        added = nights(store)["e"][len(events):]
        assert added and seen[-len(added):] == added


def test_the_stores_replay_of_the_bench_sample_is_reduce_evolve(tmp_path):
    """``bench/load.py --quick``'s chronicle (``simulate(events=5000, seed=7)``), smaller:
    one session at a time, in worker processes, and from a snapshot mid-night."""
    db = tmp_path / "quick.db"
    simulate(str(db), events=examples(3000), seed=7)
    with SQLiteStore(db) as store:
        logs = nights(store)
        expected = {sid: reference(events) for sid, events in logs.items()}
        for many in (replay.load_states(store, use_snapshots=False, workers=1),
                     replay.load_states(store, use_snapshots=False, workers=2)):
            assert {sid: headless(s) for sid, s in many.items()} == expected
            assert all(many[sid].head == store.session_head(sid) for sid in many)
        for sid, events in logs.items():
            middle = len(events) // 2
            assert game.fold(events[middle:], reference(events[:middle])) == expected[sid]


def test_draws_on_several_streams_in_one_event_count_as_fair_2_says():
    """FAIR-2: each stream's next counter is past every draw folded; records from before
    streams count in the session-wide counter. The streams are persistent: the map a
    draw folds into is a new one, the one before it is left as it was."""
    rng = random.Random(5)
    records = [DrawRecord(counter=rng.randrange(6), sides=6, face=1, stream=rng.choice(["a/open", "b/open", "c/x"]))
               for _ in range(12)]
    records[0] = DrawRecord(counter=2, sides=6, face=1, stream="a/open")  # a streamed event
    before = {"a/open": 3, **{f"s/sealed=a{n}": n for n in range(300)}}  # wide enough for buckets
    streams = game.Streams(before)
    expected = dict(before)
    for r in records:
        if r.counter >= expected.get(r.stream, 0):
            expected[r.stream] = r.counter + 1
    after = streams.counted(records)
    assert after == expected and dict(after) == expected and len(after) == len(expected)
    assert streams == before  # unchanged
    assert streams.counted([DrawRecord(counter=1, sides=6, face=1, stream="a/open")]) is streams
    assert streams.counted([DrawRecord(counter=3, sides=6, face=1, stream="a/open")])["a/open"] == 4
    grown = game.Streams()
    for n in range(2000):  # through several rebuilds of its buckets
        grown = grown.counted([DrawRecord(counter=n % 3, sides=6, face=1, stream=f"x/sealed=a{n}")])
    assert grown == {f"x/sealed=a{n}": n % 3 + 1 for n in range(2000)}
    assert list(grown.to_dict()) == sorted(grown)
    old = [DrawRecord(counter=c, sides=6, face=1) for c in (4, 9, 2)]
    assert game.count_draws(3, old) == 10
    assert game.count_draws(12, old) == 12


@pytest.mark.parametrize("kind", ["sqlite", "postgresql"])
def test_events_no_part_folds_change_nothing_and_the_head_is_still_the_last_row(tmp_path, request, kind):
    """``game.IGNORED`` rows (refusals, comparisons, concessions) fold to nothing
    (PostgreSQL's replay leaves them out); the state is the same, its ``head`` still the seq
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
                assert headless(state) == reference(events[:i + 1])
        sid = store.sessions()[0]
        executed = Chronicle(store).execute_sync(sid, session.NextTurn(), Actor(role="observer"),
                                                 device="wall", command_id="refused-last")
        assert executed.outcome.rejected
        assert store.read_after(sid, 0)[-1].type == "command_rejected"
        assert store.load_state(sid, use_snapshots=False).head == store.session_head(sid)


@pytest.mark.parametrize("seed, pieces, lang", [(1, [1, 40, 7], "en"), (2, [300], "fr"), (3, [13, 13, 200, 2], "en")])
def test_the_review_walk_folds_and_tells_as_event_by_event(tmp_path, seed, pieces, lang):
    """The review's Builder folds in runs and tells each row when read: the viewer's state
    is its fold event by event, and each row's sentence is the one told with the roster's
    names as they stood at that event."""
    with SQLiteStore(tmp_path / "c.db") as store:
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
            assert headless(builder.seen_state) == reference(seen)
            names: dict[str, str] = {}
            scenes: dict[str, str] = {}
            told = []
            for event in events:
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


def test_a_log_inserted_out_of_order_replays_in_seq_order(tmp_path):
    """A chronicle of three interleaved sessions copied row by row in shuffled order (the
    same seqs) replays to the same states, in small chunks too."""
    with SQLiteStore(tmp_path / "c.db") as store:
        play(Chronicle(store), "s", events=1500, seed=9)
        expected = {sid: store.load_state(sid, use_snapshots=False) for sid in store.sessions()}
        truths = {sid: reference(events) for sid, events in nights(store).items()}
    for sid, state in expected.items():
        assert headless(state) == truths[sid]
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
        for sid in expected:
            chunks = list(store_sqlite.session_events(store._reader, sid, chunk=97))
            assert len(chunks) > 1
            state, _ = store_sqlite.fold_session(store._reader, sid, use_snapshots=False)
            assert state == expected[sid]


def test_a_row_that_does_not_decode_stops_its_sessions_replay_alone(tmp_path):
    """A row written past the store, by hand, that no event type decodes: its session's
    replay raises, the other sessions of the same file still fold."""
    db = tmp_path / "bad.db"
    with SQLiteStore(db) as store:
        play(Chronicle(store, snapshot_every=10**9), "n", events=600, seed=8, close=False)
        sessions = store.sessions()
    first = sessions[0]
    conn = sqlite3.connect(db)
    head = conn.execute("SELECT max(seq) FROM events").fetchone()[0]
    conn.execute("INSERT INTO events SELECT ?, session, type, ?, actor, device, 'forged', at, prev_hash, hash "
                 "FROM events WHERE session = ? ORDER BY seq DESC LIMIT 1", (head + 1, b'{"type":"met.nonsense"}', first))
    conn.execute("UPDATE heads SET last = ? WHERE session = ?", (head + 1, first))
    conn.commit()
    conn.close()
    with pytest.raises(msgspec.DecodeError):
        replay.fold_sessions(str(db), sessions, use_snapshots=False)
    rest = replay.fold_sessions(str(db), sessions[1:], use_snapshots=False)
    assert list(rest) == sessions[1:]


@pytest.fixture
def old_file(tmp_path) -> Path:
    """A chronicle as the previous schema (1) wrote it: ``conteur simulate --events 600
    --seed 1`` of that version, with its draw summaries (``drawn_pairs``) and snapshots."""
    db = tmp_path / "old.db"
    with gzip.open(OLD_FILE) as src, open(db, "wb") as dst:
        shutil.copyfileobj(src, dst)
    return db


def _tables(db: Path) -> set[str]:
    conn = sqlite3.connect(db)
    try:
        return {r[0] for r in conn.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}
    finally:
        conn.close()


def test_a_file_of_the_previous_schema_verifies_opens_and_folds(old_file):
    """Given a file written by the previous conteur (schema 1, its draw summaries beside
    the log), when it is verified, then opened by a store, then the check passes, the
    migration drops the summaries and stamps the file, and every session folds from zero
    and from its snapshots to ``reduce(evolve)`` of its log; the migrated file verifies."""
    conn = sqlite3.connect(old_file)
    assert conn.execute("PRAGMA user_version").fetchone() == (1,)
    assert conn.execute("SELECT count(*) FROM drawn_pairs").fetchone()[0] > 0
    conn.close()
    before = verify_path(old_file)
    assert before.ok, before.text()
    with SQLiteStore(old_file) as store:
        logs = nights(store)
        assert len(logs) == 3
        for sid, events in logs.items():
            assert headless(store.load_state(sid, use_snapshots=False)) == reference(events)
            assert headless(store.load_state(sid)) == reference(events)
    assert "drawn_pairs" not in _tables(old_file) and "drawn" not in _tables(old_file)
    conn = sqlite3.connect(old_file)
    assert conn.execute("PRAGMA user_version").fetchone() == (SCHEMA_VERSION,)
    conn.close()
    after = verify_path(old_file)
    assert after.ok and (after.events, after.draws_checked, after.verdicts_checked) == \
        (before.events, before.draws_checked, before.verdicts_checked)
    assert "summar" not in after.text()


def test_a_new_file_has_no_draw_summaries_and_the_current_stamp(tmp_path):
    with SQLiteStore(tmp_path / "c.db") as store:
        play(Chronicle(store), "n", events=200, seed=2, close=False)
    assert not {"drawn_pairs", "drawn"} & _tables(tmp_path / "c.db")
    conn = sqlite3.connect(tmp_path / "c.db")
    assert conn.execute("PRAGMA user_version").fetchone() == (SCHEMA_VERSION,)
    conn.close()
