"""How events and folded states are turned into bytes, identically by every store.

A stored event is its msgspec JSON (tagged: ``type`` names it); a snapshot is the
msgpack of a ``GameState``, tagged with ``SNAPSHOT_VERSION``. A store that encoded
otherwise would break the hash chain of logs moved between stores.
"""

from __future__ import annotations

import collections.abc
from typing import Sequence

import msgspec

from conteur.events import game
from conteur.events.game import GameState
from conteur.events.model import Event

# Bumped whenever GameState's shape changes: older snapshots are then ignored, never
# misread (replay from zero is always the truth).
SNAPSHOT_VERSION = 1

_event_encoder = msgspec.json.Encoder()
_event_decoder = msgspec.json.Decoder(game.AnyEvent)
_events_decoder = msgspec.json.Decoder(list[game.AnyEvent])


def _mapping(obj):
    """A state may hold a page of finished challenges as a mapping read when asked for
    (the command path's, server/core/shelf.Page): encoded as the dict it stands for, a page
    at a time, so a snapshot never decodes the whole night at once."""
    if isinstance(obj, collections.abc.Mapping):
        return dict(obj.items())
    raise NotImplementedError(f"a snapshot cannot encode {type(obj).__name__}")


_state_encoder = msgspec.msgpack.Encoder(enc_hook=_mapping)
_state_decoder = msgspec.msgpack.Decoder(GameState)


def event_type(event: Event) -> str:
    return event.__struct_config__.tag


def encode_event(event: Event) -> bytes:
    return _event_encoder.encode(event)


def decode_event(data: bytes) -> Event:
    return _event_decoder.decode(data)


def decode_events(datas: Sequence[bytes | str]) -> list[Event]:
    """Decodes many events in one call: an order of magnitude fewer Python-level steps.
    A row edited into TEXT (through SQL, by hand) still decodes; verify names the edit."""
    if not datas:
        return []
    return _events_decoder.decode(b"[" + b",".join(d if isinstance(d, bytes) else d.encode()
                                                   for d in datas) + b"]")


def encode_state(state: GameState) -> bytes:
    return _state_encoder.encode(state)


def decode_state(data: bytes) -> GameState | None:
    """The snapshot's state, or None for bytes that do not decode (skipped, never fatal)."""
    try:
        return _state_decoder.decode(data)
    except msgspec.DecodeError:
        return None
