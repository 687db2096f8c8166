"""The session clock's numeric rules on both sides of each boundary, through ``decide``.

TIME-3's ceil(seconds / turn length) at a whole number of turns and one second past it;
TIME-4's one action a turn, one more per Celerity level, and the turn a longer action ends;
the session option ``max_player_bonus`` at its value and one above.
"""

from __future__ import annotations

import pytest

from conteur.events import game, views
from conteur.events.action import TensionRaised, tension_of
from conteur.events.met import IssueChallenge, MetOptions
from conteur.events.met_rules import TieDebt
from conteur.events.model import STORYTELLER, Actor
from conteur.events.session import (
    ActionTaken,
    CameBackInGame,
    AddCharacter,
    AmendSheet,
    BackInGame,
    Carried,
    CharacterAdded,
    CloseScene,
    Freeze,
    JoinScene,
    LeaveScene,
    MarkNoSheet,
    NextTurn,
    NoSheetMarked,
    OpenScene,
    OpenSession,
    OutOfGame,
    Resume,
    SceneClosed,
    SceneJoined,
    SceneLeft,
    SceneOpened,
    SessionClosed,
    SessionOpened,
    SetTurnLength,
    SheetAmended,
    SkipTime,
    TakeAction,
    TimeOutCalled,
    TimeOutEnded,
    TimeSkipped,
    TurnAdvanced,
    TurnLengthSet,
    WentOutOfGame,
    clock,
)
from conteur.events.sheets import ActionSheet, MetSheet, V5Sheet
from conteur.events.testing import assert_refuses, decide_after
from conteur.events.v5 import HungerSet, PoolRolled, RollPool, SetHunger, hunger_of
from tests.support.met_support import A6, B7, player, roster

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


@pytest.mark.parametrize("celerity, allowed", [(-1, 1), (0, 1), (1, 2), (2, 3)])
def test_time_4_one_action_a_turn_and_one_more_per_celerity_level(celerity, allowed):
    # a Celerity below 0 (a sheet's count may be) takes no action away
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

    def amended(v: V5Sheet, t: ActionSheet) -> list:
        first = decide_after(given, AmendSheet(character="v", sheet=v, reason="fed"))
        return first + decide_after(given + first, AmendSheet(character="t", sheet=t, reason="calmed"))

    same = amended(V5Sheet(hunger=2, willpower=6), ActionSheet(tension=1, characteristics={"Force": 5}))
    assert (hunger_of(game.fold(given + same), "v"), tension_of(game.fold(given + same), "t")) == (4, 3)
    assert game.fold(given + same).session.characters["v"].sheet == V5Sheet(hunger=2, willpower=6)
    moved = amended(V5Sheet(hunger=1), ActionSheet(tension=0))
    assert (hunger_of(game.fold(given + moved), "v"), tension_of(game.fold(given + moved), "t")) == (1, 0)
    # another player's view holds the amendments without their sheets: nothing moves for it
    redacted = game.fold(given + [e.redacted() for e in moved])
    assert (hunger_of(redacted, "v"), tension_of(redacted, "t")) == (4, 3)
    assert redacted.session.characters["v"].sheet == V5Sheet(hunger=2)


# ---------------------------------------------------------------- every refusal: its rule, code and message

ROSTER = roster(a=A6, b=B7)  # A and B in scene s1, "Elysium"
PACING = [TurnAdvanced(turn=1, game_seconds=4, scene="s1")]  # s1 played turn by turn
V5_ROSTER = [SessionOpened(name="t"), CharacterAdded(character="a", name="A", sheet=V5Sheet(attributes={"Wits": 2}))]
CHALLENGE_B = IssueChallenge(character="a", defender="b", attribute="physical")
BAD_SHEET = MetSheet(physical="six")
BAD_SHEET_MESSAGE = "the sheet does not validate: Expected `int`, got `str` - at `$.physical`"

# the refusals a player or a storyteller reads, each with the rule it applies (the rule
# lands in CommandRejected.rule) and the facts it names: given, command, actor, rule, code, message
REFUSALS = {
    "TIME-1 a skip of 0 s": (
        [], SkipTime(seconds=0), STORYTELLER, "TIME-1", "invalid", "time only moves forward (TIME-1)"),
    "TIME-2 closed session": (
        [SessionClosed(seed="x")], TakeAction(character="a"), A, "TIME-2", "rule",
        "the session is already closed (TIME-2): take_action is refused, a closed session changes no more "
        "(its draw seed is public); play on in a new session"),
    "TIME-2 closed session, a storyteller": (
        [SessionClosed(seed="x")], OpenSession(), STORYTELLER, "TIME-2", "rule",
        "the session is already closed (TIME-2): open_session is refused, a closed session changes no more "
        "(its draw seed is public); play on in a new session"),
    "TIME-2 open twice": (
        [], OpenSession(), STORYTELLER, "TIME-2", "rule", "the session is already open (TIME-2)"),
    "TIME-2 no such character": (
        [], MarkNoSheet(character="ghost"), STORYTELLER, "TIME-2", "not_found", "no character 'ghost' in this session"),
    "TIME-2 no such scene": (
        [], NextTurn(scene="s9"), STORYTELLER, "TIME-2", "not_found", "no scene 's9'"),
    "TIME-2 a character twice": (
        [], AddCharacter(character="a", name="A2"), STORYTELLER, "TIME-2", "invalid",
        "character 'a' is already on the roster"),
    "TIME-2 an empty id": (
        [], AddCharacter(character="", name="X"), STORYTELLER, "TIME-2", "invalid", "'' cannot be a character id"),
    "TIME-2 the storyteller's side": (
        [], AddCharacter(character="storyteller", name="X"), STORYTELLER, "TIME-2", "invalid",
        "'storyteller' cannot be a character id"),
    "TIME-2 a scene of no id": (
        [], OpenScene(scene="", name="Cellar"), STORYTELLER, "TIME-2", "invalid", "'' cannot be a scene id"),
    "TIME-2 a scene open twice": (
        [], OpenScene(scene="s1"), STORYTELLER, "TIME-2", "rule", "scene 'Elysium' is already open (TIME-2)"),
    "TIME-2 a scene closed twice": (
        [SceneClosed(scene="s1")], CloseScene(scene="s1"), STORYTELLER, "TIME-2", "rule",
        "scene 's1' is already closed (TIME-2)"),
    "TIME-2 a closed scene joined": (
        [SceneOpened(scene="s2", name="Docks"), SceneClosed(scene="s2")], JoinScene(character="a", scene="s2"), A,
        "TIME-2", "rule", "scene 'Docks' is closed (TIME-2)"),
    "TIME-2 a scene joined twice": (
        [], JoinScene(character="a", scene="s1"), A, "TIME-2", "rule", "A is already in scene 'Elysium'"),
    "TIME-2 leaving no scene": (
        [SceneLeft(character="a", scene="s1")], LeaveScene(character="a"), A, "TIME-2", "rule", "A is in no scene"),
    "TIME-3 a turn of 0 s set": (
        [], SetTurnLength(seconds=0), STORYTELLER, "TIME-3", "invalid", "a turn lasts more than 0 seconds (TIME-3)"),
    "TIME-3 a session opened with turns of 0 s": (
        None, OpenSession(turn_seconds=0), STORYTELLER, "TIME-3", "invalid",
        "a turn lasts more than 0 seconds (TIME-3)"),
    "TIME-4 busy": (
        PACING + [ActionTaken(character="a", turn=1, ends_turn=3)], TakeAction(character="a"), A,
        "TIME-4", "rule", "A is busy with a longer action until turn 3 (TIME-4)"),
    "TIME-4 the turn's action used": (
        PACING + [ActionTaken(character="a", turn=1)], TakeAction(character="a"), A, "TIME-4", "rule",
        "A has used its 1 action this turn (TIME-4)"),
    "TIME-4 an action of 0 actions": (
        [], TakeAction(character="a", actions=0), A, "TIME-4", "invalid",
        "an action takes at least one action (TIME-4)"),
    "TIME-5 venue": (
        [TimeOutCalled(scope="venue")], TakeAction(character="a"), A, "TIME-5", "frozen",
        "Time Out for the whole venue: every session is frozen until a storyteller resumes (TIME-5)"),
    "TIME-5 session": (
        [TimeOutCalled(scope="session")], TakeAction(character="a"), A, "TIME-5", "frozen",
        "Time Out: the session is frozen until a storyteller resumes (TIME-5)"),
    "TIME-5 scene": (
        [TimeOutCalled(scope="scene", scene="s1")], TakeAction(character="a"), A, "TIME-5", "frozen",
        "Time Out: scene 'Elysium' is frozen until a storyteller resumes (TIME-5)"),
    "TIME-5 joining a frozen scene": (
        [SceneOpened(scene="s2", name="Crypt"), TimeOutCalled(scope="scene", scene="s2")],
        JoinScene(character="a", scene="s2"), A, "TIME-5", "frozen", "Time Out: scene 'Crypt' is frozen (TIME-5)"),
    "TIME-5 a scene Time Out without its scene": (
        [], Freeze(scope="scene"), STORYTELLER, "TIME-5", "invalid", "a scene Time Out names its scene (TIME-5)"),
    "TIME-5 a scene resume without its scene": (
        [TimeOutCalled(scope="scene", scene="s1")], Resume(scope="scene"), STORYTELLER, "TIME-5", "invalid",
        "a scene Time Out names its scene (TIME-5)"),
    "TIME-5 Time Out twice": (
        [TimeOutCalled(scope="session")], Freeze(), STORYTELLER, "TIME-5", "rule", "already in Time Out (TIME-5)"),
    "TIME-5 no Time Out to end": (
        [], Resume(), STORYTELLER, "TIME-5", "rule", "there is no Time Out to end here (TIME-5)"),
    "TIME-6 out of game": (
        [WentOutOfGame(character="a")], TakeAction(character="a"), A, "TIME-6", "out_of_game",
        "you are out of game and interact with no other player (TIME-6)"),
    "TIME-6 an out-of-game target": (
        [WentOutOfGame(character="b")], CHALLENGE_B, A, "TIME-6", "out_of_game",
        "B is out of game and interacts with no other player (TIME-6)"),
    "TIME-6 out of game twice": (
        [WentOutOfGame(character="a")], OutOfGame(character="a"), A, "TIME-6", "rule", "already out of game (TIME-6)"),
    "TIME-6 back without being out": (
        [], BackInGame(character="a"), A, "TIME-6", "rule", "not out of game (TIME-6)"),
    "max_player_bonus below 0": (
        None, OpenSession(max_player_bonus=-1), STORYTELLER, "max_player_bonus", "invalid",
        "max_player_bonus counts dice, 0 or more"),
    "max_player_bonus exceeded": (
        V5_ROSTER, RollPool(character="a", attribute="Wits", bonus=4), A, "max_player_bonus", "rule",
        "a bonus of 4 dice is above this session's max_player_bonus of 3: ask a storyteller for more"),
    "sheet invalid on the roster": (
        [], AddCharacter(character="x", name="X", sheet=BAD_SHEET), STORYTELLER, "sheet", "invalid",
        BAD_SHEET_MESSAGE),
    "sheet invalid amended": (
        [], AmendSheet(character="a", sheet=BAD_SHEET), STORYTELLER, "sheet", "invalid", BAD_SHEET_MESSAGE),
    "sheet missing": (
        [], AmendSheet(character="a", sheet=None), STORYTELLER, "sheet", "invalid",
        "amend_sheet needs the whole new sheet"),
    "sheet of another kind": (
        [], AmendSheet(character="a", sheet=V5Sheet()), STORYTELLER, "sheet", "invalid",
        "A has a met sheet: a v5 sheet cannot replace it (send a met sheet)"),
}


def _given(given: list | None) -> list:
    """``None``: no session yet; a list starting with ``SessionOpened``: its own roster; else after ROSTER."""
    if given is None:
        return []
    return list(given) if given and isinstance(given[0], SessionOpened) else ROSTER + list(given)


@pytest.mark.parametrize("given, when, actor, rule, code, message", REFUSALS.values(), ids=REFUSALS.keys())
def test_time_1_to_6_a_refusal_names_the_rule_it_applies(given, when, actor, rule, code, message):
    refused = assert_refuses(given=_given(given), when=when, actor=actor, code=code)
    assert (refused.rule, refused.message) == (rule, message)


# ---------------------------------------------------------------- TIME-2 a session, its scenes and roster


def test_time_2_a_session_opens_with_every_setting_it_names_and_met_13_the_debts_it_carries():
    debt = TieDebt(debtor="b", creditor="a", challenge="c7")
    options = MetOptions(bomb=True, retest_cancel=True, accept_timeout=30, celerity_extra_actions=False,
                         max_player_bonus=5)
    opened = SessionOpened(name="Night 2", chronicle="Paris", scenario="Masque", turn_seconds=6, options=options,
                           seed_commitment="abc", carried=Carried(tie_debts=(debt,)))
    assert decide_after([], OpenSession(
        name="Night 2", chronicle="Paris", scenario="Masque", turn_seconds=6, bomb=True, retest_cancel=True,
        accept_timeout=30, celerity_extra_actions=False, max_player_bonus=5, seed_commitment="abc",
        carried=Carried(tie_debts=(debt,)))) == [opened]
    state = game.fold([opened])
    session = state.session
    assert (session.name, session.chronicle, session.scenario, session.status, session.turn_seconds,
            session.options, session.seed_commitment) == ("Night 2", "Paris", "Masque", "open", 6, options, "abc")
    assert state.met.debts == (debt,)
    assert decide_after([opened], NextTurn()) == [TurnAdvanced(turn=1, game_seconds=6)]


def test_time_2_a_scene_is_named_by_its_id_unless_named_and_opens_again_once_closed():
    assert decide_after(ROSTER, OpenScene(scene="s9")) == [SceneOpened(scene="s9", name="s9")]
    assert decide_after(ROSTER, OpenScene(scene="s9", name="Roof")) == [SceneOpened(scene="s9", name="Roof")]
    closed = ROSTER + [SceneClosed(scene="s1")]
    assert decide_after(closed, OpenScene(scene="s1", name="Hall")) == [SceneOpened(scene="s1", name="Hall")]
    assert game.fold(closed + [SceneOpened(scene="s1", name="Hall")]).session.scenes["s1"].open is True


def test_time_2_a_closed_scene_sends_out_its_characters_only():
    given = ROSTER + [SceneOpened(scene="s2", name="Docks"), SceneJoined(character="b", scene="s2")]
    closed = given + decide_after(given, CloseScene(scene="s1"))
    session = game.fold(closed).session
    assert (session.characters["a"].scene, session.characters["b"].scene, session.scenes["s1"].open) == (
        None, "s2", False)
    assert session.scenes["s2"].open is True


def test_time_2_a_character_in_no_scene_joins_one_without_leaving_any():
    given = ROSTER + [SceneLeft(character="a", scene="s1")]
    assert game.fold(given).session.characters["a"].scene is None
    assert decide_after(given, JoinScene(character="a", scene="s1"), actor=A) == [SceneJoined(character="a",
                                                                                            scene="s1")]
    assert decide_after(ROSTER, LeaveScene(character="a"), actor=A) == [SceneLeft(character="a", scene="s1")]


def test_met_6_a_storyteller_marks_a_sheet_at_hand_again():
    marked = ROSTER + [NoSheetMarked(character="a")]
    assert decide_after(marked, MarkNoSheet(character="a", no_sheet=False)) == [
        NoSheetMarked(character="a", no_sheet=False)]
    assert game.fold(marked).session.characters["a"].no_sheet is True
    assert game.fold(marked + [NoSheetMarked(character="a", no_sheet=False)]).session.characters["a"].no_sheet is False


# ---------------------------------------------------------------- TIME-5 each Time Out ends with its own resume


@pytest.mark.parametrize("frozen, scope, scene, ended", [
    ([TimeOutCalled(scope="venue")], "venue", None, True),
    ([TimeOutCalled(scope="venue")], "session", None, False),
    ([TimeOutCalled(scope="session")], "session", None, True),
    ([TimeOutCalled(scope="session")], "venue", None, False),
    ([TimeOutCalled(scope="session")], "scene", "s1", False),
    ([TimeOutCalled(scope="scene", scene="s1")], "scene", "s1", True),
    ([TimeOutCalled(scope="scene", scene="s1")], "session", None, False),
    ([TimeOutCalled(scope="scene", scene="s1")], "venue", None, False),
])
def test_time_5_each_scope_of_time_out_ends_with_its_own_resume_and_play_goes_on(frozen, scope, scene, ended):
    given = ROSTER + frozen
    assert_refuses(given=given, when=TakeAction(character="a"), actor=A, code="frozen")
    if not ended:
        assert_refuses(given=given, when=Resume(scope=scope, scene=scene), code="rule", match="no Time Out")
        return
    resumed = decide_after(given, Resume(scope=scope, scene=scene))
    assert resumed == [TimeOutEnded(scope=scope, scene=scene)]
    assert decide_after(given + resumed, TakeAction(character="a"), actor=A) == [ActionTaken(character="a", turn=0)]


def test_time_5_the_venue_s_resume_leaves_the_session_s_own_time_out_and_the_session_s_the_scene_s():
    venue_then_session = ROSTER + [TimeOutCalled(scope="session"), TimeOutCalled(scope="venue"),
                                   TimeOutEnded(scope="venue")]
    assert_refuses(given=venue_then_session, when=TakeAction(character="a"), actor=A,
                   match="the session is frozen")
    session_then_scene = ROSTER + [TimeOutCalled(scope="scene", scene="s1"), TimeOutCalled(scope="session"),
                                   TimeOutEnded(scope="session")]
    assert_refuses(given=session_then_scene, when=TakeAction(character="a"), actor=A, match="scene 'Elysium'")


def test_time_5_a_scene_s_time_out_stops_no_one_outside_a_scene():
    given = ROSTER + [SceneLeft(character="a", scene="s1"), TimeOutCalled(scope="scene", scene="s1")]
    assert decide_after(given, TakeAction(character="a"), actor=A) == [ActionTaken(character="a", turn=0)]


# ---------------------------------------------------------------- TIME-4 the scene a turn paces


def test_time_4_the_next_turn_names_the_scene_it_paces_and_the_budget_applies_there():
    (advanced,) = decide_after(ROSTER, NextTurn(scene="s1"))
    assert advanced == TurnAdvanced(turn=1, game_seconds=4, scene="s1")
    paced_s1 = acted(ROSTER + [advanced], 1)
    assert game.fold(paced_s1).session.scenes["s1"].paced is True
    assert_refuses(given=paced_s1, when=TakeAction(character="a"), actor=A, match="used its 1 action this turn")


def test_time_4_a_character_out_of_the_paced_scene_has_no_budget():
    given = acted(ROSTER + PACING + [SceneLeft(character="a", scene="s1")], 2)
    assert decide_after(given, TakeAction(character="a"), actor=A) == [ActionTaken(character="a", turn=1)]


# ---------------------------------------------------------------- TIME-1, TIME-3 the clock a skip leaves


def test_time_1_3_after_a_skip_the_clock_and_the_next_turn_count_from_the_skip():
    given = ROSTER + [TurnAdvanced(turn=2, game_seconds=8)]
    skipped = given + decide_after(given, SkipTime(seconds=15, note="later"))
    assert skipped[-1] == TimeSkipped(seconds=15, turn=6, game_seconds=23, note="later")
    assert clock(game.fold(skipped)) == (6, 23)
    assert decide_after(skipped, NextTurn()) == [TurnAdvanced(turn=7, game_seconds=27)]


def test_time_4_a_skip_and_a_closed_scene_leave_every_scene_played_in_real_time():
    given = ROSTER + [SceneOpened(scene="s2", name="Docks"), TurnAdvanced(turn=1, game_seconds=4, scene="s1")]
    assert game.fold(given).session.scenes["s1"].paced is True
    skipped = game.fold(given + decide_after(given, SkipTime(seconds=60))).session
    assert (skipped.scenes["s1"].paced, skipped.scenes["s2"].paced) == (False, False)
    closed = game.fold(given + decide_after(given, CloseScene(scene="s1"))).session
    assert (closed.scenes["s1"].open, closed.scenes["s1"].paced, closed.scenes["s2"].paced) == (False, False, False)


# ---------------------------------------------------------------- TIME-5, TIME-6 the state a resume leaves


@pytest.mark.parametrize("scope, scene", [("venue", None), ("session", None), ("scene", "s1")])
def test_time_5_a_time_out_ended_leaves_its_scope_unfrozen(scope, scene):
    frozen = ROSTER + decide_after(ROSTER, Freeze(scope=scope, scene=scene))
    resumed = game.fold(frozen + decide_after(frozen, Resume(scope=scope, scene=scene))).session
    assert (resumed.venue_frozen, resumed.frozen, resumed.scenes["s1"].frozen) == (False, False, False)


def test_time_6_back_in_game_a_character_is_in_game_in_the_state():
    out = ROSTER + decide_after(ROSTER, OutOfGame(character="a"), actor=A)
    assert game.fold(out).session.characters["a"].out_of_game is True
    back = decide_after(out, BackInGame(character="a"), actor=A)
    assert back == [CameBackInGame(character="a")]
    assert game.fold(out + back).session.characters["a"].out_of_game is False


def test_time_5_a_player_in_a_frozen_scene_cannot_walk_out_into_another_a_storyteller_moves_it():
    given = ROSTER + [SceneOpened(scene="s2", name="Docks"), TimeOutCalled(scope="scene", scene="s1")]
    refused = assert_refuses(given=given, when=JoinScene(character="a", scene="s2"), actor=A, code="frozen")
    assert refused.message == "Time Out: scene 'Elysium' is frozen until a storyteller resumes (TIME-5)"
    assert decide_after(given, JoinScene(character="a", scene="s2")) == [
        SceneLeft(character="a", scene="s1"), SceneJoined(character="a", scene="s2")]


# ---------------------------------------------------------------- TIME-4 the budget of each turn


def test_time_4_the_budget_of_actions_starts_afresh_each_turn():
    given = paced(MetSheet(physical=5, celerity=1))  # 2 actions a turn
    for turn in (1, 2):
        given = acted(given, 2)
        refused = assert_refuses(given=given, when=TakeAction(character="a"), actor=A, code="rule")
        assert refused.message == "A has used its 2 actions this turn (TIME-4)"
        given = given + [TurnAdvanced(turn=turn + 1, game_seconds=4 * (turn + 1))]
    assert game.fold(given).session.characters["a"].actions_used == 2


@pytest.mark.parametrize("extra, ends", [(True, 3), (False, 5)])
def test_time_4_celerity_shortens_a_longer_action_only_when_the_option_gives_it_actions(extra, ends):
    given = paced(MetSheet(physical=5, celerity=1), MetOptions(celerity_extra_actions=extra))
    (taken,) = decide_after(given, TakeAction(character="a", actions=4), actor=A)
    assert taken == ActionTaken(character="a", turn=1, ends_turn=ends)


# ---------------------------------------------------------------- V5-5 a starting Hunger of a sheet of another kind


def test_v5_5_an_amended_sheet_without_a_starting_hunger_keeps_the_hunger_played():
    given = roster(a=A6) + [CharacterAdded(character="n", name="N")]
    for who in ("a", "n"):
        given = given + decide_after(given, SetHunger(character=who, hunger=3))
    met_again = given + decide_after(given, AmendSheet(character="a", sheet=MetSheet(physical=4)))
    met_given = given + decide_after(given, AmendSheet(character="n", sheet=MetSheet(physical=4)))
    v5_given = given + decide_after(given, AmendSheet(character="n", sheet=V5Sheet(hunger=1)))
    assert (hunger_of(game.fold(met_again), "a"), hunger_of(game.fold(met_given), "n")) == (3, 3)
    assert hunger_of(game.fold(v5_given), "n") == 1  # a sheet's starting Hunger, where there was none


def test_v5_1_a_storyteller_s_pool_for_no_character_reads_no_sheet_and_rolls_no_hunger_die():
    (rolled,) = decide_after(V5_ROSTER, RollPool(pool=2), draws=[7, 3])
    assert isinstance(rolled, PoolRolled)
    assert (rolled.character, rolled.pool, rolled.normal, rolled.hunger) == (None, 2, (7, 3), ())


# ---------------------------------------------------------------- TIME-2 an amended sheet is secret


def test_time_2_an_amended_sheet_and_its_reason_are_secret_to_its_player():
    (amended,) = decide_after(ROSTER, AmendSheet(character="a", sheet=MetSheet(physical=4), reason="staked"))
    assert amended == SheetAmended(character="a", sheet=MetSheet(physical=4), reason="staked")
    for viewer in (STORYTELLER, A):
        assert views.view(amended, viewer) == amended
    for viewer in (player("b"), Actor(role="observer")):
        assert views.view(amended, viewer) == SheetAmended(character="a", sheet=None, reason="")
    seen_by_b = views.fold_view(ROSTER + [amended], player("b")).session.characters["a"]
    assert seen_by_b.sheet is None  # b never saw a's sheet, before or after
