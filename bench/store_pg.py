"""Durable appends with 50 concurrent appenders: PostgreSQL against SQLite.

    python bench/store_pg.py            # full run
    python bench/store_pg.py --quick    # smoke run: small counts, same code paths

Both stores acknowledge after a durable COMMIT: SQLite in WAL with synchronous=FULL,
PostgreSQL with fsync and synchronous_commit on, on a throwaway cluster this script
starts on 127.0.0.1 and removes (tests/support/pg_support.py; Debian's postgresql package).
``--stores N`` also runs N PostgreSQL stores on the same database at once, each with its
own connections and writer thread, as N server processes would. Prints figures; asserts
nothing about speed.
"""

from __future__ import annotations

import argparse
import asyncio
import sys
import tempfile
import threading
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench import results  # noqa: E402
from conteur.events.game import CommandRejected  # noqa: E402
from conteur.server.store.chain import verify_rows  # noqa: E402
from conteur.server.store.interface import Pending  # noqa: E402
from conteur.server.store.sqlite import SQLiteStore  # noqa: E402

EVENT = CommandRejected(command_type="bid", code="rule", message="bid 14 is above your cap of 12", character="anna")


def concurrent_appends(stores: list, n: int, appenders: int) -> float:
    """n one-event commands from ``appenders`` coroutines per store, each store on its own
    thread and event loop; returns appends per second over all of them."""
    per = max(1, n // (appenders * len(stores)))

    def run(k: int, store) -> None:
        async def appender(a: int) -> None:
            for i in range(per):
                await store.append(Pending(session=f"s{a % 5}", events=[EVENT], device=f"p{k}-{a}",
                                           command_id=str(i)))
        async def main() -> None:
            await asyncio.gather(*(appender(a) for a in range(appenders)))
        asyncio.run(main())

    threads = [threading.Thread(target=run, args=(k, s)) for k, s in enumerate(stores)]
    t = time.perf_counter()
    [th.start() for th in threads]
    [th.join() for th in threads]
    dt = time.perf_counter() - t
    total = per * appenders * len(stores)
    assert verify_rows(stores[0].rows(), gapless=True) == (total, None)
    return total / dt


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="small counts for a CI smoke run")
    parser.add_argument("--appenders", type=int, default=50)
    parser.add_argument("--events", type=int, default=20000)
    parser.add_argument("--stores", type=int, default=2, help="PostgreSQL stores on one database at once")
    results.option(parser)
    args = parser.parse_args()
    results.start("store_pg", args)
    n = 1000 if args.quick else args.events

    from tests.support.pg_support import BINDIR, Cluster

    with tempfile.TemporaryDirectory() as folder:
        sqlite = SQLiteStore(Path(folder) / "bench.db")
        try:
            rate = concurrent_appends([sqlite], n, args.appenders)
        finally:
            sqlite.close()
        print(f"SQLite (WAL, synchronous=FULL), {args.appenders} appenders: {rate:,.0f} appends/s")
        results.record("pg.sqlite", rate, "appends/s", what=f"SQLite, one file, {args.appenders} appenders")
    if BINDIR is None:
        print("PostgreSQL is not installed: its figures are skipped")
        return
    from conteur.server.store.postgres import PostgresStore

    cluster = Cluster(BINDIR, fsync=True).start()
    try:
        for count in sorted({1, args.stores}):
            name = cluster.create_database()
            stores = [PostgresStore(cluster.url(name)) for _ in range(count)]
            try:
                rate = concurrent_appends(stores, n, args.appenders)
            finally:
                for s in stores:
                    s.close()
            print(f"PostgreSQL {cluster.version()} (fsync, synchronous_commit on), {count} store(s) x "
                  f"{args.appenders} appenders: {rate:,.0f} appends/s")
            results.record(f"pg.stores{count}", rate, "appends/s",
                           what=f"PostgreSQL, {count} store(s) on one database x {args.appenders} appenders")
    finally:
        cluster.stop()


if __name__ == "__main__":
    main()
