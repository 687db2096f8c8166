"""Events' draw records summed up for a replay: the counters they move (FAIR-2).

A replay never redraws (FAIR-1): of an event's draw records it needs only where they
leave each draw stream's next counter and the session-wide counter of logs from before
streams (``game.count_draws``). Decoding and counting the records was about a quarter of
a store's replay (issue 18 item 2), so the SQLite store keeps, beside each event of a kind
that carries draws, its ``Summary`` in the stored form ``pairs`` makes
(``server/store/drawn.py``), and its replay decodes the events without their records
(``slim.SUMMED``) and merges the summaries instead: a chunk's summaries read as one flat
list and merged into one ``Summary`` per run of events between two whose evolvers read
the whole state (``segment``), not one by one in Python.

Why merging equals counting. ``summarize`` is ``count_draws`` run on an empty dict and a
counter of 0; ``merge`` takes, per stream, the larger of the state's next counter and the
summary's, inserting a stream the state lacks, and the larger session-wide counter. Against
``count_draws``'s three cases on a state whose counters are >= 0 (they start at 0 and only
grow):

- one record, with a stream: the stream moves to ``counter + 1`` when ``counter >=`` its
  next one (0 if absent), i.e. when ``counter + 1`` is larger: the max; a negative counter
  moves nothing and leaves nothing in the summary. Without a stream: the session counter
  becomes ``max(draw_counter, counter + 1)``, the summary's counter ``max(0, counter + 1)``,
  whose max with a counter >= 0 is the same.
- several records, the first with a stream: one name, the stream moves to the max of
  ``counter + 1`` if larger; several names, each record in turn moves its own stream the
  same way, so each ends at the max of its own and its records' ``counter + 1``. A stream
  the state lacks is inserted at its first record with a counter >= 0, in the records'
  order, as in the summary's dict, which ``merge`` walks in order: the dict's order (which
  ``codec.encode_state`` writes) is the same too. The session counter does not move (the
  summary's is 0).
- several records, the first without a stream: the session counter becomes the max of its
  own and the records' ``counter + 1`` (whatever streams the others name), as the
  summary's counter, merged by max.

Why merging a run of summaries into one equals merging them one by one. Merged one by one,
each stream ends at the max of its own and every summary's counter for it, and a stream the
state lacks is inserted at the first summary that names it with a counter > 0 (every
summary's counters are >= 1, being ``counter + 1`` of a counter >= 0): ``segment``'s one
summary holds, per stream, the max of the run's counters, in the order of their first
appearance, so merged once it leaves the same values, and inserts the streams the state
lacks in that order. The max is each stream's last counter of the run when no counter is
below a later one of its stream (what the command path writes: a stream's counters only
grow), checked in C (``segment``); otherwise the run is merged counter by counter in
Python, the same max. Nothing reads the streams while a run is folded: a run ends before
each event whose evolvers read the whole state (``game.READS``), and its summary is merged
before that event is folded (``game.Replay.feed``).

An event with no record leaves an empty summary, which changes nothing; it is stored all
the same, so that a store can tell a chunk whose summaries match its rows one for one.
``tests/test_drawn.py`` checks ``merge`` against ``count_draws`` on random records, and a
chunk's runs against the summaries merged one by one.
"""

from __future__ import annotations

import operator
from typing import Sequence

import msgspec

from conteur.events.game import (
    DRAWN, EVENT_TYPES, FOLD_TYPES, READS, SUMMED_TYPES, count_draws, merge_draws as merge)
from conteur.events.model import DrawRecord


class Summary(msgspec.Struct, frozen=True, array_like=True, gc=False):
    """What one event's draw records leave: each stream's next counter (in the records'
    order) and the next session-wide counter (0 when no record is without a stream).
    Stored as JSON: ``[{"ana/open":13},0]``, ``[{},7]`` for an old log's, ``[{},0]`` for
    none."""

    streams: dict[str, int] = {}
    counter: int = 0


NONE = Summary()
_encoder = msgspec.json.Encoder()
_decoder = msgspec.json.Decoder(Summary)
_list_decoder = msgspec.json.Decoder(list[Summary])


def summarize(records: Sequence[DrawRecord]) -> Summary:
    if not records:
        return NONE
    streams: dict[str, int] = {}
    counter = count_draws(streams, 0, records)
    return Summary(streams, counter)


def encode(summary: Summary) -> bytes:
    return _encoder.encode(summary)


def decode(data: bytes) -> Summary:
    return _decoder.decode(data)


def decode_joined(data: bytes) -> list[Summary]:
    """Summaries in ``encode``'s form joined by commas (a file from before ``pairs``: what
    ``conteur verify`` checks there), in one call."""
    return _list_decoder.decode(b"[" + data + b"]")


# The stored form: each stream's name and next counter in the summary's order, then the
# session-wide counter under the name null when it is > 0 (not "": records without a stream
# after one with a stream count in a stream named "", ``count_draws``), each followed by a
# comma, the whole ended by a newline: ``"ana/open",13,\n``, ``null,7,\n`` for an old
# log's, ``\n`` for none. A chunk's rows joined as stored are one JSON list once wrapped
# (``"[" + joined + "0]"``: the newlines are JSON's whitespace, the 0 takes the last comma)
# without a container per event; and the newlines, which JSON never leaves raw inside a
# string, are where each event's summary ends, for the chunks cut into runs.
_flat_decoder = msgspec.json.Decoder(list[str | int | None])
_le = operator.le


def pairs(summary: Summary) -> bytes:
    flat = [x for item in summary.streams.items() for x in item]
    if summary.counter:
        flat += [None, summary.counter]
    return _encoder.encode(flat)[1:-1] + b",\n" if flat else b"\n"


def segment(stored: bytes) -> Summary:
    """One ``Summary`` of stored summaries joined as stored (their records' counters merged
    as ``merge`` merges them one after the other, see the docstring); raises
    ``msgspec.DecodeError``, ``TypeError`` or ``ValueError`` on what ``pairs`` never wrote."""
    if not stored or stored.isspace():  # a run of events without records: most of a MET night's
        return NONE
    flat = _flat_decoder.decode(b"[" + stored + b"0]")
    if len(flat) % 2 == 0:
        raise ValueError("stored draw summaries out of step")
    names, counters = flat[0:-1:2], flat[1:-1:2]
    top = dict(zip(names, counters))  # each stream's last counter
    if min(counters) < 1 or not all(map(_le, counters, map(top.__getitem__, names))):
        top = {}  # a counter below a later one of its stream (not the command path's)
        for name, n in zip(names, counters):
            if n > top.get(name, 0):
                top[name] = n
    counter = top.pop(None, 0)
    if not all(map(str.__instancecheck__, top)):
        raise ValueError("stored draw summaries out of step")
    return Summary(top, counter)


# each kind a replay's decode may give (``codec.FoldDecoder``: slim, whole, tag alone) as a
# byte: 1 if it carries draws, 2 if an evolver of it reads the whole state (both: 3). A
# chunk's kinds mapped so once, its counts and finds are C loops over bytes: a set's
# __contains__ mapped over the kinds, or list.count by kind (a full comparison of two
# classes an event), cost 40 to 100 instructions an event a pass.
_MARKS: dict[type, int] = {kind: (kind in DRAWN) | (kind in READS) << 1
                           for kind in (*SUMMED_TYPES, *FOLD_TYPES, *EVENT_TYPES)}


def segments(stored: bytes, count: int, types: list[type]) -> list[Summary] | None:
    """A chunk's summaries for ``game.Replay.feed``: one ``Summary`` per run of its events
    up to each that reads the whole state (``game.READS``), then one for the rest; or None
    when they are not one per event of the chunk that carries draws (``count`` rows read
    beside events of ``types``, ``codec.FoldDecoder.types``) or cannot be read: the
    chunk's records are then decoded instead."""
    try:
        marks = bytes(map(_MARKS.__getitem__, types))
    except KeyError:  # a kind no decode of a replay gives
        return None
    if count != marks.count(1) + marks.count(3):
        return None
    try:
        if 2 not in marks and 3 not in marks:
            return [segment(stored)]
        ends = stored.split(b"\n")
        if len(ends) != count + 1:  # a newline inside a summary: the runs would be cut astray
            return None
        # each event that reads the state ends a run: the summaries of the drawn events
        # before it (its own, if any, is counted after its evolvers, as evolve counts it)
        reads = marks.translate(_READS_ONLY)
        runs, start, at, i = [], 0, 0, reads.find(1)
        while i >= 0:
            end = start + marks.count(1, at, i) + marks.count(3, at, i)
            runs.append(segment(b"".join(ends[start:end])) if end > start else NONE)
            start, at = end, i
            i = reads.find(1, i + 1)
        runs.append(segment(b"".join(ends[start:])))
        return runs
    except (msgspec.DecodeError, TypeError, ValueError):
        return None


_READS_ONLY = bytes((m >> 1) & 1 for m in range(256))  # bytes.translate: 1 where the kind reads the state
