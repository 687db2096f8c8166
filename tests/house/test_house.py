"""House rules that keep the layout honest: checked on the source, so a change
that breaks one fails here instead of waiting for a reader to trip on it."""

from __future__ import annotations

import re
from pathlib import Path

TESTS = Path(__file__).resolve().parents[1]


def test_no_test_module_imports_another():
    """Shared fixtures live in conftest.py and shared helpers in *_support.py modules: a
    test module imported by another runs its module-level code twice and couples the two."""
    offenders = []
    for path in sorted(TESTS.rglob("*.py")):
        for line in path.read_text().splitlines():
            if re.match(r"\s*(from\s+([\w.]+\.)?test_\w+\s+import|import\s+([\w.]+\.)?test_\w+|from\s+[\w.]+\s+import\s+test_)", line):
                offenders.append(f"{path.relative_to(TESTS)}: {line.strip()}")
    assert offenders == []


def test_tests_live_in_folders_by_what_they_test():
    """A reader finds the tests of a part in its folder (tests/rules, tests/store, ...) and the
    helpers they share in tests/support: nothing but conftest.py at the top, no test module
    among the helpers, and no folder deeper than one level."""
    top = sorted(p.name for p in TESTS.iterdir() if p.is_file())
    assert top == ["conftest.py"]
    assert sorted((TESTS / "support").glob("test_*.py")) == []
    folders = sorted(p.name for p in TESTS.iterdir() if p.is_dir() and p.name != "__pycache__")
    assert {"rules", "store", "server", "web", "support"} <= set(folders)
    for path in TESTS.rglob("test_*.py"):
        assert len(path.relative_to(TESTS).parts) == 2, path
