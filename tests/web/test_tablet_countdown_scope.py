"""Countdowns for a scene or the whole venue (events/desk.py, desk.js), as announcements
are: started from the tablet, a scene's on the phones of the characters in that scene
and on the wall only, the venue's on the phones of every session and changed for all at
once; through a reload in Chromium (the restart: tests/web/test_tablet_desk.py)."""

from __future__ import annotations

import asyncio

import pytest

from conteur.events.model import STORYTELLER
from conteur.server.testing import Device as Socket, Venue
from tests.support.browser_support import CHROMIUM, NO_CHROMIUM
from tests.support.client_support import command
from tests.support.doc_shots import doc_shot
from tests.support.web_support import TABLET, Device



def test_the_venues_countdown_is_started_paused_and_cancelled_in_every_open_session(tmp_path):
    async def play(venue: Venue) -> None:
        st = Socket(venue.ws_url, venue.token("storyteller"), "cellar")
        other = Socket(venue.ws_url, venue.token("storyteller"), "garden")
        for device, name in ((st, "Cellar"), (other, "Garden")):
            await device.connect()
            assert (await device.command({"type": "open_session", "name": name}))["type"] == "ack"
        ack = await st.command({"type": "start_countdown", "clock": "midnight", "minutes": 30, "scope": "venue"})
        assert ack["type"] == "ack" and len(ack["seqs"]) == 2, ack
        await other.wait_event("desk.countdown_started", scope="venue")
        # from the other session's tablet, for the venue: both copies pause
        assert (await other.command({"type": "pause_countdown", "clock": "midnight", "scope": "venue"}))["type"] == "ack"
        await st.wait_event("desk.countdown_paused")
        refused = await st.command({"type": "start_countdown", "clock": "midnight"})
        assert refused["type"] == "reject" and "whole venue" in refused["message"], refused
        assert (await st.command({"type": "cancel_countdown", "clock": "midnight", "scope": "venue"}))["type"] == "ack"
        await other.wait_event("desk.countdown_cancelled")
        for device in (st, other):
            await device.close()

    with Venue(tmp_path / "c.db") as venue:
        asyncio.run(play(venue))
        for session in ("cellar", "garden"):
            assert venue.runtime.chronicle.state(session).desk.countdowns == {}


@pytest.mark.browser
@pytest.mark.skipif(CHROMIUM is None, reason=NO_CHROMIUM)
def test_a_countdown_for_the_cellar_shows_on_the_cellars_phones_and_the_wall_not_elsewhere(browser, demo):
    server, _db, storyteller, links = demo

    # a second scene of the MET demo, Mara in it
    for made in (command("open_scene", scene="cellar", name="Cellar"),
                 command("join_scene", character="mara", scene="cellar")):
        assert not server.runtime.chronicle.execute_sync("met-demo", made, STORYTELLER).outcome.rejected, made
    wall_token = server.runtime.tokens.issue("observer", session="met-demo", name="Wall")
    st = Device(browser, server.url, f"{storyteller}&session=met-demo", viewport=TABLET)
    wall = Device(browser, server.url, f"{wall_token}&session=met-demo", viewport=TABLET)
    mara = Device(browser, server.url, links["mara"], locale="fr-FR")
    lucien = Device(browser, server.url, links["lucien"])
    nova = Device(browser, server.url, links["nova"])
    page = st.page

    def start(name: str, length: str, unit: str, to: str) -> None:
        page.get_by_test_id("countdown-name").fill(name)
        page.get_by_test_id("countdown-length").fill(length)
        page.get_by_test_id("countdown-unit").select_option(unit)
        page.get_by_test_id("countdown-scope").select_option(to)
        page.get_by_test_id("countdown-start").click()

    def clock(device: Device, name: str):
        return device.page.locator(f'[data-testid=countdown][data-clock="{name}"]')

    start("Rats", "5", "turns", "scene:cellar")
    mara.expect(clock(mara, "Rats")).to_have_attribute("data-state", "running")
    mara.expect(clock(mara, "Rats")).to_contain_text("Cellar")
    wall.expect(clock(wall, "Rats")).to_have_attribute("data-scope", "scene")
    st.expect(clock(st, "Rats")).to_contain_text("Cellar")
    start("Midnight", "30", "minutes", "venue")
    for device in (mara, lucien, nova, wall):
        device.expect(clock(device, "Midnight")).to_have_attribute("data-state", "running")
    nova.expect(clock(nova, "Midnight")).to_contain_text("whole venue")
    doc_shot(mara.page.get_by_test_id("phone-desk"), "countdown-scene")
    # the elysium's phone and the other session's show no cellar countdown
    for device in (lucien, nova):
        device.expect(clock(device, "Rats")).to_have_count(0)
    # the venue's, paused from this tablet: paused on the other session's phone too
    clock(st, "Midnight").get_by_test_id("countdown-pause").click()
    nova.expect(clock(nova, "Midnight")).to_have_attribute("data-state", "paused")
    mara.page.reload()  # a reconnect from the phone's own events
    mara.expect(mara.page.locator("#conn.online")).to_be_visible()
    mara.expect(clock(mara, "Rats")).to_have_attribute("data-state", "running")
    mara.expect(clock(mara, "Midnight")).to_have_attribute("data-state", "paused")
    lucien.expect(clock(lucien, "Rats")).to_have_count(0)
    clock(st, "Midnight").get_by_test_id("countdown-resume").click()
    nova.expect(clock(nova, "Midnight")).to_have_attribute("data-state", "running")
    clock(st, "Rats").get_by_test_id("countdown-cancel").click()
    mara.expect(clock(mara, "Rats")).to_have_count(0)
    wall.expect(clock(wall, "Rats")).to_have_count(0)
    clock(st, "Midnight").get_by_test_id("countdown-cancel").click()
    nova.expect(clock(nova, "Midnight")).to_have_count(0)
    for device in (st, wall, mara, lucien, nova):
        assert not device.errors, device.errors
        device.close()
