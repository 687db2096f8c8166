"""The figures a benchmark prints, kept as one dated JSON a run, and BENCHMARKS.md's tables.

A benchmark calls ``record(...)`` beside each figure it prints, ``option(parser)`` before
parsing its arguments and ``start("name", args)`` after. Nothing is written unless the run
was given ``--record`` (CI's ``--quick`` smoke runs write nothing into the tree); then, when
the benchmark ends without an error, one file ``bench/results/YYYY-MM-DD-HHMM-name.json``
(or under the folder given to ``--record``) holds the command, the commit, the machine and
every figure recorded.

    python bench/results.py            # rebuild BENCHMARKS.md's tables (make bench-report)
    python bench/results.py --check    # exit 1 if BENCHMARKS.md differs from what it would write

Only the standard library: the report runs before any install.
"""

from __future__ import annotations

import atexit
import datetime as dt
import json
import os
import platform
import re
import shlex
import sqlite3
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
RESULTS = ROOT / "bench" / "results"
PAGE = ROOT / "BENCHMARKS.md"
FORMAT = 1
FIELDS = ("key", "what", "value", "unit", "baseline", "against", "ratio", "target", "note")

_figures: list[dict] = []
_run: dict = {}


# -- recording ---------------------------------------------------------------------------


def option(parser) -> None:
    parser.add_argument("--record", nargs="?", const=str(RESULTS), default=None, metavar="DIR",
                        help=f"write this run's figures as one dated JSON into DIR (default {RESULTS})")


def record(key: str, value: float | None, unit: str, baseline: float | None = None,
           ratio: float | None = None, target: str | None = None, *, what: str = "",
           against: str = "", note: str = "") -> None:
    """One printed figure. ``target`` reads ``<= 2x`` (on the ratio) or ``< 3 s`` (on the
    value, in ms or s); ``against`` names the baseline."""
    if not re.fullmatch(r"[a-z0-9_]+(\.[a-z0-9_]+)+", key):
        raise ValueError(f"figure key {key!r}: lower-case words joined by dots, at least two")
    if target is not None and _target(target) is None:
        raise ValueError(f"figure {key}: target {target!r} is not '<op> <number> x|ms|s|<unit>'")
    _figures.append({"key": key, "what": what, "value": _num(value), "unit": unit,
                     "baseline": _num(baseline), "against": against, "ratio": _num(ratio),
                     "target": target, "note": note})


def start(bench: str, args) -> None:
    """Remembers the run; with ``--record`` its file is written when the benchmark ends."""
    _run.update(bench=bench, started=_now(), load=os.getloadavg()[0], folder=getattr(args, "record", None))
    if _run["folder"] is None:
        return
    previous = sys.excepthook

    def failed(*exc) -> None:  # a run that raised writes nothing: half a run is no result
        _run["failed"] = True
        previous(*exc)

    sys.excepthook = failed
    atexit.register(save)


def save() -> Path | None:
    if not _run.get("folder") or _run.get("failed") or not _figures:
        return None
    started = _run["started"]
    cores = os.cpu_count() or 1
    doc = {
        "format": FORMAT,
        "bench": _run["bench"],
        "started": started,
        "finished": _now(),
        "command": shlex.join([_python(), _relative(sys.argv[0]), *sys.argv[1:]]),
        "commit": _commit(),
        "machine": {
            "cores": cores, "platform": f"{platform.machine()} Linux {platform.release()}",
            "python": platform.python_version(), "sqlite": sqlite3.sqlite_version,
            "load": [round(_run["load"], 2), round(os.getloadavg()[0], 2)],
            # other work on the cores at the start: the bench's own load comes after
            "state": "idle" if _run["load"] < cores * 0.75 else "loaded",
        },
        "figures": list(_figures),
    }
    folder = Path(_run["folder"])
    folder.mkdir(parents=True, exist_ok=True)
    stamp = started[:16].replace("T", "-").replace(":", "")
    path = folder / f"{stamp}-{_run['bench']}.json"
    path.write_text(dumps(doc), encoding="utf-8")
    print(f"recorded {len(_figures)} figures in {path}", flush=True)
    return path


def dumps(doc: dict) -> str:
    """The run as JSON, one line a figure (a diff of two runs reads figure by figure)."""
    head = json.dumps({k: v for k, v in doc.items() if k != "figures"}, indent=1, ensure_ascii=False)
    figures = ",\n".join("  " + json.dumps(f, ensure_ascii=False) for f in doc["figures"])
    return head[:-2] + ',\n "figures": [\n' + figures + "\n ]\n}\n"


def _num(x):
    if x is None:
        return None
    x = float(x)
    if x != x:
        return None
    return int(x) if x.is_integer() else round(x, 1 if abs(x) >= 100 else 4)


def _now() -> str:
    return dt.datetime.now(dt.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")


def _python() -> str:
    return _relative(sys.executable)


def _relative(path: str) -> str:
    try:
        return str(Path(path).absolute().relative_to(ROOT))
    except ValueError:
        return path


def _commit() -> str:
    try:
        out = subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=ROOT, capture_output=True,
                             text=True, timeout=10)
        return out.stdout.strip()
    except (OSError, subprocess.SubprocessError):
        return ""


# -- reading ------------------------------------------------------------------------------


def load(folder: Path = RESULTS) -> list[dict]:
    """Every run's file, oldest first (by its start), each checked."""
    runs = []
    for path in sorted(Path(folder).glob("*.json")):
        try:
            doc = json.loads(path.read_text(encoding="utf-8"))
        except ValueError as e:
            raise ValueError(f"{path.name}: not JSON ({e})") from None
        for field in ("format", "bench", "started", "command", "machine", "figures"):
            if field not in doc:
                raise ValueError(f"{path.name}: no field {field!r}")
        if doc["format"] != FORMAT:
            raise ValueError(f"{path.name}: format {doc['format']!r}, this report reads {FORMAT}")
        for i, fig in enumerate(doc["figures"]):
            for field in ("key", "value", "unit"):
                if field not in fig:
                    raise ValueError(f"{path.name}: figures[{i}] has no field {field!r}")
            if fig.get("target") and _target(fig["target"]) is None:
                raise ValueError(f"{path.name}: figures[{i}] ({fig['key']}): target {fig['target']!r} unreadable")
        doc["file"] = path.name
        runs.append(doc)
    runs.sort(key=lambda d: (d["started"], d["file"]))
    return runs


def quick(run: dict) -> bool:
    return "--quick" in run["command"].split()


def latest(runs: list[dict]) -> dict[str, tuple[dict, dict]]:
    """Each figure key's newest figure and its run, a smoke run's (``--quick``) only where no
    full run has the key; keys in the order they first appeared."""
    out: dict[str, tuple[dict, dict]] = {}
    for run in sorted(runs, key=lambda r: not quick(r)):  # stable: by start within each kind
        for fig in run["figures"]:
            out[fig["key"]] = (fig, run)
    return out


# -- the report ---------------------------------------------------------------------------

MARK = re.compile(r"(<!-- bench-report: ([^>]*?) -->\n)(.*?)(<!-- /bench-report -->)", re.S)
SCALE = {"ms": 0.001, "s": 1.0}


def _target(text: str):
    m = re.fullmatch(r"\s*(<=|>=|<|>)\s*([0-9][0-9,]*(?:\.[0-9]+)?)\s*(\S*)\s*", text)
    return None if m is None else (m[1], float(m[2].replace(",", "")), m[3])


def verdict(fig: dict) -> str:
    """'met', 'missed', or '' when the figure has no target or not the number it bears on."""
    parsed = _target(fig.get("target") or "")
    if parsed is None:
        return ""
    op, bound, unit = parsed
    if unit == "x":
        x = fig.get("ratio")
    elif unit == fig["unit"] or not unit:
        x = fig.get("value")
    elif unit in SCALE and fig["unit"] in SCALE:
        x = None if fig.get("value") is None else fig["value"] * SCALE[fig["unit"]] / SCALE[unit]
    else:
        return ""
    if x is None:
        return ""
    ok = {"<=": x <= bound, ">=": x >= bound, "<": x < bound, ">": x > bound}[op]
    return "met" if ok else "**missed**"


def fmt(x, unit: str = "") -> str:
    if x is None:
        return ""
    if abs(x) >= 100:
        s = f"{x:,.0f}"
    elif abs(x) >= 10 or float(x).is_integer():
        s = f"{x:,.1f}".removesuffix(".0")
    else:
        s = f"{x:.2f}"
    return f"{s} {unit}".strip()


def table(groups: list[str], figures: dict[str, tuple[dict, dict]]) -> str:
    """The targets' table (``targets``: every figure with a target), the runs' (``runs``),
    or a benchmark's own: the figures of its key groups that bear no target."""
    if groups == ["runs"]:
        return runs_table(figures)
    targets = groups == ["targets"]
    rows = []
    chosen = [(key, fig, run) for key, (fig, run) in figures.items() if targets == bool(fig.get("target"))
              and (targets or key.rsplit(".", 1)[0] in groups)]
    if not targets:  # in the order the mark names the groups
        chosen.sort(key=lambda kfr: groups.index(kfr[0].rsplit(".", 1)[0]))
    for key, fig, run in chosen:
        value = fmt(fig["value"], fig["unit"])
        if fig.get("note"):
            value = f"{value} ({fig['note']})" if value else fig["note"]
        base = f"{fmt(fig.get('baseline'), fig['unit'])} {fig.get('against') or ''}".strip()
        r = fig.get("ratio")
        ratio = "" if r is None else f"{r:.2f}x" if abs(r) >= 0.01 else f"{r:.1g}x"
        cells = [fig.get("what") or key, value, base, ratio]
        if targets:
            cells += [fig["target"], verdict(fig)]
        label = f"{run['started'][5:10]} {run['machine'].get('state', '?')}{', quick' if quick(run) else ''}"
        cells.append(f"[{label}](bench/results/{run['file']})")
        rows.append("| " + " | ".join(cells) + " |")
    if not rows:
        return "Every figure of this part bears a target: see the targets' table above.\n"
    head = ["figure", "latest", "baseline", "ratio"] + (["target", ""] if targets else []) + ["run"]
    return "\n".join(["| " + " | ".join(head) + " |", "|" + "---|" * len(head), *rows]) + "\n"


def runs_table(figures: dict[str, tuple[dict, dict]]) -> str:
    used: dict[str, tuple[dict, int]] = {}
    for fig, run in figures.values():
        used[run["file"]] = (run, used.get(run["file"], (run, 0))[1] + 1)
    rows = ["| run | command | commit | machine | figures shown |", "|---|---|---|---|---|"]
    for name, (run, count) in sorted(used.items(), key=lambda kv: (kv[1][0]["started"], kv[0])):
        m = run["machine"]
        load = "-".join(f"{x:g}" for x in m.get("load") or [])
        load = f" (load {load})" if load else ""
        when = run["started"].replace("T", " ")[:16] + " UTC"
        rows.append(f"| [{when}](bench/results/{name}) | `{run['command']}` | {run.get('commit', '')} "
                    f"| {m.get('state', '?')}{load} | {count} |")
    return "\n".join(rows) + "\n"


def unshown(page: str, runs: list[dict]) -> list[str]:
    """The keys of latest figures no table of ``page`` would show."""
    groups = {g for m in MARK.finditer(page) for g in m[2].split()}
    return [key for key, (fig, _) in latest(runs).items()
            if not (fig.get("target") and "targets" in groups) and key.rsplit(".", 1)[0] not in groups]


def render(page: str, runs: list[dict]) -> str:
    figures = latest(runs)

    def one(m: re.Match) -> str:
        return m[1] + table(m[2].split(), figures) + m[4]

    return MARK.sub(one, page)


def main() -> None:
    import argparse

    parser = argparse.ArgumentParser(description="rebuild BENCHMARKS.md's tables from bench/results/*.json")
    parser.add_argument("--check", action="store_true", help="exit 1 if BENCHMARKS.md is not what it would write")
    parser.add_argument("--results", default=str(RESULTS))
    parser.add_argument("--page", default=str(PAGE))
    args = parser.parse_args()
    page = Path(args.page)
    text = page.read_text(encoding="utf-8")
    runs = load(Path(args.results))
    new = render(text, runs)
    for key in unshown(text, runs):
        print(f"{page.name}: no table shows {key}: name its group in a bench-report mark", file=sys.stderr)
    if args.check:
        if new != text:
            print(f"{page.name} differs from bench/results: run `make bench-report`", file=sys.stderr)
            sys.exit(1)
        return
    if new != text:
        page.write_text(new, encoding="utf-8")
    print(f"{page.name}: {len(MARK.findall(text))} tables from {len(list(Path(args.results).glob('*.json')))} runs")


if __name__ == "__main__":
    main()
