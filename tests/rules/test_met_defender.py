"""MET-3: each side bids its own attribute plus its own abilities that
apply; the defender declares them with its bid, checked against its sheet (MET-15).
TIME-6 (item 14): no challenge against an out-of-game character, a storyteller's neither."""

from __future__ import annotations

import msgspec
import pytest

from conteur.events import game, views
from conteur.events.met import (
    BidDeclared,
    BidsCompared,
    DeclareBid,
    IssueChallenge,
    Overbid,
    OverbidDeclared,
    RoundWon,
)
from conteur.events.model import STORYTELLER
from conteur.events.session import WentOutOfGame
from conteur.events.sheets import MetSheet
from conteur.events.testing import assert_refuses, decide_after
from conteur.server.store.sqlite import decode_event, encode_event
from tests.support.met_support import classic, player, roster, thrown, won_on_throw

A = MetSheet(physical=6, social=3, mental=4, abilities={"Melee": 2})
B = MetSheet(physical=7, social=5, mental=5, abilities={"Brawl": 2, "Dodge": 1})
C = MetSheet(physical=7, social=5, mental=5, abilities={"Dodge": 1})  # no Brawl
TIED = classic(abilities=("Melee",))
A_BID = BidDeclared(challenge="c1", round=1, character="a", value=8)  # Physical 6 + Melee 2


def tie(b: MetSheet) -> list:
    return roster(a=A, b=b) + [TIED] + thrown("c1", 1, a="rock", b="rock") + [A_BID]


def test_met_3_a_defender_with_physical_7_and_brawl_2_bids_9_and_wins():
    bid = DeclareBid(character="b", challenge="c1", round=1, value=9, abilities=("Brawl",))
    events = decide_after(tie(B), bid, actor=player("b"))
    assert events == [
        BidDeclared(challenge="c1", round=1, character="b", value=9, abilities=("Brawl",)),
        BidsCompared(challenge="c1", round=1, winner="b"),
        RoundWon(challenge="c1", round=1, winner="b", loser="a", by="bid"),
    ]


def test_met_3_without_declaring_brawl_the_defender_s_true_score_is_7():
    bid = DeclareBid(character="b", challenge="c1", round=1, value=9)
    assert_refuses(given=tie(B), when=bid, actor=player("b"), match="above your true 7")


def test_met_15_a_defender_without_brawl_cannot_declare_it():
    bid = DeclareBid(character="b", challenge="c1", round=1, value=9, abilities=("Brawl",))
    refused = assert_refuses(given=tie(C), when=bid, actor=player("b"), code="invalid")
    assert "Brawl: not an ability on B's sheet" in refused.message and "Dodge" in refused.message


def test_met_3_the_initiator_no_longer_names_the_defender_s_abilities():
    given = roster(a=A, b=B)
    command = IssueChallenge(character="a", defender="b", attribute="physical", defender_abilities=("Brawl",))
    assert_refuses(given=given, when=command, actor=player("a"), code="invalid", match="its own abilities")


def test_met_13_the_overbid_and_its_answer_carry_each_side_s_own_abilities():
    # Bruno lost on the throw: he overbids with his Brawl; Anna answers with her Melee
    given = roster(a=A, b=B) + [classic()] + won_on_throw("c1", 1, "a", "b")
    overbid = Overbid(character="b", challenge="c1", value=9, abilities=("Brawl",))
    events = decide_after(given, overbid, actor=player("b"))
    assert events == [OverbidDeclared(challenge="c1", character="b", value=9, abilities=("Brawl",))]
    answer = DeclareBid(character="a", challenge="c1", round=1, value=8, abilities=("Melee",))
    settled = decide_after(given + events, answer, actor=player("a"))
    assert settled[0] == BidDeclared(challenge="c1", round=1, character="a", value=8, overbid=True,
                                     abilities=("Melee",))


def test_the_declared_abilities_are_sealed_like_the_value():
    # which abilities a side holds is its sheet's secret (MET-3): others see neither
    seen = views.view(BidDeclared(challenge="c1", round=1, character="b", value=9, abilities=("Brawl",)),
                      player("a"))
    assert seen is not None and seen.value is None and seen.abilities == ()


def test_met_13_an_overbid_s_score_and_abilities_are_sealed_from_the_others():
    # the loser announces its score to the storyteller (MET-13): its opponent learns only that an overbid is in
    overbid = OverbidDeclared(challenge="c1", character="a", value=8, abilities=("Melee",))
    assert views.view(overbid, player("b")) == OverbidDeclared(challenge="c1", character="a")
    assert views.view(overbid, player("a")) == overbid


def test_a_bid_stored_before_abilities_existed_still_decodes():
    old = msgspec.json.encode({"type": "met.bid_declared", "character": "b", "challenge": "c1", "round": 1,
                               "value": 9})
    assert decode_event(old) == BidDeclared(challenge="c1", round=1, character="b", value=9)
    assert decode_event(encode_event(A_BID)) == A_BID


@pytest.mark.parametrize("out", ["b", "a"])
def test_time_6_a_storyteller_cannot_challenge_with_or_against_an_out_of_game_character(out):
    given = roster(a=A, b=B) + [WentOutOfGame(character=out)]
    command = IssueChallenge(character="a", defender="b", attribute="physical")
    refused = assert_refuses(given=given, when=command, actor=STORYTELLER, code="out_of_game")
    assert f"{out.upper()} is out of game" in refused.message and "TIME-6" in refused.message


def test_time_6_a_storyteller_s_static_test_against_an_out_of_game_character_is_refused():
    given = roster(a=A, b=B) + [WentOutOfGame(character="b")]
    trap = IssueChallenge(character="storyteller", kind="static", defender="b", attribute="mental", difficulty=4)
    assert_refuses(given=given, when=trap, actor=STORYTELLER, code="out_of_game")
    state = game.fold(roster(a=A, b=B))
    assert game.decide(state, trap, None, actor=STORYTELLER)  # in game: the same trap is set
