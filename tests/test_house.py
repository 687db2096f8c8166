"""House rules that keep the layout honest: checked on the source, so a change
that breaks one fails here instead of waiting for a reader to trip on it."""

from __future__ import annotations

import re
from pathlib import Path

TESTS = Path(__file__).resolve().parent


def test_no_test_module_imports_another():
    """Shared fixtures live in conftest.py and shared helpers in *_support.py modules: a
    test module imported by another runs its module-level code twice and couples the two."""
    offenders = []
    for path in sorted(TESTS.glob("*.py")):
        for line in path.read_text().splitlines():
            if re.match(r"\s*(from\s+(tests\.)?test_\w+\s+import|import\s+(tests\.)?test_\w+|from\s+tests\s+import\s+test_)", line):
                offenders.append(f"{path.name}: {line.strip()}")
    assert offenders == []
