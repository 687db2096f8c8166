"""The one Chromium the browser tests use, shared (tests/conftest.py exports the fixtures).

Debian's chromium only: Playwright's own browser is never downloaded nor used, so on a
machine without chromium every browser test is skipped with the reason printed
(``make test`` passes ``-rs``), never errors. ``CONTEUR_CHROMIUM=/path`` picks another
binary; a path that does not exist stands for a machine without chromium.
"""

from __future__ import annotations

import os
import shutil

import pytest


def find_chromium() -> str | None:
    override = os.environ.get("CONTEUR_CHROMIUM")
    if override is not None:
        return override if os.path.isfile(override) and os.access(override, os.X_OK) else None
    return shutil.which("chromium") or shutil.which("chromium-browser")


CHROMIUM = find_chromium()
NO_CHROMIUM = ("chromium is not installed (apt install chromium, or CONTEUR_CHROMIUM=/path/to/chromium):"
               " browser tests skipped")
ARGS = ["--no-sandbox", "--disable-gpu", "--disable-background-networking",
        "--disable-component-update", "--disable-sync", "--no-first-run"]
TIMEOUT = 15_000


def needs_chromium() -> None:
    if CHROMIUM is None:
        pytest.skip(NO_CHROMIUM)


@pytest.fixture(scope="module")
def playwright():
    needs_chromium()
    from playwright.sync_api import expect, sync_playwright

    expect.set_options(timeout=TIMEOUT)  # a CI machine under load is slow, not wrong
    with sync_playwright() as p:
        yield p


@pytest.fixture(scope="module")
def browser(playwright):
    needs_chromium()
    browser = playwright.chromium.launch(executable_path=CHROMIUM, args=ARGS)
    yield browser
    browser.close()
