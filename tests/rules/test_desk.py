"""The storyteller's desk (events/desk.py), rule line by rule line through ``decide``:
announcements, named countdowns on the server's clock or the game's turns, and calls for a
storyteller; who sees a call (views) and that a player's record holds none."""

from __future__ import annotations

import msgspec
import pytest

from conteur.events import views, wire
from conteur.events.desk import (MAX_CALL_TEXT, MAX_TEXT, Announce, Announced, CallClosed, CallStoryteller,
                                 CallTaken, CancelCountdown, CloseCall, CountdownCancelled, CountdownPaused,
                                 CountdownResumed, CountdownStarted, PauseCountdown, StartCountdown,
                                 StorytellerCalled, TakeCall, venue_wide)
from conteur.events.model import Actor, STORYTELLER
from conteur.events.session import SceneClosed, TurnAdvanced
from conteur.events.testing import assert_decides, assert_refuses
from tests.support.met_support import A6, B7, player, roster

A, B = player("a"), player("b")
WALL = Actor(role="observer", name="wall")
ROSTER = roster(a=A6, b=B7)
T0 = 1_800_000_000.0  # the server's clock when a command was decided (epoch seconds)


# ---------------------------------------------------------------- announcements


def test_an_announcement_goes_to_the_session_and_is_numbered():
    assert_decides(given=ROSTER, when=Announce(text=" The Prince arrives in ten minutes "),
                   then=[Announced(announcement="n1", text="The Prince arrives in ten minutes", scope="session",
                                   by="storyteller")])
    given = ROSTER + [Announced(announcement="n1", text="first")]
    assert_decides(given=given, when=Announce(text="second", scope="scene", scene="s1"),
                   then=[Announced(announcement="n2", text="second", scope="scene", scene="s1", by="storyteller")])


def test_an_announcement_to_a_scene_names_an_open_scene():
    assert_refuses(given=ROSTER, when=Announce(text="hush", scope="scene", scene="cellar"), code="not_found")
    assert_refuses(given=ROSTER + [SceneClosed(scene="s1")], when=Announce(text="hush", scope="scene", scene="s1"),
                   code="not_found")


def test_an_announcement_is_the_storytellers_and_says_something():
    assert_refuses(given=ROSTER, when=Announce(text="I am the Prince"), actor=A, code="forbidden")
    assert_refuses(given=ROSTER, when=Announce(text="   "), code="invalid")


def test_an_announcement_is_bounded_on_the_wire():
    ok = {"type": "command", "id": "x", "command": {"type": "announce", "text": "x" * MAX_TEXT}}
    assert wire.decode(msgspec.json.encode(ok)).command.text == "x" * MAX_TEXT
    ok["command"]["text"] = "x" * (MAX_TEXT + 1)
    with pytest.raises(wire.FrameError, match="text"):
        wire.decode(msgspec.json.encode(ok))


def test_an_announcement_is_public():
    seen = views.view(Announced(announcement="n1", text="hi"), B)
    assert seen == Announced(announcement="n1", text="hi") and views.view(Announced(announcement="n1", text="hi"), WALL)


# ---------------------------------------------------------------- countdowns


def test_a_countdown_in_minutes_ends_on_the_servers_clock():
    assert_decides(given=ROSTER, when=StartCountdown(clock="prince", label="The Prince", minutes=10, now=T0),
                   then=[CountdownStarted(clock="prince", label="The Prince", unit="minutes", length=10,
                                          ends_at=T0 + 600)])


def test_a_countdown_in_turns_ends_at_a_turn_of_the_game_clock():
    given = ROSTER + [TurnAdvanced(turn=3, game_seconds=12)]
    assert_decides(given=given, when=StartCountdown(clock="fire", turns=4, now=T0),
                   then=[CountdownStarted(clock="fire", label="fire", unit="turns", length=4, ends_turn=7)])


def test_a_countdown_runs_for_minutes_or_turns_not_both_nor_neither():
    assert_refuses(given=ROSTER, when=StartCountdown(clock="x", now=T0), code="invalid")
    assert_refuses(given=ROSTER, when=StartCountdown(clock="x", minutes=1, turns=1, now=T0), code="invalid")


def test_a_countdowns_length_is_bounded_on_the_wire():
    frame = {"type": "command", "id": "x", "command": {"type": "start_countdown", "clock": "x", "minutes": 24 * 60}}
    assert wire.decode(msgspec.json.encode(frame)).command.minutes == 24 * 60
    for bad in (0, 24 * 60 + 1):
        frame["command"]["minutes"] = bad
        with pytest.raises(wire.FrameError, match="minutes"):
            wire.decode(msgspec.json.encode(frame))


STARTED = ROSTER + [CountdownStarted(clock="prince", label="The Prince", unit="minutes", length=10, ends_at=T0 + 600)]


def test_a_running_countdown_is_not_started_twice_until_it_runs_out():
    assert_refuses(given=STARTED, when=StartCountdown(clock="prince", minutes=5, now=T0 + 599), match="already running")
    assert_decides(given=STARTED, when=StartCountdown(clock="prince", minutes=5, now=T0 + 600),
                   then=[CountdownStarted(clock="prince", label="prince", unit="minutes", length=5, ends_at=T0 + 900)])


def test_a_paused_countdown_keeps_what_it_had_left_and_resumes_from_it():
    assert_decides(given=STARTED, when=PauseCountdown(clock="prince", now=T0 + 240),
                   then=[CountdownPaused(clock="prince", remaining=360)])
    paused = STARTED + [CountdownPaused(clock="prince", remaining=360)]
    assert_refuses(given=paused, when=PauseCountdown(clock="prince", now=T0 + 300), match="already paused")
    # an hour later (a long Time Out): what it had left, from the server's clock now
    assert_decides(given=paused, when=StartCountdown(clock="prince", now=T0 + 3600),
                   then=[CountdownResumed(clock="prince", ends_at=T0 + 3960)])


def test_a_countdown_in_turns_pauses_and_resumes_by_turns():
    given = ROSTER + [CountdownStarted(clock="fire", unit="turns", length=4, ends_turn=4),
                      TurnAdvanced(turn=1, game_seconds=4)]
    assert_decides(given=given, when=PauseCountdown(clock="fire", now=T0), then=[CountdownPaused(clock="fire", remaining=3)])
    paused = given + [CountdownPaused(clock="fire", remaining=3), TurnAdvanced(turn=2, game_seconds=8)]
    assert_decides(given=paused, when=StartCountdown(clock="fire", now=T0), then=[CountdownResumed(clock="fire", ends_turn=5)])


def test_a_countdown_that_ran_out_is_not_paused():
    assert_refuses(given=STARTED, when=PauseCountdown(clock="prince", now=T0 + 600), match="run out")
    assert_decides(given=STARTED, when=PauseCountdown(clock="prince", now=T0 + 599.5),
                   then=[CountdownPaused(clock="prince", remaining=0.5)])


def test_a_countdown_is_cancelled_once_and_is_the_storytellers():
    assert_decides(given=STARTED, when=CancelCountdown(clock="prince"), then=[CountdownCancelled(clock="prince")])
    assert_refuses(given=STARTED + [CountdownCancelled(clock="prince")], when=CancelCountdown(clock="prince"),
                   code="not_found")
    assert_refuses(given=STARTED, when=CancelCountdown(clock="prince"), actor=A, code="forbidden")


# ---------------------------------------------------------------- a countdown's scope


def test_a_countdown_for_a_scene_names_an_open_scene_and_keeps_it():
    assert_decides(given=ROSTER, when=StartCountdown(clock="rats", turns=5, scope="scene", scene="s1", now=T0),
                   then=[CountdownStarted(clock="rats", label="rats", unit="turns", length=5, ends_turn=5,
                                          scope="scene", scene="s1")])
    assert_refuses(given=ROSTER, when=StartCountdown(clock="rats", turns=5, scope="scene", scene="cellar", now=T0),
                   code="not_found")
    assert_refuses(given=ROSTER + [SceneClosed(scene="s1")], code="not_found",
                   when=StartCountdown(clock="rats", minutes=5, scope="scene", scene="s1", now=T0))
    # a scene named without the scene scope counts for the session, as an announcement's
    assert_decides(given=ROSTER, when=StartCountdown(clock="rats", minutes=1, scene="s1", now=T0),
                   then=[CountdownStarted(clock="rats", label="rats", unit="minutes", length=1, ends_at=T0 + 60)])


def test_a_countdown_started_for_the_venue_is_venue_wide_in_each_step():
    for command in (StartCountdown(clock="midnight", minutes=30, scope="venue"),
                    PauseCountdown(clock="midnight", scope="venue"), CancelCountdown(clock="midnight", scope="venue")):
        assert venue_wide(command), command
    for command in (StartCountdown(clock="rats", minutes=5, scope="scene", scene="s1"),
                    StartCountdown(clock="prince", minutes=5), PauseCountdown(clock="prince"),
                    CancelCountdown(clock="prince")):
        assert not venue_wide(command), command
    assert_decides(given=ROSTER, when=StartCountdown(clock="midnight", minutes=30, scope="venue", now=T0),
                   then=[CountdownStarted(clock="midnight", label="midnight", unit="minutes", length=30,
                                          ends_at=T0 + 1800, scope="venue")])


VENUE_CLOCK = ROSTER + [CountdownStarted(clock="midnight", label="Midnight", length=30, ends_at=T0 + 1800,
                                         scope="venue")]


def test_the_venues_countdown_changes_only_for_the_venue_and_a_sessions_only_for_it():
    assert_refuses(given=VENUE_CLOCK, when=PauseCountdown(clock="midnight", now=T0), match="whole venue's")
    assert_refuses(given=VENUE_CLOCK, when=CancelCountdown(clock="midnight"), match="whole venue's")
    assert_decides(given=VENUE_CLOCK, when=PauseCountdown(clock="midnight", scope="venue", now=T0 + 600),
                   then=[CountdownPaused(clock="midnight", remaining=1200, scope="venue")])
    assert_decides(given=VENUE_CLOCK, when=CancelCountdown(clock="midnight", scope="venue"),
                   then=[CountdownCancelled(clock="midnight", scope="venue")])
    paused = VENUE_CLOCK + [CountdownPaused(clock="midnight", remaining=1200)]
    assert_refuses(given=paused, when=StartCountdown(clock="midnight", now=T0 + 900), match="whole venue's")
    assert_decides(given=paused, when=StartCountdown(clock="midnight", scope="venue", now=T0 + 900),
                   then=[CountdownResumed(clock="midnight", ends_at=T0 + 2100, scope="venue")])
    assert_refuses(given=STARTED, when=PauseCountdown(clock="prince", scope="venue", now=T0), match="not the venue's")
    assert_refuses(given=STARTED, when=CancelCountdown(clock="prince", scope="venue"), match="not the venue's")


def test_a_countdowns_scope_is_kept_through_pause_and_resume():
    from conteur.events import game

    scene = ROSTER + [CountdownStarted(clock="rats", unit="turns", length=5, ends_turn=5, scope="scene", scene="s1"),
                      CountdownPaused(clock="rats", remaining=5), CountdownResumed(clock="rats", ends_turn=7)]
    kept = game.fold(scene).desk.countdowns["rats"]
    assert (kept.scope, kept.scene, kept.paused, kept.ends_turn) == ("scene", "s1", False, 7)
    # each change says whom the countdown is for, as its start does (its sentence names the scene)
    running = scene[:-2]
    assert_decides(given=running, when=PauseCountdown(clock="rats", now=T0),
                   then=[CountdownPaused(clock="rats", remaining=5, scope="scene", scene="s1")])
    assert_decides(given=scene[:-1], when=StartCountdown(clock="rats", now=T0),
                   then=[CountdownResumed(clock="rats", ends_turn=5, scope="scene", scene="s1")])
    assert_decides(given=scene, when=CancelCountdown(clock="rats"),
                   then=[CountdownCancelled(clock="rats", scope="scene", scene="s1")])
    # a log from before scoped countdowns: each one the session's
    old = msgspec.json.decode(b'{"type": "desk.countdown_started", "clock": "prince", "length": 10, "ends_at": 1.0}',
                              type=CountdownStarted)
    assert (old.scope, old.scene) == ("session", None)
    assert game.fold(ROSTER + [old]).desk.countdowns["prince"].scope == "session"
    for tag in ("paused", "resumed", "cancelled"):
        change = msgspec.json.decode(b'{"type": "desk.countdown_%s", "clock": "prince"}' % tag.encode(),
                                     type=CountdownPaused | CountdownResumed | CountdownCancelled)
        assert (change.scope, change.scene) == ("session", None), tag


# ---------------------------------------------------------------- calls


def test_a_player_calls_a_storyteller_for_its_own_character():
    assert_decides(given=ROSTER, when=CallStoryteller(character="a", kind="ruling", text=" who won? "), actor=A,
                   then=[StorytellerCalled(call="a.1", character="a", kind="ruling", text="who won?")])
    assert_refuses(given=ROSTER, when=CallStoryteller(character="b", kind="safety"), actor=A, code="forbidden")


def test_a_calls_id_counts_only_its_callers_calls():
    given = ROSTER + [StorytellerCalled(call="b.1", character="b", kind="safety"),
                      StorytellerCalled(call="b.2", character="b", kind="question")]
    assert_decides(given=given, when=CallStoryteller(character="a", kind="safety"), actor=A,
                   then=[StorytellerCalled(call="a.1", character="a", kind="safety")])


def test_one_open_call_of_a_kind_per_character_and_a_new_one_once_closed():
    given = ROSTER + [StorytellerCalled(call="a.1", character="a", kind="safety")]
    assert_refuses(given=given, when=CallStoryteller(character="a", kind="safety"), actor=A, match="already")
    assert_refuses(given=given + [CallTaken(call="a.1", character="a", by="Morgane")],
                   when=CallStoryteller(character="a", kind="safety"), actor=A, match="already")
    assert_decides(given=given, when=CallStoryteller(character="a", kind="ruling"), actor=A,
                   then=[StorytellerCalled(call="a.2", character="a", kind="ruling")])
    closed = given + [CallClosed(call="a.1", character="a", by="Morgane")]
    assert_decides(given=closed, when=CallStoryteller(character="a", kind="safety"), actor=A,
                   then=[StorytellerCalled(call="a.2", character="a", kind="safety")])


def test_a_call_is_made_even_during_a_time_out():
    from conteur.events.session import TimeOutCalled

    assert_decides(given=ROSTER + [TimeOutCalled(scope="venue")], when=CallStoryteller(character="a", kind="safety"),
                   actor=A, then=[StorytellerCalled(call="a.1", character="a", kind="safety")])


def test_a_calls_line_is_bounded_on_the_wire():
    frame = {"type": "command", "id": "x", "command": {"type": "call_storyteller", "character": "a",
                                                       "kind": "ruling", "text": "x" * MAX_CALL_TEXT}}
    assert wire.decode(msgspec.json.encode(frame)).command.text == "x" * MAX_CALL_TEXT
    frame["command"]["text"] += "x"
    with pytest.raises(wire.FrameError, match="text"):
        wire.decode(msgspec.json.encode(frame))
    frame["command"].update(text="", kind="chat")
    with pytest.raises(wire.FrameError, match="kind"):
        wire.decode(msgspec.json.encode(frame))


CALLED = ROSTER + [StorytellerCalled(call="a.1", character="a", kind="safety")]
MORGANE = Actor(role="storyteller", name="Morgane")


def test_a_storyteller_takes_a_call_once_and_the_others_see_who():
    assert_decides(given=CALLED, when=TakeCall(call="a.1"), actor=MORGANE,
                   then=[CallTaken(call="a.1", character="a", by="Morgane")])
    taken = CALLED + [CallTaken(call="a.1", character="a", by="Morgane")]
    assert_refuses(given=taken, when=TakeCall(call="a.1"), actor=STORYTELLER, match="Morgane has already taken")
    assert_refuses(given=CALLED, when=TakeCall(call="a.1"), actor=B, code="forbidden")
    assert_refuses(given=CALLED, when=TakeCall(call="a.9"), code="not_found")


def test_a_call_is_closed_once_taken_or_not():
    assert_decides(given=CALLED, when=CloseCall(call="a.1"), actor=MORGANE,
                   then=[CallClosed(call="a.1", character="a", by="Morgane")])
    closed = CALLED + [CallClosed(call="a.1", character="a", by="Morgane")]
    assert_refuses(given=closed, when=CloseCall(call="a.1"), match="already closed")
    assert_refuses(given=closed, when=TakeCall(call="a.1"), match="closed")


@pytest.mark.parametrize("event", [StorytellerCalled(call="a.1", character="a", kind="safety", text="help"),
                                   CallTaken(call="a.1", character="a", by="Morgane"),
                                   CallClosed(call="a.1", character="a", by="Morgane")])
def test_a_call_reaches_its_caller_and_the_storytellers_only_and_no_players_record(event):
    assert views.view(event, A) == event and views.view(event, STORYTELLER) == event
    assert views.view(event, B) is None and views.view(event, WALL) is None
    assert views.in_record(event, STORYTELLER) and not views.in_record(event, A)
