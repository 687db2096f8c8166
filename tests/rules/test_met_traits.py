"""MET arithmetic through decide: what a character may declare in traits (MET-3, MET-4,
MET-15), the refusal's rule and its reading of the truth, each on both sides of its bound;
and why every declaration the server checks has an attribute to count traits in (MET-1,
MET-11)."""

from __future__ import annotations

import pytest

from conteur.events.met import BidDeclared, DeclareBid, IssueChallenge, Overbid, OverbidDeclared, Throw
from conteur.events.sheets import MetSheet
from conteur.events.testing import assert_refuses, decide_after
from tests.support.met_support import A6, B7, classic, player, roster, static, thrown, won_on_throw

A, B = player("a"), player("b")


def tie(a=A6, b=B7, **fields) -> list:
    """c1: a classic Physical challenge, round 1 tied on the throw: bids are open."""
    return roster(a=a, b=b) + [classic(**fields)] + thrown("c1", 1, a="rock", b="rock")


def bid(value: int, character="a", abilities=()) -> DeclareBid:
    return DeclareBid(character=character, challenge="c1", round=1, value=value, abilities=abilities)


# ---------------------------------------------------------------- MET-4 cap: twice the attribute


def test_met_4_a_bid_above_twice_the_attribute_is_refused_under_met_4():
    strong = MetSheet(physical=4, abilities={"Melee": 5})  # truth 9, cap 8
    given = tie(a=strong, abilities=("Melee",))
    assert decide_after(given, bid(8), actor=A) == [BidDeclared(challenge="c1", round=1, character="a", value=8)]
    violation = assert_refuses(given=given, when=bid(9), actor=A, code="rule")
    assert violation.rule == "MET-4"
    assert violation.message == "bid 9 is above your cap of 8 (twice your 4 Physical traits) (MET-4)"


def test_met_4_the_cap_is_the_defenders_own_attribute_when_it_resists_with_another():
    # B7 resists a Physical challenge with Social 5: its truth and cap are Social's (5 + Brawl 2,
    # and 10), not Physical 7's (9 and 14)
    given = tie(defender_attribute="social", defender_abilities=("Brawl",)) + [
        BidDeclared(challenge="c1", round=1, character="a", value=4)]
    assert decide_after(given, bid(7, "b"), actor=B)[0] == BidDeclared(challenge="c1", round=1, character="b", value=7)
    violation = assert_refuses(given=given, when=bid(8, "b"), actor=B, code="rule")
    assert (violation.rule, violation.message) == (
        "MET-4", "bid 8 is above your true 7 (Social 5 + Brawl 2): you may declare less than the truth, "
                 "never more (MET-4, MET-15)")
    violation = assert_refuses(given=given, when=bid(11, "b"), actor=B, code="rule")
    assert violation.message == "bid 11 is above your cap of 10 (twice your 5 Social traits) (MET-4)"


# ---------------------------------------------------------------- MET-4, MET-15 truth: never more


def test_met_4_a_bid_above_the_truth_is_refused_under_met_4_with_the_truth_spelled_out():
    sheet = MetSheet(physical=5, abilities={"Melee": 2, "Brawl": 1}, bonus={"physical": -1})  # truth 7, cap 10
    given = tie(a=sheet, abilities=("Melee",))
    assert decide_after(given, bid(7, abilities=("Brawl",)), actor=A) == [
        BidDeclared(challenge="c1", round=1, character="a", value=7, abilities=("Brawl",))]
    violation = assert_refuses(given=given, when=bid(8, abilities=("Brawl",)), actor=A, code="rule")
    assert violation.rule == "MET-4"
    assert violation.message == ("bid 8 is above your true 7 (Physical 5 + Melee 2 + Brawl 1 + bonus -1): "
                                 "you may declare less than the truth, never more (MET-4, MET-15)")


def test_met_4_a_bonus_of_another_attribute_or_of_zero_is_not_in_the_truth():
    sheet = MetSheet(physical=3, bonus={"social": 4, "physical": 0})  # truth 3, cap 6
    given = tie(a=sheet)
    assert decide_after(given, bid(3), actor=A)
    violation = assert_refuses(given=given, when=bid(4), actor=A, code="rule")
    assert violation.message == ("bid 4 is above your true 3 (Physical 3): "
                                 "you may declare less than the truth, never more (MET-4, MET-15)")


def test_met_4_an_overbid_is_a_score_held_to_the_same_truth():
    given = roster(a=A6, b=B7) + [classic()] + won_on_throw("c1", 1, "b", "a")  # A6: Physical 6, Melee 2
    assert decide_after(given, Overbid(character="a", challenge="c1", value=6), actor=A) == [
        OverbidDeclared(challenge="c1", character="a", value=6)]
    violation = assert_refuses(given=given, when=Overbid(character="a", challenge="c1", value=7), actor=A,
                               code="rule")
    assert (violation.rule, violation.message) == (
        "MET-4", "score 7 is above your true 6 (Physical 6): you may declare less than the truth, "
                 "never more (MET-4, MET-15)")


def test_met_4_a_static_bid_counts_the_tested_characters_traits():
    given = roster(a=A6) + [static(difficulty=5)] + thrown("c1", 1, a="rock", storyteller="rock")
    assert decide_after(given, bid(6), actor=A)[0] == BidDeclared(challenge="c1", round=1, character="a", value=6)
    violation = assert_refuses(given=given, when=bid(7), actor=A, code="rule")
    assert violation.rule == "MET-4" and violation.message.startswith("bid 7 is above your true 6 (Physical 6)")


# ---------------------------------------------------------------- MET-3 a bid counts traits: 0 or more


@pytest.mark.parametrize("who, actor, given", [
    ("a", A, tie()),
    # a side without a sheet, declared for by a storyteller, is held to 0 or more too
    ("Ghoul", None, roster(a=A6) + [classic(defender="Ghoul")] + thrown("c1", 1, a="rock", Ghoul="rock")
     + [BidDeclared(challenge="c1", round=1, character="a", value=4)]),
])
def test_met_3_a_bid_of_zero_is_taken_and_minus_one_refused_under_met_3(who, actor, given):
    kwargs = {} if actor is None else {"actor": actor}
    assert decide_after(given, bid(0, who), **kwargs)[0] == BidDeclared(challenge="c1", round=1, character=who, value=0)
    violation = assert_refuses(given=given, when=bid(-1, who), code="invalid", **kwargs)
    assert (violation.rule, violation.message) == ("MET-3", "a bid counts traits: -1 is below 0 (MET-3)")


# ---------------------------------------------------------------- MET-1, MET-11 an attribute to count in


@pytest.mark.parametrize("kind", ["classic", "static"])
def test_met_1_a_challenge_that_takes_bids_names_its_attribute(kind):
    violation = assert_refuses(given=roster(a=A6, b=B7),
                               when=IssueChallenge(character="a", kind=kind, defender="b"), actor=A,
                               code="invalid")
    assert (violation.rule, violation.message) == ("MET-1", "a challenge names Physical, Social or Mental (MET-1)")


@pytest.mark.parametrize("kind, winner", [("simple", "a"), ("complex", "storyteller")])
def test_met_11_a_test_without_traits_settles_its_tie_with_no_bid(kind, winner):
    given = roster(a=A6)
    given += decide_after(given, IssueChallenge(character="a", kind=kind), actor=A)
    given += decide_after(given, Throw(character="a", challenge="c1", round=1, choice="rock"), actor=A)
    tied = decide_after(given, Throw(character="storyteller", challenge="c1", round=1, choice="rock"))
    assert tied[1].winner is None and tied[2].winner == winner and tied[2].by == f"{kind}_tie"
    assert_refuses(given=given + tied, when=bid(0), actor=A)
