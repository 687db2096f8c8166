"""A safety call alerts every storyteller tablet of the venue at once, whatever session the
tablet is on (server/core/safety.py, desk.js safetyAlert), in Chromium over the demo's
sessions: a tablet on the caller's session takes it; one on another session, whose
token opens every session, sees who and why; one bound to another session sees that a
safety call waits and where, never who; no phone and no wall of the other session sees
anything of it."""

from __future__ import annotations

import pytest

from tests.support.browser_support import CHROMIUM, NO_CHROMIUM
from tests.support.doc_shots import doc_shot
from tests.support.web_support import TABLET, Device, call

pytestmark = [pytest.mark.browser, pytest.mark.skipif(CHROMIUM is None, reason=NO_CHROMIUM)]


def test_a_safety_call_alerts_the_tablets_of_every_session(browser, demo):
    server, _db, storyteller, links = demo
    tokens = server.runtime.tokens
    bound = tokens.issue("storyteller", session="action-demo", name="Léa")
    wall_token = tokens.issue("observer", session="action-demo", name="Wall")
    here = Device(browser, server.url, f"{storyteller}&session=met-demo", viewport=TABLET)
    there = Device(browser, server.url, f"{storyteller}&session=action-demo", viewport=TABLET)
    lea = Device(browser, server.url, f"{bound}&session=action-demo", viewport=TABLET, locale="fr-FR")
    wall = Device(browser, server.url, f"{wall_token}&session=action-demo", viewport=TABLET)
    lucien = Device(browser, server.url, links["lucien"])
    nova = Device(browser, server.url, links["nova"])

    call(lucien, "safety", "Mara fainted by the stairs")
    here.expect(here.page.get_by_test_id("safety-alert")).to_contain_text("Safety call: Lucien")
    # the other session's tablet, whose token opens every session: who, why and where
    elsewhere = there.page.get_by_test_id("safety-elsewhere")
    there.expect(elsewhere).to_have_text("Safety call in Elysium (Mind's Eye Theatre): Lucien — Mara fainted by the stairs")
    there.expect(elsewhere).to_have_attribute("data-session", "met-demo")
    # a storyteller bound to the other session: that one waits, and where, not who nor why
    told = lea.page.get_by_test_id("safety-elsewhere")
    lea.expect(told).to_have_text("Un appel sécurité attend dans Elysium (Mind's Eye Theatre)")
    doc_shot(lea.page.get_by_test_id("safety-alert"), "safety-elsewhere")
    for text in ("Lucien", "lucien", "fainted"):
        assert text not in lea.page.content(), text
    # the call survives a reload of a tablet on the other session
    lea.page.reload()
    lea.expect(lea.page.locator("#conn.online")).to_be_visible()
    lea.expect(lea.page.get_by_test_id("safety-elsewhere")).to_have_count(1)
    # no phone and no wall of the other session hears of it
    nova.page.get_by_test_id("call").locator("summary").click()  # the phone's own call form, open
    for device in (nova, wall):
        device.expect(device.page.locator("#conn.online")).to_be_visible()
        assert device.page.evaluate("() => window.conteur.venueCalls || []") == []
        assert "Lucien" not in device.page.content() and "fainted" not in device.page.content()
        device.expect(device.page.get_by_test_id("safety-alert")).to_have_count(0)
    # taken on the caller's session: off every tablet at once
    here.page.get_by_test_id("safety-take").click()
    for tablet in (here, there, lea):
        tablet.expect(tablet.page.get_by_test_id("safety-alert")).to_have_count(0)
    for device in (here, there, lea, wall, lucien, nova):
        assert not device.errors, device.errors
        device.close()


def test_a_tablet_whose_token_opens_every_session_takes_a_safety_call_of_another(browser, demo):
    """The alert of another session's safety call has a Take button for a storyteller whose
    token opens that session: take_call goes to that session, its tablets and the caller's
    phone see it taken, and the alert leaves every tablet. A storyteller bound to another
    session gets no such button, and never who called."""
    server, _db, storyteller, links = demo
    bound = server.runtime.tokens.issue("storyteller", session="action-demo", name="Léa")
    here = Device(browser, server.url, f"{storyteller}&session=met-demo", viewport=TABLET)
    there = Device(browser, server.url, f"{storyteller}&session=action-demo", viewport=TABLET, locale="fr-FR")
    lea = Device(browser, server.url, f"{bound}&session=action-demo", viewport=TABLET)
    lucien = Device(browser, server.url, links["lucien"])

    call(lucien, "safety", "Mara fainted by the stairs")
    take = there.page.get_by_test_id("safety-take-elsewhere")
    there.expect(take).to_have_text("Prendre")
    there.expect(take).to_have_attribute("data-session", "met-demo")
    lea.expect(lea.page.get_by_test_id("safety-elsewhere")).to_have_count(1)
    lea.expect(lea.page.get_by_test_id("safety-take-elsewhere")).to_have_count(0)
    doc_shot(there.page.get_by_test_id("safety-alert"), "safety-take-elsewhere")
    take.click()
    # taken in the caller's session: its tablet's queue and the caller's phone say so
    row = here.page.get_by_test_id("st-call").filter(has_text="Lucien")
    here.expect(row).to_have_attribute("data-status", "taken")
    lucien.expect(lucien.page.get_by_test_id("my-call")).to_have_attribute("data-status", "taken")
    # the taker's tablet says whose call it took and where to go, in its language
    there.expect(there.page.get_by_test_id("notice-taken")).to_contain_text(
        "Vous avez pris l'appel sécurité de Lucien dans Elysium (Mind's Eye Theatre) : allez-y")
    for tablet in (here, there, lea):
        tablet.expect(tablet.page.get_by_test_id("safety-alert")).to_have_count(0)
    for text in ("Lucien", "lucien", "fainted"):
        assert text not in lea.page.content(), text
    for device in (here, there, lea, lucien):
        assert not device.errors, device.errors
        device.close()
