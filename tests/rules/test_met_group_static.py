"""A static test against several characters (MET-10 with MET-1's "un ou plusieurs"): a
storyteller's trap or power tests each character named against one difficulty, as one
group challenge, rule line by rule line (docs/rules-choices.md, "Group challenges",
lines 2 and 10), given / when / then; and the server's throw for a group's initiator,
drawn once for every pair (line 4)."""

from __future__ import annotations

from conteur.events import game
from conteur.events.met import (
    Accept,
    BidDeclared,
    BidsCompared,
    ChallengeResolved,
    Concede,
    DeclareBid,
    GroupChallengeIssued,
    GroupSettled,
    IssueChallenge,
    Overbid,
    Retest,
    RetestTaken,
    RoundStarted,
    RoundWon,
    Throw,
    ThrowCommitted,
    ThrowsRevealed,
)
from conteur.events.model import STORYTELLER
from conteur.events.sheets import MetSheet
from conteur.events.testing import assert_decides, assert_refuses, decide_after
from tests.support.met_support import (A6, B7, C5, ISSUED, LUCKY, ROUND_1, TRAP, TWO, B, C, group_throw as throw,
                                      play, player, roster)

def pair(events: list, challenge: str):
    return game.fold(events).met.get(challenge)


# ---------------------------------------------------------------- who takes part


def test_met_10_a_storyteller_tests_several_characters_against_one_difficulty():
    assert_decides(given=TWO, when=TRAP, then=[ISSUED])
    state = game.fold(TWO + [ISSUED])
    for pid, tested in (("c1.1", "b"), ("c1.2", "c")):
        p = state.met.get(pid)
        assert (p.kind, p.initiator, p.defender, p.tested, p.difficulty, p.tests) == \
            ("static", "Trap", tested, tested, 5, 1)
    assert state.met.get("c1").status == "open"


def test_met_10_a_static_group_carries_its_successive_tests_to_every_pair():
    then = decide_after(TWO, IssueChallenge(character="storyteller", kind="static", defenders=("b", "c"),
                                            attribute="mental", difficulty=3, tests=2))
    assert (then[0].difficulty, then[0].tests, then[0].kind) == (3, 2, "static")
    assert [p.tests for p in game.fold(TWO + then).met.challenges.values() if p.group] == [2, 2]


def test_met_10_a_characters_own_static_test_names_no_defenders():
    """A character tested against a difficulty faces the storyteller alone; against
    several characters its action is a classic challenge."""
    three = roster(a=A6, b=B7, c=C5)
    refused = assert_refuses(given=three, when=IssueChallenge(character="a", kind="static", defenders=("b", "c"),
                                                              attribute="physical", difficulty=3),
                             actor=player("a"), code="invalid", match="a static test against several characters")
    assert "classic challenge" in refused.message and refused.rule == "MET-10"


def test_met_11_a_simple_or_complex_test_names_no_defenders():
    for kind in ("simple", "complex"):
        assert_refuses(given=TWO, when=IssueChallenge(character="Trap", kind=kind, defenders=("b", "c")),
                       code="invalid", match=f"give each character its own {kind} test")


def test_met_10_every_tested_character_must_be_on_the_roster():
    assert_refuses(given=TWO, when=IssueChallenge(character="Trap", kind="static", defenders=("b", "Ghoul"),
                                                  attribute="physical", difficulty=5),
                   match="tests one character of the roster")


def test_met_5_a_tested_character_at_zero_traits_loses_its_pair_at_once():
    weak = roster(b=B7, c=MetSheet(physical=0, social=3, mental=3))
    then = decide_after(weak, TRAP)
    assert then[1:] == [RoundWon(challenge="c1.2", round=1, winner="Trap", loser="c", by="zero_traits"),
                        ChallengeResolved(challenge="c1.2", winner="Trap", loser="c", reason="zero_traits")]


# ---------------------------------------------------------------- throws (MET-2)


def test_met_2_the_storytellers_one_throw_counts_against_every_tested_character():
    then = decide_after(TWO + [ISSUED], Throw(character="Trap", challenge="c1", round=1, choice="rock"))
    assert [(e.challenge, e.choice) for e in then] == [("c1.1", "rock"), ("c1.2", "rock")]


def test_met_2_no_throw_is_revealed_before_every_tested_character_has_thrown():
    half = play(TWO + [ISSUED], throw("Trap", "rock"))
    command, actor = throw("b", "scissors")
    then = decide_after(half, command, actor=actor)
    assert then == [ThrowCommitted(challenge="c1.1", round=1, character="b", choice="scissors")]
    command, actor = throw("c", "rock")
    last = decide_after(half + then, command, actor=actor)
    assert [type(e) for e in last][:3] == [ThrowCommitted, ThrowsRevealed, RoundWon]
    assert [e.challenge for e in last if isinstance(e, ThrowsRevealed)] == ["c1.1", "c1.2"]


def test_met_2_a_server_drawn_throw_for_a_groups_initiator_is_drawn_once():
    """One d3 for every pair: a second face scripted would be left over."""
    for issued in (ISSUED, GroupChallengeIssued(challenge="c1", initiator="Ghoul", defenders=("b", "c"),
                                                pairs=("c1.1", "c1.2"), attribute="physical")):
        then = decide_after(TWO + [issued], Throw(character=issued.initiator, challenge="c1", round=1), draws=[3])
        assert [(e.challenge, e.choice) for e in then] == [("c1.1", "scissors"), ("c1.2", "scissors")]
        assert [len(e.draws) for e in then] == [1, 0]  # the draw is recorded once, in the first pair


# ---------------------------------------------------------------- ties against the difficulty


def test_met_10_in_a_tied_pair_only_the_tested_character_bids():
    assert pair(ROUND_1, "c1.2").status == "bidding"
    assert_refuses(given=ROUND_1, when=DeclareBid(character="Trap", challenge="c1.2", round=1, value=5),
                   match="only the tested character declares")


def test_met_10_a_bid_at_the_difficulty_loses_and_one_above_it_wins():
    at = decide_after(ROUND_1, DeclareBid(character="c", challenge="c1", round=1, value=5), actor=C)
    assert at[:2] == [BidDeclared(challenge="c1.2", round=1, character="c", value=5),
                      BidsCompared(challenge="c1.2", round=1, winner="Trap")]
    assert at[2] == RoundWon(challenge="c1.2", round=1, winner="Trap", loser="c", by="difficulty")
    above = decide_after(ROUND_1, DeclareBid(character="c", challenge="c1", round=1, value=6,
                                             abilities=("Athletics",)), actor=C)
    assert above[1] == BidsCompared(challenge="c1.2", round=1, winner="c")
    assert above[2] == RoundWon(challenge="c1.2", round=1, winner="c", loser="Trap", by="difficulty")


# ---------------------------------------------------------------- windows


def test_met_13_no_overbid_in_a_static_group():
    assert_refuses(given=ROUND_1, when=Overbid(character="b", challenge="c1", value=9), actor=B,
                   match="classic challenges only")


def test_met_7_a_tested_character_cannot_concede_its_pair():
    assert_refuses(given=ROUND_1, when=Concede(character="b", challenge="c1"), actor=B, match="MET-7")


def test_met_12_the_storyteller_retests_once_over_the_whole_group():
    # the trap loses both pairs: b and c bid above the difficulty after a tie each
    tied = play(TWO + [ISSUED], throw("Trap", "rock"), throw("b", "rock"), throw("c", "rock"),
                (DeclareBid(character="b", challenge="c1", round=1, value=7), B),
                (DeclareBid(character="c", challenge="c1", round=1, value=6, abilities=("Athletics",)), C))
    assert [pair(tied, p).loser for p in ("c1.1", "c1.2")] == ["Trap", "Trap"]
    retested = play(tied, (Retest(character="Trap", challenge="c1.1", source="Poison"), STORYTELLER))
    assert_refuses(given=retested, when=Retest(character="Trap", challenge="c1.2", source="Poison"),
                   match="one retest per character per challenge")


def test_met_12_a_lucky_tested_character_retests_twice_in_a_static_group():
    lucky = roster(b=B7, c=LUCKY)
    given = play(lucky + [ISSUED], throw("Trap", "rock"), throw("b", "paper"), throw("c", "scissors"))
    once = play(given, (Retest(character="c", challenge="c1", source="Lucky"), C),
                throw("Trap", "rock", round=2), throw("c", "scissors", round=2))
    assert pair(once, "c1.2").status == "window"  # lost again: Lucky's second retest
    twice = play(once, (Retest(character="c", challenge="c1", source="Lucky"), C),
                 throw("Trap", "rock", round=3), throw("c", "scissors", round=3))
    assert [e for e in twice if isinstance(e, RetestTaken)] == [
        RetestTaken(challenge="c1.2", character="c", source="Lucky", round=1),
        RetestTaken(challenge="c1.2", character="c", source="Lucky", round=2)]
    assert pair(twice, "c1.2").status == "resolved"  # a third retest: none left, the result stands


def test_met_10_each_pair_runs_its_own_successive_tests():
    given = play(TWO + [GroupChallengeIssued(challenge="c1", initiator="Trap", defenders=("b", "c"),
                                             pairs=("c1.1", "c1.2"), kind="static", attribute="physical",
                                             difficulty=5, tests=2)],
                 throw("Trap", "scissors"), throw("b", "rock"))
    command, actor = throw("c", "paper")
    then = decide_after(given, command, actor=actor)
    assert RoundStarted(challenge="c1.1", round=2, test=2, reason="next_test") in then
    assert pair(given + then, "c1.2").status == "window"  # c lost test 1: its window, no test 2 yet
    # the trap's next throw is for the pair at its second test only
    nxt = decide_after(given + then, Throw(character="Trap", challenge="c1", round=2, choice="rock"))
    assert [e.challenge for e in nxt] == ["c1.1"]


def test_met_16_a_static_group_is_settled_when_its_last_pair_stands():
    won = play(ROUND_1, (DeclareBid(character="c", challenge="c1", round=1, value=5), C))
    first = decide_after(won, Retest(character="b", challenge="c1", source="Brawl"), actor=B)
    assert not any(isinstance(e, GroupSettled) for e in first)
    after = play(won + first, throw("Trap", "rock", round=2), throw("b", "scissors", round=2))
    then = decide_after(after, Accept(character="c", challenge="c1"), actor=C)
    assert then[-1] == GroupSettled(challenge="c1", initiator="Trap", results={"b": "Trap", "c": "Trap"})
