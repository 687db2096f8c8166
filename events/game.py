"""One session's whole state, and the composition of every ruleset's Decider.

Each ruleset module (``session``, ``met``, ``v5``, ``action``, ``offline``) is a Decider
that owns one typed part of ``GameState`` (its ``State``, at the field of its name):

- ``initial() -> State``;
- ``DECIDERS``: ``{CommandType: decide_<command>(state: GameState, cmd, draws, actor) ->
  list[Event]}``; a decider reads the whole state (the roster, the clock) and refuses
  with ``model.refuse``;
- ``EVOLVERS``: ``{EventType: evolve_<event>(own: State, event, state: GameState) ->
  State}`` for its own events: it returns its part only, and reads ``state``, the whole
  state before the event, at most;
- ``EVENTS`` and ``COMMANDS``: tuples of its types, for the wire and store decoders.

An event one ruleset records and others must fold too (a session opened, a sheet
amended, the clock moved, a challenge issued) reaches their own evolvers through
``SHARED`` below: the one place where rulesets meet, written out, never registered at
import time. Every evolver of one event gets the same state from before it, so their order
does not matter.

``decide`` here applies the checks every command shares (roles, acting for one's own
character, Time Out, out of game), then dispatches by type; ``evolve`` dispatches by event
type through a dict (2.7x faster than a long ``match`` when folding a chronicle).
"""

from __future__ import annotations

import collections.abc
import functools
import gc
import operator
from typing import Any, Callable, Iterable, Mapping, TypeVar, Union

import msgspec
from msgspec.structs import replace

from conteur.events import action, desk, met, offline, session, v5
from conteur.events.model import Actor, Command, Draws, Event, refuse, unchanged

RULESETS = {"session": session, "met": met, "v5": v5, "action": action, "offline": offline, "desk": desk}
MODULES = tuple(RULESETS.values())


class CommandRejected(Event, frozen=True, kw_only=True, tag="command_rejected"):
    """A refused command, kept as evidence (an attempted over-bid is evidence).

    Storytellers see it; the player who sent it sees it too; nobody else.
    """

    command_type: str
    code: str
    message: str
    character: str | None = None
    rule: str | None = None

    def owners(self) -> frozenset[str] | None:
        return frozenset((self.character,)) if self.character else frozenset()


class Streams(collections.abc.Mapping):
    """The next FAIR-2 counter of each draw stream (``events.model.stream_name``), read
    as the dict it stands for, and persistent: ``counted`` returns a new map that shares
    every bucket of this one but those the draws changed.

    A night opens a stream per sealed roll, so the streams grow with the night; a plain
    dict copied at every drawing event made an action-dice night's fold quadratic (most
    of its time went to copying it). Here a draw copies one bucket and the tuple of
    buckets, about the square root of the streams each. Buckets are picked by ``hash``,
    which differs between processes: only membership and counters are the value, and a
    snapshot encodes the streams as a dict in name order (``to_dict``)."""

    __slots__ = ("_buckets", "_len")

    def __init__(self, counters: Mapping[str, int] | None = None) -> None:
        items = dict(counters or {})
        width = 1
        while 4 * width * width < len(items):
            width *= 2
        buckets: list[dict[str, int]] = [{} for _ in range(width)]
        mask = width - 1
        for name, counter in items.items():
            buckets[hash(name) & mask][name] = counter
        self._buckets = tuple(buckets)
        self._len = len(items)

    def __getitem__(self, name: str) -> int:
        buckets = self._buckets
        return buckets[hash(name) & (len(buckets) - 1)][name]

    def get(self, name: str, default=None):
        buckets = self._buckets
        return buckets[hash(name) & (len(buckets) - 1)].get(name, default)

    def __contains__(self, name) -> bool:
        buckets = self._buckets
        return isinstance(name, str) and name in buckets[hash(name) & (len(buckets) - 1)]

    def __iter__(self):
        for bucket in self._buckets:
            yield from bucket

    def __len__(self) -> int:
        return self._len

    def __repr__(self) -> str:
        return f"Streams({self.to_dict()!r})"

    def to_dict(self) -> dict[str, int]:
        """The counters as a dict in name order: what a snapshot stores."""
        return dict(sorted(self.items()))

    def counted(self, records: Iterable) -> "Streams":
        """The streams after ``records`` (draw records of named streams): each stream's
        next counter is past every draw of it (FAIR-2); ``self`` when none moved."""
        buckets = self._buckets
        mask = len(buckets) - 1
        changed: dict[int, dict[str, int]] = {}
        added = 0
        for record in records:
            name = record.stream
            at = hash(name) & mask
            bucket = changed.get(at)
            if bucket is None:
                bucket = buckets[at]
            known = bucket.get(name)
            if record.counter >= (0 if known is None else known):
                if at not in changed:
                    bucket = changed[at] = dict(bucket)
                bucket[name] = record.counter + 1
                added += known is None
        if not changed:
            return self
        merged = list(buckets)
        for at, bucket in changed.items():
            merged[at] = bucket
        out = Streams.__new__(Streams)
        out._buckets = tuple(merged)
        out._len = self._len + added
        if out._len > 4 * len(merged) * len(merged):
            return Streams(out)  # wider buckets: a rebuild each time the streams quadruple
        return out


_NO_STREAMS = Streams()


class GameState(msgspec.Struct, frozen=True, kw_only=True):
    session: session.State
    met: met.State
    v5: v5.State
    action: action.State
    offline: offline.State = offline.State()
    desk: desk.State = desk.State()  # announcements, countdowns, calls (events/desk.py)
    draw_counter: int = 0  # next session-wide FAIR-2 counter: draws of logs from before streams
    streams: Streams = _NO_STREAMS  # next FAIR-2 counter of each draw stream (events.model.stream_name)
    head: int = 0  # seq of the last event folded (set by the store's fold, not by evolve)


def initial() -> GameState:
    return GameState(
        session=session.initial(),
        met=met.initial(),
        v5=v5.initial(),
        action=action.initial(),
    )


S = TypeVar("S")
Decider = Callable[[GameState, Any, Draws, Actor], list[Event]]
Evolver = Callable[[S, Any, GameState], S]

# Events of one ruleset that others fold too, each into its own part: (part, evolver).
SHARED: dict[type[Event], tuple[tuple[str, Evolver], ...]] = {
    # MET-13: the tie debts carried from the chronicle's previous session
    session.SessionOpened: (("met", met.evolve_debts_carried),),
    # V5-5, ACT-8: a sheet amended with another starting Hunger or tension sets it again
    session.SheetAmended: (("v5", v5.evolve_sheet_amended), ("action", action.evolve_sheet_amended)),
    # ACT-7 on TIME-1: modifiers that ran out leave when the clock moves
    session.TurnAdvanced: (("action", action.evolve_clock_moved),),
    session.TimeSkipped: (("action", action.evolve_clock_moved),),
    # TIME-4: initiating is an action of the turn, the defender's too when mutual (MET-8)
    met.ChallengeIssued: (("session", lambda own, e, state: session.evolve_actions_counted(own, met.acting(e))),),
    met.GroupChallengeIssued: (("session", lambda own, e, state: session.evolve_actions_counted(own, (e.initiator,))),),
}


def _handlers() -> dict[type[Event], tuple[tuple[str, Evolver], ...]]:
    handlers: dict[type[Event], tuple[tuple[str, Evolver], ...]] = {CommandRejected: ()}
    for part, module in RULESETS.items():
        for kind, evolver in module.EVOLVERS.items():
            handlers[kind] = handlers.get(kind, ()) + ((part, evolver),)
    for kind, more in SHARED.items():
        handlers[kind] = handlers[kind] + more
    return handlers


def _composed(handlers: tuple[tuple[str, Evolver], ...]) -> Callable[[GameState, Any], GameState]:
    """One event's evolve over the whole state: each part from its own evolver. An event
    of one part (nearly all) gets a closure naming its field: ``replace`` with a built
    ``**{part: ...}`` took twice as long, and replay folds every event of a night."""
    if not handlers:
        return lambda s, e: s
    if len(handlers) > 1:
        return lambda s, e: replace(s, **{part: evolver(getattr(s, part), e, s) for part, evolver in handlers})
    ((part, f),) = handlers
    one = {
        "session": lambda s, e: replace(s, session=f(s.session, e, s)),
        "met": lambda s, e: replace(s, met=f(s.met, e, s)),
        "v5": lambda s, e: replace(s, v5=f(s.v5, e, s)),
        "action": lambda s, e: replace(s, action=f(s.action, e, s)),
        "offline": lambda s, e: replace(s, offline=f(s.offline, e, s)),
        "desk": lambda s, e: replace(s, desk=f(s.desk, e, s)),
    }
    return one[part]


HANDLERS = _handlers()
DECIDERS: dict[type[Command], Decider] = {}
for _m in MODULES:
    DECIDERS.update(_m.DECIDERS)
EVOLVERS: dict[type[Event], Callable[[GameState, Any], GameState]] = {
    kind: _composed(handlers) for kind, handlers in HANDLERS.items()
}

EVENT_TYPES: tuple[type[Event], ...] = (CommandRejected,) + tuple(
    t for m in MODULES for t in m.EVENTS
)
COMMAND_TYPES: tuple[type[Command], ...] = tuple(t for m in MODULES for t in m.COMMANDS)
EVENT_BY_TAG: dict[str, type[Event]] = {t.__struct_config__.tag: t for t in EVENT_TYPES}
COMMAND_BY_TAG: dict[str, type[Command]] = {t.__struct_config__.tag: t for t in COMMAND_TYPES}

AnyEvent = Union[EVENT_TYPES]  # type: ignore[valid-type]
AnyCommand = Union[COMMAND_TYPES] if COMMAND_TYPES else Command  # type: ignore[valid-type]


def decide(state: GameState, command: Command, draws: Draws, *, actor: Actor) -> list[Event]:
    """Pure: the events a command produces, or one ``RuleViolation``."""
    handler = DECIDERS.get(type(command))
    if handler is None:
        raise refuse(f"unknown command {type(command).__name__}", "command", "invalid")
    session.check_open(state, command)  # TIME-2: first, for every role
    if actor.role == "observer":
        raise refuse("an observer display cannot act", "roles", "forbidden")
    if not actor.is_storyteller:
        if command.storyteller_only:
            tag = command.__struct_config__.tag
            raise refuse(f"only a storyteller may {tag}", "roles", "forbidden")
        acting_for = getattr(command, "character", None)
        if acting_for is not None and acting_for != actor.character:
            raise refuse(f"you play {actor.character}, not {acting_for}", "roles", "forbidden")
        if command.play:
            session.check_playable(state, command, actor)  # TIME-5, TIME-6
    return handler(state, command, draws, actor)


_COUNTER = operator.attrgetter("counter")
# the event types that carry draws: a getattr with a default on the others raised and
# caught an AttributeError on every event of a replay
_DRAWN = frozenset(t for t in EVOLVERS if "draws" in t.__struct_fields__)


def count_draws(draw_counter: int, records) -> int:
    """The next session-wide FAIR-2 counter after one event's draw records from before
    streams (``stream == ""``); named streams count in ``Streams.counted``."""
    # a C-level max, not a generator: a dice session folds 15% faster
    last = max(map(_COUNTER, records)) + 1
    return last if last > draw_counter else draw_counter


def evolve(state: GameState, event: Event) -> GameState:
    """Pure: the state after one event. Never mutates; replay never draws (FAIR-1)."""
    kind = type(event)
    state = EVOLVERS[kind](state, event)
    if kind in _DRAWN and (records := event.draws):
        if records[0].stream:
            streams = state.streams.counted(records)
            return state if streams is state.streams else replace(state, streams=streams)
        last = count_draws(state.draw_counter, records)
        if last != state.draw_counter:
            state = replace(state, draw_counter=last)
    return state


def enc_hook(obj):
    """How a state's own types are encoded by msgspec: ``Streams`` as its dict."""
    if isinstance(obj, Streams):
        return obj.to_dict()
    raise NotImplementedError(f"cannot encode {type(obj).__name__}")


def dec_hook(kind: type, obj):
    """How a state's own types are decoded by msgspec: ``Streams`` from its dict."""
    if kind is Streams and isinstance(obj, dict):
        if not all(isinstance(k, str) and type(v) is int for k, v in obj.items()):
            raise ValueError("streams: each name a string, each counter an integer")
        return Streams(obj)
    raise NotImplementedError(f"cannot decode {kind.__name__}")


# The tags of the events no part folds and that carry no draws: a refusal kept as
# evidence, a comparison or a concession the next event settles. Folding one leaves the
# state as it was, so PostgreSQL's replay does not read them; derived from the
# evolvers' composition, never listed by hand.
IGNORED: frozenset[str] = frozenset(
    kind.__struct_config__.tag for kind, handlers in HANDLERS.items()
    if all(f is unchanged for _, f in handlers) and kind not in _DRAWN)


def fold(events, state: GameState | None = None) -> GameState:
    """``evolve`` over ``events``, from ``state`` (or the initial state): the one fold, for
    the command path, the stores' replay, the review and the projections. The cyclic
    collector is paused meanwhile: a fold makes many short-lived containers and no cycles,
    and the collector would only walk the growing state over and over."""
    paused = gc.isenabled()
    gc.disable()
    try:
        return functools.reduce(evolve, events, initial() if state is None else state)
    finally:
        if paused:
            gc.enable()
