"""The session clock, rule by rule (TIME-1..6), given events / when command / then events."""

from __future__ import annotations

import pytest
from hypothesis import given, strategies as st

from conteur.events import game, met
from conteur.events.met import MetOptions, initiative_order
from conteur.events.model import STORYTELLER
from conteur.events.session import (
    ActionTaken,
    AddCharacter,
    BackInGame,
    CameBackInGame,
    CharacterAdded,
    CloseScene,
    CloseSession,
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
    SkipTime,
    TakeAction,
    TimeOutCalled,
    TimeOutEnded,
    TimeSkipped,
    TurnAdvanced,
    TurnLengthSet,
    WentOutOfGame,
)
from conteur.events.sheets import MetSheet
from conteur.events.testing import assert_decides, assert_refuses, decide_after
from tests.support.met_support import A6, B7, player, roster

A = player("a")


# ---------------------------------------------------------------- TIME-1 real time, skips


def test_time_1_a_skip_is_an_event_that_moves_the_game_clock():
    assert_decides(
        given=roster(a=A6),
        when=SkipTime(seconds=3600, note="an hour later, nothing happened"),
        then=[TimeSkipped(seconds=3600, turn=900, game_seconds=3600, note="an hour later, nothing happened")],
    )


def test_time_1_time_never_runs_backwards():
    assert_refuses(given=roster(), when=SkipTime(seconds=0), code="invalid", match="TIME-1")


def test_time_1_only_a_storyteller_skips_time():
    assert_refuses(given=roster(a=A6), when=SkipTime(seconds=60), actor=A, code="forbidden")


# ---------------------------------------------------------------- TIME-2 units


def test_time_2_a_session_opens_with_its_settings_and_seed_commitment():
    assert_decides(
        given=[],
        when=OpenSession(name="Night 1", turn_seconds=5, bomb=True, seed_commitment="abc"),
        then=[
            SessionOpened(name="Night 1", turn_seconds=5, options=MetOptions(bomb=True), seed_commitment="abc")
        ],
    )


def test_time_2_a_session_belongs_to_a_scenario_of_a_chronicle():
    events = assert_decides(
        given=[], when=OpenSession(name="Night 3", chronicle="Paris by Night", scenario="The Masque"),
        then=[SessionOpened(name="Night 3", chronicle="Paris by Night", scenario="The Masque")],
    )
    state = game.fold(events).session
    assert (state.chronicle, state.scenario, state.name, state.status) == (
        "Paris by Night", "The Masque", "Night 3", "open")
    assert_refuses(given=events, when=OpenSession(), match="already open")


def test_time_2_closing_the_session_reveals_the_seed_and_stops_play():
    events = assert_decides(given=roster(a=A6), when=CloseSession(seed="s3cr3t"), then=[SessionClosed(seed="s3cr3t")])
    state = game.fold(roster(a=A6) + events)
    assert (state.session.status, state.session.seed) == ("closed", "s3cr3t")
    assert_refuses(
        given=roster(a=A6) + events,
        when=met.IssueChallenge(character="a", kind="simple"),
        actor=A,
        match="closed",
    )
    assert_refuses(given=roster(a=A6) + events, when=OpenSession(), match="already closed")


def test_time_2_scenes_open_are_joined_left_and_closed():
    given = roster(a=A6) + [SceneOpened(scene="s2", name="Docks")]
    assert_decides(
        given=given,
        when=JoinScene(character="a", scene="s2"),
        actor=A,
        then=[SceneLeft(character="a", scene="s1"), SceneJoined(character="a", scene="s2")],
    )
    assert_decides(given=given, when=LeaveScene(character="a"), actor=A, then=[SceneLeft(character="a", scene="s1")])
    closed = given + decide_after(given, CloseScene(scene="s1"))
    assert SceneClosed(scene="s1") in closed and game.fold(closed).session.characters["a"].scene is None
    assert_refuses(given=closed, when=JoinScene(character="a", scene="s1"), actor=A, match="closed")


def test_time_2_a_player_moves_only_its_own_character():
    assert_refuses(
        given=roster(a=A6, b=B7), when=JoinScene(character="b", scene="s1"), actor=A, code="forbidden"
    )


def test_time_2_only_storytellers_open_scenes():
    assert_refuses(given=roster(a=A6), when=OpenScene(scene="s9"), actor=A, code="forbidden")
    assert_decides(given=roster(), when=OpenScene(scene="s9", name="Roof"), then=[SceneOpened(scene="s9", name="Roof")])
    assert_decides(given=roster(), when=CloseScene(scene="s1"), then=[SceneClosed(scene="s1")])


def test_time_2_a_character_added_is_secret_to_its_player():
    event = assert_decides(
        given=roster(), when=AddCharacter(character="a", name="Anna", sheet=A6),
        then=[CharacterAdded(character="a", name="Anna", sheet=A6)],
    )[0]
    assert event.owners() == frozenset({"a"})
    assert event.redacted() == CharacterAdded(character="a", name="Anna", sheet=None)


# ---------------------------------------------------------------- TIME-3 turns


@pytest.mark.parametrize("seconds, turns", [(15, 4), (4, 1), (5, 2), (1, 1), (8, 2), (60, 15)])
def test_time_3_a_duration_in_seconds_is_rounded_up_to_turns(seconds, turns):
    (skipped,) = decide_after(roster(), SkipTime(seconds=seconds))
    assert skipped.turn == turns


@given(st.integers(1, 100_000), st.integers(1, 60))
def test_time_3_turns_cover_the_duration_and_no_more(seconds, length):
    paced = roster() + decide_after(roster(), SetTurnLength(seconds=length))
    (skipped,) = decide_after(paced, SkipTime(seconds=seconds))
    assert skipped.turn * length >= seconds > (skipped.turn - 1) * length


def test_time_3_a_turn_lasts_4_seconds_unless_a_storyteller_sets_otherwise():
    assert_decides(given=roster(), when=NextTurn(), then=[TurnAdvanced(turn=1, game_seconds=4)])
    given = roster() + [TurnLengthSet(seconds=6)]
    assert_decides(given=[], when=SetTurnLength(seconds=6), then=[TurnLengthSet(seconds=6)])
    assert_decides(given=given, when=NextTurn(), then=[TurnAdvanced(turn=1, game_seconds=6)])
    assert_refuses(given=roster(), when=SetTurnLength(seconds=0), code="invalid", match="TIME-3")


# ---------------------------------------------------------------- TIME-4 actions per turn


def paced(**sheets):
    return roster(**sheets) + [TurnAdvanced(turn=1, game_seconds=4, scene="s1")]


def test_time_4_one_action_per_turn_in_a_scene_played_turn_by_turn():
    given = paced(a=A6) + [ActionTaken(character="a", turn=1, description="strike")]
    assert_refuses(given=given, when=TakeAction(character="a", description="strike again"), actor=A, match="TIME-4")
    assert_decides(
        given=given + [TurnAdvanced(turn=2, game_seconds=8)],
        when=TakeAction(character="a", description="strike again"),
        actor=A,
        then=[ActionTaken(character="a", turn=2, description="strike again")],
    )


def test_time_4_a_challenge_initiated_spends_the_turn_action():
    given = paced(a=A6, b=B7) + [
        met.ChallengeIssued(challenge="c1", kind="classic", initiator="a", defender="b", attribute="physical")
    ]
    assert_refuses(
        given=given, when=met.IssueChallenge(character="a", defender="b", attribute="physical"), actor=A, match="TIME-4"
    )


def test_time_4_celerity_grants_one_extra_action_per_level():
    fast = MetSheet(physical=6, celerity=2)
    given = paced(a=fast) + [ActionTaken(character="a", turn=1)] * 2
    assert_decides(given=given, when=TakeAction(character="a"), actor=A, then=[ActionTaken(character="a", turn=1)])
    assert_refuses(given=given + [ActionTaken(character="a", turn=1)], when=TakeAction(character="a"), actor=A,
                   match="3 actions")


def test_time_4_celerity_extra_actions_is_a_session_setting():
    fast = MetSheet(physical=6, celerity=2)
    given = [SessionOpened(options=MetOptions(celerity_extra_actions=False)), SceneOpened(scene="s1", name="x")]
    given += [CharacterAdded(character="a", name="A", sheet=fast), SceneJoined(character="a", scene="s1")]
    given += [TurnAdvanced(turn=1, game_seconds=4, scene="s1"), ActionTaken(character="a", turn=1)]
    assert_refuses(given=given, when=TakeAction(character="a"), actor=A, match="TIME-4")


def test_time_4_a_multi_turn_action_keeps_the_character_busy():
    given = paced(a=A6)
    events = assert_decides(
        given=given,
        when=TakeAction(character="a", description="hack the server", actions=5),
        actor=A,
        then=[ActionTaken(character="a", turn=1, description="hack the server", ends_turn=6)],
    )
    later = given + events + [TurnAdvanced(turn=3, game_seconds=12)]
    assert_refuses(given=later, when=TakeAction(character="a"), actor=A, match="busy")


def test_time_4_celerity_shortens_a_long_action_unless_it_cannot():
    fast = MetSheet(physical=6, celerity=1)
    assert_decides(
        given=paced(a=fast), when=TakeAction(character="a", description="rifle", actions=2), actor=A,
        then=[ActionTaken(character="a", turn=1, description="rifle", ends_turn=2)],
    )
    assert_decides(
        given=paced(a=fast),
        when=TakeAction(character="a", description="hack", actions=6, celerity_shortens=False),
        actor=A,
        then=[ActionTaken(character="a", turn=1, description="hack", ends_turn=7)],
    )


def test_time_4_real_time_play_has_no_turn_budget():
    given = roster(a=A6) + [ActionTaken(character="a", turn=0)] * 3
    assert_decides(given=given, when=TakeAction(character="a"), actor=A, then=[ActionTaken(character="a", turn=0)])


# ---------------------------------------------------------------- TIME-5 Time Out


def test_time_5_only_a_storyteller_calls_time_out():
    assert_refuses(given=roster(a=A6), when=Freeze(scope="session"), actor=A, code="forbidden")


def test_time_5_a_session_time_out_stops_every_player_until_resume():
    given = roster(a=A6, b=B7) + [TimeOutCalled(scope="session")]
    challenge = met.IssueChallenge(character="a", defender="b", attribute="physical")
    assert_refuses(given=given, when=challenge, actor=A, code="frozen", match="TIME-5")
    assert_decides(given=given, when=Resume(scope="session"), then=[TimeOutEnded(scope="session")])
    assert len(assert_decides_any(given + [TimeOutEnded(scope="session")], challenge, A)) == 1


def assert_decides_any(given, when, actor):
    from conteur.events.testing import decide_after

    return decide_after(given, when, actor=actor)


def test_time_5_a_scene_time_out_stops_only_that_scene():
    given = roster(a=A6, b=B7) + [
        SceneOpened(scene="s2", name="Docks"),
        SceneJoined(character="b", scene="s2"),
        TimeOutCalled(scope="scene", scene="s1"),
    ]
    assert_refuses(given=given, when=TakeAction(character="a"), actor=A, code="frozen")
    assert_decides(given=given, when=TakeAction(character="b"), actor=player("b"),
                   then=[ActionTaken(character="b", turn=0)])


def test_time_5_storyteller_commands_are_still_accepted_while_frozen():
    given = roster(a=A6) + [TimeOutCalled(scope="session")]
    assert_decides(given=given, when=MarkNoSheet(character="a"), then=[NoSheetMarked(character="a")])


def test_time_5_freeze_names_its_scope():
    assert_decides(given=roster(), when=Freeze(scope="scene", scene="s1"), then=[TimeOutCalled(scope="scene", scene="s1")])
    assert_refuses(given=roster(), when=Freeze(scope="scene"), code="invalid")
    assert_refuses(given=roster(), when=Resume(scope="session"), match="no Time Out")


def test_time_5_a_player_cannot_throw_in_a_frozen_challenge():
    given = roster(a=A6, b=B7) + [
        met.ChallengeIssued(challenge="c1", kind="classic", initiator="a", defender="b", attribute="physical"),
        TimeOutCalled(scope="scene", scene="s1"),
    ]
    assert_refuses(given=given, when=met.Throw(character="a", challenge="c1", round=1, choice="rock"), actor=A,
                   code="frozen")


def test_time_5_a_player_cannot_target_a_character_in_a_frozen_scene():
    given = roster(a=A6, b=B7) + [
        SceneOpened(scene="s2", name="Docks"), SceneJoined(character="b", scene="s2"),
        TimeOutCalled(scope="scene", scene="s2"),
    ]
    assert_refuses(given=given, when=met.IssueChallenge(character="a", defender="b", attribute="social"), actor=A,
                   code="frozen")


# ---------------------------------------------------------------- TIME-6 out of game


def test_time_6_a_player_goes_out_of_game_and_back():
    given = roster(a=A6)
    assert_decides(given=given, when=OutOfGame(character="a", reason="rules question"), actor=A,
                   then=[WentOutOfGame(character="a", reason="rules question")])
    out = given + [WentOutOfGame(character="a")]
    assert_decides(given=out, when=BackInGame(character="a"), actor=A, then=[CameBackInGame(character="a")])
    assert_refuses(given=given, when=BackInGame(character="a"), actor=A, match="TIME-6")


def test_time_6_out_of_game_a_player_initiates_nothing():
    given = roster(a=A6, b=B7) + [WentOutOfGame(character="a")]
    assert_refuses(given=given, when=met.IssueChallenge(character="a", defender="b", attribute="physical"), actor=A,
                   code="out_of_game", match="TIME-6")


def test_time_6_an_out_of_game_character_is_no_target():
    given = roster(a=A6, b=B7) + [WentOutOfGame(character="b")]
    assert_refuses(given=given, when=met.IssueChallenge(character="a", defender="b", attribute="physical"), actor=A,
                   code="out_of_game", match="B is out of game")


def test_time_6_going_out_of_game_is_allowed_during_a_time_out():
    given = roster(a=A6) + [TimeOutCalled(scope="session")]
    assert_decides(given=given, when=OutOfGame(character="a"), actor=A, then=[WentOutOfGame(character="a")])


# ---------------------------------------------------------------- MET-9 initiative helper


def test_met_9_initiative_celerity_first_then_traits_then_simultaneous():
    fast = MetSheet(physical=3, celerity=1)
    state = game.fold(roster(a=A6, b=B7, f=fast, t=MetSheet(physical=6)))
    order = initiative_order(state, [("a", "physical"), ("b", "mental"), ("f", "physical"), ("t", "physical")])
    assert order == [(("f", "physical"),), (("b", "mental"),), (("a", "physical"), ("t", "physical"))]


def test_met_9_example_2_b_mental_7_acts_before_a_physical_6():
    state = game.fold(roster(a=A6, b=B7))
    assert initiative_order(state, [("a", "physical"), ("b", "mental")]) == [(("b", "mental"),), (("a", "physical"),)]


def test_met_6_a_storyteller_marks_a_player_without_sheet():
    marked = assert_decides(given=roster(a=A6), when=MarkNoSheet(character="a"), then=[NoSheetMarked(character="a")])
    assert game.fold(roster(a=A6) + marked).session.characters["a"].no_sheet
    assert_refuses(given=roster(a=A6), when=MarkNoSheet(character="a"), actor=A, code="forbidden")


def test_time_4_one_challenge_settling_both_actions_spends_both():  # MET-8
    given = paced(a=A6, b=B7) + [
        met.ChallengeIssued(challenge="c1", kind="classic", initiator="a", defender="b", attribute="physical",
                            mutual=True)
    ]
    assert_refuses(given=given, when=TakeAction(character="b"), actor=player("b"), match="TIME-4")
    assert_refuses(
        given=paced(a=A6, b=B7) + [ActionTaken(character="b", turn=1)],
        when=met.IssueChallenge(character="a", defender="b", attribute="physical", mutual=True),
        actor=A, match="TIME-4",
    )
