"""The websocket wire as an AsyncAPI 3 document, made from the server's own msgspec types.

Every frame of ``events/wire.py`` is one message on the one channel ``/ws``: what a device
sends (hello, command, ping), what the server sends (welcome, event, live, ack, reject,
error, pong, batch). Their payloads are the JSON Schemas msgspec makes of the very types
the server decodes and encodes with, so a command, an event or a field added to
``events/`` is described here as soon as it is in the code, with its bounds. Two frames
the server handles as raw JSON are typed here with what they carry: an ``event`` frame's
event is one of ``game.AnyEvent`` (in the viewer's form), a ``batch`` holds other server
frames. Served at ``/schema/asyncapi.json`` (docs/protocol.md); the tests validate every
frame a night's devices send and receive against it.

The schemas are AsyncAPI's own schema format (JSON Schema draft 07 and a string
``discriminator``): msgspec's draft 2020-12 ``prefixItems`` (a draw record, an array)
becomes draft 07's array of ``items``, and its OpenAPI-style discriminator object the
property's name.
"""

from __future__ import annotations

import functools
from typing import Any, Union

import msgspec
from litestar import get

from conteur.events import channel, game, wire
from conteur.server.web.http_events import LoggedEvent

CHANNEL = "ws"
REF = "#/components/schemas/{name}"


class BatchOf(wire.Frame, frozen=True, kw_only=True, tag="batch"):
    """Several server frames in one message, in order, for a device that said ``batch``
    in hello; never nested (``wire.Batch``, whose frames are joined already encoded)."""

    frames: list[Union[wire.Welcome, LoggedEvent, wire.Live, wire.Ack, wire.Reject,  # type: ignore[valid-type]
                       wire.Error, wire.Pong, wire.VenueCalls]]


# (tag, type, what it is): the device's frames, then the server's, as docs/protocol.md has them
FROM_DEVICE = (
    ("hello", wire.Hello, "Authenticate and resume: every event of the session after `after` follows."),
    # answered on the same socket (no reply address: AsyncAPI's reply objects are left out)
    ("command", wire.CommandFrame, "One command; answered by `ack` or `reject` (or an `error`) with its `id`."),
    ("ping", wire.Ping, "Answered by `pong` through the socket's queue."),
    ("open", channel.Open, "Opens the channel: the token's id and the device's nonce, never the token."),
    ("sealed", channel.Sealed, "Any frame, padded and sealed with the channel's key (after `opened`)."),
)
FROM_SERVER = (
    ("welcome", wire.Welcome, "The viewer the token is, and the session's head when the resync started."),
    ("event", LoggedEvent, "An event with its seq, in the form this viewer may see."),
    ("live", wire.Live, "The resync is done: what follows is live."),
    ("ack", wire.Ack, "A command recorded: the seqs of its events (which came before it)."),
    ("reject", wire.Reject, "A command refused: its code and a message naming the rule."),
    ("error", wire.Error, "A frame that could not be used (the connection stays open but at hello)."),
    ("pong", wire.Pong, "The answer to `ping`: everything queued before it has arrived."),
    ("venue_calls", wire.VenueCalls, "To storytellers: the safety calls waiting in the venue's other sessions."),
    ("batch", BatchOf, "Several server frames in one message, for a device that said `batch`."),
    ("opened", channel.Opened, "The server's nonce: every later message is `sealed`, both ways."),
    ("sealed", channel.Sealed, "Any frame, padded and sealed with the channel's key (after `opened`)."),
)


def _draft07(node: Any) -> Any:
    """msgspec's schema in AsyncAPI's schema format (see the module's docstring)."""
    if isinstance(node, list):
        return [_draft07(n) for n in node]
    if not isinstance(node, dict):
        return node
    out = {}
    for key, value in node.items():
        if key == "prefixItems":
            out["items"] = _draft07(value)
        elif key == "discriminator" and isinstance(value, dict):
            out["discriminator"] = value["propertyName"]
        elif key in ("properties", "$defs"):  # names, not keywords
            out[key] = {name: _draft07(v) for name, v in value.items()}
        else:
            out[key] = _draft07(value)
    return out


def _operation_id(action: str, tag: str) -> str:
    return f"{action}{tag.title().replace('_', '')}"


@functools.cache
def document() -> dict[str, Any]:
    """The AsyncAPI 3 document of the websocket, from the server's point of view: it
    receives the device's frames and sends its own."""
    frames = FROM_DEVICE + FROM_SERVER
    payloads, schemas = msgspec.json.schema_components([kind for _, kind, _ in frames], ref_template=REF)
    messages = {
        tag: {"name": tag, "title": f"{tag} frame", "summary": summary,
              "contentType": "application/json", "payload": _draft07(payload)}
        for (tag, _, summary), payload in zip(frames, payloads)
    }
    ref = {tag: {"$ref": f"#/channels/{CHANNEL}/messages/{tag}"} for tag in messages}
    operations = {}
    for action, group in (("receive", FROM_DEVICE), ("send", FROM_SERVER)):
        for tag, _, summary in group:
            operations[_operation_id(action, tag)] = {
                "action": action, "channel": {"$ref": f"#/channels/{CHANNEL}"},
                "summary": summary, "messages": [ref[tag]]}
    return {
        "asyncapi": "3.0.0",
        "info": {
            "title": "conteur websocket",
            "version": "0.1.0",
            "description": (
                "The websocket every device speaks (phones, the storyteller's tablet, the Python "
                "client): one JSON object per text message, with a `type`. docs/protocol.md is "
                "the authority on what each frame means, on order, resync, limits and close codes; "
                "this document is what each frame holds, made from the server's own types. When "
                "the venue's channel is encrypted, these are still the frames inside it."),
        },
        "defaultContentType": "application/json",
        "servers": {
            "venue": {"host": "{host}", "protocol": "ws", "pathname": "/ws",
                      "description": "the venue's laptop (`wss` behind `conteur serve --tls`)",
                      "variables": {"host": {"default": "localhost:8000",
                                             "description": "the address `conteur serve` prints"}}},
        },
        "channels": {
            CHANNEL: {"address": "/ws", "title": "a device's socket",
                      "description": "One socket per device; `hello` first, then commands and pings.",
                      "messages": messages},
        },
        "operations": operations,
        "components": {"schemas": {name: _draft07(schema) for name, schema in sorted(schemas.items())}},
    }


@get("/schema/asyncapi.json", tags=["server"], summary="The websocket protocol at /ws, as an AsyncAPI 3 document")
async def asyncapi_document() -> dict[str, Any]:
    return document()
