"""The review beyond Mind's Eye Theatre: dice rolls told in the record, their faces in
the fairness panel; and an altered database shown as altered, at its first bad event."""

from __future__ import annotations

import sqlite3
from collections import Counter

import httpx
import pytest

from conteur.events.model import STORYTELLER, Actor
from conteur.server.audit import export as ex
from conteur.server.audit import review as rv
from conteur.server.audit import checks
from conteur.server.audit import page
from conteur.server.audit import stories as review_stories
from conteur.server.core.service import Chronicle
from conteur.server.cli.simulate import play
from conteur.server.store.sqlite import SQLiteStore
from tests.support.client_support import make_chronicle, served
from tests.support.review_support import evening, run

CLARA = Actor(role="player", character="clara", name="clara")
JAKE = Actor(role="player", character="jake", name="jake")


def test_v5_rolls_are_sentences_in_the_record_and_faces_in_the_fairness_panel(tmp_path):
    setup = make_chronicle(tmp_path / "c.db")
    with SQLiteStore(setup.db) as store:
        chronicle = Chronicle(store)
        run(chronicle, CLARA, "roll_pool", "nuit", character="clara", attribute="dexterity", skill="stealth",
            difficulty=3)
        run(chronicle, CLARA, "rouse", "nuit", character="clara")
        run(chronicle, JAKE, "roll_action", "action", character="jake", characteristic="science", difficulty=2)
        en = ex.export(store, "nuit", "md").decode()
        fr = ex.export(store, "nuit", "md", lang="fr").decode()
        act = ex.export(store, "action", "md").decode()
        review = rv.build(store, "nuit")
    assert "Clara rolled dexterity 3 + stealth 2: 5 dice (2 Hunger), difficulty 3:" in en
    assert "Clara made a Rouse check:" in en
    assert "Clara a lancé dexterity 3 + stealth 2 : 5 dés (dont 2 de Soif), difficulté 3 :" in fr
    assert "Jake rolled Test (science, 2): " in act and "PS against difficulty 2" in act
    (d10,) = checks.fairness(review).dice
    faces = Counter(str(r.face) for i in review.items for r in getattr(i.event, "draws", ()) or ())
    assert d10.label == "d10" and d10.total == 6  # five pool dice and the Rouse die
    assert dict(zip(d10.faces, d10.counts)) == {str(f): faces[str(f)] for f in range(1, 11)}


@pytest.mark.parametrize("ruleset, sides", [("v5", 10), ("action", 8)])
def test_the_fairness_panel_counts_every_draw_of_a_simulated_evening(tmp_path, ruleset, sides):
    with SQLiteStore(tmp_path / "sim.db") as store:
        play(Chronicle(store), "sim", events=400, seed=3, ruleset=ruleset)
        review = rv.build(store, "sim")
    draws = Counter((r.sides, r.face) for i in review.items for r in getattr(i.event, "draws", ()) or ())
    panel = {b.label: b for b in checks.fairness(review).dice}
    for (die, face), n in draws.items():
        bars = panel[checks.DIE_LABELS.get(die, f"d{die}")]
        assert bars.counts[face - 1] == n
    assert sum(b.total for b in panel.values()) == sum(draws.values()) > 0
    assert any(label.startswith(f"d{sides}") for label in panel)


def test_an_altered_database_is_shown_altered_at_its_first_bad_event(tmp_path):
    setup = evening(tmp_path / "c.db")
    conn = sqlite3.connect(setup.db)
    seq = conn.execute("SELECT seq FROM events WHERE type='met.bid_declared' ORDER BY seq LIMIT 1").fetchone()[0]
    conn.executescript("DROP TRIGGER events_no_update;")
    # the bytes stay a BLOB, as a careful forger would leave them
    conn.execute("UPDATE events SET data = CAST(replace(CAST(data AS TEXT), '\"value\":6', '\"value\":9') AS BLOB) "
                 "WHERE seq = ?", (seq,))
    conn.commit()
    conn.close()
    with served(setup.db) as server:
        headers = {"Authorization": f"Bearer {setup.storyteller}"}
        verdict = httpx.get(f"{server.url}/sessions/{setup.session}/review/verify", headers=headers).json()
        record = httpx.get(f"{server.url}/sessions/{setup.session}/export", params={"format": "md"},
                           headers=headers).text
    assert verdict["ok"] is False and verdict["first_bad_seq"] == seq
    # the record is CommonMark: its "#" is escaped, so it cannot start a heading
    assert f"NOT VERIFIED: the chain breaks at event \\#{seq}" in record


def test_an_empty_session_has_an_empty_review(tmp_path):
    setup = make_chronicle(tmp_path / "c.db")
    with SQLiteStore(setup.db) as store:
        review = rv.build(store, "nobody")
    assert review.items == [] and review_stories.stories(review) == [] and review_stories.disputes(review) == []
    assert checks.fairness(review).throws is None
    assert page.bundle(review)["verification"]["ok"] is True


def test_storyteller_static_throw_uses_the_server_d3(tmp_path):
    setup = make_chronicle(tmp_path / "c.db")
    with SQLiteStore(setup.db) as store:
        chronicle = Chronicle(store)
        for _ in range(3):
            n = chronicle.state(setup.session).met.counter + 1
            run(chronicle, STORYTELLER, "challenge", character="anna", kind="simple")
            run(chronicle, Actor(role="player", character="anna", name="anna"), "throw", character="anna",
                challenge=f"c{n}", round=1, choice="rock")
            run(chronicle, STORYTELLER, "throw", character="storyteller", challenge=f"c{n}", round=1)
        review = rv.build(store, setup.session)
    (d3,) = checks.fairness(review).dice
    assert d3.total == 3 and d3.label == "d3 (server throws)"


def test_both_languages_have_every_sentence():
    from conteur.events.narrate import T

    assert set(T["en"]) == set(T["fr"])


@pytest.mark.parametrize("lang", ["en", "fr"])
def test_every_event_of_a_simulated_evening_is_told_as_a_sentence(tmp_path, lang):
    with SQLiteStore(tmp_path / "sim.db") as store:
        summary = play(Chronicle(store), "sim", events=600, seed=11, ruleset="mixed")
        told = set()
        for sid in summary.sessions:
            for item in rv.build(store, sid, lang=lang).items:
                assert item.text and item.text != item.type, item
                assert "{" not in item.text, item.text  # no template left unfilled
                told.add(item.type)
    assert {"met.challenge_issued", "v5.pool_rolled", "action.rolled", "command_rejected"} <= told
