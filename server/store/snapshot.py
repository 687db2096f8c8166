"""The one snapshot format: every cache of a session's folded state is written as it.

Three callers keep snapshots, all through this module:

- the store's state snapshots (``snapshots`` table, ``save_snapshot``), which bound a
  restart's fold: the body is the ``GameState`` at ``seq``;
- the core's kept views (server/core/keep.py, ``views`` table): a projection's state,
  its compressed pages by name, the last seq it was sent;
- the audit's kept review (server/audit/kept.py, ``views`` table): a review builder's
  state.

A snapshot is an envelope, msgpack as an array: ``VERSION``, the seq of the session's log
it was folded up to, the hash of the session's row at that seq (its tip), and the body in
the typed msgpack codec of its type. It is opened only if its version is one this conteur
reads, its seq is where the caller expects it, and the session's row at that seq is still
the row it was folded from (another log under the same name: a file copied over, edited);
otherwise, or when it does not decode, it is skipped and the state is folded from the log.
A snapshot is a cache: never fatal, never wrong.

Older formats still open while the bodies they hold have today's shape: a state snapshot
row of version 1 (a bare ``GameState``, no envelope, no tip) and a view envelope of
version ``[1, 1]`` (the layout of this envelope). ``VERSION`` is bumped, and ``READS``
narrowed to it, whenever a body's shape changes (``GameState``, a view's, a review's):
older snapshots are then skipped, never misread.
"""

from __future__ import annotations

import collections.abc
from typing import Callable, TypeVar

import msgspec

from conteur.events import game
from conteur.events.game import GameState

VERSION = 2
# the versions whose bodies decode as this conteur's: its own, and the formats before it
LEGACY_STATE = 1  # a state snapshot row: the bare msgpack of a GameState
LEGACY_VIEW = (1, 1)  # a view's envelope: (its format's version, the state snapshots')
READS = (VERSION, LEGACY_VIEW)
# what the ``version`` column of the store's state snapshots may say for a row it opens
STATE_ROWS = (VERSION, LEGACY_STATE)

T = TypeVar("T")


class Envelope(msgspec.Struct, array_like=True):
    version: int | tuple[int, int]
    seq: int  # the session's log folded up to
    tip: str  # the hash of the session's row at ``seq``
    body: msgspec.Raw


class _Out(msgspec.Struct, array_like=True):
    """``Envelope`` as written: the body encoded in the same pass (the same bytes as a
    ``Raw`` of it), not once alone and copied again (a review's is megabytes)."""

    version: int
    seq: int
    tip: str
    body: object


def _mapping(obj):
    """A state may hold a page of finished challenges as a mapping read when asked for
    (``Page``, server/core/pages.py): encoded as the dict it stands for, a page
    at a time, so a snapshot never decodes the whole night at once. The state's own
    types are encoded as ``game.enc_hook`` says (the draw streams: a dict in name order)."""
    if isinstance(obj, game.Streams):
        return game.enc_hook(obj)
    if isinstance(obj, collections.abc.Mapping):
        return dict(obj.items())
    raise NotImplementedError(f"a snapshot cannot encode {type(obj).__name__}")


_encoder = msgspec.msgpack.Encoder(enc_hook=_mapping)
_envelope = msgspec.msgpack.Decoder(Envelope)
_decoders: dict[type, msgspec.msgpack.Decoder] = {}
_FAILED = (msgspec.DecodeError, msgspec.ValidationError, ValueError, TypeError)


def _decoder(kind: type) -> msgspec.msgpack.Decoder:
    found = _decoders.get(kind)
    if found is None:
        found = _decoders[kind] = msgspec.msgpack.Decoder(kind, dec_hook=game.dec_hook)
    return found


def encode(seq: int, tip: str, body) -> bytes:
    """The snapshot of ``body`` (a msgspec-encodable value) folded up to ``seq``, whose
    row there has the hash ``tip``."""
    return _encoder.encode(_Out(VERSION, seq, tip, body))


def open_body(data: bytes, kind: type[T], *, seq: int | None, upto: int | None,
              tip_of: Callable[[int], str | None]) -> tuple[int, T] | None:
    """(seq, body) of the snapshot ``data`` if it is usable: of a version this conteur
    reads, at the ``seq`` its row says (None: any), at or before ``upto`` (None: any),
    folded from this log (``tip_of(seq)``: the hash of the session's row there, None when
    there is none) and decodable as ``kind``; None otherwise."""
    try:
        envelope = _envelope.decode(data)
        version = envelope.version if isinstance(envelope.version, int) else tuple(envelope.version)
        if version not in READS or envelope.seq <= 0:
            return None
        if (seq is not None and envelope.seq != seq) or (upto is not None and envelope.seq > upto):
            return None
        if tip_of(envelope.seq) != envelope.tip:
            return None  # another log under this session's name
        return envelope.seq, _decoder(kind).decode(envelope.body)
    except _FAILED:
        return None


def pack(body) -> bytes:
    """A body alone, in the snapshot codec: how a state crosses to another process."""
    return _encoder.encode(body)


def unpack(data: bytes, kind: type[T]) -> T:
    """A body ``pack`` made (raises ``msgspec.DecodeError`` for bytes it did not)."""
    return _decoder(kind).decode(data)


def body(data: bytes) -> bytes:
    """The body's bytes of a snapshot (what it holds, the envelope aside)."""
    return bytes(_envelope.decode(data).body)


def open_state(version: int, data: bytes, seq: int, tip_of: Callable[[int], str | None]) -> GameState | None:
    """The state of a state snapshot row (its ``version`` column, its bytes, its seq), or
    None for one that is not usable (skipped, never fatal)."""
    if version == LEGACY_STATE:
        try:
            return _decoder(GameState).decode(data)
        except _FAILED:
            return None
    if version != VERSION:
        return None
    found = open_body(data, GameState, seq=seq, upto=None, tip_of=tip_of)
    return None if found is None else found[1]
