"""A phone comes back by itself, on Chromium, Firefox ESR and WebKitGTK: after the server
was down (stopped, then started again on the same port), and when its screen is shown
again during a challenge. It asks GET /health before it opens a websocket (a failed
handshake makes Firefox hold back the next one, up to a minute: RFC 6455 7.2.3) and it
does not wait for its backoff when the page is shown again. How fast: bench/reconnect.py."""

from __future__ import annotations

import time

import pytest

from conteur.events.model import Actor
from conteur.server.core.service import Chronicle
from conteur.server.store.sqlite import SQLiteStore
from conteur.server.web.app import Served, create_app
from tests.support.client_support import command, events_of_type
from tests.support.engines_support import COUNT_SOCKETS, HIDE, engine, free_port  # noqa: F401

pytestmark = [pytest.mark.browser]

OUTAGE = 4  # s: several probes go unanswered, as in a long outage
LIVE = "() => !!window.conteur && window.conteur.live && window.conteur.status === 'online'"
OFFLINE = "() => !window.conteur.live && window.conteur.status === 'offline'"
QUEUED = "() => window.conteur.queued.length"


class Server:
    """The real server on one port, stopped and started again as a venue's laptop is."""

    def __init__(self, db: str):
        self.db = db
        self.port = free_port()
        self.served = None

    def start(self) -> Server:
        # a laptop restarting waits for no phone to say goodbye
        self.served = Served(create_app(self.db), port=self.port, timeout_graceful_shutdown=1).__enter__()
        return self

    def stop(self) -> None:
        self.served.stop()
        self.served = None

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"


@pytest.fixture
def venue(setup):
    server = Server(setup.db).start()
    yield server
    if server.served is not None:
        server.stop()


def phone(engine, venue, token):
    tab = engine.tab()
    tab.goto(f"{venue.url}/#join={token}")
    tab.wait(LIVE, what="the phone to be online")
    return tab


def start_challenge(tab) -> None:
    tab.click("details.new-challenge summary")
    tab.select("details.new-challenge form select[name=defender]", "bruno")
    tab.select("details.new-challenge form select[name=attribute]", "physical")
    tab.click("[data-testid=challenge-start]")
    tab.seen('[data-testid=challenge][data-challenge="c1"] [data-testid=throw-paper]', what="the challenge's card")


def bruno_throws(db: str, choice: str) -> None:
    """Bruno's throw, written while Anna's phone cannot hear it (the server is down)."""
    store = SQLiteStore(db)
    try:
        executed = Chronicle(store).execute_sync("demo", command("throw", character="bruno", challenge="c1", round=1, choice=choice),
                                                 Actor(role="player", character="bruno", name="Bruno"))
        assert not executed.outcome.rejected, executed.outcome
    finally:
        store.close()


def test_after_an_outage_no_websocket_is_tried_until_health_answers(engine, venue, setup):
    anna = phone(engine, venue, setup.players["anna"])
    start_challenge(anna)
    anna.run(COUNT_SOCKETS)
    venue.stop()
    anna.wait(OFFLINE, what="the phone to say offline")
    anna.click('[data-testid=challenge][data-challenge="c1"] [data-testid=throw-paper]')
    assert anna.wait(QUEUED, what="the throw to be queued") == 1
    bruno_throws(setup.db, "rock")
    time.sleep(OUTAGE)
    # nothing answers /health: no handshake is tried, so none is held back afterwards
    assert anna.run("() => window.__sockets") == 0
    venue.start()
    anna.wait(LIVE, what="the phone to be back online once the server answers")
    assert anna.run("() => window.__sockets") == 1
    # caught up as always: the queued throw sent once, Bruno's throw received
    anna.wait("() => window.conteur.queued.length === 0", what="the queue to empty")
    anna.wait("() => document.querySelector('[data-testid=challenge][data-challenge=\"c1\"]').dataset.status === 'window'",
              what="paper covering rock on the card")
    throws = [e for e in events_of_type(setup.db, "met.throw_committed") if e["character"] == "anna"]
    assert len(throws) == 1


def test_a_phone_shown_again_during_a_challenge_reconnects_without_its_backoff(engine, venue, setup):
    anna = phone(engine, venue, setup.players["anna"])
    start_challenge(anna)
    # a backoff of ten minutes: only the page shown again can bring it back within the test
    anna.run("() => { const n = window.conteur.net; n.base = n.cap = n.probeCap = 600000; return true; }")
    anna.run(HIDE, "hidden")  # the screen locks, the venue's laptop restarts meanwhile
    venue.stop()
    anna.wait(OFFLINE, what="the phone to lose its socket")
    bruno_throws(setup.db, "rock")
    venue.start()
    anna.run(HIDE, "visible")  # the screen unlocks
    anna.wait(LIVE, what="the phone to be live again once shown")
    # the challenge goes on where it was, with what happened meanwhile (Bruno has thrown)
    anna.click('[data-testid=challenge][data-challenge="c1"] [data-testid=throw-paper]')
    anna.wait("() => document.querySelector('[data-testid=challenge][data-challenge=\"c1\"]').dataset.status === 'window'",
              what="paper covering rock on the card")


def test_a_socket_frozen_while_hidden_is_replaced_when_shown(engine, venue, setup):
    """A phone's browser may keep a socket "open" that died while the screen was locked:
    shown again, the page checks it with a ping and replaces it when nothing answers."""
    anna = phone(engine, venue, setup.players["anna"])
    anna.run(COUNT_SOCKETS)
    # the socket goes quiet as a frozen one does: what comes in is no longer heard
    anna.run("() => { const ws = window.conteur.net.ws; ws.onmessage = null; window.conteur.net.base = window.conteur.net.cap = 600000; return true; }")
    anna.run(HIDE, "hidden")
    anna.run(HIDE, "visible")
    anna.wait("() => window.__sockets === 1", what="a new socket once the old one stayed silent")
    anna.wait(LIVE, what="the phone to be live on its new socket")


# The next GET /health the page makes never settles, as a fetch frozen with a locked
# phone's page may not; those after it go through.
HANG_ONE_PROBE = """() => {
  const real = window.fetch;
  window.__hung = false;
  window.fetch = (url, options) => {
    if (!window.__hung && String(url).endsWith('/health')) { window.__hung = true; return new Promise(() => {}); }
    return real(url, options);
  };
  return true;
}"""


def test_a_probe_frozen_while_hidden_does_not_hold_the_shown_page_back(engine, venue, setup):
    """A probe that began before the screen locked is not waited for once it is shown: a
    new one is asked, and the page is live on its answer."""
    anna = phone(engine, venue, setup.players["anna"])
    anna.run(HANG_ONE_PROBE)
    anna.run(HIDE, "hidden")  # the screen locks; the venue's laptop restarts meanwhile
    venue.stop()
    anna.wait(OFFLINE, what="the phone to lose its socket")
    anna.wait("() => window.__hung", what="a probe under way, never to answer")
    # a backoff of ten minutes: only the page shown again can bring it back within the test
    anna.run("() => { const n = window.conteur.net; n.base = n.cap = n.probeCap = 600000; return true; }")
    venue.start()
    time.sleep(1)  # the phone stays locked a while: its probe is not one of the moment
    anna.run(HIDE, "visible")  # the screen unlocks
    anna.wait(LIVE, what="the phone to be live again once shown, its frozen probe left aside")
