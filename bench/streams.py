"""An action-dice night folded from zero by this tree's ``game.fold`` and, in the same
run, by the ``events/game.py`` of another commit (``--against``, default ``main``): how
much the draw streams' representation costs the fold. Best CPU time of N runs each, the
events decoded once, the GC paused as ``game.fold`` pauses it.

    .venv/bin/python bench/streams.py [--events 30000] [--runs 5] [--against main] [--record]
"""

from __future__ import annotations

import argparse
import gc
import importlib.util
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from bench import results  # noqa: E402
from conteur.events import game  # noqa: E402
from conteur.server.cli.simulate import simulate  # noqa: E402
from conteur.server.store.sqlite import SQLiteStore  # noqa: E402


def _other_game(rev: str):
    """``events/game.py`` as it is at ``rev``, loaded beside this tree's (the rulesets'
    modules are shared: only the composition and the streams' fold differ)."""
    source = subprocess.run(["git", "-C", str(ROOT), "show", f"{rev}:events/game.py"],
                            check=True, capture_output=True, text=True).stdout
    spec = importlib.util.spec_from_loader("conteur.events._game_against", loader=None)
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # its Structs' annotations resolve in it
    exec(compile(source, f"{rev}:events/game.py", "exec"), module.__dict__)
    # the one event type it defines itself: the decoded events are this tree's
    module.EVOLVERS[game.CommandRejected] = module.EVOLVERS.pop(module.CommandRejected)
    return module


def _best(fold, events, runs: int) -> float:
    best = float("inf")
    for _ in range(runs):
        t = time.process_time()
        fold(events)
        best = min(best, time.process_time() - t)
    return best


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--events", type=int, default=30000)
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--against", default="main")
    results.option(parser)
    args = parser.parse_args()
    results.start("streams", args)
    other = _other_game(args.against)
    with tempfile.TemporaryDirectory() as tmp:
        db = Path(tmp) / "action.db"
        simulate(str(db), events=args.events, seed=args.seed, session="night", ruleset="action",
                 fixed_secrets=True)
        with SQLiteStore(db) as store:
            events = [e for _, chunk in store.iter_events("night") for e in chunk]
    ours = game.fold(events)
    theirs = other.fold(events)
    if ours.streams != theirs.streams or ours.draw_counter != theirs.draw_counter:
        raise SystemExit("the two folds disagree on the draw streams")
    print(f"{len(events):,} events of an action-dice night, {len(ours.streams):,} draw streams")
    gc.disable()
    try:
        # alternated, so that a neighbour's load falls on both
        now = then = float("inf")
        for _ in range(2):
            then = min(then, _best(other.fold, events, args.runs))
            now = min(now, _best(game.fold, events, args.runs))
    finally:
        gc.enable()
    ratio = then / now
    print(f"  fold, {args.against}'s streams: {then * 1000:8.1f} ms of CPU")
    print(f"  fold, these streams:  {now * 1000:8.1f} ms of CPU   {ratio:.2f}x faster")
    results.record("fold.action_streams", now * 1000, "ms", then * 1000, ratio, ">= 1x",
                   what=f"an action-dice night of {len(events):,} events folded from zero",
                   against=f"events/game.py of {args.against}")


if __name__ == "__main__":
    main()
