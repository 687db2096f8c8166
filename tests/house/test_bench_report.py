"""BENCHMARKS.md's tables are what `make bench-report` writes from the committed results,
and a benchmark writes its results only when asked (no benchmark is run here)."""

from __future__ import annotations

import json
import re
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

from bench import results  # noqa: E402


def test_benchmarks_md_tables_are_what_bench_report_writes_from_the_committed_results():
    page = results.PAGE.read_text(encoding="utf-8")
    runs = results.load(results.RESULTS)
    assert runs, "bench/results/ holds no run"
    marks = [m[2] for m in results.MARK.finditer(page)]
    assert "targets" in marks and "runs" in marks
    assert results.render(page, runs) == page, "BENCHMARKS.md is stale: run `make bench-report`"
    assert results.unshown(page, runs) == [], "a figure no table shows: name its group in a mark"


def test_benchmarks_md_is_one_page_not_a_diary():
    page = results.PAGE.read_text(encoding="utf-8")
    assert len(page.splitlines()) < 200
    assert not re.search(r"\b(session|run) \d+\b", page, re.I)


def test_every_figure_shown_names_its_run_and_every_target_reads():
    figures = results.latest(results.load(results.RESULTS))
    for key, (fig, run) in figures.items():
        assert run["command"].startswith(".venv/bin/python bench/"), key
        assert run["machine"]["state"] in ("idle", "loaded"), key
        if fig.get("target"):
            assert results.verdict(fig) in ("met", "**missed**"), key


def _bench(tmp_path: Path, *argv: str, fail: bool = False) -> subprocess.CompletedProcess:
    script = tmp_path / "demo.py"
    script.write_text(textwrap.dedent(f"""
        import argparse, sys
        sys.path.insert(0, {str(ROOT)!r})
        from bench import results
        parser = argparse.ArgumentParser()
        results.option(parser)
        args = parser.parse_args()
        results.start("demo", args)
        print("rate 1,234 ev/s")
        results.record("demo.rate", 1234.5, "ev/s", 100, 12.345, ">= 3x", what="demo rate", against="raw")
        if {fail!r}:
            raise RuntimeError("the benchmark broke")
    """))
    return subprocess.run([sys.executable, str(script), *argv], capture_output=True, text=True, timeout=60)


def test_a_run_without_record_writes_nothing(tmp_path):
    before = sorted(results.RESULTS.iterdir())
    done = _bench(tmp_path)
    assert done.returncode == 0, done.stderr
    assert sorted(results.RESULTS.iterdir()) == before
    assert list(tmp_path.glob("*.json")) == []


def test_a_run_with_record_writes_one_dated_json_the_report_reads(tmp_path):
    out = tmp_path / "out"
    done = _bench(tmp_path, "--record", str(out))
    assert done.returncode == 0, done.stderr
    [path] = out.glob("*.json")
    assert re.fullmatch(r"\d{4}-\d\d-\d\d-\d{4}-demo\.json", path.name)
    doc = json.loads(path.read_text())
    assert doc["bench"] == "demo" and "--record" in doc["command"]
    assert doc["machine"]["state"] in ("idle", "loaded") and doc["machine"]["cores"] >= 1
    [fig] = doc["figures"]
    assert (fig["key"], fig["value"], fig["unit"], fig["baseline"], fig["ratio"], fig["target"]) == (
        "demo.rate", 1234.5, "ev/s", 100, 12.345, ">= 3x")
    page = "<!-- bench-report: targets -->\n<!-- /bench-report -->\n"
    table = results.render(page, results.load(out))
    assert "| demo rate | 1,234 ev/s | 100 ev/s raw | 12.35x | >= 3x | met |" in table


def test_a_run_that_raises_writes_nothing(tmp_path):
    out = tmp_path / "out"
    done = _bench(tmp_path, "--record", str(out), fail=True)
    assert done.returncode != 0 and "the benchmark broke" in done.stderr
    assert not out.exists() or list(out.glob("*.json")) == []


def _run(started: str, *figures: dict) -> dict:
    return {"format": 1, "bench": "demo", "started": started, "command": "c", "file": f"{started}.json",
            "machine": {"state": "idle"}, "figures": list(figures)}


def test_a_smoke_run_never_hides_a_full_runs_figure():
    full = {"key": "x.a", "value": 1, "unit": "s"}
    smoke = {"key": "x.a", "value": 9, "unit": "s"}
    only_smoke = {"key": "x.b", "value": 2, "unit": "s"}
    newer = _run("2026-12-02T10:00:00Z", smoke, only_smoke)
    newer["command"] = ".venv/bin/python bench/load.py --quick --record"
    figures = results.latest([_run("2026-12-01T10:00:00Z", full), newer])
    assert figures["x.a"][0]["value"] == 1 and figures["x.b"][0]["value"] == 2
    page = "<!-- bench-report: x -->\n<!-- /bench-report -->\n"
    assert "12-02 idle, quick" in results.render(page, [_run("2026-12-01T10:00:00Z", full), newer])


def test_the_latest_run_of_each_key_wins_and_keys_keep_their_first_place():
    a = {"key": "x.a", "value": 1, "unit": "s"}
    b = {"key": "x.b", "value": 2, "unit": "s"}
    newer_a = {"key": "x.a", "value": 3, "unit": "s"}
    figures = results.latest([_run("2026-12-01T10:00:00Z", a, b), _run("2026-12-02T10:00:00Z", newer_a)])
    assert list(figures) == ["x.a", "x.b"]
    assert figures["x.a"][0]["value"] == 3 and figures["x.b"][0]["value"] == 2


@pytest.mark.parametrize("target, value, unit, ratio, expected", [
    (">= 3x", 1, "ev/s", 3.0, "met"), (">= 3x", 1, "ev/s", 2.99, "**missed**"),
    ("<= 1.5x", 1, "ms", 1.5, "met"), ("<= 1.5x", 1, "ms", 1.51, "**missed**"),
    ("< 3 s", 2.99, "s", None, "met"), ("< 3 s", 3.0, "s", None, "**missed**"),
    ("< 1000 ms", 999, "ms", None, "met"), ("< 1000 ms", 1000, "ms", None, "**missed**"),
    ("< 2 s", 1999, "ms", None, "met"), ("< 2 s", 2000, "ms", None, "**missed**"),
    ("<= 0", 0, "commands", None, "met"), ("<= 0", 1, "commands", None, "**missed**"),
    (">= 3x", 1, "ev/s", None, ""),
])
def test_a_target_is_met_on_one_side_of_its_bound_only(target, value, unit, ratio, expected):
    assert results.verdict({"target": target, "value": value, "unit": unit, "ratio": ratio}) == expected


def test_a_results_file_missing_a_field_is_named(tmp_path):
    (tmp_path / "2026-12-03-0800-demo.json").write_text(json.dumps(
        {"format": 1, "bench": "demo", "started": "2026-12-03T08:00:00Z", "command": "c", "machine": {},
         "figures": [{"key": "demo.rate", "unit": "ev/s"}]}))
    with pytest.raises(ValueError, match=r"2026-12-03-0800-demo\.json: figures\[0\] has no field 'value'"):
        results.load(tmp_path)


def test_a_figure_key_or_target_that_the_report_cannot_read_is_refused():
    with pytest.raises(ValueError, match="figure key 'Rate'"):
        results.record("Rate", 1, "ev/s")
    with pytest.raises(ValueError, match="target 'about 30 ms'"):
        results.record("demo.rate", 1, "ms", target="about 30 ms")
