"""The review by pages: built as the log grows instead of walked again from the
first event, and a first screen of bounded size whose parts, with the pages after it, add
up to the whole bundle (which stays for exports and scripts)."""

from __future__ import annotations

import random

import httpx
import pytest

from conteur.events.model import STORYTELLER
from conteur.server.audit import review as rv
from conteur.server.audit import page
from conteur.server.core.service import Chronicle
from conteur.server.store.sqlite import SQLiteStore, decode_events
from tests.support.client_support import served
from tests.support.examples import examples
from tests.support.review_support import ANNA, evening, met_night


@pytest.fixture(scope="module")
def setup(tmp_path_factory):
    return evening(tmp_path_factory.mktemp("pages") / "chronicle.db")


def built_in_pieces(store: SQLiteStore, session: str, rng: random.Random, viewer=STORYTELLER,
                    lang: str = "en") -> rv.Builder:
    rows = store.read_after(session, 0)
    builder = rv.Builder(session, viewer, lang)
    at = 0
    while at < len(rows):
        step = rows[at:at + rng.randint(1, 40)]
        builder.extend(step, decode_events([r.data for r in step]))
        at += len(step)
        if rng.random() < 0.3:
            page.first_screen(builder)  # the briefs kept current between pieces, as the server does
    return builder


@pytest.mark.parametrize("viewer", [STORYTELLER, ANNA])
def test_a_review_extended_piece_by_piece_is_the_review_built_at_once(setup, viewer):
    rng = random.Random(18)
    with SQLiteStore(setup.db) as store:
        for _ in range(examples(3)):
            builder = built_in_pieces(store, setup.session, rng, viewer, "fr")
            assert page.bundle(builder.review()) == page.bundle(rv.build(store, setup.session, viewer, "fr"))


def test_the_first_screen_and_its_pages_add_up_to_the_bundle(setup):
    with SQLiteStore(setup.db) as store:
        builder = built_in_pieces(store, setup.session, random.Random(7))
        whole = page.bundle(rv.build(store, setup.session))
    first = page.first_screen(builder)
    assert first["disputes"] == whole["disputes"] == ["o1.anna+bruno", "c2"]
    assert [c["id"] for c in first["disputed"]] == whole["disputes"]
    assert first["challenges"] == whole["challenges"] and first["items"] == whole["items"]
    assert first["counts"] == {"items": len(whole["items"]), "challenges": len(whole["challenges"]),
                               "disputes": 2}
    for key in ("session", "name", "status", "head", "characters", "scenes", "types", "zone"):
        assert first[key] == whole[key], key
    assert "verification" not in first and "fairness" not in first  # parts of their own


def test_a_long_night_shows_a_first_page_and_the_rest_by_pages(tmp_path):
    db = tmp_path / "long.db"
    met_night(db, "long", 2500, "long night")
    with SQLiteStore(db) as store:
        builder = built_in_pieces(store, "long", random.Random(3))
        whole = page.bundle(rv.build(store, "long"))
        review = builder.review()
    assert len(whole["items"]) > page.FIRST_ITEMS and len(whole["challenges"]) > page.FIRST_CHALLENGES
    first = page.first_screen(builder)
    assert first["items"] == whole["items"][:page.FIRST_ITEMS]
    assert first["challenges"] == whole["challenges"][:page.FIRST_CHALLENGES]
    assert first["disputes"] == whole["disputes"][:page.FIRST_DISPUTES]
    items = list(first["items"])
    while len(items) < first["counts"]["items"]:
        items += page.items_page(review, items[-1]["seq"], 997)
    assert items == whole["items"]
    challenges = []
    while len(challenges) < first["counts"]["challenges"]:
        challenges += page.challenges_page(builder, len(challenges), 301)
    assert challenges == whole["challenges"]


def test_over_http_the_first_screen_follows_the_night_and_stays_for_storytellers(tmp_path):
    db = tmp_path / "served.db"
    met_night(db, "s", 300, "served")
    with served(db) as server:
        from conteur.server.core.auth import Tokens

        with SQLiteStore(db) as store:
            tokens = Tokens(store)
            storyteller = tokens.issue("storyteller", name="st")
            character = sorted(Chronicle(store).state("s").session.characters)[0]
            player = tokens.issue("player", character=character, session="s", name=character)

        def get(path, token=storyteller):
            return httpx.get(f"{server.url}/sessions/s{path}", headers={"Authorization": f"Bearer {token}"},
                             timeout=60)

        before = get("/review/first").json()
        met_night(db, "s", 200, "more of the night")  # another writer on the same file
        first = get("/review/first").json()
        whole = get("/review").json()
        assert first["head"] == whole["head"] > before["head"]
        assert first["items"] == whole["items"][:page.FIRST_ITEMS]
        assert get(f"/review/items?after={whole['items'][9]['seq']}&limit=5").json() == whole["items"][10:15]
        assert get("/review/challenges?offset=3&limit=4").json() == whole["challenges"][3:7]
        for path in ("/review/first", "/review/items", "/review/challenges"):
            assert get(path, player).status_code == 403
        assert get("/review/first").status_code == 200 and httpx.get(
            f"{server.url}/sessions/nowhere/review/first",
            headers={"Authorization": f"Bearer {storyteller}"}).status_code in (403, 404)
