"""The phone checks the Mind's Eye Theatre throws the server drew for its character
(FAIR-2, MET-2): a storyteller who throws for a side without a choice lets the
server draw a d3 in stream ``*/secret=<side>``; its ``met.throw_committed`` reaches that
side's phone whole (draw record and choice), and once ``session.closed`` reveals the seed the
phone derives it again and marks it verified, or names the mismatch, in English and French.

Real Chromium against a real server: plain HTTP on a LAN name (no Web Crypto ``subtle``), and
records doctored on their way to the phone (websocket frames rewritten by Playwright)."""

from __future__ import annotations

import httpx
import pytest

from tests.support.browser_support import CHROMIUM, NO_CHROMIUM
from tests.support.client_support import events_of_type
from tests.support.web_support import Device, no_subtle, route_events, second_link, start_challenge

pytestmark = [pytest.mark.browser, pytest.mark.skipif(CHROMIUM is None, reason=NO_CHROMIUM)]

DRAWN = ("rock", "paper", "scissors")  # events/met_rules.py: a server throw's d3 faces


def storyteller_says(server, setup, command: dict, command_id: str) -> None:
    answer = httpx.post(f"{server.url}/sessions/{setup.session}/commands", timeout=30,
                        json={"command": command, "id": command_id},
                        headers={"Authorization": f"Bearer {setup.storyteller}"})
    assert answer.status_code in (200, 201) and answer.json()["type"] == "ack", answer.text


def a_drawn_throw_then_close(server, setup, anna: Device, bruno: Device) -> dict:
    """Anna challenges Bruno; the storyteller lets the server throw for Anna (no choice);
    Bruno throws; the session closes. Returns the stored (honest) draw record."""
    start_challenge(anna)
    bruno.expect(bruno.challenge().get_by_test_id("throw-rock")).to_be_visible()
    storyteller_says(server, setup, {"type": "throw", "character": "anna", "challenge": "c1", "round": 1}, "st-throw-1")
    anna.expect(anna.challenge().get_by_test_id("throw-rock")).to_have_count(0)  # thrown for her
    bruno.challenge().get_by_test_id("throw-rock").click()
    anna.expect(anna.challenge()).not_to_have_attribute("data-status", "throwing")
    assert anna.page.get_by_test_id("dice-check").count() == 0  # nothing to check before close
    storyteller_says(server, setup, {"type": "close_session"}, "close-1")
    [committed] = [e for e in events_of_type(setup.db, "met.throw_committed") if e["character"] == "anna"]
    [record] = committed["draws"]
    counter, sides, face, entropy, stream = record
    assert (sides, stream, committed["choice"]) == (3, "*/secret=anna", DRAWN[face - 1])
    assert entropy  # the server's nonce: Bruno cannot recompute it from the seed alone
    return {"counter": counter, "sides": sides, "face": face, "stream": stream, "choice": committed["choice"]}


def test_fair_2_the_phone_verifies_the_throw_the_server_drew_for_it_over_plain_http(lan_browser, server, setup):
    base = f"http://venue.lan:{server.port}"
    anna = Device(lan_browser, base, setup.players["anna"], before=no_subtle)
    bruno = Device(lan_browser, base, setup.players["bruno"])
    assert anna.page.evaluate("window.isSecureContext") is False
    record = a_drawn_throw_then_close(server, setup, anna, bruno)
    # the same character on a French phone, joining after close: its resync carries the record
    anne = Device(lan_browser, base, second_link(server, setup.players["anna"]), locale="fr-FR", before=no_subtle)

    for device, words, choice in (
        (anna, "All 1 of your throws drawn by the server verified", {"rock": "Rock", "paper": "Paper", "scissors": "Scissors"}),
        (anne, "Vos 1 signes tirés par le serveur sont tous vérifiés", {"rock": "Pierre", "paper": "Feuille", "scissors": "Ciseaux"}),
    ):
        check = device.page.get_by_test_id("dice-check")
        device.expect(check).to_have_attribute("data-ok", "true")
        device.expect(check).to_have_attribute("data-verified", "1")
        device.expect(check).to_have_attribute("data-mismatches", "0")
        device.expect(check).to_contain_text(words)
        throw = check.locator("[data-testid=throw-check][data-challenge=c1][data-round='1']")
        device.expect(throw).to_have_attribute("data-ok", "true")
        device.expect(throw).to_contain_text(choice[record["choice"]])
        device.expect(throw.get_by_test_id("roll-verified")).to_have_count(1)
        device.expect(device.page.get_by_test_id("roll-mismatch")).to_have_count(0)
        assert device.page.evaluate("window.__subtle") == 0
    anne.expect(anne.page.get_by_test_id("throw-check")).to_contain_text("Anna ⟷ Bruno, manche 1")
    anna.expect(anna.page.get_by_test_id("throw-check")).to_contain_text("Anna ⟷ Bruno, round 1")
    # Bruno received Anna's throw sealed, without its record: nothing of it to check, nor to leak
    bruno.page.wait_for_function("window.conteur.vm.session.status === 'closed' && !!window.conteur.vm.session.seed")
    assert bruno.page.evaluate("window.conteur.vm.drawnThrows.length") == 0
    assert bruno.page.get_by_test_id("dice-check").count() == 0
    anna.shot("player-throw-verified-360x740", focus="[data-testid=dice-check]")
    for d in (anna, anne, bruno):
        d.close()


def doctor_throw(page, found: dict, *, consistent: bool) -> None:
    """Anna's drawn throw reaches this page changed: ``consistent``, its record's face and
    its choice both moved to the next face (a forger's consistent lie); otherwise its choice
    alone (the record honest)."""

    def change(event):
        if event.get("type") == "met.throw_committed" and event.get("draws"):
            record = event["draws"][0]  # array-like: counter, sides, face, entropy, stream
            forged = record[2] % record[1] + 1
            found.update(face=record[2], forged=forged, counter=record[0], stream=record[4])
            if consistent:
                record[2] = forged
            event["choice"] = DRAWN[forged - 1]

    route_events(page, change)


def test_fair_2_a_doctored_drawn_throw_is_flagged_with_the_draw_named(browser, server, setup):
    anna = Device(browser, server.url, setup.players["anna"])
    bruno = Device(browser, server.url, setup.players["bruno"])
    record = a_drawn_throw_then_close(server, setup, anna, bruno)
    lie: dict = {}
    forged = Device(browser, server.url, second_link(server, setup.players["anna"]),
                    before=lambda page: (no_subtle(page), doctor_throw(page, lie, consistent=True)))
    shown: dict = {}
    relabelled = Device(browser, server.url, second_link(server, setup.players["anna"]), locale="fr-FR",
                        before=lambda page: doctor_throw(page, shown, consistent=False))

    anna.expect(anna.page.get_by_test_id("dice-check")).to_have_attribute("data-ok", "true")  # the honest copy
    check = forged.page.get_by_test_id("dice-check")
    forged.expect(check).to_have_attribute("data-ok", "false")
    forged.expect(check).to_have_attribute("data-mismatches", "1")
    forged.expect(check).to_contain_text("1 of your 1 throws drawn by the server do not verify")
    assert lie["face"] == record["face"]
    named = f"draw {record['stream']} #{record['counter']} (d3): recorded {lie['forged']}, the seed gives {record['face']}"
    forged.expect(check.get_by_test_id("dice-mismatches")).to_contain_text(named)
    throw = check.get_by_test_id("throw-check")
    forged.expect(throw).to_have_attribute("data-ok", "false")
    forged.expect(throw.get_by_test_id("roll-mismatch")).to_have_text(named)
    forged.expect(throw.get_by_test_id("roll-verified")).to_have_count(0)
    assert forged.page.evaluate("window.__subtle") == 0

    # the record honest, the throw shown another: said in French with the throws' names
    french = {"rock": "Pierre", "paper": "Feuille", "scissors": "Ciseaux"}
    said = f"le signe affiché ({french[DRAWN[shown['forged'] - 1]]}) n'est pas le signe tiré ({french[record['choice']]})"
    check = relabelled.page.get_by_test_id("dice-check")
    relabelled.expect(check).to_have_attribute("data-ok", "false")
    relabelled.expect(check).to_contain_text("1 de vos 1 signes tirés par le serveur ne se vérifient pas")
    relabelled.expect(check.get_by_test_id("throw-check").get_by_test_id("roll-mismatch")).to_have_text(said)
    [stored] = [e for e in events_of_type(setup.db, "met.throw_committed") if e["character"] == "anna"]
    assert stored["draws"][0][2] == record["face"]  # the server's log is honest
    forged.shot("player-throw-mismatch-360x740", focus="[data-testid=dice-check]")
    for d in (anna, bruno, forged, relabelled):
        d.close()
