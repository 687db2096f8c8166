"""A child appends and prints each acknowledged seq; the parent kills it with SIGKILL at a
random moment. Every acknowledged event must be there after reopening (synchronous=FULL),
seqs gapless, integrity_check ok, the chain intact."""

from __future__ import annotations

import os
import random
import signal
import sqlite3
import subprocess
import sys
import textwrap
from pathlib import Path

from conteur.server.store.chain import verify_rows
from conteur.server.store.sqlite import SQLiteStore

CHILD = textwrap.dedent(
    """
    import asyncio, sys
    from conteur.events.game import CommandRejected
    from conteur.server.store.sqlite import Pending, SQLiteStore

    store = SQLiteStore(sys.argv[1])

    async def appender(k):
        i = 0
        while True:
            i += 1
            out = await store.append(Pending(
                session="s", device=f"dev{k}", command_id=f"{sys.argv[2]}-{i}",
                events=[CommandRejected(command_type="bid", code="rule", message=f"{k}-{i}")]))
            print(out.seqs[0], flush=True)

    async def main():
        await asyncio.gather(*[appender(k) for k in range(20)])

    asyncio.run(main())
    """
)


def test_acknowledged_events_survive_kill_9(tmp_path):
    db = tmp_path / "kill.db"
    root = Path(__file__).resolve().parents[2]
    rng = random.Random()
    last_head = 0
    for attempt in range(3):
        proc = subprocess.Popen(
            [sys.executable, "-c", CHILD, str(db), str(attempt)], stdout=subprocess.PIPE, cwd=root,
            env={**os.environ, "PYTHONPATH": str(root)},
        )
        acked = []
        target = rng.randint(50, 400)
        while len(acked) < target:
            line = proc.stdout.readline()
            assert line, "child died before the kill"
            acked.append(int(line))
        os.kill(proc.pid, signal.SIGKILL)
        rest = proc.stdout.read()  # what it printed before dying was acknowledged too
        acked += [int(x) for x in rest.split()]
        proc.wait()
        assert min(acked) > last_head, "the child appended nothing new"

        conn = sqlite3.connect(db)
        assert conn.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
        seqs = [r[0] for r in conn.execute("SELECT seq FROM events ORDER BY seq")]
        conn.close()
        assert seqs == list(range(1, len(seqs) + 1)), "seqs are not gapless"
        assert set(acked) <= set(seqs), f"lost acknowledged seqs: {sorted(set(acked) - set(seqs))[:5]}"
        with SQLiteStore(db) as store:  # and the store reopens and goes on appending
            assert verify_rows(store.rows(), gapless=True)[1] is None
        last_head = seqs[-1]
