"""A kept review's snapshot: after a restart, the review's first screen
comes from it and the rows after it, not from a walk over the whole night (14.5 s at
735,000 events, 3.4 s live).

What a kept ``review.Builder`` holds, all of it but what it reads again from the store
anyway (the items of a page: server/audit/paged.py): where it stands in the log, the
true state and the viewer's own (their compressed pages stored once each, as held),
the roster's names and scenes as they changed, each challenge's scene, each item's seq
and scene, each challenge's items by seq, the event types seen, what the disputes list
knows of each challenge (and which challenges were overruled or disputed), and the briefs told lately (the first screen's). A builder made from it answers what the builder it was
saved from answers (tests/server/test_restart.py, byte for byte). It is written in the one
snapshot format (server/store/snapshot.py: the envelope, its version, its checks and what
is skipped), through server/core/keep.py, as a view's is.
"""

from __future__ import annotations

import array
import collections
import sys
from typing import Any

import msgspec

from conteur.events.game import GameState, initial
from conteur.events.model import Actor
from conteur.events.narrate import Teller
from conteur.server.audit import paged
from conteur.server.audit import review as rv
from conteur.server.audit import stories
from conteur.server.core import keep

_LITTLE = sys.byteorder == "little"


def _bytes(a: array.array) -> bytes:
    if _LITTLE:
        return a.tobytes()
    a = array.array(a.typecode, a)
    a.byteswap()
    return a.tobytes()


def _array(code: str, data: bytes) -> array.array:
    a = array.array(code)
    a.frombytes(data)
    if not _LITTLE:
        a.byteswap()
    return a


class ReviewBody(msgspec.Struct, array_like=True):
    head: int
    truth: GameState
    seen: GameState | None  # the viewer's own fold; None for a storyteller (the truth)
    # the truth's compressed pages, the viewer's (stored as ``<name>/truth#<n>``, ``/seen#<n>``)
    pages: tuple[keep.Pages, keep.Pages]
    names: dict[str, str]
    scenes: dict[str, str]
    challenge_scene: dict[str, str | None]
    tellers: list[tuple[int, dict[str, str], dict[str, str]]]  # (from seq, names, scenes)
    seqs: bytes  # each item's seq, int64 little-endian
    item_scenes: bytes  # each item's scene, an index into scene_ids (-1: none), int32
    scene_ids: list[str]
    # each challenge's items by seq: the ids, how many items each, all their seqs end to
    # end (int32, int64): three objects, not one per challenge (70,000 at 735,000 events,
    # whose small allocations a server would keep as resident memory after the save)
    challenges: list[str]
    counts: bytes
    challenge_seqs: bytes
    types: list[str]
    marks: dict[str, stories.Mark]
    flagged: dict[str, tuple[int, int]]
    unsettled: list[str]
    touched: list[str]
    # the briefs told lately (the first screen's disputes and challenges), each as sent:
    # telling them again reads their challenges' pages from all over the night
    briefs: list[tuple[str, dict[str, Any]]] = []
    # the challenges with an item of each of ``review._MARKED``, in its order; None in a
    # body saved before they were kept: its builder looks through the items, as then
    marked: list[list[str]] | None = None


def _joined(arrays) -> array.array:
    out = array.array("q")
    for a in arrays:
        out.extend(a)
    return out


def name(viewer: Actor, lang: str) -> str:
    """The snapshot's name in the store: one per view class and language (the viewer's
    own name is not in it: the header is told with the asking viewer's)."""
    return f"review:{viewer.role}:{viewer.character or ''}:{lang}"


def _stored(b: rv.Builder) -> tuple[keep.Stored, keep.Stored]:
    """Which of the builder's compressed pages are stored already (kept on the builder)."""
    found = getattr(b, "_stored", None)
    if found is None:
        found = b._stored = (keep.Stored(), keep.Stored())
    return found


def dump(b: rv.Builder) -> ReviewBody:
    """What ``b`` (a kept builder: with a store, its items paged) holds, as a body that
    its later catch-ups leave alone (its dicts copied: pointers, not their values)."""
    items = b.items
    whole = b.viewer.role == "storyteller"
    by_challenge = b.by_challenge._seqs
    return ReviewBody(
        head=b.head, truth=b._truth, seen=None if whole else b._seen,
        pages=(keep.Pages({}, {}), keep.Pages({}, {})),  # named by ``write``
        names=dict(b.names), scenes=dict(b.scenes), challenge_scene=dict(b.challenge_scene),
        tellers=[(seq, t.names, t.scenes) for seq, t in b._tellers],
        seqs=_bytes(items.seqs), item_scenes=_bytes(items._scenes), scene_ids=list(items._scene_ids),
        challenges=list(by_challenge), counts=_bytes(array.array("i", map(len, by_challenge.values()))),
        challenge_seqs=_bytes(_joined(by_challenge.values())),
        types=sorted(b.types), marks=dict(b._marks), flagged=dict(b._flagged), unsettled=sorted(b._unsettled),
        touched=sorted(b.touched), briefs=list(b._briefs.items()),
        marked=None if b._marked is None else [sorted(b._marked[kind]) for kind in rv._MARKED])


class Taken(msgspec.Struct):
    """A kept review as it stood (``taken``), to be written by ``write`` in another thread."""

    session: str
    view: str
    body: ReviewBody  # its states' pages still in them: ``write`` takes them out and names them
    stored: tuple[keep.Stored, keep.Stored]  # the builder's: touched by the writing thread only


def taken(b: rv.Builder) -> Taken:
    """What ``write`` saves of ``b``, taken under its lock: a copy of what its next
    catch-up changes, so the encoding and the write need no lock (http_review.py)."""
    return Taken(b.session, name(b.viewer, b.lang), dump(b), _stored(b))


def write(store, t: Taken) -> bool:
    """Saves a taken review, with its states' compressed pages that are not stored yet."""
    truth, truth_pages, truth_new = keep.pages_out(f"{t.view}/truth", t.body.truth, t.stored[0])
    seen, seen_pages, seen_new = keep.pages_out(f"{t.view}/seen", t.body.seen or initial(), t.stored[1])
    body = msgspec.structs.replace(t.body, truth=truth, seen=None if t.body.seen is None else seen,
                                   pages=(truth_pages, seen_pages))
    return keep.save(store, t.session, t.view, body.head, body, [truth_new, seen_new])


def load(store, session: str, viewer: Actor, lang: str, upto: int) -> rv.Builder | None:
    """A kept builder made from the review's usable snapshot at or before ``upto``, or
    None (none, stale, undecodable: the review is walked from the log as before)."""
    found = keep.load(store, session, name(viewer, lang), upto, ReviewBody)
    if found is None:
        return None
    return keep.guarded(lambda: _builder(store, session, viewer, lang, found[1]))


def _builder(store, session: str, viewer: Actor, lang: str, body: ReviewBody) -> rv.Builder:
    whole = viewer.role == "storyteller"
    if whole != (body.seen is None):
        raise ValueError("a review of another view class")
    b = rv.Builder(session, viewer, lang, keep_rows=False, store=store)
    b.head = body.head
    back = [keep.pages_in(store, session, f"{name(viewer, lang)}/{part}", state, pages)
            for part, state, pages in zip(("truth", "seen"), (body.truth, body.seen or initial()), body.pages)]
    if None in back:
        raise ValueError("a compressed page is missing or another")
    (b._truth, truth_stored), (b._seen, seen_stored) = back
    b._stored = (truth_stored, seen_stored)
    b.names.update(body.names)  # the builder's teller reads these very dicts
    b.scenes.update(body.scenes)
    b.challenge_scene = body.challenge_scene
    b._tellers = [(seq, Teller(dict(names), b.lang, dict(scenes))) for seq, names, scenes in body.tellers]
    b._teller = b._tellers[-1][1]
    items = b.items
    items.seqs = _array("q", body.seqs)
    items._scenes = _array("i", body.item_scenes)
    if len(items.seqs) != len(items._scenes):
        raise ValueError("items and their scenes differ in length")
    items._scene_ids = list(body.scene_ids)
    items._scene_index = {scene: i for i, scene in enumerate(items._scene_ids)}
    # the page being filled is held whole by a builder: read again from the store
    start = len(items.seqs) // paged.PAGE * paged.PAGE
    items._hot_start = start
    items._hot = b._rebuild(items.seqs[start:], [items.scene_of(i) for i in range(start, len(items.seqs))]) \
        if start < len(items.seqs) else []
    counts, seqs = _array("i", body.counts), _array("q", body.challenge_seqs)
    if len(counts) != len(body.challenges) or sum(counts) != len(seqs):
        raise ValueError("the challenges' items do not add up")
    by_challenge, at = {}, 0
    for cid, count in zip(body.challenges, counts):
        by_challenge[cid], at = seqs[at:at + count], at + count
    b.by_challenge._seqs = by_challenge
    b.types = set(body.types)
    b._marks = body.marks
    b._flagged = body.flagged
    b._unsettled = set(body.unsettled)
    b.touched = set(body.touched)
    b._briefs = collections.OrderedDict(body.briefs)
    if body.marked is None or len(body.marked) != len(rv._MARKED):
        b._marked = None
    else:
        b._marked = {kind: set(ids) for kind, ids in zip(rv._MARKED, body.marked)}
    return b

