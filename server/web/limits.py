"""The request body limit, as an ASGI layer in front of Litestar.

Litestar's own ``request_max_body_size`` answers an announced oversized body before
reading a byte, so its 413 cannot say which field ran long, and a client still sending
megabytes sees its connection reset instead of the answer. Here a body is read up to the
limit (the head names the field, ``wire.too_large``), the rest is read and dropped up to
``DRAIN`` bytes so the client gets the answer, and a body within the limit is handed to
the app as it came. The answer depends on the body's size and first bytes alone: it is
given before any token is looked at, so it says nothing about any session.
"""

from __future__ import annotations

from typing import Any, Awaitable, Callable

import msgspec

from conteur.events import wire

MAX_BODY = 64 * 1024  # the protocol's frame limit, for HTTP bodies too (docs/protocol.md, "Bounds")
DRAIN = 16 << 20  # past this, the connection is dropped rather than read to its end

Scope = dict[str, Any]
Receive = Callable[[], Awaitable[dict]]
Send = Callable[[dict], Awaitable[None]]


def body_limit(limit: int = MAX_BODY) -> Callable:
    """The middleware factory Litestar takes (``middleware=[body_limit()]``)."""

    inner, outer = limit, limit * 4 // 3 + 4096

    def middleware(app: Callable) -> Callable:
        async def limited(scope: Scope, receive: Receive, send: Send) -> None:
            if scope["type"] != "http" or scope.get("method") not in ("POST", "PUT", "PATCH"):
                await app(scope, receive, send)
                return
            # a sealed request (server/web/sealed.py) is base64 of a padded body: the body
            # it carries meets the limit when the app answers it
            limit = outer if scope.get("path") == "/sealed" else inner
            events: list[dict] = []
            size, head = 0, bytearray()
            while True:
                event = await receive()
                if event["type"] != "http.request":  # gone before the end of its body
                    events.append(event)
                    break
                chunk = event.get("body", b"")
                size += len(chunk)
                if len(head) <= limit:
                    head += chunk[:limit + 1 - len(head)]
                if size <= limit:
                    events.append(event)
                if not event.get("more_body", False) or size > DRAIN:
                    break
            if size > limit:
                announced = _content_length(scope)
                body = msgspec.json.encode({"status_code": 413, "detail": "request body of "
                                            + wire.too_large(max(size, announced), limit, bytes(head))})
                await send({"type": "http.response.start", "status": 413, "headers": [
                    (b"content-type", b"application/json"), (b"content-length", str(len(body)).encode()),
                    (b"connection", b"close")]})
                await send({"type": "http.response.body", "body": body})
                return
            queued = iter(events)

            async def replay() -> dict:
                for event in queued:
                    return event
                return await receive()

            await app(scope, replay, send)

        return limited

    return middleware


def _content_length(scope: Scope) -> int:
    for name, value in scope.get("headers", ()):
        if name == b"content-length":
            try:
                return int(value)
            except ValueError:
                return 0
    return 0
