"""What the web app's Chromium tests share: a device (a phone or a tablet, its own browser
context), the frames a page's websockets carried, and the steps several tests take
(a challenge started from a phone, an opposed action roll waiting on its answer).
The fixtures themselves are in tests/conftest.py."""

from __future__ import annotations

import json
from pathlib import Path

from tests.support.browser_support import TIMEOUT

ARTIFACTS = Path(__file__).resolve().parents[2] / "test-artifacts" / "web"


PHONE = {"width": 360, "height": 740}


TABLET = {"width": 1280, "height": 800}


def wait_until(page, js: str, arg=None, *, what: str, timeout: int = TIMEOUT) -> None:
    """Poll ``js`` (which may be async) until it is truthy. Playwright's wait_for_function
    does not await a promise: it takes the promise itself for a truthy value and returns
    at once, so an async check there never waits."""
    for _ in range(max(1, timeout // 100)):
        if page.evaluate(js, arg):
            return
        page.wait_for_timeout(100)
    raise AssertionError(f"waited {timeout // 1000} s for {what}")


# True once the device's IndexedDB holds the last event the app applied (client/web/net.js
# Outbox keeps them per join, in a database named conteur.events.<join key>)
KEPT = """async () => {
    const app = window.conteur;
    if (!app || !app.live || !app.lastSeq) return false;
    const names = (await indexedDB.databases()).map((d) => d.name).filter((n) => n.startsWith("conteur.events."));
    for (const name of names) {
        const db = await new Promise((ok, ko) => { const r = indexedDB.open(name); r.onsuccess = () => ok(r.result); r.onerror = () => ko(r.error); });
        try {
            if (!db.objectStoreNames.contains("events")) continue;
            const top = await new Promise((ok) => {
                const c = db.transaction("events").objectStore("events").openCursor(null, "prev");
                c.onsuccess = () => ok(c.result ? c.result.key : 0);
                c.onerror = () => ok(0);
            });
            if (top >= app.lastSeq) return true;
        } finally { db.close(); }
    }
    return false;
}"""


class Device:
    """One browser context: a phone or a tablet, its own storage, its own websocket."""

    def __init__(self, browser, base_url: str, token: str, *, viewport=PHONE, locale="en-US", before=None):
        self.context = browser.new_context(viewport=viewport, locale=locale, has_touch=viewport is PHONE)
        self.page = self.context.new_page()
        self.errors: list[str] = []
        self.page.on("pageerror", lambda e: self.errors.append(str(e)))
        # every frame the app sends must be one the server's wire decoder takes (events/wire.py):
        # net.js and app.js build frames in JS, and this keeps them to the one wire module
        # (opened: the app seals every frame in the venue channel; the test holds the token)
        self.sent: list[str] = []
        self.held = {"token": token.split("&", 1)[0]}
        self.page.on("websocket", lambda ws: Opener.watch(ws, self.held, sent=self.sent.append))
        self.page.set_default_timeout(TIMEOUT)
        # the page's token (its credential, once its link is spent), for a Wire made later
        # and a route that opens and reseals the channel (route_events)
        self.page.conteur_held = self.held
        if before is not None:  # init scripts, routes: set before the app's first byte
            before(self.page)
        self.page.goto(f"{base_url}/#join={token}")
        self.expect(self.page.locator("#conn.online")).to_be_visible()

    @staticmethod
    def expect(locator):
        from playwright.sync_api import expect

        return expect(locator)

    def kept(self) -> None:
        """Wait until the device's own database holds every event it has applied: the app
        writes them in batches (client/web/app.js keep()), and a page opened offline folds
        only what was written."""
        wait_until(self.page, KEPT, what="the device to write down the events it applied")

    def challenge(self, challenge_id: str = "c1"):
        return self.page.locator(f'[data-testid=challenge][data-challenge="{challenge_id}"]')

    def shot(self, name: str, focus=None) -> Path:
        ARTIFACTS.mkdir(parents=True, exist_ok=True)
        if focus is not None:  # a CSS selector: the page re-renders, element handles go stale
            self.page.evaluate("(sel) => { const all = document.querySelectorAll(sel);"
                               " if (all.length) all[all.length - 1].scrollIntoView({block: 'end'}); }", focus)
        path = ARTIFACTS / f"{name}.png"
        self.page.screenshot(path=str(path), full_page=False)
        return path

    def close(self) -> None:
        assert self.errors == [], self.errors
        assert undecodable(self.sent) == [], undecodable(self.sent)
        self.context.close()


def undecodable(frames: list[str]) -> list[str]:
    """The frames of ``frames`` the server's typed decoder refuses, each with the reason."""
    from conteur.events import wire

    bad = []
    for text in frames:
        try:
            wire.decode(text)
        except wire.FrameError as exc:
            bad.append(f"{exc}: {text[:200]}")
    return bad


def start_challenge(anna: Device, defender: str = "bruno") -> None:
    anna.page.locator("details.new-challenge summary").click()
    form = anna.page.locator("details.new-challenge form")
    form.locator("select[name=defender]").select_option(defender)
    form.locator("select[name=attribute]").select_option("physical")
    anna.page.get_by_test_id("challenge-start").click()


class Opener:
    """One socket's sealed frames opened, as the holder of the token can (events/channel.py):
    the nonces are read from ``open`` and ``opened`` on the wire, the key from the token.
    A frame sent in the clear is passed on as it is. ``token``: the page's token, or a
    dict holding it under "token", shared by the page's sockets, which a ``welcome`` with
    a ``credential`` updates (the page keeps its own credential from then on)."""

    def __init__(self, token):
        self.held = token if isinstance(token, dict) else {"token": token}
        self.nonce = ""
        self.key_id = ""
        self.up = self.down = None  # opening the device's frames, the server's frames

    @classmethod
    def watch(cls, ws, token, *, sent=None, received=None) -> None:
        opener = cls(token)
        if sent is not None:
            ws.on("framesent", lambda payload: opener.sent(payload, sent))
        ws.on("framereceived", lambda payload: opener.received(payload, received))

    def sent(self, payload: str, out) -> None:
        frame = json.loads(payload)
        if frame.get("type") == "open":
            self.key_id, self.nonce = frame["id"], frame["nonce"]
        elif frame.get("type") == "sealed" and self.up is not None:
            payload = self.up.open(payload)
        out(payload)

    def received(self, payload: str, out) -> None:
        from conteur.events import channel

        frame = json.loads(payload)
        if frame.get("type") == "opened":
            # the token the page opened with, by the id its open named (its credential, or
            # the link it went back to)
            known = [self.held["token"], *self.held.get("others", ())]
            token = next((t for t in known if channel.key_id_of_token(t) == self.key_id), known[0])
            psk = channel.psk_of_token(token)
            self.up = channel.server_side(psk, self.key_id, self.nonce, frame["nonce"])
            self.down = channel.client_side(psk, self.key_id, self.nonce, frame["nonce"])
            return
        if frame.get("type") == "sealed" and self.down is not None:
            payload = self.down.open(payload)
            if '"credential"' in payload:
                for one in _unbatched(json.loads(payload)):
                    if one.get("type") == "welcome" and one.get("credential"):
                        self.held.setdefault("others", []).append(self.held["token"])
                        self.held["token"] = one["credential"]
        if out is not None:
            out(payload)


class Wire:
    """The frames a page's websockets sent and received, one list per socket, read from
    Playwright's websocket events (what went over the wire, not what the app says), and
    opened with the page's token when sealed."""

    def __init__(self, page, token="", held: dict | None = None):
        self.token = held or getattr(page, "conteur_held", None) or {"token": token}
        self.sockets: list[dict[str, list[dict]]] = []
        page.on("websocket", self._opened)

    def _opened(self, ws) -> None:
        frames: dict[str, list[dict]] = {"sent": [], "received": []}
        self.sockets.append(frames)
        Opener.watch(ws, self.token,
                     sent=lambda payload: frames["sent"].append(json.loads(payload)),
                     received=lambda payload: frames["received"].extend(_unbatched(json.loads(payload))))

    def hellos(self) -> list[tuple[dict, dict | None]]:
        """Each hello sent, with the welcome that answered it (None if none came)."""
        out = []
        for frames in self.sockets:
            welcome = next((f for f in frames["received"] if f["type"] == "welcome"), None)
            out += [(f, welcome) for f in frames["sent"] if f["type"] == "hello"]
        return out


def _unbatched(frame: dict) -> list[dict]:
    return frame["frames"] if frame["type"] == "batch" else [frame]


def phone(browser, url: str, link: str) -> tuple[Device, Wire]:
    """A player's phone whose websocket frames are recorded: the page reloads once the
    recorder is on, so every frame after the join goes through it."""
    device = Device(browser, url, link)
    wire = Wire(device.page, link.split("&", 1)[0])
    device.page.reload()
    device.expect(device.page.locator("#conn.online")).to_be_visible()
    return device, wire


def received_rolls(wire: Wire, tag: str) -> list[dict]:
    return [f["event"] for frames in wire.sockets for f in frames["received"]
            if f["type"] == "event" and f["event"]["type"] == tag]


ACTION_SESSION = "action-demo"  # the demo chronicle's action dice session


def action_state(server):
    return server.runtime.chronicle.state(ACTION_SESSION).action


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
    st = Device(browser, server.url, f"{storyteller}&session={ACTION_SESSION}", viewport=TABLET)
    nova = Device(browser, server.url, links["nova"])
    rook = Device(browser, server.url, links["rook"], locale=rook_locale)
    roll_against(nova, "rook", "combat")
    rook.expect(calls(rook)).to_have_count(1)
    return st, nova, rook


# ---------------------------------------------------------------- the phone's dice check (FAIR-2)

# Any touch of crypto.subtle is recorded and throws: the check must not need it.
NO_SUBTLE = """
(() => {
  window.__subtle = 0;
  Object.defineProperty(Crypto.prototype, "subtle", { configurable: true,
    get() { window.__subtle += 1; throw new Error("crypto.subtle is not there on plain HTTP"); } });
})();
"""


def no_subtle(page) -> None:
    page.add_init_script(NO_SUBTLE)


def route_events(page, change) -> None:
    """Every event frame reaches ``page`` through ``change(event)``, which may alter the
    decoded event in place (a batch's frames one by one); what the page sends goes as is.
    A forger who holds the page's token (``Device`` leaves it on the page): the channel's
    nonces pass through unchanged, so each server frame is opened, changed, and sealed
    again under the same key and counter."""
    from conteur.events import channel

    held = page.conteur_held

    def handler(ws):
        server = ws.connect_to_server()
        keys: dict = {}

        def up(message):
            if isinstance(message, str) and json.loads(message).get("type") == "open":
                keys["open"] = json.loads(message)
            server.send(message)

        def down(message):
            if not isinstance(message, str):
                ws.send(message)
                return
            outer = json.loads(message)
            if outer.get("type") == "opened":
                opening = keys["open"]
                known = [held["token"], *held.get("others", ())]
                token = next((t for t in known if channel.key_id_of_token(t) == opening["id"]), known[0])
                psk = channel.psk_of_token(token)
                keys["in"] = channel.client_side(psk, opening["id"], opening["nonce"], outer["nonce"])
                keys["out"] = channel.server_side(psk, opening["id"], opening["nonce"], outer["nonce"])
                ws.send(message)
                return
            sealed = outer.get("type") == "sealed" and "in" in keys
            frame = json.loads(keys["in"].open(message)) if sealed else outer
            for f in frame["frames"] if frame.get("type") == "batch" else [frame]:
                if f.get("type") == "event" and f.get("event"):
                    change(f["event"])
                elif f.get("type") == "welcome" and f.get("credential"):
                    held.setdefault("others", []).append(held["token"])
                    held["token"] = f["credential"]
            text = json.dumps(frame, ensure_ascii=False)
            ws.send(keys["out"].seal(text) if sealed else text)

        ws.on_message(up)
        server.on_message(down)

    page.route_web_socket("**/*", handler)


def second_link(server, link: str) -> str:
    """Another join link for the character of ``link``: a second phone of one character
    needs a link of its own (a link opens one phone at a time, docs/protocol.md)."""
    token, _, rest = link.partition("&")
    grant = server.runtime.tokens.check(token)
    fresh = server.runtime.tokens.issue(grant.role, character=grant.character, session=grant.session,
                                        name=grant.name)
    return f"{fresh}&{rest}" if rest else fresh


def call(phone: Device, kind: str, text: str = "") -> None:
    """The phone calls a storyteller from its Call form: a ruling, a question or a safety call."""
    page = phone.page
    form = page.get_by_test_id("call-form")
    if not form.is_visible():
        page.get_by_test_id("call").locator("summary").click()
    page.get_by_test_id("call-kind").select_option(kind)
    page.get_by_test_id("call-text").fill(text)
    page.get_by_test_id("call-send").click()
