"""MET-3 on the phone (issue 14, item 3): the defender's bid form offers its own
abilities from its sheet; ticking Brawl lets Bruno (Physical 7, Brawl 2) bid 9. Real
Chromium against a real server."""

from __future__ import annotations

import pytest

from tests.browser_support import NO_CHROMIUM, CHROMIUM
from tests.client_support import events_of_type
from tests.web_support import Device, start_challenge

pytestmark = [pytest.mark.browser, pytest.mark.skipif(CHROMIUM is None, reason=NO_CHROMIUM)]


def test_the_defender_ticks_its_own_brawl_and_bids_9(browser, server, setup):
    anna = Device(browser, server.url, setup.players["anna"])
    bruno = Device(browser, server.url, setup.players["bruno"])
    start_challenge(anna)
    for phone in (anna, bruno):
        phone.challenge().get_by_test_id("throw-rock").click()
    anna.expect(anna.challenge()).to_have_attribute("data-status", "bidding")
    anna.challenge().get_by_test_id("bid-ability-melee").check()
    anna.challenge().get_by_test_id("bid-input").fill("8")  # Physical 6 + her own Melee 2
    anna.challenge().get_by_test_id("bid-send").click()
    card = bruno.challenge()
    bruno.expect(card.get_by_test_id("bid-ability-brawl")).to_be_visible()
    bruno.expect(card.get_by_test_id("bid-ability-dodge")).to_be_visible()
    bruno.expect(card.get_by_test_id("bid-input")).to_have_attribute("max", "7")
    card.get_by_test_id("bid-ability-brawl").check()
    bruno.expect(card.get_by_test_id("bid-input")).to_have_attribute("max", "9")  # the bound follows
    card.get_by_test_id("bid-input").fill("9")
    card.get_by_test_id("bid-send").click()
    anna.expect(anna.challenge()).to_have_attribute("data-status", "window")  # Bruno won on bids
    bids = {e["character"]: (e["value"], e["abilities"])
            for e in events_of_type(setup.db, "met.bid_declared")}
    assert bids == {"anna": (8, ["melee"]), "bruno": (9, ["brawl"])}
    anna.close()
    bruno.close()
