"""What the review page is answered: the whole bundle (``bundle``: exports and scripts),
the first screen, the same size at any length of night (``first_screen``), and the
timeline and challenges by pages."""

from __future__ import annotations

import bisect
import itertools
from typing import Iterable

import msgspec

from conteur.events.narrate import sentence
from conteur.server.audit.checks import fairness, verify
from conteur.server.audit.review import Builder, collector_paused
from conteur.server.audit.stories import brief_of, disputes, stories
from conteur.server.audit.timeline import Item, Review, session_wide
from conteur.server.core import venue_time


def item_dict(item: Item, *, event: bool = True) -> dict:
    told = item.told  # ``Item.text`` without its call: a first screen has 1,500 rows
    if told is None:
        told = item.told = sentence(item.event, item.teller)
    out = {
        "seq": item.seq, "at": item.at, "actor": item.actor, "type": item.type, "text": told,
        "characters": list(item.characters), "scene": item.scene, "challenge": item.challenge,
        "wide": session_wide(item),
    }
    if event:
        out["event"] = msgspec.to_builtins(item.event)
    return out


def header(review: Review, types: Iterable[str]) -> dict:
    s = review.state.session
    first_at = review.items[0].at if review.items else None
    return {
        "session": review.session, "name": s.name, "chronicle": s.chronicle, "scenario": s.scenario,
        "status": s.status, "head": review.state.head, "lang": review.lang,
        "viewer": msgspec.to_builtins(review.viewer),
        "characters": review.names, "scenes": review.scenes,
        "types": sorted(types),
        # the page shows the venue's time (server/core/venue_time.py); the stamps stay UTC
        "utc_offset_minutes": venue_time.offset_minutes(first_at) if first_at else 0,
        "zone": venue_time.offset_label(first_at) if first_at else "UTC",
    }


def held(review: Review) -> Review:
    """The review with its items in memory: a kept review's pages are read from the store
    again when walked (server/audit/paged.py), and the bundle walks them four times (its
    header, the stories, the fairness, the timeline), so it reads them once here. Its
    answer holds a dict per item anyway: holding the items too while it is built does not
    change its order of size, and both go when it is sent."""
    if isinstance(review.items, list):
        return review
    items = list(review.items)
    by_seq = {item.seq: item for item in items}
    return msgspec.structs.replace(review, items=items, challenge_items={
        cid: [by_seq[seq] for seq in seqs] for cid, seqs in review.challenge_items.seqs()})


def bundle(review: Review) -> dict:
    """Everything the review page shows, in one answer (exports and scripts; the page
    itself loads ``first_screen`` and the rest by parts)."""
    review = held(review)
    all_stories = stories(review, steps=False)  # briefs: who saw each step is for a challenge's page
    return {
        **header(review, {i.type for i in review.items}),
        "verification": msgspec.to_builtins(verify(review.rows)),
        "disputes": [s.id for s in disputes(review, all_stories)],
        "challenges": [msgspec.to_builtins(brief_of(st)) for st in all_stories],
        "fairness": msgspec.to_builtins(fairness(review)),
        "items": [item_dict(i, event=False) for i in review.items],  # the timeline endpoint has the events
    }


FIRST_ITEMS = 1500  # the timeline rows the page draws at first (review.js SHOWN)


FIRST_CHALLENGES = 200


FIRST_DISPUTES = 200


def first_screen(builder: Builder) -> dict:
    """What the review page shows first, the same size at any length of night:
    the header, the disputes first (the first ``FIRST_DISPUTES``, with their briefs), the
    first ``FIRST_CHALLENGES`` challenges and ``FIRST_ITEMS`` timeline rows, and how many
    there are of each. The verification and the fairness panel come by their own requests
    (``/review/verify``, ``/review/fairness``), the rest by pages (``items_page``,
    ``challenges_page``)."""
    with collector_paused():
        return _first_screen(builder)


def _first_screen(builder: Builder) -> dict:
    marks, flagged = builder.marks()
    review = builder.review(copy=False)
    shown = sorted(flagged, key=flagged.__getitem__)[:FIRST_DISPUTES]
    return {
        **header(review, builder.types),
        "partial": True,
        "counts": {"items": len(review.items), "challenges": len(marks), "disputes": len(flagged)},
        "disputes": shown,
        "disputed": [builder.brief(cid) for cid in shown],
        "challenges": challenges_page(builder, 0, FIRST_CHALLENGES),
        "items": [item_dict(i, event=False) for i in review.items[:FIRST_ITEMS]],
    }


def items_page(review: Review, after: int, limit: int) -> list[dict]:
    """Timeline rows after seq ``after`` (without their events), at most ``limit``."""
    index_after = getattr(review.items, "index_after", None)  # a kept review's pages: by their seqs
    start = index_after(after) if index_after else bisect.bisect_right(review.items, after, key=lambda i: i.seq)
    return [item_dict(i, event=False) for i in review.items[start:start + limit]]


def challenges_page(builder: Builder, offset: int, limit: int) -> list[dict]:
    """Challenge briefs in log order, from the ``offset``-th."""
    marks, _ = builder.marks()
    ids = itertools.islice((cid for cid in builder.by_challenge if cid in marks), offset, offset + limit)
    return [builder.brief(cid) for cid in ids]
