"""CPU time to fold each session of a chronicle from zero, events already decoded (the
evolve stage alone, with the GC paused as ``load_state`` pauses it); best of N runs.

    .venv/bin/python bench/fold.py --db CHRONICLE.db [--session ID ...] [--runs 5]
"""

from __future__ import annotations

import argparse
import gc
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from conteur.events import game  # noqa: E402
from conteur.server.store.sqlite import SQLiteStore, decode_events  # noqa: E402


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--db", required=True)
    parser.add_argument("--session", action="append", help="default: every session")
    parser.add_argument("--runs", type=int, default=5)
    args = parser.parse_args()
    with SQLiteStore(args.db) as store:
        for session in args.session or store.sessions():
            events = [e for _, chunk in store.iter_events(session) for e in chunk]
            best = 0.0
            gc.disable()
            try:
                for _ in range(args.runs):
                    t = time.process_time()
                    game.fold(events)
                    best = max(best, len(events) / max(time.process_time() - t, 1e-9))
            finally:
                gc.enable()
            print(f"{session:<20} {len(events):>9,} events  {best:>10,.0f} events/s of CPU", flush=True)


if __name__ == "__main__":
    main()
