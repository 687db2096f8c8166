"""Announcements and countdowns from the tablet (events/desk.py), on the phones and the wall
of the demo's sessions in Chromium; a countdown on the server's clock, and a scene's with
its scene, across a restart."""

from __future__ import annotations

import asyncio
import re
import time

import pytest

from conteur.server.testing import Device as Socket, Venue
from tests.support.browser_support import CHROMIUM, NO_CHROMIUM
from tests.support.doc_shots import doc_shot
from tests.support.web_support import TABLET, Device



def test_a_countdown_ends_on_the_servers_clock_whatever_the_device_sends_and_across_a_restart(tmp_path):
    async def start(venue: Venue, token: str) -> dict:
        async with Socket(venue.ws_url, token, "s1") as st:
            assert (await st.command({"type": "open_session", "name": "Night"}))["type"] == "ack"
            before = time.time()
            # a device's own "now" (a clock an hour behind) is replaced by the server's
            sent = await st.command({"type": "start_countdown", "clock": "prince", "minutes": 10,
                                     "now": before - 3600})
            assert sent["type"] == "ack", sent
            event = await st.wait_event("desk.countdown_started")
            assert before + 600 - 1 <= event["ends_at"] <= time.time() + 600 + 1
            # one for a scene keeps its scene (a phone shows it only in that scene)
            assert (await st.command({"type": "open_scene", "scene": "cellar", "name": "Cellar"}))["type"] == "ack"
            assert (await st.command({"type": "start_countdown", "clock": "rats", "turns": 5, "scope": "scene",
                                      "scene": "cellar"}))["type"] == "ack"
            assert (await st.wait_event("desk.countdown_started", clock="rats"))["scene"] == "cellar"
            return event

    async def after_restart(venue: Venue, token: str, started: dict) -> None:
        async with Socket(venue.ws_url, token, "s1") as st:  # a reconnect: resync from 0
            assert any(e["type"] == "desk.countdown_started" and e["ends_at"] == started["ends_at"]
                       for _, e in st.events)
            assert (await st.command({"type": "pause_countdown", "clock": "prince"}))["type"] == "ack"
            paused = await st.wait_event("desk.countdown_paused")
            assert 0 < paused["remaining"] <= started["ends_at"] - time.time() + 1

    with Venue(tmp_path / "c.db") as venue:
        token = venue.token("storyteller")
        started = asyncio.run(start(venue, token))
        venue.restart()
        asyncio.run(after_restart(venue, token, started))
        state = venue.runtime.chronicle.state("s1").desk.countdowns["prince"]
        assert state.paused and state.remaining > 590
        rats = venue.runtime.chronicle.state("s1").desk.countdowns["rats"]
        assert (rats.scope, rats.scene, rats.ends_turn) == ("scene", "cellar", 5)


@pytest.mark.browser
@pytest.mark.skipif(CHROMIUM is None, reason=NO_CHROMIUM)
def test_announcements_and_countdowns_reach_the_phones_and_the_wall(browser, demo):
    server, _db, storyteller, links = demo
    wall_token = server.runtime.tokens.issue("observer", session="met-demo", name="Wall")
    st = Device(browser, server.url, f"{storyteller}&session=met-demo", viewport=TABLET)
    wall = Device(browser, server.url, f"{wall_token}&session=met-demo", viewport=TABLET)
    lucien = Device(browser, server.url, links["lucien"])
    nova = Device(browser, server.url, links["nova"], locale="fr-FR")
    page = st.page

    def announce(text: str, to: str) -> None:
        page.get_by_test_id("announce-text").fill(text)
        page.get_by_test_id("announce-scope").select_option(to)
        page.get_by_test_id("announce-send").click()

    announce("The Prince arrives in ten minutes", "session")
    for device, testid in ((lucien, "phone-announcements"), (wall, "wall-announcements")):
        device.expect(device.page.get_by_test_id(testid)).to_contain_text("The Prince arrives in ten minutes")
    announce("Scene 2 starts in the cellar", "scene:elysium")
    lucien.expect(lucien.page.get_by_test_id("phone-announcements")).to_contain_text("Scene 2 starts in the cellar")
    announce("Fire drill at ten: leave by the garden door", "venue")
    lucien.expect(lucien.page.get_by_test_id("announcement").first).to_contain_text("Fire drill")
    # the other session's phone hears the venue's announcement, not this session's
    nova.expect(nova.page.get_by_test_id("phone-announcements")).to_contain_text("Fire drill")
    nova.expect(nova.page.get_by_test_id("phone-announcements")).to_contain_text("tout le lieu")
    assert "The Prince" not in nova.page.get_by_test_id("phone-announcements").inner_text()
    st.expect(page.get_by_test_id("log")).to_contain_text("Announcement to Elysium: Scene 2 starts in the cellar")

    page.get_by_test_id("countdown-name").fill("Prince")
    page.get_by_test_id("countdown-length").fill("10")
    page.get_by_test_id("countdown-start").click()
    clock = lucien.page.locator('[data-testid=countdown][data-clock="Prince"]')
    lucien.expect(clock).to_have_attribute("data-state", "running")
    lucien.expect(clock.locator(".countdown-left")).to_have_text(re.compile(r"^(10:00|9:[0-5]\d)$"))
    wall.expect(wall.page.locator('[data-testid=countdown][data-clock="Prince"]')).to_have_attribute("data-state", "running")
    page.get_by_test_id("countdown-name").fill("Fire")
    page.get_by_test_id("countdown-length").fill("3")
    page.get_by_test_id("countdown-unit").select_option("turns")
    page.get_by_test_id("countdown-start").click()
    lucien.expect(lucien.page.locator('[data-testid=countdown][data-clock="Fire"] .countdown-left')).to_have_text("3 turns left")
    doc_shot(lucien.page.get_by_test_id("phone-desk"), "announcements-countdowns")

    page.locator('[data-testid=countdown][data-clock="Prince"]').get_by_test_id("countdown-pause").click()
    lucien.expect(clock).to_have_attribute("data-state", "paused")
    # a reload (a reconnect from the phone's own events) shows it as it stands
    lucien.page.reload()
    lucien.expect(lucien.page.locator("#conn.online")).to_be_visible()
    lucien.expect(clock).to_have_attribute("data-state", "paused")
    page.locator('[data-testid=countdown][data-clock="Prince"]').get_by_test_id("countdown-resume").click()
    lucien.expect(clock).to_have_attribute("data-state", "running")
    page.locator("[data-act=next_turn]").click()
    lucien.expect(lucien.page.locator('[data-testid=countdown][data-clock="Fire"] .countdown-left')).to_have_text("2 turns left")
    page.locator('[data-testid=countdown][data-clock="Prince"]').get_by_test_id("countdown-cancel").click()
    lucien.expect(clock).to_have_count(0)
    wall.expect(wall.page.locator('[data-testid=countdown][data-clock="Prince"]')).to_have_count(0)
    for device in (st, wall, lucien, nova):
        device.close()


@pytest.mark.browser
@pytest.mark.skipif(CHROMIUM is None, reason=NO_CHROMIUM)
def test_a_window_that_closes_by_itself_counts_down_on_both_phones(browser, tmp_path):
    from tests.support.client_support import make_chronicle, served
    from tests.support.web_support import start_challenge

    setup = make_chronicle(tmp_path / "chronicle.db")
    with served(setup.db) as server:
        anna = Device(browser, server.url, setup.players["anna"])
        bruno = Device(browser, server.url, setup.players["bruno"], locale="fr-FR")
        start_challenge(anna)
        anna.challenge().get_by_test_id("throw-rock").click()
        bruno.challenge().get_by_test_id("throw-scissors").click()
        bruno.expect(bruno.challenge()).to_have_attribute("data-status", "window")
        # MET-16: accept_timeout (60 s) from the server's timer, counted down on each phone
        anna.expect(anna.challenge().get_by_test_id("window-clock")).to_have_text(
            re.compile(r"^closes by itself in (1:00|0:[0-5]\d)$"))
        bruno.expect(bruno.challenge().get_by_test_id("window-clock")).to_have_text(
            re.compile(r"^se ferme d'elle-même dans (1:00|0:[0-5]\d)$"))
        # a reload asks the server again: the same deadline, not a new minute
        closes = server.runtime.timers.closing(setup.session)["c1"][2]
        bruno.page.reload()
        bruno.expect(bruno.challenge().get_by_test_id("window-clock")).to_have_text(re.compile(r"dans (1:00|0:[0-5]\d)$"))
        assert server.runtime.timers.closing(setup.session)["c1"][2] == closes
        bruno.challenge().get_by_test_id("accept").click()
        anna.expect(anna.challenge()).to_have_count(0)
        assert "c1" not in server.runtime.timers.closing(setup.session)
        for device in (anna, bruno):
            device.close()
