"""Start-up after a fault: periodic snapshots taken while playing.

A server killed with SIGKILL after a long night must not replay the whole night: the
chronicle writes a snapshot every ``snapshot_every`` events of a session while it plays,
and a restart folds only the tail. The snapshot is exact: snapshot + tail equals a
replay from zero.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap
from pathlib import Path

import msgspec

from conteur.events.model import STORYTELLER
from conteur.events.session import CloseSession
from conteur.server.core.service import Chronicle
from conteur.server.cli.simulate import play
from conteur.server.store.sqlite import SQLiteStore

ROOT = Path(__file__).resolve().parents[2]

PLAY_AND_DIE = textwrap.dedent(
    """
    import os, signal, sys
    from conteur.server.core.service import Chronicle
    from conteur.server.cli.simulate import play
    from conteur.server.store.sqlite import SQLiteStore

    store = SQLiteStore(sys.argv[1])
    chronicle = Chronicle(store, snapshot_every=int(sys.argv[2]))
    play(chronicle, "night", events=int(sys.argv[3]), seed=5, close=False)
    chronicle._snapshots.shutdown(wait=True)  # the snapshots of the night are written
    os.kill(os.getpid(), signal.SIGKILL)  # and then the power goes
    """
)


def test_a_restart_after_kill_9_folds_from_a_periodic_snapshot(tmp_path):
    db = tmp_path / "c.db"
    done = subprocess.run([sys.executable, "-c", PLAY_AND_DIE, str(db), "300", "2000"], cwd=ROOT,
                          env={**os.environ, "PYTHONPATH": str(ROOT)}, capture_output=True)
    assert done.returncode == -signal.SIGKILL, done.stderr.decode()[-2000:]
    with SQLiteStore(db) as store:
        for session in store.sessions():
            snapshot_seq, snapshot = store.latest_snapshot(session)
            assert snapshot is not None, f"no periodic snapshot of {session}"
            tail = sum(len(chunk) for _, chunk in store.iter_events(session, after=snapshot_seq))
            assert tail < 300 + 50, f"{session}: {tail} events to fold after the snapshot"
            assert snapshot == store.load_state(session, at=snapshot_seq, use_snapshots=False)
            assert store.load_state(session) == store.load_state(session, use_snapshots=False)


def test_periodic_snapshots_keep_the_newest_three_and_go_on_after_a_restart(tmp_path):
    with SQLiteStore(tmp_path / "c.db") as store:
        chronicle = Chronicle(store, snapshot_every=100)
        play(chronicle, "night", events=1200, seed=3, ruleset="met", close=False)
        chronicle._snapshots.shutdown(wait=True)
        seqs = [r[0] for r in store._reader.execute("SELECT seq FROM snapshots WHERE session='night'")]
        assert len(seqs) == 3
        restarted = Chronicle(store, snapshot_every=100)
        assert restarted.state("night") == store.load_state("night", use_snapshots=False)
        restarted.execute_sync("night", CloseSession(), STORYTELLER)
        assert msgspec.structs.replace(restarted.state("night"), head=0) == msgspec.structs.replace(
            store.load_state("night", use_snapshots=False), head=0)
