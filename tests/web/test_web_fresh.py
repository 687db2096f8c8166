"""A new storyteller's first minute: `conteur serve` on a fresh chronicle prints a link to
session "main", which has no event yet. The server refuses a hello to an empty session
unless it says `create` (a mistyped session name must not open a session
silently), so the tablet names the session and offers to open it."""

from __future__ import annotations

import pytest

from conteur.server.core.auth import Tokens
from conteur.server.core.roster import join_link
from conteur.server.store.sqlite import SQLiteStore
from tests.support.browser_support import CHROMIUM, NO_CHROMIUM, TIMEOUT
from tests.support.client_support import events_of_type, served

pytestmark = [pytest.mark.browser, pytest.mark.skipif(CHROMIUM is None, reason=NO_CHROMIUM)]


def test_a_storyteller_link_to_a_fresh_chronicle_offers_to_open_its_session(browser, tmp_path):
    from playwright.sync_api import expect

    db = tmp_path / "fresh.db"
    with SQLiteStore(db) as store:
        token = Tokens(store).issue("storyteller", name="storyteller")
    with served(db) as server:
        page = browser.new_page(viewport={"width": 1280, "height": 800})
        page.set_default_timeout(TIMEOUT)
        errors: list[str] = []
        page.on("pageerror", lambda e: errors.append(str(e)))
        page.goto(join_link(server.url, token, "main"))
        button = page.locator("#create-session")
        expect(button).to_have_text("Open session main")
        expect(page.locator("main.wait")).to_contain_text("no session 'main' here")
        assert events_of_type(db, "session.opened") == []  # nothing opened behind its back
        button.click()
        expect(page.locator("#conn.online")).to_be_visible()
        expect(button).to_have_count(0)
        assert errors == []
        page.close()
