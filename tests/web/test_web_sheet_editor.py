"""The storyteller amends a sheet from the tablet (sheet_editor.js), in real Chromium
against a real server: the player's phone shows the new traits and the server holds the
bid to the new cap (MET-4); another phone learns neither the sheet nor the reason; a
refusal is shown under the editor, naming what is wrong."""

from __future__ import annotations

import json

import pytest

from tests.support.client_support import events_of_type
from tests.support.browser_support import NO_CHROMIUM, CHROMIUM
from tests.support.web_support import TABLET, Device, start_challenge

pytestmark = [
    pytest.mark.browser,
    pytest.mark.skipif(CHROMIUM is None, reason=NO_CHROMIUM),
]


def physical(phone: Device):
    return phone.page.locator(".character .trait").filter(has_text="Physical").locator("b")


def amend(st: Device, character: str, edit, reason: str = "") -> None:
    editor = st.page.get_by_test_id("sheet-editor")
    if editor.get_attribute("open") is None:
        editor.locator("summary").click()
    st.page.get_by_test_id("sheet-character").select_option(character)
    st.expect(editor).to_have_attribute("data-character", character)
    editor.get_by_test_id("sheet-reset").click()  # a refused draft stays until reset
    box = editor.get_by_test_id("sheet-json")
    sheet = edit(json.loads(box.input_value()))  # prefilled with the current sheet
    box.fill(sheet if isinstance(sheet, str) else json.dumps(sheet))
    editor.get_by_test_id("sheet-reason").fill(reason)
    editor.get_by_test_id("sheet-send").click()


def test_met_4_the_storyteller_amends_a_sheet_and_the_phone_bids_under_the_new_cap(browser, server, setup):
    st = Device(browser, server.url, setup.storyteller, viewport=TABLET)
    anna = Device(browser, server.url, setup.players["anna"])
    bruno = Device(browser, server.url, setup.players["bruno"])
    anna.expect(physical(anna)).to_have_text("6")
    editor = st.page.get_by_test_id("sheet-editor")

    # refusals are shown under the editor, and change nothing
    amend(st, "anna", lambda s: "{not json")
    st.expect(editor.get_by_test_id("sheet-rejected")).to_contain_text("not a sheet in JSON")
    st.expect(editor.get_by_test_id("sheet-json")).to_have_value("{not json")  # kept, to fix
    amend(st, "anna", lambda s: {"kind": "v5", "hunger": 1})
    st.expect(editor.get_by_test_id("sheet-rejected")).to_have_text(
        "Anna has a met sheet: a v5 sheet cannot replace it (send a met sheet)")
    amend(st, "anna", lambda s: {**s, "physical": "six"})
    st.expect(editor.get_by_test_id("sheet-rejected")).to_have_text(
        "The sheet does not validate: Expected `int`, got `str` (sheet.physical)")
    st.page.get_by_test_id("sheet-reset").click()
    assert json.loads(editor.get_by_test_id("sheet-json").input_value())["physical"] == 6
    assert events_of_type(setup.db, "session.sheet_amended") == []

    # a wound: 6 Physical -> 4
    amend(st, "anna", lambda s: {**s, "physical": 4}, reason="stabbed in the cellar")
    st.expect(editor.get_by_test_id("sheet-amended")).to_have_text("Anna's sheet is amended.")
    anna.expect(physical(anna)).to_have_text("4")
    st.expect(st.page.get_by_test_id("log")).to_contain_text("A storyteller amended Anna's sheet (stabbed in the cellar).")
    st.shot("storyteller-sheet-editor-1280x800", focus="[data-testid=sheet-editor]")
    [stored] = events_of_type(setup.db, "session.sheet_amended")
    assert (stored["sheet"]["physical"], stored["reason"]) == (4, "stabbed in the cellar")
    # the editor now starts from the amended sheet
    st.expect(editor.get_by_test_id("sheet-json")).to_have_value(json.dumps(stored["sheet"], indent=2))

    # an event arriving while the storyteller types re-renders the page: the caret stays
    box = editor.get_by_test_id("sheet-json")
    box.click()
    box.press("Control+Home")
    for _ in range(3):
        box.press("ArrowDown")
    caret = box.evaluate("el => el.selectionStart")
    assert caret > 0
    bruno.page.get_by_test_id("out-of-game").click()
    st.expect(st.page.get_by_test_id("log")).to_contain_text("Bruno went out of game.")
    assert box.evaluate("el => [document.activeElement === el, el.selectionStart]") == [True, caret]
    bruno.page.get_by_test_id("back-in-game").click()
    st.expect(st.page.get_by_test_id("log")).to_contain_text("Bruno came back in game.")

    # Bruno learns that Anna's sheet changed, not what it says nor why
    bruno.page.wait_for_function("window.conteur.vm.log.some(l => l.type === 'session.sheet_amended')")
    seen = bruno.page.evaluate("JSON.stringify(window.conteur.vm)")
    assert "stabbed" not in seen
    assert bruno.page.evaluate("window.conteur.vm.characters.anna.sheet") is None

    # MET-4: on a tie Anna's phone offers at most her 4 Physical; the server refuses 9
    # (above the cap of 8) even from a phone that ignores the form's bound
    start_challenge(anna)
    anna.challenge().get_by_test_id("throw-rock").click()
    bruno.challenge().get_by_test_id("throw-rock").click()
    anna.expect(anna.challenge()).to_have_attribute("data-status", "bidding")
    bid = anna.challenge().get_by_test_id("bid-input")
    anna.expect(bid).to_have_attribute("max", "4")
    bid.evaluate("el => el.removeAttribute('max')")
    bid.fill("9")
    anna.challenge().get_by_test_id("bid-send").click()
    anna.expect(anna.page.get_by_test_id("notice-reject")).to_contain_text(
        "bid 9 is above your cap of 8 (twice your 4 Physical traits)")  # words, no rule code
    anna.shot("player-bid-refused-after-amendment-360x740")
    for device in (st, anna, bruno):
        device.close()


def hunger(phone: Device):
    return phone.page.locator(".character .trait").filter(has_text="Hunger").locator("b")


def amended(device: Device, count: int) -> None:
    device.page.wait_for_function(
        f"window.conteur.vm.log.filter(l => l.type === 'session.sheet_amended').length === {count}")


def test_v5_5_a_sheet_with_another_starting_hunger_sets_the_phones_hunger_again(browser, demo):
    """V5-5: Hunger lives apart from the sheet once it moved; an amended sheet keeps it,
    unless the sheet's own Hunger changes: then the phone and the tablet show the new one."""
    server, _, storyteller, links = demo
    st = Device(browser, server.url, f"{storyteller}&session=v5-demo", viewport=TABLET)
    iris = Device(browser, server.url, links["iris"])
    iris.expect(hunger(iris)).to_have_text("2")
    field = st.page.locator("#hunger-iris")
    field.fill("4")
    st.page.locator("form[data-act=set_hunger][data-character=iris] button").click()
    iris.expect(hunger(iris)).to_have_text("4")

    amend(st, "iris", lambda s: {**s, "willpower": s["willpower"] + 1}, reason="a long night")
    amended(iris, 1)
    iris.expect(hunger(iris)).to_have_text("4")
    amend(st, "iris", lambda s: {**s, "hunger": 1}, reason="fed at dawn")
    amended(iris, 2)
    iris.expect(hunger(iris)).to_have_text("1")
    # the tablet renders the sheet's Hunger again (the figure typed earlier stays in the box)
    st.expect(field).to_have_attribute("value", "1")
    for device in (st, iris):
        device.close()
