"""Screenshots for the user guide (docs/guide.md): made by the browser tests that show each
step, written to docs/img/ only when ``CONTEUR_DOC_SHOTS=1`` (a run that refreshes them on
purpose), else to test-artifacts/web/, so an ordinary run leaves the tree as it was."""

from __future__ import annotations

import os
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
DOCS = ROOT / "docs" / "img"
ARTIFACTS = ROOT / "test-artifacts" / "web"


def doc_shot(target, name: str) -> Path:
    """``target``: a Playwright page or locator; ``name`` without ``.png``."""
    folder = DOCS if os.environ.get("CONTEUR_DOC_SHOTS") == "1" else ARTIFACTS
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / f"{name}.png"
    target.screenshot(path=str(path))
    return path
