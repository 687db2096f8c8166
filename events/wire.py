"""The websocket frames (docs/protocol.md is the authority), and their typed codecs.

Every frame is one JSON object in one text message, with a ``type`` field. Client frames
decode through one typed msgspec decoder over the tagged union of frame types, the
command payload decoded as ``game.AnyCommand``: a frame is either a valid typed value or
a precise ``error`` for the sender, never a half-read dict.
"""

from __future__ import annotations

import re
from typing import Annotated, Union

import msgspec
from msgspec import Meta

from conteur.events import game
from conteur.events.model import Event
from conteur.events import nesting
from conteur.events.channel import Open, Opened, Sealed

MAX_SEQ = 2**53  # exact in JSON numbers and SQLite: a larger "after" is nonsense, not a crash
Id = Annotated[str, Meta(min_length=1, max_length=128)]
Name = Annotated[str, Meta(max_length=128)]
# a session id is a file name, a URL segment and a header value (exports): plain ASCII
_SESSION_CHAR = "[A-Za-z0-9_.-]"
SESSION_ID_PATTERN = f"^{_SESSION_CHAR}+$"
SessionName = Annotated[str, Meta(max_length=128, pattern=f"^{_SESSION_CHAR}*$")]  # empty: the token's


class Frame(msgspec.Struct, frozen=True, kw_only=True, tag_field="type", omit_defaults=True):
    pass


# -- client -> server ------------------------------------------------------------------


class Held(msgspec.Struct, frozen=True, kw_only=True):
    """The last event a device holds, as it received it. A backup restored on the server
    may reuse that seq for another event: the server compares, and says ``diverged``."""

    seq: Annotated[int, Meta(ge=1, le=MAX_SEQ)]
    event: game.AnyEvent  # type: ignore[valid-type]


class Hello(Frame, frozen=True, kw_only=True, tag="hello"):
    """Authenticate and resume: every event of ``session`` after seq ``after`` follows.

    Inside the channel (events/channel.py) the channel's key is the proof, and ``token``
    is left out; a hello in the clear (a script on loopback, or behind ``--tls``) names it."""

    token: Annotated[str, Meta(max_length=256)] = ""
    session: SessionName = ""  # empty: the session the token is bound to
    after: Annotated[int, Meta(ge=0, le=MAX_SEQ)] = 0
    device: Name = ""
    batch: bool = False  # the device understands ``batch`` frames (fewer messages)
    last: Held | None = None
    # a storyteller naming a session with no event yet must say it means to open it: a
    # typo in a session name is refused instead of opening an empty session
    create: bool = False
    # the device keeps what its join link turns into (``welcome.credential``): a player's
    # link opened this way makes a credential for this device alone, and a device the
    # same link opened before is closed (docs/protocol.md, Tokens and join links)
    keep: bool = False


class CommandFrame(Frame, frozen=True, kw_only=True, tag="command"):
    """``id`` is the client-made idempotency key (a UUID); ``entropy`` is mixed into draws."""

    id: Id
    command: game.AnyCommand  # type: ignore[valid-type]
    entropy: Annotated[str, Meta(max_length=256)] = ""


class Ping(Frame, frozen=True, kw_only=True, tag="ping"):
    pass


# ``open`` and ``sealed``: the channel's own frames (events/channel.py)
ClientFrame = Union[Hello, CommandFrame, Ping, Open, Sealed]


# -- server -> client ------------------------------------------------------------------


class Viewer(msgspec.Struct, frozen=True, kw_only=True):
    role: str
    character: str | None = None
    name: str = ""
    session: str = ""


class Welcome(Frame, frozen=True, kw_only=True, tag="welcome"):
    viewer: Viewer
    session: str
    head: int  # the session's last seq when resync started; ``live`` repeats it
    diverged: bool = False  # the device's copy is not this server's history: drop it, resync from 0
    # this device's own token, made from the join link its hello opened (``hello.keep``):
    # kept in the link's place, the link forgotten; sent only inside the channel
    credential: str = ""
    server: str = ""  # which server process the socket reached (host:pid), for the operator


class EventFrame(Frame, frozen=True, kw_only=True, tag="event"):
    seq: int
    event: Event


class Live(Frame, frozen=True, kw_only=True, tag="live"):
    head: int


class Ack(Frame, frozen=True, kw_only=True, tag="ack"):
    id: str
    seqs: tuple[int, ...]


class Reject(Frame, frozen=True, kw_only=True, tag="reject"):
    id: str
    code: str
    message: str
    retry_after: float | None = None  # `unavailable`: seconds to wait before resending it


class Error(Frame, frozen=True, kw_only=True, tag="error"):
    code: str
    message: str
    id: str | None = None  # the command frame's id, when it could be read: the outbox drops it


class Pong(Frame, frozen=True, kw_only=True, tag="pong"):
    # the server's clock (epoch seconds): what a phone sets its countdowns by
    now: float | None = None


class WaitingCall(msgspec.Struct, frozen=True, kw_only=True, omit_defaults=True):
    """A safety call waiting in another session. ``call``, ``character``, ``name`` and
    ``text`` only for a storyteller whose token opens that session: one bound to
    another learns where (the session), not who."""

    session: str
    session_name: str = ""
    call: str = ""
    character: str = ""
    name: str = ""
    text: str = ""


class VenueCalls(Frame, frozen=True, kw_only=True, tag="venue_calls"):
    """To storytellers only: the safety calls no storyteller has taken yet in the other
    open sessions of the venue, all of them, sent whenever that list changes (an empty
    one: none left) and after ``live`` when it is not empty. Never logged: it is the
    sessions' state, so it holds across reconnects and restarts."""

    calls: tuple[WaitingCall, ...]


class Batch(Frame, frozen=True, kw_only=True, tag="batch"):
    """Several frames in one message, in order, for a device that said ``batch`` in
    hello: a resync, or a backlog, costs one message per batch instead of one per frame.
    The server joins frames already encoded (``batch``); a client decodes each inner frame
    alone (``decode_server``), so one it does not know is skipped, not the whole batch."""

    frames: list[msgspec.Raw]  # never nested


class EventReceived(Frame, frozen=True, kw_only=True, tag="event"):
    """An ``event`` frame as a client reads it. The event stays the JSON it came as: a
    client keeps it so (its log, hello's ``last``) and folds it typed when its version
    knows the type (``decode_event``), so a newer server's event never fails the frame."""

    seq: Annotated[int, Meta(ge=1, le=MAX_SEQ)]
    event: msgspec.Raw


ServerFrame = Union[Welcome, EventFrame, Live, Ack, Reject, Error, Pong, VenueCalls, Opened, Sealed]

CLIENT_TAGS = ("hello", "command", "ping", "open", "sealed")
SERVER_TAGS = ("welcome", "event", "live", "ack", "reject", "error", "pong", "venue_calls", "batch", "opened",
               "sealed")
BATCH_FRAMES = 256  # frames per batch at most
BATCH_BYTES = 256 * 1024  # and about this many bytes

# -- codecs ----------------------------------------------------------------------------

_encoder = msgspec.json.Encoder()
_client_decoder = msgspec.json.Decoder(ClientFrame)
_server_decoder = msgspec.json.Decoder(Union[Welcome, EventReceived, Live, Ack, Reject, Error, Pong, VenueCalls,
                                             Batch, Opened, Sealed])
_any_decoder = msgspec.json.Decoder()


class FrameError(Exception):
    """A frame that cannot be used; ``code`` and ``message`` go back in an ``error``."""

    def __init__(self, code: str, message: str):
        super().__init__(message)
        self.code = code
        self.message = message


def encode(frame: Frame) -> str:
    """Frames travel as text messages: browsers then get strings, not Blobs."""
    return _encoder.encode(frame).decode()


def encode_event(seq: int, event: Event) -> str:
    return encode(EventFrame(seq=seq, event=event))


def batch(frames: list[str]) -> str:
    """Already-encoded frames as one ``batch`` frame: joined, never re-encoded."""
    return '{"type":"batch","frames":[' + ",".join(frames) + "]}"


def batches(frames: list[str]) -> list[str]:
    """Frames grouped into ``batch`` frames within the size bounds, in order."""
    out, group, size = [], [], 0
    for frame in frames:
        if group and (len(group) >= BATCH_FRAMES or size + len(frame) > BATCH_BYTES):
            out.append(batch(group))
            group, size = [], 0
        group.append(frame)
        size += len(frame)
    if group:
        out.append(batch(group))
    return out


def decode(data: str | bytes) -> Frame:
    if nesting.too_deep(data):  # before any decoding: msgspec recurses
        raise FrameError("invalid", nesting.message())
    try:
        return _client_decoder.decode(data)
    except msgspec.DecodeError as exc:
        raise _explain(data, exc) from None


def _explain(data: str | bytes, exc: msgspec.DecodeError) -> FrameError:
    """Turns a decode failure into the most useful code for the sender."""
    try:
        raw = _any_decoder.decode(data)
    except msgspec.DecodeError:
        return FrameError("malformed", f"a frame is one JSON object: {exc}")
    if not isinstance(raw, dict):
        return FrameError("malformed", "a frame is a JSON object with a \"type\" field")
    kind = raw.get("type")
    if kind not in CLIENT_TAGS:
        return FrameError(
            "unknown_type",
            f"unknown frame type {kind!r}; expected one of {', '.join(CLIENT_TAGS)}",
        )
    if kind == "command":
        command = raw.get("command")
        tag = command.get("type") if isinstance(command, dict) else None
        if isinstance(command, dict) and tag not in game.COMMAND_BY_TAG:
            return FrameError("unknown_command", f"unknown command type {tag!r}")
    return FrameError("invalid", f"invalid {kind} frame: {exc}")


def _text_limits() -> dict[str, int]:
    """Each command field name with the longest text it holds (the frame and body fields
    too): what a refusal of an oversized frame names, read from the types themselves."""
    limits: dict[str, int] = {"entropy": 256, "token": 256, "device": 128, "id": 128}

    def walk(info, name: str, seen: frozenset) -> None:
        if isinstance(info, msgspec.inspect.Metadata):
            walk(info.type, name, seen)
        elif isinstance(info, msgspec.inspect.StrType):
            if info.max_length is not None:
                limits[name] = max(limits.get(name, 0), info.max_length)
        elif isinstance(info, msgspec.inspect.StructType):
            if info.cls not in seen:
                for f in info.fields:
                    walk(f.type, f.encode_name, seen | {info.cls})
        elif isinstance(info, msgspec.inspect.UnionType):
            for t in info.types:
                walk(t, name, seen)
        elif isinstance(info, msgspec.inspect.DictType):
            walk(info.value_type, name, seen)
        elif isinstance(info, (msgspec.inspect.VarTupleType, msgspec.inspect.ListType)):
            walk(info.item_type, name, seen)

    for kind in game.COMMAND_TYPES:
        walk(msgspec.inspect.type_info(kind), "", frozenset())
    return limits


TEXT_LIMITS = _text_limits()
# the last key of a JSON text cut short inside its string value: the field that runs long
_OPEN_STRING = re.compile(rb'"([A-Za-z_][A-Za-z0-9_]*)"\s*:\s*"(?:[^"\\]|\\.)*$', re.S)


def too_large(size: int, limit: int, head: bytes | str) -> str:
    """The refusal of a frame or body over ``limit`` bytes, naming the field that runs
    long when ``head`` (its first bytes) ends inside one, and that field's own limit."""
    message = f"{size} bytes; the limit is {limit}"
    if isinstance(head, str):
        head = head.encode("utf-8", "replace")
    found = _OPEN_STRING.search(head[-(limit + 1024):])
    if found is not None:
        name = found.group(1).decode()
        bound = TEXT_LIMITS.get(name)
        message += f": `{name}` runs long" + (f" (at most {bound} characters)" if bound else "")
    return message


_HEAD_ID = re.compile(r'"id"\s*:\s*"([^"\\]{1,128})"')


def head_id(head: str | bytes) -> str | None:
    """The ``id`` of a command frame too large to decode, from its first bytes (a device's
    outbox then drops it with the refusal, instead of resending it forever)."""
    if isinstance(head, bytes):
        head = head.decode("utf-8", "replace")
    found = _HEAD_ID.search(head, 0, 4096)
    return found.group(1) if found is not None and '"command"' in head[:4096] else None


def frame_id(data: str | bytes) -> str | None:
    """The ``id`` of a command frame that failed to decode, so its reject can name it."""
    if nesting.too_deep(data):
        return None
    try:
        raw = _any_decoder.decode(data)
    except msgspec.DecodeError:
        return None
    if isinstance(raw, dict) and raw.get("type") == "command" and isinstance(raw.get("id"), str):
        return raw["id"]
    return None


# -- the client's side -----------------------------------------------------------------


def decode_server(data: str | bytes) -> Frame | None:
    """A server frame, typed, as a client reads it; None for one this version cannot use
    (a newer server's frame type, a malformed one): a client drops it and goes on."""
    try:
        return _server_decoder.decode(data)
    except msgspec.DecodeError:
        return None


def decode_event(raw: dict | bytes | msgspec.Raw) -> Event | dict:
    """The typed event for a tag ``game`` knows, else the JSON object as it came (a newer
    server's type, or a form this version cannot read)."""
    if not isinstance(raw, dict):
        raw = _any_decoder.decode(raw)
        if not isinstance(raw, dict):
            return {"type": "?", "value": raw}
    cls = game.EVENT_BY_TAG.get(raw.get("type", ""))
    if cls is None:
        return raw
    try:
        return msgspec.convert(raw, cls)
    except msgspec.ValidationError:
        return raw


def command_of(command: dict) -> game.AnyCommand:  # type: ignore[valid-type]
    """A command given as wire JSON, typed: ``ValueError`` naming what is wrong (no type,
    an unknown type, a bad field), at once, and not as a rejection after a dropout."""
    tag = command.get("type") if isinstance(command, dict) else None
    if not tag:
        raise ValueError("a command is a JSON object with a 'type'")
    cls = game.COMMAND_BY_TAG.get(tag)
    if cls is None:
        raise ValueError(f"unknown command type {tag!r}")
    try:
        return msgspec.convert(command, cls)
    except msgspec.ValidationError as exc:
        raise ValueError(f"invalid {tag} command: {exc}") from None
