"""A review's checks: the session's hash chain and fair draws (``verify``, with
``conteur verify``'s checks), and the dice's fairness (``fairness``: each die's faces,
the throws, against a uniform draw)."""

from __future__ import annotations

import collections
import math
from collections import Counter

import msgspec

from conteur.events import action, met, views
from conteur.events.model import Actor, Event
from conteur.server.audit.review import each_challenge
from conteur.server.audit.timeline import Review
from conteur.server.store.chain import Row, verify_rows


class Verification(msgspec.Struct, kw_only=True):
    ok: bool
    events: int
    first_bad_seq: int | None = None
    reason: str = ""
    closed: bool = False  # the seed is revealed: draws were recomputed
    draws_checked: int = 0
    text: str = ""


def _draws_seen(rows: list[Row], viewer: Actor) -> int:
    """How many draws ``viewer`` holds: a count over every row would tell a player the
    size of the secret pools it may not see."""
    from conteur.events import views
    from conteur.server.store.codec import decode_event

    seen = (views.view(decode_event(row.data), viewer) for row in rows)
    return sum(len(getattr(e, "draws", ()) or ()) for e in seen if e is not None)


def verify(rows: list[Row], path: str = "", viewer: Actor | None = None) -> Verification:
    """The session's hash chain, then (once its seed is revealed) every fair draw. For a
    ``viewer`` other than a storyteller, ``draws_checked`` counts the draws it sees."""
    from conteur.server.audit.verify import Report, check_draws, check_verdicts

    count, broken = verify_rows(rows)
    if broken is not None:
        return Verification(ok=False, events=count, first_bad_seq=broken.seq, reason=broken.reason,
                            text=str(broken))
    report = Report(path=path, source="log", events=count)
    check_draws(rows, report)
    if report.bad_draw is not None:
        return Verification(ok=False, events=count, first_bad_seq=report.bad_draw.seq,
                            reason=report.bad_draw.reason, text=report.bad_draw.reason)
    check_verdicts(rows, report)
    if report.bad_verdict is not None:
        return Verification(ok=False, events=count, first_bad_seq=report.bad_verdict.seq,
                            reason=report.bad_verdict.reason, text=report.bad_verdict.reason)
    drawn = report.draws_checked
    if viewer is not None and not viewer.is_storyteller and report.sessions_checked:
        drawn = _draws_seen(rows, viewer)
    return Verification(ok=True, events=count, closed=report.sessions_checked > 0,
                        draws_checked=drawn, text="hash chain intact")


class Bars(msgspec.Struct, kw_only=True):
    """Observed counts of each face against the uniform share."""

    label: str
    faces: list[str]
    counts: list[int]
    total: int
    expected: float  # the uniform count per face
    chi_square: float
    df: int
    p_value: float | None  # Wilson-Hilferty approximation; None when too few draws


class Tally(msgspec.Struct, kw_only=True):
    character: str
    name: str
    won: int = 0
    lost: int = 0
    offline_won: int = 0
    offline_lost: int = 0
    contests_won: int = 0  # action-dice oppositions (ACT-12)
    contests_lost: int = 0


class Fairness(msgspec.Struct, kw_only=True):
    dice: list[Bars]
    throws: Bars | None
    tallies: list[Tally]


def p_value(chi2: float, df: int) -> float:
    """Upper tail of chi-square by Wilson-Hilferty: good to ~1e-3 for df >= 1."""
    if df <= 0:
        return 1.0
    h = 2 / (9 * df)
    z = ((chi2 / df) ** (1 / 3) - (1 - h)) / math.sqrt(h)
    return 0.5 * math.erfc(z / math.sqrt(2))


def bars(label: str, faces: list[str], observed: Counter) -> Bars:
    total = sum(observed.get(f, 0) for f in faces)
    counts = [observed.get(f, 0) for f in faces]
    expected = total / len(faces) if faces else 0.0
    chi2 = sum((c - expected) ** 2 / expected for c in counts) if expected else 0.0
    df = len(faces) - 1
    enough = expected >= 5  # Pearson's rule of thumb
    return Bars(label=label, faces=faces, counts=counts, total=total, expected=expected,
                chi_square=round(chi2, 4), df=df, p_value=round(p_value(chi2, df), 4) if enough else None)


DIE_LABELS = {3: "d3 (server throws)", 6: "d6 (D+/-)", 8: "d8", 10: "d10"}


def fairness(review: Review) -> Fairness:
    """Every die face and every throw the viewer saw, against the uniform share (FAIR-2
    proves each draw; this shows the evening's spread), and per-character tallies."""
    counts = Counts()
    for item in review.items:
        counts.add(item.event)
    return counts.fairness(review)


class Counts:
    """What the fairness panel counts of the events a viewer saw, fed one at a time (the
    streamed bundle feeds it the events its verification decodes, server/audit/streamed.py)."""

    def __init__(self) -> None:
        self.faces: dict[int, Counter] = collections.defaultdict(Counter)  # not setdefault: a Counter a draw
        self.throws: Counter = Counter()
        self.contests: collections.Counter[tuple[str, str]] = Counter()
        self.sealed_seen: set[str] = set()  # ACT-12: sealed rolls this viewer saw whole when rolled

    def add(self, event: Event) -> None:
        faces = self.faces
        for record in getattr(event, "draws", None) or ():
            faces[record.sides][str(record.face)] += 1
        if isinstance(event, action.ActionRolled) and event.sealed:
            self.sealed_seen.add(event.roll)
        elif isinstance(event, action.ActionRevealed) and event.roll not in self.sealed_seen:
            for record in event.rolled.draws:  # first seen here: counted once
                faces[record.sides][str(record.face)] += 1
        if isinstance(event, met.ThrowsRevealed):
            self.throws.update(event.throws.values())
        elif isinstance(event, action.OppositionSettled):
            loser = event.defender if event.winner == event.initiator else event.initiator
            self.contests[(event.winner, loser)] += 1
        elif isinstance(event, action.OppositionRuled) and event.winner is not None:
            # a contest a storyteller settled counts as ruled, as an overruled challenge does
            self.contests[(event.winner, event.opponent if event.winner == event.character else event.character)] += 1

    def fairness(self, review: Review) -> Fairness:
        return _fairness(review, self.faces, self.throws, self.contests)


def _fairness(review: Review, faces: dict[int, Counter], throws: Counter,
              contests: Counter[tuple[str, str]]) -> Fairness:
    dice = [bars(DIE_LABELS.get(sides, f"d{sides}"), [str(f) for f in range(1, sides + 1)], c)
            for sides, c in sorted(faces.items())]
    choices = ["rock", "paper", "scissors"]
    throw_bars = bars("throws", choices, throws) if throws else None
    if throw_bars is not None and throws.get("bomb"):
        throw_bars.label = f"throws ({throws['bomb']} bomb not counted)"
    tallies = {c: Tally(character=c, name=n) for c, n in review.names.items()}

    def count(winner: str | None, loser: str | None, won: str, lost: str, times: int = 1) -> None:
        if winner in tallies:
            setattr(tallies[winner], won, getattr(tallies[winner], won) + times)
        if loser in tallies:
            setattr(tallies[loser], lost, getattr(tallies[loser], lost) + times)

    for ch in each_challenge(review.state.met):
        if ch.status == "resolved":
            count(ch.winner, ch.loser, "won", "lost")
    for record in review.state.offline.records.values():
        if record.status in ("confirmed", "ruled"):
            count(record.winner, record.loser, "offline_won", "offline_lost")
    for (winner, loser), times in contests.items():
        count(winner, loser, "contests_won", "contests_lost", times)
    return Fairness(dice=dice, throws=throw_bars, tallies=list(tallies.values()))
