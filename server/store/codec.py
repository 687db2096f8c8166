"""How events and folded states are turned into bytes, identically by every store.

A stored event is its msgspec JSON (tagged: ``type`` names it); a snapshot is the
msgpack of a ``GameState``, tagged with ``SNAPSHOT_VERSION``. A store that encoded
otherwise would break the hash chain of logs moved between stores.
"""

from __future__ import annotations

import collections.abc
from typing import Sequence, Union

import msgspec

from conteur.events import game, slim
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
    at a time, so a snapshot never decodes the whole night at once (issue 18 item 3)."""
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


def _fold_decoder(types) -> msgspec.json.Decoder:
    return msgspec.json.Decoder(list[Union[tuple(types)]])  # type: ignore[misc]


# what a store's replay decodes, from the cheapest to the whole events: the hot kinds slim
# and the ignored ones to their tag (``game.FOLD_TYPES``); the same with the event kinds a
# part keeps whole (``slim.NeedsWhole``: a sealed opposed roll) decoded whole; everything
# whole (a row edited by hand that a slim type refuses otherwise). The same from
# ``game.SUMMED_TYPES`` for a replay fed the stored draw summaries (``summed``).
def _fold_decoders(types: tuple[type, ...]) -> tuple[msgspec.json.Decoder, ...]:
    return (_fold_decoder(types),
            _fold_decoder(slim.SLIM[t] if slim.SLIM.get(t) in slim.KEEPS else t for t in types),
            _fold_decoder(game.EVENT_TYPES))


_FOLD_DECODERS = {False: _fold_decoders(game.FOLD_TYPES), True: _fold_decoders(game.SUMMED_TYPES)}


class FoldDecoder:
    """Decodes a chunk's stored bodies (joined by commas) for ``game.Replay`` only. A
    slim type that meets an event its part keeps whole refuses it and the chunk is decoded
    again with the next decoder (``_FOLD_DECODERS``); a scan that met one keeps starting
    from the decoder that passed, since a night that seals opposed rolls seals many."""

    __slots__ = ("_first", "_decoders")

    def __init__(self, summed: bool = False) -> None:
        self._first = 0
        self._decoders = _FOLD_DECODERS[summed]

    def __call__(self, bodies: bytes) -> list:
        data = b"[" + bodies + b"]"
        decoders = self._decoders
        for i in range(self._first, len(decoders) - 1):
            try:
                events = decoders[i].decode(data)
            except msgspec.ValidationError:
                continue
            self._first = i
            return events
        return decoders[-1].decode(data)


def decode_fold(bodies: bytes, summed: bool = False) -> list:
    """The events of ``bodies`` (stored event bodies joined by commas) for ``game.Replay``
    only (``FoldDecoder``, once); with ``summed``, the hot kinds without their draw records
    (the replay is then fed their stored summaries)."""
    return FoldDecoder(summed)(bodies)


def encode_state(state: GameState) -> bytes:
    return _state_encoder.encode(state)


def decode_state(data: bytes) -> GameState | None:
    """The snapshot's state, or None for bytes that do not decode (skipped, never fatal)."""
    try:
        return _state_decoder.decode(data)
    except msgspec.DecodeError:
        return None
