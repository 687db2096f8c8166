"""Group challenges: one initiator against several defenders (MET-1 "un ou plusieurs"),
rule line by rule line (docs/rules-choices.md, "Group challenges"), given / when / then."""

from __future__ import annotations

from conteur.events import game
from conteur.events.met import (
    Accept,
    BidDeclared,
    BidsCompared,
    CancelChallenge,
    ChallengeCancelled,
    ChallengeIssued,
    ChallengeOverruled,
    ChallengeResolved,
    CloseWindow,
    Concede,
    ChallengeConceded,
    DeclareBid,
    GroupChallengeIssued,
    GroupSettled,
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
    open_windows,
)
from conteur.events.met_rules import GROUP_DEFENDERS, MetOptions
from conteur.events.model import STORYTELLER
from conteur.events.session import CharacterAdded, SceneJoined, SceneOpened
from conteur.events.sheets import MetSheet
from conteur.events.testing import assert_decides, assert_refuses, decide_after
from tests.support.met_support import A6, B7, play, player, roster

C5 = MetSheet(physical=5, social=3, mental=4, abilities={"Brawl": 1})
BIG = MetSheet(physical=10, social=3, mental=3, abilities={"Brawl": 2})
A, B, C, D = (player(x) for x in "abcd")
FOUR = roster(a=A6, b=B7, c=C5, d=C5)
THREE_AGAINST = IssueChallenge(character="a", defenders=("b", "c", "d"), attribute="physical")
ISSUED = GroupChallengeIssued(challenge="c1", initiator="a", defenders=("b", "c", "d"),
                              pairs=("c1.1", "c1.2", "c1.3"), attribute="physical")


def throw(who: str, choice: str, challenge: str = "c1", round: int = 1) -> tuple:
    return Throw(character=who, challenge=challenge, round=round, choice=choice), player(who)


# a beats b, ties c, loses to d on the first throw
ROUND_1 = play(FOUR + [ISSUED], throw("a", "rock"), throw("b", "scissors"), throw("c", "rock"), throw("d", "paper"))


def pair(events: list, challenge: str):
    return game.fold(events).met.get(challenge)


# ---------------------------------------------------------------- who takes part (MET-1)


def test_met_1_one_initiator_challenges_several_defenders_in_one_challenge():
    assert_decides(given=FOUR, when=THREE_AGAINST, actor=A, then=[ISSUED])
    state = game.fold(FOUR + [ISSUED])
    assert [state.met.get(p).defender for p in ISSUED.pairs] == ["b", "c", "d"]
    assert state.met.get("c1").status == "open"
    # the group's own record reads as its first pair (the review lists it with that pair's sides)
    assert state.met.get("c1").sides == ("a", "b")
    assert state.session.characters["a"].actions_used == 1  # one action of the turn (TIME-4)


def test_met_1_a_group_takes_one_challenge_number_its_pairs_numbered_inside_it():
    assert_decides(given=FOUR + [ISSUED], when=IssueChallenge(character="c", defender="d", attribute="physical"),
                   actor=C, then=[ChallengeIssued(challenge="c2", kind="classic", initiator="c", defender="d",
                                                  attribute="physical")])


def test_met_1_one_defender_in_defenders_is_the_challenge_of_two_sides():
    one = decide_after(FOUR, IssueChallenge(character="a", defenders=("b",), attribute="physical"), actor=A)
    assert one == decide_after(FOUR, IssueChallenge(character="a", defender="b", attribute="physical"), actor=A)
    assert one == [ChallengeIssued(challenge="c1", kind="classic", initiator="a", defender="b", attribute="physical")]


def test_met_1_two_defenders_make_a_group():
    [issued] = decide_after(FOUR, IssueChallenge(character="a", defenders=("b", "c"), attribute="physical"), actor=A)
    assert isinstance(issued, GroupChallengeIssued) and issued.pairs == ("c1.1", "c1.2")


def test_met_1_a_group_has_at_most_its_ruleset_number_of_defenders():
    names = [f"x{i}" for i in range(GROUP_DEFENDERS + 1)]
    given = roster(a=A6, **{n: C5 for n in names})
    [issued] = decide_after(given, IssueChallenge(character="a", defenders=tuple(names[:GROUP_DEFENDERS]),
                                                  attribute="physical"), actor=A)
    assert len(issued.defenders) == GROUP_DEFENDERS
    violation = assert_refuses(given=given, when=IssueChallenge(character="a", defenders=tuple(names),
                                                                attribute="physical"), actor=A, code="invalid")
    assert "defenders" in violation.message and f"at most {GROUP_DEFENDERS}" in violation.message


def test_met_1_a_group_names_each_defender_once_and_not_the_initiator():
    twice = assert_refuses(given=FOUR, when=IssueChallenge(character="a", defenders=("b", "b"),
                                                           attribute="physical"), actor=A, code="invalid")
    assert twice.message == "defenders: each character once"
    assert_refuses(given=FOUR, when=IssueChallenge(character="a", defenders=("b", "a"), attribute="physical"),
                   actor=A, code="invalid", match="cannot challenge itself")
    assert_refuses(given=FOUR, when=IssueChallenge(character="a", defender="b", defenders=("c", "d"),
                                                   attribute="physical"), actor=A, match="not both")


def test_met_1_a_characters_group_challenge_is_classic_and_never_mutual():
    """A static test against several characters is a storyteller's (test_met_group_static.py)."""
    assert_refuses(given=FOUR, when=IssueChallenge(character="a", kind="static", defenders=("b", "c"),
                                                   attribute="physical", difficulty=3), actor=A, match="classic")
    mutual = assert_refuses(given=FOUR, when=IssueChallenge(character="a", defenders=("b", "c"),
                                                            attribute="physical", mutual=True), actor=A)
    assert (mutual.message, mutual.rule) == (
        "one challenge settles both actions between two characters only (MET-8)", "MET-8")


def test_met_1_every_defender_is_checked_as_in_a_challenge_of_two():
    elsewhere = FOUR + [SceneOpened(scene="s2", name="Cellar"), SceneJoined(character="d", scene="s2")]
    assert_refuses(given=elsewhere, when=THREE_AGAINST, actor=A, match="TIME-2")
    assert_refuses(given=FOUR, when=IssueChallenge(character="a", defenders=("b", "zed"), attribute="physical"),
                   actor=A, code="not_found")


def test_met_1_a_group_carries_its_attributes_abilities_and_action_to_every_pair():
    """Example 2's shape: a Mental power resisted with Physical, against two defenders; the
    storyteller names the defenders' abilities (a player cannot: MET-3)."""
    [issued] = assert_decides(
        given=FOUR,
        when=IssueChallenge(character="a", defenders=("b", "c"), attribute="mental", defender_attribute="physical",
                            abilities=("Melee",), defender_abilities=("Brawl",), action="a psychic shove"),
        then=[GroupChallengeIssued(challenge="c1", initiator="a", defenders=("b", "c"), pairs=("c1.1", "c1.2"),
                                   attribute="mental", defender_attribute="physical", abilities=("Melee",),
                                   defender_abilities=("Brawl",), action="a psychic shove")],
    )
    state = game.fold(FOUR + [issued])
    for p in issued.pairs:
        ch = state.met.get(p)
        assert (ch.kind, ch.attribute, ch.attribute_of(ch.defender), ch.abilities, ch.defender_abilities) == (
            "classic", "mental", "physical", ("Melee",), ("Brawl",))
        assert ch.tested is None  # a classic pair tests no one against the storyteller (MET-10)


def test_met_10_a_classic_group_faces_no_difficulty():
    [issued] = decide_after(FOUR, IssueChallenge(character="a", defenders=("b", "c"), attribute="physical",
                                                 difficulty=3), actor=A)
    assert issued.difficulty == 0  # a difficulty is a static test's (test_met_group_static.py)


# a ties c on the first throw (beats b, loses to d), in a group naming abilities
def tied_with(**named) -> list:
    issued = GroupChallengeIssued(challenge="c1", initiator="a", defenders=("b", "c", "d"),
                                  pairs=("c1.1", "c1.2", "c1.3"), attribute="physical", **named)
    return play(FOUR + [issued], throw("a", "rock"), throw("b", "scissors"), throw("c", "rock"), throw("d", "paper"))


def test_met_3_the_initiators_abilities_named_with_the_group_count_in_its_bids():
    # a: Physical 6 and Melee 2, named with the group: its true score is 8 in every pair
    tied = tied_with(abilities=("Melee",))
    assert_decides(given=tied, when=DeclareBid(character="a", challenge="c1", round=1, value=8), actor=A,
                   then=[BidDeclared(challenge="c1.2", round=1, character="a", value=8)])
    assert_refuses(given=tied, when=DeclareBid(character="a", challenge="c1", round=1, value=9), actor=A,
                   match="above your true 8")


def test_met_3_the_defenders_abilities_a_storyteller_names_with_the_group_count_in_each_defenders_bid():
    # c: Physical 5 and Brawl 1, named for every defender: its true score is 6
    tied = play(tied_with(defender_abilities=("Brawl",)),
                (DeclareBid(character="a", challenge="c1", round=1, value=5), A))
    then = decide_after(tied, DeclareBid(character="c", challenge="c1", round=1, value=6), actor=C)
    assert then[:2] == [BidDeclared(challenge="c1.2", round=1, character="c", value=6),
                        BidsCompared(challenge="c1.2", round=1, winner="c")]
    assert_refuses(given=tied, when=DeclareBid(character="c", challenge="c1", round=1, value=7), actor=C,
                   match="above your true 6")


def with_e(physical: int) -> list:
    """FOUR, and a fifth character e in the scene with ``physical`` traits."""
    return FOUR + [CharacterAdded(character="e", name="E", sheet=MetSheet(physical=physical)),
                   SceneJoined(character="e", scene="s1")]


B_AND_E = IssueChallenge(character="a", defenders=("b", "e"), attribute="physical")
B_AND_E_ISSUED = GroupChallengeIssued(challenge="c1", initiator="a", defenders=("b", "e"), pairs=("c1.1", "c1.2"),
                                      attribute="physical")


def test_met_5_a_defender_at_zero_traits_loses_its_pair_at_once():
    assert_decides(
        given=with_e(0), when=B_AND_E, actor=A,
        then=[B_AND_E_ISSUED,
              RoundWon(challenge="c1.2", round=1, winner="a", loser="e", by="zero_traits"),
              ChallengeResolved(challenge="c1.2", winner="a", loser="e", reason="zero_traits")],
    )


def test_met_5_a_defender_at_one_trait_plays_its_pair():
    assert_decides(given=with_e(1), when=B_AND_E, actor=A, then=[B_AND_E_ISSUED])


def e_resists(physical: int, mental: int) -> list:
    """a's Mental power, resisted with Physical (Example 2), against b and e: the events."""
    given = FOUR + [CharacterAdded(character="e", name="E", sheet=MetSheet(physical=physical, mental=mental)),
                    SceneJoined(character="e", scene="s1")]
    return decide_after(given, IssueChallenge(character="a", defenders=("b", "e"), attribute="mental",
                                              defender_attribute="physical"), actor=A)


def test_met_5_a_defender_at_zero_traits_in_the_attribute_it_resists_with_loses_its_pair_at_once():
    issued = GroupChallengeIssued(challenge="c1", initiator="a", defenders=("b", "e"), pairs=("c1.1", "c1.2"),
                                  attribute="mental", defender_attribute="physical")
    assert e_resists(physical=0, mental=3) == [
        issued,
        RoundWon(challenge="c1.2", round=1, winner="a", loser="e", by="zero_traits"),
        ChallengeResolved(challenge="c1.2", winner="a", loser="e", reason="zero_traits"),
    ]
    assert e_resists(physical=1, mental=0) == [issued]  # its Mental counts for nothing here: it plays


def test_met_5_an_initiator_at_zero_traits_loses_every_pair_and_the_group_is_settled():
    given = roster(a=MetSheet(physical=0, social=2), b=B7, c=C5)
    then = decide_after(given, IssueChallenge(character="a", defenders=("b", "c"), attribute="physical"), actor=A)
    assert then[1:] == [
        RoundWon(challenge="c1.1", round=1, winner="b", loser="a", by="zero_traits"),
        ChallengeResolved(challenge="c1.1", winner="b", loser="a", reason="zero_traits"),
        RoundWon(challenge="c1.2", round=1, winner="c", loser="a", by="zero_traits"),
        ChallengeResolved(challenge="c1.2", winner="c", loser="a", reason="zero_traits"),
        GroupSettled(challenge="c1", initiator="a", results={"b": "b", "c": "c"}),
    ]


# ---------------------------------------------------------------- sealed for all (MET-2)


def test_met_2_the_initiators_one_throw_counts_against_every_defender():
    assert_decides(
        given=FOUR + [ISSUED], when=Throw(character="a", challenge="c1", round=1, choice="rock"), actor=A,
        then=[ThrowCommitted(challenge=p, round=1, character="a", choice="rock") for p in ISSUED.pairs],
    )


def test_met_2_no_throw_is_revealed_before_every_participant_has_thrown():
    three_of_four = play(FOUR + [ISSUED], throw("a", "rock"), throw("b", "scissors"), throw("c", "rock"))
    assert_decides(given=three_of_four[:-1], when=Throw(character="c", challenge="c1", round=1, choice="rock"),
                   actor=C, then=[ThrowCommitted(challenge="c1.2", round=1, character="c", choice="rock")])
    assert_decides(
        given=three_of_four, when=Throw(character="d", challenge="c1", round=1, choice="paper"), actor=D,
        then=[
            ThrowCommitted(challenge="c1.3", round=1, character="d", choice="paper"),
            ThrowsRevealed(challenge="c1.1", round=1, throws={"a": "rock", "b": "scissors"}, winner="a"),
            RoundWon(challenge="c1.1", round=1, winner="a", loser="b", by="throw"),
            ThrowsRevealed(challenge="c1.2", round=1, throws={"a": "rock", "c": "rock"}, winner=None),
            ThrowsRevealed(challenge="c1.3", round=1, throws={"a": "rock", "d": "paper"}, winner="d"),
            RoundWon(challenge="c1.3", round=1, winner="d", loser="a", by="throw"),
        ],
    )


def test_met_2_a_defender_throws_in_its_own_pair_only():
    assert_refuses(given=FOUR + [ISSUED], when=Throw(character="b", challenge="c1.2", round=1, choice="rock"),
                   actor=B, code="forbidden")
    assert_refuses(given=ROUND_1, when=Throw(character="b", challenge="c1", round=1, choice="rock"), actor=B,
                   match="MET-2")


def test_met_2_a_pair_throwing_again_waits_for_every_pair_throwing():
    # b retests in c1.1 while c1.2 redoes its throw after equal bids: both rounds are revealed together
    given = play(ROUND_1, (Retest(character="b", challenge="c1", source="Brawl"), B),
                 (DeclareBid(character="a", challenge="c1", round=1, value=5), A),
                 (DeclareBid(character="c", challenge="c1", round=1, value=5), C))
    assert pair(given, "c1.1").round == 2 and pair(given, "c1.2").round == 2
    given = play(given, throw("a", "paper", round=2), throw("b", "rock", round=2))
    assert pair(given, "c1.1").status == "throwing"  # c is still to throw
    then = decide_after(given, Throw(character="c", challenge="c1", round=2, choice="rock"), actor=C)
    assert then == [
        ThrowCommitted(challenge="c1.2", round=2, character="c", choice="rock"),
        ThrowsRevealed(challenge="c1.1", round=2, throws={"a": "paper", "b": "rock"}, winner="a"),
        RoundWon(challenge="c1.1", round=2, winner="a", loser="b", by="throw"),  # b may still overbid
        ThrowsRevealed(challenge="c1.2", round=2, throws={"a": "paper", "c": "rock"}, winner="a"),
        RoundWon(challenge="c1.2", round=2, winner="a", loser="c", by="throw"),
    ]


def test_met_2_the_initiators_throw_goes_only_to_the_pairs_waiting_for_it():
    # b retests c1.1 and a throws there; then equal bids redo c1.2's throw: a's next is c1.2's alone
    given = play(ROUND_1, (Retest(character="b", challenge="c1", source="Brawl"), B), throw("a", "paper", round=2),
                 (DeclareBid(character="a", challenge="c1", round=1, value=5), A),
                 (DeclareBid(character="c", challenge="c1", round=1, value=5), C))
    assert (pair(given, "c1.1").status, pair(given, "c1.2").status) == ("throwing", "throwing")
    assert_decides(given=given, when=Throw(character="a", challenge="c1", round=2, choice="rock"), actor=A,
                   then=[ThrowCommitted(challenge="c1.2", round=2, character="a", choice="rock")])


def test_met_2_a_throw_no_pair_waits_for_is_refused_by_the_first_pair_still_playing():
    given = play(ROUND_1, (Accept(character="b", challenge="c1"), B))  # c1.1 stands, c1.2 is at its bids
    assert_refuses(given=given, when=Throw(character="a", challenge="c1", round=1, choice="rock"), actor=A,
                   match="challenge c1.2 takes no throw now")


def test_met_16_a_settled_group_takes_no_more_throws():
    settled = play(ROUND_1, (Concede(character="a", challenge="c1"), A))
    assert_refuses(given=settled, when=Throw(character="a", challenge="c1", round=1, choice="rock"), actor=A,
                   match="MET-16")


# ---------------------------------------------------------------- bids (MET-3)


def test_met_3_the_initiator_bids_first_in_a_tied_pair():
    assert_refuses(given=ROUND_1, when=DeclareBid(character="c", challenge="c1", round=1, value=5), actor=C,
                   match="initiator declares")


def test_met_3_each_tied_pair_is_settled_by_its_own_bids():
    given = play(ROUND_1, (DeclareBid(character="a", challenge="c1", round=1, value=6), A))
    assert_decides(
        given=given, when=DeclareBid(character="c", challenge="c1", round=1, value=5), actor=C,
        then=[BidDeclared(challenge="c1.2", round=1, character="c", value=5),
              BidsCompared(challenge="c1.2", round=1, winner="a"),
              RoundWon(challenge="c1.2", round=1, winner="a", loser="c", by="bid")],
    )


def test_met_3_equal_bids_redo_the_throw_of_that_pair_only():
    given = play(ROUND_1, (DeclareBid(character="a", challenge="c1", round=1, value=5), A))
    then = decide_after(given, DeclareBid(character="c", challenge="c1", round=1, value=5), actor=C)
    assert then[-1] == RoundStarted(challenge="c1.2", round=2, test=1, reason="equal_bids")
    after = given + then
    assert (pair(after, "c1.1").status, pair(after, "c1.3").status) == ("window", "window")


def test_met_3_the_initiators_bid_counts_in_every_pair_tied_at_that_round():
    both_tied = play(FOUR + [ISSUED], throw("a", "rock"), throw("b", "rock"), throw("c", "rock"),
                     throw("d", "scissors"))
    assert_decides(
        given=both_tied, when=DeclareBid(character="a", challenge="c1", round=1, value=6), actor=A,
        then=[BidDeclared(challenge="c1.1", round=1, character="a", value=6),
              BidDeclared(challenge="c1.2", round=1, character="a", value=6)],
    )


# ---------------------------------------------------------------- retests (MET-12)


def test_met_12_a_retest_redoes_the_losers_pair_only():
    assert_decides(
        given=ROUND_1, when=Retest(character="b", challenge="c1", source="Brawl"), actor=B,
        then=[RetestTaken(challenge="c1.1", character="b", source="Brawl", round=1),
              RoundStarted(challenge="c1.1", round=2, test=1, reason="retest")],
    )


def test_met_12_the_initiators_retest_goes_to_the_pair_it_lost():
    # a beat b in c1.1 and lost c1.3 to d
    assert_decides(
        given=ROUND_1, when=Retest(character="a", challenge="c1", source="Melee"), actor=A,
        then=[RetestTaken(challenge="c1.3", character="a", source="Melee", round=1),
              RoundStarted(challenge="c1.3", round=2, test=1, reason="retest")],
    )


def test_met_12_option_the_initiator_cancels_the_retest_of_the_pair_that_took_it():
    cancelling = roster(MetOptions(retest_cancel=True), a=A6, b=B7, c=C5, d=C5)
    given = play(cancelling + [ISSUED], throw("a", "rock"), throw("b", "scissors"), throw("c", "rock"),
                 throw("d", "paper"), (Retest(character="b", challenge="c1", source="Brawl"), B))
    assert_decides(
        given=given, when=Retest(character="a", challenge="c1", source="Melee", cancels=True), actor=A,
        then=[RetestCancelled(challenge="c1.1", character="a", source="Melee", cancelled="b"),
              RoundWon(challenge="c1.1", round=1, winner="a", loser="b", by="throw")],
    )


def test_met_12_one_retest_per_participant_over_the_whole_group():
    # a lost c1.3 on the throw and c1.2 on the bids: one retest in all
    given = play(ROUND_1, (DeclareBid(character="a", challenge="c1", round=1, value=4), A),
                 (DeclareBid(character="c", challenge="c1", round=1, value=5), C))
    assert_refuses(given=given, when=Retest(character="a", challenge="c1", source="Melee"), actor=A,
                   code="invalid", match="c1.2, c1.3")
    given = play(given, (Retest(character="a", challenge="c1.3", source="Melee"), A))
    assert_refuses(given=given, when=Retest(character="a", challenge="c1.2", source="Melee"), actor=A,
                   match="one retest per character per challenge")


def test_met_12_with_its_retest_spent_a_loser_on_the_bids_has_no_window():
    given = play(ROUND_1, (Retest(character="a", challenge="c1.3", source="Melee"), A),
                 (DeclareBid(character="a", challenge="c1", round=1, value=4), A))
    then = decide_after(given, DeclareBid(character="c", challenge="c1", round=1, value=5), actor=C)
    assert then[-1] == ChallengeResolved(challenge="c1.2", winner="c", loser="a", reason="final")


# ---------------------------------------------------------------- overbids (MET-13, MET-14)


def test_met_14_several_participants_each_overbid_one_group_challenge():
    strong = roster(a=BIG, b=C5, c=C5, d=MetSheet(physical=4))
    given = play(strong + [ISSUED], throw("a", "rock"), throw("b", "scissors"), throw("c", "rock"),
                 throw("d", "paper"))
    assert_decides(given=given, when=Overbid(character="a", challenge="c1", value=10), actor=A,
                   then=[OverbidDeclared(challenge="c1.3", character="a", value=10)])
    assert_decides(given=given, when=Overbid(character="b", challenge="c1", value=5), actor=B,
                   then=[OverbidDeclared(challenge="c1.1", character="b", value=5)])
    given = play(given, (Overbid(character="a", challenge="c1", value=10), A),
                 (Overbid(character="b", challenge="c1", value=5), B))
    # a answers b's overbid in c1.1 (c1.2 waits for a's bid too: a names the pair); its own
    # overbid in c1.3 waits for d's answer
    assert_decides(
        given=given, when=DeclareBid(character="a", challenge="c1.1", round=1, value=10), actor=A,
        then=[BidDeclared(challenge="c1.1", round=1, character="a", value=10, overbid=True),
              OverbidSettled(challenge="c1.1", character="b", opponent="a", granted=False),
              TieDebtIncurred(debtor="b", creditor="a", challenge="c1.1"),
              ChallengeResolved(challenge="c1.1", winner="a", loser="b", reason="overbid_failed")],
    )
    assert_decides(
        given=given, when=DeclareBid(character="d", challenge="c1", round=1, value=4), actor=D,
        then=[BidDeclared(challenge="c1.3", round=1, character="d", value=4, overbid=True),
              OverbidSettled(challenge="c1.3", character="a", opponent="d", granted=True),
              RoundStarted(challenge="c1.3", round=2, test=1, reason="overbid")],
    )


def test_met_14_one_overbid_per_participant_over_the_whole_group():
    strong = roster(a=BIG, b=C5, c=C5, d=C5)
    given = play(strong + [ISSUED], throw("a", "scissors"), throw("b", "rock"), throw("c", "rock"),
                 throw("d", "paper"))
    assert_refuses(given=given, when=Overbid(character="a", challenge="c1", value=10), actor=A,
                   code="invalid", match="c1.1, c1.2")
    given = play(given, (Overbid(character="a", challenge="c1.1", value=10), A))
    assert_refuses(given=given, when=Overbid(character="a", challenge="c1.2", value=10), actor=A, match="MET-14")


def test_met_13_an_answer_to_two_overbids_names_its_pair():
    strong = roster(a=C5, b=BIG, c=BIG, d=C5)
    given = play(strong + [ISSUED], throw("a", "rock"), throw("b", "scissors"), throw("c", "scissors"),
                 throw("d", "rock"), (Overbid(character="b", challenge="c1", value=10), B),
                 (Overbid(character="c", challenge="c1", value=10), C))
    assert_refuses(given=given, when=DeclareBid(character="a", challenge="c1", round=1, value=5), actor=A,
                   code="invalid", match="c1.1, c1.2")
    then = decide_after(given, DeclareBid(character="a", challenge="c1.2", round=1, value=5), actor=A)
    assert then[1] == OverbidSettled(challenge="c1.2", character="c", opponent="a", granted=True)


# ---------------------------------------------------------------- outcomes (MET-16)


def test_met_16_the_group_is_settled_when_its_last_pair_stands():
    given = play(ROUND_1, (Accept(character="b", challenge="c1"), B), (Accept(character="a", challenge="c1.3"), A),
                 (DeclareBid(character="a", challenge="c1", round=1, value=6), A))
    assert game.fold(given).met.get("c1").status == "open"  # two of three stand
    given = play(given, (DeclareBid(character="c", challenge="c1", round=1, value=5), C))
    assert game.fold(given).met.get("c1").status == "open"  # c may still retest
    [resolved, settled_] = assert_decides(
        given=given, when=Accept(character="c", challenge="c1"), actor=C,
        then=[ChallengeResolved(challenge="c1.2", winner="a", loser="c", reason="accepted"),
              GroupSettled(challenge="c1", initiator="a", results={"b": "a", "c": "a", "d": "d"})],
    )
    settled = given + [resolved, settled_]
    state = game.fold(settled)
    assert (state.met.get("c1").status, state.met.get("c1").reason) == ("resolved", "settled")
    assert state.met.get("c1").results == {"b": "a", "c": "a", "d": "d"}
    assert "c1" not in state.met.live


def test_met_16_closing_a_groups_windows_closes_an_overbid_waiting_for_its_answer_too():
    given = play(ROUND_1, (Overbid(character="b", challenge="c1", value=7), B))  # c1.1: b overbids a
    assert game.fold(given).met.get("c1.1").status == "overbid"
    assert decide_after(given, CloseWindow(challenge="c1")) == [
        ChallengeResolved(challenge="c1.1", winner="a", loser="b", reason="window_closed"),
        ChallengeResolved(challenge="c1.3", winner="d", loser="a", reason="window_closed"),
    ]


def test_met_16_the_initiator_accepts_every_pair_it_lost_at_once():
    assert_decides(given=ROUND_1, when=Accept(character="a", challenge="c1"), actor=A,
                   then=[ChallengeResolved(challenge="c1.3", winner="d", loser="a", reason="accepted")])


def test_met_16_each_pairs_window_closes_on_its_own():
    assert open_windows(game.fold(ROUND_1)) == ("c1.1", "c1.3")
    then = decide_after(ROUND_1, CloseWindow(challenge="c1.1", timeout=True))
    assert then == [ChallengeResolved(challenge="c1.1", winner="a", loser="b", reason="timeout")]
    assert decide_after(ROUND_1, CloseWindow(challenge="c1")) == [
        ChallengeResolved(challenge="c1.1", winner="a", loser="b", reason="window_closed"),
        ChallengeResolved(challenge="c1.3", winner="d", loser="a", reason="window_closed"),
    ]


def test_met_7_the_initiator_concedes_against_every_defender_still_playing():
    then = decide_after(ROUND_1, Concede(character="a", challenge="c1"), actor=A)
    assert [e for e in then if isinstance(e, ChallengeConceded)] == [
        ChallengeConceded(challenge=p, character="a") for p in ISSUED.pairs]
    assert then[-1] == GroupSettled(challenge="c1", initiator="a", results={"b": "b", "c": "c", "d": "d"})


def test_met_16_a_cancelled_group_cancels_its_pairs_still_playing():
    assert_decides(given=ROUND_1, when=CancelChallenge(challenge="c1", reason="scene ended"),
                   then=[ChallengeCancelled(challenge="c1", reason="scene ended")])
    state = game.fold(ROUND_1 + [ChallengeCancelled(challenge="c1", reason="scene ended")])
    assert {state.met.get(p).status for p in ISSUED.pairs} == {"cancelled"}
    assert {state.met.get(p).reason for p in ISSUED.pairs} == {"scene ended"}
    assert not state.met.live


def test_met_16_a_command_naming_the_last_pair_itself_settles_the_group():
    given = play(ROUND_1, (Accept(character="b", challenge="c1"), B),
                 (DeclareBid(character="a", challenge="c1", round=1, value=6), A),
                 (DeclareBid(character="c", challenge="c1", round=1, value=5), C),
                 (Accept(character="c", challenge="c1"), C))
    assert_decides(given=given, when=Accept(character="a", challenge="c1.3"), actor=A,
                   then=[ChallengeResolved(challenge="c1.3", winner="d", loser="a", reason="accepted"),
                         GroupSettled(challenge="c1", initiator="a", results={"b": "a", "c": "a", "d": "d"})])


def test_met_1_a_command_naming_no_challenge_is_refused():
    assert_refuses(given=ROUND_1, when=Throw(character="a", challenge="c9", round=1, choice="rock"), actor=A,
                   code="not_found")


def test_met_16_a_pair_cancelled_counts_in_no_result_of_its_group():
    # c1.1 is cancelled in its window, a beating b: the group settles without b
    given = play(ROUND_1, (CancelChallenge(challenge="c1.1", reason="b left"), STORYTELLER))
    then = decide_after(given, Concede(character="a", challenge="c1"), actor=A)
    assert then[-1] == GroupSettled(challenge="c1", initiator="a", results={"c": "c", "d": "d"})


def test_met_16_an_overrule_of_a_pair_changes_the_settled_group():
    settled = play(ROUND_1, (Concede(character="a", challenge="c1"), A))
    then = decide_after(settled, Overrule(challenge="c1.2", winner="a", reason="ruled"))
    assert then == [ChallengeOverruled(challenge="c1.2", winner="a", loser="c", previous_winner="c", reason="ruled")]
    assert game.fold(settled + then).met.get("c1").results == {"b": "b", "c": "a", "d": "d"}
    assert_refuses(given=settled, when=Overrule(challenge="c1", winner="a"), code="invalid", match="name one")
    assert decide_after(settled, Overrule(challenge="c1", winner="d"))[0].challenge == "c1.3"
