"""The review in real Chromium: the HTML chronicle record laid out on A4 (a screenshot and
a PDF for reviewers, test-artifacts/review/), and the storyteller's review page against
a real server answering "who won challenge N, and why"."""

from __future__ import annotations

from pathlib import Path

import httpx
import pytest

from conteur.server.audit import export as ex
from conteur.server.store.sqlite import SQLiteStore
from tests.support.browser_support import CHROMIUM, NO_CHROMIUM, TIMEOUT
from tests.support.client_support import served
from tests.support.review_support import evening

pytestmark = [pytest.mark.browser, pytest.mark.skipif(CHROMIUM is None, reason=NO_CHROMIUM)]

ARTIFACTS = Path(__file__).resolve().parents[2] / "test-artifacts" / "review"
A4 = {"width": 794, "height": 1123}  # 210 x 297 mm at 96 px per inch


@pytest.fixture(scope="module")
def setup(tmp_path_factory):
    return evening(tmp_path_factory.mktemp("review") / "chronicle.db")


def expect(locator):
    from playwright.sync_api import expect as _expect

    return _expect(locator)


@pytest.mark.parametrize("lang", ["en", "fr"])
def test_the_html_record_prints_on_a4(browser, setup, lang):
    with SQLiteStore(setup.db) as store:
        record = ex.export(store, setup.session, "html", lang=lang).decode()
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    (ARTIFACTS / f"record-{lang}.html").write_text(record, encoding="utf-8")
    page = browser.new_page(viewport=A4)
    try:
        page.set_content(record)
        page.emulate_media(media="print")
        # nothing wider than the sheet: a printed line is never cut off
        assert page.evaluate("document.documentElement.scrollWidth") <= A4["width"]
        page.screenshot(path=str(ARTIFACTS / f"record-{lang}-a4.png"), full_page=True)
        pdf = page.pdf(format="A4", print_background=True)
        (ARTIFACTS / f"record-{lang}.pdf").write_bytes(pdf)
        assert pdf.startswith(b"%PDF")
        text = page.inner_text("article")
        sentence = {"en": "Anna challenged Bruno (Physical): tie, bids 6 to 7, Bruno won",
                    "fr": "Anna a défié Bruno (Physique) : égalité, enchères 6 contre 7, Bruno l'a emporté"}[lang]
        assert sentence in text
        assert page.locator("li.ruling").count() == 2  # the overrule of c2 and the offline ruling
        assert page.locator("li.time_out").count() == 2
    finally:
        page.close()


def test_the_review_page_answers_who_won_challenge_2_and_why(browser, setup):
    with served(setup.db) as server:
        context = browser.new_context(viewport={"width": 1280, "height": 900}, locale="en-US")
        page = context.new_page()
        errors: list[str] = []
        page.on("pageerror", lambda e: errors.append(str(e)))
        page.set_default_timeout(TIMEOUT)
        try:
            page.goto(f"{server.url}/review.html#join={setup.storyteller}&session={setup.session}")
            expect(page.get_by_test_id("verify")).to_have_attribute("data-ok", "true")
            expect(page.get_by_test_id("verify")).to_contain_text("Log verified")
            # the token left the address bar
            assert setup.storyteller not in page.url
            # disputed and ruled items come first: the offline o1, then the overruled c2
            disputes = page.get_by_test_id("disputes").locator("[data-challenge]")
            expect(disputes).to_have_count(2)
            assert [disputes.nth(i).get_attribute("data-challenge") for i in range(2)] == ["o1.anna+bruno", "c2"]
            # the fairness panel charts the throws and the server's d3
            expect(page.get_by_test_id("fairness-chart")).to_have_count(2)
            expect(page.get_by_test_id("tallies").locator("tr[data-character=bruno] td").nth(1)).to_have_text("2")
            # the slider steps the scene: at the Time Out it shows the freeze, not before
            expect(page.get_by_test_id("scene-slider")).to_be_enabled()
            slider = page.get_by_test_id("scene-slider")
            stops = httpx.get(f"{server.url}/sessions/{setup.session}/review/scenes/hall/steps",
                              headers={"Authorization": f"Bearer {setup.storyteller}"}).json()
            assert int(slider.get_attribute("max")) == len(stops) - 1
            freeze = next(i for i, s in enumerate(stops) if s["text"] == "TIME OUT for everyone.")
            slider.fill(str(freeze))
            expect(page.get_by_test_id("scene-state")).to_have_attribute("data-seq", str(stops[freeze]["seq"]))
            expect(page.get_by_test_id("scene-frozen")).to_be_visible()
            slider.fill(str(freeze - 1))
            expect(page.get_by_test_id("scene-state")).to_have_attribute("data-seq", str(stops[freeze - 1]["seq"]))
            expect(page.get_by_test_id("scene-frozen")).to_have_count(0)
            page.screenshot(path=str(_shot("review-overview")), full_page=True)
            # timeline filter: Bruno's offline records only
            page.locator("select[data-filter=character]").select_option("bruno")
            page.locator("select[data-filter=type]").select_option("offline")
            expect(page.get_by_test_id("timeline").locator("li")).to_have_count(5)
            assert "null" not in page.locator("#timeline").inner_text()
            # who won challenge 2, and why
            disputes.nth(1).locator("a").click()
            story = page.get_by_test_id("challenge-page")
            expect(story).to_have_attribute("data-challenge", "c2")
            expect(page.get_by_test_id("challenge-winner")).to_have_text("Bruno")
            expect(page.get_by_test_id("challenge-status")).to_contain_text("overruled")
            expect(page.get_by_test_id("challenge-sentence")).to_contain_text(
                "a storyteller overruled: Bruno won (Anna's knife was out of reach)")
            # who saw what, when: Bruno's overbid reached Anna sealed
            overbid = page.get_by_test_id("challenge-steps").locator("tr[data-type='met.overbid_declared']")
            expect(overbid.locator(".sealed")).to_contain_text("Anna")
            page.screenshot(path=str(_shot("review-challenge-c2")), full_page=True)
            page.get_by_test_id("back").click()
            expect(page.get_by_test_id("disputes")).to_be_visible()
            # the same review in French: the server tells the sentences
            page.locator("#lang").select_option("fr")
            expect(page.locator("[data-testid=challenge-link][data-challenge=c1] .sentence").first).to_have_text(
                "Anna a défié Bruno (Physique) : égalité, enchères 6 contre 7, Bruno l'a emporté, Anna a accepté")
            expect(page.get_by_test_id("verify")).to_contain_text("Journal vérifié")
            assert errors == []
        finally:
            context.close()


def test_a_storyteller_rules_on_a_disputed_offline_challenge_from_the_page(browser, tmp_path):
    from conteur.events.model import STORYTELLER  # noqa: F401  (the ruling goes through the real command path)
    from conteur.server.core.service import Chronicle
    from tests.support.review_support import BRUNO, run
    from tests.support.client_support import make_chronicle

    setup = make_chronicle(tmp_path / "c.db")
    from tests.support.review_support import ANNA

    with SQLiteStore(setup.db) as store:
        chronicle = Chronicle(store)
        run(chronicle, ANNA, "record_offline_challenge", character="anna", opponent="bruno", winner="anna",
            played_at="2026-11-29T22:00:00+01:00")
        run(chronicle, BRUNO, "dispute", character="bruno", record="o1.anna+bruno", reason="I won", winner="bruno")
    with served(setup.db) as server:
        page = browser.new_page()
        page.set_default_timeout(TIMEOUT)
        try:
            # the list must not say "Winner: Anna" in green while Bruno claims the win
            page.goto(f"{server.url}/review.html#join={setup.storyteller}&session={setup.session}")
            row = page.get_by_test_id("disputes").locator("[data-challenge=\"o1.anna+bruno\"]")
            expect(row.get_by_test_id("claims")).to_have_text("Anna says Anna won · Bruno says Bruno won")
            expect(row.locator(".winner")).to_have_count(0)
            page.goto(f"{server.url}/review.html#join={setup.storyteller}&session={setup.session}&challenge=o1.anna%2Bbruno")
            expect(page.get_by_test_id("challenge-status")).to_have_text("disputed (I won)")
            expect(page.get_by_test_id("challenge-winner")).to_have_text("— (no ruling yet)")
            expect(page.get_by_test_id("challenge-claims").locator("li")).to_have_text(
                ["Anna says Anna won", "Bruno says Bruno won (I won)"])
            page.get_by_test_id("ruling-winner").select_option("bruno")
            page.get_by_test_id("ruling-reason").fill("Anna agreed afterwards")
            page.get_by_role("button", name="Record the ruling").click()
            expect(page.get_by_test_id("challenge-status")).to_have_text("ruled (Anna agreed afterwards)")
            expect(page.get_by_test_id("challenge-winner")).to_have_text("Bruno")
        finally:
            page.close()


def _shot(name: str) -> Path:
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    return ARTIFACTS / f"{name}.png"
