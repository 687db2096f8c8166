"""What the phones and the tablet must do at a real night at the venue, each in real
Chromium against a real server: a card that fits 360 px, a pill that
says offline when the socket goes silent, a confirmation before what cannot be taken
back, a retest hidden once used, a refusal that taps away, one tab per session, the tap
that lets the phone vibrate, a round's history told as history, the action dice in
words, a language switch, the review and exports in French and in the venue's time, the
wall's Time Out, the powers on the card, a storyteller's roll shown once."""

from __future__ import annotations

import csv
import io
from datetime import datetime, timedelta

import httpx
import pytest

from conteur.server.store.sqlite import SQLiteStore
from tests.support.client_support import Proxy, events_of_type, served
from tests.support.review_support import evening
from tests.support.browser_support import CHROMIUM, NO_CHROMIUM
from tests.support.web_support import PHONE, TABLET, Device, start_challenge

pytestmark = [pytest.mark.browser, pytest.mark.skipif(CHROMIUM is None, reason=NO_CHROMIUM)]


def overflow(device: Device) -> int:
    """How far the page reaches past the viewport's width, in CSS pixels."""
    return device.page.evaluate("document.documentElement.scrollWidth - window.innerWidth")


def test_item_4_the_v5_card_with_its_willpower_reroll_fits_a_360_px_phone(browser, server, setup):
    session, token = setup.dice["clara"]
    clara = Device(browser, server.url, token, locale="fr-FR")  # the longer words
    page = clara.page
    page.locator("#v5attr").select_option("dexterity")
    page.locator("#v5skill").select_option("stealth")
    for n in range(1, 8):  # V5-9: the reroll is offered when a normal die failed (7 in 8 rolls)
        page.get_by_test_id("roll").click()
        clara.expect(page.get_by_test_id("roll-result")).to_have_count(min(n, 4))
        if page.get_by_test_id("willpower").count():
            break
    clara.expect(page.get_by_test_id("willpower")).to_be_visible()
    assert overflow(clara) <= 0
    box = page.get_by_test_id("willpower").bounding_box()
    assert box["x"] + box["width"] <= PHONE["width"]  # the button itself, not cut off
    clara.close()


def test_item_5_the_pill_says_offline_when_the_socket_goes_silent_with_the_queue_count(browser, server, setup):
    # a dead Wi-Fi link: the socket stays open, nothing flows, the browser's online flag
    # stays true; the heartbeat notices within 5 s (the old one waited 20 s)
    with Proxy(server.port) as proxy:
        anna = Device(browser, proxy.url, setup.players["anna"])
        bruno = Device(browser, server.url, setup.players["bruno"])
        start_challenge(bruno, defender="anna")
        anna.expect(anna.challenge().get_by_test_id("throw-paper")).to_be_visible()
        proxy.partition()
        assert anna.page.evaluate("navigator.onLine")
        anna.challenge().get_by_test_id("throw-paper").click()
        anna.expect(anna.page.get_by_test_id("queued")).to_have_count(1)
        pill = anna.page.get_by_test_id("conn")
        anna.expect(pill).to_have_class("conn offline", timeout=6_000)
        anna.expect(pill).to_have_attribute("data-queued", "1")
        anna.expect(pill).to_contain_text("1 waiting")
        anna.shot("phone-silent-link-offline-360x740")
        proxy.heal()
        anna.expect(anna.page.locator("#conn.online")).to_be_visible(timeout=30_000)
        anna.expect(anna.page.get_by_test_id("queued")).to_have_count(0)
        anna.expect(pill).to_have_attribute("data-queued", "0")
        assert len([e for e in events_of_type(setup.db, "met.throw_committed") if e["character"] == "anna"]) == 1
        anna.close()
        bruno.close()


def test_item_6_conceding_asks_first_and_no_keeps_the_challenge(browser, server, setup):
    anna = Device(browser, server.url, setup.players["anna"])
    bruno = Device(browser, server.url, setup.players["bruno"])
    start_challenge(anna)
    anna.challenge().locator("button[data-act=concede]").click()
    dialog = anna.page.get_by_test_id("confirm")
    anna.expect(dialog).to_be_visible()
    anna.expect(dialog).to_contain_text("Concede this challenge to Bruno?")
    anna.shot("phone-confirm-concede-360x740")
    anna.page.get_by_test_id("confirm-no").click()
    anna.expect(dialog).to_be_hidden()
    anna.page.wait_for_function("window.conteur.queued.length === 0")
    assert events_of_type(setup.db, "met.challenge_resolved") == []
    anna.expect(anna.challenge()).to_have_attribute("data-status", "throwing")
    anna.challenge().locator("button[data-act=concede]").click()
    anna.page.get_by_test_id("confirm-yes").click()
    anna.expect(anna.challenge()).to_have_count(0)
    assert [e["reason"] for e in events_of_type(setup.db, "met.challenge_resolved")] == ["conceded"]
    anna.close()
    bruno.close()


def test_item_6_a_sacrifice_asks_first(browser, server, setup):
    # ACT-8: the character dies; a slip of the option list must not kill it
    session, token = setup.dice["jake"]
    jake = Device(browser, server.url, token)
    page = jake.page
    page.locator("#act-option").select_option("sacrifice")
    page.get_by_test_id("roll").click()
    jake.expect(page.get_by_test_id("confirm")).to_contain_text("Jake dies")
    page.get_by_test_id("confirm-no").click()
    assert events_of_type(setup.db, "action.rolled") == []
    page.get_by_test_id("roll").click()
    page.get_by_test_id("confirm-yes").click()
    jake.expect(page.get_by_test_id("roll-result")).to_have_count(1)
    assert [e["option"] for e in events_of_type(setup.db, "action.rolled")] == ["sacrifice"]
    jake.close()


def _throw(phone: Device, choice: str) -> None:
    phone.challenge().get_by_test_id(f"throw-{choice}").click()


def test_items_7_and_10_a_round_two_card_a_used_retest_and_a_refusal_that_taps_away(browser, server, setup):
    st = Device(browser, server.url, setup.storyteller, viewport=TABLET)
    anna = Device(browser, server.url, setup.players["anna"])
    bruno = Device(browser, server.url, setup.players["bruno"])
    start_challenge(anna)
    # the New challenge form folds away once started
    anna.expect(anna.page.locator("#new-challenge")).not_to_have_attribute("open", "")
    _throw(anna, "rock")
    # thrown: the stage no longer asks for her throw; the tablet never says "Your throw"
    anna.expect(anna.challenge().get_by_test_id("stage")).not_to_have_text("Your throw")
    anna.expect(anna.challenge().get_by_test_id("revealed")).to_contain_text("You threw Rock")
    st_card = st.page.locator('[data-testid=st-challenge][data-challenge="c1"]')
    st.expect(st_card.locator(".stage")).to_have_text("Throws")
    bruno.expect(bruno.challenge().get_by_test_id("stage")).to_have_text("Your throw")
    _throw(bruno, "paper")  # paper covers rock: Anna lost on the throw
    anna.expect(anna.challenge()).to_have_attribute("data-status", "window")
    # a refusal (an overbid above her true score, MET-4): under the header, off the
    # buttons, and tapped away
    field = anna.challenge().locator("form.overbid input[name=value]")
    field.evaluate("el => el.removeAttribute('max')")
    field.fill("40")
    anna.challenge().get_by_test_id("overbid").click()
    toast = anna.page.get_by_test_id("notice-reject")
    anna.expect(toast).to_be_visible()
    anna.shot("phone-refusal-360x740")
    accept = anna.challenge().get_by_test_id("accept").bounding_box()
    box = toast.bounding_box()
    assert box["y"] + box["height"] <= accept["y"] or box["y"] >= accept["y"] + accept["height"]
    anna.page.get_by_test_id("notice-dismiss").click()
    anna.expect(toast).to_have_count(0)
    # MET-12: one retest; round 2 shows round 1 as history
    anna.challenge().locator("form.retest select").select_option("melee")
    anna.challenge().get_by_test_id("retest").click()
    anna.expect(anna.challenge().locator(".meta")).to_contain_text("Round 2")
    revealed = anna.challenge().get_by_test_id("revealed")
    anna.expect(revealed).to_have_attribute("data-history", "1")
    anna.expect(revealed).to_contain_text("Round 1:")
    anna.expect(anna.challenge().get_by_test_id("stage")).to_have_text("Your throw")
    _throw(anna, "rock")
    _throw(bruno, "paper")
    anna.expect(anna.challenge()).to_have_attribute("data-status", "window")
    anna.expect(anna.challenge().get_by_test_id("accept")).to_be_visible()
    assert anna.challenge().get_by_test_id("retest").count() == 0  # used up
    anna.shot("phone-retest-used-360x740")
    for d in (st, anna, bruno):
        d.close()


def test_item_10_the_opponents_bid_is_said_in_words_not_a_question_mark(browser, server, setup):
    anna = Device(browser, server.url, setup.players["anna"])
    bruno = Device(browser, server.url, setup.players["bruno"])
    start_challenge(anna)
    _throw(anna, "rock")
    _throw(bruno, "rock")
    anna.challenge().get_by_test_id("bid-input").fill("6")
    anna.challenge().get_by_test_id("bid-send").click()
    bruno.challenge().get_by_test_id("bid-input").fill("7")
    bruno.challenge().get_by_test_id("bid-send").click()
    anna.expect(anna.challenge()).to_have_attribute("data-status", "window")
    said = anna.challenge().get_by_test_id("revealed")
    anna.expect(said).to_contain_text("Bruno (told to the storyteller)")  # MET-3: sealed
    assert "?" not in said.inner_text()
    anna.close()
    bruno.close()


def test_item_8_a_second_sessions_link_keeps_the_first_tab_on_reload(browser, server, setup):
    context = browser.new_context(viewport=PHONE)
    first = context.new_page()
    first.goto(f"{server.url}/#join={setup.players['anna']}")
    Device.expect(first.locator("h1")).to_have_text("Anna", timeout=15_000)
    second = context.new_page()
    second.goto(f"{server.url}/#join={setup.dice['clara'][1]}")
    Device.expect(second.locator("h1")).to_have_text("Clara", timeout=15_000)
    first.reload()
    Device.expect(first.locator("#conn.online")).to_be_visible(timeout=15_000)
    Device.expect(first.locator("h1")).to_have_text("Anna")
    assert first.evaluate("Object.keys(window.conteur.vm.characters).sort()") == ["anna", "bruno"]
    second.reload()
    Device.expect(second.locator("h1")).to_have_text("Clara", timeout=15_000)
    Device.expect(second.get_by_test_id("session-name")).to_have_text("nuit")
    context.close()
    # the tablet names its session
    st = Device(browser, server.url, setup.storyteller, viewport=TABLET)
    st.expect(st.page.get_by_test_id("session-name")).to_have_text("Demo")
    st.close()


def test_item_9_the_phone_asks_for_the_tap_that_lets_it_vibrate(browser, server, setup):
    anna = Device(browser, server.url, setup.players["anna"])
    ask = anna.page.get_by_test_id("enable-alerts")
    anna.expect(ask).to_be_visible()
    anna.page.evaluate("window.__buzz = []; navigator.vibrate = (p) => { window.__buzz.push(p); return true; }; 0")
    ask.click()
    anna.expect(ask).to_have_count(0)
    assert anna.page.evaluate("window.__buzz.length") == 1  # the tap itself buzzes: it works
    anna.page.reload()  # asked again on every page load, until a tap
    anna.expect(anna.page.locator("#conn.online")).to_be_visible()
    anna.expect(anna.page.get_by_test_id("enable-alerts")).to_be_visible()
    anna.page.locator("h1").click()  # a tap anywhere answers it
    anna.expect(anna.page.get_by_test_id("enable-alerts")).to_have_count(0)
    anna.close()


def test_item_11_action_dice_in_words(browser, server, setup):
    session, token = setup.dice["jake"]
    jake = Device(browser, server.url, token)
    page = jake.page
    page.locator("#act-characteristic").select_option("science")
    page.locator("#actdiff").fill("2")
    page.locator("#actbonus").fill("2")
    for n in range(1, 5):
        page.get_by_test_id("roll").click()
        jake.expect(page.get_by_test_id("roll-result")).to_have_count(n)
    card = page.get_by_test_id("roll-result").first
    jake.expect(card.locator(".label")).to_have_text("Jake science against difficulty 2")
    jake.expect(card.get_by_test_id("dpm-help")).to_contain_text("each + adds one success point")
    # a "−" on a bonus roll counts for nothing: shown dimmed, said so
    for i in range(4):
        one = page.get_by_test_id("roll-result").nth(i)
        assert one.locator(".die.dpm.minus:not(.void)").count() == 0
    points = page.evaluate("window.conteur.vm.rolls.map(r => r.points)")
    words = page.get_by_test_id("roll-result").locator(".words").all_inner_texts()
    for p, w in zip(reversed(points), words):
        assert w.endswith(f"{p} success point{'' if p == 1 else 's'} / Difficulty 2"), (p, w)
    jake.close()


def test_item_12_the_language_switch_is_remembered_by_this_device_only(browser, server, setup):
    anna = Device(browser, server.url, setup.players["anna"])  # an English phone
    anna.expect(anna.page.locator("#h-ch")).to_have_text("Challenges")
    anna.page.get_by_test_id("lang-switch").click()
    anna.expect(anna.page.locator("html")).to_have_attribute("lang", "fr")
    anna.expect(anna.page.locator("#h-ch")).to_have_text("Défis")
    anna.page.reload()
    anna.expect(anna.page.locator("#h-ch")).to_have_text("Défis")
    bruno = Device(browser, server.url, setup.players["bruno"])  # another phone: its own
    bruno.expect(bruno.page.locator("#h-ch")).to_have_text("Challenges")
    st = Device(browser, server.url, setup.storyteller, viewport=TABLET, locale="fr-FR")
    st.page.get_by_test_id("lang-switch").click()
    st.expect(st.page.locator("#h-stch")).to_have_text("Challenges")
    for d in (anna, bruno, st):
        d.close()


@pytest.fixture
def venue_tz(monkeypatch):
    """A venue whose clock is 5 h 30 ahead of UTC: nothing else gives these times."""
    monkeypatch.setenv("CONTEUR_TZ", "Asia/Kolkata")


def test_item_12_the_french_review_and_exports_in_the_venues_time(browser, tmp_path, venue_tz):
    night = evening(tmp_path / "chronicle.db")
    with SQLiteStore(night.db) as store:
        first = store.read_after(night.session)[0]
    utc = datetime.fromisoformat(first.at.replace("Z", "+00:00"))
    local = (utc + timedelta(hours=5, minutes=30)).strftime("%H:%M")
    with served(night.db) as server:
        context = browser.new_context(viewport=TABLET, locale="fr-FR")
        page = context.new_page()
        errors: list[str] = []
        page.on("pageerror", lambda e: errors.append(str(e)))
        page.goto(f"{server.url}/review.html#join={night.storyteller}&session={night.session}")
        Device.expect(page.get_by_test_id("verify")).to_have_attribute("data-ok", "true", timeout=15_000)
        Device.expect(page.locator("label.lang span")).to_have_text("Langue")
        Device.expect(page.get_by_test_id("zone")).to_contain_text("UTC+05:30")
        title = page.locator("#title").inner_text()
        assert not title.endswith("open") and not title.endswith("closed"), title
        times = page.get_by_test_id("timeline").locator(".time").all_inner_texts()
        assert times[0].startswith(local), (times[0], first.at)
        timeline = page.get_by_test_id("timeline").inner_text()
        assert "overbid_failed" not in timeline and "surenchère manquée" in timeline  # the reasons too
        statuses = " ".join(page.locator("#challenges .pill").all_inner_texts())
        assert "resolved" not in statuses and "réglé" in statuses
        # the fairness chart names every face whole
        faces = [f.text_content() for f in page.get_by_test_id("fairness-chart").first.locator("text.face").all()]
        assert "ciseaux" in faces or "scissors" in faces, faces
        page.goto(f"{server.url}/review.html#session={night.session}&challenge=c1")
        Device.expect(page.get_by_test_id("challenge-status")).to_contain_text("réglé")
        assert "resolved" not in page.get_by_test_id("challenge-status").inner_text()
        seen = " ".join(page.get_by_test_id("challenge-steps").locator("td.seen").all_inner_texts())
        assert "conteurs" in seen and "storytellers" not in seen and "observers" not in seen
        assert errors == []
        context.close()
        auth = {"Authorization": f"Bearer {night.storyteller}"}
        md = httpx.get(f"{server.url}/sessions/{night.session}/export?format=md&lang=fr", headers=auth).text
        assert "heure locale, UTC+05:30" in md and f"- {local} · " in md
        rows = list(csv.reader(io.StringIO(
            httpx.get(f"{server.url}/sessions/{night.session}/export?format=csv", headers=auth).text)))
        assert rows[1][1] == first.at  # UTC kept
        assert rows[1][-1].startswith((utc + timedelta(hours=5, minutes=30)).strftime("%Y-%m-%dT%H:%M"))
        assert rows[1][-1].endswith("+05:30")
        jsonl = httpx.get(f"{server.url}/sessions/{night.session}/export?format=jsonl", headers=auth).text
        assert first.at in jsonl  # the verified log: UTC as stored


def test_item_13_the_wall_the_card_and_the_tablet(browser, server, setup):
    st = Device(browser, server.url, setup.storyteller, viewport=TABLET)
    wall = Device(browser, server.url, setup.observer, viewport=TABLET)
    st.page.locator('[data-scene="hall"] button[data-act=freeze]').click()
    banner = wall.page.get_by_test_id("wall-freeze")
    wall.expect(banner).to_be_visible()
    wall.expect(banner).to_contain_text("TIME OUT")
    wall.expect(banner).to_contain_text("Great hall")
    assert banner.bounding_box()["height"] >= 100  # read across the room
    wall.shot("wall-scene-time-out-1280x800")
    st.page.locator('[data-scene="hall"] button[data-act=resume]').click()
    wall.expect(banner).to_have_count(0)
    st.close()
    wall.close()
    # the storyteller's Rouse check: in the dice card, once
    tablet = Device(browser, server.url, f"{setup.chronicle_storyteller}&session=nuit", viewport=TABLET)
    tablet.page.get_by_test_id("st-rouse").click()
    roll = tablet.page.evaluate("() => new Promise((ok) => { const f = () => window.conteur.vm.rolls.length ? ok(window.conteur.vm.rolls[0].id) : setTimeout(f, 50); f(); })")
    tablet.expect(tablet.page.get_by_test_id("st-dice").get_by_test_id("roll-result")).to_have_count(1)
    assert tablet.page.get_by_test_id("roll-result").count() == 1, roll
    tablet.close()


def test_item_13_a_power_named_as_a_retest_source_is_on_the_card(browser, tmp_path):
    from conteur.server.cli.demo import create_demo

    db = str(tmp_path / "demo.db")
    with SQLiteStore(db) as store:
        _, imported = create_demo(store)
    mara = next(f"{p.token}&session={i.session}" for i in imported for p in i.players if p.character == "mara")
    with served(db) as server:
        phone = Device(browser, server.url, mara)
        phone.expect(phone.page.locator(".character").get_by_test_id("power")).to_have_text("Fortitude")
        phone.close()
