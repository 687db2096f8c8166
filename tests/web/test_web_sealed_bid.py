"""The opponent's bid once a challenge has ended (rules choice MET-3: a bid
is told to the storyteller and stays sealed from the opponent, even after the end). The phone
says so in words a player understands, never a bare "?", in English and French: while the
result can still be answered, and after it stands. Real Chromium against a real server."""

from __future__ import annotations

import re

import pytest

from tests.support.browser_support import CHROMIUM, NO_CHROMIUM
from tests.support.client_support import events_of_type
from tests.support.web_support import Device, start_challenge

pytestmark = [pytest.mark.browser, pytest.mark.skipif(CHROMIUM is None, reason=NO_CHROMIUM)]

WORDS = {
    "en-US": ("Bruno (told to the storyteller)", "Bruno has bid; only the storyteller knows how much."),
    "fr-FR": ("Bruno (annoncée au conteur)", "Bruno a enchéri ; seul le conteur connaît le montant."),
}


def no_bare_question_mark(device: Device) -> None:
    """Not one "?" standing for a value on the page (a question in a sentence would end one)."""
    text = device.page.locator("main").inner_text()
    assert not re.search(r"(^|[\s:(·])\?($|[\s).·,])", text), text


@pytest.mark.parametrize("locale", ["en-US", "fr-FR"])
def test_the_opponents_bid_stays_sealed_in_words_after_the_challenge_ends(browser, server, setup, locale):
    window_words, feed_words = WORDS[locale]
    anna = Device(browser, server.url, setup.players["anna"], locale=locale)
    bruno = Device(browser, server.url, setup.players["bruno"])
    start_challenge(anna)
    for phone in (anna, bruno):
        phone.challenge().get_by_test_id("throw-rock").click()
    anna.challenge().get_by_test_id("bid-input").fill("6")
    anna.challenge().get_by_test_id("bid-send").click()
    bruno.challenge().get_by_test_id("bid-input").fill("7")
    bruno.challenge().get_by_test_id("bid-send").click()
    anna.expect(anna.challenge()).to_have_attribute("data-status", "window")
    anna.expect(anna.challenge().get_by_test_id("revealed")).to_contain_text(window_words)
    no_bare_question_mark(anna)
    anna.challenge().get_by_test_id("accept").click()
    anna.expect(anna.challenge()).to_have_count(0)  # ended: the card goes
    assert [e["reason"] for e in events_of_type(setup.db, "met.challenge_resolved")] == ["accepted"]
    feed = anna.page.get_by_test_id("feed")
    anna.expect(feed).to_contain_text(feed_words)
    no_bare_question_mark(anna)
    # MET-3: sealed for good on this phone, the value never reached it
    bids = anna.page.evaluate("window.conteur.vm.log.filter(l => l.type === 'met.bid_declared').map(l => [l.event.character, l.event.value ?? null])")
    assert sorted(bids) == [["anna", 6], ["bruno", None]]
    anna.page.reload()  # and after a reload, rebuilt from the stream alone
    anna.expect(anna.page.locator("#conn.online")).to_be_visible()
    anna.expect(anna.page.get_by_test_id("feed")).to_contain_text(feed_words)
    no_bare_question_mark(anna)
    anna.close()
    bruno.close()
