"""A phone's forms and cards keep what the player meant and say what happens: the bid box
follows its cap when a ticked ability raises it (MET-3, MET-4), choices survive a language
switch, the Time Out screen (TIME-5) holds keyboard focus while it is up and gives it back,
a card says the other side has thrown (MET-2), and the storyteller's settled card shows
the overbid (MET-13)."""

from __future__ import annotations

import pytest

from conteur.events.model import STORYTELLER
from tests.support.browser_support import CHROMIUM, NO_CHROMIUM
from tests.support.client_support import command
from tests.support.web_support import TABLET, Device, start_challenge

pytestmark = [pytest.mark.browser, pytest.mark.skipif(CHROMIUM is None, reason=NO_CHROMIUM)]


def card(device: Device):
    return device.page.get_by_test_id("challenge").first


def test_met_3_the_bid_box_follows_its_cap_when_an_own_ability_is_ticked(browser, demo):
    server, _, _, links = demo
    lucien = Device(browser, server.url, links["lucien"])
    mara = Device(browser, server.url, links["mara"])
    lucien.page.locator("details.new-challenge summary").click()
    form = lucien.page.locator("details.new-challenge form")
    form.locator("select[name=defender]").select_option("mara")
    form.locator("select[name=attribute]").select_option("physical")
    lucien.page.get_by_test_id("challenge-start").click()
    card(lucien).get_by_test_id("throw-rock").click()
    card(mara).get_by_test_id("throw-rock").click()
    card(lucien).get_by_test_id("bid-input").fill("7")
    card(lucien).get_by_test_id("bid-send").click()
    bid = card(mara).get_by_test_id("bid-input")
    mara.expect(bid).to_have_attribute("max", "5")  # Physical 5 (MET-4)
    mara.expect(bid).to_have_value("5")
    card(mara).get_by_test_id("bid-ability-Dodge").check()  # her own ability, declared (MET-3)
    mara.expect(bid).to_have_attribute("max", "6")
    mara.expect(bid).to_have_value("6")  # the box offers the new cap, not the old one
    card(mara).get_by_test_id("bid-ability-Dodge").uncheck()
    mara.expect(bid).to_have_value("5")
    bid.fill("4")  # what the player typed stays, whatever the cap does
    card(mara).get_by_test_id("bid-ability-Dodge").check()
    mara.expect(bid).to_have_attribute("max", "6")
    mara.expect(bid).to_have_value("4")
    lucien.close()
    mara.close()


def test_the_roll_form_keeps_its_choices_across_a_language_switch(browser, demo):
    server, _, _, links = demo
    iris = Device(browser, server.url, links["iris"])
    page = iris.page
    page.locator("#v5attr").select_option("dexterity")
    page.locator("#v5skill").select_option("stealth")
    page.locator("#v5diff").fill("4")
    page.get_by_test_id("lang-switch").click()
    iris.expect(page.locator("html")).to_have_attribute("lang", "fr")
    iris.expect(page.locator("#conn.online")).to_be_visible()
    iris.expect(page.locator("#v5attr")).to_have_value("dexterity")
    iris.expect(page.locator("#v5skill")).to_have_value("stealth")
    iris.expect(page.locator("#v5diff")).to_have_value("4")
    page.get_by_test_id("lang-switch").click()  # and back, for the next test's phone
    iris.expect(page.locator("html")).to_have_attribute("lang", "en")
    iris.close()


INSIDE = "() => !document.getElementById('app').contains(document.activeElement)"


def test_time_5_focus_stays_on_the_time_out_screen_and_comes_back_after(browser, demo):
    server, _, _, links = demo
    iris = Device(browser, server.url, links["iris"])
    page = iris.page
    page.locator("#v5diff").focus()
    chronicle = server.runtime.chronicle
    assert not chronicle.execute_sync("v5-demo", command("freeze", scope="session"), STORYTELLER).outcome.rejected
    iris.expect(page.get_by_test_id("freeze")).to_be_visible()
    for _ in range(6):  # Tab after Tab: never onto the buttons behind the Time Out
        assert page.evaluate(INSIDE), page.evaluate("document.activeElement.outerHTML.slice(0, 120)")
        page.keyboard.press("Tab")
    assert page.evaluate(INSIDE)
    assert not chronicle.execute_sync("v5-demo", command("resume", scope="session"), STORYTELLER).outcome.rejected
    iris.expect(page.get_by_test_id("freeze")).to_be_hidden()
    iris.expect(page.locator("#v5diff")).to_be_focused()
    iris.close()


def test_met_2_the_card_says_the_other_side_has_thrown(browser, server, setup):
    anna = Device(browser, server.url, setup.players["anna"])
    bruno = Device(browser, server.url, setup.players["bruno"])
    start_challenge(anna)
    anna.expect(card(anna).get_by_test_id("throw-rock")).to_be_visible()
    anna.expect(card(anna).get_by_test_id("other-thrown")).to_have_count(0)
    card(bruno).get_by_test_id("throw-paper").click()
    # sealed (MET-2): that Bruno has thrown, never what
    anna.expect(card(anna).get_by_test_id("other-thrown")).to_contain_text("Bruno has already thrown")
    said = card(anna).get_by_test_id("other-thrown").inner_text().lower()
    assert not any(word in said for word in ("rock", "paper", "scissors"))
    anna.close()
    bruno.close()


def test_met_13_the_storytellers_settled_card_shows_the_overbid(browser, demo):
    server, _, storyteller, links = demo
    st = Device(browser, server.url, f"{storyteller}&session=met-demo", viewport=TABLET)
    lucien = Device(browser, server.url, links["lucien"])
    mara = Device(browser, server.url, links["mara"])
    lucien.page.locator("details.new-challenge summary").click()
    form = lucien.page.locator("details.new-challenge form")
    form.locator("select[name=defender]").select_option("mara")
    form.locator("select[name=attribute]").select_option("physical")
    lucien.page.get_by_test_id("challenge-start").click()
    card(lucien).get_by_test_id("throw-rock").click()
    card(mara).get_by_test_id("throw-scissors").click()  # rock breaks scissors: Mara lost on the throw
    mara.expect(card(mara)).to_have_attribute("data-status", "window")
    card(mara).locator("form.overbid input[name=value]").fill("5")
    card(mara).get_by_test_id("overbid").click()
    card(lucien).get_by_test_id("bid-input").fill("7")
    card(lucien).get_by_test_id("bid-send").click()
    settled = st.page.get_by_test_id("st-done").locator('[data-challenge="c1"]')
    st.expect(settled).to_have_attribute("data-status", "resolved")
    st.expect(settled.get_by_test_id("st-overbid")).to_contain_text("Mara 5")
    st.expect(settled.get_by_test_id("st-overbid")).to_contain_text("Lucien 7")
    for d in (st, lucien, mara):
        d.close()
