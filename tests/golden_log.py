"""A reproducible log: `conteur simulate --fixed-secrets` over every ruleset and a few
seeds, dumped as text (the events without their ``at`` times and hashes, then each
session's state folded from its first event). Two versions of the rules that behave the
same print the same bytes; a redesign of the rules is checked against main with it:

    .venv/bin/python tests/golden_log.py > after.txt   # and on main: > before.txt
    cmp before.txt after.txt

``--events`` and ``--seeds`` scale it (defaults: 2000 events, seeds 1-3).
"""

from __future__ import annotations

import argparse
import sys
import tempfile
from pathlib import Path

import msgspec

RULESETS = ("met", "v5", "action", "mixed")


def dump(db: Path, out) -> None:
    from conteur.events import game
    from conteur.server.store.sqlite import SQLiteStore, decode_event

    with SQLiteStore(str(db)) as store:
        sessions: dict[str, list] = {}
        for row in store.rows():
            data = bytes(row.data)
            out.write(f"{row.seq}\t{row.session}\t{row.type}\t{row.actor}\t{row.device}\t"
                      f"{row.command_id}\t{data.decode()}\n")
            sessions.setdefault(row.session, []).append(decode_event(data))
        for session, events in sessions.items():
            state = game.fold(events)
            out.write(f"state\t{session}\t{msgspec.json.encode(state).decode()}\n")


def generate(directory: Path, *, events: int, seeds: list[int]) -> Path:
    from conteur.server.cli.simulate import simulate

    db = directory / "golden.db"
    for ruleset in RULESETS:
        for seed in seeds:
            simulate(str(db), events=events, seed=seed, session=f"{ruleset}-{seed}",
                     ruleset=ruleset, fixed_secrets=True)
    return db


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--events", type=int, default=2000)
    parser.add_argument("--seeds", type=int, nargs="+", default=[1, 2, 3])
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory() as tmp:
        dump(generate(Path(tmp), events=args.events, seeds=args.seeds), sys.stdout)
    return 0


if __name__ == "__main__":
    sys.exit(main())
