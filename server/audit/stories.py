"""A review's challenges told: who saw each step (``seen_by``), each challenge's story
(``challenge_story``, ``stories``), its mark (winner, status, dispute) and the disputes
first (``disputes``)."""

from __future__ import annotations

from typing import Any, Iterable

import msgspec

from conteur.events import met, offline, views
from conteur.events.model import Event
from conteur.events.narrate import challenge_sentence, group_sentence, offline_sentence, sentence
from conteur.server.audit.timeline import Item, Review


class Seen(msgspec.Struct, frozen=True, kw_only=True):
    whole: list[str]  # names, "storytellers" first
    sealed: list[str]  # saw a sealed form
    hidden: list[str]  # saw nothing


# The roles beside the characters' names, in the review's language.
ROLES = {"en": ("storytellers", "observers"), "fr": ("conteurs", "observateurs")}


def seen_by(review: Review, item: Item) -> Seen:
    """Who saw this event, and in which form, when it was sent."""
    storytellers, observers = ROLES.get(review.lang, ROLES["en"])
    everyone = [review.names[c] for c in review.names] + [observers]
    owners, sealed = item.owners, item.sealed
    if sealed is None:  # a storyteller's item: its event is whole
        f = views.forms(item.event)
        owners, sealed = f.owners, f.public is not None
    if owners is None:
        return Seen(whole=[storytellers] + everyone, sealed=[], hidden=[])
    whole = [storytellers] + [name for c, name in review.names.items() if c in owners]  # roster order
    others = [n for n in everyone if n not in whole]
    return Seen(whole=whole, sealed=others if sealed else [], hidden=[] if sealed else others)


class Step(msgspec.Struct, kw_only=True):
    seq: int
    at: str
    actor: str
    type: str
    text: str
    seen: Seen
    event: Any


class Claim(msgspec.Struct, frozen=True, kw_only=True):
    """What one side of a challenge played by hand says (events/offline.py)."""

    by: str  # the character
    kind: str  # recorded | confirmed | disputed
    winner: str | None  # who it says won; None: a dispute naming no winner
    reason: str = ""


class Story(msgspec.Struct, kw_only=True):
    id: str
    kind: str  # met | offline
    sentence: str
    scene: str | None
    sides: list[str]
    status: str
    winner: str | None
    loser: str | None
    reason: str
    disputed: bool
    ruled: bool
    first_seq: int
    last_seq: int
    steps: list[Step]
    claims: list[Claim] = []  # offline records: each side's word, in log order
    results: dict[str, str] = {}  # a group challenge: each defender's pair's winner, once it stands


class Mark(msgspec.Struct, frozen=True, kw_only=True):
    """What the disputes list needs of a challenge, without its sentence."""

    kind: str  # met | offline
    status: str
    disputed: bool
    ruled: bool
    last_seq: int


def _any_event(items: list[Item], kind: type) -> bool:
    # a loop, not ``any`` over a generator: the first screen marks every challenge of the
    # night, all its items (a generator's frame per challenge was a quarter of the marks)
    for item in items:
        if isinstance(item.event, kind):
            return True
    return False


def mark_of(review: Review, challenge_id: str, items: list[Item], get=None, marked=None) -> Mark | None:
    """``get``: how a met challenge is found by id (``met.State.get`` unless given);
    ``marked``: ``Builder._marked`` (else ``items`` are looked through)."""
    if not items:
        return None
    first = items[0].event
    if isinstance(first, offline.OfflineChallengeRecorded):
        record = review.state.offline.records.get(challenge_id)
        status = record.status if record else "recorded"
        return Mark(kind="offline", status=status,
                    disputed=_any_event(items, offline.OfflineChallengeDisputed) if marked is None
                    else challenge_id in marked[offline.OfflineChallengeDisputed],
                    ruled=status == "ruled", last_seq=items[-1].seq)
    ch = (get or review.state.met.get)(challenge_id)
    if ch is None:
        return None
    overruled = _any_event(items, met.ChallengeOverruled) if marked is None \
        else challenge_id in marked[met.ChallengeOverruled]
    return Mark(kind="met", status=ch.status, disputed=overruled, ruled=overruled or ch.status == "cancelled",
                last_seq=items[-1].seq)


def summary_of(review: Review, challenge_id: str, items: list[Item], *, steps: bool = True,
             mark: Mark | None = None) -> Story | None:
    """``mark``: the challenge's mark when already known (a ``Builder``'s, up to date)."""
    if mark is None:
        mark = mark_of(review, challenge_id, items)
    if mark is None:
        return None
    t = review.teller
    first = items[0].event
    # a brief has no steps: who saw each one is worked out only for a challenge's own page
    steps = [Step(seq=i.seq, at=i.at, actor=i.actor, type=i.type, text=i.text, seen=seen_by(review, i),
                  event=i.event) for i in items] if steps else []
    common = dict(id=challenge_id, kind=mark.kind, scene=items[0].scene, status=mark.status,
                  disputed=mark.disputed, ruled=mark.ruled, first_seq=items[0].seq, last_seq=mark.last_seq,
                  steps=steps)
    if mark.kind == "offline":
        record = review.state.offline.records.get(challenge_id)
        # a record is the recorder's word until the opponent confirms it or a storyteller
        # rules: no winner before, only the claims (a disputed record has two)
        settled = record is not None and mark.status in ("confirmed", "ruled")
        return Story(**common, sentence=offline_sentence(first, t), sides=[first.recorder, first.opponent],
                     winner=record.winner if settled else None, loser=record.loser if settled else None,
                     reason=(record.ruling or record.dispute) if record else "",
                     claims=offline_claims(i.event for i in items))
    ch = review.state.met.get(challenge_id)
    if ch.defenders:  # a group: its story is its pairs' too, told as one (MET-1)
        whole = group_items(review, challenge_id, items)
        if common["steps"]:
            common["steps"] = [Step(seq=i.seq, at=i.at, actor=i.actor, type=i.type, text=i.text,
                                    seen=seen_by(review, i), event=i.event) for i in whole]
        pairs = [review.state.met.get(p) for p in ch.pairs]
        results = {p.defender: p.winner for p in pairs if p is not None and p.status == "resolved" and p.winner}
        return Story(**common, sentence=group_sentence((i.event for i in whole), t),
                     sides=[ch.initiator, *ch.defenders], winner=None, loser=None, reason=ch.reason,
                     results=results)
    return Story(**common, sentence=challenge_sentence((i.event for i in items), t), sides=list(ch.sides),
                 winner=ch.winner, loser=ch.loser, reason=ch.reason)


def group_items(review: Review, challenge_id: str, items: list[Item] | None = None) -> list[Item]:
    """A group challenge's items and its pairs', in log order (a pair's own are under its id)."""
    own = review.by_challenge(challenge_id) if items is None else items
    first = own[0].event if own else None
    if not isinstance(first, met.GroupChallengeIssued):
        return own
    merged = list(own)
    for pair in first.pairs:
        merged += review.by_challenge(pair)
    return sorted(merged, key=lambda i: i.seq)


def offline_claims(events: Iterable[Event]) -> list[Claim]:
    """Each side's word on a challenge played by hand: the recorder's, then the opponent's
    confirmation or dispute (a ruling is not a claim: it is the outcome)."""
    claims: list[Claim] = []
    recorded: offline.OfflineChallengeRecorded | None = None
    for e in events:
        if isinstance(e, offline.OfflineChallengeRecorded):
            recorded = e
            claims.append(Claim(by=e.recorder, kind="recorded", winner=e.winner))
        elif isinstance(e, offline.OfflineChallengeConfirmed) and recorded is not None:
            claims.append(Claim(by=e.opponent, kind="confirmed", winner=recorded.winner))
        elif isinstance(e, offline.OfflineChallengeDisputed):
            claims.append(Claim(by=e.opponent, kind="disputed", winner=e.winner, reason=e.reason))
    return claims


def challenge_story(review: Review, challenge_id: str) -> Story | None:
    """The whole story of one challenge (or offline record): its sentence, outcome and
    every step with who saw what; None when the viewer sees no such challenge."""
    return summary_of(review, challenge_id, review.by_challenge(challenge_id))


def stories(review: Review, *, steps: bool = True) -> list[Story]:
    out = [summary_of(review, cid, items, steps=steps) for cid, items in review.challenge_items.items()]
    return [s for s in out if s is not None]


def rank_of(s: Story | Mark) -> tuple[int, int]:
    if s.kind == "offline" and s.status == "disputed":
        return (0, -s.last_seq)
    if s.kind == "offline" and s.status == "recorded":
        return (1, -s.last_seq)
    return (2, -s.last_seq)


def is_flagged(s: Story | Mark) -> bool:
    return s.disputed or s.ruled or (s.kind == "offline" and s.status == "recorded")


def disputes(review: Review, all_stories: list[Story] | None = None) -> list[Story]:
    """Disputed items first: offline records disputed and not yet ruled, awaiting an
    answer, then every ruled, overruled or cancelled challenge, newest first."""
    all_stories = stories(review) if all_stories is None else all_stories
    return sorted([s for s in all_stories if is_flagged(s)], key=rank_of)


def brief_of(story: Story) -> dict:
    out = msgspec.structs.asdict(story)
    out.pop("steps")
    return out
