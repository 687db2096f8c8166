"""The asyncio Python client: reconnecting, resyncing, with a durable outbox.

One ``Client`` follows one session as one viewer (the token decides who). It keeps
connecting (backoff with jitter, capped, reset once a ``welcome`` arrives), says ``hello``
with the last seq it holds, takes the missed events, and once ``live`` arrives flushes the
outbox in the order commands were made. Commands are written to the outbox before they
are sent, with their UUID, so a dropout or a process restart resends the same id and the
server's idempotency hands back the first outcome: a throw is never made twice.

Received events are kept in the same SQLite file, so the viewer's folded state is rebuilt
after a restart without downloading the session again. For a storyteller (who sees every
event whole) ``client.state`` equals the server's ``GameState``; for a player it is the
fold of what that player may see, or ``None`` when a redacted event cannot be folded.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import random
import secrets
from pathlib import Path
from typing import Any, AsyncIterator

import msgspec
import websockets
from websockets.asyncio.client import connect

from conteur.client.commands import Commands
from conteur.client.outbox import Entry, Outbox
from conteur.events import channel, game, wire
from conteur.events.model import Command

log = logging.getLogger("conteur.client")

# Errors after which reconnecting cannot help: the token is wrong, not the network.
FATAL_CODES = frozenset({"auth", "unauthorized", "forbidden", "bad_token", "unknown_token",
                         "token", "invalid_token", "unknown_session"})

# Refusals that wrote nothing and say "try again": the command stays in the outbox.
RETRY_CODES = frozenset({"unavailable", "rate_limited"})

# docs/protocol.md: the server closes a live socket with 4401 "token revoked" when its
# token is revoked (a reprinted join sheet). Reconnecting would only be refused again.
CLOSE_UNAUTHORIZED = 4401
REASON_REVOKED = "token revoked"
REVOKED_MESSAGE = ("this device's token was revoked (a new join sheet was printed): "
                   "ask a storyteller for a new join link")


def refusal(code: int | None, reason: str) -> ClientError | None:
    """The refusal a close code means, or None when reconnecting may help."""
    if code != CLOSE_UNAUTHORIZED:
        return None
    if reason == REASON_REVOKED:
        return ClientError("revoked", REVOKED_MESSAGE)
    return ClientError("unauthorized", reason or "the server refused this token")


class Result(msgspec.Struct, frozen=True, kw_only=True):
    """A command's outcome: the seqs of its events, or a rejection with its reason."""

    id: str
    seqs: tuple[int, ...] = ()
    code: str | None = None
    message: str | None = None

    @property
    def ok(self) -> bool:
        return self.code is None


class Delivered(msgspec.Struct, frozen=True, kw_only=True):
    """One event as this viewer received it: ``event`` is a typed Struct when its tag is
    known to ``events.game``, else the raw JSON object (a newer server, a sealed form);
    ``raw`` is the JSON object as it came."""

    seq: int
    event: Any
    raw: dict

    @property
    def type(self) -> str:
        return self.raw.get("type", "?")


class _Resync(Exception):
    """The server holds less than we do: forget our copy and start over from seq 0."""

    def __init__(self, reason: str):
        super().__init__(reason)
        self.reason = reason


# Why a client printed its log again from seq 1 (``Restarted.reason``).
RESTORED = ("the server holds another history than this device (a backup was restored): "
            "the log starts again from the beginning")
BEHIND = ("the server holds fewer events than this device (another or an older database): "
          "the log starts again from the beginning")


class Restarted(msgspec.Struct, frozen=True, kw_only=True):
    """Given by ``events(notices=True)`` when what was received is dropped and the log is
    received again from seq 1 (docs/protocol.md, Restored backup)."""

    reason: str


class ClientError(Exception):
    """The server refused this client for good (a bad token, an unknown session)."""

    def __init__(self, code: str, message: str):
        super().__init__(f"{code}: {message}")
        self.code = code
        self.message = message


class Backoff:
    """Exponential backoff with "equal jitter": half the delay fixed, half random, so a
    room of phones coming back from the same Wi-Fi blip does not reconnect in lockstep."""

    def __init__(self, base: float = 0.25, cap: float = 10.0, rng: random.Random | None = None):
        self.base, self.cap = base, cap
        self.attempt = 0
        self._rng = rng or random.Random()

    def next(self) -> float:
        ceiling = min(self.cap, self.base * (2 ** self.attempt))
        self.attempt += 1
        return ceiling / 2 + self._rng.uniform(0, ceiling / 2)

    def reset(self) -> None:
        self.attempt = 0


# the frames are events/wire.py's, both ways: typed Structs, one codec for server and client
decode_event = wire.decode_event


def command_json(command: Command | dict) -> dict:
    """A command as the wire JSON the outbox keeps, checked against its type first, so a
    typo fails here (``ValueError``), at once, and not as a rejection after a dropout."""
    if not isinstance(command, Command):
        command = wire.command_of(command)
    return msgspec.to_builtins(command)


class Client(Commands):
    """A reconnecting client for one session. Use as ``async with Client(...) as c``."""

    def __init__(self, url: str, token: str, session: str | None = None, *,
                 outbox: Outbox | str | Path = ":memory:", device: str | None = None,
                 backoff: Backoff | None = None, origin: str | None = None,
                 ping_interval: float | None = 5.0, batch: bool = True, create: bool = False,
                 sealed: bool = True):
        self.url = url
        # docs/protocol.md, The channel: every frame sealed with a key derived from the
        # token, which never crosses the network; off, the hello names the token in the
        # clear (behind --tls, or on loopback)
        self.sealed = sealed
        # a storyteller opening a session that has no event yet says so in hello; without
        # it the server refuses a (mistyped) session it does not know
        self.create = create
        # docs/protocol.md: ``batch`` in hello lets the server send a resync or a backlog as
        # a few messages; off, every frame comes alone (an older server ignores the flag)
        self.batch = batch
        self.messages = 0  # websocket messages received: a batch counts once
        self._batching = False
        self.token = token
        self.outbox = outbox if isinstance(outbox, Outbox) else Outbox(outbox)
        self.session = session or self.outbox.get_meta("session") or ""
        self.device = self.outbox.device(device)
        self.outbox.prune()  # answered commands older than a day: a long-lived file stays small
        self.backoff = backoff or Backoff()
        self.origin = origin
        self.ping_interval = ping_interval
        viewer = self.outbox.get_meta("viewer")
        self.viewer: wire.Viewer | None = msgspec.json.decode(viewer, type=wire.Viewer) if viewer else None
        self.head = 0
        self.connected = False
        self.connections = 0  # welcomes received: a test reads how often it came back
        self.diverged = 0  # welcomes that said this server holds another history (restored backup)
        self.live = asyncio.Event()
        self.error: ClientError | None = None
        self._ws: Any = None
        self._task: asyncio.Task | None = None
        self._waiters: dict[str, asyncio.Future] = {}
        self._subscribers: list[asyncio.Queue] = []
        self._pending_log: list[tuple[int, dict]] = []
        self._hello_after = 0
        self._sent: set[str] = set()  # ids sent on the current connection
        self.written: set[str] = set()  # ids whose frame left on a socket, on any connection
        self.received: list[Delivered] = []
        self._state: game.GameState | None = game.initial()
        self.fold_error: str | None = None
        for seq, raw in self.outbox.log(self.session):
            self._take(seq, raw, notify=False)

    # -- lifecycle -------------------------------------------------------------------

    async def __aenter__(self) -> Client:
        self.start()
        return self

    async def __aexit__(self, *exc) -> None:
        await self.close()

    def start(self) -> None:
        if self._task is None:
            self._task = asyncio.create_task(self._run(), name="conteur-client")

    async def close(self) -> None:
        if self._task is not None:
            self._task.cancel()
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await self._task
            self._task = None
        for queue in self._subscribers:
            queue.put_nowait(None)
        self.outbox.close()

    async def wait_live(self, timeout: float | None = 10.0) -> None:
        """Until the resync is done (``live``); raises ``ClientError`` on a refused token."""
        waiter = asyncio.ensure_future(self.live.wait())
        try:
            while not self.live.is_set():
                if self.error is not None:
                    raise self.error
                done, _ = await asyncio.wait({waiter}, timeout=0.05)
                if timeout is not None:
                    timeout -= 0.05
                    if timeout <= 0 and not done:
                        raise TimeoutError("not live yet")
        finally:
            waiter.cancel()
        if self.error is not None:
            raise self.error

    @property
    def last_seq(self) -> int:
        """The last seq any process using this outbox file received (shared)."""
        return self.outbox.last_seq(self.session)

    @property
    def held(self) -> int:
        """The last seq this client took itself: what it resumes after. Not ``last_seq``:
        another process sharing the file may have received events this one never saw."""
        return self.received[-1].seq if self.received else 0

    async def wait_written(self, command_id: str, timeout: float | None = 10.0) -> bool:
        """Until the command's frame has left on a socket (not its outcome); False if it
        was answered from the outbox, or the time ran out first."""
        loop = asyncio.get_running_loop()
        deadline = None if timeout is None else loop.time() + timeout
        while command_id not in self.written:
            entry = self.outbox.get(command_id)
            if entry is None or entry.status != "queued" or self.error is not None:
                return False
            if deadline is not None and loop.time() >= deadline:
                return False
            await asyncio.sleep(0.02)
        return True

    @property
    def state(self) -> game.GameState | None:
        """This viewer's fold of its events; ``None`` once one could not be folded."""
        return self._state

    # -- commands --------------------------------------------------------------------

    def send(self, command: Command | dict, *, entropy: str | None = None,
             command_id: str | None = None) -> str:
        """Queue a command durably and send it when live; returns its id at once."""
        body = command_json(command)
        command_id = self.outbox.put(
            self.session, body, entropy=entropy if entropy is not None else secrets.token_hex(8),
            made_after=self.last_seq, command_id=command_id,
        )
        if self.live.is_set() and self._ws is not None:
            entry = self.outbox.get(command_id)
            if entry is not None:
                asyncio.ensure_future(self._send_entry(self._ws, entry))
        return command_id

    async def request(self, command: Command | dict, *, entropy: str | None = None,
                      timeout: float | None = 30.0) -> Result:
        """Send and wait for the outcome, through any number of reconnects."""
        command_id = self.send(command, entropy=entropy)
        return await self.outcome(command_id, timeout=timeout)

    async def outcome(self, command_id: str, timeout: float | None = 30.0) -> Result:
        entry = self.outbox.get(command_id)
        if entry is not None and entry.status != "queued":
            return _result(entry)
        if self.error is not None:
            raise self.error  # refused for good: the command stays queued, unanswered
        future = self._waiters.setdefault(command_id, asyncio.get_running_loop().create_future())
        return await asyncio.wait_for(asyncio.shield(future), timeout)

    def queued(self) -> list[Entry]:
        return self.outbox.queued(self.session)

    # -- events ----------------------------------------------------------------------

    async def events(self, *, replay: bool = False, notices: bool = False) -> AsyncIterator[Delivered]:
        """Every event from now on (and those already held, with ``replay``), in order;
        with ``notices``, a ``Restarted`` where the log starts over."""
        queue: asyncio.Queue = asyncio.Queue()
        if replay:
            for item in self.received:
                queue.put_nowait(item)
        self._subscribers.append(queue)
        try:
            while True:
                item = await queue.get()
                if item is None:
                    return
                if isinstance(item, Restarted) and not notices:
                    continue
                yield item
        finally:
            self._subscribers.remove(queue)

    # -- the connection loop -----------------------------------------------------------

    async def _run(self) -> None:
        while True:
            try:
                await self._connect_once()
            except asyncio.CancelledError:
                raise
            except ClientError as refused:
                self.error = refused
                log.error("refused: %s", refused)
                for queue in self._subscribers:
                    queue.put_nowait(None)
                for future in self._waiters.values():
                    if not future.done():
                        future.set_exception(refused)
                self._waiters.clear()
                return
            except _Resync as resync:
                self._forget()
                for queue in self._subscribers:
                    queue.put_nowait(Restarted(reason=resync.reason))
                self.backoff.reset()
                continue
            except (OSError, websockets.exceptions.WebSocketException, asyncio.TimeoutError) as exc:
                log.info("connection lost: %r", exc)
            finally:
                self._flush_log()
                self.connected = False
                self.live.clear()
                self._ws = None
            await asyncio.sleep(self.backoff.next())

    async def _connect_once(self) -> None:
        kwargs: dict[str, Any] = {"compression": None, "max_size": 2**24,
                                  "ping_interval": self.ping_interval,
                                  "ping_timeout": self.ping_interval, "open_timeout": 10}
        if self.origin:
            kwargs["origin"] = self.origin
        async with connect(self.url, **kwargs) as raw:
            ws = await _SealedSocket.open(raw, self.token) if self.sealed else raw
            self._sent = set()
            # what this client holds, not the file's shared cursor: events another process
            # received meanwhile are this one's to receive too
            self._hello_after = self.held
            hello = wire.Hello(token="" if self.sealed else self.token, session=self.session,
                               after=self._hello_after,
                               device=self.device, batch=self.batch, create=self.create,
                               last=self._held())
            await ws.send(wire.encode(hello))  # text messages: binary ones are refused
            try:
                await self._receive(ws)
            except websockets.exceptions.ConnectionClosed as closed:
                refused = refusal(closed.rcvd.code, closed.rcvd.reason) if closed.rcvd else None
                if refused is not None:
                    raise refused from closed
                raise

    def _held(self) -> wire.Held | None:
        """The last event held, for the server to compare (docs/protocol.md, Restored
        backup): only one this version can type; else the server is not asked."""
        if not (self.session and self.received):
            return None
        last = self.received[-1]
        return None if isinstance(last.event, dict) else wire.Held(seq=last.seq, event=last.event)

    async def _receive(self, ws: Any) -> None:
        async for message in ws:
            self.messages += 1
            frame = wire.decode_server(message)
            if frame is None:
                log.warning("a frame this client cannot read was dropped")
            elif isinstance(frame, wire.Batch):
                # each inner frame exactly as if it had come alone (never nested), the
                # events of the whole batch kept in one transaction
                self._batching = True
                try:
                    for raw in frame.frames:
                        inner = wire.decode_server(raw)
                        if inner is not None and not isinstance(inner, wire.Batch):
                            await self._on_frame(ws, inner)
                finally:
                    self._batching = False
                if self.live.is_set():
                    self._flush_log()
            else:
                await self._on_frame(ws, frame)

    async def _on_frame(self, ws: Any, frame: wire.Frame) -> None:
        if isinstance(frame, wire.EventReceived):
            raw = msgspec.json.decode(frame.event)
            self._pending_log.append((frame.seq, raw))
            self._take(frame.seq, raw)
            if self.live.is_set() and not self._batching:
                self._flush_log()
        elif isinstance(frame, wire.Welcome):
            if frame.diverged and self._hello_after:
                # docs/protocol.md, Restored backup: this server's history is not the one
                # held here; the log goes, the outbox stays and is decided after live
                self.diverged += 1
                raise _Resync(RESTORED)
            self.viewer = frame.viewer
            self.head = frame.head
            if not self.session and frame.session:
                self.session = frame.session
            if self.session:
                self.outbox.set_meta("session", self.session)
            self.outbox.set_meta("viewer", msgspec.json.encode(self.viewer).decode())
            self.connected = True
            self.connections += 1
            self.backoff.reset()
        elif isinstance(frame, wire.Live):
            if frame.head < self._hello_after:
                raise _Resync(BEHIND)  # docs/protocol.md: another database, resync from 0
            self.head = frame.head
            self._flush_log()
            self._ws = ws
            self.live.set()
            for entry in self.outbox.queued(self.session):
                await self._send_entry(ws, entry)
        elif isinstance(frame, wire.Ack):
            self._settle(frame.id, tuple(frame.seqs), None, None)
        elif isinstance(frame, wire.Reject):
            if frame.code in RETRY_CODES:  # nothing was written: send it again later
                self._retry_later(ws, frame.id)
                return
            self._settle(frame.id, (), frame.code, frame.message)
        elif isinstance(frame, wire.Error):
            if not self.connected and frame.code in FATAL_CODES:
                raise ClientError(frame.code, frame.message)
            if frame.id and frame.code not in RETRY_CODES:
                # a command frame the server could not read: it will never be accepted
                self._settle(frame.id, (), frame.code, frame.message)
            elif frame.id:
                self._retry_later(ws, frame.id)
            log.warning("server error %s: %s", frame.code, frame.message)

    async def _send_entry(self, ws: Any, entry: Entry) -> None:
        if entry.id in self._sent or entry.status != "queued":
            return
        self._sent.add(entry.id)
        try:
            command = wire.command_of(entry.command)
        except ValueError as exc:  # queued by another version of the client: never sendable
            self._settle(entry.id, (), "invalid", str(exc))
            return
        frame = wire.CommandFrame(id=entry.id, command=command, entropy=entry.entropy or "")
        with contextlib.suppress(websockets.exceptions.ConnectionClosed):
            await ws.send(wire.encode(frame))
            self.written.add(entry.id)

    def _retry_later(self, ws: Any, command_id: str) -> None:
        self._sent.discard(command_id)

        async def again() -> None:
            await asyncio.sleep(self.backoff.next())
            entry = self.outbox.get(command_id)
            if entry is not None and ws is self._ws:
                await self._send_entry(ws, entry)

        asyncio.ensure_future(again())

    def _settle(self, command_id: str, seqs: tuple[int, ...], code: str | None,
                message: str | None) -> None:
        if code is None:
            self.outbox.acked(command_id, seqs)
        else:
            self.outbox.rejected(command_id, code, message or "")
        future = self._waiters.pop(command_id, None)
        if future is not None and not future.done():
            future.set_result(Result(id=command_id, seqs=seqs, code=code, message=message))

    def _take(self, seq: int, raw: dict, *, notify: bool = True) -> None:
        if seq <= (self.received[-1].seq if self.received else 0):
            return  # a resync overlapping what we hold
        event = decode_event(raw)
        item = Delivered(seq=seq, event=event, raw=raw)
        self.received.append(item)
        if self._state is not None:
            if isinstance(event, dict):
                self._state, self.fold_error = None, f"cannot fold {raw.get('type')} at {seq}"
            else:
                try:
                    self._state = msgspec.structs.replace(game.evolve(self._state, event), head=seq)
                except Exception as exc:  # a redacted event a player's fold cannot take
                    self._state, self.fold_error = None, f"{type(exc).__name__} at {seq}: {exc}"
        if notify:
            for queue in self._subscribers:
                queue.put_nowait(item)

    def _forget(self) -> None:
        self._pending_log = []
        self.outbox.forget_log(self.session)
        self.received = []
        self._state, self.fold_error = game.initial(), None

    def _flush_log(self) -> None:
        if self._pending_log and self.session:
            self.outbox.record(self.session, self._pending_log)
        self._pending_log = []


class _SealedSocket:
    """A websocket seen through the channel (events/channel.py): ``send`` seals, iterating
    opens; the rest is the socket's own."""

    def __init__(self, ws: Any, keyed: channel.Channel):
        self._ws = ws
        self._channel = keyed

    @classmethod
    async def open(cls, ws: Any, token: str) -> _SealedSocket:
        key_id, nonce = channel.key_id_of_token(token), channel.new_nonce()
        await ws.send(wire.encode(channel.Open(id=key_id, nonce=nonce)))
        answer = wire.decode_server(await ws.recv())
        if isinstance(answer, wire.Error):
            raise ClientError(answer.code, answer.message)
        if not isinstance(answer, channel.Opened):
            raise ClientError("channel", "the server did not open the channel")
        return cls(ws, channel.client_side(channel.psk_of_token(token), key_id, nonce, answer.nonce))

    async def send(self, text: str) -> None:
        await self._ws.send(self._channel.seal(text))

    def __aiter__(self) -> _SealedSocket:
        return self

    async def __anext__(self) -> str:
        try:
            message = await self._ws.recv()
        except websockets.exceptions.ConnectionClosedOK:
            raise StopAsyncIteration from None
        try:
            return self._channel.open(message)
        except channel.ChannelError:
            # not the server that holds this token's digest: drop it and reconnect
            await self._ws.close(4000, "channel broken")
            raise OSError("a message the channel does not open") from None

    def __getattr__(self, name: str) -> Any:
        return getattr(self._ws, name)


def _result(entry: Entry) -> Result:
    return Result(id=entry.id, seqs=entry.seqs, code=entry.code, message=entry.message)
