"""Cues that need neither colour nor vibration: on an engine without navigator.vibrate
(Safari, Firefox) an incoming challenge still shows a banner that says so in words; Hunger
dice and hits carry a shape besides their colour (V5); the screen is kept awake during a
challenge where the engine offers a wake lock; the page keeps clear of a phone's notch
(viewport-fit=cover); and the review's header leaves a phone its screen."""

from __future__ import annotations

import pytest

from tests.support.browser_support import CHROMIUM, NO_CHROMIUM, TIMEOUT
from tests.support.client_support import served
from tests.support.review_support import evening
from tests.support.web_support import Device, start_challenge, wait_until

pytestmark = [pytest.mark.browser, pytest.mark.skipif(CHROMIUM is None, reason=NO_CHROMIUM)]

NO_VIBRATE = "delete Navigator.prototype.vibrate;"
WAKE = """(() => {
  window.__wake = 0;
  if (!("wakeLock" in navigator)) return;
  const real = navigator.wakeLock.request.bind(navigator.wakeLock);
  navigator.wakeLock.request = (type) => { window.__wake += 1; return real(type); };
})();"""


def test_an_incoming_challenge_is_said_in_words_where_the_phone_cannot_vibrate(browser, server, setup):
    bruno = Device(browser, server.url, setup.players["bruno"], before=lambda p: p.add_init_script(NO_VIBRATE))
    assert bruno.page.evaluate("'vibrate' in navigator") is False
    anna = Device(browser, server.url, setup.players["anna"])
    start_challenge(anna)
    cue = bruno.page.get_by_test_id("cue")
    bruno.expect(cue).to_be_visible()
    bruno.expect(cue).to_contain_text("Your move")
    # not colour alone: it moves in, and its border is drawn dashed
    assert bruno.page.evaluate("getComputedStyle(document.getElementById('cue')).borderTopStyle") == "dashed"
    anna.close()
    bruno.close()


def test_the_screen_is_kept_awake_during_a_challenge(browser, server, setup):
    anna = Device(browser, server.url, setup.players["anna"], before=lambda p: p.add_init_script(WAKE))
    if not anna.page.evaluate("'wakeLock' in navigator"):
        pytest.skip("this Chromium offers no screen wake lock")
    assert anna.page.evaluate("window.__wake") == 0  # no challenge: the screen may dim
    start_challenge(anna)
    anna.expect(anna.challenge()).to_be_visible()
    wait_until(anna.page, "window.__wake > 0", what="a screen wake lock asked for")
    anna.close()


V5_STYLES = """() => {
  const style = (sel) => { const el = document.querySelector(sel); return el && getComputedStyle(el); };
  const plain = style('.die:not(.hunger)'), hunger = style('.die.hunger'), hit = style('.die.hit'), miss = style('.die:not(.hit)');
  return { plain: plain && plain.borderTopStyle, hunger: hunger && hunger.borderTopStyle,
           hitShadow: hit ? hit.boxShadow : null, missShadow: miss ? miss.boxShadow : null };
}"""


def test_v5_hunger_dice_and_hits_carry_a_shape_as_well_as_a_colour(browser, demo):
    server, _, _, links = demo
    iris = Device(browser, server.url, links["iris"])  # Hunger 2: two of her dice are Hunger dice
    page = iris.page
    page.locator("#v5attr").select_option("dexterity")
    page.locator("#v5skill").select_option("stealth")
    for _ in range(8):  # until a roll shows a hit and a miss
        page.get_by_test_id("roll").click()
        page.wait_for_timeout(300)
        seen = page.evaluate(V5_STYLES)
        if seen["hitShadow"] and seen["missShadow"] is not None:
            break
    assert seen["hunger"] == "double" and seen["plain"] == "solid"
    assert seen["hitShadow"] not in (None, "none") and seen["missShadow"] == "none"
    iris.close()


SAFE = """() => [...document.styleSheets].flatMap((s) => [...s.cssRules]).map((r) => r.cssText)
  .filter((t) => t.includes('safe-area-inset')).join('\\n')"""


def test_the_page_keeps_clear_of_a_phones_notch_and_home_bar(browser, server, setup):
    anna = Device(browser, server.url, setup.players["anna"])
    assert "viewport-fit=cover" in anna.page.locator("meta[name=viewport]").get_attribute("content")
    rules = anna.page.evaluate(SAFE)
    for side in ("top", "left", "right", "bottom"):
        assert f"safe-area-inset-{side}" in rules, rules
    anna.close()


@pytest.mark.parametrize("lang", ["en", "fr"])
def test_the_reviews_header_takes_at_most_15_percent_of_a_phone_and_never_covers_back(browser, tmp_path, lang):
    night = evening(tmp_path / "chronicle.db")
    with served(night.db) as server:
        context = browser.new_context(viewport={"width": 390, "height": 844}, locale="en-US" if lang == "en" else "fr-FR")
        page = context.new_page()
        page.set_default_timeout(TIMEOUT)
        try:
            page.goto(f"{server.url}/review.html#join={night.storyteller}&session={night.session}")
            Device.expect(page.get_by_test_id("verify")).to_have_attribute("data-ok", "true")
            page.locator("#lang").select_option(lang)
            height = page.evaluate("document.querySelector('header.top').getBoundingClientRect().height")
            assert height <= 0.15 * 844, f"the header takes {height:.0f} px of 844"
            page.goto(f"{server.url}/review.html#session={night.session}&challenge=c1")
            back = page.get_by_test_id("back")
            Device.expect(back).to_be_visible()
            page.evaluate("window.scrollTo(0, document.body.scrollHeight)")
            back.scroll_into_view_if_needed()
            # what is drawn where Back is, is Back itself, not the header over it
            hit = page.evaluate("""() => { const b = document.querySelector('[data-testid=back]').getBoundingClientRect();
                const el = document.elementFromPoint(b.left + b.width / 2, b.top + b.height / 2);
                return !!el && !!el.closest('[data-testid=back]'); }""")
            assert hit
        finally:
            context.close()
