"""Folding many sessions at once: a server's start-up, or a whole chronicle replayed.

``SQLiteStore.load_state`` folds one session over its span of the log. The sessions of a
night are played side by side, so their spans overlap and a night's log would be read once
per session. Here one ordered scan serves every session's tail (what follows its newest
snapshot), and SQLite filters the rows of the sessions asked for in C.

Folding is CPU-bound Python, so a big fold is split over worker processes, sessions
dealt out by the events each has to fold: a Raspberry Pi has four cores. The workers only
read; the states come back msgpack-encoded, as snapshots are stored, and this process
saves the snapshots so the next start-up is fast.
"""

from __future__ import annotations

import gc
import os
import sqlite3
import subprocess
import sys
from pathlib import Path
from typing import Sequence

import msgspec

from events import game
from events.game import GameState
from server.store import SNAPSHOT_VERSION, SQLiteStore, decode_events, latest_snapshot

# below this many events to fold, starting worker processes (each imports the rules
# engines, about a tenth of a second) costs more than it saves
PARALLEL_FROM = 50_000
CHUNK = 20_000
_MAX_IN = 500  # sessions named in one IN (...) filter; more are filtered here
_state_encoder = msgspec.msgpack.Encoder()
_state_decoder = msgspec.msgpack.Decoder(GameState)


class Folded(msgspec.Struct, frozen=True, gc=False):
    state: GameState  # ``head`` set to the last seq folded (or the snapshot's)
    folded: int  # events folded after the snapshot


def fold_tails(path: str, sessions: Sequence[str], *, use_snapshots: bool = True) -> dict[str, Folded]:
    """Every session's state, folded in this process over one scan of the log."""
    conn = sqlite3.connect(path)
    try:
        return _fold_tails(conn, list(dict.fromkeys(sessions)), use_snapshots)
    finally:
        conn.close()


def _fold_tails(conn: sqlite3.Connection, sessions: list[str], use_snapshots: bool) -> dict[str, Folded]:
    starts: dict[str, int] = {}
    states: dict[str, GameState] = {}
    for sid in sessions:
        start, state = latest_snapshot(conn, sid) if use_snapshots else (0, None)
        starts[sid], states[sid] = start, state if state is not None else game.initial()
    heads, folded = dict(starts), dict.fromkeys(sessions, 0)
    spans = _spans(conn, sessions)
    todo = [s for s in sessions if s in spans and spans[s][1] > starts[s]]
    if todo:
        low = min(max(starts[s], spans[s][0] - 1) for s in todo)
        high = max(spans[s][1] for s in todo)
        sql, args = "SELECT seq, session, data FROM events WHERE seq > ? AND seq <= ?", [low, high]
        if len(todo) <= _MAX_IN:
            sql += f" AND session IN ({','.join('?' * len(todo))})"
            args += todo
        evolve = game.evolve
        # as in load_state: millions of short-lived containers and no cycles, so the cyclic
        # GC would only walk the growing states over and over
        paused = gc.isenabled()
        gc.disable()
        try:
            cursor = conn.execute(sql + " ORDER BY seq", args)
            while rows := cursor.fetchmany(CHUNK):
                rows = [r for r in rows if r[0] > starts.get(r[1], 1 << 62)]
                # a row edited into TEXT through SQL still decodes; verify names the edit
                events = decode_events([d if isinstance(d, bytes) else d.encode() for _, _, d in rows])
                for (seq, sid, _), event in zip(rows, events):
                    states[sid] = evolve(states[sid], event)
                    heads[sid] = seq
                    folded[sid] += 1
        finally:
            if paused:
                gc.enable()
    return {s: Folded(msgspec.structs.replace(states[s], head=heads[s]), folded[s]) for s in sessions}


def _spans(conn: sqlite3.Connection, sessions: list[str]) -> dict[str, tuple[int, int]]:
    wanted = set(sessions)
    return {s: (first, last) for s, first, last in conn.execute("SELECT session, first, last FROM heads")
            if s in wanted}


def _fold_in_worker(path: str, sessions: list[str], use_snapshots: bool) -> list[tuple[str, int, bytes]]:
    return [(s, f.folded, _state_encoder.encode(f.state))
            for s, f in fold_tails(path, sessions, use_snapshots=use_snapshots).items()]


def _work(conn: sqlite3.Connection, sessions: list[str], use_snapshots: bool) -> dict[str, int]:
    """Events each session has to fold: its span after its newest snapshot (an
    overestimate where sessions interleave, alike for all of them)."""
    spans = _spans(conn, sessions)
    work = {}
    for sid in sessions:
        first, last = spans.get(sid, (0, 0))
        start = 0
        if use_snapshots:
            row = conn.execute("SELECT max(seq) FROM snapshots WHERE session=? AND version=?",
                               (sid, SNAPSHOT_VERSION)).fetchone()
            start = row[0] or 0
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
    if not sessions:
        return {}
    if store.path == ":memory:":  # another connection would see another database
        return {s: store.load_state(s, use_snapshots=use_snapshots) for s in sessions}
    conn = sqlite3.connect(store.path)
    try:
        work = _work(conn, sessions, use_snapshots)
        if workers is None:
            workers = (os.cpu_count() or 1) if sum(work.values()) >= PARALLEL_FROM else 1
        parts = deal(work, min(workers, len(sessions)))
        if len(parts) <= 1:
            results = _fold_tails(conn, sessions, use_snapshots)
        else:
            results = _fold_in_processes(store.path, parts, use_snapshots)
    finally:
        conn.close()
    states = {}
    for sid in sessions:
        done = results[sid]
        if use_snapshots and done.folded >= store.snapshot_every:
            store.save_snapshot(sid, done.state.head, done.state)
        states[sid] = done.state
    return states


def _fold_in_processes(path: str, parts: list[list[str]], use_snapshots: bool) -> dict[str, Folded]:
    # Worker processes started as ``python -m server.replay``, not through multiprocessing:
    # a fork would copy the server's threads mid-flight, and a spawn re-runs the caller's
    # main script, which breaks any script without a ``__main__`` guard.
    root = str(Path(__file__).resolve().parent.parent)
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(filter(None, (root, os.environ.get("PYTHONPATH"))))}
    workers = []
    for part in parts:
        worker = subprocess.Popen([sys.executable, "-m", "server.replay"], stdin=subprocess.PIPE,
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
                results[sid] = Folded(_state_decoder.decode(data), folded)
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
