"""The command path, shared by the websocket server, the HTTP API and the CLI.

Load state, decide, append, publish. Each session's folded state lives in memory; a
command is decided and folded synchronously (no await between the two, so commands of a
session are totally ordered) and then handed to the store's group-committing writer. The
acknowledgement and the fan-out wait for the commit; the writer is FIFO, so seqs follow
the order in which states were folded. If a commit fails, the session's state is reloaded
from the store, which stays the truth.

Several processes on one store (PostgreSQL, ``serve --workers``): each append carries the
session's last seq its decision was folded on (``Pending.basis``; pipelined commands of a
session chain theirs through ``Pending.then``), checked by the store under its lock. When
another process wrote to the session meanwhile, the append comes back ``stale``, nothing
written: the state catches up from the store (the rows after what it had committed) and
the command is decided again. Events other processes wrote are announced by the store's
tail (``note_remote``), so an idle session catches up before its next decision instead.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import itertools
import logging
import os
import time
from typing import Callable

import msgspec

from conteur.events import game
from conteur.events.game import CommandRejected, GameState
from conteur.events.model import Actor, Command, Event, RuleViolation
from conteur.events.met import carry_over
from conteur.events.session import Carried
from conteur.server.core.offload import StoreWork, trouble_of
from conteur.server.core.pages import Compressing
from conteur.server.store.fold import fold_chunks
from conteur.server.store.interface import Basis, EventStore, Outcome, Pending, StoreError

from conteur.events import fair as _fair


log = logging.getLogger("conteur.service")


class Executed(msgspec.Struct, frozen=True, kw_only=True):
    """A command's outcome with its events, for the ack and the fan-out."""

    session: str
    outcome: Outcome
    events: tuple[tuple[int, Event], ...] = ()
    actor: Actor | None = None


Listener = Callable[[Executed], None]

# decisions of one command voided by other processes' appends before it gives up
# ("unavailable": the device retries with the same id)
STALE_TRIES = 50


def _opens(command: Command) -> bool:
    return command.__struct_config__.tag == "open_session"


def _unread(session: str) -> StoreError:
    return StoreError(f"the state of session {session} is not read yet: try again")


class SecretSeeds:
    """FAIR-2 seeds, kept outside the append-only log until the session reveals them."""

    def __init__(self, store: EventStore, randbytes: Callable[[int], bytes] = os.urandom):
        self._store = store
        self._randbytes = randbytes
        self._known: dict[str, bytes] = {}  # a seed never changes once made: read it once

    def get(self, session: str) -> bytes | None:
        seed = self._known.get(session)
        if seed is None:
            seed = self._store.secret(session)
            if seed is not None:
                self._known[session] = seed
        return seed

    def create(self, session: str) -> bytes:
        existing = self.get(session)
        if existing is not None:
            return existing
        # another process may have made one meanwhile: the first stored wins
        seed = self._known[session] = self._store.create_secret(session, _fair.new_seed(self._randbytes))
        return seed


class _Attempt:
    """One command on its way to the log: decided, maybe decided again (stale)."""

    __slots__ = ("order", "session", "raw", "actor", "device", "command_id", "entropy", "loop",
                 "result", "tries")

    def __init__(self, order, session, raw, actor, device, command_id, entropy, loop, result):
        self.order, self.session, self.raw, self.actor = order, session, raw, actor
        self.device, self.command_id, self.entropy = device, command_id, entropy
        self.loop, self.result, self.tries = loop, result, 0


class Chronicle:
    """The sessions of one chronicle database, and the one way commands become events."""

    def __init__(self, store: EventStore, *, snapshot_every: int | None = None,
                 randbytes: Callable[[int], bytes] = os.urandom, compress: bool = True):
        """``randbytes`` makes the session seeds and the nonces of hidden rolls; only a
        reproducible simulation (``conteur simulate --fixed-secrets``) passes another.

        ``compress``: each session's final pages of finished MET challenges are held
        compressed in its state (``pages.Page``): the one part of the
        true state that grows with the night, about 136 bytes an event of a MET night kept
        as long as the server runs, is then about 4. Decisions are the same either way
        (tests/server/test_playing_memory.py); off only to show that."""
        self.store = store
        self.clock: Callable[[], float] = time.time  # the server's clock, epoch seconds (countdowns)
        self._compressing = Compressing() if compress else None
        self._randbytes = randbytes
        self.seeds = SecretSeeds(store, randbytes)
        self._states: dict[str, GameState] = {}
        self._inflight: dict[tuple[str, str], concurrent.futures.Future] = {}
        self.listeners: list[Listener] = []
        # Periodic snapshots while playing, so a restart after a long night (or a kill -9)
        # folds at most this many events per session (DESIGN: start-up under 2 s on
        # 1,000,000 events). Written off the writer thread: a big state never delays a
        # group commit.
        self.snapshot_every = snapshot_every or 10 * store.snapshot_every
        self._since_snapshot: dict[str, int] = {}
        self._epoch: dict[str, int] = {}  # bumped when a failed commit voids folded states
        # several deciding processes: what the next decision of a session stands on, the
        # session's state exact at its last committed seq, and the newest seq another
        # process is known to have written there
        self._tips: dict[str, Basis] = {}
        self._committed: dict[str, GameState] = {}
        self._remote: dict[str, int] = {}
        self._tail_last: dict[str, int] = {}
        self.stale = 0  # appends come back stale (decided again): what the bench reports
        # appends in flight per session, in decision order; sessions whose folded state
        # an append voided, with the commands to decide again and those held meanwhile
        self._order = itertools.count()
        self._flight: dict[str, list[_Attempt]] = {}
        self._recovering: set[str] = set()
        self._redo: dict[str, list[_Attempt]] = {}
        self._held: dict[str, list[_Attempt]] = {}
        self._snapshots = concurrent.futures.ThreadPoolExecutor(1, thread_name_prefix="conteur-snapshot")
        # what ``execute`` reads before deciding, off the event loop (server/core/offload.py)
        self.work = StoreWork(store)
        self._fetched: dict[str, tuple[int, list]] = {}  # a catch-up's rows read off the loop
        self._listed: dict[str, list[str]] = {}  # the sessions an open_session's carry-over reads
        self._reading: set[str] = set()  # sessions whose catch-up is being read off the loop
        self._serving: asyncio.AbstractEventLoop | None = None  # the loop of the server's sockets

    def serve_on(self, loop: asyncio.AbstractEventLoop) -> None:
        """The event loop that runs the server's sockets: on it, nothing waits for the store
        (``state``). A script or a test on a loop of its own may still read."""
        self._serving = loop

    def _holding(self) -> bool:
        """True on the serving loop: a store read there would hold every socket of the
        process until the database answers."""
        if self._serving is None:
            return False
        try:
            return asyncio.get_running_loop() is self._serving
        except RuntimeError:
            return False

    # -- state ---------------------------------------------------------------------

    def state(self, session: str) -> GameState:
        """The session's state. On the event loop nothing is read from the store: what
        ``state_now`` or ``execute`` read ahead off the loop is folded; without it a session
        not in memory is ``StoreError`` (unavailable, try again), and one another process
        wrote to stays as committed here (a decision on it comes back stale from the store,
        and is decided again once the store's rows are read, off the loop)."""
        state = self._states.get(session)
        if state is None:
            if self._holding():
                raise _unread(session)
            state = self._loaded(session, self.store.load_state(session))
        elif self._remote.get(session, 0) > state.head:
            exact = self._behind(session)
            if exact is not None:
                fetched = self._fetched.get(session)
                if (fetched is not None and fetched[0] == exact) or not self._holding():
                    state = self._catch_up(session, msgspec.structs.replace(state, head=exact))
        return state

    def _behind(self, session: str) -> int | None:
        """The seq the session's state is exact at (every decision of this process
        committed) when another process wrote after it (the store's tail says so): its
        catch-up reads the rows after that seq. None when it trails nothing, or when a
        decision of this process is in flight (its append comes back stale instead)."""
        tip = self._tips.get(session)
        if (tip is not None and tip.seq is not None and tip.seq != Basis.BROKEN
                and self._remote.get(session, 0) > tip.seq):
            return tip.seq
        return None

    def held_sessions(self) -> tuple[str, ...]:
        """The sessions whose state this process holds (every one from ``preload`` on)."""
        return tuple(self._states)

    def _compress(self, session: str, state: GameState, events=None) -> GameState:
        """``events``: what was folded into ``state`` from the session's state as last
        compressed (None: a state of other origin, all its pages looked at)."""
        return state if self._compressing is None else self._compressing(session, state, events)

    def _loaded(self, session: str, state: GameState, events=None) -> GameState:
        state = self._compress(session, state, events)
        self._states[session] = self._committed[session] = state
        self._tips[session] = Basis(state.head)
        return state

    def _catch_up(self, session: str, base: GameState | None = None) -> GameState:
        """The session's state from ``base`` (exact at its head; by default the last
        committed state) plus what the store has after it: other processes' appends.
        Decisions of this process still in flight were folded on the old state: a new
        epoch, their appends come back stale and are decided again."""
        base = base if base is not None else self._committed.get(session)
        fetched = self._fetched.pop(session, None)
        if base is None:
            if self._holding():
                raise _unread(session)
            state = self.store.load_state(session)
        elif fetched is not None and fetched[0] == base.head:
            state, _ = fold_chunks(base.head, base, iter(fetched[1]))
        elif self._holding():
            state = base  # the rows read ahead were for another state: as committed (see state)
        else:
            state, _ = fold_chunks(base.head, base, self.store.iter_events(session, after=base.head))
        self._epoch[session] = self._epoch.get(session, 0) + 1
        return self._loaded(session, state)

    def take_remote(self, items: list[tuple[int, str, Event]]) -> None:
        """What the store's tail delivered: every row committed after its previous
        delivery, by any process (this one's included), in seq order. An idle session
        (nothing of this process in flight) folds the others' events at once, so its next
        decision stands on them instead of coming back stale; a busy one catches up by
        reading the store when it is next looked at (``note_remote``)."""
        by_session: dict[str, list[tuple[int, Event]]] = {}
        for seq, session, event in items:
            by_session.setdefault(session, []).append((seq, event))
        for session, rows in by_session.items():
            last = rows[-1][0]
            previous = self._tail_last.get(session)  # this session's last row the tail gave before
            self._tail_last[session] = last
            state = self._states.get(session)
            if state is None:
                continue  # loaded from the store when first needed
            tip = self._tips.get(session)
            idle = (tip is not None and tip.seq is not None and tip.seq != Basis.BROKEN
                    and session not in self._recovering and not self._flight.get(session))
            # the state is exact at tip.seq; every row of the session after ``previous``
            # is in this delivery: if tip.seq >= previous, nothing is missing between
            if idle and previous is not None and tip.seq >= previous:
                new = [event for seq, event in rows if seq > tip.seq]
                if new:
                    self._epoch[session] = self._epoch.get(session, 0) + 1
                    self._loaded(session, msgspec.structs.replace(game.fold(new, state), head=last), new)
            else:
                self.note_remote(session, last)

    def note_remote(self, session: str, seq: int) -> None:
        """Another process wrote to ``session`` up to ``seq`` (the store's tail says so):
        the next look at its state catches up first."""
        if seq > self._remote.get(session, 0):
            self._remote[session] = seq

    def preload(self, sessions: list[str] | None = None) -> None:
        """Loads the states of many sessions at once (start-up), folded over the cores
        when the store can and there is much to fold (``EventStore.load_states``)."""
        missing = [s for s in (self.store.sessions() if sessions is None else sessions)
                   if s not in self._states]
        for session, state in self.store.load_states(missing).items():
            if session not in self._states:
                self._loaded(session, state)

    def forget(self, session: str) -> None:
        self._states.pop(session, None)
        if self._compressing is not None:
            self._compressing.forget(session)
        self._tips.pop(session, None)
        self._committed.pop(session, None)
        self._epoch[session] = self._epoch.get(session, 0) + 1

    def _count_for_snapshot(self, session: str, seqs: tuple[int, ...], state: GameState,
                            epoch: int) -> None:
        """Called after a commit with the state folded right after it: exact at its last
        seq unless a failed commit voided the states folded since (the epoch moved)."""
        seq = seqs[-1]
        since = self._since_snapshot.get(session, 0) + len(seqs)
        if since < self.snapshot_every or self._epoch.get(session, 0) != epoch:
            self._since_snapshot[session] = since
            return
        self._since_snapshot[session] = 0
        state = msgspec.structs.replace(state, head=seq)

        def save() -> None:
            try:
                self.store.save_snapshot(session, seq, state, keep=3)  # its Pages encoded one by one
            except Exception:  # a snapshot is an optimisation: the log stays the truth
                pass

        self._snapshots.submit(save)

    # -- commands -------------------------------------------------------------------

    def _prepare(self, session: str, command: Command, entropy: str) -> tuple[Command, object]:
        """Server-side fields no client may set: the seed commitment and its reveal."""
        tag = command.__struct_config__.tag
        if tag == "open_session" and hasattr(command, "carried") and self.state(session).session.status == "pending":
            command = msgspec.structs.replace(command, carried=self.carried_into(session, command))
        if tag == "open_session" and hasattr(command, "seed_commitment"):
            seed = self.seeds.create(session)
            command = msgspec.structs.replace(command, seed_commitment=_fair.commitment(seed))
        elif tag == "close_session" and hasattr(command, "seed"):
            seed = self.seeds.get(session)
            command = msgspec.structs.replace(command, seed=seed.hex() if seed else "")
        elif "now" in command.__struct_fields__:
            # a countdown's end is on the server's clock, whatever a device's says
            command = msgspec.structs.replace(command, now=self.clock())
        seed = self.seeds.get(session)
        state = self.state(session)
        if seed is not None:
            # a hidden roll sent without entropy draws with a nonce of the server's, which
            # only its viewers receive: the revealed seed alone cannot recompute it
            draws = _fair.FairDraws(seed, session, start=state.draw_counter, entropy=entropy,
                                    streams=state.streams,
                                    nonce="" if entropy else _fair.new_nonce(self._randbytes))
        else:
            from conteur.events.model import ScriptedDraws

            draws = ScriptedDraws(start=state.draw_counter)  # no seed yet: a draw is refused
        return command, draws

    def carried_into(self, session: str, command) -> Carried:
        """MET-13 "sans limite de temps": the unpaid tie debts of the latest session already
        opened in the same chronicle (``OpenSession.chronicle``; one database is one
        chronicle when none is named), however this one is opened (``open_session``,
        ``POST /sessions``, a roster). Debts the command already carries are kept."""
        stored = self._listed.get(session)
        if stored is None:
            if self._holding():
                raise _unread(session)
            stored = self.store.sessions()
        order = stored + [s for s in self._states if s not in set(stored)]
        previous = None
        for other in reversed(order):
            if other == session:
                continue
            state = self.state(other)
            if state.session.status != "pending" and state.session.chronicle == command.chronicle:
                previous = state
                break
        given = tuple(command.carried.tie_debts)
        inherited = carry_over(previous).tie_debts if previous is not None else ()
        return Carried(tie_debts=given + tuple(d for d in inherited if d not in given))

    def submit(self, session: str, command: Command, actor: Actor, *, device: str = "",
               command_id: str = "", entropy: str = "",
               loop: asyncio.AbstractEventLoop | None = None, looked_up: tuple | None = None):
        """Decides and folds now; returns a future of ``Executed`` resolved after commit:
        a ``concurrent.futures.Future``, or with ``loop`` an asyncio future of that loop
        (resolved with the rest of its group commit, in one wake-up of the loop).
        ``looked_up``: the command id's stored outcome, read already (``_ready``)."""
        key = (device, command_id)
        if command_id:
            inflight = self._inflight.get(key)
            if inflight is not None:
                return inflight
            previous = (looked_up[0] if looked_up is not None
                        else self.store.outcome_of(device, command_id, session))
            if previous is not None:
                done = loop.create_future() if loop is not None else concurrent.futures.Future()
                done.set_result(Executed(session=session, outcome=previous, actor=actor))
                return done
        result = loop.create_future() if loop is not None else concurrent.futures.Future()
        attempt = _Attempt(next(self._order), session, command, actor, device, command_id, entropy,
                           loop, result)
        if command_id:
            self._inflight[key] = result
        try:
            self._start(attempt)
        except BaseException:
            self._inflight.pop(key, None)
            raise
        return result

    def _start(self, a: _Attempt) -> None:
        if a.session in self._recovering:
            # decided after the ones being decided again, in the order they came
            self._held.setdefault(a.session, []).append(a)
        else:
            self._decide(a)

    def _decide(self, a: _Attempt) -> None:
        """Decides on the session's state, folds, and queues the append; its commit
        resolves ``a.result``."""
        session = a.session
        a.tries += 1
        state = self.state(session)
        command, draws = self._prepare(session, a.raw, a.entropy)
        code = message = None
        try:
            try:
                events = game.decide(state, command, draws, actor=a.actor)
            except RuleViolation:
                raise
            except Exception:  # noqa: BLE001
                # deciding is pure: the same command fails the same way on every retry, so
                # it is refused ("invalid"), never answered "unavailable" (retried forever)
                log.exception("deciding %s failed", command.__struct_config__.tag)
                # the reader is a player: the command is named in words by its screen (its
                # type is in the event), the exception is for the log
                raise RuleViolation("this command could not be decided from its values: check them",
                                    code="invalid") from None
        except RuleViolation as violation:
            code, message = violation.code, violation.message
            events = [CommandRejected(
                command_type=command.__struct_config__.tag, code=violation.code,
                message=violation.message, character=a.actor.character, rule=violation.rule,
            )]
        folded = self._states[session] = self._compress(session, game.fold(events, state), events)
        epoch = self._epoch.get(session, 0)
        basis = self._tips.get(session)
        then = self._tips[session] = Basis()
        pending = Pending(
            session=session, events=events, actor=a.actor.name or a.actor.role, device=a.device,
            command_id=a.command_id, code=code, message=message, basis=basis, then=then,
        )
        try:
            stored = self.store.submit(pending) if a.loop is None else self.store.submit_on(a.loop, pending)
        except StoreError:
            self.forget(session)
            raise
        self._flight.setdefault(session, []).append(a)
        stored.add_done_callback(lambda f: self._settle(a, f, events, folded, epoch))

    def _settle(self, a: _Attempt, f, events: list[Event], folded: GameState, epoch: int) -> None:
        """An append came back. Written as decided: resolved. Not (a failed commit, a
        stale basis, a command another process decided first): this process's folded
        state is void; once no append of the session is in flight, it catches up from
        the store and decides the stale ones again, then those that came meanwhile, in
        their order (a device's commands are decided in the order it sent them)."""
        session = a.session
        flight = self._flight.get(session, [])
        if a in flight:
            flight.remove(a)
        exc = f.exception()
        if exc is not None:
            self._recovering.add(session)
            self._finish(a, exc=exc)
        else:
            outcome: Outcome = f.result()
            if outcome.stale:
                self.stale += 1
                self._recovering.add(session)
                self._redo.setdefault(session, []).append(a)
            else:
                pairs = tuple(zip(outcome.seqs, events)) if not outcome.replayed else ()
                if outcome.replayed:
                    self._recovering.add(session)
                elif pairs and session not in self._recovering and self._epoch.get(session, 0) == epoch:
                    self._committed[session] = msgspec.structs.replace(folded, head=outcome.seqs[-1])
                if pairs:
                    self._count_for_snapshot(session, outcome.seqs, folded, epoch)
                self._finish(a, Executed(session=session, outcome=outcome, events=pairs, actor=a.actor))
        if session in self._recovering and not flight:
            if a.loop is None:
                self._recover(session)
            elif session not in self._reading:
                # what the catch-up reads, read off the loop first; the session's commands
                # are held meanwhile (it stays ``_recovering``)
                self._reading.add(session)
                a.loop.create_task(self._recover_off_loop(session))

    async def _recover_off_loop(self, session: str) -> None:
        try:
            if trouble_of(self.store) is not None:
                raise StoreError("the store is down")
            loaded = await self.work.run(self._read_recovery, session)
        except Exception as exc:  # noqa: BLE001 - the store is down: reloaded at the next decision
            # deciding them again would read the session from the store on the loop: they
            # are answered unavailable instead, and their retries (same ids) decided once
            self._fetched.pop(session, None)
            self._reading.discard(session)
            self._recovering.discard(session)
            self.forget(session)
            failed = exc if isinstance(exc, StoreError) else StoreError(str(exc) or type(exc).__name__)
            for a in self._redo.pop(session, []) + self._held.pop(session, []):
                self._finish(a, exc=failed)
            return
        self._reading.discard(session)
        self._recover(session, loaded=loaded)

    def _read_recovery(self, session: str) -> dict[str, GameState]:
        """On the store's thread: what ``_catch_up`` reads (the session's whole state when
        none was committed here, else the rows after the last committed state kept for
        it), and what an ``open_session`` to decide again reads of the other sessions."""
        again = list(self._redo.get(session, ())) + list(self._held.get(session, ()))
        loaded = self._read_others(session) if any(_opens(a.raw) for a in again) else {}
        base = self._committed.get(session)
        if base is None:
            loaded[session] = self.store.load_state(session)
        else:
            self._fetched[session] = (base.head, list(self.store.iter_events(session, after=base.head)))
        return loaded

    def _recover(self, session: str, *, loaded: dict[str, GameState] | None = None) -> None:
        """``loaded``: what ``_read_recovery`` read off the loop (None: read here, off it)."""
        self._recovering.discard(session)
        again = sorted(self._redo.pop(session, []), key=lambda x: x.order) + self._held.pop(session, [])
        loaded = dict(loaded or {})
        own = loaded.pop(session, None)
        self._take_loaded(loaded)
        if own is not None:
            self._epoch[session] = self._epoch.get(session, 0) + 1
            self._loaded(session, own)
        else:
            try:
                if trouble_of(self.store) is not None:
                    raise StoreError("the store is down")  # never wait for it on the loop
                self._catch_up(session)
            except Exception:  # noqa: BLE001 - the store is down: reloaded at the next decision
                self.forget(session)
        for a in again:
            if a.tries >= STALE_TRIES:
                self._finish(a, exc=StoreError(
                    f"session {session} is too busy: decided {a.tries} times, each time after "
                    f"another server's command"))
                continue
            try:
                self._start(a)
            except Exception as exc:  # noqa: BLE001 - the store closed or is down
                self._finish(a, exc=exc)

    def _finish(self, a: _Attempt, executed: Executed | None = None, exc: BaseException | None = None) -> None:
        if a.command_id:
            self._inflight.pop((a.device, a.command_id), None)
        if a.result.done():
            return
        if exc is not None:
            a.result.set_exception(exc)
        else:
            a.result.set_result(executed)

    def execute_sync(self, session: str, command: Command, actor: Actor, **kwargs) -> Executed:
        executed = self.submit(session, command, actor, **kwargs).result()
        self._publish(executed)
        return executed

    def _ready(self, session: str, command: Command, device: str, command_id: str) -> tuple:
        """On the store's thread: what deciding ``command`` would read from the store,
        read now so that ``submit`` reads nothing on the event loop: the command id's
        stored outcome, the session's state if it is not in memory, the rows other
        processes wrote since, and the session's seed; for an ``open_session``, the
        states of the other sessions too (MET-13's carry-over reads them)."""
        outcome = self.store.outcome_of(device, command_id, session) if command_id else None
        loaded = self._read_state(session)
        if _opens(command):
            self.seeds.create(session)
            loaded.update(self._read_others(session))
        else:
            self.seeds.get(session)
        return (outcome, loaded)

    def _read_others(self, session: str) -> dict[str, GameState]:
        """On the store's thread: what MET-13's carry-over into ``session`` reads (the
        sessions of the store, and the state of each other one)."""
        loaded: dict[str, GameState] = {}
        listed = self._listed[session] = self.store.sessions()
        for other in listed:
            if other != session:
                loaded.update(self._read_state(other))
        return loaded

    def _read_state(self, session: str) -> dict[str, GameState]:
        """On the store's thread: what ``state`` would read from the store, read now (the
        state of a session not in memory, returned; the rows other processes wrote after
        what it holds, kept for its catch-up)."""
        state = self._states.get(session)
        if state is None:
            return {session: self.store.load_state(session)}
        exact = self._behind(session)
        if exact is not None:
            self._fetched[session] = (exact, list(self.store.iter_events(session, after=exact)))
        return {}

    def _take_loaded(self, loaded: dict[str, GameState]) -> None:
        for session, state in loaded.items():
            if session not in self._states:
                self._loaded(session, state)

    def held(self, session: str) -> GameState | None:
        """The session's state if ``state`` would read nothing from the store, else None."""
        state = self._states.get(session)
        return None if state is None or self._behind(session) is not None else state

    async def state_now(self, session: str) -> GameState:
        """``state`` for the event loop: what it would read from the store read first off
        the loop (``StoreWork.run``, within the store's deadline: ``Unavailable`` after)."""
        if self.held(session) is None:
            self._take_loaded(await self.work.run(self._read_state, session))
        return self.state(session)

    async def execute(self, session: str, command: Command, actor: Actor, **kwargs) -> Executed:
        """``submit`` for the event loop: the store's reads done first off the loop, and
        every wait bounded by the store's deadline (``Unavailable`` after it, nothing
        lost: the append, if queued, goes on, and a retry with the same id awaits it)."""
        key = (kwargs.get("device", ""), kwargs.get("command_id", ""))
        if not (key[1] and key in self._inflight):
            looked_up = await self.work.run(self._ready, session, command, *key)
            self._take_loaded(looked_up[1])
            kwargs["looked_up"] = looked_up
        future = self.submit(session, command, actor, loop=asyncio.get_running_loop(), **kwargs)
        # shielded: a device that drops while waiting must not cancel the command's
        # shared future, which its retry (same id) will await again
        executed = await self.work.wait(asyncio.shield(
            asyncio.wrap_future(future) if isinstance(future, concurrent.futures.Future) else future))
        self._publish(executed)
        return executed

    def _publish(self, executed: Executed) -> None:
        if executed.events:
            for listener in self.listeners:
                listener(executed)
