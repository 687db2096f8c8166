"""The night's core on Chromium, Firefox ESR and WebKitGTK, at 390x844: two phones play a
Mind's Eye Theatre challenge through their pages (a tie, bids declared against the sheet's
cap, the loser's window, accepted), the storyteller calls a Time Out and resumes, one
phone loses its Wi-Fi mid-challenge (the websocket cut for real, through a proxy), throws
offline, and is caught up, and a reload keeps the character. Chromium alone walks the
whole night with axe and screenshots (tests/web/test_web_night.py); this keeps the other
engines true to it."""

from __future__ import annotations

import pytest

from conteur.events.model import STORYTELLER
from tests.support.client_support import Proxy, command, events_of_type
from tests.support.engines_support import engine  # noqa: F401

pytestmark = [pytest.mark.browser]

LIVE = "() => !!window.conteur && window.conteur.live && window.conteur.status === 'online'"
OFFLINE = "() => !window.conteur.live && window.conteur.status === 'offline'"
CARD = '[data-testid=challenge][data-challenge="{}"]'
# How far Accept moves when the window's clock line is without its time, then with it.
SHIFT = """(css) => {
  const clock = document.querySelector(css + ' [data-testid=window-clock]');
  const top = () => document.querySelector(css + ' [data-testid=accept]').getBoundingClientRect().top;
  const text = clock.textContent;
  clock.textContent = '';
  const without = top();
  clock.textContent = text || 'closes by itself in 1:00';
  const shift = top() - without;
  clock.textContent = text;
  return shift;
}"""


def status(tab, challenge: str, want: str) -> None:
    tab.wait("(css, want) => { const el = document.querySelector(css); return !!el && el.dataset.status === want; }",
             CARD.format(challenge), want, what=f"{challenge} {want}")


def errors(tab) -> list[str]:
    return tab.errors() if hasattr(tab, "errors") else []


def test_a_night_on_every_engine(engine, server, setup):  # noqa: F811
    with Proxy(server.port) as proxy:
        anna = engine.tab()
        anna.goto(f"{proxy.url}/#join={setup.players['anna']}")  # her Wi-Fi: the proxy
        bruno = engine.tab()
        bruno.goto(f"{server.url}/#join={setup.players['bruno']}")
        for tab in (anna, bruno):
            tab.wait(LIVE, what="the phone online")
        assert anna.run("() => document.querySelector('h1').textContent") == "Anna"

        # MET-4, MET-5: a tie, then bids bounded by the sheet
        anna.click("details.new-challenge summary")
        anna.select("details.new-challenge form select[name=defender]", "bruno")
        anna.select("details.new-challenge form select[name=attribute]", "physical")
        anna.click("[data-testid=challenge-start]")
        c1 = CARD.format("c1")
        for tab in (anna, bruno):
            tab.seen(f"{c1} [data-testid=throw-rock]")
        anna.click(f"{c1} [data-testid=throw-rock]")
        bruno.click(f"{c1} [data-testid=throw-rock]")
        status(anna, "c1", "bidding")
        assert anna.run("(css) => document.querySelector(css).max", f"{c1} [data-testid=bid-input]") == "6"
        anna.type(f"{c1} [data-testid=bid-input]", "5")
        anna.click(f"{c1} [data-testid=bid-send]")
        bruno.seen(f"{c1} [data-testid=bid-input]")
        assert bruno.run("(css) => document.querySelector(css).max", f"{c1} [data-testid=bid-input]") == "7"
        bruno.type(f"{c1} [data-testid=bid-input]", "7")
        bruno.click(f"{c1} [data-testid=bid-send]")
        status(anna, "c1", "window")  # Bruno wins on bids; Anna's window
        # the window's clock line is there before its time comes from the server: the time's
        # arrival moves nothing, so a tap aimed at Accept lands on it
        assert anna.run(SHIFT, c1) == 0
        anna.click(f"{c1} [data-testid=accept]")
        anna.wait("(css) => !document.querySelector(css)", c1, what="c1 settled")
        resolved = events_of_type(setup.db, "met.challenge_resolved")
        assert [(r["winner"], r["loser"], r["reason"]) for r in resolved] == [("bruno", "anna", "accepted")]
        assert {b["character"]: b["value"] for b in events_of_type(setup.db, "met.bid_declared")} == {"anna": 5, "bruno": 7}

        # Time Out and resume, from the storyteller (MET-20)
        chronicle = server.runtime.chronicle
        assert not chronicle.execute_sync(setup.session, command("freeze", scope="session"), STORYTELLER).outcome.rejected
        for tab in (anna, bruno):
            tab.seen("[data-testid=freeze]", what="the Time Out screen")
        assert not chronicle.execute_sync(setup.session, command("resume", scope="session"), STORYTELLER).outcome.rejected
        for tab in (anna, bruno):
            tab.wait("() => document.querySelector('[data-testid=freeze]').hidden", what="the Time Out lifted")

        # a dropout mid-challenge: Anna's throw waits in her outbox, then goes once
        bruno.click("details.new-challenge summary")
        bruno.select("details.new-challenge form select[name=defender]", "anna")
        bruno.select("details.new-challenge form select[name=attribute]", "physical")
        bruno.click("[data-testid=challenge-start]")
        c2 = CARD.format("c2")
        anna.seen(f"{c2} [data-testid=throw-paper]")
        proxy.cut(hold=True)
        anna.wait(OFFLINE, what="Anna offline")
        anna.click(f"{c2} [data-testid=throw-paper]")
        anna.wait("() => document.querySelector('[data-testid=conn]').dataset.queued === '1'", what="the throw queued")
        bruno.click(f"{c2} [data-testid=throw-rock]")
        proxy.release()
        anna.wait(LIVE, what="Anna back online")
        anna.wait("() => window.conteur.queued.length === 0", what="the queue sent")
        status(anna, "c2", "window")  # paper covers rock
        status(bruno, "c2", "window")
        throws = [e for e in events_of_type(setup.db, "met.throw_committed") if e["character"] == "anna"]
        assert len(throws) == 2  # one a challenge: the queued throw went once

        # a reload keeps the character and the challenge
        anna.goto(f"{proxy.url}/")
        anna.wait(LIVE, what="Anna online after a reload")
        status(anna, "c2", "window")  # from what the device kept, then the server
        for tab in (anna, bruno):
            assert errors(tab) == []
