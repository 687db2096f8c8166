"""Throws (MET-2), given / when / then: the refusals a thrower reads, the server's throw for
a storyteller's side (drawn in that side's own stream, FAIR-2, and sealed whole), and a
retest that can no longer be cancelled once its throws are in (MET-12 option)."""

from __future__ import annotations

from conteur.events import fair, game
from conteur.events.fair import FairDraws
from conteur.events.met import (
    DeclareBid,
    MetOptions,
    Retest,
    RetestCancelled,
    RoundWon,
    Throw,
    ThrowCommitted,
)
from conteur.events.model import STORYTELLER
from conteur.events.sheets import MetSheet
from conteur.events.testing import assert_decides, assert_refuses, decide_after
from tests.support.met_support import A6, B7, classic, play, player, roster, won_on_throw

A, B = player("a"), player("b")
DUEL = roster(a=A6, b=B7) + [classic()]


def throw(who: str, choice: str | None = None, round: int = 1) -> Throw:
    return Throw(character=who, challenge="c1", round=round, choice=choice)


# ---------------------------------------------------------------- what a thrower reads (MET-2)


def test_met_2_a_second_throw_in_the_same_round_is_refused():
    given = DUEL + [ThrowCommitted(challenge="c1", round=1, character="a", choice="rock")]
    refused = assert_refuses(given=given, when=throw("a", "paper"), actor=A)
    assert (refused.message, refused.rule) == ("your throw for this round is already sealed (MET-2)", "MET-2")
    assert decide_after(given, throw("b", "paper"), actor=B)[0] == ThrowCommitted(
        challenge="c1", round=1, character="b", choice="paper")  # the other side's still goes in


def test_met_2_a_player_chooses_its_throw_only_a_storyteller_lets_the_server_draw_it():
    refused = assert_refuses(given=DUEL, when=throw("a"), actor=A, code="invalid")
    assert refused.message == "choose rock, paper or scissors (MET-2)"
    [committed] = decide_after(DUEL, throw("a"), draws=[2])  # d3: 1 rock, 2 paper, 3 scissors
    assert (committed.choice, [r.face for r in committed.draws]) == ("paper", [2])


def test_met_2_option_bomb_the_refusals_say_which_of_option_and_power_is_missing():
    refused = assert_refuses(given=DUEL, when=throw("a", "bomb"), actor=A)
    assert (refused.message, refused.rule) == ("this chronicle plays without the bomb (MET-2)", "MET-2")
    bombs = roster(MetOptions(bomb=True), a=A6, b=MetSheet(physical=6, bomb=True)) + [classic()]
    refused = assert_refuses(given=bombs, when=throw("a", "bomb"), actor=A)
    assert refused.message == "only a character whose power grants it may throw the bomb (MET-2)"
    assert_decides(given=bombs, when=throw("b", "bomb"), actor=B,
                   then=[ThrowCommitted(challenge="c1", round=1, character="b", choice="bomb")])


# ---------------------------------------------------------------- the server's throw (MET-2, FAIR-2)


def test_fair_2_met_2_the_servers_throw_for_a_side_is_drawn_in_that_sides_secret_stream():
    """Seen whole by its thrower alone (ThrowCommitted.owners): drawn in ``*/secret=<side>``
    with the server's nonce, so no other viewer's stream counts it."""
    state = game.fold(DUEL)
    nonce = fair.new_nonce()
    draws = FairDraws(bytes(range(32)), "night-13", streams=state.streams, nonce=nonce)
    [committed] = game.decide(state, throw("a"), draws, actor=STORYTELLER)
    assert committed.owners() == frozenset({"a"})
    assert [(r.stream, r.entropy, r.sides) for r in committed.draws] == [("*/secret=a", nonce, 3)]
    assert committed.choice == ("rock", "paper", "scissors")[committed.draws[0].face - 1]


def test_met_2_a_sealed_throw_tells_others_neither_its_choice_nor_the_servers_draw():
    [committed] = decide_after(DUEL, throw("a"), draws=[3])
    assert committed.choice == "scissors" and len(committed.draws) == 1
    assert committed.redacted() == ThrowCommitted(challenge="c1", round=1, character="a", choice=None, draws=())


# ---------------------------------------------------------------- a retest's cancel (MET-12 option)


CANCELLING = roster(MetOptions(retest_cancel=True), a=A6, b=B7) + [classic()] + won_on_throw("c1", 1, "a", "b")
RETESTED = play(CANCELLING, (Retest(character="b", challenge="c1", source="Brawl"), B))
CANCEL = Retest(character="a", challenge="c1", source="Melee", cancels=True)


def test_met_12_option_a_retest_is_cancelled_before_its_throws():
    assert_decides(given=RETESTED, when=CANCEL, actor=A,
                   then=[RetestCancelled(challenge="c1", character="a", source="Melee", cancelled="b"),
                         RoundWon(challenge="c1", round=1, winner="a", loser="b", by="throw")])


def test_met_12_option_a_retest_whose_throws_are_in_is_no_longer_cancelled_even_at_a_later_round():
    # the retest's round ties, equal bids redo the throw: round 3 has no throw yet, and
    # the retest was played all the same
    redone = play(RETESTED, (throw("a", "rock", round=2), A), (throw("b", "rock", round=2), B),
                  (DeclareBid(character="a", challenge="c1", round=2, value=5), A),
                  (DeclareBid(character="b", challenge="c1", round=2, value=5), B))
    assert game.fold(redone).met.get("c1").round == 3
    assert_refuses(given=redone, when=CANCEL, actor=A, match="no opponent's retest to cancel now")
