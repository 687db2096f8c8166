"""The hash chain over stored events, and its verification.

A row's hash is SHA-256 over the previous row's hash and the row's canonical bytes, so
editing, deleting, inserting or reordering any event breaks the chain at that event.
The same rows travel in exported JSON Lines logs with ``data`` kept verbatim (as raw
JSON), so an export verifies exactly like the database it came from.
"""

from __future__ import annotations

import hashlib
from typing import Iterable, Iterator

import msgspec

GENESIS = "0" * 64


class Row(msgspec.Struct, frozen=True, gc=False):
    """One stored event, as in the ``events`` table and in an exported JSON Lines log."""

    seq: int
    session: str
    type: str
    data: bytes
    actor: str
    device: str
    command_id: str
    at: str
    prev_hash: str
    hash: str


class Entry(msgspec.Struct, frozen=True, gc=False):
    """A stored event without its chain's columns (session, device, command id,
    hashes): what a review reads of each row (``EventStore.read_entries``). Half the
    columns of a ``Row``, read about a third faster."""

    seq: int
    type: str
    data: bytes
    actor: str
    at: str


_canonical = msgspec.json.Encoder()


def row_hash(prev_hash: str, seq: int, session: str, type_: str, data: bytes, actor: str,
             device: str, command_id: str, at: str) -> str:
    body = _canonical.encode([seq, session, type_, actor, device, command_id, at])
    h = hashlib.sha256(prev_hash.encode("ascii"))
    h.update(b"\n")
    h.update(body)
    h.update(b"\n")
    # a row edited through SQL may come back as TEXT; its bytes are what the hash covers
    h.update(data.encode() if isinstance(data, str) else data)
    return h.hexdigest()


class ChainBreak(msgspec.Struct, frozen=True):
    seq: int
    reason: str

    def __str__(self) -> str:
        return f"chain broken at seq {self.seq}: {self.reason}"


def verify_rows(rows: Iterable[Row], *, gapless: bool = False,
                progress=None) -> tuple[int, ChainBreak | None]:
    """Walks the chains (one per session); returns (rows checked, first break or None).

    Each session has its own chain, so a one-session export verifies on its own.
    ``gapless`` also requires the global seqs to follow each other (a whole database).
    """
    last_hash: dict[str, str] = {}
    last_seq = 0
    count = 0
    for row in rows:
        if row.seq <= last_seq:
            return count, ChainBreak(seq=row.seq, reason=f"seq {row.seq} out of order after {last_seq}")
        if gapless and row.seq != last_seq + 1:
            return count, ChainBreak(
                seq=last_seq + 1, reason=f"seq {last_seq + 1} is missing (deleted event?), next is {row.seq}"
            )
        if row.prev_hash != last_hash.get(row.session, GENESIS):
            return count, ChainBreak(
                seq=row.seq,
                reason="prev_hash does not match the session's previous event "
                "(an event before it was deleted, inserted or moved)",
            )
        digest = row_hash(row.prev_hash, row.seq, row.session, row.type, row.data, row.actor,
                          row.device, row.command_id, row.at)
        if digest != row.hash:
            return count, ChainBreak(seq=row.seq, reason="hash does not match its content (edited event)")
        last_hash[row.session] = row.hash
        last_seq = row.seq
        count += 1
        if progress and count % 10000 == 0:
            progress(10000)
    return count, None


# -- JSON Lines ------------------------------------------------------------------------


class LogLine(msgspec.Struct, frozen=True, gc=False):
    """A row in an exported log: ``data`` is the event's JSON, embedded verbatim."""

    seq: int
    session: str
    type: str
    data: msgspec.Raw
    actor: str
    device: str
    command_id: str
    at: str
    prev_hash: str
    hash: str


_line_encoder = msgspec.json.Encoder()
_line_decoder = msgspec.json.Decoder(LogLine)


def row_to_line(row: Row) -> bytes:
    line = LogLine(row.seq, row.session, row.type, msgspec.Raw(row.data), row.actor,
                   row.device, row.command_id, row.at, row.prev_hash, row.hash)
    return _line_encoder.encode(line)


class LogLineError(ValueError):
    pass


def read_jsonl(path) -> Iterator[Row]:
    with open(path, "rb") as f:
        for number, raw in enumerate(f, 1):
            raw = raw.strip()
            if not raw:
                continue
            try:
                line = _line_decoder.decode(raw)
            except msgspec.DecodeError as exc:
                raise LogLineError(f"line {number} is not a valid log line: {exc}") from exc
            yield Row(line.seq, line.session, line.type, bytes(line.data), line.actor,
                      line.device, line.command_id, line.at, line.prev_hash, line.hash)
