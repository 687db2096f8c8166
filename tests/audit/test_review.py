"""Dispute review: who won challenge N and why, who saw what when, the
timeline's filters, disputes first, the scene stepped event by event, the chain's
verification, the fairness panel; over HTTP for storytellers only."""

from __future__ import annotations

import math
from collections import Counter

import httpx
import msgspec
import pytest

from conteur.events import met, session
from conteur.events.model import STORYTELLER, Actor
from conteur.server.audit import review as rv
from conteur.server.audit import timeline as review_timeline
from conteur.server.audit import checks
from conteur.server.audit import page
from conteur.server.audit import scenes as review_scenes
from conteur.server.audit import stories
from conteur.server.core.service import Chronicle
from conteur.server.store.sqlite import SQLiteStore
from tests.support.client_support import make_chronicle, served
from tests.support.review_support import ANNA, BRUNO, evening, run


@pytest.fixture(scope="module")
def setup(tmp_path_factory):
    return evening(tmp_path_factory.mktemp("review") / "chronicle.db")


@pytest.fixture(scope="module")
def review(setup):
    with SQLiteStore(setup.db) as store:
        return rv.build(store, setup.session)


def test_who_won_challenge_1_and_why(review):
    story = stories.challenge_story(review, "c1")
    assert (story.winner, story.loser, story.status, story.reason) == ("bruno", "anna", "resolved", "accepted")
    assert story.sentence == "Anna challenged Bruno (Physical): tie, bids 6 to 7, Bruno won, Anna accepted"
    assert [s.type for s in story.steps] == [
        "met.challenge_issued", "met.throw_committed", "met.throw_committed", "met.throws_revealed",
        "met.bid_declared", "met.bid_declared", "met.bids_compared", "met.round_won", "met.challenge_resolved",
    ]


def test_met_2_who_saw_what_when_a_sealed_throw_then_its_reveal(review):
    steps = stories.challenge_story(review, "c1").steps
    anna_throw, bruno_throw, revealed = steps[1], steps[2], steps[3]
    assert anna_throw.seen.whole == ["storytellers", "Anna"]
    assert anna_throw.seen.sealed == ["Bruno", "observers"]
    assert bruno_throw.seen.whole == ["storytellers", "Bruno"]
    assert revealed.seen.whole == ["storytellers", "Anna", "Bruno", "observers"]
    assert revealed.seq > bruno_throw.seq > anna_throw.seq


def test_met_16_an_overruled_challenge_tells_the_overrule_and_its_reason(review):
    story = stories.challenge_story(review, "c2")
    assert (story.winner, story.reason, story.disputed) == ("bruno", "overruled", True)
    assert story.sentence.endswith("a storyteller overruled: Bruno won (Anna's knife was out of reach)")
    assert "Bruno overbid (7 to 6) and lost, Bruno owes Anna its next tie" in story.sentence


def test_an_offline_challenge_in_the_review_recorded_disputed_ruled(review):
    story = stories.challenge_story(review, "o1.anna+bruno")
    assert story.kind == "offline"
    assert (story.status, story.winner, story.loser, story.reason) == ("ruled", "bruno", "anna", "Bruno's bid was higher")
    assert [s.type for s in story.steps] == ["offline.recorded", "offline.disputed", "offline.ruled"]
    assert story.steps[0].seen.whole == ["storytellers", "Anna", "Bruno"]
    assert story.steps[0].seen.hidden == ["observers"]
    assert "2026-11-29 21:40 by the device's clock" in story.sentence  # the recording device's own time
    assert stories.challenge_story(review, "o2.anna+bruno").status == "confirmed"


def test_a_disputed_offline_record_has_both_claims_and_no_winner_until_ruled(tmp_path):
    # a disputed record is never listed with the recorder's winner as the winner
    setup = make_chronicle(tmp_path / "c.db")
    with SQLiteStore(setup.db) as store:
        chronicle = Chronicle(store)
        run(chronicle, ANNA, "record_offline_challenge", character="anna", opponent="bruno", winner="anna")
        run(chronicle, BRUNO, "dispute", character="bruno", record="o1.anna+bruno", reason="scissors", winner="bruno")
        disputed = stories.challenge_story(rv.build(store, setup.session), "o1.anna+bruno")
        bundled = {c["id"]: c for c in page.bundle(rv.build(store, setup.session))["challenges"]}["o1.anna+bruno"]
        run(chronicle, STORYTELLER, "rule_offline", record="o1.anna+bruno", winner="anna", reason="seen")
        ruled = stories.challenge_story(rv.build(store, setup.session), "o1.anna+bruno")
    assert (disputed.status, disputed.winner, disputed.loser) == ("disputed", None, None)
    assert [(c.by, c.kind, c.winner, c.reason) for c in disputed.claims] == [
        ("anna", "recorded", "anna", ""), ("bruno", "disputed", "bruno", "scissors")]
    assert bundled["winner"] is None and [c["winner"] for c in bundled["claims"]] == ["anna", "bruno"]
    # the ruling is the outcome; the claims stay as they were said
    assert (ruled.status, ruled.winner, ruled.loser, ruled.reason) == ("ruled", "anna", "bruno", "seen")
    assert [c.winner for c in ruled.claims] == ["anna", "bruno"]


def test_an_unanswered_record_is_its_recorders_word_and_a_confirmed_one_has_a_winner(review, tmp_path):
    confirmed = stories.challenge_story(review, "o2.anna+bruno")
    assert (confirmed.winner, confirmed.loser) == ("anna", "bruno")
    assert [(c.by, c.kind, c.winner) for c in confirmed.claims] == [("bruno", "recorded", "anna"),
                                                                    ("anna", "confirmed", "anna")]
    setup = make_chronicle(tmp_path / "c.db")
    with SQLiteStore(setup.db) as store:
        run(Chronicle(store), ANNA, "record_offline_challenge", character="anna", opponent="bruno", winner="anna")
        waiting = stories.challenge_story(rv.build(store, setup.session), "o1.anna+bruno")
    assert (waiting.status, waiting.winner) == ("recorded", None)
    assert [(c.by, c.winner) for c in waiting.claims] == [("anna", "anna")]


def test_disputed_and_ruled_items_come_first(review):
    assert [s.id for s in stories.disputes(review)] == ["o1.anna+bruno", "c2"]


def test_a_dispute_not_yet_ruled_comes_before_everything(tmp_path):
    setup = make_chronicle(tmp_path / "c.db")
    with SQLiteStore(setup.db) as store:
        chronicle = Chronicle(store)
        for record, (winner, answer) in enumerate((("anna", "confirm"), ("anna", "dispute"), ("bruno", None)), 1):
            run(chronicle, ANNA, "record_offline_challenge", character="anna", opponent="bruno", winner=winner)
            if answer:
                run(chronicle, BRUNO, answer, character="bruno", record=f"o{record}.anna+bruno")
        first = stories.disputes(rv.build(store, setup.session))
    # disputed first, then the one waiting for Bruno's answer; the confirmed one is no dispute
    assert [(s.id, s.status) for s in first] == [("o2.anna+bruno", "disputed"), ("o3.anna+bruno", "recorded")]


@pytest.mark.parametrize("filters, expected", [
    ({"challenge": "c1"}, {"c1"}),
    ({"type": "offline"}, {"o1.anna+bruno", "o2.anna+bruno"}),
    ({"type": "met.challenge_overruled"}, {"c2"}),
])
def test_the_timeline_filters_by_challenge_and_type(review, filters, expected):
    items = review_timeline.timeline(review, **filters)
    assert items and {i.challenge for i in items} == expected


def test_the_timeline_filters_by_character_and_scene(review):
    annas = review_timeline.timeline(review, character="anna")
    assert annas and all("anna" in i.characters for i in annas)
    assert any(i.type == "met.challenge_issued" and i.challenge == "c3" for i in annas)
    hall = review_timeline.timeline(review, scene="hall")
    # a Time Out of the whole session stops the hall too: it stays in, in place
    assert "session.time_out_called" in [i.type for i in hall]
    assert all(i.scene == "hall" or i.scene is None for i in hall)
    assert review_timeline.timeline(review, scene="cellar") == [i for i in hall if i.scene is None]


def test_time_5_the_slider_steps_the_scene_through_the_time_out(review):
    steps = review_scenes.scene_steps(review, "hall")
    assert [s.seq for s in steps] == sorted(s.seq for s in steps)
    by_text = {s.text: s for s in steps}
    frozen = by_text["TIME OUT for everyone."]
    resumed = by_text["Play resumed for everyone."]
    assert frozen.frozen and not resumed.frozen
    assert {c["name"] for c in frozen.characters} == {"Anna", "Bruno"}
    # the state at the step of Anna's throw in c1: sealed in, not yet revealed
    throw = next(s for s in steps if s.text == "c1: Anna threw rock (round 1).")
    c1 = next(c for c in throw.challenges if c["id"] == "c1")
    assert c1["status"] == "throwing" and c1["throws"] == {"Anna": "rock"}


def test_the_scene_at_a_seq_is_its_step_at_or_before_it(review):
    steps = review_scenes.scene_steps(review, "hall")
    index = review_scenes.scene_index(review, "hall")
    assert [s.seq for s in index] == [s.seq for s in steps]
    for step in steps[::5]:
        assert review_scenes.scene_at(review, "hall", step.seq) == step
    assert review_scenes.scene_at(review, "hall", 0) is None


def test_a_players_slider_holds_no_sealed_throw(setup):
    with SQLiteStore(setup.db) as store:
        bruno = rv.build(store, setup.session, Actor(role="player", character="bruno"))
    throw = next(s for s in review_scenes.scene_steps(bruno, "hall") if s.text == "c1: Anna threw (sealed) (round 1).")
    assert next(c for c in throw.challenges if c["id"] == "c1")["throws"] == {"Anna": None}


def test_the_state_at_a_seq_is_the_fold_up_to_it(review):
    freeze = next(i for i in review.items if i.type == "session.time_out_called")
    assert review_scenes.state_at(review, freeze.seq).session.frozen
    assert not review_scenes.state_at(review, freeze.seq - 1).session.frozen


def test_the_chain_is_verified_and_a_forged_row_is_named(review):
    verdict = checks.verify(review.rows)
    assert verdict.ok and verdict.closed and verdict.draws_checked == 1
    rows = list(review.rows)
    bid = next(i for i, r in enumerate(rows) if r.type == "met.bid_declared")
    rows[bid] = msgspec.structs.replace(rows[bid], data=rows[bid].data.replace(b'"value":6', b'"value":5'))
    verdict = checks.verify(rows)
    assert not verdict.ok and verdict.first_bad_seq == rows[bid].seq


def test_fairness_counts_every_throw_and_die_face(review):
    f = checks.fairness(review)
    throws = Counter()
    for i in review.items:
        if isinstance(i.event, met.ThrowsRevealed):
            throws.update(i.event.throws.values())
    assert dict(zip(f.throws.faces, f.throws.counts)) == {k: throws[k] for k in ("rock", "paper", "scissors")}
    assert f.throws.expected == f.throws.total / 3
    (d3,) = f.dice
    assert d3.faces == ["1", "2", "3"] and d3.total == 1


def test_fairness_tallies_challenges_won_and_lost_per_character(review):
    tallies = {t.character: t for t in checks.fairness(review).tallies}
    # c1 and c2 (overruled) to Bruno; c3 against the storyteller counts for Anna alone
    assert tallies["bruno"].won == 2 and tallies["bruno"].lost == 0
    assert tallies["anna"].won + tallies["anna"].lost == 3 and tallies["anna"].lost >= 2
    # offline: o1 ruled for Bruno, o2 confirmed for Anna
    assert (tallies["anna"].offline_won, tallies["anna"].offline_lost) == (1, 1)
    assert (tallies["bruno"].offline_won, tallies["bruno"].offline_lost) == (1, 1)


def test_the_p_value_matches_the_chi_square_table():
    # 5.991 is the 0.95 quantile of chi-square with 2 degrees of freedom
    assert math.isclose(checks.p_value(5.991, 2), 0.05, abs_tol=0.003)
    assert math.isclose(checks.p_value(16.919, 9), 0.05, abs_tol=0.003)
    assert checks.bars("d6", list("123456"), Counter({"1": 1})).p_value is None  # too few to judge


def test_over_http_the_review_is_for_storytellers(setup):
    with served(setup.db) as server:
        def get(path, token):
            return httpx.get(f"{server.url}/sessions/{setup.session}{path}", headers={"Authorization": f"Bearer {token}"})

        bundle = get("/review?lang=fr", setup.storyteller).json()
        assert bundle["disputes"] == ["o1.anna+bruno", "c2"] and bundle["verification"]["ok"]
        c1 = next(c for c in bundle["challenges"] if c["id"] == "c1")
        assert c1["sentence"].startswith("Anna a défié Bruno (Physique) : égalité")
        story = get("/review/challenges/c2", setup.storyteller).json()
        assert story["winner"] == "bruno" and story["reason"] == "overruled"
        assert get("/review/challenges/c99", setup.storyteller).status_code == 404
        timeline = get("/review/timeline?type=offline&character=anna", setup.storyteller).json()
        assert {i["challenge"] for i in timeline} == {"o1.anna+bruno", "o2.anna+bruno"}
        steps = get("/review/scenes/hall/steps", setup.storyteller).json()
        freeze = next(s["seq"] for s in steps if s["text"] == "TIME OUT for everyone.")
        assert get(f"/review/scenes/hall/state?at={freeze}", setup.storyteller).json()["frozen"] is True
        assert get(f"/review/scenes/hall/state?at={freeze + 2}", setup.storyteller).json()["frozen"] is False
        assert get("/review/scenes/cellar/steps", setup.storyteller).status_code == 404
        assert get("/review/fairness", setup.storyteller).json()["throws"]["total"] >= 6
        for path in ("/review", "/review/challenges/c1", "/review/timeline", "/review/fairness"):
            assert get(path, setup.players["anna"]).status_code == 403
        # the chain's verdict is no secret: any token of the session may ask
        assert get("/review/verify", setup.players["anna"]).json()["ok"] is True
        assert httpx.get(f"{server.url}/sessions/{setup.session}/review").status_code == 401


def test_the_review_bundle_travels_gzipped_to_a_browser_that_accepts_it(setup):
    # a big night's bundle is megabytes of JSON over a venue's hotspot
    with served(setup.db) as server:
        url = f"{server.url}/sessions/{setup.session}/review"
        auth = {"Authorization": f"Bearer {setup.storyteller}"}
        plain = httpx.get(url, headers={**auth, "Accept-Encoding": "identity"})
        packed = httpx.get(url, headers={**auth, "Accept-Encoding": "gzip"})
        assert plain.headers.get("content-encoding") is None
        assert packed.headers["content-encoding"] == "gzip"
        assert packed.json() == plain.json()  # httpx inflates it
        # streamed by parts (no Content-Length): the bytes on the wire are counted
        with httpx.stream("GET", url, headers={**auth, "Accept-Encoding": "gzip"}) as answer:
            wire = sum(len(part) for part in answer.iter_raw())
        assert wire < len(plain.content) / 3


def test_session_events_of_no_scene_stay_out_of_the_scene_of_others(review):
    opened = next(i for i in review.items if isinstance(i.event, session.SceneOpened))
    assert opened.scene == "hall"


@pytest.mark.parametrize("outcome, won, lost", [("initiator", "jaleel", "nella"), ("defender", "nella", "jaleel"),
                                                ("cancelled", None, None)])
def test_fairness_counts_a_contest_a_storyteller_settled_like_a_rolled_one(tmp_path, outcome, won, lost):
    """ACT-12: a settled contest has a winner and a loser in the tallies; a cancelled one
    has neither."""
    from conteur.events.action import OppositionRuled
    from conteur.server.store.sqlite import append_events
    from tests.support.action_support import ROSTER
    from tests.support.action_support import jaleel_against_nella

    winner = {"initiator": "jaleel", "defender": "nella"}.get(outcome)
    ruled = OppositionRuled(roll="a1", character="jaleel", opponent="nella", outcome=outcome,
                            winner=winner, initiator_ps=1)
    db = tmp_path / "act.db"
    with SQLiteStore(db) as store:
        append_events(store, "act", ROSTER + [*jaleel_against_nella(), ruled])
        tallies = {t.character: t for t in checks.fairness(rv.build(store, "act")).tallies}
    counts = {c: (t.contests_won, t.contests_lost) for c, t in tallies.items() if c in ("jaleel", "nella")}
    if won is None:
        assert counts == {"jaleel": (0, 0), "nella": (0, 0)}
    else:
        assert counts[won] == (1, 0) and counts[lost] == (0, 1)
