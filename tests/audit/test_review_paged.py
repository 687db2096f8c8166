"""What a server keeps of a night does not grow with its finished part.

A kept review holds each item's seq and scene, and the items themselves only for a few
pages, reading the others from the store again (server/audit/paged.py); its folds, and
each view's projection, keep the final pages of finished challenges compressed, out of
their states (server/core/pages.py). These tests shrink the pages so a short night has
many, overrule challenges on compressed pages (the one event that changes a finished
challenge, MET-14), and check every answer against the review built at once and the fold
per call; then measure, in-process with tracemalloc, what a night adds to what is kept.
"""

from __future__ import annotations

import functools
import gc
import random
import shutil
import tracemalloc
import zlib

import httpx
import msgspec
import pytest

from conteur.events import met
from conteur.events.model import STORYTELLER, Actor
from conteur.server.audit import paged
from conteur.server.audit import review as rv
from conteur.server.audit import timeline as review_timeline
from conteur.server.audit import page as review_page
from conteur.server.audit import scenes as review_scenes
from conteur.server.audit import stories
from conteur.server.core import pages as page_codec
from conteur.server.core.auth import Tokens
from conteur.server.core.projections import Projections, view_key
from conteur.server.store.sqlite import SQLiteStore, decode_events
from tests.support.client_support import served
from tests.support.examples import examples
from tests.support.review_support import met_night


@pytest.fixture
def small_pages(monkeypatch):
    """Pages of 4 challenges and of 16 items, one page kept besides the one being filled."""
    monkeypatch.setattr(met, "PAGE", 4)
    monkeypatch.setattr(paged, "PAGE", 16)
    monkeypatch.setattr(paged, "CACHED", 1)


# a night where a storyteller now and then overrules a finished challenge
night = functools.partial(met_night, overrules=0.02)


def player(store, session: str) -> Actor:
    character = sorted(store.load_state(session).session.characters)[0]
    return Actor(role="player", character=character, name=character)


def compressed(state) -> int:
    """Finished challenges ``state`` holds compressed in place (``pages.Page``)."""
    return sum(len(page) for page in state.met.done if type(page) is page_codec.Page)


def in_pieces(store, session: str, builder: rv.Builder, rng: random.Random) -> rv.Builder:
    rows = store.read_after(session, 0)
    at = 0
    while at < len(rows):
        step = rows[at:at + rng.randint(1, 200)]
        builder.extend(step, decode_events([r.data for r in step]))
        at += len(step)
        if rng.random() < 0.3:
            builder.marks()  # as the server does after each catch-up
        if rng.random() < 0.1:
            review_page.first_screen(builder)
    return builder


def test_a_review_read_back_by_pages_answers_as_the_review_built_at_once(tmp_path, small_pages):
    db = tmp_path / "paged.db"
    night(db, "s", examples(600), "paged")
    rng = random.Random(18)
    with SQLiteStore(db) as store:
        for viewer in (STORYTELLER, player(store, "s")):
            builder = in_pieces(store, "s", rv.Builder("s", viewer, "fr", store=store), rng)
            whole = rv.Builder("s", viewer, "fr")
            whole.extend(*rv.read_session(store, "s"))
            review, reference = builder.review(), whole.review()
            assert len(review.items) > 10 * paged.PAGE
            # what is held: two pages of items, and finished challenges compressed
            held = len(builder.items._hot) + sum(len(p) for p in builder.items._cache.values())
            assert held <= (paged.CACHED + 1) * paged.PAGE
            state = builder._truth if viewer is STORYTELLER else builder._seen
            assert compressed(state) > 10 * met.PAGE
            assert review_page.bundle(review) == review_page.bundle(reference)
            assert review_page.first_screen(builder) == review_page.first_screen(whole)
            for cid in reference.challenge_items:
                assert msgspec.to_builtins(stories.challenge_story(review, cid)) == \
                    msgspec.to_builtins(stories.challenge_story(reference, cid)), cid
            assert review.state.met.challenges == reference.state.met.challenges
            middle = reference.items[len(reference.items) // 2].seq
            assert review_page.items_page(review, middle, 37) == review_page.items_page(reference, middle, 37)
            assert review_page.challenges_page(builder, 5, 9) == review_page.challenges_page(whole, 5, 9)
            character = sorted(reference.names)[1]
            assert [review_page.item_dict(i) for i in review_timeline.timeline(review, character=character)] == \
                [review_page.item_dict(i) for i in review_timeline.timeline(reference, character=character)]
            for scene in reference.scenes:
                assert review_scenes.scene_index(review, scene) == review_scenes.scene_index(reference, scene)
                assert review_scenes.scene_at(review, scene, middle) == review_scenes.scene_at(reference, scene, middle)
            assert review_scenes.state_at(review, middle) == review_scenes.state_at(reference, middle)


def test_a_bundle_of_a_kept_review_holds_what_it_had_taken_when_asked(tmp_path, small_pages):
    # the bundle reads a kept review's pages once (review_page.held) while the night goes on
    db = tmp_path / "held.db"
    night(db, "s", examples(300), "held")
    with SQLiteStore(db) as store:
        rows = store.read_after("s", 0)
        half = rows[:len(rows) // 2]
        kept, whole = rv.Builder("s", STORYTELLER, "en", store=store), rv.Builder("s", STORYTELLER, "en")
        for builder in (kept, whole):
            builder.extend(half, decode_events([r.data for r in half]))
        taken, reference = kept.review(), whole.review()
        rest = rows[len(half):]
        kept.extend(rest, decode_events([r.data for r in rest]))
        kept.marks()
        held = review_page.held(taken)
        assert isinstance(held.items, list) and len(held.items) == len(reference.items) > 4 * paged.PAGE
        told = lambda review: {cid: [review_page.item_dict(i) for i in items]  # noqa: E731
                               for cid, items in review.challenge_items.items()}
        assert told(held) == told(reference)
        assert review_page.bundle(taken) == review_page.bundle(reference)


def test_projections_with_compressed_challenges_answer_as_the_fold_per_call(tmp_path, small_pages):
    db = tmp_path / "views.db"
    night(db, "s", examples(300), "views", overrules=0.05)
    with SQLiteStore(db) as store:
        projections = Projections(store)
        viewers = [STORYTELLER, player(store, "s"), Actor(role="observer", name="wall")]
        for viewer in viewers:
            projections.state_json("s", viewer)
    night(db, "s", examples(300), "views, later", overrules=0.05)  # the projections catch up
    with SQLiteStore(db) as store:
        projections.store = store
        fresh = Projections(store)
        for viewer in viewers:
            view = projections._sessions["s"].views[view_key(viewer)]
            assert compressed(view.state) > 5 * met.PAGE  # finished challenges compressed
            assert projections.state_json("s", viewer) == fresh.state_json("s", viewer)
            assert projections.state("s", viewer) == fresh.state("s", viewer)
            whole = fresh.state("s", viewer)
            every = [c for page in whole.met.done for c in page.values()]
            got, after = [], 0
            while True:
                page = msgspec.json.decode(projections.done_json("s", viewer, after, 7))
                if not page["challenges"]:
                    break
                got += page["challenges"]
                after = int(page["challenges"][-1]["id"][1:])
            assert sorted(c["id"] for c in got) == sorted(c.id for c in every)
            assert got == msgspec.json.decode(msgspec.json.encode(sorted(every, key=lambda c: int(c.id[1:]))))


def _kept_bytes(build) -> int:
    gc.collect()
    tracemalloc.start()
    try:
        kept = build()
        gc.collect()
        size = tracemalloc.get_traced_memory()[0]
    finally:
        tracemalloc.stop()
    del kept
    return size


def test_what_is_kept_does_not_grow_with_finished_challenges(tmp_path, monkeypatch):
    """The same night, half and whole: a kept review and a player's projection grow by a
    small part of what the review held when it kept every item (tracemalloc, no timing)."""
    monkeypatch.setattr(met, "PAGE", 8)
    monkeypatch.setattr(paged, "PAGE", 64)
    monkeypatch.setattr(paged, "CACHED", 1)
    db, half_db = tmp_path / "grow.db", tmp_path / "half.db"
    night(db, "s", 1000, "grow", overrules=0.0)
    shutil.copyfile(db, half_db)  # the night at its middle, then on to its end
    night(db, "s", 1000, "grow, later", overrules=0.0)
    with SQLiteStore(half_db) as half, SQLiteStore(db) as whole:
        viewer = player(whole, "s")

        def review(store, paging: bool):
            builder = rv.Builder("s", STORYTELLER, "en", keep_rows=False, store=store if paging else None)
            while rows := store.read_after("s", builder.head, limit=500):  # as http_review catches up
                builder.extend(rows, decode_events([r.data for r in rows]))
                builder.marks()
            review_page.first_screen(builder)
            return builder

        def projection(store):
            projections = Projections(store)
            projections.state_json("s", viewer)
            return projections

        events = whole.session_head("s") - half.session_head("s")
        grown = {what: _kept_bytes(lambda: make(whole)) - _kept_bytes(lambda: make(half))
                 for what, make in (("paged", lambda store: review(store, True)),
                                    ("kept", lambda store: review(store, False)), ("view", projection))}
    per_event = {what: size / events for what, size in grown.items()}
    # the review that kept every item grew by about 220 bytes an event here (keep_rows off,
    # sentences told when read); the paged one by its seqs, scenes and challenges' marks
    assert per_event["kept"] > 150, per_event
    assert per_event["paged"] < per_event["kept"] / 3, per_event
    assert per_event["view"] < 40, per_event


def test_over_http_a_paged_review_and_the_state_pages_answer_as_built_at_once(tmp_path, small_pages):
    db = tmp_path / "served.db"
    night(db, "s", examples(300), "served")
    with SQLiteStore(db) as store:
        tokens = Tokens(store)
        storyteller = tokens.issue("storyteller", name="st")
        who = player(store, "s")
        phone = tokens.issue("player", character=who.character, session="s", name=who.character)
    with served(db) as server:
        def get(path, token=storyteller):
            answer = httpx.get(f"{server.url}/sessions/s{path}", headers={"Authorization": f"Bearer {token}"},
                               timeout=60)
            assert answer.status_code == 200, answer.text
            return answer.json()

        get("/review/first")
        get("/state", phone)
        night(db, "s", examples(300), "served, later")  # another writer on the same file
        first, whole = get("/review/first"), get("/review")
        with SQLiteStore(db) as store:
            reference = review_page.bundle(rv.build(store, "s", Actor(role="storyteller", name="st")))
            fold = Projections(store).state("s", who)
        assert whole == msgspec.json.decode(msgspec.json.encode(reference))
        assert first["items"] == whole["items"][:review_page.FIRST_ITEMS]
        seq = whole["items"][len(whole["items"]) // 2]["seq"]
        assert get(f"/review/items?after={seq}&limit=40") == [i for i in whole["items"] if i["seq"] > seq][:40]
        done = get("/state/done?after=0&limit=1000", phone)
        every = sorted((c for page in fold.met.done for c in page.values()), key=lambda c: int(c.id[1:]))
        assert done["challenges"] == msgspec.json.decode(msgspec.json.encode(every))
        assert done["count"] == len(every) > 5 * met.PAGE


def test_a_night_of_marks_reads_the_compressed_pages_one_at_a_time(tmp_path, monkeypatch):
    """A kept review's first screen marks every challenge: past MERGED_MARKS it takes
    them page by page, so the compressed pages are never all decoded at once (merged, they
    would be, at each catch-up: a peak of every finished challenge that leaves the night's
    RSS fragmented). The marks are those found one id at a time."""
    monkeypatch.setattr(met, "PAGE", 4)
    db = tmp_path / "marks.db"
    night(db, "s", examples(1000), "marks")
    with SQLiteStore(db) as store:
        monkeypatch.setattr(rv, "MERGED_MARKS", 10**9)  # each challenge found by its id
        reference = rv.Builder("s", STORYTELLER, "en")
        reference.extend(*rv.read_session(store, "s"))
        expected = reference.marks()
        monkeypatch.setattr(rv, "MERGED_MARKS", 0)
        kept = rv.Builder("s", STORYTELLER, "en", keep_rows=False, store=store)
        kept.extend(*rv.read_session(store, "s", whole=False))
        blobs = [page.blob for page in kept._truth.met.done if type(page) is page_codec.Page]
        assert len(blobs) > 40
        gc.collect()
        tracemalloc.start()
        try:
            marks = kept.marks()
            held, peak = tracemalloc.get_traced_memory()
            tracemalloc.reset_peak()
            # what every compressed page decoded at once takes
            every_page = [page_codec._decode(zlib.decompress(blob)) for blob in blobs]
            at_once = tracemalloc.get_traced_memory()[0] - held
        finally:
            tracemalloc.stop()
        del every_page
        assert marks == expected
        assert peak - held < at_once / 4, (peak - held, at_once)
