"""Action dice between two phones, in real Chromium against a real server: a roll against
another player character and its answer from a card (ACT-12), a refused answer that
leaves the card, and an action over several turns rolled at its last turn (ACT-2).
The demo chronicle's action-demo session: Nova and Rook (server/cli/demo.py)."""

from __future__ import annotations

import httpx
import pytest

from tests.support.client_support import events_of_type
from tests.support.browser_support import NO_CHROMIUM, CHROMIUM
from tests.support.web_support import TABLET, Device, ACTION_SESSION as SESSION, action_state as state, calls, contest, roll_against

pytestmark = [
    pytest.mark.browser,
    pytest.mark.skipif(CHROMIUM is None, reason=NO_CHROMIUM),
]


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

    # a secret opposed roll reaches its opponent too (as its call, action.opposed), who answers it
    roll_against(nova, "rook", "science", visibility="secret")
    rook.expect(calls(rook)).to_have_count(1)
    rook.expect(calls(rook)).to_have_attribute("data-roll", "a1.nova+rook")  # numbered among its audience's
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
    rook.expect(rook.page.get_by_test_id("notice-reject")).to_contain_text("out of game")  # words, no rule code
    rook.expect(call).to_have_count(1)
    rook.expect(call.get_by_test_id("opposed-answer")).to_be_enabled()
    assert list(state(server).waiting) == ["a1"]
    rook.page.get_by_test_id("back-in-game").click()
    rook.expect(rook.page.get_by_test_id("out-of-game")).to_be_visible()

    # TIME-5: a tap that lands as the Time Out comes (the overlay not yet drawn) is refused
    st.page.get_by_test_id("freeze-all").click()
    rook.page.wait_for_function("window.conteur.vm.session.frozen === true")
    rook.page.evaluate("document.querySelector('[data-testid=opposed-answer]').click()")
    rook.expect(rook.page.get_by_test_id("notice-reject").last).to_contain_text("Time Out")  # words, no rule code
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


# ---------------------------------------------------------------- ACT-12 sealed

SEALED_FIELDS = ("dice", "plusminus", "signs", "ps", "ps_dice", "threshold", "sides", "bonus", "malus",
                 "option", "net", "expertise", "draws")


def _mentions(frame: dict, roll: str) -> list[dict]:
    """The events in a received frame that name the roll ``roll``, anywhere."""
    event = frame.get("event") if frame.get("type") == "event" else None
    return [event] if event and roll in (event.get("roll"), event.get("against"), event.get("initiator_roll")) else []


def test_act_12_the_defenders_phone_receives_nothing_of_the_initiators_roll_before_it_answers(browser, demo):
    """Like MET throws: Nova rolls against Rook with a bonus and Surpass;
    until Rook has rolled, no frame Rook's phone receives and nothing its token reads over
    HTTP holds Nova's dice, PS, threshold or options; then both are revealed together."""
    from tests.support.web_support import phone

    server, db, storyteller, links = demo
    nova = Device(browser, server.url, links["nova"])
    rook, wire = phone(browser, server.url, links["rook"])
    page = nova.page
    page.get_by_test_id("act-against").select_option("rook")
    page.locator("#act-characteristic").select_option("combat")
    page.locator("#actbonus").fill("2")
    page.locator("#act-option").select_option("surpass")
    page.get_by_test_id("roll").click()
    rook.expect(calls(rook)).to_have_count(1)
    nova.expect(nova.page.get_by_test_id("opposed-sent")).to_have_count(1)

    [sealed] = events_of_type(db, "action.rolled")
    assert sealed["sealed"] is True and sealed["option"] == "surpass" and sealed["bonus"] == 2
    assert events_of_type(db, "action.tension_raised") == []  # ACT-8: Surpass waits with the roll
    received = [e for frames in wire.sockets for f in frames["received"] for e in _mentions(f, "a1")]
    assert [e["type"] for e in received] == ["action.opposed"]
    assert not set(SEALED_FIELDS) & set(received[0]), received[0]
    assert received[0] == {"type": "action.opposed", "roll": "a1", "character": "nova", "opponent": "rook",
                           "characteristic": "combat", "label": "", "turn": received[0]["turn"],
                           "visibility": "open"}
    # the phone's own view model holds no roll of Nova's, nor anything of her option
    assert rook.page.evaluate("window.conteur.vm.rolls.filter((r) => r.character === 'nova').length") == 0
    # nor does Rook's token over HTTP, events or state
    token = links["rook"].split("&")[0]
    headers = {"Authorization": f"Bearer {token}"}
    answer = httpx.get(f"{server.url}/sessions/{SESSION}/events", headers=headers, timeout=30)
    http_events = [e["event"] for e in answer.json() if e["event"].get("roll") == "a1"]
    assert [e["type"] for e in http_events] == ["action.opposed"]
    rook_state = httpx.get(f"{server.url}/sessions/{SESSION}/state", headers=headers, timeout=30).json()
    assert rook_state["action"]["waiting"]["a1"]["ps"] == 0 and rook_state["action"]["waiting"]["a1"]["rolled"] is None

    calls(rook).get_by_test_id("opposed-answer").click()
    rook.expect(calls(rook)).to_have_count(0)
    rook.expect(rook.page.get_by_test_id("opposed-result")).to_have_count(1)
    [revealed] = [e for frames in wire.sockets for f in frames["received"] for e in _mentions(f, "a1")
                  if e["type"] == "action.revealed"]
    assert revealed["rolled"]["dice"] == sealed["dice"] and revealed["rolled"]["option"] == "surpass"
    [settled] = events_of_type(db, "action.opposition_settled")
    assert settled["initiator_ps"] == sealed["ps"]
    [raised] = events_of_type(db, "action.tension_raised")
    assert raised["character"] == "nova"  # ACT-8: Surpass counted once the contest is over
    # Rook's phone now shows Nova's roll among what it saw, and tells the reveal in its feed
    assert rook.page.evaluate("window.conteur.vm.rolls.filter((r) => r.character === 'nova').map((r) => r.normal)") \
        == [sealed["dice"]]
    rook.expect(rook.page.locator("[data-testid=feed] li[data-type='action.revealed']")).to_have_count(1)
    for d in (nova, rook):
        d.close()


def test_act_12_a_secret_sealed_roll_reaches_no_third_party_and_the_defender_only_as_a_call(browser, demo):
    """The storyteller's tablet sees the sealed roll whole at once; Rook only its call."""
    from tests.support.web_support import phone

    server, db, storyteller, links = demo
    st = Device(browser, server.url, f"{storyteller}&session={SESSION}", viewport=TABLET)
    nova = Device(browser, server.url, links["nova"])
    rook, wire = phone(browser, server.url, links["rook"])
    roll_against(nova, "rook", "science", visibility="secret")
    rook.expect(calls(rook)).to_have_count(1)
    st.expect(st.page.get_by_test_id("st-waiting")).to_have_count(1)
    [sealed] = events_of_type(db, "action.rolled")
    # the tablet's view model holds the sealed roll whole; the phone's, none of it
    assert st.page.evaluate("window.conteur.vm.rolls.filter((r) => r.id === 'a1.nova+rook').map((r) => r.normal)") \
        == [sealed["dice"]]
    dice = " ".join(map(str, sealed["dice"]))
    st.expect(st.page.get_by_test_id("st-sealed")).to_have_text(f"Sealed from Rook until answered: {dice} ({sealed['ps']} PS)")
    st.shot("tablet-sealed-waiting", focus="[data-testid=st-waiting]")
    received = [e for frames in wire.sockets for f in frames["received"] for e in _mentions(f, "a1.nova+rook")]
    assert [e["type"] for e in received] == ["action.opposed"] and received[0]["visibility"] == "secret"
    calls(rook).get_by_test_id("opposed-answer").click()
    rook.expect(rook.page.get_by_test_id("opposed-result")).to_have_count(1)
    received = [e["type"] for frames in wire.sockets for f in frames["received"] for e in _mentions(f, "a1.nova+rook")]
    # its own answer (against it), then Nova's roll revealed with the verdict, in one batch
    assert received == ["action.opposed", "action.rolled", "action.revealed", "action.opposition_settled"]
    for d in (st, nova, rook):
        d.close()
