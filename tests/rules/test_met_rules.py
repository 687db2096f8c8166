"""Mind's Eye Theatre's numeric rules on both sides of each boundary, through ``decide``.

Each boundary is the number a rule text names (4 traits more for an overbid, twice the
attribute for a bid, the difficulty for a static tie, 0 traits for an automatic loss, one
retest or two with Lucky) and the number beside it: a rule that moved by one fails here.
"""

from __future__ import annotations

import pytest

from conteur.events import game
from conteur.events.met import (
    Accept,
    BidDeclared,
    BidsCompared,
    CancelChallenge,
    ChallengeCancelled,
    ChallengeIssued,
    ChallengeResolved,
    CloseWindow,
    Concede,
    DeclareBid,
    GroupChallengeIssued,
    IssueChallenge,
    MetOptions,
    Overbid,
    OverbidDeclared,
    OverbidSettled,
    Overrule,
    PAGE,
    Retest,
    RetestTaken,
    RoundStarted,
    RoundWon,
    Throw,
    ThrowCommitted,
    TieDebtIncurred,
    initiative_order,
)
from conteur.events.model import STORYTELLER, ScriptedDraws
from conteur.events.session import CharacterAdded, SceneJoined, SceneOpened, TimeOutCalled
from conteur.events.sheets import MetSheet, V5Sheet
from conteur.events.testing import assert_refuses, decide_after
from tests.support.met_support import A6, B7, classic, player, roster, static, thrown, won_on_throw

A, B = player("a"), player("b")


def lost_on_the_throw(a=A6, b=B7) -> list:
    """c1: b took round 1 on the throw; a, the loser, may overbid."""
    return roster(a=a, b=b) + [classic()] + won_on_throw("c1", 1, "b", "a")


# ---------------------------------------------------------------- MET-13 overbid: 4 traits or more


def overbid_answered(overbid: int, answer: int) -> list:
    given = lost_on_the_throw() + decide_after(
        lost_on_the_throw(), Overbid(character="a", challenge="c1", value=overbid), actor=A)
    return decide_after(given, DeclareBid(character="b", challenge="c1", round=1, value=answer), actor=B)


@pytest.mark.parametrize("overbid, answer", [(6, 2), (5, 1), (4, 0)])
def test_met_13_an_overbid_exactly_four_traits_above_gets_its_retest(overbid, answer):
    assert overbid_answered(overbid, answer) == [
        BidDeclared(challenge="c1", round=1, character="b", value=answer, overbid=True),
        OverbidSettled(challenge="c1", character="a", opponent="b", granted=True),
        RoundStarted(challenge="c1", round=2, test=1, reason="overbid"),
    ]


@pytest.mark.parametrize("overbid, answer", [(6, 3), (5, 2), (3, 0)])
def test_met_13_an_overbid_three_traits_above_loses_and_owes_the_next_tie(overbid, answer):
    assert overbid_answered(overbid, answer) == [
        BidDeclared(challenge="c1", round=1, character="b", value=answer, overbid=True),
        OverbidSettled(challenge="c1", character="a", opponent="b", granted=False),
        TieDebtIncurred(debtor="a", creditor="b", challenge="c1"),
        ChallengeResolved(challenge="c1", winner="b", loser="a", reason="overbid_failed"),
    ]


def test_met_13_an_overbid_five_above_is_granted_and_an_equal_score_is_not():
    assert overbid_answered(6, 1)[1].granted is True
    assert overbid_answered(6, 6)[1].granted is False
    assert overbid_answered(2, 6)[1].granted is False


def test_met_13_the_winner_answers_within_its_own_cap_and_truth():
    given = lost_on_the_throw() + [OverbidDeclared(challenge="c1", character="a", value=6)]
    # B7: Physical 7, no ability named: its truth is 7, its cap 14
    assert decide_after(given, DeclareBid(character="b", challenge="c1", round=1, value=7), actor=B)[1].granted is False
    assert_refuses(given=given, when=DeclareBid(character="b", challenge="c1", round=1, value=8), actor=B,
                   match="above your true 7")
    assert_refuses(given=given, when=DeclareBid(character="b", challenge="c1", round=1, value=-1), actor=B,
                   match="below 0")
    assert_refuses(given=given, when=DeclareBid(character="a", challenge="c1", round=1, value=3), actor=A,
                   match="the winner answers the overbid")


def test_met_13_an_overbid_is_open_to_the_loser_of_a_classic_throw_only():
    assert_refuses(given=lost_on_the_throw(), when=Overbid(character="b", challenge="c1", value=3), actor=B,
                   match="only the loser may overbid")
    given = roster(a=A6) + [static()] + won_on_throw("c1", 1, "storyteller", "a")
    assert_refuses(given=given, when=Overbid(character="a", challenge="c1", value=3), actor=A,
                   match="classic challenges only")


def test_met_13_an_overbid_counts_declared_abilities_up_to_the_truth():
    given = lost_on_the_throw()
    assert decide_after(given, Overbid(character="a", challenge="c1", value=8, abilities=("Melee",)), actor=A) == [
        OverbidDeclared(challenge="c1", character="a", value=8, abilities=("Melee",))]
    assert_refuses(given=given, when=Overbid(character="a", challenge="c1", value=7), actor=A,
                   match="above your true 6")
    assert_refuses(given=given, when=Overbid(character="a", challenge="c1", value=-1), actor=A, match="below 0")


# ---------------------------------------------------------------- MET-4 cap and truth


STRONG = MetSheet(physical=6, abilities={"Melee": 5}, bonus={"physical": 4})  # truth 15, cap 12


def tie(a=A6, b=B7, **fields) -> list:
    return roster(a=a, b=b) + [classic(**fields)] + thrown("c1", 1, a="rock", b="rock")


def test_met_4_a_bid_of_exactly_twice_the_attribute_is_taken_one_more_is_refused():
    given = tie(a=STRONG, abilities=("Melee",))
    assert decide_after(given, DeclareBid(character="a", challenge="c1", round=1, value=12), actor=A) == [
        BidDeclared(challenge="c1", round=1, character="a", value=12)]
    violation = assert_refuses(given=given, when=DeclareBid(character="a", challenge="c1", round=1, value=13),
                               actor=A, code="rule")
    assert violation.message == "bid 13 is above your cap of 12 (twice your 6 Physical traits) (MET-4)"


def test_met_4_a_bid_of_exactly_the_truth_is_taken_one_more_is_refused():
    given = tie(abilities=("Melee",))  # A6: Physical 6 + Melee 2
    assert decide_after(given, DeclareBid(character="a", challenge="c1", round=1, value=8), actor=A)
    assert_refuses(given=given, when=DeclareBid(character="a", challenge="c1", round=1, value=9), actor=A,
                   match="above your true 8 (Physical 6 + Melee 2)")


def test_met_4_the_truth_counts_the_bonus_and_the_cap_holds_over_it():
    boosted = MetSheet(physical=3, bonus={"physical": 2})  # truth 5, cap 6
    given = tie(a=boosted)
    assert decide_after(given, DeclareBid(character="a", challenge="c1", round=1, value=5), actor=A)
    assert_refuses(given=given, when=DeclareBid(character="a", challenge="c1", round=1, value=6), actor=A,
                   match="true 5 (Physical 3 + bonus +2)")
    huge = MetSheet(physical=3, bonus={"physical": 9})  # truth 12, cap 6
    assert_refuses(given=tie(a=huge), when=DeclareBid(character="a", challenge="c1", round=1, value=7), actor=A,
                   match="cap of 6")


def test_met_3_a_bid_of_zero_is_taken_and_below_zero_refused():
    assert decide_after(tie(), DeclareBid(character="a", challenge="c1", round=1, value=0), actor=A)
    assert_refuses(given=tie(), when=DeclareBid(character="a", challenge="c1", round=1, value=-1), actor=A,
                   code="invalid", match="below 0")
    # a storyteller declaring for a side without a sheet is held to 0 or more too
    given = roster(a=A6) + [classic(defender="Ghoul")] + thrown("c1", 1, a="rock", Ghoul="rock") + [
        BidDeclared(challenge="c1", round=1, character="a", value=4)]
    assert_refuses(given=given, when=DeclareBid(character="Ghoul", challenge="c1", round=1, value=-1),
                   code="invalid", match="below 0")
    assert decide_after(given, DeclareBid(character="Ghoul", challenge="c1", round=1, value=0))


def test_met_3_an_ability_not_on_the_sheet_is_refused_by_name():
    assert_refuses(given=tie(), when=DeclareBid(character="a", challenge="c1", round=1, value=6, abilities=("Brawl",)),
                   actor=A, match="Brawl: not an ability on A's sheet (abilities held: Melee)")


# ---------------------------------------------------------------- MET-3 bids


def bids(a: int, b: int) -> list:
    given = tie() + [BidDeclared(challenge="c1", round=1, character="a", value=a)]
    return decide_after(given, DeclareBid(character="b", challenge="c1", round=1, value=b), actor=B)[1:]


def test_met_3_one_trait_more_wins_the_tie_either_way():
    assert bids(5, 6)[:2] == [BidsCompared(challenge="c1", round=1, winner="b"),
                              RoundWon(challenge="c1", round=1, winner="b", loser="a", by="bid")]
    assert bids(6, 5)[:2] == [BidsCompared(challenge="c1", round=1, winner="a"),
                              RoundWon(challenge="c1", round=1, winner="a", loser="b", by="bid")]


def test_met_3_equal_bids_start_a_new_round_of_the_same_challenge():
    assert bids(6, 6) == [BidsCompared(challenge="c1", round=1),
                          RoundStarted(challenge="c1", round=2, test=1, reason="equal_bids")]


def test_met_3_the_defender_bids_after_the_initiator_and_once():
    assert_refuses(given=tie(), when=DeclareBid(character="b", challenge="c1", round=1, value=5), actor=B,
                   match="initiator declares its traits first")
    given = tie() + [BidDeclared(challenge="c1", round=1, character="a", value=5)]
    assert_refuses(given=given, when=DeclareBid(character="a", challenge="c1", round=1, value=4), actor=A,
                   match="already declared")
    assert_refuses(given=given, when=DeclareBid(character="b", challenge="c1", round=2, value=4), actor=B,
                   match="at round 1, not 2")


# ---------------------------------------------------------------- MET-5 zero traits


@pytest.mark.parametrize("physical, loses", [(1, False), (0, True), (-1, True)])
def test_met_5_zero_traits_or_fewer_lose_at_once_one_does_not(physical, loses):
    given = roster(a=MetSheet(physical=physical), b=B7)
    events = decide_after(given, IssueChallenge(character="b", defender="a", attribute="physical"), actor=B)
    if loses:
        assert events[1:] == [RoundWon(challenge="c1", round=1, winner="b", loser="a", by="zero_traits"),
                              ChallengeResolved(challenge="c1", winner="b", loser="a", reason="zero_traits")]
    else:
        assert len(events) == 1


def test_met_5_when_both_sides_hold_zero_the_initiator_loses():
    given = roster(a=MetSheet(physical=0), b=MetSheet(physical=0))
    assert decide_after(given, IssueChallenge(character="a", defender="b", attribute="physical"), actor=A)[1] == (
        RoundWon(challenge="c1", round=1, winner="b", loser="a", by="zero_traits"))
    assert decide_after(given, IssueChallenge(character="b", defender="a", attribute="physical"), actor=B)[1] == (
        RoundWon(challenge="c1", round=1, winner="a", loser="b", by="zero_traits"))


def test_met_5_the_defender_is_held_to_its_own_attribute():
    given = roster(a=A6, b=MetSheet(physical=5, mental=0))
    events = decide_after(given, IssueChallenge(character="a", defender="b", attribute="physical",
                                                defender_attribute="mental"), actor=A)
    assert events[1] == RoundWon(challenge="c1", round=1, winner="a", loser="b", by="zero_traits")
    fine = decide_after(given, IssueChallenge(character="a", defender="b", attribute="mental",
                                              defender_attribute="physical"), actor=A)
    assert len(fine) == 1


# ---------------------------------------------------------------- MET-10 static


def static_tie(declared: int, difficulty: int = 5, tested=A6) -> list:
    given = roster(a=tested) + [static(difficulty=difficulty)] + thrown("c1", 1, a="rock", storyteller="rock")
    return decide_after(given, DeclareBid(character="a", challenge="c1", round=1, value=declared), actor=A)


def test_met_10_a_static_tie_at_exactly_the_difficulty_is_lost():
    assert static_tie(5)[1:3] == [BidsCompared(challenge="c1", round=1, winner="storyteller"),
                                  RoundWon(challenge="c1", round=1, winner="storyteller", loser="a", by="difficulty")]


def test_met_10_a_static_tie_one_above_the_difficulty_is_won():
    assert static_tie(6)[1:3] == [BidsCompared(challenge="c1", round=1, winner="a"),
                                  RoundWon(challenge="c1", round=1, winner="a", loser="storyteller", by="difficulty")]


def test_met_10_a_difficulty_of_zero_is_taken_and_below_zero_refused():
    assert static_tie(1, difficulty=0)[1] == BidsCompared(challenge="c1", round=1, winner="a")
    assert static_tie(0, difficulty=0)[1] == BidsCompared(challenge="c1", round=1, winner="storyteller")
    assert_refuses(given=roster(a=A6), when=IssueChallenge(character="a", kind="static", attribute="physical",
                                                           difficulty=-1), actor=A, code="invalid", match="MET-10")
    assert decide_after(roster(a=A6), IssueChallenge(character="a", kind="static", attribute="physical",
                                                     difficulty=0), actor=A)


@pytest.mark.parametrize("kind, tests, taken", [("static", 1, True), ("static", 2, True), ("static", 0, False),
                                                ("simple", 3, True), ("classic", 1, True), ("classic", 2, False)])
def test_met_10_successive_tests_are_one_or_more_and_not_for_a_classic_challenge(kind, tests, taken):
    command = IssueChallenge(character="a", defender="b" if kind == "classic" else "", kind=kind,
                             attribute=None if kind == "simple" else "physical", tests=tests)
    if taken:
        assert decide_after(roster(a=A6, b=B7), command, actor=A)[0].tests == tests
    else:
        assert_refuses(given=roster(a=A6, b=B7), when=command, actor=A, code="invalid", match="successive tests")


def test_met_10_the_last_of_successive_tests_won_ends_the_challenge():
    given = roster(a=A6) + [static(tests=2)] + won_on_throw("c1", 1, "a", "storyteller") + [
        RoundStarted(challenge="c1", round=2, test=2, reason="next_test")]
    given += thrown("c1", 2, a="rock", storyteller="rock")
    events = decide_after(given, DeclareBid(character="a", challenge="c1", round=2, value=6), actor=A)
    assert events[-2:] == [RoundWon(challenge="c1", round=2, winner="a", loser="storyteller", by="difficulty"),
                           ChallengeResolved(challenge="c1", winner="a", loser="storyteller", reason="final")]
    first = roster(a=A6) + [static(tests=2)] + thrown("c1", 1, a="rock", storyteller="rock")
    assert decide_after(first, DeclareBid(character="a", challenge="c1", round=1, value=6), actor=A)[-1] == (
        RoundStarted(challenge="c1", round=2, test=2, reason="next_test"))


# ---------------------------------------------------------------- MET-12 retests: one, or two with Lucky


LUCKY = MetSheet(physical=5, abilities={"Athletics": 1}, merits=("Lucky",))


def retested(sheet: MetSheet, kind: str, times: int) -> list:
    """c1 lost by a ``times`` times, each loss followed by a retest."""
    issued = static() if kind == "static" else ChallengeIssued(
        challenge="c1", kind=kind, initiator="a", defender="storyteller", tested="a")
    given = roster(a=sheet) + [issued] + won_on_throw("c1", 1, "storyteller", "a")
    for n in range(1, times + 1):
        given += [RetestTaken(challenge="c1", character="a", source="Athletics", round=n),
                  RoundStarted(challenge="c1", round=n + 1, reason="retest")]
        given += won_on_throw("c1", n + 1, "storyteller", "a")
    return given


def test_met_12_lucky_gives_a_second_static_retest_and_no_third():
    assert decide_after(retested(LUCKY, "static", 1), Retest(character="a", challenge="c1", source="Lucky"), actor=A)
    assert_refuses(given=retested(LUCKY, "static", 2), when=Retest(character="a", challenge="c1", source="Lucky"),
                   actor=A, match="one retest per character per challenge")


def test_met_12_without_lucky_one_static_retest_only():
    plain = MetSheet(physical=5, abilities={"Athletics": 1})
    assert decide_after(retested(plain, "static", 0), Retest(character="a", challenge="c1", source="Athletics"),
                        actor=A)
    assert_refuses(given=retested(plain, "static", 1), when=Retest(character="a", challenge="c1", source="Athletics"),
                   actor=A, match="one retest per character per challenge")


def test_met_12_a_lost_round_with_retests_left_stays_open_and_without_them_is_final():
    plain = MetSheet(physical=5, abilities={"Athletics": 1})
    for sheet, final in ((LUCKY, False), (plain, True)):
        given = retested(sheet, "static", 1)[:-3]  # round 2 begun, the storyteller's throw sealed
        events = decide_after(given, Throw(character="a", challenge="c1", round=2, choice="scissors"), actor=A)
        assert events[2] == RoundWon(challenge="c1", round=2, winner="storyteller", loser="a", by="throw")
        assert isinstance(events[-1], ChallengeResolved) is final, events


def test_met_12_a_loser_with_nothing_to_retest_with_has_no_window_but_may_overbid():
    bare = MetSheet(physical=6)
    given = roster(a=bare, b=bare) + [classic()] + thrown("c1", 1, b="rock", a="scissors")[:1]
    events = decide_after(given, Throw(character="a", challenge="c1", round=1, choice="scissors"), actor=A)
    assert events[-1] == RoundWon(challenge="c1", round=1, winner="b", loser="a", by="throw")  # overbid still open
    static_given = roster(a=bare) + [static()] + [thrown("c1", 1, storyteller="rock", a="scissors")[0]]
    final = decide_after(static_given, Throw(character="a", challenge="c1", round=1, choice="scissors"), actor=A)
    assert final[-1] == ChallengeResolved(challenge="c1", winner="storyteller", loser="a", reason="final")


def test_met_12_after_an_overbid_a_bid_loss_without_retests_is_final():
    bare = MetSheet(physical=6)
    given = roster(a=bare, b=bare) + [classic()] + thrown("c1", 1, a="rock", b="rock") + [
        BidDeclared(challenge="c1", round=1, character="a", value=5)]
    events = decide_after(given, DeclareBid(character="b", challenge="c1", round=1, value=6), actor=B)
    assert events[-1] == ChallengeResolved(challenge="c1", winner="b", loser="a", reason="final")


# ---------------------------------------------------------------- MET-16 many challenges, kept in pages


def test_met_16_every_finished_challenge_stays_readable_across_pages():
    state = game.fold(roster(a=A6, b=B7))
    total = 2 * PAGE + 3
    for n in range(total):
        for command in (IssueChallenge(character="a", defender="b", attribute="physical"),
                        Concede(character="b", challenge=f"c{n + 1}")):
            actor = A if isinstance(command, IssueChallenge) else B
            state = game.fold(game.decide(state, command, ScriptedDraws([]), actor=actor), state)
    assert len(state.met.challenges) == total
    assert [len(page) for page in state.met.done] == [PAGE, PAGE, 3]
    for n in (1, PAGE, PAGE + 1, 2 * PAGE, total):
        found = state.met.get(f"c{n}")
        assert found is not None and found.id == f"c{n}" and found.status == "resolved", n
    assert state.met.get(f"c{total + 1}") is None and state.met.get(f"c{3 * PAGE + 1}") is None


def test_met_16_a_groups_pairs_are_kept_on_their_groups_page():
    """A pair "c<n>.<i>" is numbered after its group: past the first page, both on the second."""
    state = game.fold(roster(a=A6, b=B7, c=B7))
    for n in range(1, PAGE + 2):
        many = dict(defenders=("b", "c")) if n == PAGE + 1 else dict(defender="b")
        for command, actor in ((IssueChallenge(character="a", attribute="physical", **many), A),
                               (Concede(character="a", challenge=f"c{n}"), A)):
            state = game.fold(game.decide(state, command, ScriptedDraws([]), actor=actor), state)
    group = f"c{PAGE + 1}"
    assert [len(page) for page in state.met.done] == [PAGE, 3]
    assert sorted(state.met.done[1]) == [group, f"{group}.1", f"{group}.2"]
    assert state.met.get(f"{group}.2").status == "resolved"


def test_met_16_a_challenge_finished_after_later_pages_leaves_them_whole():
    state = game.fold(roster(a=A6, b=B7))

    def decided(command, actor):
        return game.fold(game.decide(state, command, ScriptedDraws([]), actor=actor), state)

    state = decided(IssueChallenge(character="a", defender="b", attribute="physical"), A)  # c1 stays open
    for n in range(2, 2 * PAGE + 2):
        state = decided(IssueChallenge(character="a", defender="b", attribute="physical"), A)
        state = decided(Concede(character="b", challenge=f"c{n}"), B)
    state = decided(Concede(character="b", challenge="c1"), B)
    assert [len(page) for page in state.met.done] == [PAGE, PAGE, 1]
    assert all(state.met.get(f"c{n}").status == "resolved" for n in range(1, 2 * PAGE + 2))


# ---------------------------------------------------------------- MET-9 initiative


def test_met_9_three_equal_actions_act_together_after_one_celerity_and_before_fewer_traits():
    given = roster(a=A6, b=MetSheet(physical=6), c=MetSheet(physical=6), f=MetSheet(physical=1, celerity=1),
                   w=MetSheet(physical=5), z=MetSheet(physical=0))
    given += [CharacterAdded(character="v", name="V", sheet=V5Sheet()), CharacterAdded(character="n", name="N")]
    order = initiative_order(game.fold(given), [("w", "physical"), ("a", "physical"), ("b", "physical"),
                                                ("n", "physical"), ("c", "physical"), ("f", "physical"),
                                                ("v", "physical"), ("z", "physical")])
    # without a Mind's Eye sheet a character counts no traits: it acts with those holding 0
    assert order == [(("f", "physical"),), (("a", "physical"), ("b", "physical"), ("c", "physical")),
                     (("w", "physical"),), (("n", "physical"), ("v", "physical"), ("z", "physical"))]


# ---------------------------------------------------------------- MET-1, MET-8, MET-10, MET-11: who a challenge tests


def test_met_11_a_simple_test_is_for_a_character_of_the_roster():
    assert_refuses(given=roster(a=A6), when=IssueChallenge(character="Ghoul", kind="simple"), code="invalid",
                   match="MET-11")
    issued = decide_after(roster(a=A6), IssueChallenge(character="a", kind="complex"), actor=A)[0]
    assert (issued.tested, issued.defender) == ("a", "storyteller")


def test_met_10_a_static_test_tests_its_one_character_of_the_roster():
    mine = decide_after(roster(a=A6), IssueChallenge(character="a", kind="static", attribute="physical",
                                                     difficulty=3), actor=A)[0]
    assert (mine.initiator, mine.defender, mine.tested) == ("a", "storyteller", "a")
    trap = decide_after(roster(a=A6), IssueChallenge(character="Trap", defender="a", kind="static",
                                                     attribute="physical", difficulty=3))[0]
    assert (trap.initiator, trap.defender, trap.tested) == ("Trap", "a", "a")
    for defender in ("", "Ghoul"):
        assert_refuses(given=roster(a=A6), when=IssueChallenge(character="Trap", defender=defender, kind="static",
                                                               attribute="physical"), code="invalid",
                       match="tests one character of the roster")


def test_met_8_one_challenge_for_both_actions_only_in_one_attribute_of_a_classic_challenge():
    given = roster(a=A6, b=B7)
    for defender_attribute in (None, "physical"):
        issued = decide_after(given, IssueChallenge(character="a", defender="b", attribute="physical", mutual=True,
                                                    defender_attribute=defender_attribute), actor=A)[0]
        assert issued.mutual
    assert_refuses(given=given, when=IssueChallenge(character="a", defender="b", attribute="physical", mutual=True,
                                                    defender_attribute="mental"), actor=A, code="invalid",
                   match="MET-8")
    assert_refuses(given=given, when=IssueChallenge(character="a", kind="static", attribute="physical", mutual=True),
                   actor=A, code="invalid", match="MET-8")


def test_met_1_a_side_needs_a_mind_s_eye_sheet_or_none():
    given = roster(a=A6) + [CharacterAdded(character="v", name="V", sheet=V5Sheet()),
                            CharacterAdded(character="n", name="N"), SceneJoined(character="n", scene="s1")]
    assert_refuses(given=given, when=IssueChallenge(character="a", defender="v", attribute="physical"), actor=A,
                   code="invalid", match="V has no Mind's Eye Theatre sheet")
    assert decide_after(given, IssueChallenge(character="a", defender="n", attribute="physical"), actor=A)


def test_met_1_a_storyteller_may_set_an_antagonist_against_a_character_a_player_may_not():
    given = roster(a=A6)
    issued = decide_after(given, IssueChallenge(character="Ghoul", defender="a", attribute="physical"))[0]
    assert (issued.initiator, issued.defender) == ("Ghoul", "a")
    assert_refuses(given=given, when=IssueChallenge(character="", defender="a", attribute="physical"),
                   code="not_found")
    assert_refuses(given=given, when=IssueChallenge(character="a", defender="Ghoul", attribute="physical"),
                   actor=A, code="not_found")
    assert_refuses(given=given, when=IssueChallenge(character="a", defender="a", attribute="physical"),
                   actor=A, code="invalid", match="itself")


# ---------------------------------------------------------------- MET-12 option, MET-13, MET-16: after a retest


CANCEL = MetOptions(retest_cancel=True)


def retest_taken(options=CANCEL) -> list:
    """a lost round 1 on the throw and retested; round 2 is about to be thrown."""
    return roster(options, a=A6, b=B7) + [classic()] + won_on_throw("c1", 1, "b", "a") + [
        RetestTaken(challenge="c1", character="a", source="Melee", round=1),
        RoundStarted(challenge="c1", round=2, reason="retest")]


def test_met_12_option_cancelling_a_retest_spends_the_canceller_s_one_retest():
    given = retest_taken()
    cancelled = decide_after(given, Retest(character="b", challenge="c1", source="Dodge", cancels=True), actor=B)
    state = game.fold(given + cancelled)
    assert state.met.challenges["c1"].retests == {"a": 1, "b": 1}
    # nothing is left to cancel: the phones offer no cancelling retest any more (client/web/player.js)
    assert state.met.challenges["c1"].cancellable is None
    # nor is the result before the retest kept: the state a storyteller reads (GET /state) holds none
    assert state.met.challenges["c1"].previous is None
    again = given + cancelled + [RetestTaken(challenge="c1", character="a", source="Melee", round=1)]
    assert game.fold(again).met.challenges["c1"].retests == {"a": 2, "b": 1}


def test_met_13_no_overbid_while_the_retest_s_round_is_thrown():
    assert_refuses(given=retest_taken(MetOptions()), when=Overbid(character="a", challenge="c1", value=6), actor=A,
                   match="only the loser may overbid")


def test_met_16_a_challenge_cancelled_without_a_reason_says_cancelled():
    given = roster(a=A6, b=B7) + [classic()]
    events = decide_after(given, CancelChallenge(challenge="c1"))
    assert game.fold(given + events).met.challenges["c1"].reason == "cancelled"
    events = decide_after(given, CancelChallenge(challenge="c1", reason="wrong target"))
    assert game.fold(given + events).met.challenges["c1"].reason == "wrong target"


def test_met_3_an_ability_the_sheet_lacks_counts_no_trait():
    given = roster(a=A6, b=B7) + [classic(abilities=("Occult",))] + thrown("c1", 1, a="rock", b="rock")
    assert_refuses(given=given, when=DeclareBid(character="a", challenge="c1", round=1, value=7), actor=A,
                   match="above your true 6 (Physical 6)")
    assert decide_after(given, DeclareBid(character="a", challenge="c1", round=1, value=6), actor=A)


# ---------------------------------------------------------------- every refusal names its rule
# A refusal is behaviour: the rule it cites lands in CommandRejected.rule, its code sorts it
# for clients, and its message says why with the rule in parentheses (read case and all).


def refused(given: list, when, actor=STORYTELLER, *, rule: str, code: str = "rule", says: str):
    violation = assert_refuses(given=given, when=when, actor=actor, code=code)
    assert violation.rule == rule, f"rule {violation.rule!r}, expected {rule!r}: {violation}"
    assert says in violation.message, violation.message


def refused_saying(given: list, when, actor=STORYTELLER, *, rule: str, code: str = "rule", says: str):
    """As ``refused``, with the whole message: a player's or storyteller's screen shows it as it is."""
    violation = assert_refuses(given=given, when=when, actor=actor, code=code)
    assert (violation.rule, violation.message) == (rule, says), violation


PAIR = roster(a=A6, b=B7)
ISSUED_C1 = PAIR + [classic()]
TIED = tie()
SEALED_A = ISSUED_C1 + [ThrowCommitted(challenge="c1", round=1, character="a", choice="rock")]
OVERBID_OPEN = lost_on_the_throw() + [OverbidDeclared(challenge="c1", character="a", value=6)]
STATIC_TIE = roster(a=A6) + [static()] + thrown("c1", 1, a="rock", storyteller="rock")
LOST_ON_BIDS = TIED + [
    BidDeclared(challenge="c1", round=1, character="a", value=3),
    BidDeclared(challenge="c1", round=1, character="b", value=4),
    BidsCompared(challenge="c1", round=1, winner="b"),
    RoundWon(challenge="c1", round=1, winner="b", loser="a", by="bid"),
]
RETESTED = lost_on_the_throw() + [
    RetestTaken(challenge="c1", character="a", source="Melee", round=1),
    RoundStarted(challenge="c1", round=2, test=1, reason="retest"),
] + won_on_throw("c1", 2, "b", "a")
OVERBADE = lost_on_the_throw() + [
    OverbidDeclared(challenge="c1", character="a", value=6),
    BidDeclared(challenge="c1", round=1, character="b", value=2, overbid=True),
    OverbidSettled(challenge="c1", character="a", opponent="b", granted=True),
    RoundStarted(challenge="c1", round=2, test=1, reason="overbid"),
] + won_on_throw("c1", 2, "b", "a")
NO_SHEET_LOST = roster(a=A6) + [CharacterAdded(character="n", name="N"), SceneJoined(character="n", scene="s1"),
                                classic(initiator="n", defender="a")] + won_on_throw("c1", 1, "a", "n")
RESOLVED = lost_on_the_throw() + [ChallengeResolved(challenge="c1", winner="b", loser="a", reason="accepted")]
CANCELLED = ISSUED_C1 + [ChallengeCancelled(challenge="c1", reason="")]
GROUP = roster(a=A6, b=B7, c=B7) + [GroupChallengeIssued(
    challenge="c1", initiator="a", defenders=("b", "c"), pairs=("c1.1", "c1.2"), attribute="physical")]
ELSEWHERE = PAIR + [SceneOpened(scene="s2", name="Harbour"), SceneJoined(character="b", scene="s2")]
# a's retest's round tied twice, on the throws then on the bids: round 3 is thrown afresh, a's retest is spent
RETEST_REDONE = retest_taken() + thrown("c1", 2, a="rock", b="rock") + [
    BidDeclared(challenge="c1", round=2, character="a", value=5),
    BidDeclared(challenge="c1", round=2, character="b", value=5),
    BidsCompared(challenge="c1", round=2),
    RoundStarted(challenge="c1", round=3, reason="equal_bids"),
]
OVERRULED = lost_on_the_throw() + decide_after(lost_on_the_throw(), Overrule(challenge="c1", winner="a"))


def challenge(**fields) -> IssueChallenge:
    return IssueChallenge(**{"character": "a", "defender": "b", "attribute": "physical", **fields})


@pytest.mark.parametrize("given, when, actor, rule, code, says", [
    pytest.param(ISSUED_C1, Throw(character="a", challenge="c9", round=1, choice="rock"), A,
                 "MET-1", "not_found", "no challenge 'c9'", id="unknown challenge"),
    pytest.param(ISSUED_C1, Throw(character="c", challenge="c1", round=1, choice="rock"), STORYTELLER,
                 "MET-1", "forbidden", "c takes no part in challenge c1", id="not a side"),
    pytest.param(GROUP, Throw(character="x", challenge="c1", round=1, choice="rock"), STORYTELLER,
                 "MET-1", "forbidden", "x takes no part in challenge c1", id="not in the group"),
    pytest.param(GROUP, Overrule(challenge="c1", winner="a"), STORYTELLER,
                 "MET-1", "invalid", "challenge c1 has several pairs this may be for: name one of c1.1, c1.2 (MET-1)",
                 id="several pairs"),
    pytest.param(PAIR, challenge(defenders=("b",), defender="b"), A,
                 "defenders", "invalid", "a challenge names its defender in defender or in defenders, not both (MET-1)",
                 id="defender twice"),
    pytest.param(PAIR, challenge(attribute=None), A,
                 "MET-1", "invalid", "a challenge names Physical, Social or Mental (MET-1)", id="no attribute"),
    pytest.param(PAIR, challenge(defender="zed"), A,
                 "MET-1", "not_found", "no character 'zed' in this session", id="unknown defender"),
    pytest.param(PAIR, challenge(defender="a"), A,
                 "MET-1", "invalid", "a character cannot challenge itself (MET-1)", id="itself"),
    pytest.param(PAIR, challenge(character="zed"), player("zed"),
                 "MET-1", "not_found", "no character 'zed' in this session", id="unknown initiator"),
    pytest.param(PAIR, challenge(character=""), STORYTELLER,
                 "MET-1", "not_found", "no character '' in this session", id="nameless initiator"),
    pytest.param(roster(a=A6, b=V5Sheet()), challenge(), A,
                 "MET-1", "invalid", "B has no Mind's Eye Theatre sheet", id="other ruleset's sheet"),
    pytest.param(roster(a=MetSheet(physical=5, cannot_initiate=True), b=B7), challenge(), A,
                 "MET-1", "rule", "A can initiate no challenge, only defend (MET-1)", id="cannot initiate"),
    pytest.param(ELSEWHERE, challenge(), A, "TIME-2", "rule", "B is not in your scene (TIME-2)", id="other scene"),
])
def test_met_1_a_challenge_is_refused_naming_who_or_what_is_wrong(given, when, actor, rule, code, says):
    refused_saying(given, when, actor, rule=rule, code=code, says=says)


@pytest.mark.parametrize("given, when, actor, rule, code, says", [
    pytest.param(PAIR, challenge(kind="simple", character="Ghoul", defender=None, attribute=None), STORYTELLER,
                 "MET-11", "invalid", "a simple test is for a character of the roster (MET-11)", id="simple off roster"),
    pytest.param(PAIR, challenge(kind="complex", defender=None), A,
                 "MET-11", "invalid", "a complex test uses no traits (MET-11)", id="complex with traits"),
    pytest.param(PAIR, challenge(kind="static", defender=None, difficulty=-1), A,
                 "MET-10", "invalid", "a difficulty counts traits, 0 or more (MET-10)", id="negative difficulty"),
    pytest.param(PAIR, challenge(kind="static", character="Trap", defender=None), STORYTELLER,
                 "MET-10", "invalid", "a static challenge tests one character of the roster (MET-10)",
                 id="static with no one tested"),
    pytest.param(PAIR, challenge(defender=None), A,
                 "MET-8", "invalid",
                 "a classic challenge names its defender; against the storyteller use a static test (MET-8)",
                 id="classic no defender"),
    pytest.param(PAIR, challenge(tests=2), A,
                 "MET-10", "invalid", "successive tests are for static, simple and complex tests (MET-10, MET-11)",
                 id="successive classic"),
    pytest.param(PAIR, challenge(kind="static", defender=None, mutual=True), A,
                 "MET-8", "invalid", "one challenge settles both actions only when both use the same attribute (MET-8)",
                 id="mutual static"),
    pytest.param(PAIR, challenge(defender_abilities=("Brawl",)), A,
                 "MET-3", "invalid",
                 "the defender declares its own abilities with its bid; the initiator names only its own (MET-3)",
                 id="defender abilities"),
])
def test_met_8_10_11_a_challenge_of_the_wrong_shape_is_refused_by_its_rule(given, when, actor, rule, code, says):
    refused_saying(given, when, actor, rule=rule, code=code, says=says)


@pytest.mark.parametrize("given, when, actor, rule, code, says", [
    pytest.param(GROUP, challenge(defender=None, defenders=tuple("bcdefghij")), STORYTELLER,
                 "defenders", "invalid", "defenders: at most 8 in one group challenge, not 9 (MET-1)", id="nine"),
    pytest.param(GROUP, challenge(kind="simple", defender=None, defenders=("b", "c"), attribute=None), A,
                 "MET-11", "invalid", "give each character its own simple test (MET-11)", id="simple group"),
    pytest.param(GROUP, challenge(kind="static", defender=None, defenders=("b", "c")), A,
                 "MET-10", "invalid", "a static test against several characters is a storyteller's (a trap, a "
                 "power): its initiator is the storyteller or an antagonist; a character's own static test faces "
                 "a difficulty alone, and against several characters it is a classic challenge (MET-10)",
                 id="a character's static group"),
    pytest.param(GROUP, challenge(defender=None, defenders=("b", "c"), mutual=True), A,
                 "MET-8", "invalid", "one challenge settles both actions between two characters only (MET-8)",
                 id="mutual group"),
    pytest.param(GROUP, challenge(defender=None, defenders=("b", "b")), A,
                 "defenders", "invalid", "defenders: each character once", id="same defender twice"),
])
def test_met_1_a_group_challenge_is_refused_by_its_rule(given, when, actor, rule, code, says):
    refused(given, when, actor, rule=rule, code=code, says=says)


@pytest.mark.parametrize("given, when, actor, rule, code, says", [
    pytest.param(ISSUED_C1, Throw(character="a", challenge="c1", round=2, choice="rock"), A, "MET-2", "rule",
                 "round 2 of challenge c1 takes no throw now (it is at round 1, throwing) (MET-2)", id="other round"),
    pytest.param(TIED, Throw(character="a", challenge="c1", round=1, choice="rock"), A, "MET-2", "rule",
                 "(it is at round 1, bidding) (MET-2)", id="while bidding"),
    pytest.param(SEALED_A, Throw(character="a", challenge="c1", round=1, choice="paper"), A, "MET-2", "rule",
                 "your throw for this round is already sealed (MET-2)", id="twice"),
    pytest.param(ISSUED_C1, Throw(character="a", challenge="c1", round=1), A, "MET-2", "invalid",
                 "choose rock, paper or scissors (MET-2)", id="no choice"),
    pytest.param(ISSUED_C1, Throw(character="a", challenge="c1", round=1, choice="bomb"), A, "MET-2", "rule",
                 "this chronicle plays without the bomb (MET-2)", id="no bomb"),
    pytest.param(roster(MetOptions(bomb=True), a=A6, b=B7) + [classic()],
                 Throw(character="a", challenge="c1", round=1, choice="bomb"), A, "MET-2", "rule",
                 "only a character whose power grants it may throw the bomb (MET-2)", id="bomb not granted"),
])
def test_met_2_a_throw_is_refused_by_its_rule(given, when, actor, rule, code, says):
    refused(given, when, actor, rule=rule, code=code, says=says)


@pytest.mark.parametrize("given, when, actor, rule, code, says", [
    pytest.param(TIED, DeclareBid(character="a", challenge="c1", round=2, value=3), A, "MET-3", "rule",
                 "challenge c1 is at round 1, not 2 (MET-3)", id="other round"),
    pytest.param(ISSUED_C1, DeclareBid(character="a", challenge="c1", round=1, value=3), A, "MET-3", "rule",
                 "challenge c1 takes bids only after a tie of throws (MET-3)", id="no tie"),
    pytest.param(TIED + [BidDeclared(challenge="c1", round=1, character="a", value=3)],
                 DeclareBid(character="a", challenge="c1", round=1, value=4), A, "MET-3", "rule",
                 "your bid for this round is already declared (MET-3)", id="twice"),
    pytest.param(TIED, DeclareBid(character="b", challenge="c1", round=1, value=3), B, "MET-3", "rule",
                 "the initiator declares its traits first (MET-3)", id="defender first"),
    pytest.param(TIED, DeclareBid(character="a", challenge="c1", round=1, value=-1), A, "MET-3", "invalid",
                 "a bid counts traits: -1 is below 0 (MET-3)", id="below zero"),
    pytest.param(TIED, DeclareBid(character="a", challenge="c1", round=1, value=3, abilities=("Occult",)), A,
                 "MET-3", "invalid", "Occult: not an ability on A's sheet (abilities held: Melee) (MET-3, MET-15)",
                 id="ability not held"),
    pytest.param(STATIC_TIE, DeclareBid(character="storyteller", challenge="c1", round=1, value=3), STORYTELLER,
                 "MET-10", "rule", "against a difficulty only the tested character declares (MET-10)",
                 id="the difficulty's side"),
    pytest.param(OVERBID_OPEN, DeclareBid(character="a", challenge="c1", round=1, value=3), A, "MET-13", "rule",
                 "the winner answers the overbid; the loser announced first (MET-13)", id="overbidder answers"),
    pytest.param(NO_SHEET_LOST, Overbid(character="n", challenge="c1", value=3), player("n"), "MET-15", "rule",
                 "no sheet on file for n: a storyteller declares for it (MET-15)", id="no sheet"),
    pytest.param(OVERBID_OPEN, DeclareBid(character="b", challenge="c1", round=1, value=-1), B, "MET-3", "invalid",
                 "a score counts traits: -1 is below 0 (MET-3)", id="overbid answered below zero"),
    pytest.param(OVERBID_OPEN, DeclareBid(character="b", challenge="c1", round=1, value=15), B, "MET-4", "rule",
                 "score 15 is above your cap of 14 (twice your 7 Physical traits) (MET-4)",
                 id="overbid answered above the cap"),
])
def test_met_3_a_bid_is_refused_by_its_rule(given, when, actor, rule, code, says):
    refused_saying(given, when, actor, rule=rule, code=code, says=says)


@pytest.mark.parametrize("given, when, actor, rule, code, says", [
    pytest.param(lost_on_the_throw(), Retest(character="a", challenge="c1", source="  "), A, "MET-12", "invalid",
                 "a retest names its source: ability, power or merit (MET-12)", id="no source"),
    pytest.param(lost_on_the_throw(), Retest(character="a", challenge="c1", source="Occult"), A, "MET-12", "rule",
                 "'Occult' is not an ability, power or merit on your sheet (MET-12, MET-15)", id="source not held"),
    pytest.param(RETESTED, Retest(character="a", challenge="c1", source="Melee"), A, "MET-12", "rule",
                 "one retest per character per challenge; Lucky allows a second on a static challenge only (MET-12)",
                 id="second retest"),
    pytest.param(lost_on_the_throw(), Retest(character="b", challenge="c1", source="Brawl"), B, "MET-12", "rule",
                 "only the loser of the challenge may retest, before it is accepted (MET-12)", id="winner retests"),
    pytest.param(retest_taken(MetOptions()), Retest(character="b", challenge="c1", source="Brawl", cancels=True), B,
                 "MET-12", "rule", "this chronicle does not let a retest cancel a retest (MET-12 option)",
                 id="cancel off"),
    pytest.param(roster(CANCEL, a=A6, b=B7) + [classic()] + won_on_throw("c1", 1, "b", "a"), Retest(character="b", challenge="c1", source="Brawl", cancels=True), B,
                 "MET-12", "rule", "there is no opponent's retest to cancel now (MET-12 option)", id="nothing to cancel"),
    pytest.param(retest_taken(), Retest(character="a", challenge="c1", source="Melee", cancels=True), A,
                 "MET-12", "rule", "there is no opponent's retest to cancel now (MET-12 option)", id="its own retest"),
    pytest.param(RETEST_REDONE, Retest(character="b", challenge="c1", source="Dodge", cancels=True), B,
                 "MET-12", "rule", "there is no opponent's retest to cancel now (MET-12 option)",
                 id="cancel after the retest's round"),
    pytest.param(retest_taken(), Retest(character="b", challenge="c1", source="Occult", cancels=True), B,
                 "MET-12", "rule", "'Occult' is not an ability, power or merit on your sheet (MET-12, MET-15)",
                 id="cancelling with a source not held"),
])
def test_met_12_a_retest_is_refused_by_its_rule(given, when, actor, rule, code, says):
    refused_saying(given, when, actor, rule=rule, code=code, says=says)


@pytest.mark.parametrize("given, when, actor, rule, code, says", [
    pytest.param(roster(a=A6) + [static()] + won_on_throw("c1", 1, "storyteller", "a"),
                 Overbid(character="a", challenge="c1", value=3), A, "MET-13", "rule",
                 "an overbid answers an opponent's score: classic challenges only (MET-13)", id="static"),
    pytest.param(lost_on_the_throw(), Overbid(character="b", challenge="c1", value=3), B, "MET-13", "rule",
                 "only the loser may overbid, before the effects are resolved (MET-13)", id="winner"),
    pytest.param(LOST_ON_BIDS, Overbid(character="a", challenge="c1", value=3), A, "MET-13", "rule",
                 "an overbid is for a challenge lost on the throw (MET-13)", id="lost on bids"),
    pytest.param(OVERBADE, Overbid(character="a", challenge="c1", value=3), A, "MET-14", "rule",
                 "one overbid per character per challenge (MET-14)", id="second overbid"),
    pytest.param(lost_on_the_throw(), Overbid(character="a", challenge="c1", value=-1), A, "MET-3", "invalid",
                 "a score counts traits: -1 is below 0 (MET-3)", id="below zero"),
])
def test_met_13_14_an_overbid_is_refused_by_its_rule(given, when, actor, rule, code, says):
    refused_saying(given, when, actor, rule=rule, code=code, says=says)


@pytest.mark.parametrize("given, when, actor, rule, code, says", [
    pytest.param(RESOLVED, Throw(character="a", challenge="c1", round=1, choice="rock"), A, "MET-16", "rule",
                 "challenge c1 is resolved (MET-16)", id="resolved"),
    pytest.param(roster(a=A6) + [static()], Concede(character="storyteller", challenge="c1"), STORYTELLER,
                 "MET-7", "rule", "the defender of a static challenge cannot choose to lose (MET-7)",
                 id="static defender concedes"),
    pytest.param(lost_on_the_throw(), Accept(character="b", challenge="c1"), B, "MET-16", "rule",
                 "only the loser accepts a result, once it is known (MET-16)", id="winner accepts"),
    pytest.param(ISSUED_C1, CloseWindow(challenge="c1"), STORYTELLER, "MET-16", "rule",
                 "challenge c1 has no open window for a retest or an overbid (MET-16)", id="no window"),
    pytest.param(lost_on_the_throw() + [TimeOutCalled(scope="scene", scene="s1")],
                 CloseWindow(challenge="c1", timeout=True), STORYTELLER, "TIME-5", "frozen",
                 "Time Out: the acceptance window waits for the resume (TIME-5, MET-16)", id="time out"),
    pytest.param(CANCELLED, CancelChallenge(challenge="c1"), STORYTELLER, "MET-16", "rule",
                 "challenge c1 is already cancelled (MET-16)", id="cancelled twice"),
    pytest.param(CANCELLED, Overrule(challenge="c1", winner="a"), STORYTELLER, "MET-16", "rule",
                 "challenge c1 is cancelled (MET-16)", id="overrule cancelled"),
    pytest.param(OVERRULED, Accept(character="b", challenge="c1"), B, "MET-16", "rule",
                 "challenge c1 is resolved (MET-16)", id="overruled"),
])
def test_met_16_an_ended_or_closed_challenge_refuses_by_its_rule(given, when, actor, rule, code, says):
    refused_saying(given, when, actor, rule=rule, code=code, says=says)


@pytest.mark.parametrize("given, when, actor, says", [
    pytest.param(TIED + [BidDeclared(challenge="c1", round=1, character="a", value=3)],
                 DeclareBid(character="b", challenge="c1", round=1, value=3, abilities=("Occult", "Lore")), B,
                 "Occult, Lore: not an ability on B's sheet (abilities held: Brawl, Dodge) (MET-3, MET-15)",
                 id="two missing, two held"),
    pytest.param(tie(a=MetSheet(physical=5)), DeclareBid(character="a", challenge="c1", round=1, value=3,
                                                         abilities=("Melee",)), A,
                 "Melee: not an ability on A's sheet (abilities held: none) (MET-3, MET-15)", id="none held"),
])
def test_met_3_an_ability_not_on_the_sheet_is_named_with_those_held(given, when, actor, says):
    refused(given, when, actor, rule="MET-3", code="invalid", says=says)


# ---------------------------------------------------------------- MET-8 one challenge for both actions


def test_met_8_a_mutual_challenge_spends_both_actions_and_each_ending_says_it_settles_both():
    after = game.fold(PAIR + [classic(mutual=True)])
    assert [after.session.characters[c].actions_used for c in "ab"] == [1, 1]
    alone = game.fold(PAIR + [classic()])
    assert [alone.session.characters[c].actions_used for c in "ab"] == [1, 0]
    mutual = PAIR + [classic(mutual=True)]
    # conceded, accepted, closed: every ChallengeResolved carries mutual
    assert decide_after(mutual, Concede(character="a", challenge="c1"), actor=A)[-1] == ChallengeResolved(
        challenge="c1", winner="b", loser="a", reason="conceded", mutual=True)
    lost = mutual + won_on_throw("c1", 1, "b", "a")
    assert decide_after(lost, CloseWindow(challenge="c1")) == [ChallengeResolved(
        challenge="c1", winner="b", loser="a", reason="window_closed", mutual=True)]
    # lost on the bids with nothing to retest with: final at once, mutual still
    bare = roster(a=MetSheet(physical=6), b=B7) + [classic(mutual=True)] + thrown("c1", 1, a="rock", b="rock") + [
        BidDeclared(challenge="c1", round=1, character="a", value=3)]
    assert decide_after(bare, DeclareBid(character="b", challenge="c1", round=1, value=4), actor=B)[-1] == \
        ChallengeResolved(challenge="c1", winner="b", loser="a", reason="final", mutual=True)


# ---------------------------------------------------------------- MET-14 one overbid, then final


def test_met_14_after_its_one_overbid_a_loser_with_nothing_to_retest_loses_the_next_throw_for_good():
    bare = MetSheet(physical=6)  # no ability, power or merit: no retest, only the overbid
    given = roster(a=bare, b=B7) + [classic()] + won_on_throw("c1", 1, "b", "a") + [
        OverbidDeclared(challenge="c1", character="a", value=6),
        BidDeclared(challenge="c1", round=1, character="b", value=2, overbid=True),
        OverbidSettled(challenge="c1", character="a", opponent="b", granted=True),
        RoundStarted(challenge="c1", round=2, test=1, reason="overbid"),
        ThrowCommitted(challenge="c1", round=2, character="a", choice="scissors"),
    ]
    assert decide_after(given, Throw(character="b", challenge="c1", round=2, choice="rock"), actor=B)[-2:] == [
        RoundWon(challenge="c1", round=2, winner="b", loser="a", by="throw"),
        ChallengeResolved(challenge="c1", winner="b", loser="a", reason="final"),
    ]


# ---------------------------------------------------------------- MET-16 what a resolved challenge keeps


def test_met_16_a_conceded_challenge_keeps_its_winner_its_loser_and_why():
    given = ISSUED_C1 + decide_after(ISSUED_C1, Concede(character="a", challenge="c1"), actor=A)
    ch = game.fold(given).met.get("c1")
    assert (ch.status, ch.winner, ch.loser, ch.reason) == ("resolved", "b", "a", "conceded")
