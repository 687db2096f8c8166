"""A phone offline over plain HTTP says plainly what a reload would do: no service worker
keeps the app shell outside a secure context, so a reload shows the browser's error page
until the network is back, while nothing queued is lost (it waits in IndexedDB). A page
the service worker controls (HTTPS, or localhost here) opens offline and says less."""

from __future__ import annotations

import pytest

from tests.support.browser_support import CHROMIUM, NO_CHROMIUM
from tests.support.client_support import Proxy
from tests.support.web_support import Device, wait_until

pytestmark = [pytest.mark.browser, pytest.mark.skipif(CHROMIUM is None, reason=NO_CHROMIUM)]

RELOAD = {"en-US": ("Do not reload this page until the network is back", "Nothing queued is lost"),
          "fr-FR": ("Ne rechargez pas cette page avant le retour du réseau", "Rien de ce qui attend n'est perdu")}


@pytest.mark.parametrize("locale", sorted(RELOAD))
def test_offline_over_plain_http_says_not_to_reload_and_that_nothing_queued_is_lost(lan_browser, server, setup, locale):
    with Proxy(server.port) as proxy:
        anna = Device(lan_browser, f"http://venue.lan:{proxy.port}", setup.players["anna"], locale=locale)
        assert anna.page.evaluate("window.isSecureContext") is False
        anna.expect(anna.page.get_by_test_id("conn-note")).to_have_count(0)  # online: nothing to say
        proxy.cut(hold=True)
        anna.expect(anna.page.locator("#conn.offline")).to_be_visible()
        note = anna.page.get_by_test_id("conn-note")
        for words in RELOAD[locale]:
            anna.expect(note).to_contain_text(words)
        anna.shot(f"player-offline-plain-http-{locale}-360x740")
        proxy.release()
        anna.expect(anna.page.locator("#conn.online")).to_be_visible()
        anna.expect(note).to_have_count(0)
        anna.close()


def test_offline_with_the_offline_shell_does_not_warn_about_reloading(browser, server, setup):
    with Proxy(server.port) as proxy:
        anna = Device(browser, proxy.url, setup.players["anna"])  # 127.0.0.1: a secure context
        wait_until(anna.page, "!!navigator.serviceWorker.controller", what="the service worker to control the page")
        proxy.cut(hold=True)
        anna.expect(anna.page.locator("#conn.offline")).to_be_visible()
        note = anna.page.get_by_test_id("conn-note")
        anna.expect(note).to_contain_text("Offline")
        assert "reload" not in note.inner_text()
        anna.close()
