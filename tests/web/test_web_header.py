"""The phone's header on one line at 360 px: the character and session, the turn,
the connection pill (with the count of commands waiting when offline) and the language
switch, in English and French. It wrapped onto two lines (96 px tall) on every phone: the
name kept 45 % of the width and the rest went below. Real Chromium against a real server."""

from __future__ import annotations

import pytest

from tests.support.browser_support import CHROMIUM, NO_CHROMIUM
from tests.support.client_support import Proxy
from tests.support.web_support import PHONE, Device, start_challenge

pytestmark = [pytest.mark.browser, pytest.mark.skipif(CHROMIUM is None, reason=NO_CHROMIUM)]

LAYOUT = """() => {
  const h = document.querySelector('header.bar');
  const s = getComputedStyle(h);
  const px = (v) => parseFloat(v) || 0;
  const kids = [...h.children].map((k) => { const r = k.getBoundingClientRect();
    return {name: k.className, top: r.top, bottom: r.bottom, right: r.right, height: r.height}; });
  return {height: h.getBoundingClientRect().height, right: h.getBoundingClientRect().right,
    frame: px(s.paddingTop) + px(s.paddingBottom) + px(s.borderTopWidth) + px(s.borderBottomWidth),
    scroll: h.scrollWidth - h.clientWidth, kids};
}"""


def assert_one_line(device: Device, items: int = 4) -> dict:
    got = device.page.evaluate(LAYOUT)
    kids = got["kids"]
    assert len(kids) == items, kids  # who, turn (not while commands wait unsent), pill, language
    tallest = max(k["height"] for k in kids)
    # one line: the header is as tall as its tallest item, and every item shares that line
    assert got["height"] <= tallest + got["frame"] + 1, got
    assert max(k["top"] for k in kids) < min(k["bottom"] for k in kids), got
    assert all(k["right"] <= got["right"] + 0.5 for k in kids) and got["scroll"] <= 0, got
    return got


@pytest.mark.parametrize("locale", ["en-US", "fr-FR"])
def test_the_phone_header_is_one_line_at_360_px(browser, server, setup, locale):
    for who in ("anna", "bruno"):
        phone = Device(browser, server.url, setup.players[who], locale=locale)
        assert phone.page.viewport_size == PHONE
        assert_one_line(phone)
        phone.expect(phone.page.get_by_test_id("session-name")).to_be_visible()
        phone.close()
    storyteller = Device(browser, server.url, setup.storyteller, locale=locale)  # a storyteller's phone
    assert_one_line(storyteller)
    storyteller.close()


@pytest.mark.parametrize("locale,words", [("en-US", "1 waiting"), ("fr-FR", "1 en attente")])
def test_offline_with_a_command_waiting_the_header_stays_one_line(browser, server, setup, locale, words):
    with Proxy(server.port) as proxy:
        anna = Device(browser, proxy.url, setup.players["anna"], locale=locale)
        bruno = Device(browser, server.url, setup.players["bruno"])
        start_challenge(bruno, defender="anna")
        anna.expect(anna.challenge().get_by_test_id("throw-paper")).to_be_visible()
        proxy.partition()
        anna.challenge().get_by_test_id("throw-paper").click()
        pill = anna.page.get_by_test_id("conn")
        anna.expect(pill).to_have_class("conn offline", timeout=6_000)
        anna.expect(pill).to_contain_text(words)
        assert_one_line(anna, items=3)
        assert pill.evaluate("(p) => { const l = p.querySelector('.label'); return l.scrollWidth <= l.clientWidth; }"), \
            "the pill's words are cut short"  # the count of commands waiting shows whole
        # the whole pill is read out even where its words are cut short on screen
        assert words in pill.get_attribute("aria-label")
        anna.shot(f"phone-header-offline-{locale}-360x740")
        proxy.heal()
        anna.expect(anna.page.locator("#conn.online")).to_be_visible(timeout=30_000)
        assert_one_line(anna)
        anna.close()
        bruno.close()
