"""Provably fair draws (FAIR-1, FAIR-2).

At session open the server draws a secret seed (``new_seed``) and logs its SHA-256
(``commitment``). Every die face is then derived, never drawn:

    block b of draw n = HMAC-SHA256(key=seed,
                                    msg=UTF-8 of the JSON array [session, n, entropy, b])

with the JSON written compactly (``separators=(",", ":")``, ``ensure_ascii=False``), b
counting 0, 1, 2... The blocks' bytes are read in order, ``k`` bytes at a time (k the
fewest bytes that can name ``sides`` faces, 1 for every real die); a chunk ``x`` is kept
when ``x < limit`` where ``limit`` is the largest multiple of ``sides`` not above 256**k,
and the face is ``x % sides + 1``. Rejected chunks are skipped (no modulo bias), the
next block is used when one runs out. Anyone holding the revealed seed and the exported
log can redo this with any HMAC implementation.

This module is the only place allowed to use OS randomness, and only in ``new_seed``
(called by the server, never by ``decide``).
"""

from __future__ import annotations

import hashlib
import hmac
import os
from typing import Any, Iterable

import msgspec

from events.model import DrawRecord

SEED_BYTES = 32


def new_seed() -> bytes:
    return os.urandom(SEED_BYTES)


def commitment(seed: bytes) -> str:
    """The hex SHA-256 logged at session open (FAIR-2)."""
    return hashlib.sha256(seed).hexdigest()


def block_message(session: str, counter: int, entropy: str, block: int) -> bytes:
    """The published form: ``json.dumps([session, counter, entropy, block],
    separators=(",", ":"), ensure_ascii=False).encode("utf-8")``, so anyone can check a
    night's dice with the standard library. msgspec writes the very same bytes (a
    property test holds it to that) about ten times faster: verifying a night's 100,000
    draws was mostly spent here."""
    return _encode([session, counter, entropy, block])


_encode = msgspec.json.Encoder().encode


def _block(seed: bytes, session: str, counter: int, entropy: str, block: int) -> bytes:
    return hmac.digest(seed, block_message(session, counter, entropy, block), "sha256")


def face_from_chunks(chunks: Iterable[int], sides: int, width: int) -> int | None:
    """The first unbiased face in a stream of ``width``-byte chunks, or None if all
    are rejected. Split out so the rejection rule is tested on chosen bytes."""
    limit = (256**width // sides) * sides
    for x in chunks:
        if x < limit:
            return x % sides + 1
    return None


def _width(sides: int) -> int:
    width = 1
    while 256**width < sides:
        width += 1
    return width


def derive_face(seed: bytes, session: str, counter: int, sides: int, entropy: str = "") -> int:
    if sides < 1:
        raise ValueError(f"a die has at least one side, not {sides}")
    width = _width(sides)
    block = 0
    while True:  # leaves with probability 1; ~2.3% of d10 chunks are rejected
        digest = _block(seed, session, counter, entropy, block)
        chunks = (
            int.from_bytes(digest[i : i + width], "big")
            for i in range(0, len(digest) - width + 1, width)
        )
        face = face_from_chunks(chunks, sides, width)
        if face is not None:
            return face
        block += 1


class FairDraws:
    """The server's draw source: faces derived from the committed seed (FAIR-2).

    ``start`` is ``GameState.draw_counter``; counters run consecutively from it. The
    ``entropy`` the roller's client sent is mixed into every draw and recorded.
    """

    def __init__(self, seed: bytes, session: str, start: int, entropy: str = ""):
        self._seed = seed
        self._session = session
        self._counter = start
        self._entropy = entropy

    def roll(self, sides: int) -> DrawRecord:
        face = derive_face(self._seed, self._session, self._counter, sides, self._entropy)
        record = DrawRecord(counter=self._counter, sides=sides, face=face, entropy=self._entropy)
        self._counter += 1
        return record

    @property
    def counter(self) -> int:
        return self._counter


def recompute(seed: bytes, session: str, record: DrawRecord) -> int:
    return derive_face(seed, session, record.counter, record.sides, record.entropy)


class BadDraw(msgspec.Struct, frozen=True, kw_only=True):
    """The first thing that does not verify. ``index`` is the event's position in the
    walked sequence (None when the seed itself is wrong)."""

    reason: str  # commitment | face | counter
    message: str
    index: int | None = None
    event: Any = None
    record: DrawRecord | None = None
    expected: int | None = None


def _records(event: Any) -> tuple[DrawRecord, ...]:
    raw = event.get("draws") if isinstance(event, dict) else getattr(event, "draws", None)
    if not raw:
        return ()
    return tuple(r if isinstance(r, DrawRecord) else msgspec.convert(r, DrawRecord) for r in raw)


def _event_name(event: Any) -> str:
    if isinstance(event, dict):
        return str(event.get("type", "event"))
    config = getattr(type(event), "__struct_config__", None)
    return getattr(config, "tag", None) or type(event).__name__


def verify_draws(
    seed_hex: str,
    session: str,
    events: Iterable[Any],
    commitment_hex: str | None = None,
    *,
    start: int | None = None,
) -> BadDraw | None:
    """Recompute every recorded draw of a closed session (FAIR-2).

    ``events`` are decoded events (structs or dicts) in log order. Checks, in order: the
    revealed seed hashes to ``commitment_hex`` (when given); every face recomputes; the
    counters run consecutively (from ``start`` when given), so a draw made and thrown
    away leaves a visible gap. Returns the first failure, or None when all is well.
    """
    try:
        seed = bytes.fromhex(seed_hex)
    except ValueError:
        return BadDraw(reason="commitment", message=f"the revealed seed {seed_hex!r} is not hex")
    if commitment_hex is not None and commitment(seed) != commitment_hex.lower():
        return BadDraw(
            reason="commitment",
            message="the revealed seed does not hash to the commitment logged at session "
            "open (FAIR-2)",
        )
    expected_counter = start

    def where(index: int, event: Any, record: DrawRecord) -> str:  # only for a failure
        return f"event {index} ({_event_name(event)}), draw #{record.counter} (d{record.sides})"

    for index, event in enumerate(events):
        for record in _records(event):
            if expected_counter is not None and record.counter != expected_counter:
                return BadDraw(
                    reason="counter",
                    message=f"{where(index, event, record)}: counter {record.counter}, expected {expected_counter} "
                    "(a draw is missing or repeated) (FAIR-1)",
                    index=index,
                    event=event,
                    record=record,
                )
            expected_counter = record.counter + 1
            face = recompute(seed, session, record)
            if face != record.face:
                return BadDraw(
                    reason="face",
                    message=f"{where(index, event, record)}: recorded {record.face}, the seed gives {face} (FAIR-2)",
                    index=index,
                    event=event,
                    record=record,
                    expected=face,
                )
    return None
