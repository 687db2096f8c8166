"""The storyteller's desk: announcements, named countdowns, and calls for a storyteller.

- **Announcements** ("the Prince arrives in ten minutes") go to the whole session, one
  scene, or the whole venue (every open session the server serves, one ``announce`` each:
  ``venue_wide``). They are public: every phone, tablet and the wall receives them; a
  phone shows those that concern it (its session, its scene, the venue).
- **Countdowns** are named clocks in real minutes or game turns (TIME-3), started, paused,
  resumed (``start_countdown`` on a paused one) and cancelled by a storyteller. A
  real-time one is recorded with its end on the server's clock (``now``, filled by the
  server from its own clock like the FAIR-2 seed: the domain reads no clock), so it
  survives reconnects and a restart; a turn one ends at a turn of the game clock. Like an
  announcement, a countdown is for the session, one scene, or the whole venue (started,
  paused, resumed and cancelled in every open session at once: ``venue_wide``); it is
  public, and a phone shows those of its session, its scene and the venue.
- **Calls** (``call_storyteller``): a player asks for a ruling, a rules question, or makes
  a safety call (someone is not OK). A call is for the storytellers and its caller only:
  no other player receives it, nor its taking or its closing, nor anything counting
  them (its id counts only the caller's own calls); a player's exports hold no call at
  all (``views.in_record``). A storyteller takes a call (the other tablets see who) and
  closes it.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Annotated, Literal

import msgspec
from msgspec import Meta
from msgspec.structs import replace

from conteur.events.bounds import MAX_COUNT, Key
from conteur.events.model import Actor, Command, Draws, Event, refuse
from conteur.events.session import Freeze, Resume

if TYPE_CHECKING:
    from conteur.events.game import Decider, Evolver, GameState

MAX_TEXT = 280  # an announcement: a line a phone shows whole
MAX_CALL_TEXT = 200  # a call's line: what a player types in a hurry
MAX_MINUTES = 24 * 60  # a countdown within one night

Text = Annotated[str, Meta(min_length=1, max_length=MAX_TEXT)]
CallText = Annotated[str, Meta(max_length=MAX_CALL_TEXT)]
ClockName = Annotated[str, Meta(min_length=1, max_length=64)]
Label = Annotated[str, Meta(max_length=128)]
Minutes = Annotated[int, Meta(ge=1, le=MAX_MINUTES)]
Turns = Annotated[int, Meta(ge=1, le=MAX_COUNT)]
Now = Annotated[float, Meta(ge=0)]
CallKind = Literal["ruling", "question", "safety"]
CALL_KINDS: tuple[str, ...] = ("safety", "ruling", "question")  # the queue's order: safety first


# ---------------------------------------------------------------- state


class Announcement(msgspec.Struct, frozen=True, kw_only=True, gc=False):
    id: str
    text: str
    scope: str = "session"
    scene: str | None = None
    by: str = ""


class Countdown(msgspec.Struct, frozen=True, kw_only=True, gc=False):
    """Running: ``ends_at`` (server epoch seconds) or ``ends_turn``; paused: ``remaining``
    (seconds or turns) and ``paused``."""

    id: str
    label: str = ""
    scope: str = "session"  # or "scene" (``scene``), or "venue"
    scene: str | None = None
    unit: Literal["minutes", "turns"] = "minutes"
    length: int = 0  # minutes or turns, as started
    ends_at: float | None = None
    ends_turn: int | None = None
    paused: bool = False
    remaining: float = 0


class Call(msgspec.Struct, frozen=True, kw_only=True, gc=False):
    id: str
    character: str
    kind: str
    text: str = ""
    status: Literal["waiting", "taken", "closed"] = "waiting"
    taken_by: str = ""


class State(msgspec.Struct, frozen=True, kw_only=True, gc=False):
    announcements: tuple[Announcement, ...] = ()
    countdowns: dict[str, Countdown] = {}
    calls: dict[str, Call] = {}  # in the order of arrival
    called: dict[str, int] = {}  # each character's calls so far: its next call's number


def initial() -> State:
    return State()


# ---------------------------------------------------------------- commands


class Announce(Command, frozen=True, kw_only=True, tag="announce"):
    storyteller_only = True
    play = False
    text: Text
    scope: Literal["session", "scene", "venue"] = "session"
    scene: Key | None = None


class StartCountdown(Command, frozen=True, kw_only=True, tag="start_countdown"):
    """A new clock of ``minutes`` or ``turns`` (one of them), or a paused one resumed.
    ``scope`` as an announcement's; a paused clock resumes with the scope it has."""

    storyteller_only = True
    play = False
    clock: ClockName
    label: Label = ""
    minutes: Minutes | None = None
    turns: Turns | None = None
    scope: Literal["session", "scene", "venue"] = "session"
    scene: Key | None = None
    now: Now = 0.0  # filled by the server from its clock


class PauseCountdown(Command, frozen=True, kw_only=True, tag="pause_countdown"):
    """``scope`` ``venue``: the venue's countdown of that name, paused in every session."""

    storyteller_only = True
    play = False
    clock: ClockName
    scope: Literal["session", "venue"] = "session"
    now: Now = 0.0  # filled by the server from its clock


class CancelCountdown(Command, frozen=True, kw_only=True, tag="cancel_countdown"):
    storyteller_only = True
    play = False
    clock: ClockName
    scope: Literal["session", "venue"] = "session"


class CallStoryteller(Command, frozen=True, kw_only=True, tag="call_storyteller"):
    play = False  # a call is most needed during a Time Out
    character: Key
    kind: CallKind
    text: CallText = ""


class TakeCall(Command, frozen=True, kw_only=True, tag="take_call"):
    storyteller_only = True
    play = False
    call: Key


class CloseCall(Command, frozen=True, kw_only=True, tag="close_call"):
    storyteller_only = True
    play = False
    call: Key


# ---------------------------------------------------------------- events


class Announced(Event, frozen=True, kw_only=True, tag="desk.announced"):
    announcement: str
    text: str
    scope: str = "session"
    scene: str | None = None
    by: str = ""


class CountdownStarted(Event, frozen=True, kw_only=True, tag="desk.countdown_started"):
    clock: str
    label: str = ""
    unit: str = "minutes"
    length: int = 0
    ends_at: float | None = None
    ends_turn: int | None = None
    scope: str = "session"  # a log from before scoped countdowns: every one the session's
    scene: str | None = None


class _OfCountdown(Event, frozen=True, kw_only=True):
    """A change to a countdown says whom the countdown is for, as its start does, so its
    sentence names the scene or the venue from the event alone (events/narrate.py)."""

    clock: str
    scope: str = "session"  # a log from before: told as the session's
    scene: str | None = None


class CountdownPaused(_OfCountdown, frozen=True, kw_only=True, tag="desk.countdown_paused"):
    remaining: float = 0  # seconds, or turns


class CountdownResumed(_OfCountdown, frozen=True, kw_only=True, tag="desk.countdown_resumed"):
    ends_at: float | None = None
    ends_turn: int | None = None


class CountdownCancelled(_OfCountdown, frozen=True, kw_only=True, tag="desk.countdown_cancelled"):
    pass


class _OfCall(Event, frozen=True, kw_only=True):
    """A call's events are for its caller and the storytellers: hidden from every other
    player and from the wall, whole (``redacted`` None: not even that something was)."""

    call: str
    character: str

    def owners(self) -> frozenset[str] | None:
        return frozenset((self.character,))

    def redacted(self) -> Event | None:
        return None


class StorytellerCalled(_OfCall, frozen=True, kw_only=True, tag="desk.storyteller_called"):
    kind: str = "question"
    text: str = ""


class CallTaken(_OfCall, frozen=True, kw_only=True, tag="desk.call_taken"):
    by: str = ""


class CallClosed(_OfCall, frozen=True, kw_only=True, tag="desk.call_closed"):
    by: str = ""


CALL_EVENTS: tuple[type[Event], ...] = (StorytellerCalled, CallTaken, CallClosed)


# ---------------------------------------------------------------- deciders


VENUE_WIDE: tuple[type[Command], ...] = (Freeze, Resume, Announce, StartCountdown, PauseCountdown, CancelCountdown)


def venue_wide(command: Command) -> bool:
    """Whether ``command`` is decided in every open session the server serves."""
    return isinstance(command, VENUE_WIDE) and command.scope == "venue"


def _open_scene(state: GameState, scene: str | None, what: str, rule: str) -> str:
    found = state.session.scenes.get(scene or "")
    if found is None or not found.open:
        raise refuse(f"no open scene {scene!r} to {what}", rule, "not_found")
    return found.id


def decide_announce(state: GameState, cmd: Announce, draws: Draws, actor: Actor) -> list[Event]:
    if not cmd.text.strip():
        raise refuse("an announcement says something", "announce", "invalid")
    scene = _open_scene(state, cmd.scene, "announce to", "announce") if cmd.scope == "scene" else None
    number = len(state.desk.announcements) + 1
    return [Announced(announcement=f"n{number}", text=cmd.text.strip(), scope=cmd.scope, scene=scene,
                      by=actor.name)]


def _countdown(state: GameState, name: str, scope: str = "session") -> Countdown:
    found = state.desk.countdowns.get(name)
    if found is None:
        raise refuse(f"no countdown {name!r}", "countdown", "not_found")
    _same_reach(found, scope)
    return found


def _same_reach(found: Countdown, scope: str) -> None:
    """The venue's countdown is paused, resumed and cancelled for the whole venue, a
    session's one in its session: every session's copy of the venue's stays the same."""
    if (found.scope == "venue") != (scope == "venue"):
        if found.scope == "venue":
            raise refuse(f"countdown {found.label or found.id!r} is the whole venue's: change it for the venue",
                         "countdown")
        raise refuse(f"countdown {found.label or found.id!r} is this session's, not the venue's", "countdown")


def _reach(found: Countdown) -> dict:
    return {"scope": found.scope, "scene": found.scene}


def _left(c: Countdown, now: float, turn: int) -> float:
    """What a running countdown has left: seconds, or turns."""
    if c.unit == "turns":
        return max(0, (c.ends_turn or 0) - turn)
    return max(0.0, (c.ends_at or 0) - now)


def decide_start_countdown(state: GameState, cmd: StartCountdown, draws: Draws, actor: Actor) -> list[Event]:
    turn = state.session.turn
    found = state.desk.countdowns.get(cmd.clock)
    if found is not None and found.paused:
        _same_reach(found, cmd.scope)
        if found.unit == "turns":
            return [CountdownResumed(clock=found.id, ends_turn=turn + int(found.remaining), **_reach(found))]
        return [CountdownResumed(clock=found.id, ends_at=cmd.now + found.remaining, **_reach(found))]
    if found is not None and _left(found, cmd.now, turn) > 0:
        raise refuse(f"countdown {found.label or found.id!r} is already running: pause or cancel it first",
                     "countdown")
    if (cmd.minutes is None) == (cmd.turns is None):
        raise refuse("a countdown runs for minutes or for turns: give one of them", "countdown", "invalid")
    label = cmd.label.strip() or cmd.clock
    scene = _open_scene(state, cmd.scene, "count down in", "countdown") if cmd.scope == "scene" else None
    if cmd.minutes is not None:
        return [CountdownStarted(clock=cmd.clock, label=label, unit="minutes", length=cmd.minutes,
                                 ends_at=cmd.now + 60 * cmd.minutes, scope=cmd.scope, scene=scene)]
    return [CountdownStarted(clock=cmd.clock, label=label, unit="turns", length=cmd.turns,
                             ends_turn=turn + cmd.turns, scope=cmd.scope, scene=scene)]


def decide_pause_countdown(state: GameState, cmd: PauseCountdown, draws: Draws, actor: Actor) -> list[Event]:
    found = _countdown(state, cmd.clock, cmd.scope)
    if found.paused:
        raise refuse(f"countdown {found.label!r} is already paused", "countdown")
    left = _left(found, cmd.now, state.session.turn)
    if left <= 0:
        raise refuse(f"countdown {found.label!r} has run out: start it again or cancel it", "countdown")
    return [CountdownPaused(clock=found.id, remaining=left, **_reach(found))]


def decide_cancel_countdown(state: GameState, cmd: CancelCountdown, draws: Draws, actor: Actor) -> list[Event]:
    found = _countdown(state, cmd.clock, cmd.scope)
    return [CountdownCancelled(clock=found.id, **_reach(found))]


def decide_call_storyteller(state: GameState, cmd: CallStoryteller, draws: Draws, actor: Actor) -> list[Event]:
    if cmd.character not in state.session.characters:
        raise refuse(f"no character {cmd.character!r} in this session", "call", "not_found")
    for call in state.desk.calls.values():
        if call.character == cmd.character and call.kind == cmd.kind and call.status != "closed":
            raise refuse("your call of this kind is already with the storytellers: they will come", "call")
    number = state.desk.called.get(cmd.character, 0) + 1
    return [StorytellerCalled(call=f"{cmd.character}.{number}", character=cmd.character, kind=cmd.kind,
                              text=cmd.text.strip())]


def _call(state: GameState, call_id: str) -> Call:
    found = state.desk.calls.get(call_id)
    if found is None:
        raise refuse(f"no call {call_id!r}", "call", "not_found")
    return found


def decide_take_call(state: GameState, cmd: TakeCall, draws: Draws, actor: Actor) -> list[Event]:
    found = _call(state, cmd.call)
    if found.status == "closed":
        raise refuse("this call is closed", "call")
    if found.status == "taken":
        raise refuse(f"{found.taken_by or 'a storyteller'} has already taken this call", "call")
    return [CallTaken(call=found.id, character=found.character, by=actor.name)]


def decide_close_call(state: GameState, cmd: CloseCall, draws: Draws, actor: Actor) -> list[Event]:
    found = _call(state, cmd.call)
    if found.status == "closed":
        raise refuse("this call is already closed", "call")
    return [CallClosed(call=found.id, character=found.character, by=actor.name)]


# ---------------------------------------------------------------- evolvers


def evolve_announced(own: State, e: Announced, state: GameState) -> State:
    made = Announcement(id=e.announcement, text=e.text, scope=e.scope, scene=e.scene, by=e.by)
    return replace(own, announcements=own.announcements + (made,))


def _with_countdown(own: State, c: Countdown) -> State:
    return replace(own, countdowns={**own.countdowns, c.id: c})


def evolve_countdown_started(own: State, e: CountdownStarted, state: GameState) -> State:
    return _with_countdown(own, Countdown(id=e.clock, label=e.label, unit=e.unit, length=e.length,
                                          ends_at=e.ends_at, ends_turn=e.ends_turn, scope=e.scope, scene=e.scene))


def evolve_countdown_paused(own: State, e: CountdownPaused, state: GameState) -> State:
    found = own.countdowns[e.clock]
    return _with_countdown(own, replace(found, paused=True, remaining=e.remaining, ends_at=None, ends_turn=None))


def evolve_countdown_resumed(own: State, e: CountdownResumed, state: GameState) -> State:
    found = own.countdowns[e.clock]
    return _with_countdown(own, replace(found, paused=False, remaining=0, ends_at=e.ends_at, ends_turn=e.ends_turn))


def evolve_countdown_cancelled(own: State, e: CountdownCancelled, state: GameState) -> State:
    return replace(own, countdowns={k: v for k, v in own.countdowns.items() if k != e.clock})


def evolve_storyteller_called(own: State, e: StorytellerCalled, state: GameState) -> State:
    call = Call(id=e.call, character=e.character, kind=e.kind, text=e.text)
    return replace(own, calls={**own.calls, e.call: call},
                   called={**own.called, e.character: own.called.get(e.character, 0) + 1})


def _with_call(own: State, call_id: str, **changes) -> State:
    found = own.calls.get(call_id)
    if found is None:
        return own
    return replace(own, calls={**own.calls, call_id: replace(found, **changes)})


def evolve_call_taken(own: State, e: CallTaken, state: GameState) -> State:
    return _with_call(own, e.call, status="taken", taken_by=e.by)


def evolve_call_closed(own: State, e: CallClosed, state: GameState) -> State:
    return _with_call(own, e.call, status="closed")


DECIDERS: dict[type[Command], Decider] = {
    Announce: decide_announce,
    StartCountdown: decide_start_countdown,
    PauseCountdown: decide_pause_countdown,
    CancelCountdown: decide_cancel_countdown,
    CallStoryteller: decide_call_storyteller,
    TakeCall: decide_take_call,
    CloseCall: decide_close_call,
}

EVOLVERS: dict[type[Event], Evolver[State]] = {
    Announced: evolve_announced,
    CountdownStarted: evolve_countdown_started,
    CountdownPaused: evolve_countdown_paused,
    CountdownResumed: evolve_countdown_resumed,
    CountdownCancelled: evolve_countdown_cancelled,
    StorytellerCalled: evolve_storyteller_called,
    CallTaken: evolve_call_taken,
    CallClosed: evolve_call_closed,
}

EVENTS: tuple = tuple(EVOLVERS)
COMMANDS: tuple = tuple(DECIDERS)
