"""Mind's Eye Theatre challenges, rule by rule (MET-1..16), given / when / then."""

from __future__ import annotations

import pytest

from conteur.events import game
from conteur.events.met import (
    Accept,
    BidDeclared,
    BidsCompared,
    CancelChallenge,
    ChallengeCancelled,
    ChallengeConceded,
    ChallengeIssued,
    ChallengeOverruled,
    ChallengeResolved,
    CloseWindow,
    Concede,
    DeclareBid,
    IssueChallenge,
    Overbid,
    OverbidDeclared,
    OverbidSettled,
    Overrule,
    Retest,
    RetestCancelled,
    RetestTaken,
    RoundStarted,
    RoundWon,
    Throw,
    ThrowCommitted,
    ThrowsRevealed,
    TieDebtIncurred,
    TieDebtPaid,
    initiative_order,
    open_windows,
)
from conteur.events.model import STORYTELLER, DrawRecord
from conteur.events.met import MetOptions, TieDebt
from conteur.events.session import (ActionTaken, Carried, CharacterAdded, NoSheetMarked, SceneJoined, SceneOpened,
                                    SessionOpened, SheetAmended, TimeOutCalled, TurnAdvanced)
from conteur.events.sheets import MetSheet, V5Sheet
from conteur.events.testing import assert_decides, assert_refuses, decide_after
from tests.support.met_support import A6, B7, classic, player, roster, static, thrown, won_on_throw

A, B = player("a"), player("b")
DUEL = roster(a=A6, b=B7)
TIED = DUEL + [classic(abilities=("Melee",), defender_abilities=("Brawl",))] + thrown("c1", 1, a="rock", b="rock")


def window(given=DUEL, winner="b", loser="a", **fields):
    """A classic challenge c1 whose ``winner`` took round 1 on the throw."""
    return given + [classic(**fields)] + won_on_throw("c1", 1, winner, loser)


# ---------------------------------------------------------------- MET-1


def test_met_1_a_challenge_names_its_attribute_category():
    assert_decides(
        given=DUEL,
        when=IssueChallenge(character="a", defender="b", attribute="social", action="Dominate"),
        actor=A,
        then=[classic(attribute="social", action="Dominate")],
    )
    assert_refuses(given=DUEL, when=IssueChallenge(character="a", defender="b"), actor=A, match="MET-1")


def test_met_1_ids_are_counted_from_the_state():
    given = DUEL + [classic(), classic(challenge="c2")]
    events = decide_after(given, IssueChallenge(character="a", defender="b", attribute="mental"), actor=A)
    assert events[0].challenge == "c3"


def test_met_1_a_character_that_can_initiate_no_challenge_still_defends():
    meek = MetSheet(physical=5, cannot_initiate=True)
    given = roster(a=meek, b=B7)
    assert_refuses(given=given, when=IssueChallenge(character="a", defender="b", attribute="physical"), actor=A,
                   match="MET-1")
    assert_decides(given=given, when=IssueChallenge(character="b", defender="a", attribute="physical"), actor=B,
                   then=[classic(initiator="b", defender="a")])


def test_met_1_a_player_acts_only_for_its_own_character():
    assert_refuses(given=DUEL, when=IssueChallenge(character="b", defender="a", attribute="physical"), actor=A,
                   code="forbidden")


# ---------------------------------------------------------------- MET-2 sealed throws


@pytest.mark.parametrize(
    "a, b", [("rock", "scissors"), ("scissors", "paper"), ("paper", "rock")]
)
def test_met_2_rock_beats_scissors_scissors_beat_paper_paper_beats_rock(a, b):
    for first, second, winner in ((a, b, "a"), (b, a, "b")):
        given = DUEL + [classic(), ThrowCommitted(challenge="c1", round=1, character="a", choice=first)]
        events = decide_after(given, Throw(character="b", challenge="c1", round=1, choice=second), actor=B)
        assert events[1] == ThrowsRevealed(challenge="c1", round=1, throws={"a": first, "b": second}, winner=winner)
        assert events[2] == RoundWon(challenge="c1", round=1, winner=winner, loser="ab".replace(winner, ""),
                                     by="throw")


@pytest.mark.parametrize("throw", ["rock", "paper", "scissors"])
def test_met_2_the_same_throw_is_a_tie_that_opens_the_bids(throw):
    given = DUEL + [classic(), ThrowCommitted(challenge="c1", round=1, character="a", choice=throw)]
    assert_decides(given=given, when=Throw(character="b", challenge="c1", round=1, choice=throw), actor=B,
                   then=[ThrowCommitted(challenge="c1", round=1, character="b", choice=throw),
                         ThrowsRevealed(challenge="c1", round=1, throws={"a": throw, "b": throw})])


def test_met_2_a_throw_is_sealed_until_every_participant_has_thrown():
    given = DUEL + [classic()]
    [committed] = assert_decides(
        given=given, when=Throw(character="a", challenge="c1", round=1, choice="paper"), actor=A,
        then=[ThrowCommitted(challenge="c1", round=1, character="a", choice="paper")],
    )
    assert committed.owners() == frozenset({"a"})
    assert committed.redacted() == ThrowCommitted(challenge="c1", round=1, character="a", choice=None)


def test_met_2_the_last_throw_reveals_the_round_to_everyone():
    given = DUEL + [classic(), ThrowCommitted(challenge="c1", round=1, character="a", choice="paper")]
    events = assert_decides(
        given=given,
        when=Throw(character="b", challenge="c1", round=1, choice="scissors"),
        actor=B,
        then=[
            ThrowCommitted(challenge="c1", round=1, character="b", choice="scissors"),
            ThrowsRevealed(challenge="c1", round=1, throws={"a": "paper", "b": "scissors"}, winner="b"),
            RoundWon(challenge="c1", round=1, winner="b", loser="a", by="throw"),
        ],
    )
    assert events[1].owners() is None


def test_met_2_one_throw_per_round_and_never_for_another_round():
    given = DUEL + [classic(), ThrowCommitted(challenge="c1", round=1, character="a", choice="paper")]
    assert_refuses(given=given, when=Throw(character="a", challenge="c1", round=1, choice="rock"), actor=A,
                   match="already sealed")
    assert_refuses(given=given, when=Throw(character="b", challenge="c1", round=2, choice="rock"), actor=B,
                   match="MET-2")


def test_met_2_a_player_must_choose_its_throw():
    assert_refuses(given=DUEL + [classic()], when=Throw(character="a", challenge="c1", round=1), actor=A,
                   code="invalid")


def test_met_2_a_storyteller_lets_the_server_draw_and_the_draw_is_recorded():
    given = roster(a=A6) + [static()]
    record = DrawRecord(counter=0, sides=3, face=2)
    events = assert_decides(
        given=given, when=Throw(character="storyteller", challenge="c1", round=1), draws=[2],
        then=[ThrowCommitted(challenge="c1", round=1, character="storyteller", choice="paper", draws=(record,))],
    )
    assert game.fold(given + events).draw_counter == 1


def test_met_2_a_storyteller_may_choose_the_antagonist_throw():
    given = roster(a=A6) + [classic(defender="Ghoul")]
    assert_decides(
        given=given, when=Throw(character="Ghoul", challenge="c1", round=1, choice="rock"),
        then=[ThrowCommitted(challenge="c1", round=1, character="Ghoul", choice="rock")],
    )


# ---------------------------------------------------------------- MET-3 bids on a tie


def test_met_3_a_tie_of_throws_opens_the_bids_initiator_first():
    given = DUEL + [classic(), ThrowCommitted(challenge="c1", round=1, character="a", choice="rock")]
    tied = given + decide_after(given, Throw(character="b", challenge="c1", round=1, choice="rock"), actor=B)
    assert_refuses(given=tied, when=DeclareBid(character="b", challenge="c1", round=1, value=9), actor=B,
                   match="initiator declares its traits first (MET-3)")
    (bid,) = decide_after(tied, DeclareBid(character="a", challenge="c1", round=1, value=6), actor=A)
    assert (type(bid), bid.character, bid.value) == (BidDeclared, "a", 6)


def test_met_3_a_bid_is_told_to_the_storyteller_only():
    [bid] = assert_decides(
        given=TIED, when=DeclareBid(character="a", challenge="c1", round=1, value=8), actor=A,
        then=[BidDeclared(challenge="c1", round=1, character="a", value=8)],
    )
    assert bid.owners() == frozenset({"a"}) and bid.redacted().value is None


def test_met_3_the_lower_bid_loses():
    given = TIED + [BidDeclared(challenge="c1", round=1, character="a", value=8)]
    assert_decides(
        given=given, when=DeclareBid(character="b", challenge="c1", round=1, value=9), actor=B,
        then=[
            BidDeclared(challenge="c1", round=1, character="b", value=9),
            BidsCompared(challenge="c1", round=1, winner="b"),
            RoundWon(challenge="c1", round=1, winner="b", loser="a", by="bid"),
        ],
    )


def test_met_3_equal_bids_redo_the_throw():
    given = TIED + [BidDeclared(challenge="c1", round=1, character="a", value=7)]
    assert_decides(
        given=given, when=DeclareBid(character="b", challenge="c1", round=1, value=7), actor=B,
        then=[
            BidDeclared(challenge="c1", round=1, character="b", value=7),
            BidsCompared(challenge="c1", round=1, winner=None),
            RoundStarted(challenge="c1", round=2, test=1, reason="equal_bids"),
        ],
    )


def test_met_3_no_bid_without_a_tie():
    assert_refuses(given=DUEL + [classic()], when=DeclareBid(character="a", challenge="c1", round=1, value=3),
                   actor=A, match="MET-3")


# ---------------------------------------------------------------- MET-4 cap and lying


def test_met_4_a_bid_above_twice_the_attribute_is_refused_whatever_the_bonuses():
    strong = MetSheet(physical=6, abilities={"Melee": 5}, bonus={"physical": 4})
    given = roster(a=strong, b=B7) + [classic(abilities=("Melee",))] + thrown("c1", 1, a="rock", b="rock")
    violation = assert_refuses(given=given, when=DeclareBid(character="a", challenge="c1", round=1, value=14),
                               actor=A)
    assert violation.message == "bid 14 is above your cap of 12 (twice your 6 Physical traits) (MET-4)"
    assert_decides(given=given, when=DeclareBid(character="a", challenge="c1", round=1, value=12), actor=A,
                   then=[BidDeclared(challenge="c1", round=1, character="a", value=12)])


def test_met_4_lying_downward_is_accepted():
    assert_decides(given=TIED, when=DeclareBid(character="a", challenge="c1", round=1, value=5), actor=A,
                   then=[BidDeclared(challenge="c1", round=1, character="a", value=5)])


def test_met_4_lying_upward_is_cheating_and_refused():
    assert_refuses(given=TIED, when=DeclareBid(character="a", challenge="c1", round=1, value=9), actor=A,
                   match="above your true 8 (Physical 6 + Melee 2)")


def test_met_4_malus_traits_lower_the_truth():
    hurt = MetSheet(physical=6, bonus={"physical": -2})
    given = roster(a=hurt, b=B7) + [classic()] + thrown("c1", 1, a="rock", b="rock")
    assert_refuses(given=given, when=DeclareBid(character="a", challenge="c1", round=1, value=5), actor=A,
                   match="true 4")


# ---------------------------------------------------------------- MET-5


def test_met_5_zero_traits_or_less_loses_automatically():
    given = roster(a=MetSheet(physical=0), b=B7)
    assert_decides(
        given=given, when=IssueChallenge(character="b", defender="a", attribute="physical"), actor=B,
        then=[
            classic(initiator="b", defender="a"),
            RoundWon(challenge="c1", round=1, winner="b", loser="a", by="zero_traits"),
            ChallengeResolved(challenge="c1", winner="b", loser="a", reason="zero_traits"),
        ],
    )


def test_met_5_applies_to_a_static_test_too():
    given = roster(a=MetSheet(physical=5, mental=-1))
    events = decide_after(given, IssueChallenge(character="a", kind="static", attribute="mental", difficulty=2),
                          actor=A)
    assert events[-1] == ChallengeResolved(challenge="c1", winner="storyteller", loser="a", reason="zero_traits")


# ---------------------------------------------------------------- MET-6


def test_met_6_without_the_sheet_at_hand_a_participant_loses_ties_at_once():
    given = DUEL + [NoSheetMarked(character="b"), classic(),
                    ThrowCommitted(challenge="c1", round=1, character="a", choice="rock")]
    assert_decides(
        given=given, when=Throw(character="b", challenge="c1", round=1, choice="rock"), actor=B,
        then=[
            ThrowCommitted(challenge="c1", round=1, character="b", choice="rock"),
            ThrowsRevealed(challenge="c1", round=1, throws={"a": "rock", "b": "rock"}),
            RoundWon(challenge="c1", round=1, winner="a", loser="b", by="no_sheet"),
        ],
    )


def test_met_6_both_without_sheet_bid_as_usual():
    given = DUEL + [NoSheetMarked(character="a"), NoSheetMarked(character="b"), classic(),
                    ThrowCommitted(challenge="c1", round=1, character="a", choice="rock")]
    events = assert_decides(given=given, when=Throw(character="b", challenge="c1", round=1, choice="rock"), actor=B,
                            then=[ThrowCommitted(challenge="c1", round=1, character="b", choice="rock"),
                                  ThrowsRevealed(challenge="c1", round=1, throws={"a": "rock", "b": "rock"})])
    assert game.fold(given + events).met.challenges["c1"].status == "bidding"


def test_met_6_a_sheet_at_hand_again_bids_as_usual():
    given = DUEL + [NoSheetMarked(character="b"), NoSheetMarked(character="b", no_sheet=False), classic(),
                    ThrowCommitted(challenge="c1", round=1, character="a", choice="rock")]
    assert decide_after(given, Throw(character="b", challenge="c1", round=1, choice="rock"), actor=B)[1:] == [
        ThrowsRevealed(challenge="c1", round=1, throws={"a": "rock", "b": "rock"})]


# ---------------------------------------------------------------- MET-7


def test_met_7_a_participant_may_choose_to_lose():
    assert_decides(
        given=DUEL + [classic()], when=Concede(character="b", challenge="c1"), actor=B,
        then=[
            ChallengeConceded(challenge="c1", character="b"),
            ChallengeResolved(challenge="c1", winner="a", loser="b", reason="conceded"),
        ],
    )


def test_met_7_except_the_defender_of_a_static_challenge():
    trap = ChallengeIssued(challenge="c1", kind="static", initiator="Trap", defender="a", tested="a",
                           attribute="physical", difficulty=4)
    assert_refuses(given=roster(a=A6) + [trap], when=Concede(character="a", challenge="c1"), actor=A,
                   match="MET-7")
    assert_decides(
        given=roster(a=A6), when=IssueChallenge(character="Trap", kind="static", defender="a", attribute="physical",
                                                difficulty=4),
        then=[trap],
    )


def test_met_7_the_initiator_of_a_static_challenge_may_concede():
    given = roster(a=A6) + [static()]
    assert decide_after(given, Concede(character="a", challenge="c1"), actor=A)[-1].loser == "a"


# ---------------------------------------------------------------- MET-8


def test_met_8_one_challenge_settles_both_same_attribute_actions():
    given = window(mutual=True)
    assert_decides(
        given=given, when=Accept(character="a", challenge="c1"), actor=A,
        then=[ChallengeResolved(challenge="c1", winner="b", loser="a", reason="accepted", mutual=True)],
    )


def test_met_8_different_attributes_are_separate_challenges():
    assert_refuses(
        given=DUEL,
        when=IssueChallenge(character="a", defender="b", attribute="physical", defender_attribute="mental",
                            mutual=True),
        actor=A, match="MET-8",
    )


def test_met_8_a_classic_challenge_names_a_defender():
    assert_refuses(given=DUEL, when=IssueChallenge(character="a", attribute="physical"), actor=A, match="MET-8")


def test_met_8_player_against_an_antagonist_played_by_the_storyteller():
    given = roster(a=A6) + [classic(defender="Sheriff")] + thrown("c1", 1, a="rock", Sheriff="rock") + [
        BidDeclared(challenge="c1", round=1, character="a", value=8)
    ]
    assert decide_after(given, DeclareBid(character="Sheriff", challenge="c1", round=1, value=10))[-1] == RoundWon(
        challenge="c1", round=1, winner="Sheriff", loser="a", by="bid"
    )


# ---------------------------------------------------------------- MET-10 static


def test_met_10_static_tie_lost_when_declared_is_at_most_the_difficulty():
    given = roster(a=A6) + [static(difficulty=6)] + thrown("c1", 1, a="rock", storyteller="rock")
    assert decide_after(given, DeclareBid(character="a", challenge="c1", round=1, value=6), actor=A)[-2:] == [
        BidsCompared(challenge="c1", round=1, winner="storyteller"),
        RoundWon(challenge="c1", round=1, winner="storyteller", loser="a", by="difficulty"),
    ]


def test_met_10_only_the_tested_character_declares():
    given = roster(a=A6) + [static()] + thrown("c1", 1, a="rock", storyteller="rock")
    assert_refuses(given=given, when=DeclareBid(character="storyteller", challenge="c1", round=1, value=3),
                   match="MET-10")


def test_met_10_successive_static_tests_must_all_be_won():
    given = roster(a=A6) + [static(tests=2), ThrowCommitted(challenge="c1", round=1, character="a", choice="rock")]
    events = decide_after(given, Throw(character="storyteller", challenge="c1", round=1, choice="scissors"))
    assert events[-2:] == [
        RoundWon(challenge="c1", round=1, winner="a", loser="storyteller", by="throw"),
        RoundStarted(challenge="c1", round=2, test=2, reason="next_test"),
    ]


def test_met_10_a_storyteller_winning_a_static_test_is_final_when_the_player_cannot_retest():
    bare = MetSheet(physical=4)
    given = roster(a=bare) + [static(), ThrowCommitted(challenge="c1", round=1, character="a", choice="paper")]
    assert decide_after(given, Throw(character="storyteller", challenge="c1", round=1, choice="scissors"))[-1] == (
        ChallengeResolved(challenge="c1", winner="storyteller", loser="a", reason="final")
    )


# ---------------------------------------------------------------- MET-11 simple and complex


def simple_tie(kind: str) -> list:
    given = roster(a=A6) + [
        ChallengeIssued(challenge="c1", kind=kind, initiator="a", defender="storyteller", tested="a"),
        ThrowCommitted(challenge="c1", round=1, character="a", choice="rock"),
    ]
    return decide_after(given, Throw(character="storyteller", challenge="c1", round=1, choice="rock"))


def test_met_11_the_player_wins_ties_of_a_simple_test():
    assert simple_tie("simple")[2] == RoundWon(challenge="c1", round=1, winner="a", loser="storyteller",
                                               by="simple_tie")


def test_met_11_the_player_loses_ties_of_a_complex_test():
    assert simple_tie("complex")[2] == RoundWon(challenge="c1", round=1, winner="storyteller", loser="a",
                                                by="complex_tie")


def test_met_11_simple_tests_use_no_traits():
    assert_refuses(given=roster(a=A6), when=IssueChallenge(character="a", kind="simple", attribute="mental"),
                   actor=A, match="MET-11")


def test_met_11_every_successive_test_must_be_won():
    issued = ChallengeIssued(challenge="c1", kind="simple", initiator="a", defender="storyteller", tested="a", tests=2)
    given = roster(a=A6) + [issued] + won_on_throw("c1", 1, "a", "storyteller") + [
        RoundStarted(challenge="c1", round=2, test=2, reason="next_test")
    ] + [ThrowCommitted(challenge="c1", round=2, character="a", choice="rock")]
    events = decide_after(given, Throw(character="storyteller", challenge="c1", round=2, choice="paper"))
    assert events[2] == RoundWon(challenge="c1", round=2, winner="storyteller", loser="a", by="throw")
    won_both = decide_after(given, Throw(character="storyteller", challenge="c1", round=2, choice="scissors"))
    assert won_both[-1] == ChallengeResolved(challenge="c1", winner="a", loser="storyteller", reason="final")


# ---------------------------------------------------------------- MET-12 retests


def test_met_12_the_loser_retests_naming_its_source_and_the_challenge_is_redone():
    assert_decides(
        given=window(), when=Retest(character="a", challenge="c1", source="Melee"), actor=A,
        then=[
            RetestTaken(challenge="c1", character="a", source="Melee", round=1),
            RoundStarted(challenge="c1", round=2, test=1, reason="retest"),
        ],
    )


def test_met_12_one_retest_per_character_per_challenge():
    given = window() + [RetestTaken(challenge="c1", character="a", source="Melee", round=1),
                        RoundStarted(challenge="c1", round=2, reason="retest")] + won_on_throw("c1", 2, "b", "a")
    assert_refuses(given=given, when=Retest(character="a", challenge="c1", source="Melee"), actor=A,
                   match="one retest per character per challenge")


def test_met_12_the_source_must_be_on_the_sheet():
    assert_refuses(given=window(), when=Retest(character="a", challenge="c1", source="Fortitude"), actor=A,
                   match="MET-12")


def test_met_12_only_the_loser_retests():
    assert_refuses(given=window(), when=Retest(character="b", challenge="c1", source="Dodge"), actor=B,
                   match="only the loser")


def lucky_static(kind="static"):
    lucky = MetSheet(physical=5, abilities={"Athletics": 1}, merits=("Lucky",))
    issued = static() if kind == "static" else ChallengeIssued(
        challenge="c1", kind=kind, initiator="a", defender="storyteller", tested="a")
    given = roster(a=lucky) + [issued] + won_on_throw("c1", 1, "storyteller", "a") + [
        RetestTaken(challenge="c1", character="a", source="Athletics", round=1),
        RoundStarted(challenge="c1", round=2, reason="retest"),
    ] + won_on_throw("c1", 2, "storyteller", "a")
    return given


def test_met_12_lucky_allows_a_second_retest_on_a_static_challenge():
    events = decide_after(lucky_static(), Retest(character="a", challenge="c1", source="Lucky"), actor=A)
    assert events[0] == RetestTaken(challenge="c1", character="a", source="Lucky", round=2)


def test_met_12_lucky_gives_no_second_retest_outside_static_challenges():
    assert_refuses(given=lucky_static("simple"), when=Retest(character="a", challenge="c1", source="Lucky"),
                   actor=A, match="Lucky allows a second on a static challenge only (MET-12)")


# ---------------------------------------------------------------- MET-13 overbid


def test_met_13_an_overbid_four_traits_above_the_winner_gets_a_retest():
    strong = MetSheet(physical=10)
    weak = MetSheet(physical=5)
    given = window(roster(a=strong, b=weak))
    [declared] = assert_decides(given=given, when=Overbid(character="a", challenge="c1", value=10), actor=A,
                                then=[OverbidDeclared(challenge="c1", character="a", value=10)])
    assert declared.redacted().value is None
    assert_decides(
        given=given + [declared], when=DeclareBid(character="b", challenge="c1", round=1, value=5), actor=B,
        then=[
            BidDeclared(challenge="c1", round=1, character="b", value=5, overbid=True),
            OverbidSettled(challenge="c1", character="a", opponent="b", granted=True),
            RoundStarted(challenge="c1", round=2, test=1, reason="overbid"),
        ],
    )


def test_met_13_a_failed_overbid_loses_and_owes_the_next_tie():
    given = window() + [OverbidDeclared(challenge="c1", character="a", value=8)]
    assert_decides(
        given=given, when=DeclareBid(character="b", challenge="c1", round=1, value=7), actor=B,
        then=[
            BidDeclared(challenge="c1", round=1, character="b", value=7, overbid=True),
            OverbidSettled(challenge="c1", character="a", opponent="b", granted=False),
            TieDebtIncurred(debtor="a", creditor="b", challenge="c1"),
            ChallengeResolved(challenge="c1", winner="b", loser="a", reason="overbid_failed"),
        ],
    )


def test_met_13_the_loser_announces_first():
    assert_refuses(given=window(), when=DeclareBid(character="b", challenge="c1", round=1, value=7), actor=B,
                   match="MET-3")


def test_met_13_an_overbid_needs_a_loss_on_the_throw():
    given = TIED + [BidDeclared(challenge="c1", round=1, character="a", value=8),
                    BidDeclared(challenge="c1", round=1, character="b", value=9),
                    RoundWon(challenge="c1", round=1, winner="b", loser="a", by="bid")]
    assert_refuses(given=given, when=Overbid(character="a", challenge="c1", value=8), actor=A, match="lost on the throw")


def test_met_13_the_overbid_score_is_checked_against_the_sheet():
    assert_refuses(given=window(), when=Overbid(character="a", challenge="c1", value=9), actor=A, match="MET-4")


DEBT = [TieDebtIncurred(debtor="a", creditor="b", challenge="c1")]


def test_met_13_the_debtor_loses_its_next_tie_against_that_opponent_and_pays():
    given = DUEL + DEBT + [classic(challenge="c2"),
                           ThrowCommitted(challenge="c2", round=1, character="a", choice="paper")]
    assert_decides(
        given=given, when=Throw(character="b", challenge="c2", round=1, choice="paper"), actor=B,
        then=[
            ThrowCommitted(challenge="c2", round=1, character="b", choice="paper"),
            ThrowsRevealed(challenge="c2", round=1, throws={"a": "paper", "b": "paper"}),
            TieDebtPaid(debtor="a", creditor="b", challenge="c2"),
            RoundWon(challenge="c2", round=1, winner="b", loser="a", by="tie_debt"),
        ],
    )
    paid = given + decide_after(given, Throw(character="b", challenge="c2", round=1, choice="paper"), actor=B)
    assert game.fold(paid).met.debts == ()


def test_met_13_the_debt_is_not_owed_to_another_opponent():
    given = roster(a=A6, b=B7, c=B7) + DEBT + [classic(challenge="c2", defender="c"),
                                                ThrowCommitted(challenge="c2", round=1, character="a", choice="paper")]
    events = assert_decides(
        given=given, when=Throw(character="c", challenge="c2", round=1, choice="paper"), actor=player("c"),
        then=[ThrowCommitted(challenge="c2", round=1, character="c", choice="paper"),
              ThrowsRevealed(challenge="c2", round=1, throws={"a": "paper", "c": "paper"})],
    )
    state = game.fold(given + events)
    assert state.met.challenges["c2"].status == "bidding"
    assert state.met.debts == (TieDebt(debtor="a", creditor="b", challenge="c1"),)


def test_met_13_a_debt_is_owed_whichever_side_the_debtor_takes():
    given = DUEL + DEBT + [classic(challenge="c2", initiator="b", defender="a"),
                           ThrowCommitted(challenge="c2", round=1, character="b", choice="paper")]
    assert decide_after(given, Throw(character="a", challenge="c2", round=1, choice="paper"), actor=A)[2:] == [
        TieDebtPaid(debtor="a", creditor="b", challenge="c2"),
        RoundWon(challenge="c2", round=1, winner="b", loser="a", by="tie_debt"),
    ]


def test_met_13_the_debt_lasts_across_sessions_of_the_chronicle():
    """TIME-2 too: the debt a failed overbid incurred last night is carried into tonight's
    session and paid by its first tie against that opponent."""
    from conteur.events.met import carry_over

    given = window(roster(a=MetSheet(physical=10), b=MetSheet(physical=10)))
    given += decide_after(given, Overbid(character="a", challenge="c1", value=10), actor=A)
    given += decide_after(given, DeclareBid(character="b", challenge="c1", round=1, value=10), actor=B)
    assert TieDebtIncurred(debtor="a", creditor="b", challenge="c1") in given  # decided, not given
    last_night = game.fold(given)
    tonight = [SessionOpened(carried=carry_over(last_night))] + DUEL[1:] + [classic(challenge="c1")]
    events = decide_after(tonight + [ThrowCommitted(challenge="c1", round=1, character="a", choice="rock")],
                          Throw(character="b", challenge="c1", round=1, choice="rock"), actor=B)
    assert TieDebtPaid(debtor="a", creditor="b", challenge="c1") in events
    assert carry_over(last_night) == Carried(tie_debts=(TieDebt(debtor="a", creditor="b", challenge="c1"),))


# ---------------------------------------------------------------- MET-14


def test_met_14_one_overbid_per_character_per_challenge():
    strong, weak = MetSheet(physical=10), MetSheet(physical=5)
    given = window(roster(a=strong, b=weak)) + [
        OverbidDeclared(challenge="c1", character="a", value=10),
        BidDeclared(challenge="c1", round=1, character="b", value=5, overbid=True),
        OverbidSettled(challenge="c1", character="a", opponent="b", granted=True),
        RoundStarted(challenge="c1", round=2, reason="overbid"),
    ] + won_on_throw("c1", 2, "b", "a")
    assert_refuses(given=given, when=Overbid(character="a", challenge="c1", value=10), actor=A, match="MET-14")


def test_met_14_several_participants_may_each_overbid():
    strong = MetSheet(physical=10)
    given = roster(a=strong, b=strong) + [classic()] + won_on_throw("c1", 1, "b", "a") + [
        OverbidDeclared(challenge="c1", character="a", value=10),
        BidDeclared(challenge="c1", round=1, character="b", value=2, overbid=True),
        OverbidSettled(challenge="c1", character="a", opponent="b", granted=True),
        RoundStarted(challenge="c1", round=2, reason="overbid"),
    ] + won_on_throw("c1", 2, "a", "b")
    assert_decides(given=given, when=Overbid(character="b", challenge="c1", value=10), actor=B,
                   then=[OverbidDeclared(challenge="c1", character="b", value=10)])


# ---------------------------------------------------------------- MET-15


def test_met_15_the_server_checks_declarations_against_the_true_sheet():
    # Brawl is on b's sheet but does not apply to this challenge: it does not count
    given = DUEL + [classic(defender_abilities=("Dodge",))] + thrown("c1", 1, a="rock", b="rock") + [
        BidDeclared(challenge="c1", round=1, character="a", value=6)
    ]
    assert_refuses(given=given, when=DeclareBid(character="b", challenge="c1", round=1, value=9), actor=B,
                   match="true 8 (Physical 7 + Dodge 1)")


def test_met_15_a_player_without_a_sheet_on_file_does_not_declare_alone():
    given = roster() + [CharacterAdded(character="a", name="A", sheet=None)]
    given += [classic(defender="Ghoul")] + thrown("c1", 1, a="rock", Ghoul="rock")
    assert_refuses(given=given, when=DeclareBid(character="a", challenge="c1", round=1, value=3), actor=A,
                   match="MET-15")
    assert decide_after(given, DeclareBid(character="a", challenge="c1", round=1, value=3))  # a storyteller may


# ---------------------------------------------------------------- MET-16 end of a challenge


def test_met_16_the_loser_accepts_and_the_outcome_stands():
    given = window()
    assert open_windows(game.fold(given)) == ("c1",)
    assert_decides(given=given, when=Accept(character="a", challenge="c1"), actor=A,
                   then=[ChallengeResolved(challenge="c1", winner="b", loser="a", reason="accepted")])
    assert_refuses(given=given, when=Accept(character="b", challenge="c1"), actor=B, match="MET-16")


def test_met_16_a_storyteller_closes_the_window():
    assert_decides(given=window(), when=CloseWindow(challenge="c1"),
                   then=[ChallengeResolved(challenge="c1", winner="b", loser="a", reason="window_closed")])
    assert_refuses(given=window(), when=CloseWindow(challenge="c1"), actor=A, code="forbidden")


def test_met_16_the_window_closes_after_the_session_timeout():
    assert game.fold(DUEL).session.options.accept_timeout == 60
    assert_decides(given=window(), when=CloseWindow(challenge="c1", timeout=True),
                   then=[ChallengeResolved(challenge="c1", winner="b", loser="a", reason="timeout")])


def test_met_16_nothing_more_once_resolved():
    given = window() + [ChallengeResolved(challenge="c1", winner="b", loser="a", reason="accepted")]
    assert_refuses(given=given, when=Retest(character="a", challenge="c1", source="Melee"), actor=A, match="resolved")


def test_met_16_a_storyteller_cancels_a_challenge():
    given = DUEL + [classic()]
    assert_decides(given=given, when=CancelChallenge(challenge="c1", reason="wrong target"),
                   then=[ChallengeCancelled(challenge="c1", reason="wrong target")])
    assert_refuses(given=given + [ChallengeCancelled(challenge="c1")],
                   when=Throw(character="a", challenge="c1", round=1, choice="rock"), actor=A, match="cancelled")


def test_met_16_a_storyteller_overrules_and_the_history_stays_in_the_log():
    given = window() + [ChallengeResolved(challenge="c1", winner="b", loser="a", reason="accepted")]
    events = assert_decides(
        given=given, when=Overrule(challenge="c1", winner="a", reason="B was paralysed"),
        then=[ChallengeOverruled(challenge="c1", winner="a", loser="b", previous_winner="b", reason="B was paralysed")],
    )
    challenge = game.fold(given + events).met.challenges["c1"]
    assert (challenge.status, challenge.winner, challenge.loser, challenge.reason) == ("resolved", "a", "b", "overruled")
    assert_refuses(given=given, when=Overrule(challenge="c1", winner="a"), actor=A, code="forbidden")


# ---------------------------------------------------------------- chronicle options


BOMBER = MetSheet(physical=6, bomb=True)


def test_met_option_bomb_is_off_by_default():
    assert_refuses(given=roster(a=BOMBER, b=B7) + [classic()],
                   when=Throw(character="a", challenge="c1", round=1, choice="bomb"), actor=A, match="without the bomb")


@pytest.mark.parametrize("other, winner", [("rock", "a"), ("paper", "a"), ("scissors", "b"), ("bomb", None)])
def test_met_option_bomb_beats_rock_and_paper_loses_to_scissors_ties_bomb(other, winner):
    given = roster(MetOptions(bomb=True), a=BOMBER, b=BOMBER) + [
        classic(), ThrowCommitted(challenge="c1", round=1, character="b", choice=other)]
    events = decide_after(given, Throw(character="a", challenge="c1", round=1, choice="bomb"), actor=A)
    assert events[1] == ThrowsRevealed(challenge="c1", round=1, throws={"a": "bomb", "b": other}, winner=winner)
    if winner is not None:
        assert events[-1] == RoundWon(challenge="c1", round=1, winner=winner, loser="ab".replace(winner, ""),
                                      by="throw")


def test_met_option_bomb_only_for_characters_whose_power_grants_it():
    given = roster(MetOptions(bomb=True), a=BOMBER, b=B7) + [classic()]
    assert_refuses(given=given, when=Throw(character="b", challenge="c1", round=1, choice="bomb"), actor=B,
                   match="power grants it")


CANCEL = MetOptions(retest_cancel=True)


def retested(options=CANCEL):
    return window(roster(options, a=A6, b=B7)) + [
        RetestTaken(challenge="c1", character="a", source="Melee", round=1),
        RoundStarted(challenge="c1", round=2, reason="retest"),
    ]


def test_met_option_an_opponent_cancels_a_retest_with_its_own():
    assert_decides(
        given=retested(), when=Retest(character="b", challenge="c1", source="Dodge", cancels=True), actor=B,
        then=[
            RetestCancelled(challenge="c1", character="b", source="Dodge", cancelled="a"),
            RoundWon(challenge="c1", round=1, winner="b", loser="a", by="throw"),
        ],
    )


def test_met_option_retest_cancel_is_off_by_default():
    assert_refuses(given=retested(MetOptions()), when=Retest(character="b", challenge="c1", source="Dodge",
                                                             cancels=True), actor=B, match="does not let")


def test_met_option_no_cancel_once_the_new_round_is_thrown():
    given = retested() + [ThrowCommitted(challenge="c1", round=2, character="a", choice="rock")]
    assert_refuses(given=given, when=Retest(character="b", challenge="c1", source="Dodge", cancels=True), actor=B,
                   match="no opponent's retest")


def test_met_16_no_timeout_during_a_time_out_but_a_storyteller_may_still_close():
    from conteur.events.session import TimeOutCalled

    given = window() + [TimeOutCalled(scope="scene", scene="s1")]
    assert_refuses(given=given, when=CloseWindow(challenge="c1", timeout=True), code="frozen", match="TIME-5")
    assert decide_after(given, CloseWindow(challenge="c1"))[-1].reason == "window_closed"


def test_met_16_no_window_to_close_while_throwing():
    assert_refuses(given=DUEL + [classic()], when=CloseWindow(challenge="c1"), match="MET-16")


def test_met_8_a_player_challenges_only_characters_of_the_roster_in_its_scene():
    from conteur.events.session import SceneJoined, SceneOpened

    assert_refuses(given=DUEL, when=IssueChallenge(character="a", defender="Ghoul", attribute="physical"), actor=A,
                   code="not_found")
    elsewhere = DUEL + [SceneOpened(scene="s2", name="Docks"), SceneJoined(character="b", scene="s2")]
    assert_refuses(given=elsewhere, when=IssueChallenge(character="a", defender="b", attribute="physical"), actor=A,
                   match="not in your scene")


def test_met_13_no_overbid_against_a_difficulty():
    given = roster(a=A6) + [static()] + won_on_throw("c1", 1, "storyteller", "a")
    assert_refuses(given=given, when=Overbid(character="a", challenge="c1", value=6), actor=A, match="classic")


def test_met_12_a_storyteller_retests_for_an_antagonist():
    given = roster(a=A6) + [classic(defender="Sheriff")] + won_on_throw("c1", 1, "a", "Sheriff")
    assert decide_after(given, Retest(character="Sheriff", challenge="c1", source="Fortitude"))[0] == RetestTaken(
        challenge="c1", character="Sheriff", source="Fortitude", round=1
    )


def test_met_13_each_tie_pays_one_debt():
    given = DUEL + DEBT + [TieDebtIncurred(debtor="a", creditor="b", challenge="c5"), classic(challenge="c2")]
    given += thrown("c2", 1, a="rock", b="rock")
    assert len(game.fold(given).met.debts) == 2  # the given reveal does not pay: the decider does
    events = decide_after(given[:-2], Throw(character="b", challenge="c2", round=1, choice="rock"), actor=B)
    assert [e for e in events if isinstance(e, TieDebtPaid)] == [TieDebtPaid(debtor="a", creditor="b", challenge="c2")]
    assert len(game.fold(given[:-2] + events).met.debts) == 1


def test_met_13_mutual_debts_cancel_and_the_tie_goes_to_bids():
    given = DUEL + DEBT + [TieDebtIncurred(debtor="b", creditor="a", challenge="c5"), classic(challenge="c2"),
                           ThrowCommitted(challenge="c2", round=1, character="a", choice="rock")]
    events = decide_after(given, Throw(character="b", challenge="c2", round=1, choice="rock"), actor=B)
    assert events[2:] == [TieDebtPaid(debtor="a", creditor="b", challenge="c2"),
                          TieDebtPaid(debtor="b", creditor="a", challenge="c2")]
    state = game.fold(given + events)
    assert state.met.debts == () and state.met.challenges["c2"].status == "bidding"


# ---------------------------------------------------------------- who acts, who may be challenged


PACED = DUEL + [TurnAdvanced(turn=1, game_seconds=4, scene="s1")]  # s1 is played turn by turn


def test_time_4_a_challenge_spends_its_initiator_s_action_and_a_mutual_one_its_defender_s_too():  # MET-8
    challenge = IssueChallenge(character="a", defender="b", attribute="physical")
    refused = assert_refuses(given=PACED + [ActionTaken(character="a", turn=1)], when=challenge, actor=A, code="rule")
    assert (refused.rule, refused.message) == ("TIME-4", "A has used its 1 action this turn (TIME-4)")
    b_acted = PACED + [ActionTaken(character="b", turn=1)]
    assert decide_after(b_acted, challenge, actor=A) == [classic()]  # b only defends: no action of its own
    refused = assert_refuses(given=b_acted, when=IssueChallenge(character="a", defender="b", attribute="physical",
                                                                mutual=True), actor=A, code="rule")
    assert (refused.rule, refused.message) == ("TIME-4", "B has used its 1 action this turn (TIME-4)")


def test_time_5_a_player_cannot_challenge_a_character_frozen_in_another_scene():
    given = DUEL + [SceneOpened(scene="s2", name="Docks"), SceneJoined(character="b", scene="s2"),
                    TimeOutCalled(scope="scene", scene="s2")]
    refused = assert_refuses(given=given, when=IssueChallenge(character="a", defender="b", attribute="physical"),
                             actor=A, code="frozen")
    assert (refused.rule, refused.message) == (
        "TIME-5", "Time Out: scene 'Docks' is frozen until a storyteller resumes (TIME-5)")


def test_met_9_an_antagonist_off_the_roster_acts_with_no_traits():
    assert initiative_order(game.fold(DUEL), [("Ghoul", "physical"), ("a", "physical")]) == [
        (("a", "physical"),), (("Ghoul", "physical"),)]


# ---------------------------------------------------------------- what each ending carries


def test_met_3_a_storyteller_names_the_defender_s_abilities_with_the_challenge():
    assert_decides(given=DUEL, when=IssueChallenge(character="a", defender="b", attribute="physical",
                                                   defender_abilities=("Brawl",)),
                   then=[classic(defender_abilities=("Brawl",))])


def test_met_5_a_mutual_challenge_lost_on_zero_traits_settles_both_actions():  # MET-8
    given = roster(a=A6, b=MetSheet(physical=0))
    events = decide_after(given, IssueChallenge(character="a", defender="b", attribute="physical", mutual=True),
                          actor=A)
    assert events[1:] == [RoundWon(challenge="c1", round=1, winner="a", loser="b", by="zero_traits"),
                          ChallengeResolved(challenge="c1", winner="a", loser="b", reason="zero_traits", mutual=True)]


def test_met_13_a_failed_overbid_in_a_mutual_challenge_settles_both_actions():  # MET-8
    given = window(mutual=True) + [OverbidDeclared(challenge="c1", character="a", value=6)]
    events = decide_after(given, DeclareBid(character="b", challenge="c1", round=1, value=3), actor=B)
    assert events[-1] == ChallengeResolved(challenge="c1", winner="b", loser="a", reason="overbid_failed", mutual=True)


def test_met_13_a_storyteller_answers_an_overbid_for_an_antagonist_without_a_sheet():
    given = roster(a=A6) + [classic(defender="Ghoul")] + won_on_throw("c1", 1, "Ghoul", "a") + [
        OverbidDeclared(challenge="c1", character="a", value=6)]
    assert_decides(given=given, when=DeclareBid(character="Ghoul", challenge="c1", round=1, value=2), then=[
        BidDeclared(challenge="c1", round=1, character="Ghoul", value=2, overbid=True),
        OverbidSettled(challenge="c1", character="a", opponent="Ghoul", granted=True),
        RoundStarted(challenge="c1", round=2, test=1, reason="overbid"),
    ])


def test_met_12_a_retest_of_the_second_successive_test_redoes_that_test():  # MET-10
    given = roster(a=A6) + [static(tests=2)] + won_on_throw("c1", 1, "a", "storyteller") + [
        RoundStarted(challenge="c1", round=2, test=2, reason="next_test")] + won_on_throw("c1", 2, "storyteller", "a")
    assert_decides(given=given, when=Retest(character="a", challenge="c1", source="Melee"), actor=A, then=[
        RetestTaken(challenge="c1", character="a", source="Melee", round=2),
        RoundStarted(challenge="c1", round=3, test=2, reason="retest"),
    ])


def test_met_15_a_sheet_of_another_ruleset_is_no_mind_s_eye_sheet_to_check():
    # n, without a sheet when the challenge began, has since been given a V5 one: it counts no Mind's Eye traits,
    # so a storyteller declares for it as for a side without a sheet
    given = roster(a=A6) + [CharacterAdded(character="n", name="N"), SceneJoined(character="n", scene="s1"),
                            classic(initiator="n", defender="a")] + won_on_throw("c1", 1, "a", "n") + [
        SheetAmended(character="n", sheet=V5Sheet())]
    assert_decides(given=given, when=Overbid(character="n", challenge="c1", value=3),
                   then=[OverbidDeclared(challenge="c1", character="n", value=3)])


def test_met_16_a_window_with_an_overbid_unanswered_still_closes():
    given = window() + [OverbidDeclared(challenge="c1", character="a", value=6)]
    assert open_windows(game.fold(given)) == ("c1",)
    assert_decides(given=given, when=CloseWindow(challenge="c1", timeout=True),
                   then=[ChallengeResolved(challenge="c1", winner="b", loser="a", reason="timeout")])


def test_met_16_a_cancelled_group_cancels_its_pairs_saying_so():
    from tests.support.met_support import ISSUED, TWO

    events = decide_after(TWO + [ISSUED], CancelChallenge(challenge="c1"))
    state = game.fold(TWO + [ISSUED] + events)
    assert [(state.met.get(c).status, state.met.get(c).reason) for c in ("c1", "c1.1", "c1.2")] == [
        ("cancelled", "cancelled")] * 3


# ---------------------------------------------------------------- a new round starts clean
# what a storyteller's audit and the phones show of a challenge: the round's bids, an overbid pending


def test_met_3_equal_bids_start_a_round_with_no_bid_declared_yet():
    given = TIED + [BidDeclared(challenge="c1", round=1, character="a", value=6)]
    events = decide_after(given, DeclareBid(character="b", challenge="c1", round=1, value=6), actor=B)
    assert events[-1] == RoundStarted(challenge="c1", round=2, test=1, reason="equal_bids")
    ch = game.fold(given + events).met.get("c1")
    assert (ch.round, ch.status, ch.throws, ch.bids) == (2, "throwing", {}, {})


def test_met_13_a_granted_overbid_s_round_has_no_overbid_pending():
    given = window() + [OverbidDeclared(challenge="c1", character="a", value=6)]
    events = decide_after(given, DeclareBid(character="b", challenge="c1", round=1, value=2), actor=B)
    assert events[-1] == RoundStarted(challenge="c1", round=2, test=1, reason="overbid")
    ch = game.fold(given + events).met.get("c1")
    assert (ch.round, ch.status, ch.bids, ch.overbid_value, ch.overbids) == (2, "throwing", {}, None, ("a",))


def test_met_12_option_a_lucky_character_s_cancelling_retest_is_its_second():
    # a retests the trap's win, wins the retest's round; the trap retests that, and a cancels it with Lucky:
    # a has spent both of its retests of this static challenge, the trap its one
    from tests.support.met_support import play

    lucky = MetSheet(physical=5, abilities={"Athletics": 1}, merits=("Lucky",))

    def throws(round, trap, a):
        return [(Throw(character="Trap", challenge="c1", round=round, choice=trap), STORYTELLER),
                (Throw(character="a", challenge="c1", round=round, choice=a), A)]

    events = play(
        roster(CANCEL, a=lucky),
        (IssueChallenge(character="Trap", defender="a", kind="static", attribute="physical", difficulty=5),
         STORYTELLER),
        *throws(1, "rock", "scissors"),
        (Retest(character="a", challenge="c1", source="Athletics"), A),
        *throws(2, "scissors", "rock"),
        (Retest(character="Trap", challenge="c1", source="Spring"), STORYTELLER),
        (Retest(character="a", challenge="c1", source="Lucky", cancels=True), A),
    )
    assert events[-3:] == [RetestCancelled(challenge="c1", character="a", source="Lucky", cancelled="Trap"),
                           RoundWon(challenge="c1", round=2, winner="a", loser="Trap", by="throw"),
                           ChallengeResolved(challenge="c1", winner="a", loser="Trap", reason="final")]
    assert game.fold(events).met.get("c1").retests == {"a": 2, "Trap": 1}
