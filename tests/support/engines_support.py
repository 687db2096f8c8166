"""The three browser engines a phone may run, driven alike: Chromium (Playwright), Firefox
ESR (WebDriver BiDi, spoken here over the websockets client the project already has) and
WebKitGTK (WebKitWebDriver's classic WebDriver over HTTP, MiniBrowser under Xvfb).

Debian's binaries only, as tests/support/browser_support.py: nothing is downloaded. A machine
without an engine skips its tests with the reason printed, unless CONTEUR_REQUIRE_ENGINES=1
(CI) asks for all three: then a missing engine fails.

Each engine gives a ``Tab`` with the few verbs the cross-engine tests need: ``goto``,
``run`` (a JavaScript function, awaited, its value back as JSON), ``wait``, ``click`` (a
real pointer click) and ``type`` (real key presses)."""

from __future__ import annotations

import json
import os
import shutil
import socket
import subprocess
import tempfile
import time
import urllib.request
from pathlib import Path

import pytest

from tests.support.browser_support import ARGS, CHROMIUM, TIMEOUT

ENGINES = ("chromium", "firefox", "webkit")
PHONE = (390, 844)
MINIBROWSER = next((p for p in ("/usr/lib/x86_64-linux-gnu/webkit2gtk-4.1/MiniBrowser",
                                "/usr/lib/aarch64-linux-gnu/webkit2gtk-4.1/MiniBrowser",
                                "/usr/lib/x86_64-linux-gnu/webkitgtk-6.0/MiniBrowser",
                                "/usr/lib/aarch64-linux-gnu/webkitgtk-6.0/MiniBrowser")
                    if os.path.exists(p)), None)
FIREFOX = shutil.which("firefox-esr") or shutil.which("firefox")
WEBDRIVER = shutil.which("WebKitWebDriver")
XVFB = shutil.which("Xvfb")

MISSING = {
    "chromium": None if CHROMIUM else "chromium is not installed (apt install chromium)",
    "firefox": None if FIREFOX else "firefox-esr is not installed (apt install firefox-esr)",
    "webkit": None if WEBDRIVER and MINIBROWSER and (XVFB or os.environ.get("DISPLAY")) else
    "WebKitGTK is not installed (apt install webkit2gtk-driver xvfb)",
}


def needs(engine: str) -> None:
    reason = MISSING[engine]
    if reason is None:
        return
    if os.environ.get("CONTEUR_REQUIRE_ENGINES") == "1":
        pytest.fail(f"CONTEUR_REQUIRE_ENGINES=1 but {reason}")
    pytest.skip(reason)


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


# A function's source and its arguments, run in the page and awaited; its value comes back
# as JSON text, so every engine returns plain data the same way.
def _call(fn: str) -> str:
    return f"async (...args) => JSON.stringify(await ({fn})(...args)) ?? 'null'"


class Tab:
    engine = ""

    def goto(self, url: str) -> None: ...

    def run(self, fn: str, *args):  # pragma: no cover - each engine has its own
        raise NotImplementedError

    def click(self, css: str) -> None: ...

    def type(self, css: str, text: str) -> None: ...

    def close(self) -> None: ...

    def wait(self, fn: str, *args, what: str, timeout: float = TIMEOUT / 1000):
        """Poll ``fn`` until it returns something truthy (that value), or fail naming ``what``."""
        end = time.monotonic() + timeout
        while True:
            value = self.run(fn, *args)
            if value:
                return value
            if time.monotonic() > end:
                raise AssertionError(f"{self.engine}: waited {timeout:.0f} s for {what}")
            time.sleep(0.05)

    def seen(self, css: str, *, what: str = "") -> None:
        """Wait until an element matching ``css`` is on the page and not hidden."""
        self.wait("(css) => { const el = document.querySelector(css); return !!el && !el.closest('[hidden]') && el.getClientRects().length > 0; }",
                  css, what=what or css)

    def select(self, css: str, value: str) -> None:
        # a <select>'s list is the system's own popup, which no WebDriver can point at:
        # the value is chosen as that popup would, with the input and change events
        self.run("(css, v) => { const el = document.querySelector(css); el.value = v;"
                 " el.dispatchEvent(new Event('input', {bubbles: true})); el.dispatchEvent(new Event('change', {bubbles: true})); return el.value; }",
                 css, value)


class ChromiumTab(Tab):
    engine = "chromium"

    def __init__(self, browser):
        self.context = browser.new_context(viewport={"width": PHONE[0], "height": PHONE[1]}, has_touch=True)
        self.page = self.context.new_page()
        self.page.set_default_timeout(TIMEOUT)

    def goto(self, url):
        self.page.goto(url)

    def run(self, fn, *args):
        return json.loads(self.page.evaluate(f"(args) => ({_call(fn)})(...args)", list(args)))

    def click(self, css):
        self.page.locator(css).first.click()

    def type(self, css, text):
        self.page.locator(css).first.fill("")
        self.page.locator(css).first.press_sequentially(text)

    def close(self):
        self.context.close()


class FirefoxTab(Tab):
    """Firefox ESR over WebDriver BiDi, its own profile, headless."""

    engine = "firefox"

    def __init__(self):
        from websockets.sync.client import connect

        self.profile = tempfile.mkdtemp(prefix="conteur-firefox-")
        # a quiet browser: no first-run pages, no update or telemetry traffic
        Path(self.profile, "user.js").write_text(
            'user_pref("browser.shell.checkDefaultBrowser", false);\n'
            'user_pref("datareporting.policy.dataSubmissionEnabled", false);\n'
            'user_pref("app.update.auto", false);\n'
            'user_pref("browser.aboutwelcome.enabled", false);\n')
        port = free_port()
        self.proc = subprocess.Popen([FIREFOX, "--headless", "--no-remote", "--profile", self.profile,
                                      f"--remote-debugging-port={port}", "about:blank"],
                                     stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        end = time.monotonic() + 60
        while True:
            try:
                self.ws = connect(f"ws://127.0.0.1:{port}/session", max_size=None, open_timeout=5).__enter__()
                break
            except OSError:
                if time.monotonic() > end or self.proc.poll() is not None:
                    self.quit()
                    raise RuntimeError("firefox-esr did not open WebDriver BiDi")
                time.sleep(0.2)
        self.n = 0
        self.log: list[dict] = []
        self.send("session.new", capabilities={})
        self.send("session.subscribe", events=["log.entryAdded"])
        self.context = self.send("browsingContext.getTree")["contexts"][0]["context"]
        self.send("browsingContext.setViewport", context=self.context,
                  viewport={"width": PHONE[0], "height": PHONE[1]})

    def send(self, method: str, **params):
        self.n += 1
        n = self.n
        self.ws.send(json.dumps({"id": n, "method": method, "params": params}))
        while True:
            msg = json.loads(self.ws.recv(timeout=TIMEOUT / 1000 * 2))
            if msg.get("type") == "event":
                self.log.append(msg["params"])
                continue
            if msg.get("id") != n:
                continue
            if msg.get("type") == "error":
                raise RuntimeError(f"firefox {method}: {msg.get('error')}: {msg.get('message')}")
            return msg["result"]

    def goto(self, url):
        self.send("browsingContext.navigate", context=self.context, url=url, wait="complete")

    def _call(self, fn: str, args, ownership="none"):
        result = self.send("script.callFunction", functionDeclaration=fn, awaitPromise=True,
                           target={"context": self.context}, resultOwnership=ownership,
                           arguments=[{"type": "string", "value": json.dumps(a)} for a in args])
        if result["type"] == "exception":
            raise AssertionError(f"firefox: {result['exceptionDetails'].get('text')}")
        return result["result"]

    def run(self, fn, *args):
        wrapped = f"async (...a) => ({_call(fn)})(...a.map((x) => JSON.parse(x)))"
        return json.loads(self._call(wrapped, args)["value"])

    def _element(self, css: str) -> dict:
        node = self._call("(css) => { const el = document.querySelector(JSON.parse(css));"
                          " if (el) el.scrollIntoView({block: 'center'}); return el; }", [css], ownership="root")
        if node.get("type") != "node":
            raise AssertionError(f"firefox: no element {css}")
        return {"sharedId": node["sharedId"]}

    def click(self, css):
        # the app redraws on every frame it receives: an element found just before a redraw
        # is gone by the click, so it is looked up again, as a finger would find it again
        for attempt in range(5):
            element = self._element(css)
            try:
                self.send("input.performActions", context=self.context, actions=[{
                    "type": "pointer", "id": "finger", "parameters": {"pointerType": "mouse"},
                    "actions": [{"type": "pointerMove", "x": 0, "y": 0, "origin": {"type": "element", "element": element}},
                                {"type": "pointerDown", "button": 0}, {"type": "pointerUp", "button": 0}]}])
                return
            except RuntimeError as exc:
                if attempt == 4 or "not displayed" not in str(exc) and "no such node" not in str(exc):
                    raise
                time.sleep(0.1)

    def type(self, css, text):
        self.run("(css) => { const el = document.querySelector(css); el.focus(); el.select(); return true; }", css)
        keys = [{"type": "keyDown", "value": "\ue003"}, {"type": "keyUp", "value": "\ue003"}]  # backspace
        for ch in text:
            keys += [{"type": "keyDown", "value": ch}, {"type": "keyUp", "value": ch}]
        self.send("input.performActions", context=self.context, actions=[{"type": "key", "id": "keys", "actions": keys}])

    def errors(self) -> list[str]:
        return [e.get("text", "") for e in self.log if e.get("level") == "error" and e.get("type") == "javascript"]

    def close(self):
        try:
            self.send("session.end")
        except Exception:  # noqa: BLE001 - the browser goes anyway
            pass
        self.quit()

    def quit(self):
        try:
            self.ws.close()
        except Exception:  # noqa: BLE001
            pass
        self.proc.terminate()
        try:
            self.proc.wait(10)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()
        shutil.rmtree(self.profile, ignore_errors=True)


ELEMENT = "element-6066-11e4-a52e-4f735466cecf"


class Display:
    """An Xvfb screen of its own when none is set (MiniBrowser is a GTK window)."""

    def __init__(self):
        self.proc = None
        self.env = dict(os.environ)
        if os.environ.get("DISPLAY") and not XVFB:
            return
        for n in range(140, 200):
            if os.path.exists(f"/tmp/.X{n}-lock"):
                continue
            self.proc = subprocess.Popen([XVFB, f":{n}", "-screen", "0", "1280x1024x24", "-nolisten", "tcp"],
                                         stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
            for _ in range(100):
                if os.path.exists(f"/tmp/.X11-unix/X{n}"):
                    self.env["DISPLAY"] = f":{n}"
                    return
                if self.proc.poll() is not None:
                    break
                time.sleep(0.05)
        raise RuntimeError("Xvfb did not start")

    def close(self):
        if self.proc is not None:
            self.proc.terminate()
            self.proc.wait(10)


class WebKitTab(Tab):
    """WebKitGTK's MiniBrowser through WebKitWebDriver (classic WebDriver over HTTP)."""

    engine = "webkit"

    def __init__(self, display: Display):
        port = free_port()
        self.driver = subprocess.Popen([WEBDRIVER, f"--port={port}"], env=display.env,
                                       stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        self.base = f"http://127.0.0.1:{port}"
        end = time.monotonic() + 30
        while True:
            try:
                self.http("GET", "/status")
                break
            except OSError:
                if time.monotonic() > end:
                    self.driver.kill()
                    raise RuntimeError("WebKitWebDriver did not start")
                time.sleep(0.1)
        caps = {"capabilities": {"alwaysMatch": {"webkitgtk:browserOptions": {
            "binary": MINIBROWSER, "args": ["--automation", "--ignore-tls-errors"]}}}}
        self.session = self.http("POST", "/session", caps)["sessionId"]
        self.http("POST", f"/session/{self.session}/window/rect", {"width": PHONE[0], "height": PHONE[1]})

    def http(self, method: str, path: str, body=None):
        data = None if body is None else json.dumps(body).encode()
        req = urllib.request.Request(self.base + path, data=data, method=method,
                                     headers={"Content-Type": "application/json"})
        try:
            with urllib.request.urlopen(req, timeout=TIMEOUT / 1000 * 4) as res:
                return json.loads(res.read() or b"{}").get("value")
        except urllib.error.HTTPError as exc:
            raise AssertionError(f"webkit {method} {path}: {exc.read()[:300]!r}") from None

    def goto(self, url):
        self.http("POST", f"/session/{self.session}/url", {"url": url})

    def run(self, fn, *args):
        script = ("const done = arguments[arguments.length - 1];"
                  f" ({_call(fn)})(...Array.from(arguments).slice(0, -1)).then(done, (e) => done(JSON.stringify({{__error: String(e)}})));")
        value = json.loads(self.http("POST", f"/session/{self.session}/execute/async", {"script": script, "args": list(args)}))
        if isinstance(value, dict) and "__error" in value:
            raise AssertionError(f"webkit: {value['__error']}")
        return value

    def _element(self, css):
        self.run("(css) => { const el = document.querySelector(css); if (el) el.scrollIntoView({block: 'center'}); }", css)
        return self.http("POST", f"/session/{self.session}/element", {"using": "css selector", "value": css})[ELEMENT]

    def _again(self, css, act):
        # the app redraws on every frame it receives: an element found just before a redraw
        # is stale by the click, so it is looked up again, as a finger would find it again
        for attempt in range(5):
            try:
                return act(self._element(css))
            except AssertionError as exc:
                if attempt == 4 or "stale element" not in str(exc):
                    raise
                time.sleep(0.1)

    def click(self, css):
        self._again(css, lambda el: self.http("POST", f"/session/{self.session}/element/{el}/click", {}))

    def type(self, css, text):
        def typed(el):
            self.http("POST", f"/session/{self.session}/element/{el}/clear", {})
            self.http("POST", f"/session/{self.session}/element/{el}/value", {"text": text})
        self._again(css, typed)

    def close(self):
        try:
            self.http("DELETE", f"/session/{self.session}")
        except Exception:  # noqa: BLE001 - the driver goes anyway
            pass
        self.driver.terminate()
        try:
            self.driver.wait(10)
        except subprocess.TimeoutExpired:
            self.driver.kill()
            self.driver.wait()


class Engine:
    """Opens tabs of one engine; each tab is its own browser profile (its own storage)."""

    def __init__(self, name: str, playwright=None):
        self.name = name
        self.browser = None
        self.display = None
        self.tabs: list[Tab] = []
        if name == "chromium":
            self.browser = playwright.chromium.launch(executable_path=CHROMIUM, args=ARGS)
        elif name == "webkit":
            self.display = Display()

    def tab(self) -> Tab:
        tab = {"chromium": lambda: ChromiumTab(self.browser), "firefox": FirefoxTab,
               "webkit": lambda: WebKitTab(self.display)}[self.name]()
        self.tabs.append(tab)
        return tab

    def close(self) -> None:
        for tab in self.tabs:
            tab.close()
        if self.browser is not None:
            self.browser.close()
        if self.display is not None:
            self.display.close()


@pytest.fixture(scope="module", params=ENGINES)
def engine(request):
    needs(request.param)
    playwright = None
    if request.param == "chromium":
        from playwright.sync_api import sync_playwright

        manager = sync_playwright()
        playwright = manager.start()
    eng = Engine(request.param, playwright)
    yield eng
    eng.close()
    if playwright is not None:
        playwright.stop()


# The page told it was hidden, then shown, as a phone's browser tells it when the screen
# locks and unlocks: desktop engines under automation keep every page visible.
HIDE = """(state) => {
  Object.defineProperty(document, "visibilityState", { configurable: true, get: () => state });
  Object.defineProperty(document, "hidden", { configurable: true, get: () => state === "hidden" });
  document.dispatchEvent(new Event("visibilitychange"));
  return state;
}"""

# Every websocket the page opens is counted (window.__sockets), the app's own included.
COUNT_SOCKETS = """() => {
  if (window.__sockets !== undefined) return true;
  window.__sockets = 0;
  const Real = window.WebSocket;
  window.WebSocket = new Proxy(Real, { construct(target, args) { window.__sockets += 1; return new target(...args); } });
  return true;
}"""
