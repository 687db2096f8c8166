"""A reproducible log: `conteur simulate --fixed-secrets` over every ruleset and a few
seeds, dumped as text (the events without their ``at`` times and hashes, then each
session's state folded from its first event). Two versions of the rules that behave the
same print the same bytes; a redesign of the rules is checked against main with it:

    .venv/bin/python tests/support/golden_log.py > after.txt   # and on main: > before.txt
    .venv/bin/python tests/support/golden_log.py --compare before.txt after.txt

``--compare`` allows one difference: a refusal's ``rule`` named where it was null (every
refusal now names its rule). ``--events`` and ``--seeds`` scale the log (defaults:
2000 events, seeds 1-3).
"""

from __future__ import annotations

import argparse
import collections
import re
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
            out.write(f"state\t{session}\t{msgspec.json.encode(state, enc_hook=game.enc_hook).decode()}\n")


def generate(directory: Path, *, events: int, seeds: list[int]) -> Path:
    from conteur.server.cli.simulate import simulate

    db = directory / "golden.db"
    for ruleset in RULESETS:
        for seed in seeds:
            simulate(str(db), events=events, seed=seed, session=f"{ruleset}-{seed}",
                     ruleset=ruleset, fixed_secrets=True)
    return db


def compare(before: list[str], after: list[str]) -> collections.Counter:
    """The rules named in ``after`` where ``before`` had none; AssertionError on any other
    difference."""
    assert len(before) == len(after), f"{len(before)} lines before, {len(after)} after"
    named: collections.Counter = collections.Counter()
    for old, new in zip(before, after):
        if old == new:
            continue
        found = re.search(r'"rule":"([^"]*)"', new)
        assert found and '"rule":null' in old and new.replace(found.group(0), '"rule":null') == old, \
            f"differs:\n{old}\n{new}"
        named[found.group(1)] += 1
    return named


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--events", type=int, default=2000)
    parser.add_argument("--seeds", type=int, nargs="+", default=[1, 2, 3])
    parser.add_argument("--compare", nargs=2, metavar=("BEFORE", "AFTER"))
    args = parser.parse_args(argv)
    if args.compare:
        before, after = (open(path).read().split("\n") for path in args.compare)
        named = compare(before, after)
        print(f"{len(before)} lines, identical but for {sum(named.values())} refusals whose rule is "
              f"named now: {dict(sorted(named.items()))}")
        return 0
    with tempfile.TemporaryDirectory() as tmp:
        dump(generate(Path(tmp), events=args.events, seeds=args.seeds), sys.stdout)
    return 0


if __name__ == "__main__":
    sys.exit(main())
