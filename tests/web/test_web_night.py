"""A whole night in the browser: the demo chronicle played through the pages
only, taps and clicks, never the wire, at 360x740 and 412x915 (phones) and 1280x800 (a
laptop): a Mind's Eye Theatre challenge with a tie, bids (the defender declaring its own
ability), a retest and an overbid; a V5
roll with a Willpower reroll; an opposed action roll; a Time Out and its resume; a
dropout (the websocket cut for real, through a proxy) and a reload; the review and an
export.

After every step, on every page the step touched: nothing wider than the viewport, no
unexpected console error, every visible button at least 44 px tall, and no serious or
critical axe-core violation. Each step is photographed at each size into a folder the
test prints (``CONTEUR_NIGHT_SHOTS`` to choose it; never committed); run with ``-s`` to
see the path."""

from __future__ import annotations

import os
import re
import tempfile
from pathlib import Path

import pytest

from tests.support.client_support import Proxy, events_of_type
from tests.support.browser_support import CHROMIUM, NO_CHROMIUM, TIMEOUT

pytestmark = [pytest.mark.browser, pytest.mark.skipif(CHROMIUM is None, reason=NO_CHROMIUM)]

SIZES = {"360x740": (360, 740), "412x915": (412, 915), "1280x800": (1280, 800)}
TABLET = {"width": 1280, "height": 800}
MIN_TAP = 44  # px: WCAG 2.5.5's target size, what a thumb in a dim room needs

# Console lines a step expects: a socket cut on purpose, a page loaded while cut off
EXPECTED_OFFLINE = re.compile(r"WebSocket connection to .* failed|Failed to load resource|net::ERR_")


@pytest.fixture(scope="module")
def axe():
    try:
        from axe_playwright_python.sync_playwright import Axe
    except ImportError:  # pragma: no cover - the test extras install it
        pytest.skip("axe-playwright-python is not installed (pip install -e '.[test]')")
    return Axe()


@pytest.fixture(scope="module")
def shots():
    folder = Path(os.environ.get("CONTEUR_NIGHT_SHOTS") or tempfile.mkdtemp(prefix="conteur-night-"))
    folder.mkdir(parents=True, exist_ok=True)
    print(f"\nwhole-night screenshots: {folder}")
    return folder


def expect(locator):
    from playwright.sync_api import expect as _expect

    return _expect(locator)


class Page:
    """One device's page, with what it logged since the last check."""

    def __init__(self, browser, url: str, name: str, viewport: dict, *, locale: str = "en-US"):
        self.name = name
        self.viewport = viewport
        self.context = browser.new_context(viewport=viewport, locale=locale, has_touch=viewport["width"] < 800)
        self.page = self.context.new_page()
        self.page.set_default_timeout(TIMEOUT)
        self.console: list[str] = []
        self.page.on("console", lambda m: self.console.append(m.text) if m.type == "error" else None)
        self.page.on("pageerror", lambda e: self.console.append(f"pageerror: {e}"))
        self.page.goto(url)

    def close(self) -> None:
        self.context.close()


class Night:
    def __init__(self, axe, shots: Path, size: str):
        self.axe = axe
        self.shots = shots
        self.size = size
        self.step = 0

    def check(self, label: str, *pages: Page, offline_ok: bool = False) -> None:
        """The four checks on each page, and its screenshot."""
        self.step += 1
        for p in pages:
            page = p.page
            page.wait_for_timeout(50)  # the render scheduled by the last frame
            page.screenshot(path=str(self.shots / f"{self.size}-{self.step:02d}-{label}-{p.name}.png"))
            where = f"{self.size} step {self.step} {label} on {p.name}"
            width = page.evaluate("document.documentElement.scrollWidth")
            assert width <= p.viewport["width"], f"{where}: {width} px wide: {self.wider(page, p.viewport['width'])}"
            errors = [c for c in p.console if not (offline_ok and EXPECTED_OFFLINE.search(c))]
            assert errors == [], f"{where}: console errors {errors}"
            p.console.clear()
            small = page.evaluate(f"""() => [...document.querySelectorAll('button, [role=button], a.button, input[type=submit]')]
                .filter((b) => b.offsetParent !== null || getComputedStyle(b).position === 'fixed')
                .map((b) => [b.getBoundingClientRect().height, (b.dataset.testid || b.textContent || '').trim().slice(0, 40)])
                .filter(([h]) => h > 0 && h < {MIN_TAP})""")
            assert small == [], f"{where}: buttons under {MIN_TAP} px: {small}"
            # axe-core injected once per document (it is half a megabyte), run on each check
            if not page.evaluate("typeof window.axe === 'object'"):
                page.evaluate(self.axe.axe_script)
            violations = page.evaluate("axe.run(document, {resultTypes: ['violations']}).then((r) => r.violations"
                                       ".filter((v) => v.impact === 'serious' || v.impact === 'critical')"
                                       ".map((v) => [v.id, v.impact, v.nodes.slice(0, 3).map((n) => n.target)]))")
            bad = [tuple(v) for v in violations]
            assert bad == [], f"{where}: axe-core: {bad}"

    @staticmethod
    def wider(page, width: int) -> list[str]:
        return page.evaluate("""(w) => [...document.querySelectorAll('body *')]
            .filter((e) => e.getBoundingClientRect().right > w + 0.5)
            .slice(0, 5).map((e) => `${e.tagName}.${e.className}`)""", width)



def challenge(device: Page):
    return device.page.get_by_test_id("challenge").first


@pytest.mark.parametrize("size", list(SIZES))
def test_a_whole_night_through_the_pages(browser, axe, shots, demo, size):
    server, db, storyteller, links = demo
    w, h = SIZES[size]
    phone = {"width": w, "height": h}
    night = Night(axe, shots, size)
    url = server.url
    with Proxy(server.port) as proxy:  # Mara's Wi-Fi: cut for real later in the night
        st = Page(browser, f"{url}/#join={storyteller}&session=met-demo", "tablet", TABLET)
        lucien = Page(browser, f"{url}/#join={links['lucien']}", "lucien", phone)
        mara = Page(browser, f"{proxy.url}/#join={links['mara']}", "mara", phone, locale="fr-FR")
        for p in (st, lucien, mara):
            expect(p.page.locator("#conn.online")).to_be_visible()
        night.check("joined", st, lucien, mara)

        # ---- MET: a tie, bids, a retest, an overbid (MET-2, 3, 12, 13)
        lucien.page.locator("details.new-challenge summary").click()
        form = lucien.page.locator("details.new-challenge form")
        form.locator("select[name=defender]").select_option("mara")
        form.locator("select[name=attribute]").select_option("physical")
        lucien.page.get_by_test_id("challenge-start").click()
        expect(challenge(mara).get_by_test_id("throw-rock")).to_be_visible()
        night.check("challenge", lucien, mara)
        challenge(lucien).get_by_test_id("throw-rock").click()
        challenge(mara).get_by_test_id("throw-rock").click()
        expect(challenge(lucien)).to_have_attribute("data-status", "bidding")
        challenge(lucien).get_by_test_id("bid-input").fill("7")
        challenge(lucien).get_by_test_id("bid-send").click()
        expect(challenge(mara).get_by_test_id("bid-input")).to_be_visible()
        night.check("tie-bids", lucien, mara)
        # the defender declares its own ability with its bid (MET-3): Physical 5 + Dodge 1
        challenge(mara).get_by_test_id("bid-ability-Dodge").check()
        expect(challenge(mara).get_by_test_id("bid-input")).to_have_attribute("max", "6")
        challenge(mara).get_by_test_id("bid-input").fill("6")
        challenge(mara).get_by_test_id("bid-send").click()
        expect(challenge(mara)).to_have_attribute("data-status", "window")  # Mara lost on bids
        challenge(mara).locator("form.retest select").select_option("Fortitude")
        challenge(mara).get_by_test_id("retest").click()
        expect(challenge(mara).get_by_test_id("throw-scissors")).to_be_visible()
        night.check("retest", st, mara)
        challenge(lucien).get_by_test_id("throw-rock").click()
        challenge(mara).get_by_test_id("throw-scissors").click()  # rock breaks scissors
        expect(challenge(mara)).to_have_attribute("data-status", "window")
        assert challenge(mara).get_by_test_id("retest").count() == 0  # used up (MET-12)
        challenge(mara).locator("form.overbid input[name=value]").fill("5")  # lost on the throw: MET-13
        challenge(mara).get_by_test_id("overbid").click()
        expect(challenge(lucien).get_by_test_id("bid-input")).to_be_visible()
        night.check("overbid", lucien, mara)
        challenge(lucien).get_by_test_id("bid-input").fill("7")
        challenge(lucien).get_by_test_id("bid-send").click()
        expect(challenge(lucien)).to_have_count(0)
        night.check("settled", st, lucien, mara)
        resolved = events_of_type(db, "met.challenge_resolved")
        assert [(r["winner"], r["reason"]) for r in resolved] == [("lucien", "overbid_failed")]
        bids = [(b["character"], b["value"], b.get("abilities")) for b in events_of_type(db, "met.bid_declared")]
        assert ("mara", 6, ["Dodge"]) in bids

        # ---- a Time Out and its resume (TIME-5)
        st.page.get_by_test_id("freeze-all").click()
        for p in (lucien, mara):
            expect(p.page.get_by_test_id("freeze")).to_be_visible()
        night.check("time-out", st, lucien, mara)
        st.page.get_by_test_id("resume-all").click()
        for p in (lucien, mara):
            expect(p.page.get_by_test_id("freeze")).to_be_hidden()
        night.check("resumed", st, lucien, mara)

        # ---- a dropout: Mara's socket cut, a throw queued, a reload without network
        lucien.page.locator("details.new-challenge summary").click()
        lucien.page.locator("details.new-challenge form select[name=defender]").select_option("mara")
        lucien.page.get_by_test_id("challenge-start").click()
        expect(challenge(mara).get_by_test_id("throw-paper")).to_be_visible()
        proxy.cut(hold=True)
        expect(mara.page.locator("#conn.offline")).to_be_visible()
        challenge(mara).get_by_test_id("throw-paper").click()
        expect(mara.page.get_by_test_id("conn")).to_have_attribute("data-queued", "1")
        night.check("dropout", mara, offline_ok=True)
        mara.page.reload()
        expect(mara.page.get_by_test_id("queued")).to_have_count(1)
        expect(challenge(mara)).to_be_visible()
        night.check("reload-offline", mara, offline_ok=True)
        proxy.release()
        expect(mara.page.locator("#conn.online")).to_be_visible(timeout=30_000)
        expect(mara.page.get_by_test_id("queued")).to_have_count(0)
        challenge(lucien).get_by_test_id("throw-rock").click()  # paper covers rock
        expect(challenge(mara)).to_have_attribute("data-status", "window")
        night.check("back-online", lucien, mara, offline_ok=True)
        # the storyteller ends it: asked once more, it cannot be taken back
        card = st.page.locator('[data-testid=st-challenge][data-status="window"]')
        card.get_by_test_id("cancel").click()
        expect(st.page.get_by_test_id("confirm")).to_be_visible()
        night.check("confirm-cancel", st)
        st.page.get_by_test_id("confirm-yes").click()
        expect(challenge(mara)).to_have_count(0)

        # ---- V5: a roll, then a Willpower reroll (V5-1, V5-9)
        iris = Page(browser, f"{url}/#join={links['iris']}", "iris", phone)
        expect(iris.page.locator("#conn.online")).to_be_visible()
        iris.page.locator("#v5attr").select_option("dexterity")
        iris.page.locator("#v5skill").select_option("stealth")
        for n in range(1, 8):
            iris.page.get_by_test_id("roll").click()
            expect(iris.page.get_by_test_id("roll-result")).to_have_count(min(n, 4))
            if iris.page.get_by_test_id("willpower").count():
                break
        night.check("v5-roll", iris)
        iris.page.get_by_test_id("willpower").click()
        expect(iris.page.get_by_test_id("willpower")).to_have_count(0)
        night.check("v5-willpower", iris)
        assert len(events_of_type(db, "v5.willpower_rerolled")) == 1

        # ---- an opposed action roll, answered from the defender's card (ACT-12)
        nova = Page(browser, f"{url}/#join={links['nova']}", "nova", phone)
        rook = Page(browser, f"{url}/#join={links['rook']}", "rook", phone, locale="fr-FR")
        for p in (nova, rook):
            expect(p.page.locator("#conn.online")).to_be_visible()
        nova.page.get_by_test_id("act-against").select_option("rook")
        nova.page.locator("#act-characteristic").select_option("combat")
        nova.page.get_by_test_id("roll").click()
        expect(rook.page.get_by_test_id("opposed-call")).to_have_count(1)
        night.check("opposed-call", nova, rook)
        rook.page.get_by_test_id("opposed-answer").click()
        expect(nova.page.get_by_test_id("opposed-result")).to_have_count(1)
        night.check("opposed-result", nova, rook)
        assert len(events_of_type(db, "action.opposition_settled")) == 1

        # ---- the review and an export
        review = Page(browser, f"{url}/review.html#join={storyteller}&session=met-demo", "review", phone)
        expect(review.page.get_by_test_id("verify")).to_have_attribute("data-ok", "true")
        expect(review.page.get_by_test_id("timeline")).to_be_visible()
        night.check("review", review)
        with review.page.expect_download() as download:
            review.page.locator("button[data-format=html]").click()
        path = download.value.path()
        assert "Lucien" in Path(path).read_text(encoding="utf-8")
        night.check("export", review)

        for p in (st, lucien, mara, iris, nova, rook, review):
            p.close()
