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


# what a store's replay decodes: the hot kinds slim and the ignored ones to their tag
# (``game.FOLD_TYPES``, or ``game.SUMMED_TYPES`` for a replay fed the stored draw summaries:
# ``summed``); everything whole (a row edited by hand that a slim type refuses otherwise)
_FOLD_DECODERS = {False: _fold_decoder(game.FOLD_TYPES), True: _fold_decoder(game.SUMMED_TYPES)}
_WHOLE_DECODER = _fold_decoder(game.EVENT_TYPES)
_RAW_DECODER = msgspec.json.Decoder(list[msgspec.Raw])
_kept = slim.kept  # read per event of a chunk that holds the kind


class FoldDecoder:
    """Decodes a chunk's stored bodies (joined by commas) for ``game.Replay`` only. An
    event its part keeps whole (``slim.kept``: a sealed opposed roll) is decoded again
    whole, alone (``_whole_again``), not its chunk with every roll whole, and every chunk
    after it in the scan, as before session 11: an action night's chunks nearly all hold
    a few (the 60,000-event sample's replay, 27,898 -> 27,645 instructions a row)."""

    __slots__ = ("_decoder", "_kept_kind", "types")

    def __init__(self, summed: bool = False) -> None:
        self._decoder = _FOLD_DECODERS[summed]
        self._kept_kind = slim.kept_kind(summed)
        # the types of the last chunk's events, in order: its reader counts the kinds that
        # carry draws with them (``events.drawn.segments``) without a walk of its own
        self.types: list[type] = []

    def __call__(self, bodies: bytes) -> list:
        data = b"[" + bodies + b"]"
        try:
            events = self._decoder.decode(data)
        except msgspec.ValidationError:
            events = _WHOLE_DECODER.decode(data)
            self.types = list(map(type, events))
            return events
        # looked for in C first (a MET or V5 night has none), then each looked at in Python
        kind = self._kept_kind
        self.types = types = list(map(type, events))
        if kind in types:
            wanted = [i for i, event in enumerate(events) if event.__class__ is kind and _kept(event)]
            if wanted:
                _whole_again(data, events, wanted)
                for i in wanted:
                    types[i] = type(events[i])
        return events


_ROLLED = b'{"type":"action.rolled","roll":'
_NEXT = b',{"type":"'


def _whole_again(data: bytes, events: list, wanted: list[int]) -> None:
    """``events[i]`` for each ``i`` of ``wanted`` (sealed opposed rolls, in order) decoded
    again whole from ``data``. Each is found by its roll id where the store wrote it (its
    tag, then its id: ``encode_event``'s order) and ends where the next stored event
    begins; a body written otherwise (by hand, keys reordered), or a cut that does not
    decode to that very roll, and the chunk is split into its bodies instead (the whole
    parse over again: what this spares)."""
    found, start = [], 0
    for i in wanted:
        roll = events[i].roll
        start = data.find(_ROLLED + _event_encoder.encode(roll), start)
        if start < 0:
            break
        end = data.find(_NEXT, start)
        try:
            whole = _event_decoder.decode(data[start:end if end >= 0 else -1])
        except msgspec.DecodeError:
            break
        if type(whole) is not slim.SLIM[type(events[i])] or whole.roll != roll or not _kept(whole):
            break
        found.append(whole)
        start = end
    else:
        for i, whole in zip(wanted, found):
            events[i] = whole
        return
    bodies = _RAW_DECODER.decode(data)
    for i in wanted:
        events[i] = _event_decoder.decode(bodies[i])


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
