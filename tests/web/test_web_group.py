"""A group challenge on four phones (MET-1: one character challenges several): Anna
against Bruno, Clara and Dora at once, with sealed throws (no phone learns a throw before
its own is in, MET-2), a tie settled by bids, one retest and two overbids (MET-12,
MET-14), each defender's outcome of its own and one settling of the whole; the tablet and
the wall show it as one challenge. Real Chromium against a real server."""

from __future__ import annotations

import pytest

from tests.support.browser_support import CHROMIUM, NO_CHROMIUM
from tests.support.client_support import events_of_type
from tests.support.doc_shots import doc_shot
from tests.support.group_support import DEFENDERS
from tests.support.group_web_support import SID, brawl, wait_events  # noqa: F401 (a fixture)
from tests.support.web_support import TABLET, Device

pytestmark = [pytest.mark.browser, pytest.mark.skipif(CHROMIUM is None, reason=NO_CHROMIUM)]

def pair(device: Device, defender: str):
    return device.challenge(f"c1.{DEFENDERS.index(defender) + 1}")


def test_one_against_three_on_four_phones(browser, brawl):
    server, db, links = brawl
    anna = Device(browser, server.url, links["anna"])
    phones = {who: Device(browser, server.url, links[who]) for who in DEFENDERS}
    st = Device(browser, server.url, links["storyteller"], viewport=TABLET)
    wall = Device(browser, server.url, links["wall"], viewport=TABLET)

    # Anna ticks Clara and Dora besides Bruno: one challenge against the three
    anna.page.locator("details.new-challenge summary").click()
    form = anna.page.locator("details.new-challenge form")
    form.locator("select[name=defender]").select_option("bruno")
    form.get_by_test_id("nc-more-clara").check()
    form.get_by_test_id("nc-more-dora").check()
    form.locator("select[name=attribute]").select_option("physical")
    anna.page.get_by_test_id("challenge-start").click()
    [issued] = wait_events(anna, db, "met.group_challenge_issued", 1)
    assert issued["defenders"] == list(DEFENDERS) and issued["pairs"] == ["c1.1", "c1.2", "c1.3"]

    # one throw of Anna's against all three (MET-2), then Bruno's: nothing is revealed yet
    group_throw = anna.page.get_by_test_id("group-throw")
    anna.expect(group_throw).to_contain_text("Bruno, Clara, Dora")
    group_throw.get_by_test_id("throw-rock").click()
    anna.expect(group_throw).to_have_count(0)
    bruno, clara, dora = (phones[w] for w in DEFENDERS)
    card = pair(bruno, "bruno")
    bruno.expect(card.get_by_test_id("group-of")).to_contain_text("Anna against Bruno, Clara, Dora")
    card.get_by_test_id("throw-scissors").click()
    bruno.expect(card.locator("[data-testid=stage]")).to_have_text("Throws")  # waiting for the others
    wait_events(bruno, db, "met.throw_committed", 4)
    # Bruno's phone has Anna's throw sealed, and no reveal before Clara and Dora throw
    assert bruno.page.evaluate("() => window.conteur.vm.challenges['c1.1'].throws.anna") == "sealed"
    bruno.expect(card.get_by_test_id("revealed")).not_to_contain_text("Anna")
    assert events_of_type(db, "met.throws_revealed") == []
    pair(clara, "clara").get_by_test_id("throw-rock").click()
    pair(dora, "dora").get_by_test_id("throw-paper").click()
    bruno.expect(card).to_have_attribute("data-status", "window")  # Anna beat Bruno
    assert len(events_of_type(db, "met.throws_revealed")) == 3

    # the tie with Clara, settled by bids: Anna first (MET-3)
    tied = pair(anna, "clara")
    anna.expect(tied).to_have_attribute("data-status", "bidding")
    tied.get_by_test_id("bid-input").fill("10")
    tied.get_by_test_id("bid-send").click()
    clara_card = pair(clara, "clara")
    clara.expect(clara_card.get_by_test_id("bid-send")).to_be_visible()
    clara_card.get_by_test_id("bid-input").fill("5")
    clara_card.get_by_test_id("bid-send").click()
    clara.expect(clara_card).to_have_attribute("data-status", "window")

    # two overbids: Bruno's (fails) and Anna's against Dora (earns a retest)
    card.locator("form.overbid input[name=value]").fill("5")
    card.get_by_test_id("overbid").click()
    answer = pair(anna, "bruno")
    anna.expect(answer.get_by_test_id("bid-send")).to_be_visible()
    answer.get_by_test_id("bid-input").fill("10")
    answer.get_by_test_id("bid-send").click()
    bruno.expect(card).to_have_count(0)  # Bruno's pair stands: Anna won
    lost = pair(anna, "dora")
    anna.expect(lost.get_by_test_id("overbid")).to_be_visible()
    lost.locator("form.overbid input[name=value]").fill("10")
    lost.get_by_test_id("overbid").click()
    dora_card = pair(dora, "dora")
    dora.expect(dora_card.get_by_test_id("bid-send")).to_be_visible()
    dora_card.get_by_test_id("bid-input").fill("4")
    dora_card.get_by_test_id("bid-send").click()
    dora.expect(dora_card).to_have_attribute("data-status", "throwing")  # 10 to 4: a retest

    # one retest: Clara's; then Anna's one throw counts against Clara and Dora
    clara_card.get_by_test_id("retest").click()
    clara.expect(clara_card).to_have_attribute("data-status", "throwing")
    anna.expect(anna.page.get_by_test_id("group-throw")).to_contain_text("Clara, Dora")
    # Anna has used her overbid: her retest left is one, over the whole group (MET-12, MET-14)
    anna.page.get_by_test_id("group-throw").get_by_test_id("throw-rock").click()
    clara_card.get_by_test_id("throw-scissors").click()
    dora_card.get_by_test_id("throw-scissors").click()
    clara.expect(clara_card).to_have_attribute("data-status", "window")
    clara_card.get_by_test_id("accept").click()
    dora.expect(dora_card).to_have_attribute("data-status", "window")
    dora_card.get_by_test_id("accept").click()

    [settled] = wait_events(st, db, "met.group_settled", 1)
    assert settled["results"] == {"bruno": "anna", "clara": "anna", "dora": "anna"}
    assert [e["character"] for e in events_of_type(db, "met.overbid_declared")] == ["bruno", "anna"]
    assert [e["character"] for e in events_of_type(db, "met.retest_taken")] == ["clara"]
    log = st.page.get_by_test_id("log")
    st.expect(log).to_contain_text("c1: the group challenge stands: Anna over Bruno, Anna over Clara, Anna over Dora.")
    group = st.page.get_by_test_id("st-group")
    st.expect(group.first).to_contain_text("Anna ⟷ Bruno, Clara, Dora")
    st.expect(group.first.get_by_test_id("st-group-stage")).to_have_text("Settled 3/3")
    doc_shot(group.first, "group-challenge-tablet")
    anna.expect(anna.page.get_by_test_id("feed")).to_contain_text("Anna ⟷ Bruno, Clara, Dora: the group challenge stands")
    # the review tells it as one challenge, each defender's pair with its winner
    review = st.context.new_page()
    review.goto(f"{server.url}/review.html#join={links['storyteller']}&session={SID}&challenge=c1")
    st.expect(review.get_by_test_id("challenge-sentence")).to_contain_text(
        "Anna challenged Bruno, Clara, Dora together (Physical): against Bruno: rock beat scissors")
    st.expect(review.get_by_test_id("challenge-pairs").locator("li")).to_have_count(3)
    st.expect(review.get_by_test_id("challenge-pairs")).to_contain_text("Anna ⟷ Dora: Winner Anna")
    review.close()
    for device in (anna, *phones.values(), st, wall):
        device.close()


def test_the_wall_and_the_tablet_show_a_group_as_one(browser, brawl):
    server, db, links = brawl
    anna = Device(browser, server.url, links["anna"])
    st = Device(browser, server.url, links["storyteller"], viewport=TABLET)
    wall = Device(browser, server.url, links["wall"], viewport=TABLET)
    anna.page.locator("details.new-challenge summary").click()
    form = anna.page.locator("details.new-challenge form")
    form.locator("select[name=defender]").select_option("clara")
    form.get_by_test_id("nc-more-dora").check()
    anna.page.get_by_test_id("challenge-start").click()
    anna.expect(anna.page.get_by_test_id("group-throw")).to_contain_text("Clara, Dora")
    doc_shot(anna.page, "group-challenge-phone")
    line = wall.page.locator('[data-testid=wall-challenge][data-challenge="c1"]')
    wall.expect(line).to_contain_text("Anna ⟷ Clara, Dora")
    wall.expect(line).to_contain_text("0/2")
    pairs = st.page.get_by_test_id("st-group-pairs")
    st.expect(pairs.locator("li")).to_have_count(2)
    # the storyteller cancels the group: both pairs go with it
    st.page.get_by_test_id("cancel-group").click()
    st.page.get_by_test_id("confirm").get_by_test_id("confirm-yes").click()
    wall.expect(wall.page.get_by_test_id("wall-challenge")).to_have_count(0)
    anna.expect(anna.page.get_by_test_id("group-throw")).to_have_count(0)
    for device in (anna, st, wall):
        device.close()
