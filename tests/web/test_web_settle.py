"""A storyteller overrules from the tablet, in real Chromium against a real server: an
opposed roll left waiting for its defender (ACT-12) is settled, and a long action under way
(ACT-2) is cancelled; the phones' card and pending list empty as the server's state does.
The demo chronicle's action-demo session: Nova and Rook (server/cli/demo.py)."""

from __future__ import annotations

import httpx
import pytest

from tests.support.client_support import events_of_type
from tests.support.browser_support import NO_CHROMIUM, CHROMIUM
from tests.support.web_support import TABLET, Device, ACTION_SESSION as SESSION, calls, contest, action_state as state, received_rolls, phone

pytestmark = [
    pytest.mark.browser,
    pytest.mark.skipif(CHROMIUM is None, reason=NO_CHROMIUM),
]


def test_act_12_the_storyteller_settles_a_roll_its_defender_never_answers(browser, demo):
    server, db, _, _ = demo
    st, nova, rook = contest(browser, demo, rook_locale="fr-FR")

    waiting = st.page.get_by_test_id("st-waiting")
    st.expect(waiting).to_have_count(1)
    st.expect(waiting).to_have_attribute("data-roll", "a1")
    st.expect(waiting).to_contain_text("Nova")
    st.expect(waiting).to_contain_text("Rook")
    st.expect(waiting).to_contain_text("since turn")
    st.page.get_by_test_id("stuck-reason").fill("Rook's phone is lost")
    st.shot("storyteller-waiting-roll-1024x768", focus="[data-testid=st-stuck]")
    settle = waiting.get_by_test_id("settle-initiator")
    st.expect(settle).to_have_text("Nova wins")
    settle.click()
    st.page.get_by_test_id("confirm-yes").click()  # a ruling cannot be taken back

    st.expect(waiting).to_have_count(0)
    rook.expect(calls(rook)).to_have_count(0)  # the answer card goes with the ruling
    nova.expect(nova.page.get_by_test_id("opposed-sent")).to_have_count(0)
    # both phones keep the ruling among their contests' results, in their own language
    for d, words in ((nova, "Ruled by a storyteller: Nova prevails (Rook's phone is lost)"),
                     (rook, "Tranché par un conteur : Nova l'emporte (Rook's phone is lost)")):
        result = d.page.get_by_test_id("opposed-result")
        d.expect(result).to_have_count(1)
        d.expect(result).to_have_attribute("data-ruled", "initiator")
        d.expect(result).to_have_attribute("data-winner", "nova")
        d.expect(result.locator(".words")).to_have_text(words)
    assert state(server).waiting == {}
    [ruled] = events_of_type(db, "action.opposition_ruled")
    assert (ruled["roll"], ruled["outcome"], ruled["winner"], ruled["reason"]) == (
        "a1", "initiator", "nova", "Rook's phone is lost")
    st.expect(st.page.locator("[data-testid=log] li[data-type='action.opposition_ruled']")).to_contain_text(
        "A storyteller settled Nova's roll against Rook, left unanswered: Nova prevailed (Rook's phone is lost).")
    for d in (st, nova, rook):
        d.close()


def test_act_2_the_storyteller_cancels_a_long_action_under_way(browser, demo):
    server, db, storyteller, links = demo
    st = Device(browser, server.url, f"{storyteller}&session={SESSION}", viewport=TABLET)
    nova = Device(browser, server.url, links["nova"])
    page = nova.page
    page.locator("#act-characteristic").select_option("science")
    page.locator("#actdiff").fill("2")
    page.locator("#act-turns").fill("3")
    page.get_by_test_id("roll").click()
    nova.expect(page.get_by_test_id("pending-action")).to_have_count(1)

    pending = st.page.get_by_test_id("st-pending")
    st.expect(pending).to_have_count(1)
    st.expect(pending).to_contain_text("Nova")
    pending.get_by_test_id("cancel-action").click()
    st.page.get_by_test_id("confirm-yes").click()

    st.expect(pending).to_have_count(0)
    st.expect(st.page.get_by_test_id("st-stuck")).to_have_count(0)  # nothing left to rule
    nova.expect(page.get_by_test_id("pending-action")).to_have_count(0)
    assert state(server).pending == {}
    [cancelled] = events_of_type(db, "action.cancelled")
    assert (cancelled["roll"], cancelled["character"], cancelled["turns"]) == ("a1", "nova", 3)
    for d in (st, nova):
        d.close()


def test_act_12_the_storyteller_rolls_for_a_defender_whose_phone_is_dead(browser, demo):
    server, db, _, _ = demo
    st, nova, rook = contest(browser, demo)

    form = st.page.get_by_test_id("st-waiting").get_by_test_id("st-roll-for")
    st.expect(form).to_have_count(1)
    # the roll's characteristic is on Rook's sheet: chosen already
    st.expect(form.get_by_test_id("st-roll-for-characteristic")).to_have_value("combat")
    form.get_by_test_id("st-roll-for-characteristic").select_option("athletics")
    button = form.get_by_test_id("st-roll-for-button")
    st.expect(button).to_have_text("Roll for Rook")
    button.click()

    st.expect(st.page.get_by_test_id("st-waiting")).to_have_count(0)
    rook.expect(calls(rook)).to_have_count(0)
    assert state(server).waiting == {}
    [initiator, answer] = events_of_type(db, "action.rolled")
    assert (answer["character"], answer["characteristic"], answer["against"], answer["visibility"]) == (
        "rook", "athletics", "a1", "open")
    [settled] = events_of_type(db, "action.opposition_settled")
    winner = "nova" if initiator["ps"] > answer["ps"] else "rook"  # ACT-12: a tie holds
    assert (settled["initiator_roll"], settled["defender_roll"], settled["winner"]) == ("a1", "a2", winner)
    for d in (nova, rook):
        d.expect(d.page.get_by_test_id("opposed-result")).to_have_attribute("data-winner", winner)
    for d in (st, nova, rook):
        d.close()


def test_act_12_a_storytellers_blind_roll_on_a_player_is_answered_from_the_tablet(browser, demo):
    # a blind roll never reaches Rook's phone: no card there, so a storyteller answers it
    server, db, storyteller, links = demo
    st = Device(browser, server.url, f"{storyteller}&session={SESSION}", viewport=TABLET)
    rook = Device(browser, server.url, links["rook"])
    blind = {"type": "roll_action", "character": "nova", "characteristic": "combat", "opponent": "rook",
             "visibility": "blind"}
    with httpx.Client(base_url=server.url, headers={"Authorization": f"Bearer {storyteller}"}, timeout=10) as http:
        sent = http.post(f"/sessions/{SESSION}/commands", json={"id": "blind-1", "command": blind}).json()
    assert sent["type"] == "ack", sent
    form = st.page.get_by_test_id("st-roll-for")
    st.expect(form).to_have_count(1)
    form.get_by_test_id("st-roll-for-button").click()

    st.expect(st.page.get_by_test_id("st-waiting")).to_have_count(0)
    assert state(server).waiting == {}
    answer = events_of_type(db, "action.rolled")[1]
    [settled] = events_of_type(db, "action.opposition_settled")
    assert (answer["character"], answer["against"], answer["visibility"]) == ("rook", "a1.*", "blind")
    assert (settled["initiator_roll"], settled["visibility"]) == ("a1.*", "blind")
    st.expect(st.page.locator("[data-testid=log] li[data-type='action.opposition_settled']")).to_have_count(1)
    # Rook's phone learnt nothing of either roll nor of the contest
    seen = rook.page.evaluate("window.conteur.vm.log.map(l => l.type)")
    assert not {"action.rolled", "action.opposition_settled"} & set(seen)
    assert calls(rook).count() == 0 and rook.page.get_by_test_id("opposed-result").count() == 0
    for d in (st, rook):
        d.close()


def st_roll_against(st: Device, character: str, opponent: str, characteristic: str, visibility: str) -> None:
    """The tablet's dice card: ``character`` rolls against ``opponent`` (ACT-12)."""
    card = st.page.get_by_test_id("st-dice")
    st.page.get_by_test_id("st-roll-character").select_option(character)
    st.page.get_by_test_id(f"st-vis-{visibility}").check()
    st.expect(card).to_have_attribute("data-visibility", visibility)
    card.get_by_test_id("st-against").select_option(opponent)
    st.expect(card.locator("[name=difficulty]")).to_have_count(0)  # ACT-12: no difficulty
    card.locator("[name=characteristic]").select_option(characteristic)
    button = card.get_by_test_id("st-roll")
    st.expect(button).to_have_text("Roll against Rook")
    button.click()


def test_act_12_the_storyteller_rolls_nova_against_rook_open_then_blind_from_the_tablet(browser, demo):
    server, db, storyteller, links = demo
    st = Device(browser, server.url, f"{storyteller}&session={SESSION}", viewport=TABLET)
    rook, rook_wire = phone(browser, server.url, links["rook"])

    # open: the roll waits on Rook's phone, answered from its card as if Nova's player rolled
    st_roll_against(st, "nova", "rook", "combat", "open")
    rook.expect(calls(rook)).to_have_count(1)
    rook.expect(calls(rook)).to_have_attribute("data-roll", "a1")
    rook.expect(calls(rook)).to_contain_text("Nova acts against you (combat)")
    st.expect(st.page.get_by_test_id("st-waiting")).to_have_count(1)
    calls(rook).get_by_test_id("opposed-answer").click()
    rook.expect(calls(rook)).to_have_count(0)
    rook.expect(rook.page.get_by_test_id("opposed-result")).to_have_count(1)
    st.expect(st.page.get_by_test_id("st-waiting")).to_have_count(0)

    # blind: the tablet lists it as waiting; Rook's phone never hears of it
    st_roll_against(st, "nova", "rook", "combat", "blind")
    waiting = st.page.get_by_test_id("st-waiting")
    st.expect(waiting).to_have_count(1)
    st.expect(waiting).to_have_attribute("data-roll", "a1.*")  # numbered among the storytellers' own
    turn = server.runtime.chronicle.state(SESSION).session.turn
    st.page.locator("button[data-act=next_turn]").click()  # a public event after the blind roll
    rook.page.wait_for_function(f"window.conteur.vm.session.turn === {turn + 1}")
    assert calls(rook).count() == 0
    assert rook.page.evaluate("Object.keys(window.conteur.vm.waiting)") == []
    assert list(state(server).waiting) == ["a1.*"]

    rolled = events_of_type(db, "action.rolled")
    assert [(r["roll"], r["character"], r["opponent"], r["against"], r["difficulty"], r["visibility"]) for r in rolled] == [
        ("a1", "nova", "rook", None, None, "open"), ("a2", "rook", None, "a1", None, "open"),
        ("a1.*", "nova", "rook", None, None, "blind")]
    # ACT-12 sealed: Nova's roll reached Rook as its call, then whole with the verdict
    assert [e["roll"] for e in received_rolls(rook_wire, "action.rolled")] == ["a2"]
    assert [e["roll"] for e in received_rolls(rook_wire, "action.opposed")] == ["a1"]
    assert [e["rolled"]["dice"] for e in received_rolls(rook_wire, "action.revealed")] == [rolled[0]["dice"]]
    for d in (st, rook):
        d.close()
