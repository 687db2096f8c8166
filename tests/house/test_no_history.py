"""Comments say why, in present terms: no comment, docstring or string of the project's
code cites an issue, a session of work or a benchmark run (CONTRIBUTING.md, "Comments and
commits"). History belongs in git and figures in BENCHMARKS.md; a reader of the code needs
what it does and why, not when it changed.

The scan reads every tracked file of the code's folders. In Python it reads comments and
docstrings for every pattern, and the other string literals for the worded ones (a test's
data may well hold ``#1``); in the other languages it reads the comments for ``#NN`` and the
whole text for the worded patterns. A "session" in this project is also a night of play,
so only a session *number* counts (``session 7``), never the word."""

from __future__ import annotations

import ast
import io
import re
import subprocess
import tokenize
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
FOLDERS = ("events", "server", "client", "tests", "bench", "deploy", "tools", ".ci")
ROOT_FILES = ("pyproject.toml", "Makefile")
SKIPPED = re.compile(r"(^|/)vendor/|\.(json|png|jpg|svg|gz|db|ico|webmanifest|woff2?)$")
# this file: its patterns and examples are what it looks for
SELF = Path(__file__).resolve().relative_to(ROOT).as_posix()

# Worded references to the project's history, looked for everywhere.
WORDED = re.compile(
    r"""\bissues?\s*\#?\d+                      # issue 18, issues 13 and 14, issue #7
      | \bdeliver(?:able)?s?\s+\d+             # Deliver 5, deliverable 9
      | \bsessions?\s+\#?\d+\b                  # session 7 (of work, or BENCHMARKS' section)
      | \bBENCHMARKS\W{0,3}session             # BENCHMARKS "Session 7"
      | (?<![-\w])runs?\s+\#\d+                 # run #3
      | (?<![-\w])run\s+\d+\b(?!\s*(?:times|seconds|s\b|ms\b|events|devices))  # run 3
      | \breview\d+\b                          # review4 found
      | \b(?:last|previous)\s+(?:work\s+)?session\s+(?:found|showed|measured|added|fixed)
      | \blast\s+session\b(?!'s)               # "as the last session found"
    """,
    re.IGNORECASE | re.VERBOSE,
)
# A bare issue reference, looked for in comments only (a CSS colour is #000, a test's data #1).
HASH_REF = re.compile(r"(?<![\w&#])\#\d{1,4}\b(?![0-9a-fA-F])")

# Genuine uses, not history: (file, text the match is part of).
ALLOWED: set[tuple[str, str]] = set()


def tracked() -> list[Path]:
    try:
        out = subprocess.run(["git", "ls-files", "-z", "--", *FOLDERS, *ROOT_FILES], cwd=ROOT,
                             capture_output=True, check=True).stdout.decode().split("\0")
        paths = [ROOT / p for p in out if p]
    except (OSError, subprocess.CalledProcessError):  # a copy without git: every file then
        paths = [p for f in FOLDERS if (ROOT / f).is_dir() for p in (ROOT / f).rglob("*") if p.is_file()]
        paths += [ROOT / f for f in ROOT_FILES if (ROOT / f).is_file()]
    return sorted(p for p in paths if p.is_file() and p.relative_to(ROOT).as_posix() != SELF
                  and not SKIPPED.search(p.relative_to(ROOT).as_posix()))


def python_pieces(source: str) -> list[tuple[int, str, bool]]:
    """(line, text, is_comment_or_docstring) of each comment and string literal."""
    docstrings = set()
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)):
            body = node.body
            if body and isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant) \
                    and isinstance(body[0].value.value, str):
                docstrings.add(body[0].value.lineno)
    pieces = []
    for tok in tokenize.generate_tokens(io.StringIO(source).readline):
        if tok.type == tokenize.COMMENT:
            pieces.append((tok.start[0], tok.string[1:], True))
        elif tok.type == tokenize.STRING:
            pieces.append((tok.start[0], tok.string, tok.start[0] in docstrings))
        elif tok.type == getattr(tokenize, "FSTRING_MIDDLE", None):
            pieces.append((tok.start[0], tok.string, False))
    return pieces


def other_comments(path: Path, text: str) -> list[tuple[int, str]]:
    """The comments of a JavaScript, CSS, HTML, shell or configuration file, roughly: enough
    to find a ``#NN`` there without reading a colour or an entity as one."""
    found = []

    def add(match: re.Match, group: int = 1) -> None:
        found.append((text.count("\n", 0, match.start()) + 1, match.group(group)))

    suffix = path.suffix
    if suffix in (".js", ".mjs", ".css"):
        for m in re.finditer(r"/\*(.*?)\*/", text, re.DOTALL):
            add(m)
    if suffix in (".js", ".mjs"):
        for m in re.finditer(r"(?:^|[\s;{}()])//(.*)$", text, re.MULTILINE):
            add(m)
    elif suffix in (".html", ".md"):
        for m in re.finditer(r"<!--(.*?)-->", text, re.DOTALL):
            add(m)
        if suffix == ".md":
            found.append((1, text))
    elif suffix != ".css":  # shell, Makefile, TOML, systemd units, .ci/run
        for m in re.finditer(r"(?:^|\s)#(.*)$", text, re.MULTILINE):
            add(m)
    return found


def history(path: Path, root: Path = ROOT) -> list[str]:
    rel = path.relative_to(root).as_posix()
    try:
        text = path.read_text()
    except UnicodeDecodeError:
        return []
    hits = []

    def check(line: int, piece: str, hash_too: bool) -> None:
        for pattern in (WORDED, HASH_REF) if hash_too else (WORDED,):
            for m in pattern.finditer(piece):
                context = piece[max(0, m.start() - 30):m.end() + 30].replace("\n", " ")
                if not any(rel == f and allowed in context for f, allowed in ALLOWED):
                    hits.append(f"{rel}:{line + piece.count(chr(10), 0, m.start())}: {m.group(0)!r} in {context!r}")

    if path.suffix == ".py":
        for line, piece, commentary in python_pieces(text):
            check(line, piece, commentary)
    else:
        for m in WORDED.finditer(text):
            check(text.count("\n", 0, m.start()) + 1, m.group(0), False)
        for line, piece in other_comments(path, text):
            for m in HASH_REF.finditer(piece):
                check(line, piece[m.start():m.end()], True)
    return hits


def test_no_comment_docstring_or_string_cites_history():
    """An issue, a session of work or a benchmark run belongs in git's history, not the code."""
    offenders = [hit for path in tracked() for hit in history(path)]
    assert offenders == [], "\n".join(["history in the code; say why in present terms:", *offenders])


@pytest.mark.parametrize("source", [
    "x = 1  # issue 18: the review's memory\n",
    '"""Dispute review (issue 7)."""\n',
    "def f():\n    \"\"\"Kept small (BENCHMARKS \\\"Session 7\\\").\"\"\"\n",
    "# bounded since session 6\n",
    "# as run 3 measured\n",
    "# review4 found a leak\n",
    "# fixed in #12\n",
    "# what the last session found\n",
    "raise ValueError('refused (issue 13, Deliver 5)')\n",
])
def test_the_scan_finds_history(tmp_path, source):
    path = tmp_path / "probe.py"
    path.write_text(source)
    assert history(path, tmp_path), source


@pytest.mark.parametrize("source", [
    "x = '#000'  # the panel's colour\n",
    "assert out.startswith('#6 ')  # the client numbers its lines\n",
    "# the chronicle's previous session left a tie debt (MET-13)\n",
    "# every session in the chronicle, in the order of its first event\n",
    "p.add_argument('--runs', type=int, default=5)  # runs 5 folds by default\n",
    "# play round 2 after a tie\n",
])
def test_the_scan_leaves_the_domain_alone(tmp_path, source):
    path = tmp_path / "probe.py"
    path.write_text(source)
    assert history(path, tmp_path) == [], source


def test_the_scan_reads_javascript_comments_but_not_colours(tmp_path):
    path = tmp_path / "probe.js"
    path.write_text('const c = "#000"; // the phone\'s panel, issue 14\n/* see #3 */\n')
    found = history(path, tmp_path)
    assert len(found) == 2 and "issue 14" in found[0] and "#3" in found[1]
