"""One event's draw records summed up for a replay: the counters they move (FAIR-2).

A replay never redraws (FAIR-1): of an event's draw records it needs only where they
leave each draw stream's next counter and the session-wide counter of logs from before
streams (``game.count_draws``). Decoding and counting the records was about a quarter of
a store's replay (issue 18 item 2), so the SQLite store keeps, beside each event of a kind
that carries draws, its ``Summary`` (``server/store/drawn.py``), and its replay decodes the
events without their records (``slim.SUMMED``) and merges the summaries instead.

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

An event with no record leaves an empty summary, which changes nothing; it is stored all
the same, so that a store can tell a chunk whose summaries match its rows one for one.
``tests/test_drawn.py`` checks ``merge`` against ``count_draws`` on random records.
"""

from __future__ import annotations

from typing import Sequence

import msgspec

from conteur.events.game import count_draws
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


def merge(streams: dict[str, int], counter: int, summary: Summary) -> int:
    """``count_draws`` for the summarized records: ``streams`` changed in place, the next
    session-wide counter returned (``game.Replay.feed`` inlines it)."""
    for name, last in summary.streams.items():
        if last > streams.get(name, 0):
            streams[name] = last
    return summary.counter if summary.counter > counter else counter


def encode(summary: Summary) -> bytes:
    return _encoder.encode(summary)


def decode(data: bytes) -> Summary:
    return _decoder.decode(data)


def decode_joined(data: bytes) -> list[Summary]:
    """Stored summaries joined by commas, in one call."""
    return _list_decoder.decode(b"[" + data + b"]")
