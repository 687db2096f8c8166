"""The worked examples of met-time-and-challenges.fr.txt, played command by command."""

from __future__ import annotations

from conteur.events import game
from conteur.events.met import (
    Accept,
    BidsCompared,
    ChallengeResolved,
    DeclareBid,
    IssueChallenge,
    RoundStarted,
    RoundWon,
    Throw,
)
from conteur.events.model import STORYTELLER, ScriptedDraws
from conteur.events.met import initiative_order
from conteur.events.sheets import MetSheet
from tests.support.met_support import player, roster

A = MetSheet(physical=6, mental=3, abilities={"Melee": 2})
B = MetSheet(physical=7, mental=7, abilities={"Brawl": 2, "Dodge": 1})


def play(start, *steps):
    """From given events (or a folded state), decide and fold each (actor, command) in
    turn; return the events decided and the state after them."""
    state = start if isinstance(start, game.GameState) else game.fold(start)
    decided = []
    for actor, command in steps:
        events = game.decide(state, command, ScriptedDraws(start=state.draw_counter), actor=actor)
        state = game.fold(events, state)
        decided += events
    return decided, state


def example_1(a_throw: str, b_throw: str):
    a, b = player("a"), player("b")
    return play(
        roster(a=A, b=B),
        # A strikes B with a club (Melee), B bites A (Brawl): two Physical actions, one challenge
        (a, IssueChallenge(character="a", defender="b", attribute="physical", abilities=("Melee",),
                           mutual=True)),
        (a, Throw(character="a", challenge="c1", round=1, choice=a_throw)),
        (b, Throw(character="b", challenge="c1", round=1, choice=b_throw)),
    )


def test_met_8_example_1_a_wins_the_throw_hits_and_b_misses_its_bite():
    events, state = example_1("rock", "scissors")
    assert RoundWon(challenge="c1", round=1, winner="a", loser="b", by="throw") in events
    events, state = play(state, (player("b"), Accept(character="b", challenge="c1")))
    assert events == [ChallengeResolved(challenge="c1", winner="a", loser="b", reason="accepted", mutual=True)]


def test_met_3_example_1_on_a_tie_b_declares_9_against_8_and_wins():
    events, state = example_1("paper", "paper")
    a, b = player("a"), player("b")
    events, state = play(
        state,
        (a, DeclareBid(character="a", challenge="c1", round=1, value=8)),  # Physical 6 + Melee 2
        # Physical 7 + Brawl 2, B's own ability, declared with its bid
        (b, DeclareBid(character="b", challenge="c1", round=1, value=9, abilities=("Brawl",))),
    )
    assert events[-2:] == [
        BidsCompared(challenge="c1", round=1, winner="b"),
        RoundWon(challenge="c1", round=1, winner="b", loser="a", by="bid"),
    ]


def test_met_9_example_2_b_acts_first_and_its_mental_beats_a_physical_on_a_tie():
    given = roster(a=A, b=B)
    assert initiative_order(game.fold(given), [("a", "physical"), ("b", "mental")])[0] == (("b", "mental"),)
    a, b = player("a"), player("b")
    events, state = play(
        given,
        # B's thaumaturgy (Mental) against A, who resists with Physical
        (b, IssueChallenge(character="b", defender="a", attribute="mental", defender_attribute="physical",
                           action="paralyse A")),
        (b, Throw(character="b", challenge="c1", round=1, choice="rock")),
        (a, Throw(character="a", challenge="c1", round=1, choice="rock")),
        (b, DeclareBid(character="b", challenge="c1", round=1, value=7)),  # Mental 7
        (a, DeclareBid(character="a", challenge="c1", round=1, value=6)),  # Physical 6
    )
    assert events[-1] == RoundWon(challenge="c1", round=1, winner="b", loser="a", by="bid")


def test_met_3_example_2_club_against_dodge_8_to_8_redoes_the_throw():
    a, b = player("a"), player("b")
    events, state = play(
        roster(a=A, b=B),
        (a, IssueChallenge(character="a", defender="b", attribute="physical", abilities=("Melee",),
                           action="club")),
        (a, Throw(character="a", challenge="c1", round=1, choice="scissors")),
        (b, Throw(character="b", challenge="c1", round=1, choice="scissors")),
        (a, DeclareBid(character="a", challenge="c1", round=1, value=8)),  # Physical 6 + Melee 2
        (b, DeclareBid(character="b", challenge="c1", round=1, value=8, abilities=("Dodge",))),  # 7 + Dodge 1
    )
    assert events[-2:] == [
        BidsCompared(challenge="c1", round=1, winner=None),
        RoundStarted(challenge="c1", round=2, test=1, reason="equal_bids"),
    ]
    assert state.met.challenges["c1"].status == "throwing"


def bobby(athletics: int, declared: int):
    sheet = MetSheet(physical=4, abilities={"Athletics": athletics})
    bobby_ = player("bobby")
    return play(
        roster(bobby=sheet),
        # Bobby throws a stone at a chandelier: static, difficulty 5
        (bobby_, IssueChallenge(character="bobby", kind="static", attribute="physical", difficulty=5,
                                abilities=("Athletics",), action="bring down the chandelier")),
        (bobby_, Throw(character="bobby", challenge="c1", round=1, choice="paper")),
        (STORYTELLER, Throw(character="storyteller", challenge="c1", round=1, choice="paper")),
        (bobby_, DeclareBid(character="bobby", challenge="c1", round=1, value=declared)),
    )


def test_met_10_bobby_on_a_tie_declares_6_against_difficulty_5_and_wins():
    events, _ = bobby(athletics=2, declared=6)
    assert events[-2:] == [
        RoundWon(challenge="c1", round=1, winner="bobby", loser="storyteller", by="difficulty"),
        ChallengeResolved(challenge="c1", winner="bobby", loser="storyteller", reason="final"),
    ]


def test_met_10_bobby_declaring_5_against_difficulty_5_loses():
    events, _ = bobby(athletics=1, declared=5)
    assert events[-1] == RoundWon(challenge="c1", round=1, winner="storyteller", loser="bobby", by="difficulty")
