"""Calling a storyteller from a phone (events/desk.py), in Chromium: a ruling, a question and
a safety call; two tablets show the queue in order of arrival with safety calls first and
marked, both alerted at once; one storyteller takes a call and the other sees who; the
caller's phone follows its own call through a reload; no other phone learns of it."""

from __future__ import annotations

import pytest

from tests.support.browser_support import CHROMIUM, NO_CHROMIUM
from tests.support.client_support import make_chronicle, served
from tests.support.doc_shots import doc_shot
from tests.support.web_support import TABLET, Device, call

pytestmark = [pytest.mark.browser, pytest.mark.skipif(CHROMIUM is None, reason=NO_CHROMIUM)]


def test_calls_queue_on_every_tablet_safety_first_and_the_caller_follows_its_own(browser, tmp_path):
    setup = make_chronicle(tmp_path / "chronicle.db")
    with served(setup.db) as server:
        morgane = Device(browser, server.url, f"{setup.storyteller}&session={setup.session}", viewport=TABLET)
        head = Device(browser, server.url, f"{setup.chronicle_storyteller}&session={setup.session}", viewport=TABLET)
        anna = Device(browser, server.url, setup.players["anna"])
        bruno = Device(browser, server.url, setup.players["bruno"], locale="fr-FR")
        assert anna.page.get_by_test_id("call-text").get_attribute("maxlength") == "200"

        call(anna, "ruling", "Who won the brawl?")
        anna.expect(anna.page.get_by_test_id("my-call")).to_have_count(1)
        call(bruno, "safety", "Anna fainted by the stairs")
        call(anna, "question", "")
        for tablet in (morgane, head):
            queue = tablet.page.get_by_test_id("st-call")
            tablet.expect(queue).to_have_count(3)
            # safety first and marked, then the others in order of arrival
            assert [queue.nth(i).get_attribute("data-call") for i in range(3)] == ["bruno.1", "anna.1", "anna.2"]
            tablet.expect(queue.first.get_by_test_id("safety-mark")).to_be_visible()
            alert = tablet.page.get_by_test_id("safety-alert")
            tablet.expect(alert).to_contain_text("Safety call: Bruno")
            tablet.expect(alert).to_contain_text("Anna fainted by the stairs")
        doc_shot(morgane.page.get_by_test_id("st-calls"), "calls-queue")
        # no other phone learns of a call: not its kind, not its line, not that it was made
        def held(phone: Device) -> list[str]:
            return phone.page.evaluate("() => Object.keys((window.conteur.vm.desk || {calls: {}}).calls)")

        assert held(anna) == ["anna.1", "anna.2"] and held(bruno) == ["bruno.1"]
        assert "fainted" not in anna.page.content() and "Who won" not in bruno.page.content()

        morgane.page.get_by_test_id("safety-take").click()
        head.expect(head.page.locator('[data-testid=st-call][data-call="bruno.1"]')
                    .get_by_test_id("call-taken-by")).to_have_text("Morgane is coming")
        for tablet in (morgane, head):
            tablet.expect(tablet.page.get_by_test_id("safety-alert")).to_have_count(0)
        mine = bruno.page.locator('[data-testid=my-call][data-call="bruno.1"]')
        bruno.expect(mine).to_have_attribute("data-status", "taken")
        bruno.expect(mine).to_contain_text("Morgane arrive")
        # the call survives a reload (the phone's own events, then the server's resync)
        bruno.page.reload()
        bruno.expect(bruno.page.locator("#conn.online")).to_be_visible()
        bruno.expect(mine).to_have_attribute("data-status", "taken")
        head.page.locator('[data-testid=st-call][data-call="bruno.1"]').get_by_test_id("call-close").click()
        bruno.expect(mine).to_have_attribute("data-status", "closed")
        morgane.expect(morgane.page.get_by_test_id("st-call")).to_have_count(2)
        morgane.page.locator('[data-testid=st-call][data-call="anna.1"]').get_by_test_id("call-take").click()
        anna.expect(anna.page.locator('[data-testid=my-call][data-call="anna.1"]')).to_contain_text("Morgane is coming")
        for device in (morgane, head, anna, bruno):
            device.close()
