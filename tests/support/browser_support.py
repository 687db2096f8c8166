"""The one Chromium the browser tests use, shared (tests/conftest.py exports the fixtures).

Debian's chromium only: Playwright's own browser is never downloaded nor used, so on a
machine without chromium every browser test is skipped with the reason printed
(``make test`` passes ``-rs``), never errors. ``CONTEUR_CHROMIUM=/path`` picks another
binary; a path that does not exist stands for a machine without chromium.
"""

from __future__ import annotations

import os
import re
import shutil
import time

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


# a function's source, as Playwright's evaluate takes it: anything else is an expression
_FUNCTION = re.compile(r"\s*(async\s+)?(function\b|\([^()]*\)\s*=>|[A-Za-z_$][\w$]*\s*=>)")


def _wait_for_function(page, expression: str, *, arg=None, timeout: float | None = None, polling=None):
    """``Page.wait_for_function`` polled from here through ``evaluate``: Playwright's own
    polls inside the page by compiling the predicate with eval, which the app's CSP
    (``script-src 'self'``, no ``unsafe-eval``) refuses once the first try was false."""
    js = expression if _FUNCTION.match(expression) else f"() => ({expression})"
    deadline = time.monotonic() + (TIMEOUT if timeout is None else timeout) / 1000
    while True:
        value = page.evaluate(js, arg)
        if value:
            return value
        if time.monotonic() > deadline:
            raise AssertionError(f"waited {timeout or TIMEOUT} ms for {expression}")
        page.wait_for_timeout(50)


@pytest.fixture(scope="module")
def playwright():
    needs_chromium()
    from playwright.sync_api import Page, expect, sync_playwright

    expect.set_options(timeout=TIMEOUT)  # a CI machine under load is slow, not wrong
    Page.wait_for_function = _wait_for_function
    with sync_playwright() as p:
        yield p


@pytest.fixture(scope="module")
def browser(playwright):
    needs_chromium()
    browser = playwright.chromium.launch(executable_path=CHROMIUM, args=ARGS)
    yield browser
    browser.close()
