"""A Time Out for the whole venue (TIME-5, scope ``venue``): one command freezes every
open session the server serves, one resumes them all, without ending a session's own Time
Out. The rules through ``decide``; the fan-out over a real server with two sessions; the
tablet's control and every phone's overlay in Chromium."""

from __future__ import annotations

import asyncio

import pytest

from conteur.events import met
from conteur.events.session import Freeze, Resume, TimeOutCalled, TimeOutEnded
from conteur.events.testing import assert_decides, assert_refuses, decide_after
from conteur.server.testing import Device as Socket
from tests.support.browser_support import CHROMIUM, NO_CHROMIUM
from tests.support.doc_shots import doc_shot
from tests.support.met_support import A6, B7, player, roster
from tests.support.web_support import TABLET, Device

A = player("a")
CHALLENGE = met.IssueChallenge(character="a", defender="b", attribute="physical")


# ---------------------------------------------------------------- TIME-5, scope venue


def test_time_5_a_venue_time_out_is_the_storytellers():
    assert_refuses(given=roster(a=A6), when=Freeze(scope="venue"), actor=A, code="forbidden")


def test_time_5_a_venue_time_out_stops_every_player_until_its_resume():
    given = roster(a=A6, b=B7) + [TimeOutCalled(scope="venue")]
    assert_refuses(given=given, when=CHALLENGE, actor=A, code="frozen", match="whole venue")
    assert_decides(given=given, when=Resume(scope="venue"), then=[TimeOutEnded(scope="venue")])
    assert len(decide_after(given + [TimeOutEnded(scope="venue")], CHALLENGE, actor=A)) == 1


def test_time_5_the_venue_resume_leaves_the_sessions_own_time_out_on():
    given = roster(a=A6, b=B7) + [TimeOutCalled(scope="session"), TimeOutCalled(scope="venue"),
                                  TimeOutEnded(scope="venue")]
    assert_refuses(given=given, when=CHALLENGE, actor=A, code="frozen", match="the session is frozen")


def test_time_5_a_session_resume_leaves_the_venues_time_out_on():
    given = roster(a=A6, b=B7) + [TimeOutCalled(scope="session"), TimeOutCalled(scope="venue"),
                                  TimeOutEnded(scope="session")]
    assert_refuses(given=given, when=CHALLENGE, actor=A, code="frozen", match="whole venue")


def test_time_5_a_venue_time_out_is_called_once_and_ended_once():
    assert_decides(given=roster(), when=Freeze(scope="venue"), then=[TimeOutCalled(scope="venue")])
    assert_refuses(given=roster() + [TimeOutCalled(scope="venue")], when=Freeze(scope="venue"), match="already")
    assert_refuses(given=roster(), when=Resume(scope="venue"), match="no Time Out")
    # a session's own Time Out is not the venue's: the venue's can still be called over it
    assert_decides(given=roster() + [TimeOutCalled(scope="session")], when=Freeze(scope="venue"),
                   then=[TimeOutCalled(scope="venue")])


# ---------------------------------------------------------------- the server: every session at once


def test_one_command_freezes_every_open_session_and_one_resumes_them(demo):
    server, _db, storyteller, links = demo
    lucien, nova = links["lucien"].split("&")[0], links["nova"].split("&")[0]

    async def play() -> None:
        st = Socket(server.ws_url, storyteller, "met-demo")
        met_phone = Socket(server.ws_url, lucien, "met-demo", create=False)
        action_phone = Socket(server.ws_url, nova, "action-demo", create=False)
        for device in (st, met_phone, action_phone):
            await device.connect()
        try:
            ack = await st.command({"type": "freeze", "scope": "venue"}, id="venue-1")
            assert ack["type"] == "ack" and len(ack["seqs"]) == 3, ack  # met, v5 and action demos
            for phone in (met_phone, action_phone):
                await phone.wait_event("session.time_out_called", scope="venue")
            refused = await action_phone.command({"type": "roll_action", "character": "nova",
                                                  "characteristic": "combat", "difficulty": 2})
            assert refused["type"] == "reject" and refused["code"] == "frozen", refused
            # the same command again (a retry after a dropout): nothing decided twice anywhere
            again = await st.command({"type": "freeze", "scope": "venue"}, id="venue-1")
            assert again == ack
            ended = await st.command({"type": "resume", "scope": "venue"})
            assert ended["type"] == "ack" and len(ended["seqs"]) == 3, ended
            for phone in (met_phone, action_phone):
                await phone.wait_event("session.time_out_ended", scope="venue")
            rolled = await action_phone.command({"type": "roll_action", "character": "nova",
                                                 "characteristic": "combat", "difficulty": 2})
            assert rolled["type"] == "ack", rolled
            # a player may not call it, in its session or any other
            player = await met_phone.command({"type": "freeze", "scope": "venue"})
            assert player["type"] == "reject" and player["code"] == "forbidden", player
        finally:
            for device in (st, met_phone, action_phone):
                await device.close()

    asyncio.run(play())
    for session in ("met-demo", "v5-demo", "action-demo"):
        state = server.runtime.chronicle.state(session).session
        assert not state.venue_frozen and not state.frozen, session


# ---------------------------------------------------------------- the tablet and the phones


@pytest.mark.browser
@pytest.mark.skipif(CHROMIUM is None, reason=NO_CHROMIUM)
def test_the_tablets_venue_time_out_covers_the_phones_of_two_sessions(browser, demo):
    server, _db, storyteller, links = demo
    st = Device(browser, server.url, f"{storyteller}&session=met-demo", viewport=TABLET)
    other = Device(browser, server.url, f"{storyteller}&session=action-demo", viewport=TABLET)
    lucien = Device(browser, server.url, links["lucien"])
    nova = Device(browser, server.url, links["nova"], locale="fr-FR")
    wall_token = server.runtime.tokens.issue("observer", session="action-demo", name="Wall")
    wall = Device(browser, server.url, f"{wall_token}&session=action-demo", viewport=TABLET)
    st.page.get_by_test_id("freeze-venue").click()
    dialog = st.page.get_by_test_id("confirm")
    st.expect(dialog).to_contain_text("every session")
    dialog.get_by_test_id("confirm-yes").click()
    for phone in (lucien, nova):
        overlay = phone.page.get_by_test_id("freeze")
        phone.expect(overlay).to_be_visible()
        phone.expect(overlay).to_have_attribute("data-scope", "venue")
    lucien.expect(lucien.page.locator("#freeze-help")).to_contain_text("Every session")
    nova.expect(nova.page.locator("#freeze-help")).to_contain_text("Toutes les sessions")
    wall.expect(wall.page.get_by_test_id("freeze")).to_be_visible()
    # the other session's tablet says so, and can end it from there
    other.expect(other.page.get_by_test_id("venue-frozen")).to_be_visible()
    doc_shot(lucien.page, "venue-time-out")
    # a safety call is made from the TIME OUT screen itself, and reaches the tablet at once
    lucien.page.get_by_test_id("freeze-call").click()
    lucien.expect(lucien.page.get_by_test_id("freeze-call-sent")).to_be_visible()
    st.expect(st.page.get_by_test_id("safety-alert")).to_contain_text("Lucien")
    other.page.get_by_test_id("resume-venue").click()
    for phone in (lucien, nova, wall):
        phone.expect(phone.page.get_by_test_id("freeze")).to_be_hidden()
    st.expect(st.page.get_by_test_id("freeze-venue")).to_be_visible()
    lucien.expect(lucien.page.get_by_test_id("freeze-call")).to_have_count(0)
    for device in (st, other, lucien, nova, wall):
        device.close()
