"""The websocket endpoint: handshake checks, hello, resync, commands (docs/protocol.md).

One task reads frames; a sender task per socket writes whatever the hub and the command
path queue for it. Until ``live``, frames from the device are not read (TCP holds them),
so a device's outbox flush always lands after it has caught up.
"""

from __future__ import annotations

import asyncio
import math
import logging
import os
import time
from typing import TYPE_CHECKING, Callable
from urllib.parse import urlsplit

import msgspec
from litestar import WebSocket, websocket
from litestar.exceptions import WebSocketDisconnect

from conteur.events import channel, views
from conteur.events import wire
from conteur.server.core import venue
from conteur.server.core.hub import YIELD_EVERY, Connection
from conteur.server.core.offload import Unavailable
from conteur.server.store.interface import StoreError

if TYPE_CHECKING:
    from conteur.server.web.app import Runtime

log = logging.getLogger("conteur.ws")

CLOSE_UNAUTHORIZED = 4401
# the same code mid-session: the token was revoked (a reprinted join sheet); clients
# must not reconnect, and tell the user why
REASON_REVOKED = "token revoked"
# the same code when the device's join link was opened on another device, which now
# holds the character: clients do not reconnect, and say so
REASON_REPLACED = "replaced by another device"
CLOSE_FORBIDDEN_ORIGIN = 4403
CLOSE_TOO_SLOW = 4408  # the send queue overflowed: reconnect and resync
CLOSE_RATE_LIMITED = 4429  # too many sockets on one token, or bad tokens from one address
# the store did not answer a hello's reads in time (the database stalled or down): the
# device reconnects after its backoff, as for 1012 (the websocket code "try again later")
CLOSE_UNAVAILABLE = 1013


def origin_allowed(origin: str | None, host: str | None, allowed: tuple[str, ...]) -> bool:
    """Same host as the server, or listed; no Origin at all is a non-browser client.

    Browsers always send Origin on a websocket handshake, so a page from another site
    (which could ride on a player's network position) is refused here: Litestar's CORS
    does not cover websockets.
    """
    if origin is None:
        return True
    if origin in allowed or "*" in allowed:
        return True
    parts = urlsplit(origin)
    if parts.scheme not in ("http", "https") or not parts.netloc:
        return False
    return host is not None and parts.netloc.lower() == host.lower()


class RateLimit:
    """A token bucket: ``burst`` frames at once (an outbox flush), ``rate`` per second."""

    def __init__(self, rate: float, burst: int):
        self.rate = rate
        self.burst = burst
        self.tokens = float(burst)
        self.stamp = time.monotonic()

    def allow(self) -> bool:
        now = time.monotonic()
        self.tokens = min(self.burst, self.tokens + (now - self.stamp) * self.rate)
        self.stamp = now
        if self.tokens >= 1:
            self.tokens -= 1
            return True
        return False


class TooLarge(int):
    """A sealed message too large to be opened at all: its size."""


class Socket:
    """One websocket, from handshake to close.

    A device that begins with ``open`` gets the channel (events/channel.py): from then on
    ``receive`` opens and ``send_now`` seals every message, and the hello is authenticated
    by the key it was sealed with, never by a token it carries. A hello in the clear still
    names its token (a script on loopback, a device behind ``--tls``)."""

    def __init__(self, socket: WebSocket, runtime: Runtime):
        self.socket = socket
        self.rt = runtime
        self.settings = runtime.settings
        self.limit = RateLimit(self.settings.rate, self.settings.burst)
        self.conn: Connection | None = None
        self.device = ""
        self.closing = False
        self.counted = ""  # the grant whose socket count this socket holds
        self.credential = ""  # what this socket's hello turned its join link into
        # the frames dropped for the rate: a device that goes on past a second burst of
        # them (twice the rate, sustained) is flooding, and is closed
        self.drops = RateLimit(self.settings.rate, self.settings.burst)
        self.channel: channel.Channel | None = None
        self.channel_grant = None  # the grant whose key the channel was derived from
        self.channel_key = ""  # that token's digest
        self.channel_revoked = False  # the channel is keyed by a revoked token's digest
        # one message sealed, then sent, at a time: the device opens them in counter order
        self.sending = asyncio.Lock()

    def address(self) -> str:
        client = self.socket.scope.get("client")
        return client[0] if client else ""

    async def send_now(self, frame: wire.Frame | str) -> None:
        text = frame if isinstance(frame, str) else wire.encode(frame)
        if self.channel is None:
            await self.socket.send({"type": "websocket.send", "text": text})
            return
        async with self.sending:
            await self.socket.send({"type": "websocket.send", "text": self.channel.seal(text)})

    def send_later(self, frame: wire.Frame) -> None:
        if self.conn is not None:
            self.conn.push(wire.encode(frame))

    async def send(self, frame: wire.Frame) -> None:
        if self.conn is not None and not self.conn.syncing:
            self.send_later(frame)
        else:
            await self.send_now(frame)

    async def close(self, code: int, reason: str) -> None:
        if self.closing:
            return
        self.closing = True
        try:
            await self.socket.send({"type": "websocket.close", "code": code, "reason": reason})
        except Exception:  # already gone
            pass

    async def receive(self) -> str | bytes | None:
        message = await self.socket.receive()
        if message["type"] == "websocket.disconnect":
            return None
        text = message.get("text")
        data = text if text is not None else message.get("bytes") or b""
        if self.channel is None:
            return data
        if len(data) > self.settings.max_frame * 4 // 3 + 2 * channel.PAD:
            self.channel.skip()  # what it held was larger than any frame may be
            return TooLarge(len(data) * 3 // 4)
        try:
            return self.channel.open(data)
        except channel.ChannelError:
            # another key (a guessed or revoked token's id), a replay, a forgery
            if self.channel_grant is None or self.conn is None:
                self.rt.limits.failed(self.address())
            await self.close(CLOSE_UNAUTHORIZED, "unauthorized")
            return None

    def check(self, data: str | bytes) -> wire.Error | None:
        """Size and rate, before any decoding."""
        if isinstance(data, TooLarge):
            return wire.Error(code="too_large", message=f"sealed frame of about {int(data)} bytes; "
                              f"the limit is {self.settings.max_frame} bytes")
        size = len(data)
        if isinstance(data, str) and size * 4 > self.settings.max_frame:
            size = len(data.encode("utf-8"))  # only when the characters could be too many bytes
        if size > self.settings.max_frame:
            return wire.Error(code="too_large", message="frame of " + wire.too_large(
                size, self.settings.max_frame, data[:self.settings.max_frame]))
        if not self.limit.allow():
            return wire.Error(code="rate_limited",
                              message=f"more than {self.settings.rate:g} frames per second; "
                              "this frame was dropped, slow down and resend")
        return None

    async def next_frame(self) -> wire.Frame | None:
        """The next valid frame; errors are answered here and the connection stays open."""
        while True:
            data = await self.receive()
            if data is None:
                return None
            problem = self.check(data)
            if problem is not None and problem.code == "rate_limited":
                if not self.drops.allow():
                    # still sending after a whole burst was dropped: a flood, not an outbox;
                    # answering each frame would cost the other phones their acks
                    await self.send_now(wire.Error(code="rate_limited", message=(
                        f"more than {self.settings.rate:g} frames per second, long after being told: closed")))
                    await self.close(CLOSE_RATE_LIMITED, "flooding")
                    return None
                # name the dropped command, so the device's outbox knows what to resend
                problem = msgspec.structs.replace(problem, id=wire.frame_id(data))
            elif problem is not None and problem.code == "too_large" and not isinstance(data, TooLarge):
                problem = msgspec.structs.replace(problem, id=wire.head_id(data[:self.settings.max_frame]))
            if problem is None and isinstance(data, bytes):
                # the protocol is text messages (a browser sends nothing else): refused
                # rather than guessed at, so no client comes to rely on binary frames
                problem = wire.Error(code="malformed", message="a frame is one JSON object in a "
                                     "text message; binary messages are refused")
            elif problem is None:
                try:
                    return wire.decode(data)
                except wire.FrameError as exc:
                    problem = wire.Error(code=exc.code, message=exc.message, id=wire.frame_id(data))
            await self.send(problem)

    # -- phases ------------------------------------------------------------------------

    async def run(self) -> None:
        headers = self.socket.headers
        if not origin_allowed(headers.get("origin"), headers.get("host"), self.settings.origins):
            log.warning("websocket refused: Origin %r", headers.get("origin"))
            await self.socket.close(code=CLOSE_FORBIDDEN_ORIGIN, reason="origin not allowed")
            return
        await self.socket.accept()
        try:
            hello = await self.hello()
            if hello is None:
                return
            await self.resync(hello)
            await self.serve()
        except (OSError, WebSocketDisconnect):  # the device went away mid-send: it will resync
            pass
        except StoreError as exc:  # what hello or resync read did not come in time
            self.rt.outage.failed(str(exc))
            retry = exc.retry_after if isinstance(exc, Unavailable) else 2.0
            await self.send_now(wire.Error(code="unavailable", message=(
                f"the server cannot reach its database, reconnect in {retry:g} s: {exc}")))
            await self.close(CLOSE_UNAVAILABLE, "database unavailable")
        finally:
            if self.counted:
                self.rt.limits.close_socket(self.counted)
            if self.conn is not None:
                self.rt.hub.unsubscribe(self.conn)
                self.conn.stop()

    async def hello(self) -> wire.Hello | None:
        while True:
            try:
                frame = await asyncio.wait_for(self.next_frame(), self.settings.hello_timeout)
            except asyncio.TimeoutError:
                await self.send_now(wire.Error(code="timeout", message="no hello in time"))
                await self.close(1008, "no hello")
                return None
            if frame is None:
                return None
            if isinstance(frame, wire.Ping):
                await self.send_now(wire.Pong(now=time.time()))
            elif isinstance(frame, channel.Open):
                if not await self.open_channel(frame):
                    return None
            elif isinstance(frame, channel.Sealed):
                await self.send_now(wire.Error(code="hello_first", message="a sealed frame "
                                               "before open: send open first, or hello in the clear"))
            elif isinstance(frame, wire.Hello) and self.channel is None and not frame.token:
                await self.send_now(wire.Error(code="invalid", message=(
                    "a hello in the clear names its token: \"token\" is required, "
                    "or open the channel first (docs/protocol.md, The channel)")))
            elif isinstance(frame, wire.Hello):
                address = self.address()
                wait = self.rt.limits.refused(address)
                if wait:
                    await self.send_now(wire.Error(code="rate_limited", message=(
                        f"too many unknown tokens from this address: retry in {math.ceil(wait)} s")))
                    await self.close(CLOSE_RATE_LIMITED, "too many bad tokens")
                    return None
                # inside the channel the key was the proof; a token in it is not looked at
                run = self.rt.chronicle.work.run
                grant = self.channel_grant if self.channel is not None else await run(self.rt.tokens.check, frame.token)
                if grant is None and self.channel_revoked:
                    await self.send_now(wire.Error(code="unauthorized", message="this token was revoked"))
                    await self.close(CLOSE_UNAUTHORIZED, REASON_REVOKED)
                    return None
                if grant is None:
                    self.rt.limits.failed(address)
                    await self.send_now(wire.Error(code="unauthorized", message="unknown or revoked token"))
                    await self.close(CLOSE_UNAUTHORIZED, "unauthorized")
                    return None
                session = frame.session or grant.session or ""
                if not session:
                    await self.send_now(wire.Error(
                        code="unknown_session", message="this token is for every session: name one"))
                    await self.close(CLOSE_UNAUTHORIZED, "no session")
                    return None
                if not grant.allows(session):
                    await self.send_now(wire.Error(
                        code="forbidden", message=f"this token is for session {grant.session!r}"))
                    await self.close(CLOSE_UNAUTHORIZED, "wrong session")
                    return None
                if (grant.role == "storyteller" and not frame.create
                        and await run(self.rt.store.session_head, session) == 0):
                    await self.send_now(wire.Error(
                        code="unknown_session",
                        message=f"no session {session!r} here: check its name, or say "
                                "\"create\": true in hello to open it from this connection"))
                    await self.close(CLOSE_UNAUTHORIZED, "unknown session")
                    return None
                if not self.rt.limits.open_socket(grant.id):
                    await self.send_now(wire.Error(code="rate_limited", message=(
                        f"this token holds {self.settings.sockets_per_token} sockets already: "
                        "close one, or retry later")))
                    await self.close(CLOSE_RATE_LIMITED, "too many sockets")
                    return None
                credential = ""
                if (self.channel is not None and frame.keep and grant.role == "player"
                        and not grant.device):
                    # the link is spent on this device: it keeps its own credential, and
                    # a device the link opened before is closed, told why
                    self.rt.limits.close_socket(grant.id)
                    credential, grant = await run(self.rt.tokens.spend, self.channel_key, grant)
                    if not self.rt.limits.open_socket(grant.id):  # a fresh grant: never full
                        await self.close(CLOSE_RATE_LIMITED, "too many sockets")
                        return None
                self.credential = credential
                self.counted = grant.id
                self.grant = grant
                # idempotency records are per device; the grant id keeps one token's
                # device names from colliding with (or replaying) another's
                self.device = f"{grant.id}:{frame.device}"
                return msgspec.structs.replace(frame, session=session)
            else:
                await self.send_now(wire.Error(code="hello_first", message="send hello first",
                                               id=getattr(frame, "id", None)))

    async def open_channel(self, frame: channel.Open) -> bool:
        """Answers ``open`` with the server's nonce and keys the channel. An id no live
        token has gets the same answer, with a key nobody holds: its hello will not open,
        and the device learns nothing from ``opened`` about which ids exist."""
        if self.channel is not None:
            await self.send_now(wire.Error(code="already_open", message="the channel is open already"))
            return True
        address = self.address()
        wait = self.rt.limits.refused(address)
        if wait:
            await self.send_now(wire.Error(code="rate_limited", message=(
                f"too many unknown tokens from this address: retry in {math.ceil(wait)} s")))
            await self.close(CLOSE_RATE_LIMITED, "too many bad tokens")
            return False
        found = await self.rt.chronicle.work.run(self.rt.tokens.by_id, frame.id)  # off the loop: a stalled store
        psk, self.channel_grant = found if found is not None else (os.urandom(32), None)
        if found is None and (revoked := await self.rt.chronicle.work.run(
                self.rt.tokens.revoked_key, frame.id)) is not None:
            # a revoked token's holder is told so, sealed (its device then forgets it):
            # a device whose credential is merely unknown (a restored backup) may go back
            # to its link, one whose credential was revoked must not
            psk, self.channel_revoked = revoked, True
        self.channel_key = psk.hex()
        nonce = channel.new_nonce()
        try:
            keyed = channel.server_side(psk, frame.id, frame.nonce, nonce)
        except channel.ChannelError as exc:
            await self.send_now(wire.Error(code="invalid", message=str(exc)))
            await self.close(1008, "bad open")
            return False
        await self.send_now(channel.Opened(nonce=nonce))
        self.channel = keyed
        return True

    async def resync(self, hello: wire.Hello) -> None:
        actor = self.grant.actor
        hub = self.rt.hub

        def closer(code: int, reason: str) -> Callable[[Connection], None]:
            return lambda _conn: asyncio.get_running_loop().create_task(self.close(code, reason))

        tokens = self.rt.tokens

        def revoked(_conn: Connection) -> None:
            reason = REASON_REPLACED if self.grant.id in tokens.replaced else REASON_REVOKED
            asyncio.get_running_loop().create_task(self.close(CLOSE_UNAUTHORIZED, reason))

        conn = Connection(self.send_now, actor, hello.session,
                          max_queue=self.settings.send_queue,
                          on_overflow=closer(CLOSE_TOO_SLOW, "too slow: reconnect to resync"),
                          batching=hello.batch, grant=self.grant.id, on_revoked=revoked,
                          bound=self.grant.session)
        run = self.rt.chronicle.work.run
        # read before subscribing, off the loop: the session's head, and the event at the
        # device's last seq (committed, so it cannot change meanwhile)
        await hub.warm(hello.session, run)
        stored = await run(hub.event_at, hello.session, hello.last.seq) if hello.last is not None else None
        self.conn = conn
        head = hub.subscribe(conn)  # same loop step as reading head: no loss, no duplicate
        viewer = wire.Viewer(role=actor.role, character=actor.character, name=actor.name,
                             session=hello.session)
        await self.send_now(wire.Welcome(viewer=viewer, session=hello.session, head=head,
                                         diverged=self.diverged(hello, head, stored),
                                         credential=self.credential, server=self.rt.name))
        history = await hub.history(hello.session, hello.after, head, run=run)
        frames = [f for f in (views.pick(forms, actor) for _seq, forms in history) if f is not None]
        for n, frame in enumerate(wire.batches(frames) if hello.batch else frames, 1):
            await self.send_now(frame)
            if conn.closed:
                return
            if n % YIELD_EVERY == 0:
                # a send to a writable socket never suspends: let the loop serve the
                # other devices (and notice this one's disconnection) during a long resync
                await asyncio.sleep(0)
        conn.start()
        conn.go_live(head)
        self.rt.safety.greet(conn)  # a safety call waiting in another session

    def diverged(self, hello: wire.Hello, head: int, stored) -> bool:
        """Whether the device holds a history this server does not: events above its head,
        or a last event that is not (in this viewer's form) the one stored at that seq. Both
        happen after the server restored an older backup and play went on. Compared in the
        viewer's own form, so a guessed ``last`` learns nothing the viewer may not see."""
        if hello.after > head:
            return True
        if hello.last is None:
            return False
        return stored is None or views.view(stored, self.grant.actor) != hello.last.event

    async def serve(self) -> None:
        while not self.closing and self.conn is not None and not self.conn.closed:
            frame = await self.next_frame()
            if frame is None or self.conn is None or self.conn.closed:
                return
            if isinstance(frame, wire.Ping):
                self.send_later(wire.Pong(now=time.time()))
            elif isinstance(frame, wire.CommandFrame):
                # started in arrival order; each decides before its first await, so a
                # device's commands are decided in the order it sent them
                asyncio.get_running_loop().create_task(self.command(frame))
            else:
                self.send_later(wire.Error(code="already_hello", message="hello was already accepted"))

    async def command(self, frame: wire.CommandFrame) -> None:
        wait = self.rt.limits.command(self.grant.id)  # the token's budget, shared with its other sockets and HTTP
        if wait:
            self.send_later(wire.Error(code="rate_limited", id=frame.id, message=(
                f"more than {self.settings.rate:g} commands per second from this token; "
                f"this one was dropped: resend it in {wait:.1f} s")))
            return
        try:
            executed = await venue.execute(
                self.rt.chronicle, self.conn.session, frame.command, self.grant.actor, device=self.device,
                command_id=frame.id, entropy=frame.entropy,
            )
        except StoreError as exc:  # nothing was written here: the device retries with the same id
            self.rt.outage.failed(str(exc))
            retry = exc.retry_after if isinstance(exc, Unavailable) else self.rt.chronicle.work.retry_after
            self.send_later(wire.Reject(id=frame.id, code="unavailable", retry_after=retry,
                                        message=f"the server could not record it, retry in {retry:g} s: {exc}"))
            return
        except Exception as exc:  # noqa: BLE001 - a bug: its traceback, and the device may retry
            log.exception("command %s failed", frame.id)
            self.send_later(wire.Reject(id=frame.id, code="unavailable",
                                        message=f"the server could not record it, retry: {exc}"))
            return
        self.rt.outage.succeeded()
        outcome = executed.outcome
        if outcome.seqs and not await self.rt.hub.reached(max(outcome.seqs), self.rt.chronicle.work.deadline):
            log.warning("the events of command %s were not dispatched within %g s: acked anyway",
                        frame.id, self.rt.chronicle.work.deadline)
        if outcome.rejected:
            self.send_later(wire.Reject(id=frame.id, code=outcome.code or "rule",
                                        message=outcome.message or ""))
        else:
            self.send_later(wire.Ack(id=frame.id, seqs=outcome.seqs))


@websocket("/ws")
async def ws_endpoint(socket: WebSocket) -> None:
    await Socket(socket, socket.app.state.conteur).run()
