"""The whole review bundle and the exports, streamed by parts.

``page.bundle`` and ``export.render`` make their answer whole, from a review holding
every item and every stored row of the night: at 735,566 events that was 184 MB and a
server left at 381 MB. Here the same bytes are made part by part from a kept review
(server/audit/paged.py: seqs and scenes per event, a few pages of items) and the store:

- the verification reads the session's rows ``ROWS`` at a time, in two passes, since the
  draws can be recomputed only with the seed revealed at the session's end: the first
  checks the hash chain and finds the seed, the second recomputes the draws and derives
  the verdicts again, each event decoded once for both;
- the challenges' briefs, the fairness panel and the timeline walk the review's items a
  page at a time; the disputes' ids come from the marks the kept review keeps anyway.

What is held beyond the kept review is a chunk of rows, a few pages of items, one
encoded part, and per flagged challenge its id. The bytes are those of the whole answer
(tests/audit/test_review_streamed.py compares them on random nights): a reader knows it has the
whole bundle by its closing brace, sent last, after every part was made; a failure in
between ends the stream without it (and, over HTTP, without chunked encoding's last
chunk, which clients report as an incomplete body).
"""

from __future__ import annotations

from typing import Callable, Iterable, Iterator, NamedTuple

import msgspec

from conteur.events import fair, views
from conteur.events.model import Actor
from conteur.server.audit import review as rv
from conteur.server.audit import checks as review_checks
from conteur.server.audit import page as review_page
from conteur.server.audit import stories
from conteur.server.audit.verify import Report, VerdictWalk
from conteur.server.store.chain import Row, verify_rows
from conteur.server.store.codec import decode_event, decode_events

ROWS = 5000  # stored rows read at a time: a chunk's rows and events stay a few MB
ITEMS = 1000  # timeline items or challenges encoded into one part of the stream

_encode = msgspec.json.encode


def session_rows(store, session: str, head: int, chunk: int = ROWS) -> Iterator[Row]:
    """The session's stored rows up to seq ``head``, read ``chunk`` at a time."""
    after = 0
    while after < head:
        rows = store.read_after(session, after, limit=chunk)
        if not rows:
            return
        for row in rows:
            if row.seq > head:
                return
            yield row
        after = rows[-1].seq


def verify_session(rows: Callable[[], Iterable[Row]], session: str, viewer: Actor | None = None,
                   each: Callable[[int, object], None] | None = None) -> review_checks.Verification:
    """``checks.verify`` over one session's rows, which ``rows()`` reads again for each of
    the two passes instead of holding them: the same answer, field for field. ``each(seq,
    event)`` is given the events the second pass decodes, if it comes (the chain intact),
    up to the last or to a bad draw."""
    found = _Scan()
    count, broken = verify_rows(found.scan(rows()))
    if broken is not None:
        return review_checks.Verification(ok=False, events=count, first_bad_seq=broken.seq, reason=broken.reason,
                               text=str(broken))
    if found.undecodable is not None:  # as check_draws, which decodes every row first
        seq, reason = found.undecodable
        return review_checks.Verification(ok=False, events=count, first_bad_seq=seq, reason=reason, text=reason)
    report = Report(path="", source="log", events=count)
    walk = VerdictWalk(report)
    counted = _Counted(viewer if viewer is not None and not viewer.is_storyteller else None)

    def events() -> Iterator:
        ok = True
        for row in rows():
            event = decode_event(row.data)
            counted.seq = row.seq
            if ok:
                ok = walk.feed(row, event)
            counted.add(event)
            if each is not None:
                each(row.seq, event)
            yield event

    if found.seed:
        bad = fair.verify_draws(found.seed, session, events(), found.commitment or None, start=0)
        if bad is not None:
            seq = counted.seq if bad.index is not None else found.first_seq
            return review_checks.Verification(ok=False, events=count, first_bad_seq=seq, reason=bad.message, text=bad.message)
    else:
        for _ in events():
            pass
    if report.bad_verdict is not None:
        return review_checks.Verification(ok=False, events=count, first_bad_seq=report.bad_verdict.seq,
                               reason=report.bad_verdict.reason, text=report.bad_verdict.reason)
    closed = bool(found.seed)
    return review_checks.Verification(ok=True, events=count, closed=closed, draws_checked=counted.drawn if closed else 0,
                           text="hash chain intact")


class _Scan:
    """The first pass's findings beside the chain: the seed, its commitment, the first
    undecodable row."""

    def __init__(self) -> None:
        self.seed = self.commitment = None
        self.undecodable: tuple[int, str] | None = None
        self.first_seq: int | None = None

    def scan(self, rows: Iterable[Row]) -> Iterator[Row]:
        for row in rows:
            if self.first_seq is None:
                self.first_seq = row.seq
            if self.undecodable is None:
                try:
                    event = decode_event(row.data)
                except msgspec.DecodeError as exc:
                    self.undecodable = (row.seq, f"undecodable event: {exc}")
                else:
                    self.commitment = getattr(event, "seed_commitment", None) or self.commitment
                    self.seed = getattr(event, "seed", None) or self.seed
            yield row


class _Counted:
    """The draws the verification counts: every one, or those a viewer other than a
    storyteller holds (a count over every row would tell a player the size of the secret
    pools it may not see)."""

    def __init__(self, viewer: Actor | None) -> None:
        self.viewer, self.drawn, self.seq = viewer, 0, 0

    def add(self, event) -> None:
        if self.viewer is not None:
            event = views.view(event, self.viewer)
            if event is None:
                return
        self.drawn += len(getattr(event, "draws", ()) or ())


# ---------------------------------------------------------------- the bundle


class Taken(NamedTuple):
    """What a bundle is made from, taken from a builder at once (under a kept review's
    lock): the review as it stands, the disputes' ranks, the types seen, the last seq."""

    review: rv.Review
    flagged: dict[str, tuple[int, int]]
    types: frozenset[str]
    head: int


def taken(builder: rv.Builder) -> Taken:
    _, flagged = builder.marks()
    return Taken(builder.review(), dict(flagged), frozenset(builder.types), builder.head)


def bundle(store, took: Taken) -> Iterator[bytes]:
    """``page.bundle``'s JSON, part by part: the header first, the closing brace last."""
    review = took.review
    header = _encode(review_page.header(review, took.types))
    yield header[:-1]  # the object stays open: every other part goes in it
    counts = _Counts(review.viewer)
    verification = verify_session(lambda: session_rows(store, review.session, took.head), review.session,
                                  each=counts.add)
    yield b',"verification":' + _encode(verification)
    yield b',"disputes":' + _encode(_disputes(review, took.flagged))
    yield b',"challenges":'
    yield from _array(_briefs(review))
    # the fairness panel counts what the verification's second pass decoded; when that
    # pass stopped short (a broken chain, a bad draw), it walks the review's items
    fair_panel = counts.fairness(review) if counts.last == took.head else review_checks.fairness(review)
    yield b',"fairness":' + _encode(fair_panel)
    yield b',"items":'
    yield from _array(review_page.item_dict(i, event=False) for i in review.items)
    yield b"}"


class _Counts(review_checks.Counts):
    """The fairness panel's counts of the events the viewer saw, fed every stored event."""

    def __init__(self, viewer: Actor) -> None:
        super().__init__()
        self.viewer, self.last = viewer, 0
        self.whole = viewer.role == "storyteller"  # sees every event whole: no forms to make

    def add(self, seq: int, event) -> None:  # type: ignore[override]
        self.last = seq
        seen = event if self.whole else views.pick(views.forms(event), self.viewer)
        if seen is not None:
            super().add(seen)


def _disputes(review: rv.Review, flagged: dict[str, tuple[int, int]]) -> list[str]:
    """The flagged challenges by rank, ties in log order (as ``stories.disputes`` sorts)."""
    return sorted((cid for cid in review.challenge_items if cid in flagged), key=flagged.__getitem__)


def _briefs(review: rv.Review) -> Iterator[dict]:
    for cid, items in review.challenge_items.items():
        story = stories.summary_of(review, cid, items, steps=False)
        if story is not None:
            yield stories.brief_of(story)


def _array(values: Iterable) -> Iterator[bytes]:
    """A JSON array, ``ITEMS`` values to a part."""
    part: list[bytes] = []
    first = True
    for value in values:
        part.append(_encode(value))
        if len(part) >= ITEMS:
            yield (b"[" if first else b",") + b",".join(part)
            part, first = [], False
    if part:
        yield (b"[" if first else b",") + b",".join(part) + b"]"
    else:
        yield b"[]" if first else b"]"


def built(store, session: str, viewer: Actor, lang: str) -> rv.Builder:
    """A session's review kept as a server keeps one (paged from the store, without its
    rows), taken ``ROWS`` rows at a time: what an export or a script walks."""
    builder = rv.Builder(session, viewer, lang, keep_rows=False, store=store)
    while rows := store.read_after(session, builder.head, limit=ROWS):
        builder.extend(rows, decode_events([r.data for r in rows]))
    return builder
