"""Folding many sessions at once: a server's start-up, or a whole chronicle replayed.

Folding is CPU-bound Python, so a big fold is split over worker processes, sessions dealt
out by the events each has to fold (a Raspberry Pi has four cores). Each worker folds its
sessions one by one as ``SQLiteStore.load_state`` folds one (``sqlite.fold_session``).
One scan of the log for several sessions is no faster per core, because switching
between sessions' states and rulesets at every row costs what the shared scan saves. The workers only read; the states come back
msgpack-encoded, as snapshots are stored, and this process saves the snapshots so the
next start-up is fast.

This is ``SQLiteStore.load_states``: the workers open the chronicle's file themselves,
read-only. Other stores fold in their own way behind ``EventStore.load_states``.
"""

from __future__ import annotations

import logging
import os
import sqlite3
import subprocess
import sys
from pathlib import Path
from typing import Sequence

import msgspec

from conteur.events.game import GameState
from conteur.server.store import snapshot
from conteur.server.store.sqlite import SQLiteStore, fold_session

log = logging.getLogger("conteur.replay")

# below this many events to fold, starting worker processes (each imports the rules
# engines, about a tenth of a second) costs more than it saves
PARALLEL_FROM = 50_000


class Folded(msgspec.Struct, frozen=True, gc=False):
    state: GameState  # ``head`` set to the last seq folded (or the snapshot's)
    folded: int  # events folded after the snapshot


def fold_sessions(path: str, sessions: Sequence[str], *, use_snapshots: bool = True) -> dict[str, Folded]:
    """Every session's state, folded in this process, session by session
    (``sqlite.fold_session``)."""
    conn = sqlite3.connect(path)
    try:
        return {sid: Folded(*fold_session(conn, sid, use_snapshots=use_snapshots)) for sid in dict.fromkeys(sessions)}
    finally:
        conn.close()


def _fold_in_worker(path: str, sessions: list[str], use_snapshots: bool) -> list[tuple[str, int, bytes]]:
    return [(s, f.folded, snapshot.pack(f.state))
            for s, f in fold_sessions(path, sessions, use_snapshots=use_snapshots).items()]


def _work(store: SQLiteStore, sessions: list[str], use_snapshots: bool) -> dict[str, int]:
    """Events each session has to fold: its span after its newest snapshot (an
    overestimate where sessions interleave, alike for all of them)."""
    work = {}
    for sid in sessions:
        first, last = store.session_span(sid) or (0, 0)
        start = store.snapshot_head(sid) if use_snapshots else 0
        work[sid] = max(0, last - max(start, first - 1))
    return work


def deal(work: dict[str, int], workers: int) -> list[list[str]]:
    """Sessions dealt into ``workers`` parts of about equal work, biggest first."""
    parts: list[tuple[int, list[str]]] = [(0, []) for _ in range(max(1, workers))]
    for sid in sorted(work, key=lambda s: -work[s]):
        load, part = min(parts, key=lambda p: p[0])
        parts.remove((load, part))
        parts.append((load + work[sid], part + [sid]))
    return [part for _, part in parts if part]


def load_states(store: SQLiteStore, sessions: Sequence[str] | None = None, *,
                use_snapshots: bool = True, workers: int | None = None) -> dict[str, GameState]:
    """The current state of every session asked for (default: all), as ``load_state``
    gives it one by one; saves a snapshot for each session whose tail was long.

    ``workers``: processes to fold in; by default one per core when the fold is big
    enough to be worth it, else this process alone.
    """
    sessions = list(dict.fromkeys(store.sessions() if sessions is None else sessions))
    if store.path != ":memory:":  # another connection would see another database
        work = _work(store, sessions, use_snapshots)
        if workers is None:
            workers = (os.cpu_count() or 1) if sum(work.values()) >= PARALLEL_FROM else 1
        parts = deal(work, min(workers, len(sessions)))
        folded = None
        if len(parts) > 1:
            try:
                folded = _fold_in_processes(store.path, parts, use_snapshots)
            except (OSError, RuntimeError, msgspec.DecodeError) as error:
                # slower is better than not starting: fold here, as without workers
                log.warning("replay workers failed (%s); folding in this process", error)
        if folded is None:
            folded = fold_sessions(store.path, sessions, use_snapshots=use_snapshots)
        states = {}
        for sid, done in folded.items():
            if use_snapshots and done.folded >= store.snapshot_every:
                store.save_snapshot(sid, done.state.head, done.state)
            states[sid] = done.state
        return {sid: states[sid] for sid in sessions}
    return {sid: store.load_state(sid, use_snapshots=use_snapshots) for sid in sessions}


def _fold_in_processes(path: str, parts: list[list[str]], use_snapshots: bool) -> dict[str, Folded]:
    # Worker processes started as ``python -m conteur.server.store.replay``, not through multiprocessing:
    # a fork would copy the server's threads mid-flight, and a spawn re-runs the caller's
    # main script, which breaks any script without a ``__main__`` guard.
    root = str(Path(__file__).resolve().parents[2])
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(filter(None, (root, os.environ.get("PYTHONPATH"))))}
    workers = []
    for part in parts:
        worker = subprocess.Popen([sys.executable, "-m", "conteur.server.store.replay"], stdin=subprocess.PIPE,
                                  stdout=subprocess.PIPE, env=env)
        worker.stdin.write(_job_encoder.encode(Job(path=path, sessions=part, use_snapshots=use_snapshots)))
        worker.stdin.close()
        workers.append(worker)
    results: dict[str, Folded] = {}
    failed = None
    for worker, part in zip(workers, parts):
        out = worker.stdout.read()
        if worker.wait() != 0 and failed is None:
            failed = f"a replay worker folding {', '.join(part)} exited with {worker.returncode}"
        elif failed is None:
            for sid, folded, data in _answer_decoder.decode(out):
                results[sid] = Folded(snapshot.unpack(data, GameState), folded)
    if failed:
        raise RuntimeError(failed)
    return results


class Job(msgspec.Struct, frozen=True):
    path: str
    sessions: list[str]
    use_snapshots: bool


_job_encoder = msgspec.msgpack.Encoder()
_job_decoder = msgspec.msgpack.Decoder(Job)
_answer_decoder = msgspec.msgpack.Decoder(list[tuple[str, int, bytes]])


def _worker() -> None:
    job = _job_decoder.decode(sys.stdin.buffer.read())
    sys.stdout.buffer.write(_job_encoder.encode(_fold_in_worker(job.path, job.sessions, job.use_snapshots)))


if __name__ == "__main__":
    _worker()
