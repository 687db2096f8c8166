"""A storyteller overrules what the action dice left stuck: an opposed roll whose defender
never answers (ACT-12) and a multi-turn action whose character will never roll it (ACT-2).
The rule texts are silent on both: docs/rules-choices.md, "Action dice"."""

from __future__ import annotations

import pytest

from conteur.events import game
from conteur.events.action import (
    ActionCancelled,
    ActionRevealed,
    CancelAction,
    CharacterSacrificed,
    OppositionRuled,
    RollAction,
    SettleOpposition,
)
from conteur.events.model import STORYTELLER, Actor
from conteur.events.session import TurnAdvanced
from conteur.events.testing import assert_decides, assert_refuses
from conteur.events.views import fold_view, view
from tests.support.action_support import ROSTER, act, jaleel_against_nella, nella_dies, player

JUDITH = player("judith")  # a third player, no side in the contest
OBSERVER = Actor(role="observer", name="wall")



def revealed(rolled, visibility="open"):
    return ActionRevealed(roll=rolled[0].roll, character="jaleel", opponent="nella", rolled=rolled[0],
                          visibility=visibility)



# ---------------------------------------------------------------- ACT-12 overruled


def test_act_12_act_8_a_roll_waiting_on_a_dead_defender_is_settled_by_the_storyteller():
    rolled = jaleel_against_nella()
    given = ROSTER + [*rolled, nella_dies()]
    # ACT-8: the dead defender cannot answer, so only a storyteller can end the wait
    assert_refuses(given=given, when=RollAction(character="nella", characteristic="Volonté",
                                                against="a1"),
                   actor=player("nella"), match="ACT-8")
    (_, ruled) = assert_decides(
        given=given,
        when=SettleOpposition(roll="a1", outcome="initiator", reason="Nella died"),
        then=[revealed(rolled), OppositionRuled(roll="a1", character="jaleel", opponent="nella",
                              outcome="initiator", winner="jaleel", initiator_ps=1,
                              reason="Nella died")],
    )
    assert game.fold(given + [ruled]).action.waiting == {}


@pytest.mark.parametrize("outcome, winner", [("defender", "nella"), ("cancelled", None)])
def test_act_12_the_storyteller_may_let_the_defender_hold_or_cancel_the_contest(outcome, winner):
    rolled = jaleel_against_nella()
    given = ROSTER + rolled
    (_, ruled) = assert_decides(
        given=given, when=SettleOpposition(roll="a1", outcome=outcome),
        then=[revealed(rolled), OppositionRuled(roll="a1", character="jaleel", opponent="nella", outcome=outcome,
                              winner=winner, initiator_ps=1)],
    )
    # the wait is over: the defender's late answer finds nothing to answer
    assert_refuses(given=given + [ruled],
                   when=RollAction(character="nella", characteristic="Volonté", against="a1"),
                   actor=player("nella"), code="not_found", match="ACT-12")


def test_act_12_a_roll_already_answered_cannot_be_settled_again():
    rolled = jaleel_against_nella()
    answer = act("nella", [6, 7, 1], given=rolled, characteristic="Volonté", against="a1")
    assert_refuses(given=ROSTER + [*rolled, *answer],
                   when=SettleOpposition(roll="a1", outcome="initiator"),
                   code="rule", match="answered or settled already")


def test_act_12_a_settled_roll_cannot_be_settled_twice():
    given = ROSTER + [*jaleel_against_nella(), OppositionRuled(
        roll="a1", character="jaleel", opponent="nella", outcome="cancelled")]
    assert_refuses(given=given, when=SettleOpposition(roll="a1", outcome="defender"),
                   match="ACT-12")


@pytest.mark.parametrize("roll", ["a9", "a0", "r1", ""])
def test_act_12_an_unknown_roll_is_refused(roll):
    assert_refuses(given=ROSTER + jaleel_against_nella(),
                   when=SettleOpposition(roll=roll, outcome="initiator"),
                   code="not_found", match="ACT-12")


def test_act_12_a_bad_outcome_is_refused_with_the_outcomes_named():
    violation = assert_refuses(given=ROSTER + jaleel_against_nella(),
                               when=SettleOpposition(roll="a1", outcome="draw"),
                               code="invalid", match="ACT-12")
    assert "initiator, defender, cancelled" in violation.message


@pytest.mark.parametrize("who", ["jaleel", "nella"])
def test_act_12_only_a_storyteller_overrules_a_contest(who):
    assert_refuses(given=ROSTER + jaleel_against_nella(),
                   when=SettleOpposition(roll="a1", outcome="initiator"),
                   actor=player(who), code="forbidden")


# ---------------------------------------------------------------- ACT-2 overruled


def louisa_hacks_for_three_turns():
    (begun,) = act("louisa", [], characteristic="Science", difficulty=3, turns=3)
    return begun  # a1, rolled at turn 2


def test_act_2_act_8_a_dead_characters_long_action_is_cancelled_by_the_storyteller():
    begun = louisa_hacks_for_three_turns()
    given = ROSTER + [begun, CharacterSacrificed(character="louisa", roll="a5"),
                      TurnAdvanced(turn=2, game_seconds=8)]
    assert_refuses(given=given, when=RollAction(character="louisa", resume="a1"),
                   actor=player("louisa"), match="ACT-8")
    (cancelled,) = assert_decides(
        given=given, when=CancelAction(roll="a1", reason="Louisa died"),
        then=[ActionCancelled(roll="a1", character="louisa", turns=3, started_turn=0,
                              last_turn=2, notation="Test (Science, 3)", reason="Louisa died")],
    )
    after = given + [cancelled]
    assert game.fold(after).action.pending == {}
    assert_refuses(given=after, when=CancelAction(roll="a1"), match="ACT-2")
    assert_refuses(given=after, when=RollAction(character="louisa", resume="a1"),
                   actor=player("louisa"), code="not_found")


def test_act_2_a_long_action_already_rolled_cannot_be_cancelled():
    begun = louisa_hacks_for_three_turns()
    rolled = act("louisa", [7, 7, 7], given=[begun, TurnAdvanced(turn=2, game_seconds=8)],
                 resume="a1")
    assert_refuses(given=ROSTER + [begun, TurnAdvanced(turn=2, game_seconds=8), *rolled],
                   when=CancelAction(roll="a1"), code="rule", match="not under way")


def test_act_2_a_waiting_opposed_roll_is_settled_not_cancelled():
    assert_refuses(given=ROSTER + jaleel_against_nella(), when=CancelAction(roll="a1"),
                   match="settle_opposition")


def test_act_2_an_unknown_action_is_refused():
    assert_refuses(given=ROSTER + [louisa_hacks_for_three_turns()], when=CancelAction(roll="a4"),
                   code="not_found", match="ACT-2")


def test_act_2_only_a_storyteller_cancels_a_long_action():
    assert_refuses(given=ROSTER + [louisa_hacks_for_three_turns()], when=CancelAction(roll="a1"),
                   actor=player("louisa"), code="forbidden")


# ---------------------------------------------------------------- who sees the ruling

VIEWERS = [STORYTELLER, player("jaleel"), player("nella"), JUDITH, OBSERVER]


@pytest.mark.parametrize("visibility", ["open", "secret", "blind"])
@pytest.mark.parametrize("viewer", VIEWERS, ids=lambda v: v.character or v.role)
def test_act_12_the_ruling_is_seen_by_exactly_who_saw_the_waiting_roll(visibility, viewer):
    rolled, opened = jaleel_against_nella(visibility, actor=STORYTELLER if visibility == "blind" else None)
    ruled = OppositionRuled(roll=rolled.roll, character="jaleel", opponent="nella", outcome="initiator",
                            winner="jaleel", initiator_ps=rolled.ps, visibility=visibility)
    # the ruling goes to who was called to the contest (ACT-12 sealed: the defender and, when
    # open, everyone), not only to who saw the sealed roll itself
    assert (view(ruled, viewer) is None) == (view(opened, viewer) is None)
    # and whoever held the roll as waiting sees it go (a phone's answer card disappears)
    waiting = fold_view(ROSTER + [rolled, opened], viewer).action.waiting
    assert fold_view(ROSTER + [rolled, opened, ruled], viewer).action.waiting == {}
    assert (rolled.roll in waiting) == (view(opened, viewer) is not None)


def test_act_12_a_secret_rolls_ruling_reaches_the_roller_and_the_opponent_only():
    rolled = jaleel_against_nella("secret")
    (_, ruled) = assert_decides(
        given=ROSTER + rolled, when=SettleOpposition(roll=rolled[0].roll, outcome="defender"),
        then=[revealed(rolled, "secret"), OppositionRuled(roll=rolled[0].roll, character="jaleel", opponent="nella", outcome="defender",
                              winner="nella", initiator_ps=1, visibility="secret")],
    )
    assert view(ruled, player("jaleel")) == ruled
    assert view(ruled, player("nella")) == ruled
    assert view(ruled, STORYTELLER) == ruled
    assert view(ruled, JUDITH) is None and view(ruled, OBSERVER) is None


def test_act_2_a_secret_long_actions_cancellation_is_seen_by_its_character_only():
    (begun,) = act("louisa", [], characteristic="Science", difficulty=3, turns=3,
                   visibility="secret")
    (cancelled,) = assert_decides(
        given=ROSTER + [begun], when=CancelAction(roll=begun.roll),
        then=[ActionCancelled(roll=begun.roll, character="louisa", turns=3, started_turn=0, last_turn=2,
                              notation="Test (Science, 3)", visibility="secret")],
    )
    for viewer in VIEWERS + [player("louisa")]:
        assert (view(cancelled, viewer) is None) == (view(begun, viewer) is None)
    assert view(cancelled, player("louisa")) == cancelled and view(cancelled, JUDITH) is None
