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

import dis
import operator
from typing import Any, Callable, TypeVar, Union

import msgspec
from msgspec.structs import replace

from conteur.events import action, desk, met, offline, replay_steps, session, slim, v5
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


class GameState(msgspec.Struct, frozen=True, kw_only=True):
    session: session.State
    met: met.State
    v5: v5.State
    action: action.State
    offline: offline.State = offline.State()
    desk: desk.State = desk.State()  # announcements, countdowns, calls (events/desk.py)
    draw_counter: int = 0  # next session-wide FAIR-2 counter: draws of logs from before streams
    streams: dict[str, int] = {}  # next FAIR-2 counter of each draw stream (events.model.stream_name)
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
_STREAM = operator.attrgetter("stream")
# the event types that carry draws: a getattr with a default on the others raised and
# caught an AttributeError on every event of a replay
_DRAWN = frozenset(t for t in EVOLVERS if "draws" in t.__struct_fields__)


def count_draws(streams: dict[str, int], draw_counter: int, records) -> int:
    """Counts one event's draw records: ``streams`` (changed in place: the caller's own
    copy) holds each stream's next FAIR-2 counter; returns the next session-wide counter
    (for logs from before streams). Shared by ``evolve`` and ``Replay``."""
    if len(records) == 1:  # a throw, a Rouse check: the loops below for one record
        (record,) = records
        if record.stream:
            if record.counter >= streams.get(record.stream, 0):
                streams[record.stream] = record.counter + 1
            return draw_counter
        return record.counter + 1 if record.counter >= draw_counter else draw_counter
    if records[0].stream:
        names = set(map(_STREAM, records))
        if len(names) == 1:  # one roll's draws, nearly always: one C-level max
            (name,) = names
            last = max(map(_COUNTER, records)) + 1  # without a key: 15% less
            if last > streams.get(name, 0):
                streams[name] = last
            return draw_counter
        for record in records:
            if record.counter >= streams.get(record.stream, 0):
                streams[record.stream] = record.counter + 1
        return draw_counter
    # a C-level max, not a generator: a dice session folds 15% faster
    last = max(map(_COUNTER, records)) + 1
    return last if last > draw_counter else draw_counter


def merge_draws(streams: dict[str, int], draw_counter: int, summary) -> int:
    """``count_draws`` for records summed up in an ``events.drawn.Summary``: ``streams``
    changed in place, the next session-wide counter returned (why it is the same:
    ``events/drawn.py``)."""
    for name, last in summary.streams.items():
        if last > streams.get(name, 0):
            streams[name] = last
    return summary.counter if summary.counter > draw_counter else draw_counter


def evolve(state: GameState, event: Event) -> GameState:
    """Pure: the state after one event. Never mutates; replay never draws (FAIR-1)."""
    kind = type(event)
    state = EVOLVERS[kind](state, event)
    if kind in _DRAWN and (records := event.draws):
        if records[0].stream:
            # copied: a stream's counter moves with nearly every draw
            streams = dict(state.streams)
            count_draws(streams, 0, records)
            return replace(state, streams=streams)
        last = count_draws(state.streams, state.draw_counter, records)
        if last != state.draw_counter:
            state = replace(state, draw_counter=last)
    return state


def _reads_state(evolver: Evolver) -> bool:
    """Whether an evolver reads its third argument, the whole state before the event: the
    bytecode loads it, or a closure inside captures it. Anything not a plain function is
    taken to read it."""
    code = getattr(evolver, "__code__", None)
    if code is None or code.co_argcount < 3:
        return True
    name = code.co_varnames[2]
    if name in code.co_cellvars:
        return True
    return any(op.opname.startswith("LOAD_") and (op.argval == name or (isinstance(op.argval, tuple) and name in op.argval))
               for op in dis.get_instructions(code))


PART_NAMES = tuple(RULESETS)  # GameState's fields, one per ruleset
# each event's steps for Replay: (index in PART_NAMES, evolver, reads the whole state),
# ``unchanged`` left out
_STEPS: dict[type[Event], tuple[tuple[int, Evolver, bool], ...]] = {
    kind: tuple((PART_NAMES.index(part), f, _reads_state(f)) for part, f in handlers if f is not unchanged)
    for kind, handlers in HANDLERS.items()
}


# The tags of the events no part folds and that carry no draws: a refusal kept as
# evidence, a comparison or a concession the next event settles. The state is the same
# without them: a store's replay decodes them to their tag alone (``SKIPPED``), and
# PostgreSQL's does not even read them.
IGNORED: frozenset[str] = frozenset(kind.__struct_config__.tag for kind, steps in _STEPS.items()
                                    if not steps and kind not in _DRAWN)

# the IGNORED kinds for a store's replay: the tag alone, every field skipped unread. A
# store's read joins every row of a chunk as stored: leaving these rows out in SQL (a CASE
# a row) cost more than decoding them so (session 10, BENCHMARKS.md).
SKIPPED: dict[type, type[Event]] = {
    msgspec.defstruct(f"{kind.__name__}Skipped", [], module=__name__, tag=kind.__struct_config__.tag,
                      tag_field=kind.__struct_config__.tag_field, frozen=True, gc=False): kind
    for kind in HANDLERS if kind.__struct_config__.tag in IGNORED}

# A store's replay decodes the hot kinds into ``slim`` types (only the fields their
# evolvers read): folded by the same steps as the whole events. ``FOLD_TYPES`` is what such
# a replay decodes: every event type, the hot ones slim, their draw records counted alike,
# the IGNORED ones to their tag; ``SUMMED_TYPES`` the same with the hot ones slim without
# their draw records, which the replay is then fed as stored summaries beside the events
# (``Replay.feed``, ``server/store/drawn.py``).
_STEPS.update({kind: _STEPS[full] for kind, full in slim.SLIM.items()})
_STEPS.update({kind: () for kind in SKIPPED})
# a slim kind without records is here too: fed without summaries, it fails loudly
# (``event.draws``) rather than leave its draws uncounted
_DRAWN = _DRAWN | frozenset(kind for kind, full in slim.SLIM.items() if full in _DRAWN)


def _fold_types(slims: dict[type[Event], type]) -> tuple[type, ...]:
    return tuple(slims.values()) + tuple(SKIPPED) + tuple(
        t for t in EVENT_TYPES if t not in slims and t not in SKIPPED.values())


FOLD_TYPES: tuple[type, ...] = _fold_types(slim.COUNTED)
SUMMED_TYPES: tuple[type, ...] = _fold_types(slim.SUMMED)
# the kinds that carry draws (whole or slim), whose stored summaries a store's replay
# merges instead of their records; and their tags: a store keeps one summary of each such event
DRAWN: frozenset[type] = _DRAWN
# the kinds (whole or slim) an evolver of which reads the whole state, draw counters
# included: a store's replay merges the summaries of the events before each at once
# (``events.drawn.segments``), and those after it later
READS: frozenset[type] = frozenset(kind for kind, steps in _STEPS.items() if any(r for _, _, r in steps))
DRAWN_TAGS: frozenset[str] = frozenset(t.__struct_config__.tag for t in EVENT_TYPES if t in _DRAWN)


# Replay's steps (``events.replay_steps``): kind -> (index of the part, the step, the part's
# evolver it stands for, the steps of the event's other parts). Only for an evolver
# registered for that kind that does not read the whole state, or reads only the session
# part, which its step then reads in the replay's parts (``replay_steps.READS_SESSION``).
_WORKS: dict[int, Callable[[Any, list], replay_steps.Work]] = {
    PART_NAMES.index(part): work for part, work in replay_steps.WORKS.items()}
_FAST: dict[type, tuple[int, Callable, Evolver, tuple[tuple[int, Evolver, bool], ...], bool]] = {}
if PART_NAMES[replay_steps.SESSION] != "session" or "session" in replay_steps.WORKS:
    raise RuntimeError("replay steps read the session part in Replay.parts: no work may hold it")
for _kind, (_part, _evolver, _step) in replay_steps.STEPS.items():
    _i = PART_NAMES.index(_part)
    # an evolver that reads the whole state only where its step reads the session part
    # for it, and no other part of the event's changes it
    _reads = slim.SLIM.get(_kind, _kind) in replay_steps.READS_SESSION
    if (_i, _evolver, _reads) not in _STEPS[_kind] or (_reads and len(_STEPS[_kind]) > 1):
        raise RuntimeError(f"replay step of {_kind.__name__} stands for no evolver of its {_part} part")
    _others = tuple(s for s in _STEPS[_kind] if s[0] != _i)
    if not any(reads for _, _, reads in _others):
        # last: whether the kind ends a run of draw summaries (READS: a retest, whose step
        # reads the session part and whose evolver, where the step leaves it the event,
        # the whole state): merged before it, whichever folds it
        _FAST[_kind] = (_i, _step, _evolver, _others, _kind in READS)


# the evolvers of the stepped kinds that read the whole state (``replay_steps.READS_SESSION``)
_READS_SESSION = frozenset(replay_steps.STEPS[k][1] for k in replay_steps.READS_SESSION)


class Replay:
    """The replay-only fold: the same states as ``evolve`` event by event, without a frozen
    ``GameState`` per event. The parts are held in a list, the draw streams in a dict of
    this replay's own, and a whole ``GameState`` is built only for an evolver that reads it
    (a sheet amended; a retest its step leaves to its evolver) and at the end. Nearly every
    kind of the met, dice and action parts folds through replay steps into a part's
    ``Work`` (``events.replay_steps``), turned back into a frozen part before anything else
    reads that part and at the end of each ``feed``; the others through their parts' own
    evolvers, unchanged. ``tests/test_replay_fold.py`` pins it to
    ``evolve``."""

    __slots__ = ("_start", "parts", "_streams", "_counter", "_work")

    def __init__(self, state: GameState | None = None) -> None:
        self._start = state = initial() if state is None else state
        # the parts folded so far, in PART_NAMES order: callers may read them between feeds
        # (the review reads where characters stand), never change them
        self.parts = [getattr(state, name) for name in PART_NAMES]
        self._streams = dict(state.streams)
        self._counter = state.draw_counter
        self._work: list[replay_steps.Work | None] = [None] * len(PART_NAMES)

    def _whole(self) -> GameState:
        # the streams dict is this replay's own and lent here: evolvers never keep or change it
        return replace(self._start, **dict(zip(PART_NAMES, self.parts)), streams=self._streams,
                       draw_counter=self._counter)

    def _settle(self) -> None:
        """Every part being folded by steps turned back into its frozen part."""
        work, parts = self._work, self.parts
        for i, w in enumerate(work):
            if w is not None:
                parts[i] = w.done()
                work[i] = None

    def feed(self, events, summaries=None, *, settle: bool = True) -> None:
        """Folds ``events``. With ``summaries`` (a store's replay, ``server/store/drawn.py``):
        one ``events.drawn.Summary`` per run of events up to each of a kind in ``READS``
        and one for the rest (``events.drawn.segments``), each what its run's draw records
        leave, merged in place of counting them (the events' own records, if any, are not
        read): each run's just before the event that ends it is folded, the last one's at
        the end. Without ``settle`` the parts being folded by steps stay in their works
        (the met, dice and action parts are stale until the next ``feed`` that settles, or
        ``settle``): a caller reading only the other parts between short runs (the review
        reads where characters stand) does not turn every page of the night's challenges
        back into a frozen part after each run (issue 18 item 4)."""
        parts, streams, counter, steps_of, drawn = self.parts, self._streams, self._counter, _STEPS, _DRAWN
        work, fast_of, works, reads_session = self._work, _FAST, _WORKS, _READS_SESSION
        summed = summaries is not None
        rest = iter(summaries) if summed else None
        next_summary = rest.__next__ if summed else None
        try:
            for event in events:
                kind = type(event)
                fast = fast_of.get(kind)
                if fast is not None:
                    i, step, evolver, others, cuts = fast
                    if cuts and summed:  # the draws of the run before it (READS)
                        counter = merge_draws(streams, counter, next_summary())
                    w = work[i]
                    if w is None:
                        w = work[i] = works[i](parts[i], parts)
                    if step(w, event):  # a case the step leaves to the evolver
                        if evolver in reads_session:
                            self._settle()
                            self._counter = counter
                            parts[i] = evolver(parts[i], event, self._whole())
                        else:
                            parts[i] = evolver(w.done(), event, None)
                            work[i] = None
                    for j, f, _ in others:
                        if work[j] is not None:
                            parts[j] = work[j].done()
                            work[j] = None
                        parts[j] = f(parts[j], event, None)
                else:
                    steps = steps_of[kind]
                    if len(steps) == 1:
                        ((i, f, reads),) = steps
                        if reads:
                            self._settle()
                            if summed:  # the draws of the run before it (READS)
                                counter = merge_draws(streams, counter, next_summary())
                            self._counter = counter
                            parts[i] = f(parts[i], event, self._whole())
                        else:
                            if work[i] is not None:
                                parts[i] = work[i].done()
                                work[i] = None
                            parts[i] = f(parts[i], event, None)
                    elif steps:
                        self._settle()
                        if summed and kind in READS:
                            counter = merge_draws(streams, counter, next_summary())
                        self._counter = counter
                        before = self._whole() if any(reads for _, _, reads in steps) else None
                        changed = [(i, f(parts[i], event, before)) for i, f, _ in steps]
                        for i, own in changed:
                            parts[i] = own
                if kind not in drawn or summed:
                    continue
                if records := event.draws:
                    if len(records) == 1 and (record := records[0]).stream:
                        # a throw, a Rouse check: count_draws's first case, without the call
                        if record.counter >= streams.get(record.stream, 0):
                            streams[record.stream] = record.counter + 1
                    else:
                        counter = count_draws(streams, counter, records)
            if summed:  # the draws of the run after the last event that reads the state
                counter = merge_draws(streams, counter, next_summary())
                if next(rest, None) is not None:
                    raise ValueError("more draw summaries than runs of events to merge them into")
        finally:
            self._counter = counter
            if settle:
                self._settle()

    def settle(self) -> None:
        """Every part up to date (after a ``feed`` without ``settle``)."""
        self._settle()

    def state(self, **changes) -> GameState:
        """The state folded so far (a new one each call, sharing nothing mutable with the
        replay), with ``changes`` (a store sets ``head``)."""
        self._settle()
        whole = self._whole()
        return replace(whole, streams=dict(self._streams), **changes)


def fold(events, state: GameState | None = None) -> GameState:
    """``evolve`` over ``events``, through ``Replay``."""
    replay = Replay(state)
    replay.feed(events)
    # the replay ends here: its streams dict is handed over, not copied again (the command
    # path folds each command's events with this, and a night holds thousands of streams)
    return replay._whole()
