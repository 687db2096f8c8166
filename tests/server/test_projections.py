"""``GET /state`` from per-view projections: the same bytes as folding the
viewer's whole visible log on every call, for the storytellers, the wall and each player,
at every point of a random night, including events appended by another writer between
queries (DESIGN "Who sees what": a player's state holds nothing it was not sent); the
finished challenges left out of it counted, the last few carried, and every
one of them in ``GET /state/done``'s pages."""

from __future__ import annotations

import random
import threading

import msgspec
import pytest

from conteur.events import game, met, views
from conteur.events.model import STORYTELLER, Actor
from conteur.server.cli.simulate import next_commands, setup_commands
from conteur.server.core import keep
from conteur.server.core.projections import RECENT, Projections, stored_name, view_key
from conteur.server.core.service import Chronicle
from conteur.server.store.sqlite import SQLiteStore, decode_events
from tests.support.examples import examples


def folded_per_call(store: SQLiteStore, session: str, viewer: Actor) -> bytes:
    """What ``GET /state`` answered before projections: the viewer's visible log folded,
    its builtins encoded (as Litestar encodes a dict)."""
    if viewer.role == "storyteller":
        state = store.load_state(session, use_snapshots=False)
    else:
        state, head = game.initial(), 0
        rows = store.read_after(session, 0)
        for row, event in zip(rows, decode_events([r.data for r in rows])):
            seen = views.view(event, viewer)
            if seen is not None:
                state, head = game.evolve(state, seen), row.seq
        state = msgspec.structs.replace(state, head=head)
    return msgspec.json.encode(msgspec.to_builtins(state, enc_hook=game.enc_hook))


def number(challenge: dict) -> int:
    return int(challenge["id"][1:])


def live_per_call(store: SQLiteStore, session: str, viewer: Actor) -> bytes:
    """``GET /state``'s body as the whole fold gives it: ``met.done`` emptied, and the
    finished challenges counted with the last RECENT of them, by number, beside the state."""
    whole = msgspec.json.decode(folded_per_call(store, session, viewer))
    finished = sorted((c for page in whole["met"]["done"] for c in page.values()), key=number)
    whole["met"]["done"] = []
    whole["finished"] = {"count": len(finished), "recent": finished[-RECENT:]}
    return msgspec.json.encode(whole)


def every_finished(store: SQLiteStore, session: str, viewer: Actor) -> list[dict]:
    whole = msgspec.json.decode(folded_per_call(store, session, viewer))
    return sorted((c for page in whole["met"]["done"] for c in page.values()), key=number)


def paged(projections: Projections, session: str, viewer: Actor, limit: int) -> list[dict]:
    """Every finished challenge, read through ``GET /state/done``'s pages of ``limit``."""
    out, after = [], 0
    while True:
        page = msgspec.json.decode(projections.done_json(session, viewer, after, limit))
        assert page["count"] >= len(out) + len(page["challenges"]) and len(page["challenges"]) <= limit
        if not page["challenges"]:
            return out
        out += page["challenges"]
        after = number(out[-1])


def viewers(store: SQLiteStore, session: str) -> list[Actor]:
    characters = sorted(store.load_state(session).session.characters)
    return [STORYTELLER, Actor(role="observer", name="wall")] + [
        Actor(role="player", character=c, name=c) for c in characters]


@pytest.mark.parametrize("ruleset", ["met", "v5", "action"])
def test_every_view_gets_the_bytes_of_its_whole_fold(tmp_path, ruleset):
    rng = random.Random(f"projections-{ruleset}")
    session = f"night-{ruleset}"
    with SQLiteStore(tmp_path / "night.db", snapshot_every=50) as store:
        chronicle = Chronicle(store, snapshot_every=60)
        projections = Projections(store)
        n = 0

        def play(commands):
            nonlocal n
            futures = []
            for actor, command in commands:
                n += 1
                futures.append(chronicle.submit(session, command, actor, device=actor.character or "st",
                                                command_id=f"c{n}"))
            for f in futures:
                f.result()

        play(setup_commands(rng, ruleset))
        for round_ in range(examples(6)):
            for _ in range(rng.randint(0, 60)):
                play(next_commands(rng, ruleset, chronicle.state(session)))
            # some views ask, some do not; a view asking late folds from the log
            for viewer in viewers(store, session):
                if rng.random() < 0.7:
                    assert projections.state_json(session, viewer) == live_per_call(store, session, viewer), \
                        (round_, viewer)
        # a second writer on the same file (the CLI): its events are caught up as well
        with SQLiteStore(tmp_path / "night.db") as other:
            other_chronicle = Chronicle(other)
            for _ in range(20):
                for actor, command in next_commands(rng, ruleset, other_chronicle.state(session)):
                    n += 1
                    other_chronicle.submit(session, command, actor, device="cli", command_id=f"c{n}").result()
        for viewer in viewers(store, session):
            assert projections.state_json(session, viewer) == live_per_call(store, session, viewer)
            assert msgspec.json.encode(projections.state(session, viewer), enc_hook=game.enc_hook) == folded_per_call(store, session, viewer)
            assert paged(projections, session, viewer, rng.randint(1, 40)) == every_finished(store, session, viewer)


def test_an_unknown_session_is_the_initial_state(tmp_path):
    with SQLiteStore(tmp_path / "empty.db") as store:
        got = Projections(store).state_json("nowhere", Actor(role="player", character="x", name="x"))
    initial = msgspec.json.decode(msgspec.json.encode(game.initial(), enc_hook=game.enc_hook))
    assert msgspec.json.decode(got) == {**initial, "finished": {"count": 0, "recent": []}}


def test_a_long_night_answers_the_live_state_and_pages_every_finished_challenge(tmp_path):
    """Past a page of finished challenges (met.PAGE), ``GET /state`` carries only the last
    RECENT of them: its size does not follow the night; the pages of ``GET /state/done``
    give all of them, in number order, whatever the page length."""
    rng = random.Random("pages")
    with SQLiteStore(tmp_path / "pages.db") as store:
        chronicle = Chronicle(store)
        for actor, command in setup_commands(rng, "met"):
            chronicle.submit("s", command, actor).result()
        projections = Projections(store)
        anna = viewers(store, "s")[2]
        sizes = []
        for _ in range(2):
            for _ in range(800):
                for actor, command in next_commands(rng, "met", chronicle.state("s")):
                    chronicle.submit("s", command, actor).result()
            sizes.append(len(projections.state_json("s", anna)))
        assert len(chronicle.state("s").met.done) >= 2, "the night should have finished more than a page"
        for viewer in (STORYTELLER, anna):
            body = msgspec.json.decode(projections.state_json("s", viewer))
            everything = every_finished(store, "s", viewer)
            assert body["met"]["done"] == [] and body["finished"]["count"] == len(everything) > met.PAGE
            assert body["finished"]["recent"] == everything[-RECENT:]
            for limit in (1000, 97, 1):
                assert paged(projections, "s", viewer, limit) == everything
            middle = number(everything[len(everything) // 2])
            page = msgspec.json.decode(projections.done_json("s", viewer, middle, 5))
            assert page["challenges"] == [c for c in everything if number(c) > middle][:5]
            assert page["head"] == body["head"]
    # the second half of the night finished as many challenges as the first: the body did
    # not double (the whole state did)
    assert sizes[1] < 1.5 * sizes[0]


def test_views_beyond_the_bound_are_dropped_and_fold_again_the_same(tmp_path):
    """At most ``max_views`` views are kept (memory bounded by views, not devices); a
    dropped view asked again is folded from the log to the same bytes."""
    rng = random.Random("bound")
    with SQLiteStore(tmp_path / "bound.db") as store:
        chronicle = Chronicle(store)
        for actor, command in setup_commands(rng, "v5"):
            chronicle.submit("s", command, actor).result()
        for _ in range(80):
            for actor, command in next_commands(rng, "v5", chronicle.state("s")):
                chronicle.submit("s", command, actor).result()
        projections = Projections(store, max_views=2)
        everyone = viewers(store, "s")
        first = {v.character or v.role: projections.state_json("s", v) for v in everyone}
        kept = sum(len(s.views) for s in projections._sessions.values())
        assert kept == 2 < len(everyone)
        for v in reversed(everyone):
            assert projections.state_json("s", v) == first[v.character or v.role] == live_per_call(store, "s", v)


class Recording(SQLiteStore):
    """The real store, noting which thread saved which views' snapshots at which seq."""

    def __init__(self, *args, **kwargs) -> None:
        super().__init__(*args, **kwargs)
        self.saves: list[tuple[int, int, str]] = []

    def save_views(self, session: str, seq: int, views: dict[str, bytes]) -> None:
        super().save_views(session, seq, views)
        self.saves += [(threading.get_ident(), seq, view) for view in views if "#" not in view]


def test_the_query_that_crosses_the_save_mark_saves_no_views_snapshot_itself(tmp_path):
    """The views of a session are caught up together and cross the save mark together:
    the query that crossed it wrote every view's snapshot under the session's lock (up to
    sixty players' in one request). It hands them to the projections' own thread now,
    which writes them all; a restarted server starts each view from its snapshot."""
    rng = random.Random("saves")
    every = 100
    with Recording(tmp_path / "night.db") as store:
        chronicle = Chronicle(store)

        def play(commands: int) -> None:
            for _ in range(commands):
                for actor, command in next_commands(rng, "met", chronicle.state("s")):
                    chronicle.submit("s", command, actor).result()

        for actor, command in setup_commands(rng, "met"):
            chronicle.submit("s", command, actor).result()
        play(150)
        projections = Projections(store, save_every=every)
        everyone = viewers(store, "s")
        assert len(everyone) >= 6
        for viewer in everyone:
            projections.state_json("s", viewer)
        play(150)
        head = store.session_head("s")
        assert head - projections._sessions["s"].seq >= every  # every view crosses the mark at the next query
        asked = projections.state_json("s", everyone[3])
        mine = [view for thread, seq, view in store.saves if thread == threading.get_ident() and seq == head]
        assert mine == [], f"the query saved {len(mine)} views' snapshots itself"
        projections.flush()
        at_head = {view for _, seq, view in store.saves if seq == head}
        assert at_head == {stored_name(view_key(viewer)) for viewer in everyone}
        restarted = Projections(store, save_every=10**9)
        for viewer in everyone:
            found = keep.load_view(store, "s", stored_name(view_key(viewer)), head)
            assert found is not None and found[0] == head, viewer
            assert restarted.state_json("s", viewer) == projections.state_json("s", viewer) == \
                live_per_call(store, "s", viewer)
        assert asked == live_per_call(store, "s", everyone[3])
        projections.close()
