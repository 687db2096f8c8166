"""Action dice between two phones, in real Chromium against a real server: a roll against
another player character and its answer from a card (ACT-12), a refused answer that
leaves the card, and an action over several turns rolled at its last turn (ACT-2).
The demo chronicle's action-demo session: Nova and Rook (server/demo.py)."""

from __future__ import annotations

import pytest

from tests.client_support import events_of_type
from tests.browser_support import NO_CHROMIUM
from tests.test_web import CHROMIUM, TABLET, Device
from tests.test_web import browser, playwright  # noqa: F401 (fixtures)
from tests.test_web_storyteller_rolls import demo  # noqa: F401 (fixture)

pytestmark = [
    pytest.mark.browser,
    pytest.mark.skipif(CHROMIUM is None, reason=NO_CHROMIUM),
]

SESSION = "action-demo"


def state(server):
    return server.runtime.chronicle.state(SESSION).action


def roll_against(device: Device, opponent: str, characteristic: str, visibility: str = "open") -> None:
    page = device.page
    page.get_by_test_id("act-against").select_option(opponent)
    device.expect(page.locator("#actdiff")).to_have_count(0)  # ACT-12: no difficulty
    page.locator("#act-characteristic").select_option(characteristic)
    page.locator("#act-vis").select_option(visibility)
    page.get_by_test_id("roll").click()


def calls(device: Device):
    return device.page.get_by_test_id("opposed-call")


def contest(browser, demo, rook_locale: str = "en-US") -> tuple[Device, Device, Device]:
    """The tablet and both phones, once Nova's roll against Rook waits on Rook's card."""
    server, _, storyteller, links = demo
    st = Device(browser, server.url, f"{storyteller}&session={SESSION}", viewport=TABLET)
    nova = Device(browser, server.url, links["nova"])
    rook = Device(browser, server.url, links["rook"], locale=rook_locale)
    roll_against(nova, "rook", "combat")
    rook.expect(calls(rook)).to_have_count(1)
    return st, nova, rook


def test_act_12_a_roll_against_another_phone_is_answered_from_its_card(browser, demo):
    server, db, _, links = demo
    nova = Device(browser, server.url, links["nova"])
    rook = Device(browser, server.url, links["rook"], locale="fr-FR")
    for d in (nova, rook):
        # ends on a value: an expression that evaluates to a function, Playwright calls
        d.page.evaluate("window.__buzz = []; navigator.vibrate = (p) => { window.__buzz.push(p); return true; }; 0")

    roll_against(nova, "rook", "combat")
    call = calls(rook)
    rook.expect(call).to_have_count(1)
    rook.expect(call).to_have_attribute("data-roll", "a1")
    rook.expect(call).to_contain_text("Nova s'oppose à vous (combat)")
    rook.expect(call.locator("h2")).to_have_text("Action en opposition")
    assert rook.page.evaluate("window.__buzz") == [200]  # the phone buzzes once for it
    # the initiator has nothing to answer: a line says whom it waits for
    nova.expect(nova.page.get_by_test_id("opposed-sent")).to_contain_text("Waiting for Rook's answer")
    assert calls(nova).count() == 0
    assert list(state(server).waiting) == ["a1"]
    rook.shot("player-opposed-call-360x740")

    call.locator("select[name=characteristic]").select_option("athletics")
    # ACT-5, ACT-8 folded under "More": the card stays a one-tap answer
    more = call.get_by_test_id("opposed-more")
    rook.expect(more.locator("input[name=bonus]")).to_be_hidden()
    more.locator("summary").click()
    rook.expect(more.locator("summary")).to_have_text("Plus : bonus, malus, option")
    more.locator("input[name=bonus]").fill("2")
    rook.expect(more.locator("select[name=option] option")).to_have_count(3)  # none, surpass, sacrifice
    call.get_by_test_id("opposed-answer").click()
    rook.expect(calls(rook)).to_have_count(0)
    settled = events_of_type(db, "action.opposition_settled")
    assert [(s["initiator_roll"], s["defender_roll"]) for s in settled] == [("a1", "a2")]
    winner = settled[0]["winner"]
    for d in (nova, rook):
        result = d.page.get_by_test_id("opposed-result")
        d.expect(result).to_have_count(1)
        d.expect(result).to_have_attribute("data-winner", winner)
        d.expect(result.locator(".words")).to_contain_text({"nova": "Nova", "rook": "Rook"}[winner])
        d.expect(result).to_contain_text(f"{settled[0]['initiator_ps']} PS")
    rook.expect(rook.page.get_by_test_id("opposed-result")).to_contain_text("Vainqueur")
    assert nova.page.get_by_test_id("opposed-sent").count() == 0
    assert state(server).waiting == {}
    rolled = events_of_type(db, "action.rolled")
    assert [(r["character"], r["characteristic"], r["opponent"], r["against"], r["difficulty"]) for r in rolled] == [
        ("nova", "combat", "rook", None, None), ("rook", "athletics", None, "a1", None)]
    assert [(r["bonus"], r["malus"], r["option"]) for r in rolled] == [(0, 0, "none"), (2, 0, "none")]
    rook.shot("player-opposed-settled-360x740", focus="[data-testid=opposed-result]")

    # a secret opposed roll reaches its opponent too (ActionRolled.owners), who answers it
    roll_against(nova, "rook", "science", visibility="secret")
    rook.expect(calls(rook)).to_have_count(1)
    rook.expect(calls(rook)).to_have_attribute("data-roll", "a1.nova+rook")  # numbered among what both see
    calls(rook).get_by_test_id("opposed-answer").click()
    rook.expect(calls(rook)).to_have_count(0)
    for d in (nova, rook):
        d.expect(d.page.get_by_test_id("opposed-result")).to_have_count(2)
        d.expect(d.page.get_by_test_id("opposed-result").first).to_have_attribute("data-roll", "a1.nova+rook")
    assert state(server).waiting == {}
    for d in (nova, rook):
        d.close()


def test_act_12_a_refused_answer_leaves_the_card_in_place(browser, demo):
    server, db, _, _ = demo
    st, nova, rook = contest(browser, demo)
    call = calls(rook)

    # TIME-6: out of game, the answer is refused; the card stays, its button back
    rook.page.get_by_test_id("out-of-game").click()
    rook.expect(rook.page.get_by_test_id("back-in-game")).to_be_visible()
    call.get_by_test_id("opposed-answer").click()
    rook.expect(rook.page.get_by_test_id("notice-reject")).to_contain_text("TIME-6")
    rook.expect(call).to_have_count(1)
    rook.expect(call.get_by_test_id("opposed-answer")).to_be_enabled()
    assert list(state(server).waiting) == ["a1"]
    rook.page.get_by_test_id("back-in-game").click()
    rook.expect(rook.page.get_by_test_id("out-of-game")).to_be_visible()

    # TIME-5: a tap that lands as the Time Out comes (the overlay not yet drawn) is refused
    st.page.get_by_test_id("freeze-all").click()
    rook.page.wait_for_function("window.conteur.vm.session.frozen === true")
    rook.page.evaluate("document.querySelector('[data-testid=opposed-answer]').click()")
    rook.expect(rook.page.get_by_test_id("notice-reject").last).to_contain_text("TIME-5")
    rook.expect(call).to_have_count(1)
    assert events_of_type(db, "action.opposition_settled") == []

    st.page.get_by_test_id("resume-all").click()
    rook.expect(rook.page.locator("#freeze")).to_be_hidden()
    call.get_by_test_id("opposed-answer").click()
    rook.expect(call).to_have_count(0)
    nova.expect(nova.page.get_by_test_id("opposed-result")).to_have_count(1)
    assert state(server).waiting == {}
    for d in (st, nova, rook):
        d.close()


def test_act_2_an_action_over_three_turns_is_rolled_from_the_pending_list_at_its_last_turn(browser, demo):
    server, db, storyteller, links = demo
    st = Device(browser, server.url, f"{storyteller}&session={SESSION}", viewport=TABLET)
    nova = Device(browser, server.url, links["nova"], locale="fr-FR")
    turn = server.runtime.chronicle.state(SESSION).session.turn
    page = nova.page
    page.locator("#act-characteristic").select_option("science")
    page.locator("#actdiff").fill("2")
    page.locator("#act-turns").fill("3")
    page.get_by_test_id("roll").click()

    pending = page.get_by_test_id("pending-action")
    nova.expect(pending).to_have_count(1)
    nova.expect(pending).to_have_attribute("data-roll", "a1")
    resume = pending.get_by_test_id("resume-action")
    nova.expect(resume).to_be_disabled()
    nova.expect(resume).to_have_text(f"Jet au Tour {turn + 2}")
    assert page.get_by_test_id("roll-result").count() == 0  # ACT-2: no dice before the last turn
    [begun] = events_of_type(db, "action.begun")
    assert (begun["turns"], begun["last_turn"]) == (3, turn + 2)
    nova.shot("player-pending-action-360x740", focus="[data-testid=pending-action]")

    next_turn = st.page.locator("button[data-act=next_turn]")
    next_turn.click()
    page.wait_for_function(f"window.conteur.vm.session.turn === {turn + 1}")
    nova.expect(resume).to_be_disabled()
    next_turn.click()
    nova.expect(resume).to_be_enabled()
    nova.expect(pending).to_have_attribute("data-due", "true")
    resume.click()
    nova.expect(pending).to_have_count(0)
    nova.expect(page.get_by_test_id("roll-result")).to_have_count(1)
    [rolled] = events_of_type(db, "action.rolled")
    assert (rolled["roll"], rolled["turns"], rolled["turn"], rolled["difficulty"]) == ("a1", 3, turn + 2, 2)
    assert state(server).pending == {}
    for d in (st, nova):
        d.close()
