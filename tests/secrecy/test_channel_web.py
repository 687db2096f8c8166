"""The venue channel in Chromium (tests/secrecy/test_channel.py has the rest): the phones and the
tablet on a plain-HTTP LAN name, every byte through a recording proxy, leave nothing to
read on the air; a join link becomes the phone's own credential, and moves."""

from __future__ import annotations

import re

import pytest

from tests.support.browser_support import CHROMIUM, NO_CHROMIUM
from tests.support.client_support import Proxy, make_chronicle, served
from tests.support.eavesdrop_support import overheard
from tests.support.eavesdrop_support import assert_nothing_readable, secrets_of

pytestmark = [pytest.mark.browser, pytest.mark.skipif(CHROMIUM is None, reason=NO_CHROMIUM)]


def test_a_night_on_phones_and_the_tablet_over_plain_http_leaves_nothing_to_read(lan_browser, tmp_path):
    """The phones and the tablet on a LAN name (plain HTTP, no Web Crypto), every byte
    through the recorder: a challenge thrown from the phones, the tablet's devices card
    and join sheet (HTTP), the review page."""
    from tests.support.web_support import TABLET, Device as Page, start_challenge

    setup = make_chronicle(tmp_path / "chronicle.db")
    with served(setup.db) as server, Proxy(server.port) as air:
        base = f"http://venue.lan:{air.port}"
        st = Page(lan_browser, base, f"{setup.storyteller}&session={setup.session}", viewport=TABLET)
        anna = Page(lan_browser, base, setup.players["anna"])
        bruno = Page(lan_browser, base, setup.players["bruno"])
        assert not anna.page.evaluate("window.isSecureContext")
        start_challenge(anna)
        anna.challenge().get_by_test_id("throw-rock").click()
        anna.expect(anna.challenge().get_by_test_id("throw-rock")).to_have_count(0)
        bruno.challenge().get_by_test_id("throw-paper").click()
        anna.expect(anna.challenge()).to_have_attribute("data-status", "window")
        st.page.get_by_test_id("show-devices").click()
        st.expect(st.page.get_by_test_id("show-devices")).to_have_text(re.compile("."))
        with st.context.expect_page() as opened:
            st.page.get_by_test_id("join-sheet").click()
        sheet = opened.value
        sheet.wait_for_load_state()
        st.expect(sheet.locator("img, svg").first).to_be_visible()
        minted = re.findall(r"#join=([A-Za-z0-9_-]+)", sheet.content())
        review = st.context.new_page()
        review.goto(f"{base}/review.html#join={setup.storyteller}&session={setup.session}")
        st.expect(review.get_by_text("Anna").first).to_be_visible()
        for page in (st, anna, bruno):
            page.close()
        heard = overheard(air.flows)
    assert minted, "the join sheet came through the channel"
    assert sum(h.kind == "ws-down" for h in heard) > 10
    assert_nothing_readable(heard, secrets_of(setup, minted))


def test_a_phone_keeps_its_own_credential_and_is_told_when_its_link_moves(browser, tmp_path):
    """The phone forgets the link for what its first hello turned it into (it reloads on
    that); the same link on a second phone moves the character there, and the first says so
    and forgets the character."""
    from tests.support.web_support import Device as Page

    setup = make_chronicle(tmp_path / "chronicle.db")
    link = setup.players["anna"]
    with served(setup.db) as server:
        first = Page(browser, server.url, link)
        kept = first.page.evaluate("localStorage.getItem('conteur.token')")
        assert kept and kept != link
        assert link not in first.page.url
        first.page.reload()
        first.expect(first.page.locator("#conn.online")).to_be_visible()
        second = Page(browser, server.url, link)
        first.expect(first.page.locator("#conn.replaced")).to_be_visible()
        first.expect(first.page.locator("main")).to_contain_text("another phone")
        assert first.page.evaluate("localStorage.getItem('conteur.token')") is None
        second.expect(second.page.locator("#conn.online")).to_be_visible()
        for page in (first, second):
            page.close()
