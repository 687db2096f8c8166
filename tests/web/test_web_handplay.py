"""A challenge played by hand while the server is down, in real Chromium
(DESIGN "Offline devices", events/offline.py): the server process is stopped for real
while Anna records it; the record waits in her phone's outbox, survives a reload with no
server, and is sent once when a server is back on the same database. Bruno's main page
asks him to confirm or dispute; he disputes; the tablet marks it as needing a ruling; the
review shows both claims and no winner, until the storyteller rules."""

from __future__ import annotations

from contextlib import ExitStack

import pytest

from conteur.server.web.app import Served, create_app
from conteur.server.store.sqlite import SQLiteStore
from tests.support.client_support import Proxy, events_of_type, make_chronicle, served, stored_rows
from tests.support.browser_support import CHROMIUM, TIMEOUT
from tests.support.web_support import TABLET, Device, wait_until

pytestmark = [
    pytest.mark.browser,
    pytest.mark.skipif(CHROMIUM is None, reason="Debian's chromium is not installed (apt install chromium)"),
]

BACK = 30_000  # a phone's reconnect backoff is capped at 10 s: give it a few tries


def controlled(device: Device) -> None:
    """The service worker controls the page (and so holds the app shell for a reload)."""
    wait_until(device.page, "navigator.serviceWorker.ready.then(() => !!navigator.serviceWorker.controller)",
               what="the service worker to control the page")


def wifi_back(device: Device) -> None:
    # what a phone's browser fires when its Wi-Fi comes back: reconnect now, not after the backoff
    device.page.evaluate("window.dispatchEvent(new Event('online'))")


def review_page(browser, url: str, token: str, session: str, challenge: str = ""):
    page = browser.new_page()
    page.set_default_timeout(TIMEOUT)
    page.goto(f"{url}/review.html#join={token}&session={session}{'&challenge=' + challenge if challenge else ''}")
    return page


def test_a_challenge_played_by_hand_with_the_server_down_is_recorded_disputed_and_ruled(browser, tmp_path):
    setup = make_chronicle(tmp_path / "chronicle.db")
    with ExitStack() as stack:
        first = Served(create_app(setup.db)).__enter__()
        proxy = stack.enter_context(Proxy(first.port))
        st = Device(browser, proxy.url, f"{setup.storyteller}&session={setup.session}", viewport=TABLET)
        anna = Device(browser, proxy.url, setup.players["anna"])
        bruno = Device(browser, proxy.url, setup.players["bruno"], locale="fr-FR")
        controlled(anna)

        # the laptop's server dies: the phones' connections drop and nothing answers
        proxy.cut(hold=False)
        first.stop()
        anna.expect(anna.page.locator("#conn.offline")).to_be_visible()

        page = anna.page
        page.get_by_test_id("hand-record").locator("summary").click()
        # the reconnect attempts do not redraw the page: the tap that unfolded it holds
        anna.expect(page.get_by_test_id("hand-record")).to_have_attribute("open", "")
        page.get_by_test_id("hand-opponent").select_option("bruno")
        page.locator("#hand-attribute").select_option("physical")
        page.get_by_test_id("hand-winner").select_option("me")
        page.get_by_test_id("hand-account").fill("paper covers rock, in the cellar")
        page.get_by_test_id("hand-save").click()
        waiting = page.locator("[data-testid=hand-row][data-queued]")
        anna.expect(waiting).to_have_count(1)
        anna.expect(waiting.get_by_test_id("hand-status")).to_have_text("waiting to be sent")
        anna.expect(waiting).to_contain_text("Anna says Anna won")
        anna.expect(page.locator("[data-testid=queued][data-command=record_offline_challenge]")).to_have_count(1)
        command_id = waiting.get_attribute("data-queued")
        queued = page.evaluate("(id) => window.conteur.queued.find((e) => e.id === id)", command_id)
        assert events_of_type(setup.db, "offline.recorded") == []

        # a reload with no server: the page comes from the service worker's cache and the
        # record from the outbox in IndexedDB
        page.reload()
        anna.expect(page.locator("#conn.offline")).to_be_visible()
        waiting = page.locator("[data-testid=hand-row][data-queued]")
        anna.expect(waiting).to_have_count(1)
        anna.expect(waiting).to_have_attribute("data-queued", command_id)
        anna.expect(waiting).to_contain_text("paper covers rock, in the cellar")
        anna.shot("handplay-queued-offline-360x740", focus="[data-testid=hand]")

        bruno.page.evaluate("window.__buzz = []; navigator.vibrate = (p) => { window.__buzz.push(p); return true; }")

        # a server is back on the same database (another process, another port)
        second = stack.enter_context(served(setup.db))
        proxy.target_port = second.port
        for device in (anna, bruno, st):
            wifi_back(device)
        anna.expect(page.locator("#conn.online")).to_be_visible(timeout=BACK)
        row = page.locator("[data-testid=hand-row][data-record=\"o1.anna+bruno\"]")
        anna.expect(row).to_have_attribute("data-status", "recorded", timeout=BACK)
        anna.expect(page.locator("[data-testid=hand-row][data-queued]")).to_have_count(0)
        anna.expect(row.get_by_test_id("hand-status")).to_have_text("waiting for Bruno to confirm or dispute")
        # sent once, under the id it was queued with
        assert [t for _, t in stored_rows(setup.db, command_id)] == ["offline.recorded"]
        # a phone whose ack was lost sends it again on the same device: the same id, so the
        # server answers what it did and stores nothing new (checked at the end)
        assert page.evaluate("(e) => window.conteur.net.send({type: 'command', id: e.id, command: e.command,"
                             " entropy: e.entropy})", queued)
        [recorded] = events_of_type(setup.db, "offline.recorded")
        assert (recorded["recorder"], recorded["opponent"], recorded["winner"], recorded["attribute"]) == (
            "anna", "bruno", "anna", "physical")
        assert recorded["played_at"][:4].isdigit() and recorded["played_at"][-6] in "+-"  # the phone's clock, with its offset

        # Bruno's main page asks him, in French; he disputes and says he won
        ask = bruno.page.locator("[data-testid=hand-answer][data-record=\"o1.anna+bruno\"]")
        bruno.expect(ask).to_be_visible(timeout=BACK)
        bruno.expect(ask.locator("h2")).to_have_text("Anna a noté un défi joué à la main contre vous")
        assert bruno.page.evaluate("window.__buzz.length") >= 1  # the phone buzzes, as for a challenge
        bruno.expect(ask.get_by_test_id("hand-claim")).to_have_text("selon Anna, Anna l'a emporté")
        bruno.expect(ask.get_by_test_id("hand-confirm")).to_have_text("Confirmer")
        ask.get_by_test_id("hand-reason").fill("j'ai fait ciseaux")
        bruno.expect(ask.get_by_test_id("hand-iwon")).to_be_checked()
        bruno.shot("handplay-answer-fr-360x740", focus="[data-testid=hand-answer]")
        ask.get_by_test_id("hand-dispute").click()
        bruno.expect(ask).to_have_count(0)
        mine = bruno.page.locator("[data-testid=hand-row][data-record=\"o1.anna+bruno\"]")
        bruno.expect(mine).to_have_attribute("data-status", "disputed")
        bruno.expect(mine.get_by_test_id("hand-status")).to_have_text("contesté : un conteur doit trancher")
        [disputed] = events_of_type(setup.db, "offline.disputed")
        assert (disputed["winner"], disputed["reason"]) == ("bruno", "j'ai fait ciseaux")

        # the tablet: needs a ruling, both claims
        card = st.page.locator("[data-testid=st-hand-record][data-record=\"o1.anna+bruno\"]")
        st.expect(card.get_by_test_id("needs-ruling")).to_have_text("Needs a ruling")
        st.expect(card.get_by_test_id("st-hand-claims").locator("li")).to_have_text(
            ["Anna says Anna won", "Bruno says Bruno won (j'ai fait ciseaux)"])
        anna.expect(row).to_have_attribute("data-status", "disputed")

        # the review: disputed first, both claims, no winner
        review = review_page(browser, second.url, setup.storyteller, setup.session)
        first_dispute = review.get_by_test_id("disputes").locator("[data-challenge]").first
        Device.expect(first_dispute).to_have_attribute("data-challenge", "o1.anna+bruno")
        Device.expect(first_dispute.locator(".winner")).to_have_count(0)
        Device.expect(first_dispute.get_by_test_id("claims")).to_have_text(
            "Anna says Anna won · Bruno says Bruno won")
        first_dispute.locator("a").first.click()
        Device.expect(review.get_by_test_id("challenge-winner")).to_have_text("— (no ruling yet)")
        Device.expect(review.get_by_test_id("challenge-claims").locator("li")).to_have_text(
            ["Anna says Anna won", "Bruno says Bruno won (j'ai fait ciseaux)"])
        review.close()

        # the storyteller rules from the tablet
        st.shot("handplay-needs-ruling-1280x800", focus="[data-testid=st-hand]")
        card.get_by_test_id("hand-rule-reason").fill("Bruno's scissors, seen by Clara")
        card.get_by_test_id("hand-rule-bruno").click()
        confirm = st.page.get_by_test_id("confirm")
        st.expect(confirm).to_contain_text("Rule that Bruno won")
        confirm.get_by_test_id("confirm-yes").click()
        st.expect(card).to_have_count(0)
        anna.expect(row).to_have_attribute("data-status", "ruled")
        anna.expect(row.get_by_test_id("hand-status")).to_have_text("ruled by a storyteller: Bruno won")
        [ruled] = events_of_type(setup.db, "offline.ruled")
        assert (ruled["winner"], ruled["loser"], ruled["reason"]) == ("bruno", "anna", "Bruno's scissors, seen by Clara")
        review = review_page(browser, second.url, setup.storyteller, setup.session, "o1.anna%2Bbruno")
        Device.expect(review.get_by_test_id("challenge-winner")).to_have_text("Bruno")
        Device.expect(review.get_by_test_id("challenge-status")).to_have_text("ruled (Bruno's scissors, seen by Clara)")
        review.close()
        for device in (st, anna, bruno):
            device.close()
    with SQLiteStore(setup.db) as store:
        types = [r.type for r in store.read_after(setup.session) if r.type.startswith("offline.")]
    assert types == ["offline.recorded", "offline.disputed", "offline.ruled"]
