"""HTTP through the venue channel: what the web app asks over plain HTTP, sealed.

``POST /channel`` opens a channel for HTTP exactly as ``open`` does on the websocket
(events/channel.py): the token's id and the device's nonce in, the server's nonce and
the channel's name out. Then each ``POST /sealed`` carries one request (method, path,
headers, body), sealed with the device-to-server key under a counter the device picks
and never reuses; the answer (status, headers, body) comes back sealed with the
server-to-device key under the same counter. The request is answered by this very app,
as if it had come in the clear, with the channel's grant in place of an ``Authorization``
header: every route, its checks and its limits stay the one implementation.

A counter is accepted once: a captured request replayed is refused (401), and one from
another channel does not open. Requests may arrive out of order (a page fetches several
at once), so the server keeps the counters seen above a floor that rises with them.
The channels live in memory: after a restart, the device opens another.
"""

from __future__ import annotations

import asyncio
import base64
import binascii
import logging
import os
import time
from collections import OrderedDict
from typing import Annotated, Any
from urllib.parse import unquote

import msgspec
from cryptography.exceptions import InvalidTag
from cryptography.hazmat.primitives.ciphers.aead import ChaCha20Poly1305
from litestar import Request, post
from litestar.exceptions import NotAuthorizedException, TooManyRequestsException, ValidationException
from litestar.params import JSONBody
from msgspec import Meta

from conteur.events import channel
from conteur.server.core.auth import Grant
from conteur.server.web.http_common import GRANT_SCOPE_KEY, runtime, too_many

# what each sealed request asked for, at DEBUG: the operator's (and a test's) view of
# the routes the channel carries, which the access log shows only as POST /sealed
log = logging.getLogger("conteur.web.sealed")

__all__ = ["open_http_channel", "sealed_request", "GRANT_SCOPE_KEY"]

MAX_CHANNELS = 4096
CHANNEL_LIFETIME = 24 * 3600.0
WINDOW = 256  # counters remembered above the floor

_NONCE = channel._NONCE


class HttpOpen(msgspec.Struct, frozen=True, kw_only=True):
    """``open``'s fields (events/channel.py), as a request body."""

    id: Annotated[str, Meta(min_length=1, max_length=64, pattern="^[0-9a-f]+$")]
    nonce: Annotated[str, Meta(min_length=43, max_length=43, pattern="^[A-Za-z0-9_-]+$")]


class HttpOpened(msgspec.Struct, frozen=True, kw_only=True):
    nonce: str
    channel: str  # names the channel in each sealed request


class SealedBody(msgspec.Struct, frozen=True, kw_only=True):
    channel: Annotated[str, Meta(min_length=1, max_length=64)]
    n: Annotated[int, Meta(ge=0, le=2**53)]
    box: Annotated[str, Meta(min_length=24, pattern="^[A-Za-z0-9+/]+={0,2}$")]


class SealedAnswer(msgspec.Struct, frozen=True, kw_only=True):
    box: str


class _Inner(msgspec.Struct, frozen=True, kw_only=True):
    method: Annotated[str, Meta(pattern="^(GET|POST|DELETE|PUT|PATCH)$")]
    path: Annotated[str, Meta(min_length=1, max_length=2048)]
    headers: dict[str, str] = {}
    body: str = ""


class _HttpChannel:
    __slots__ = ("key_id", "psk", "up", "down", "floor", "seen", "made")

    def __init__(self, key_id: str, psk: bytes, up: bytes, down: bytes):
        self.key_id = key_id
        self.psk = psk
        self.up = ChaCha20Poly1305(up)
        self.down = ChaCha20Poly1305(down)
        self.floor = -1
        self.seen: set[int] = set()
        self.made = time.monotonic()

    def fresh(self, n: int) -> bool:
        if n <= self.floor or n in self.seen:
            return False
        self.seen.add(n)
        while len(self.seen) > WINDOW:
            lowest = min(self.seen)
            self.seen.discard(lowest)
            self.floor = lowest
        return True


def _channels(request: Request) -> OrderedDict:
    state = request.app.state
    found = state.get("http_channels")
    if found is None:
        found = OrderedDict()
        state["http_channels"] = found
    return found


def _address(request: Request) -> str:
    return request.client.host if request.client else ""


@post("/channel", tags=["server"], status_code=200, raises=[TooManyRequestsException],
      summary="Open the venue channel for HTTP: the token's id and a nonce, never the token")
async def open_http_channel(request: Request, data: JSONBody[HttpOpen]) -> HttpOpened:
    """docs/protocol.md, "The channel": an id no live token has gets the same answer,
    with a key nobody holds, so the answer says nothing of which ids exist."""
    rt = runtime(request)
    wait = rt.limits.refused(_address(request))
    if wait:
        raise too_many(wait, "too many unknown tokens from this address")
    found = await rt.chronicle.work.run(rt.tokens.by_id, data.id)  # off the loop: a stalled store
    psk = found[0] if found is not None else os.urandom(32)
    nonce = channel.new_nonce()
    try:
        up, down = channel.derive(psk, data.id, data.nonce, nonce)
    except channel.ChannelError as exc:
        raise ValidationException(str(exc)) from None
    name = base64.urlsafe_b64encode(os.urandom(18)).decode()
    channels = _channels(request)
    channels[name] = _HttpChannel(data.id, psk, up, down)
    now = time.monotonic()
    while channels and (len(channels) > MAX_CHANNELS
                        or now - next(iter(channels.values())).made > CHANNEL_LIFETIME):
        channels.popitem(last=False)
    return HttpOpened(nonce=nonce, channel=name)


def _refused(request: Request, message: str) -> NotAuthorizedException:
    runtime(request).limits.failed(_address(request))
    return NotAuthorizedException(message)


@post("/sealed", tags=["server"], status_code=200, raises=[NotAuthorizedException],
      summary="One request of the web app, sealed in its HTTP channel; its answer sealed back")
async def sealed_request(request: Request, data: JSONBody[SealedBody]) -> SealedAnswer:
    rt = runtime(request)
    keyed = _channels(request).get(data.channel)
    if keyed is None:
        raise NotAuthorizedException("unknown channel: open another (POST /channel)")
    try:
        plain = keyed.up.decrypt(_NONCE.pack(data.n), base64.b64decode(data.box, validate=True), None)
    except (InvalidTag, binascii.Error, ValueError):
        raise _refused(request, "a request not sealed with this channel's key") from None
    if not keyed.fresh(data.n):
        raise _refused(request, "this request's counter was used already: a replay")
    # read at each request, as a bearer token is: a revoked token's channel stops at once
    found = await rt.chronicle.work.run(rt.tokens.by_id, keyed.key_id)
    if found is None or found[0] != keyed.psk:
        raise _refused(request, "unknown or revoked token")
    try:
        inner = msgspec.json.decode(plain, type=_Inner)
    except msgspec.DecodeError as exc:
        raise ValidationException(f"sealed request: {exc}") from None
    if not inner.path.startswith("/") or inner.path.split("?")[0] in ("/channel", "/sealed", "/ws"):
        raise ValidationException("a sealed request's path is one of the API's, not /channel, /sealed or /ws")
    log.debug("sealed %s %s", inner.method, inner.path)
    status, headers, body = await _answer(request, inner, found[1])
    answer = msgspec.json.encode({"status": status, "headers": headers,
                                  "body": base64.b64encode(body).decode("ascii")})
    short = -len(answer) % channel.PAD
    box = keyed.down.encrypt(_NONCE.pack(data.n), answer + b" " * short, None)
    return SealedAnswer(box=base64.b64encode(box).decode("ascii"))


_KEPT = ("content-type", "content-disposition", "retry-after", "allow", "location")


async def _answer(request: Request, inner: _Inner, grant: Grant) -> tuple[int, dict[str, str], bytes]:
    """The app's own answer to ``inner``, as an ASGI call to the app itself."""
    raw, _, query = inner.path.partition("?")
    path = unquote(raw)  # ASGI's path is decoded, its raw_path as sent (o1.anna%2Bbruno)
    body = inner.body.encode("utf-8")
    headers = [(k.lower().encode("latin-1"), v.encode("latin-1")) for k, v in inner.headers.items()
               if k.lower() not in ("authorization", "host", "content-length", "accept-encoding")]
    headers += [(b"host", (request.headers.get("host") or "localhost").encode("latin-1")),
                (b"content-length", str(len(body)).encode())]
    outer: dict[str, Any] = request.scope
    scope = {
        "type": "http", "asgi": outer.get("asgi", {"version": "3.0"}), "http_version": "1.1",
        "method": inner.method, "scheme": outer.get("scheme", "http"), "path": path,
        "raw_path": raw.encode("utf-8"), "query_string": query.encode("utf-8"), "root_path": "",
        "headers": headers, "client": outer.get("client"), "server": outer.get("server"),
        "state": {}, GRANT_SCOPE_KEY: grant,
    }
    sent = False
    answered = asyncio.Event()

    async def receive() -> dict:
        nonlocal sent
        if sent:
            # a streamed answer listens for the client's going away: it has not gone
            await answered.wait()
            return {"type": "http.disconnect"}
        sent = True
        return {"type": "http.request", "body": body, "more_body": False}

    status, kept, chunks = 500, {}, []

    async def send(message: dict) -> None:
        nonlocal status
        if message["type"] == "http.response.start":
            status = message["status"]
            for name, value in message.get("headers", ()):
                key = name.decode("latin-1").lower()
                if key in _KEPT:
                    kept[key] = value.decode("latin-1")
        elif message["type"] == "http.response.body":
            chunks.append(message.get("body", b""))
            if not message.get("more_body", False):
                answered.set()  # as a server does: once answered, the request is over

    try:
        await request.app(scope, receive, send)
    finally:
        answered.set()
    return status, kept, b"".join(chunks)

