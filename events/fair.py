"""Provably fair draws (FAIR-1, FAIR-2).

At session open the server draws a secret seed (``new_seed``) and logs its SHA-256
(``commitment``). Every die face is then derived, never drawn:

    block b of draw n of stream s = HMAC-SHA256(key=seed,
                           msg=UTF-8 of the JSON array [session, s, n, entropy, b])

(``[session, n, entropy, b]`` for records of logs from before streams, whose ``stream`` is
empty), with the JSON written compactly (``separators=(",", ":")``, ``ensure_ascii=False``), b
counting 0, 1, 2... The blocks' bytes are read in order, ``k`` bytes at a time (k the
fewest bytes that can name ``sides`` faces, 1 for every real die); a chunk ``x`` is kept
when ``x < limit`` where ``limit`` is the largest multiple of ``sides`` not above 256**k,
and the face is ``x % sides + 1``. Rejected chunks are skipped (no modulo bias), the
next block is used when one runs out. Anyone holding the revealed seed and the exported
log can redo this with any HMAC implementation.

Each drawer (a player's character, or the storyteller side) and audience has its own
stream and counter (``events.model.stream_name``): a viewer sees every draw of a stream it
sees any draw of, so no counter gap counts draws hidden from it.

A hidden roll sent without entropy gets a nonce the server draws (``new_nonce``), recorded
in its draws, which only the roll's viewers receive: once the seed is public, whoever may
not see the roll still cannot recompute it.

This module is the only place allowed to use OS randomness, and only in ``new_seed`` and
``new_nonce`` (called by the server, never by ``decide``).
"""

from __future__ import annotations

import hashlib
import hmac
import os
from typing import Any, Callable, Iterable, Mapping

import msgspec

from conteur.events.model import Actor, DrawRecord, sealed_stream_name, stream_name

SEED_BYTES = 32


def new_seed(randbytes: Callable[[int], bytes] = os.urandom) -> bytes:
    """``randbytes`` is the OS's; only a reproducible simulation passes another."""
    return randbytes(SEED_BYTES)


def new_nonce(randbytes: Callable[[int], bytes] = os.urandom) -> str:
    """Entropy for a hidden roll whose command brought none (16 random bytes, hex)."""
    return randbytes(16).hex()


def commitment(seed: bytes) -> str:
    """The hex SHA-256 logged at session open (FAIR-2)."""
    return hashlib.sha256(seed).hexdigest()


def block_message(session: str, counter: int, entropy: str, block: int, stream: str = "") -> bytes:
    """The published form: ``json.dumps([session, stream, counter, entropy, block],
    separators=(",", ":"), ensure_ascii=False).encode("utf-8")``, or without ``stream``
    when it is empty (records from before streams), so anyone can check a night's dice
    with the standard library. msgspec writes the very same bytes (a property test holds
    it to that) about ten times faster: verifying a night's 100,000 draws was mostly
    spent here."""
    if stream:
        return _encode([session, stream, counter, entropy, block])
    return _encode([session, counter, entropy, block])


_encode = msgspec.json.Encoder().encode


def _block(seed: bytes, session: str, counter: int, entropy: str, block: int, stream: str) -> bytes:
    return hmac.digest(seed, block_message(session, counter, entropy, block, stream), "sha256")


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


def derive_face(seed: bytes, session: str, counter: int, sides: int, entropy: str = "",
                stream: str = "") -> int:
    if sides < 1:
        raise ValueError(f"a die has at least one side, not {sides}")
    width = _width(sides)
    block = 0
    while True:  # leaves with probability 1; ~2.3% of d10 chunks are rejected
        digest = _block(seed, session, counter, entropy, block, stream)
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

    ``streams`` is ``GameState.streams``, the next counter of each stream; a decider draws
    through ``stream(actor, owners)``, whose counters run consecutively from there. The
    ``entropy`` the roller's client sent is mixed into every draw and recorded; when it is
    empty, a hidden stream's draws take ``nonce`` instead (``new_nonce``, drawn by the
    server). ``roll`` on the source itself is the session-wide counter of logs from before
    streams, from ``start``: kept for tools and tests, no decider uses it.
    """

    def __init__(self, seed: bytes, session: str, start: int = 0, entropy: str = "", *,
                 streams: Mapping[str, int] | None = None, nonce: str = ""):
        self._seed = seed
        self._session = session
        self._counter = start
        self._entropy = entropy
        self._nonce = nonce
        # the state's counters read where a draw needs them, not copied: a night has a
        # stream per sealed roll
        self._streams = streams if streams is not None else {}
        self._next: dict[str, int] = {}

    def roll(self, sides: int) -> DrawRecord:
        face = derive_face(self._seed, self._session, self._counter, sides, self._entropy)
        record = DrawRecord(counter=self._counter, sides=sides, face=face, entropy=self._entropy)
        self._counter += 1
        return record

    def stream(self, actor: Actor, owners: frozenset[str] | None, *, sealed: str = "") -> _Stream:
        # a sealed roll is hidden until revealed, and may never be (a contest cancelled, a
        # session closed before the answer): its draws take the nonce like any hidden roll's
        hidden = owners is not None or bool(sealed)
        entropy = self._entropy or (self._nonce if hidden else "")
        if hidden and not entropy:
            raise ValueError("a hidden roll without entropy needs the server's nonce")
        name = sealed_stream_name(actor, sealed) if sealed else stream_name(actor, owners)
        return _Stream(self, name, entropy)

    def draw(self, stream: str, sides: int, entropy: str) -> DrawRecord:
        counter = self._next.get(stream)
        if counter is None:
            counter = self._streams.get(stream, 0)
        self._next[stream] = counter + 1
        face = derive_face(self._seed, self._session, counter, sides, entropy, stream)
        return DrawRecord(counter=counter, sides=sides, face=face, entropy=entropy, stream=stream)

    @property
    def counter(self) -> int:
        return self._counter


class _Stream:
    """``FairDraws`` bound to one stream."""

    __slots__ = ("_source", "name", "_entropy")

    def __init__(self, source: FairDraws, name: str, entropy: str):
        self._source, self.name, self._entropy = source, name, entropy

    def roll(self, sides: int) -> DrawRecord:
        return self._source.draw(self.name, sides, self._entropy)

    def stream(self, actor: Actor, owners: frozenset[str] | None, *, sealed: str = "") -> _Stream:
        return self._source.stream(actor, owners, sealed=sealed)


def recompute(seed: bytes, session: str, record: DrawRecord) -> int:
    return derive_face(seed, session, record.counter, record.sides, record.entropy, record.stream)


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
    counters of each stream run consecutively (the session-wide one of records from
    before streams from ``start`` when given; a named stream from 0 when ``start`` is
    given), so a draw made and thrown away leaves a visible gap. A viewer's own copy holds
    whole streams only, so it verifies the same way. Returns the first failure, or None
    when all is well.
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
    expected: dict[str, int | None] = {}

    def where(index: int, event: Any, record: DrawRecord) -> str:  # only for a failure
        of = f" of stream {record.stream}" if record.stream else ""
        return f"event {index} ({_event_name(event)}), draw #{record.counter}{of} (d{record.sides})"

    for index, event in enumerate(events):
        for record in _records(event):
            initial = start if not record.stream or start is None else 0
            expected_counter = expected.get(record.stream, initial)
            if expected_counter is not None and record.counter != expected_counter:
                return BadDraw(
                    reason="counter",
                    message=f"{where(index, event, record)}: counter {record.counter}, expected {expected_counter} "
                    "(a draw is missing or repeated) (FAIR-1)",
                    index=index,
                    event=event,
                    record=record,
                )
            expected[record.stream] = record.counter + 1
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
