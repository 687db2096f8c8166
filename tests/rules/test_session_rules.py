"""The session clock's numeric rules on both sides of each boundary, through ``decide``.

TIME-3's ceil(seconds / turn length) at a whole number of turns and one second past it;
TIME-4's one action a turn, one more per Celerity level, and the turn a longer action ends;
the session option ``max_player_bonus`` at its value and one above.
"""

from __future__ import annotations

import pytest

from conteur.events import game
from conteur.events.action import TensionRaised, tension_of
from conteur.events.met import IssueChallenge, MetOptions
from conteur.events.model import STORYTELLER
from conteur.events.session import (
    ActionTaken,
    AddCharacter,
    AmendSheet,
    BackInGame,
    CharacterAdded,
    Freeze,
    JoinScene,
    NextTurn,
    OpenScene,
    OpenSession,
    OutOfGame,
    SceneClosed,
    SceneJoined,
    SceneOpened,
    SessionOpened,
    SetTurnLength,
    SheetAmended,
    SkipTime,
    TakeAction,
    TimeOutCalled,
    TimeSkipped,
    TurnAdvanced,
    TurnLengthSet,
)
from conteur.events.sheets import ActionSheet, MetSheet, V5Sheet
from conteur.events.testing import assert_refuses, decide_after
from conteur.events.v5 import HungerSet, RollPool, hunger_of
from tests.support.met_support import A6, player, roster

A = player("a")


# ---------------------------------------------------------------- TIME-1, TIME-3 skips and turns


@pytest.mark.parametrize("seconds, turns", [(1, 1), (3, 1), (4, 1), (5, 2), (15, 4), (16, 4), (17, 5)])
def test_time_3_a_skip_of_seconds_moves_ceil_seconds_over_four_turns(seconds, turns):
    given = roster(a=A6) + [TurnAdvanced(turn=2, game_seconds=8)]
    assert decide_after(given, SkipTime(seconds=seconds)) == [TimeSkipped(seconds=seconds, turn=2 + turns,
                                                                          game_seconds=8 + seconds)]


@pytest.mark.parametrize("length, seconds, turns", [(6, 6, 1), (6, 7, 2), (1, 5, 5), (10, 30, 3), (10, 31, 4)])
def test_time_3_the_turn_length_a_storyteller_sets_divides_the_skip(length, seconds, turns):
    given = roster(a=A6) + [TurnLengthSet(seconds=length)]
    assert decide_after(given, SkipTime(seconds=seconds))[0].turn == turns


def test_time_1_a_skip_of_one_second_moves_time_and_of_zero_does_not():
    assert decide_after(roster(a=A6), SkipTime(seconds=1))[0].game_seconds == 1
    for seconds in (0, -1):
        assert_refuses(given=roster(a=A6), when=SkipTime(seconds=seconds), code="invalid", match="TIME-1")


def test_time_3_a_turn_of_one_second_is_taken_and_of_zero_refused():
    assert decide_after(roster(a=A6), SetTurnLength(seconds=1)) == [TurnLengthSet(seconds=1)]
    for seconds in (0, -4):
        assert_refuses(given=roster(a=A6), when=SetTurnLength(seconds=seconds), code="invalid", match="TIME-3")
        assert_refuses(given=[], when=OpenSession(turn_seconds=seconds), code="invalid", match="TIME-3")
    assert decide_after([], OpenSession(turn_seconds=1))[0].turn_seconds == 1


def test_time_3_the_next_turn_adds_one_turn_and_one_turn_length():
    given = roster(a=A6) + [TurnLengthSet(seconds=6), TurnAdvanced(turn=3, game_seconds=20)]
    assert decide_after(given, NextTurn()) == [TurnAdvanced(turn=4, game_seconds=26)]


# ---------------------------------------------------------------- TIME-4 actions a turn


def paced(sheet: MetSheet, options: MetOptions = MetOptions()) -> list:
    return roster(options, a=sheet) + [TurnAdvanced(turn=1, game_seconds=4, scene="s1")]


def acted(given: list, times: int) -> list:
    for _ in range(times):
        given = given + decide_after(given, TakeAction(character="a"), actor=A)
    return given


@pytest.mark.parametrize("celerity, allowed", [(0, 1), (1, 2), (2, 3)])
def test_time_4_one_action_a_turn_and_one_more_per_celerity_level(celerity, allowed):
    given = acted(paced(MetSheet(physical=5, celerity=celerity)), allowed)
    plural = "s" if allowed > 1 else ""
    assert_refuses(given=given, when=TakeAction(character="a"), actor=A,
                   match=f"used its {allowed} action{plural} this turn")
    next_turn = given + [TurnAdvanced(turn=2, game_seconds=8)]
    assert decide_after(next_turn, TakeAction(character="a"), actor=A)[0].turn == 2


def test_time_4_celerity_gives_no_extra_action_when_the_option_is_off():
    given = acted(paced(MetSheet(physical=5, celerity=2), MetOptions(celerity_extra_actions=False)), 1)
    assert_refuses(given=given, when=TakeAction(character="a"), actor=A, match="used its 1 action this turn")


@pytest.mark.parametrize("celerity, actions, shortens, ends", [
    (0, 1, True, 0), (0, 2, True, 3), (0, 5, True, 6), (1, 3, True, 3), (1, 4, True, 3), (1, 4, False, 5),
])
def test_time_4_a_longer_action_ends_after_its_actions_celerity_shortening_it(celerity, actions, shortens, ends):
    given = paced(MetSheet(physical=5, celerity=celerity))
    (taken,) = decide_after(given, TakeAction(character="a", actions=actions, celerity_shortens=shortens), actor=A)
    assert taken == ActionTaken(character="a", turn=1, ends_turn=ends)


def test_time_4_a_character_busy_until_a_turn_acts_again_on_that_turn():
    given = paced(MetSheet(physical=5)) + [ActionTaken(character="a", turn=1, ends_turn=3),
                                           TurnAdvanced(turn=2, game_seconds=8)]
    assert_refuses(given=given, when=TakeAction(character="a"), actor=A, match="busy with a longer action until turn 3")
    free = given + [TurnAdvanced(turn=3, game_seconds=12)]
    assert decide_after(free, TakeAction(character="a"), actor=A)[0].turn == 3


def test_time_4_an_action_takes_one_action_or_more():
    assert_refuses(given=paced(A6), when=TakeAction(character="a", actions=0), actor=A, code="invalid",
                   match="at least one")


def test_time_4_in_real_time_play_there_is_no_budget():
    given = acted(roster(a=A6), 3)
    assert decide_after(given, TakeAction(character="a"), actor=A)


# ---------------------------------------------------------------- max_player_bonus


@pytest.mark.parametrize("limit", [0, 3])
def test_max_player_bonus_a_player_declares_up_to_the_option_and_not_one_more(limit):
    given = [SessionOpened(name="t", options=MetOptions(max_player_bonus=limit)),
             CharacterAdded(character="a", name="A", sheet=V5Sheet(attributes={"Wits": 2}))]
    taken = decide_after(given, RollPool(character="a", attribute="Wits", bonus=limit), actor=A,
                         draws=[7] * (2 + limit))
    assert taken[0].bonus == limit
    assert_refuses(given=given, when=RollPool(character="a", attribute="Wits", bonus=limit + 1), actor=A,
                   code="rule", match=f"max_player_bonus of {limit}")
    assert decide_after(given, RollPool(character="a", attribute="Wits", bonus=limit + 1), actor=STORYTELLER,
                        draws=[7] * (3 + limit))


def test_max_player_bonus_is_zero_or_more():
    assert decide_after([], OpenSession(max_player_bonus=0))[0].options.max_player_bonus == 0
    assert_refuses(given=[], when=OpenSession(max_player_bonus=-1), code="invalid", match="0 or more")
    assert game.fold(decide_after([], OpenSession())).session.options.max_player_bonus == 3


# ---------------------------------------------------------------- TIME-2 roster and scenes, TIME-5 Time Out


def test_time_4_a_character_without_a_mind_s_eye_sheet_has_one_action_a_turn():
    given = [SessionOpened(name="t"), SceneOpened(scene="s1"), CharacterAdded(character="a", name="A"),
             SceneJoined(character="a", scene="s1"), TurnAdvanced(turn=1, game_seconds=4, scene="s1")]
    given = acted(given, 1)
    assert_refuses(given=given, when=TakeAction(character="a"), actor=A, match="used its 1 action this turn")


def test_time_2_a_character_id_is_neither_empty_nor_the_storyteller_s_side():
    for character in ("", "storyteller"):
        assert_refuses(given=roster(), when=AddCharacter(character=character, name="X"), code="invalid",
                       match="cannot be a character id")
    assert decide_after(roster(), AddCharacter(character="x", name="X")) == [CharacterAdded(character="x", name="X")]
    assert_refuses(given=roster(), when=AddCharacter(character="x", name="X", sheet=MetSheet(physical="six")),
                   code="invalid", match="the sheet does not validate")


def test_time_5_a_player_off_the_roster_is_refused_as_one_not_found_not_frozen_nor_crashed():
    assert_refuses(given=roster(a=A6), when=TakeAction(character="ghost"), actor=player("ghost"), code="not_found")


def frozen_scene() -> list:
    return roster(a=A6) + [SceneOpened(scene="s2", name="Crypt"), TimeOutCalled(scope="scene", scene="s2")]


def test_time_5_a_storyteller_moves_a_character_into_a_frozen_scene_a_player_may_not():
    assert decide_after(frozen_scene(), JoinScene(character="a", scene="s2"))[-1] == SceneJoined(character="a",
                                                                                               scene="s2")
    assert_refuses(given=frozen_scene(), when=JoinScene(character="a", scene="s2"), actor=A, code="frozen",
                   match="Crypt")


@pytest.mark.parametrize("already, scope, scene, taken", [
    ([], "session", None, True), ([], "venue", None, True), ([], "scene", "s1", True),
    ([TimeOutCalled(scope="session")], "session", None, False),
    ([TimeOutCalled(scope="session")], "venue", None, True),
    ([TimeOutCalled(scope="session")], "scene", "s1", True),
    ([TimeOutCalled(scope="venue")], "venue", None, False),
    ([TimeOutCalled(scope="venue")], "session", None, True),
    ([TimeOutCalled(scope="scene", scene="s1")], "scene", "s1", False),
    ([TimeOutCalled(scope="scene", scene="s1")], "session", None, True),
])
def test_time_5_each_scope_of_time_out_is_called_once_until_resumed(already, scope, scene, taken):
    given = roster(a=A6) + already
    if taken:
        assert decide_after(given, Freeze(scope=scope, scene=scene)) == [TimeOutCalled(scope=scope, scene=scene)]
    else:
        assert_refuses(given=given, when=Freeze(scope=scope, scene=scene), match="already in Time Out")


def test_time_2_an_amended_sheet_keeps_its_kind_and_a_character_without_one_takes_any():
    assert decide_after(roster(a=A6), AmendSheet(character="a", sheet=MetSheet(physical=4), reason="staked")) == [
        SheetAmended(character="a", sheet=MetSheet(physical=4), reason="staked")]
    assert_refuses(given=roster(a=A6), when=AmendSheet(character="a", sheet=V5Sheet()), code="invalid",
                   match="A has a met sheet: a v5 sheet cannot replace it")
    bare = roster() + [CharacterAdded(character="n", name="N")]
    assert decide_after(bare, AmendSheet(character="n", sheet=V5Sheet()))[0].sheet == V5Sheet()
    assert_refuses(given=roster(a=A6), when=AmendSheet(character="a", sheet=None), code="invalid",
                   match="whole new sheet")


def test_time_4_a_closed_scene_and_a_skip_end_turn_by_turn_play():
    paced_a = paced(A6)
    assert_refuses(given=acted(paced_a, 1), when=TakeAction(character="a"), actor=A, match="TIME-4")
    skipped = acted(paced_a, 1) + decide_after(acted(paced_a, 1), SkipTime(seconds=60))
    assert decide_after(acted(skipped, 2), TakeAction(character="a"), actor=A)  # real time again: no budget
    reopened = paced_a + [SceneClosed(scene="s1"), SceneOpened(scene="s1"), SceneJoined(character="a", scene="s1")]
    assert decide_after(acted(reopened, 2), TakeAction(character="a"), actor=A)
    assert game.fold(reopened).session.scenes["s1"].paced is False


def test_time_6_back_in_game_a_character_is_a_target_again():
    given = roster(a=A6, b=A6)
    out = given + decide_after(given, OutOfGame(character="b"), actor=player("b"))
    assert_refuses(given=out, when=IssueChallenge(character="a", defender="b", attribute="physical"), actor=A,
                   code="out_of_game")
    back = out + decide_after(out, BackInGame(character="b"), actor=player("b"))
    assert decide_after(back, IssueChallenge(character="a", defender="b", attribute="physical"), actor=A)


def test_time_2_a_scene_opened_without_a_name_is_named_by_its_id():
    given = roster(a=A6) + [SceneOpened(scene="s9")]
    assert game.fold(given).session.scenes["s9"].name == "s9"
    assert_refuses(given=given, when=OpenScene(scene="s9"), match="scene 's9' is already open")


def test_v5_5_act_8_an_amended_starting_value_starts_play_again_a_redacted_amendment_changes_nothing():
    given = roster() + [CharacterAdded(character="v", name="V", sheet=V5Sheet(hunger=2)),
                        HungerSet(character="v", hunger=4, previous=2),
                        CharacterAdded(character="t", name="T", sheet=ActionSheet(tension=1)),
                        TensionRaised(character="t", tension=3, roll="a1")]
    state = game.fold(given)
    assert (hunger_of(state, "v"), tension_of(state, "t")) == (4, 3)
    redacted = game.fold(given + [SheetAmended(character="v"), SheetAmended(character="t")])
    assert (hunger_of(redacted, "v"), tension_of(redacted, "t")) == (4, 3)
    assert redacted.session.characters["v"].sheet == V5Sheet(hunger=2)
    same = game.fold(given + [SheetAmended(character="v", sheet=V5Sheet(hunger=2, willpower=6)),
                              SheetAmended(character="t", sheet=ActionSheet(tension=1, characteristics={"Force": 5}))])
    assert (hunger_of(same, "v"), tension_of(same, "t")) == (4, 3)
    assert same.session.characters["v"].sheet == V5Sheet(hunger=2, willpower=6)
    moved = game.fold(given + [SheetAmended(character="v", sheet=V5Sheet(hunger=1)),
                               SheetAmended(character="t", sheet=ActionSheet(tension=0))])
    assert (hunger_of(moved, "v"), tension_of(moved, "t")) == (1, 0)
