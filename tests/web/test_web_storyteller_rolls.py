"""A storyteller rolls for a character from the tablet, in real Chromium against a real
server: open, secret (the character and storytellers) and blind (storytellers only), V5
pools and action dice after the character's sheet. What each phone may not see is
checked on the wire (the websocket frames it received), not only on its page."""

from __future__ import annotations

import pytest

from tests.support.client_support import events_of_type
from tests.support.browser_support import NO_CHROMIUM, CHROMIUM
from tests.support.web_support import TABLET, Device, phone, received_rolls

pytestmark = [
    pytest.mark.browser,
    pytest.mark.skipif(CHROMIUM is None, reason=NO_CHROMIUM),
]

SMALL_TABLET = {"width": 768, "height": 1024}



def roll_for(st: Device, character: str, visibility: str, **fields: str) -> None:
    page = st.page
    page.get_by_test_id("st-roll-character").select_option(character)
    page.get_by_test_id(f"st-vis-{visibility}").check()
    card = page.get_by_test_id("st-dice")
    st.expect(card).to_have_attribute("data-visibility", visibility)
    st.expect(card).to_have_attribute("data-character", character)
    for name, value in fields.items():
        field = card.locator(f"[name={name}]")
        if field.evaluate("el => el.tagName") == "SELECT":
            field.select_option(value)
        else:
            field.fill(value)
    card.get_by_test_id("st-roll").click()


def test_v5_storyteller_rolls_blind_secret_and_open_for_a_player(browser, demo):
    server, db, storyteller, links = demo
    st = Device(browser, server.url, f"{storyteller}&session=v5-demo", viewport=TABLET)
    iris, iris_wire = phone(browser, server.url, links["iris"])
    viktor, viktor_wire = phone(browser, server.url, links["viktor"])
    # every roll the tablet shows, each once: the newest beside the form, first
    rolls = st.page.locator("main .rolls").get_by_test_id("roll-result")

    # (1) blind, for Iris (Wits 3 + Stealth 3, Hunger 2 from the sheet: V5-1, V5-5)
    roll_for(st, "iris", "blind", attribute="wits", skill="stealth", difficulty="3")
    st.expect(rolls.first).to_have_attribute("data-visibility", "blind")
    st.expect(rolls.first.get_by_test_id("roll-blind")).to_be_visible()
    assert rolls.first.locator(".die").count() == 6  # the storyteller sees every die
    assert rolls.first.locator(".die.hunger").count() == 2
    beside = st.page.get_by_test_id("st-dice").get_by_test_id("roll-result")  # under the form too
    st.expect(beside).to_have_attribute("data-visibility", "blind")
    assert beside.locator(".die").count() == 6
    st.expect(st.page.get_by_test_id("st-vis-help")).to_contain_text("Iris does not see the roll")
    blind_line = st.page.locator('[data-testid=log] li[data-type="v5.pool_rolled"]').first
    st.expect(blind_line).to_have_attribute("data-visibility", "blind")
    st.expect(blind_line.locator(".badge")).to_have_text("Blind")

    # (2) secret, for Iris: her phone shows it whole, Viktor's gets nothing
    roll_for(st, "iris", "secret", attribute="charisma", skill="persuasion", difficulty="2")
    st.expect(rolls).to_have_count(2)
    st.expect(rolls.first).to_have_attribute("data-visibility", "secret")
    mine = iris.page.get_by_test_id("roll-result")
    iris.expect(mine).to_have_count(1)
    iris.expect(mine.first).to_have_attribute("data-visibility", "secret")
    iris.expect(mine.first.get_by_test_id("roll-secret")).to_be_visible()
    assert mine.first.locator(".die").count() == 7  # Charisma 4 + Persuasion 3
    st.shot("storyteller-secret-roll-1280x800", focus="[data-testid=st-dice]")

    # (3) open, for Iris: both phones receive it (a phone lists its own character's rolls
    # only, player.js: Viktor's holds it in its fold); it came after the others on every
    # socket, so what a phone has not received by now it never will
    roll_for(st, "iris", "open", attribute="dexterity", skill="", difficulty="1")
    st.expect(rolls).to_have_count(3)
    iris.expect(mine).to_have_count(2)
    iris.expect(mine.first).to_have_attribute("data-visibility", "open")
    viktor.page.wait_for_function("window.conteur.vm.rolls.length === 1")
    assert viktor.page.get_by_test_id("roll-result").count() == 0  # not his own roll

    rolled = events_of_type(db, "v5.pool_rolled")
    assert [(e["character"], e["visibility"]) for e in rolled] == [("iris", "blind"), ("iris", "secret"), ("iris", "open")]
    assert [e["visibility"] for e in received_rolls(iris_wire, "v5.pool_rolled")] == ["secret", "open"]
    assert [e["visibility"] for e in received_rolls(viktor_wire, "v5.pool_rolled")] == ["open"]
    # and not under another type either: no frame a phone received names the blind roll
    blind_id = rolled[0]["roll"]
    for wire in (iris_wire, viktor_wire):
        events = [f["event"] for frames in wire.sockets for f in frames["received"] if f["type"] == "event"]
        assert not [e for e in events if e.get("roll") == blind_id], events
    assert iris.page.evaluate("window.conteur.vm.rolls.map(r => r.visibility)") == ["secret", "open"]
    assert viktor.page.evaluate("window.conteur.vm.rolls.map(r => r.visibility)") == ["open"]
    log = st.page.locator('[data-testid=log] li[data-type="v5.pool_rolled"]')
    assert log.evaluate_all("ls => ls.map(l => l.dataset.visibility)") == ["open", "secret", "blind"]  # newest first
    st.shot("storyteller-roll-log-1280x800", focus="[data-testid=log]")
    for d in (st, iris, viktor):
        d.close()


def test_v5_storyteller_rouse_check_keeps_its_visibility(browser, demo):
    # V5-9 Rouse check for Viktor, secret: his phone shows it, Iris's does not
    server, db, storyteller, links = demo
    st = Device(browser, server.url, f"{storyteller}&session=v5-demo", viewport=TABLET)
    viktor, _ = phone(browser, server.url, links["viktor"])
    iris, iris_wire = phone(browser, server.url, links["iris"])
    st.page.get_by_test_id("st-roll-character").select_option("viktor")
    st.page.get_by_test_id("st-vis-secret").check()
    st.expect(st.page.get_by_test_id("st-dice")).to_have_attribute("data-visibility", "secret")
    st.page.get_by_test_id("st-rouse").click()
    viktor.expect(viktor.page.get_by_test_id("roll-result")).to_have_count(1)
    assert [(e["character"], e["visibility"]) for e in events_of_type(db, "v5.rouse_checked")] == [("viktor", "secret")]
    st.page.locator("button[data-act=next_turn]").click()  # a public event after the check
    iris.page.wait_for_function("window.conteur.vm.session.turn === 1")
    assert received_rolls(iris_wire, "v5.rouse_checked") == []
    for d in (st, viktor, iris):
        d.close()


def test_action_dice_storyteller_rolls_secret_and_blind_in_french_on_a_small_tablet(browser, demo):
    # ACT-3..6 after Nova's sheet (Science 5), on a 768 px tablet in French
    server, db, storyteller, links = demo
    st = Device(browser, server.url, f"{storyteller}&session=action-demo", viewport=SMALL_TABLET, locale="fr-FR")
    nova, nova_wire = phone(browser, server.url, links["nova"])
    rook, rook_wire = phone(browser, server.url, links["rook"])
    card = st.page.get_by_test_id("st-dice")
    st.expect(card.locator("h2")).to_have_text("Jet pour un personnage")
    st.expect(card.get_by_test_id("st-visibility").locator("legend")).to_have_text("Qui le voit")
    # every roll the tablet shows, each once: the newest beside the form, first
    rolls = st.page.locator("main .rolls").get_by_test_id("roll-result")

    roll_for(st, "nova", "secret", characteristic="science", difficulty="2", bonus="1")
    st.expect(rolls.first).to_have_attribute("data-visibility", "secret")
    assert rolls.first.locator(".die:not(.dpm)").count() == 3  # ACT-3: three action dice
    assert rolls.first.locator(".die.dpm").count() == 1  # ACT-5: one bonus, one D+/-
    seen = nova.page.get_by_test_id("roll-result")
    nova.expect(seen).to_have_count(1)
    nova.expect(seen.first).to_have_attribute("data-visibility", "secret")

    roll_for(st, "rook", "blind", characteristic="combat", difficulty="3")
    st.expect(rolls).to_have_count(2)
    st.expect(rolls.first).to_have_attribute("data-visibility", "blind")
    st.expect(st.page.get_by_test_id("st-vis-help")).to_contain_text("Rook ne voit pas le jet")
    st.expect(st.page.locator('[data-testid=log] li[data-type="action.rolled"]').first.locator(".badge")).to_have_text("À l'aveugle")
    # the card fits the small tablet: nothing pushes the page sideways
    assert st.page.evaluate("document.documentElement.scrollWidth <= window.innerWidth")
    st.shot("storyteller-action-blind-roll-768x1024", focus="[data-testid=st-dice]")

    roll_for(st, "rook", "open", characteristic="athletics", difficulty="2")
    rook.expect(rook.page.get_by_test_id("roll-result")).to_have_count(1)
    nova.page.wait_for_function("window.conteur.vm.rolls.length === 2")  # Rook's open roll

    rolled = events_of_type(db, "action.rolled")
    assert [(e["character"], e["visibility"]) for e in rolled] == [("nova", "secret"), ("rook", "blind"), ("rook", "open")]
    assert [(e["character"], e["visibility"]) for e in received_rolls(nova_wire, "action.rolled")] == [("nova", "secret"), ("rook", "open")]
    assert [(e["character"], e["visibility"]) for e in received_rolls(rook_wire, "action.rolled")] == [("rook", "open")]
    for d in (st, nova, rook):
        d.close()
