"""`conteur verify`: the hash chain, then every fair draw of every closed session, then
every verdict re-derived from its recorded inputs (``events.verdicts``)."""

from __future__ import annotations

from pathlib import Path
from typing import Iterable

import msgspec

from conteur.server.core.pages import compressed
from conteur.server.store.chain import ChainBreak, LogLineError, Row, read_jsonl, verify_rows
from conteur.server.store.interface import EventStore
from conteur.server.store.sqlite import file_rows


class DrawMismatch(msgspec.Struct, frozen=True):
    session: str
    seq: int
    reason: str


class VerdictMismatch(msgspec.Struct, frozen=True):
    session: str
    seq: int
    reason: str


class Report(msgspec.Struct, kw_only=True):
    path: str
    source: str  # "database" | "log"
    events: int = 0
    first_break: ChainBreak | None = None
    sessions_checked: int = 0  # closed sessions whose draws were recomputed
    draws_checked: int = 0
    bad_draw: DrawMismatch | None = None
    verdicts_checked: int = 0  # events whose verdict was derived again
    bad_verdict: VerdictMismatch | None = None
    error: str | None = None

    @property
    def ok(self) -> bool:
        return (self.first_break is None and self.bad_draw is None and self.bad_verdict is None
                and self.error is None)

    def text(self) -> str:
        if self.error:
            return f"FAILED {self.path}: {self.error}"
        if self.first_break:
            return f"FAILED {self.path}: {self.first_break} ({self.events} events verified before it)"
        if self.bad_draw:
            b = self.bad_draw
            return f"FAILED {self.path}: draw in seq {b.seq} of session {b.session}: {b.reason}"
        if self.bad_verdict:
            v = self.bad_verdict
            return f"FAILED {self.path}: verdict in seq {v.seq} of session {v.session}: {v.reason}"
        return (f"OK {self.path}: {self.events} events, hash chain intact; "
                f"{self.draws_checked} draws recomputed in {self.sessions_checked} closed session(s); "
                f"{self.verdicts_checked} verdicts derived again")


def _is_sqlite(path: Path) -> bool:
    with open(path, "rb") as f:
        return f.read(16) == b"SQLite format 3\x00"


def verify_path(path: Path, *, progress_factory=None) -> Report:
    path = Path(path)
    database = _is_sqlite(path)
    report = Report(path=str(path), source="database" if database else "log")
    rows = list(file_rows(path)) if database else None  # never writes, not even a -wal
    try:
        if rows is None:
            rows = list(read_jsonl(path))
    except LogLineError as exc:
        report.error = str(exc)
        return report
    return check_rows(rows, report, gapless=database, progress_factory=progress_factory)


def verify_store(store: EventStore, name: str, *, progress_factory=None) -> Report:
    """The same checks on an open store's whole log (``name`` says which, in the report)."""
    return check_rows(list(store.rows()), Report(path=name, source="database"), gapless=True,
                      progress_factory=progress_factory)


def check_rows(rows: list[Row], report: Report, *, gapless: bool, progress_factory=None) -> Report:
    """The chain (without a hole in the seqs, for a whole log: ``gapless``), then the
    draws, then the verdicts; the first failure is in the report."""
    progress = progress_factory("verifying", len(rows)) if progress_factory else None
    report.events, report.first_break = verify_rows(rows, gapless=gapless, progress=progress)
    if progress:
        progress.close()
    if report.first_break is None:
        check_draws(rows, report)
        if report.bad_draw is None:
            check_verdicts(rows, report)
    return report


def check_verdicts(rows: Iterable[Row], report: Report) -> None:
    """Every verdict (successes, PS, a round's or a contest's winner...) derived again from
    the inputs its event records, on the state folded up to it; the first seq whose
    recorded verdict the rules do not give is named."""
    from conteur.server.store.codec import decode_event

    walk = VerdictWalk(report)
    for row in rows:
        try:
            event = decode_event(row.data)
        except msgspec.DecodeError as exc:
            report.bad_verdict = VerdictMismatch(row.session, row.seq, f"undecodable event: {exc}")
            return
        if not walk.feed(row, event):
            return


COMPRESS_EVERY = 2000  # events between two passes compressing a walk's states' final pages


class VerdictWalk:
    """The verdicts' check one event at a time (``check_verdicts``; a streamed
    verification feeds it the events it decodes for the draws, server/audit/streamed.py)."""

    def __init__(self, report: Report) -> None:
        from conteur.events import game
        from conteur.events.verdicts import Verdicts

        self.report = report
        self.states: dict[str, object] = {}
        self.checkers: dict[str, Verdicts] = {}
        self._initial, self._evolve, self._verdicts = game.initial, game.evolve, Verdicts
        self._fed = 0

    def feed(self, row: Row, event) -> bool:
        """Checks one event's verdict; False (and the report says why) once one is bad."""
        state = self.states.get(row.session) or self._initial()
        self._fed += 1
        if self._fed % COMPRESS_EVERY == 0:
            # the finished challenges' final pages compressed, as the command path keeps
            # them (server/core/pages.py): the walk's memory does not grow with the night,
            # and every verdict and evolver reads the same state
            state = compressed(state)
        checker = self.checkers.get(row.session)
        if checker is None:
            checker = self.checkers[row.session] = self._verdicts()
        reason = checker.check(state, event)
        if reason is None:
            try:
                self.states[row.session] = self._evolve(state, event)
            except Exception as exc:  # noqa: BLE001 - a forged event the rules cannot fold
                reason = f"the event does not follow from the ones before it ({type(exc).__name__}: {exc})"
        if reason is not None:
            self.report.bad_verdict = VerdictMismatch(row.session, row.seq, reason)
            return False
        self.report.verdicts_checked += checker.judges(event)
        return True


def check_draws(rows: list[Row], report: Report) -> None:
    """FAIR-2: recompute every recorded draw of each session whose seed was revealed."""
    from conteur.events import fair
    from conteur.server.store.codec import decode_event

    by_session: dict[str, list[Row]] = {}
    for row in rows:
        by_session.setdefault(row.session, []).append(row)
    for session, srows in by_session.items():
        commitment = seed = None
        decoded = []
        for row in srows:
            try:
                event = decode_event(row.data)
            except msgspec.DecodeError as exc:
                report.bad_draw = DrawMismatch(session, row.seq, f"undecodable event: {exc}")
                return
            decoded.append((row.seq, event))
            commitment = getattr(event, "seed_commitment", None) or commitment
            seed = getattr(event, "seed", None) or seed
        if not seed:
            continue  # session still open: its seed is secret, its draws not yet checkable
        report.sessions_checked += 1
        events = [event for _, event in decoded]
        bad = fair.verify_draws(seed, session, events, commitment or None, start=0)
        if bad is not None:
            seq = decoded[bad.index][0] if bad.index is not None else srows[0].seq
            report.bad_draw = DrawMismatch(session, seq, bad.message)
            return
        report.draws_checked += sum(len(getattr(e, "draws", ()) or ()) for e in events)
