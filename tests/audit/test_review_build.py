"""The review page's cheap build tells the same bytes as a
review built the plain way: from entries (``read_entries``: no chain columns) rather than
rows, the truth folded in runs up to the events that read it (``game.fold``),
a storyteller's "who saw what" worked out only when a challenge's page asks for it, marks
looked up in the met part's pages merged. Each
random night of each ruleset, for every viewer in both languages, against the same
review fed one row at a time with who saw what worked out per item."""

from __future__ import annotations

import random

import msgspec
import pytest

from conteur.events import views
from conteur.server.audit import kept as kept_review
from conteur.server.audit import review as rv
from conteur.server.audit import page as review_page
from conteur.server.audit import stories as review_stories
from conteur.server.store.sqlite import SQLiteStore
from tests.support.examples import examples
from tests.support.review_support import evening, every_viewer, met_night, random_night

RULESETS = ("met", "v5", "action")


def told(builder: rv.Builder) -> bytes:
    """What a page asks of a review: its first screen, a page of rows and of challenges,
    each challenge's story with who saw each step."""
    first = review_page.first_screen(builder)
    review = builder.review(copy=False)
    stories = [msgspec.to_builtins(review_stories.challenge_story(review, cid)) for cid in list(builder.by_challenge)]
    return msgspec.json.encode([first, review_page.items_page(review, 10, 50), review_page.challenges_page(builder, 3, 20), stories])


def plain(store: SQLiteStore, session: str, viewer, lang: str) -> rv.Builder:
    """The review fed a row at a time, from whole rows, each item's forms worked out."""
    builder = rv.Builder(session, viewer, lang)
    rows, events = rv.read_session(store, session)
    for row, event in zip(rows, events):
        builder.extend([row], [event])
    if viewer.is_storyteller:  # every item's event is whole: its forms, worked out here
        for i, item in enumerate(builder.items):
            f = views.forms(item.event)
            builder.items[i] = msgspec.structs.replace(item, owners=f.owners, sealed=f.public is not None)
        by_seq = {item.seq: item for item in builder.items}
        builder.by_challenge = {cid: [by_seq[i.seq] for i in items] for cid, items in builder.by_challenge.items()}
    return builder


def fast(store: SQLiteStore, session: str, viewer, lang: str) -> rv.Builder:
    builder = rv.Builder(session, viewer, lang, keep_rows=False)
    builder.extend(*rv.read_session(store, session, whole=False))
    return builder


@pytest.mark.parametrize("ruleset", RULESETS)
def test_the_cheaper_build_tells_every_viewer_the_same_bytes(tmp_path, monkeypatch, ruleset):
    for n in range(examples(2)):
        rng = random.Random(f"build-{ruleset}-{n}")
        db = tmp_path / f"{ruleset}-{n}.db"
        if ruleset == "met" and n % 2:  # storytellers' overrules of finished challenges (MET-14)
            met_night(db, "s", rng.randint(30, 120), f"build-{n}", overrules=0.05)
        else:
            random_night(db, "s", ruleset, rng.randint(20, 120), rng, close=rng.random() < 0.6)
        with SQLiteStore(db) as store:
            for viewer in every_viewer(store, "s"):
                for lang in ("en", "fr"):
                    # the plain build finds each challenge by its page, the fast one in the
                    # pages merged (as a night's first screen does, past MERGED_MARKS)
                    monkeypatch.setattr(rv, "MERGED_MARKS", 10**9)
                    expected = told(plain(store, "s", viewer, lang))
                    monkeypatch.setattr(rv, "MERGED_MARKS", 0)
                    assert told(fast(store, "s", viewer, lang)) == expected, (ruleset, n, viewer, lang)


def test_a_review_that_keeps_its_rows_refuses_entries(tmp_path):
    db = tmp_path / "n.db"
    random_night(db, "s", "met", 5, random.Random(5), close=False)
    with SQLiteStore(db) as store:
        with pytest.raises(TypeError, match="needs whole rows"):
            rv.Builder("s").extend(*rv.read_session(store, "s", whole=False))


def test_marks_found_during_the_walk_are_those_found_in_each_challenges_items(tmp_path):
    """A mark's overrule or dispute, noted as the walk meets it (``Builder._marked``), is
    what looking through the challenge's items finds, for every viewer, in memory or kept
    by page; the nights hold overrules of finished challenges (MET-14) and an offline
    record disputed and ruled."""
    nights = [tmp_path / "over.db", tmp_path / "evening.db"]
    met_night(nights[0], "s", 80, "marks", overrules=0.15)
    evening(nights[1])
    found = {"met": 0, "offline": 0}
    for db in nights:
        with SQLiteStore(db) as store:
            session = store.sessions()[0]
            for viewer in every_viewer(store, session):
                for kept, saved in ((None, None), (store, None), (store, "now"), (store, "before")):
                    builder = rv.Builder(session, viewer, keep_rows=False, store=kept)
                    rows, events = rv.read_session(store, session, whole=False)
                    half = len(rows) // 2  # a catch-up after a first screen, as a server does
                    builder.extend(rows[:half], events[:half])
                    builder.marks()
                    if saved:  # a restart: the builder made again from its snapshot (server/audit/kept.py)
                        taken = kept_review.taken(builder)
                        if saved == "before":  # a snapshot saved before the marked challenges were kept
                            taken = msgspec.structs.replace(taken, body=msgspec.structs.replace(taken.body, marked=None))
                        assert kept_review.write(store, taken)
                        builder = kept_review.load(store, session, viewer, "en", builder.head)
                        assert (builder._marked is None) == (saved == "before")
                        # each challenge marked again, as by a catch-up that names it
                        builder.touched.update(builder.by_challenge)
                    builder.extend(rows[half:], events[half:])
                    marks, _ = builder.marks()
                    review = builder.review(copy=False)
                    for cid, items in ((cid, builder.by_challenge.get(cid, [])) for cid in list(builder.by_challenge)):
                        assert marks.get(cid) == review_stories.mark_of(review, cid, items), (db.name, viewer, cid)
                        if cid in marks and marks[cid].disputed:
                            found[marks[cid].kind] += 1
    assert found["met"] and found["offline"], found
