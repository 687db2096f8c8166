"""Cues that need neither colour nor vibration: on an engine without navigator.vibrate
(Safari, Firefox) an incoming challenge still shows a banner that says so in words; a
window about to close by itself (MET-16) says so in words, an hourglass and a frame, with
the banner and a tone for the player whose move it is; Hunger dice and hits carry a shape
besides their colour (V5); the screen is kept awake during a challenge where the engine
offers a wake lock; the page keeps clear of a phone's notch (viewport-fit=cover); and the
review's header leaves a phone its screen."""

from __future__ import annotations

import re

import pytest

from tests.support.browser_support import CHROMIUM, NO_CHROMIUM, TIMEOUT
from tests.support.client_support import make_chronicle, served
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


# Every tone the page plays is counted (window.__tones): a cue's sound, where it is allowed.
TONES = """(() => {
  window.__tones = 0;
  const real = AudioContext.prototype.createOscillator;
  AudioContext.prototype.createOscillator = function () { window.__tones += 1; return real.call(this); };
})();"""
SOON_STYLE = """(css) => { const el = document.querySelector(css); const s = getComputedStyle(el);
  return { outline: s.outlineStyle, before: getComputedStyle(el, '::before').content, weight: s.fontWeight }; }"""
ACCEPT_TOP = "() => document.querySelector('[data-testid=accept]').getBoundingClientRect().top"


def test_met_16_a_window_closing_soon_is_said_in_words_and_a_frame_with_a_cue(browser, tmp_path):
    # a window of 20 s: its last 10 are "closing soon" (client/web/desk.js SOON)
    setup = make_chronicle(tmp_path / "chronicle.db", accept_timeout=20)
    with served(setup.db) as server:
        anna = Device(browser, server.url, setup.players["anna"], before=lambda p: p.add_init_script(NO_VIBRATE + TONES))
        bruno = Device(browser, server.url, setup.players["bruno"], locale="fr-FR")
        start_challenge(anna)
        anna.challenge().get_by_test_id("throw-rock").click()  # her first tap: sound allowed
        bruno.challenge().get_by_test_id("throw-paper").click()
        anna.expect(anna.challenge()).to_have_attribute("data-status", "window")  # Anna lost: her window
        clock = anna.challenge().get_by_test_id("window-clock")
        anna.expect(clock).to_have_text(re.compile(r"^closes by itself in 0:(1\d|20)$"))
        assert clock.get_attribute("data-soon") == "false"
        top = anna.page.evaluate(ACCEPT_TOP)
        tones = anna.page.evaluate("window.__tones")
        # the last ten seconds: words, an hourglass and a dashed frame, not a colour
        anna.expect(clock).to_have_attribute("data-soon", "true")
        anna.expect(clock).to_have_text(re.compile(r"^closing soon: 0:(10|0\d) left$"))
        style = anna.page.evaluate(SOON_STYLE, '[data-challenge="c1"] [data-testid=window-clock]')
        assert style["outline"] == "dashed" and "⌛" in style["before"], style
        cue = anna.page.get_by_test_id("cue")
        anna.expect(cue).to_be_visible()
        anna.expect(cue).to_contain_text("your window closes in a few seconds")
        assert anna.page.evaluate("window.__tones") > tones  # she tapped the page: a tone too
        # nothing moved under her finger: Accept is where it was
        assert anna.page.evaluate(ACCEPT_TOP) == top
        # Bruno won the round: his line says so too, in French; the banner is not his
        bruno.expect(bruno.challenge().get_by_test_id("window-clock")).to_have_text(re.compile(r"^se ferme bientôt : plus que 0:\d\d$"))
        assert "fenêtre" not in (bruno.page.get_by_test_id("cue").all_text_contents() or [""])[0]
        anna.challenge().get_by_test_id("accept").click()
        anna.expect(anna.challenge()).to_have_count(0)
        for device in (anna, bruno):
            assert device.errors == []
            device.close()


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
            # scrolled to the bottom, then Back brought into view: what is drawn where Back is,
            # is Back itself, not the header over it (in one step of the page, as the page may
            # draw the challenge again meanwhile, with a new Back link)
            page.wait_for_function("""() => { window.scrollTo(0, document.body.scrollHeight);
                const a = document.querySelector('[data-testid=back]');
                if (!a) return false;
                a.scrollIntoView({ block: "nearest" });
                const b = a.getBoundingClientRect();
                const el = document.elementFromPoint(b.left + b.width / 2, b.top + b.height / 2);
                return !!el && !!el.closest('[data-testid=back]'); }""")
        finally:
            context.close()
