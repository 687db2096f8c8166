"""MET-3 on the phone: the defender's bid form offers its own
abilities from its sheet; ticking Brawl lets Bruno (Physical 7, Brawl 2) bid 9. Real
Chromium against a real server."""

from __future__ import annotations

import pytest

from tests.support.browser_support import NO_CHROMIUM, CHROMIUM
from tests.support.client_support import events_of_type
from tests.support.web_support import TABLET, Device, start_challenge

pytestmark = [pytest.mark.browser, pytest.mark.skipif(CHROMIUM is None, reason=NO_CHROMIUM)]


def test_the_defender_ticks_its_own_brawl_and_bids_9(browser, server, setup):
    anna = Device(browser, server.url, setup.players["anna"])
    bruno = Device(browser, server.url, setup.players["bruno"])
    start_challenge(anna)
    for phone in (anna, bruno):
        phone.challenge().get_by_test_id("throw-rock").click()
    anna.expect(anna.challenge()).to_have_attribute("data-status", "bidding")
    anna.challenge().get_by_test_id("bid-ability-melee").check()
    # the card draws itself again with the new bound: typing starts once it has
    anna.expect(anna.challenge().get_by_test_id("bid-input")).to_have_attribute("max", "8")
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


def test_the_feed_names_a_bidders_abilities_only_to_who_sees_the_bid(browser, server, setup):
    """A bid's and an overbid's feed line name the abilities declared with it
    (MET-3), once revealed to that viewer: the bidder and the storyteller. The opponent's
    copy is sealed (value and abilities), and its line names none, in English and French."""
    st = Device(browser, server.url, setup.storyteller, viewport=TABLET)
    anna = Device(browser, server.url, setup.players["anna"])
    bruno = Device(browser, server.url, setup.players["bruno"], locale="fr-FR")
    start_challenge(anna)
    anna.challenge().get_by_test_id("throw-rock").click()
    bruno.challenge().get_by_test_id("throw-scissors").click()  # Anna wins on the throw
    window = bruno.challenge()
    bruno.expect(window.get_by_test_id("overbid")).to_be_visible()
    window.locator("form.overbid").get_by_test_id("bid-ability-brawl").check()
    value = window.locator("form.overbid input[name=value]")
    bruno.expect(value).to_have_attribute("max", "9")
    value.fill("9")  # Physical 7 + his Brawl 2
    window.get_by_test_id("overbid").click()
    answer = anna.challenge()
    anna.expect(answer.get_by_test_id("bid-send")).to_be_visible()  # the winner answers (MET-13)
    answer.get_by_test_id("bid-ability-melee").check()
    anna.expect(answer.get_by_test_id("bid-input")).to_have_attribute("max", "8")
    answer.get_by_test_id("bid-input").fill("8")  # Physical 6 + her Melee 2
    answer.get_by_test_id("bid-send").click()
    anna.expect(anna.challenge()).to_have_count(0)  # 9 against 8: no retest, Anna's win stands

    bids = [(e["character"], e["value"], e["abilities"]) for e in events_of_type(setup.db, "met.bid_declared")]
    overbids = [(e["character"], e["value"], e["abilities"]) for e in events_of_type(setup.db, "met.overbid_declared")]
    assert (bids, overbids) == ([("anna", 8, ["melee"])], [("bruno", 9, ["brawl"])])
    log = st.page.get_by_test_id("log")
    st.expect(log).to_contain_text("c1: Bruno overbid with 9 (abilities: brawl).")
    st.expect(log).to_contain_text("c1: Anna bid 8 (abilities: melee).")
    anna_feed, bruno_feed = anna.page.get_by_test_id("feed"), bruno.page.get_by_test_id("feed")
    anna.expect(anna_feed).to_contain_text("Anna ⟷ Bruno: Anna bid 8 (abilities: melee).")
    anna.expect(anna_feed).to_contain_text("Bruno has overbid; only the storyteller knows the score.")
    bruno.expect(bruno_feed).to_contain_text("Anna ⟷ Bruno : Bruno surenchérit à 9 (capacités : brawl).")
    bruno.expect(bruno_feed).to_contain_text("Anna a enchéri ; seul le conteur connaît le montant.")
    assert "brawl" not in anna_feed.inner_text() and "melee" not in bruno_feed.inner_text()
    for d in (st, anna, bruno):
        d.close()
