"""Mutation score of the rules: how many small changes to ``events/`` the rules tests catch.

    python tools/mutation.py [MODULE ...] [--jobs N] [--json PATH] [--show] [--only GLOB ...]

The mutants are mutmut's (PyPI ``mutmut``, the ``mutation`` extra): for each module
(``met``, ``met_rules``, ``v5``, ``action``, ``session``, ``verdicts``, ``fair``) mutmut
changes one thing at a time in every function (an operator, a number, a constant, a call's
argument, a string), runs the module's own rules tests against it (``SELECTION`` below, the
tests named after the rules the module holds, and among them only those that reach the
mutated function), and counts the mutant *killed* when one fails. The score printed per
module is the share killed; a survivor is a hole in the tests or a change nobody can see,
and ``docs/mutation.md`` says which.

Why a stage: the package maps ``conteur.events`` to ``events/`` (``package-dir`` in
``pyproject.toml``), and mutmut names a function by its file's path, so the tests must
import the mutated copy as ``conteur.events``. Each module runs in a temporary directory
holding ``conteur/events/`` (a copy of ``events/``) and ``tests/``: mutmut puts its
``mutants/`` copy first on ``sys.path``, where ``conteur`` is then found as a namespace
package whose ``events`` is the mutated copy, while ``conteur.server`` still comes from the
editable install.

CPU heavy: ``make mutation`` runs it under ``nice``; it is not part of CI.
"""

from __future__ import annotations

import argparse
import fnmatch
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def rules_tests(*names: str) -> list[str]:
    return [f"tests/rules/test_{name}.py" for name in names]


# the tests each module's mutants run: those named after the rules the module holds
SELECTION: dict[str, list[str]] = {
    "met": rules_tests("met_rules", "met", "met_defender", "met_examples", "met_group", "met_group_static",
                       "met_throws", "met_traits"),
    "met_rules": rules_tests("met_rules", "met", "met_defender", "met_traits"),
    "v5": rules_tests("v5_rules", "v5", "verdicts_rouse"),
    "action": rules_tests("action_rules", "action", "action_settle", "session_rules"),
    "session": rules_tests("session_rules", "session", "carried"),
    "verdicts": rules_tests("verdicts_rules", "verdicts_rouse"),
    "fair": rules_tests("fair", "fair_streams"),
}
KILLED = {"killed", "timeout", "segfault"}  # a mutant that hangs or crashes the tests is caught
RESULT = re.compile(r"^\s*(?P<name>\S+): (?P<status>[a-z ]+)$")


def stage(module: str, where: Path) -> None:
    """A directory where ``conteur.events`` is ``events/`` and mutmut mutates ``module``."""
    shutil.copytree(ROOT / "events", where / "conteur" / "events",
                    ignore=shutil.ignore_patterns("__pycache__"))
    shutil.copytree(ROOT / "tests", where / "tests", ignore=shutil.ignore_patterns("__pycache__"))
    pytest_options = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["pytest"]["ini_options"]
    config = {
        "source_paths": [f"conteur/events/{module}.py"],
        "also_copy": ["tests/"],
        "pytest_add_cli_args": ["-p", "no:cacheprovider", "-q"],
        "pytest_add_cli_args_test_selection": SELECTION[module],
    }
    lines = ["[tool.mutmut]"] + [f"{k} = {json.dumps(v)}" for k, v in config.items()]
    lines += ["", "[tool.pytest.ini_options]"] + [f"{k} = {json.dumps(v)}" for k, v in pytest_options.items()]
    (where / "pyproject.toml").write_text("\n".join(lines) + "\n")


def mutmut(where: Path, *args: str) -> str:
    env = {**os.environ, "PYTHONWARNINGS": "ignore"}
    done = subprocess.run([sys.executable, "-m", "mutmut", *args], cwd=where, env=env,
                          capture_output=True, text=True)
    if done.returncode != 0:
        raise SystemExit(f"mutmut {' '.join(args)} failed in {where}:\n{done.stdout[-2000:]}{done.stderr[-2000:]}")
    return done.stdout


def score(module: str, jobs: int, show: bool, only: list[str]) -> dict:
    with tempfile.TemporaryDirectory(prefix=f"mutation-{module}-") as tmp:
        where = Path(tmp)
        stage(module, where)
        mutmut(where, "run", "--max-children", str(jobs), *only)
        statuses = {}
        for line in mutmut(where, "results", "--all", "true").splitlines():
            found = RESULT.match(line)
            if found and (not only or any(fnmatch.fnmatch(found["name"], g) for g in only)):
                statuses[found["name"]] = found["status"].strip()
        survivors = sorted(n for n, s in statuses.items() if s not in KILLED)
        shown = {n: mutmut(where, "show", n) for n in survivors} if show else {}
    killed = sum(1 for s in statuses.values() if s in KILLED)
    return {"module": module, "mutants": len(statuses), "killed": killed,
            "survivors": {n: statuses[n] for n in survivors}, "diffs": shown}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("modules", nargs="*", help=f"some of {', '.join(SELECTION)} (all by default)")
    parser.add_argument("--jobs", type=int, default=1, help="mutants run at once (default 1)")
    parser.add_argument("--json", type=Path, help="write every module's survivors here")
    parser.add_argument("--show", action="store_true", help="print each survivor's diff")
    parser.add_argument("--only", nargs="+", default=[], metavar="GLOB",
                        help="only the mutants whose names match, e.g. '*_group_revealed*' (after a test is written)")
    args = parser.parse_args()
    unknown = sorted(set(args.modules) - set(SELECTION))
    if unknown:
        parser.error(f"unknown module {', '.join(unknown)}: one of {', '.join(SELECTION)}")
    results = []
    for module in args.modules or list(SELECTION):
        result = score(module, args.jobs, args.show, args.only)
        results.append(result)
        for name, status in result["survivors"].items():
            print(f"{name}: {status}")
            if args.show:
                print(result["diffs"][name])
    print("\nmutation score (share of mutmut's mutants killed by the rules tests):")
    for r in results:
        share = r["killed"] / r["mutants"] if r["mutants"] else 1.0
        print(f"  {r['module'] + '.py':<14} {r['killed']:>5}/{r['mutants']:<5} {100 * share:5.1f}%")
    if args.json:
        args.json.parent.mkdir(parents=True, exist_ok=True)
        args.json.write_text(json.dumps(results, indent=1))


if __name__ == "__main__":
    main()
