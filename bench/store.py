"""Durable appends and replay, side by side with baselines run in the same process.

    python bench/store.py            # full run (about a minute)
    python bench/store.py --quick    # smoke run for CI: small counts, same code paths

Prints figures and ratios; asserts nothing about speed (DESIGN: benchmarks, not tests).
Every contender uses WAL and synchronous=FULL on a file in the same temporary folder.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import sqlite3
import sys
import tempfile
import threading
import time
import uuid
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import msgspec  # noqa: E402

from bench import results  # noqa: E402
from conteur.events.game import CommandRejected  # noqa: E402
from conteur.server.store.sqlite import Pending, SQLiteStore  # noqa: E402

EVENT = CommandRejected(command_type="bid", code="rule", message="bid 14 is above your cap of 12", character="anna")
DATA = msgspec.json.encode(EVENT)


def raw_sqlite(path: Path, n: int, batch: int) -> float:
    conn = sqlite3.connect(path, isolation_level=None)
    conn.execute("PRAGMA journal_mode=WAL")
    conn.execute("PRAGMA synchronous=FULL")
    conn.execute("CREATE TABLE events (seq INTEGER PRIMARY KEY, session TEXT, type TEXT, data BLOB, actor TEXT, device TEXT, command_id TEXT, at TEXT, prev_hash TEXT, hash TEXT)")
    row = ("s", "command_rejected", DATA, "st", "d", "c", "2026", "0" * 64, "f" * 64)
    t = time.perf_counter()
    for i in range(0, n, batch):
        conn.execute("BEGIN")
        conn.executemany("INSERT INTO events (session,type,data,actor,device,command_id,at,prev_hash,hash) VALUES (?,?,?,?,?,?,?,?,?)",
                         [row] * min(batch, n - i))
        conn.execute("COMMIT")
    dt = time.perf_counter() - t
    conn.close()
    return n / dt


def store_concurrent(path: Path, n: int, appenders: int) -> tuple[float, float]:
    """n one-event commands from `appenders` concurrent coroutines; returns (rate, mean batch)."""
    store = SQLiteStore(path)
    per = n // appenders
    commits = {"batches": 0, "items": 0}
    original = store._commit

    def counting(conn, batch):
        commits["batches"] += 1
        commits["items"] += len(batch)
        return original(conn, batch)

    store._commit = counting

    async def appender(k):
        for i in range(per):
            await store.append(Pending(session="s", events=[EVENT], actor="st", device=f"d{k}", command_id=str(i)))

    async def main():
        await asyncio.gather(*[appender(k) for k in range(appenders)])

    t = time.perf_counter()
    asyncio.run(main())
    dt = time.perf_counter() - t
    store.close()
    return per * appenders / dt, commits["items"] / max(commits["batches"], 1)


def store_batches(path: Path, n: int, batch: int) -> float:
    """The store with `batch` events per append, one appender: equal batch sizes to raw."""
    store = SQLiteStore(path)
    events = [EVENT] * batch
    t = time.perf_counter()
    for i in range(0, n, batch):
        store.append_sync(Pending(session="s", events=events, actor="st"))
    dt = time.perf_counter() - t
    store.close()
    return n / dt


def eventsourcing_recorder(path: Path, n: int, appenders: int) -> tuple[float, float]:
    from eventsourcing.persistence import StoredEvent
    from eventsourcing.sqlite import SQLiteAggregateRecorder, SQLiteDatastore

    datastore = SQLiteDatastore(str(path), pool_size=appenders)
    recorder = SQLiteAggregateRecorder(datastore)
    recorder.create_table()
    with datastore.transaction(commit=False) as c:
        c.execute("PRAGMA synchronous")
        sync = c.fetchone()[0]
    per = n // appenders

    def work():
        oid = uuid.uuid4()
        for v in range(1, per + 1):
            recorder.insert_events([StoredEvent(originator_id=oid, originator_version=v, topic="t", state=DATA)])

    threads = [threading.Thread(target=work) for _ in range(appenders)]
    t = time.perf_counter()
    [th.start() for th in threads]
    [th.join() for th in threads]
    dt = time.perf_counter() - t
    # replay one aggregate
    oid = uuid.uuid4()
    m = min(n, 20000)
    recorder.insert_events([StoredEvent(originator_id=oid, originator_version=v, topic="t", state=DATA) for v in range(1, m + 1)])
    t = time.perf_counter()
    got = recorder.select_events(oid)
    decoder = msgspec.json.Decoder(CommandRejected)
    for e in got:
        decoder.decode(e.state)
    replay = len(got) / (time.perf_counter() - t)
    datastore.close()
    return per * appenders / dt, replay, sync


def store_replay(folder: Path, events: int) -> tuple[float, int]:
    """Folds a simulated session through load_state without snapshots."""
    from conteur.server.cli.simulate import simulate

    db = folder / "replay.db"
    summary = simulate(str(db), events=events, seed=1)
    with SQLiteStore(db) as store:
        t = time.perf_counter()
        folded = 0
        for sid in summary.sessions:
            store.load_state(sid, use_snapshots=False)
        dt = time.perf_counter() - t
    return summary.events / dt, summary.events


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="small counts for a CI smoke run")
    parser.add_argument("--appenders", type=int, default=50)
    results.option(parser)
    args = parser.parse_args()
    results.start("store", args)
    n_one = 400 if args.quick else 5000
    n_conc = 1000 if args.quick else 20000
    n_batch = 2000 if args.quick else 100000
    n_replay = 2000 if args.quick else 200000
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        raw1 = raw_sqlite(folder / "raw1.db", n_one, 1)
        conc, mean_batch = store_concurrent(folder / "conc.db", n_conc, args.appenders)
        raw100 = raw_sqlite(folder / "raw100.db", n_batch, 100)
        st100 = store_batches(folder / "st100.db", n_batch, 100)
        es_rate, es_replay, es_sync = eventsourcing_recorder(folder / "es.db", min(n_conc, 5000), args.appenders)
        replay, replayed = store_replay(folder, n_replay)
    print(f"machine: {os.cpu_count()} cores, python {sys.version.split()[0]}, sqlite {sqlite3.sqlite_version}; WAL, synchronous=FULL")
    print(f"raw sqlite3, 1 row per transaction        {raw1:>12,.0f} rows/s")
    print(f"raw sqlite3, 100 rows per transaction     {raw100:>12,.0f} rows/s")
    print(f"eventsourcing SQLite recorder, {args.appenders} threads {es_rate:>10,.0f} saves/s  (its synchronous={es_sync})")
    print(f"conteur store, {args.appenders} concurrent appenders  {conc:>10,.0f} events/s  (mean group commit {mean_batch:.1f})")
    print(f"conteur store, 100 events per append      {st100:>12,.0f} events/s")
    print(f"  group commit vs raw 1-row:        {conc / raw1:6.2f}x  (target >= 3x)")
    results.record("appends.group_commit", conc, "ev/s", raw1, conc / raw1, ">= 3x",
                   what=f"group commit, {args.appenders} appenders", against="raw sqlite3, 1 row a transaction")
    print(f"  group commit vs eventsourcing:    {conc / es_rate:6.2f}x  (target >= 5x)")
    results.record("appends.group_commit_es", conc, "ev/s", es_rate, conc / es_rate, ">= 5x",
                   what=f"group commit, {args.appenders} appenders", against="`eventsourcing` SQLite recorder")
    print(f"  equal batches (100) vs raw:       {st100 / raw100:6.2f}x  (target >= 0.5x)")
    results.record("appends.batch100", st100, "ev/s", raw100, st100 / raw100, ">= 0.5x",
                   what="100 events per append", against="raw sqlite3, 100 rows a transaction")
    print(f"replay (fold) of a simulated session: {replay:,.0f} events/s over {replayed:,} events, "
          f"beside the eventsourcing aggregate replay {es_replay:,.0f} events/s -> {replay / es_replay:.1f}x")
    results.record("store.fold", replay, "ev/s", es_replay, replay / es_replay,
                   what=f"a {replayed:,}-event simulated chronicle folded from zero (load_state)",
                   against="`eventsourcing` aggregate replay (select and decode, no fold)")


if __name__ == "__main__":
    main()
