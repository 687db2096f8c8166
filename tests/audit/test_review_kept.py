"""Kept reviews are bounded by the events they hold, not only by their number:
a review holds about 600 bytes per event of its night held whole, so eight
of a long night would outgrow a Pi. The least recently asked goes first, never the one
being asked for; a dropped review is built again from the store, to the same answer."""

from __future__ import annotations

import random

import httpx

from conteur.server.cli.simulate import next_commands, setup_commands
from conteur.server.core.auth import Tokens
from conteur.server.core.service import Chronicle
from conteur.server.store.sqlite import SQLiteStore
from conteur.server.web import http_review
from tests.support.client_support import served


def test_kept_reviews_beyond_the_events_bound_are_dropped_and_built_again_the_same(tmp_path, monkeypatch):
    db = tmp_path / "kept.db"
    rng = random.Random("kept")
    with SQLiteStore(db) as store:
        chronicle = Chronicle(store)
        for actor, command in setup_commands(rng, "met"):
            chronicle.submit("s", command, actor).result()
        for _ in range(150):
            for actor, command in next_commands(rng, "met", chronicle.state("s")):
                chronicle.submit("s", command, actor).result()
        token = Tokens(store).issue("storyteller", name="st")
    with served(db) as server:
        kept = lambda: list(http_review._KEPT[server.app.state.conteur.store])  # noqa: E731

        def first(lang):
            answer = httpx.get(f"{server.url}/sessions/s/review/first", params={"lang": lang},
                               headers={"Authorization": f"Bearer {token}"}, timeout=60)
            assert answer.status_code == 200, answer.text
            return answer.json()

        english = first("en")
        events = english["counts"]["items"]
        assert events > 100
        # room for one review and a half: asking for a second drops the first
        monkeypatch.setattr(http_review, "_KEPT_EVENTS", events + events // 2)
        french = first("fr")
        assert [lang for _, _, lang in kept()] == ["fr"]
        assert first("en") == english  # built again from the store
        assert [lang for _, _, lang in kept()] == ["en"]
        # room for both: both stay, whichever is asked
        monkeypatch.setattr(http_review, "_KEPT_EVENTS", 2 * events)
        assert first("fr") == french and first("en") == english
        assert sorted(lang for _, _, lang in kept()) == ["en", "fr"]
        # below one review: the one asked for is kept all the same
        monkeypatch.setattr(http_review, "_KEPT_EVENTS", 1)
        assert first("fr") == french
        assert [lang for _, _, lang in kept()] == ["fr"]
