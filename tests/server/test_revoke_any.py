"""Any token can be revoked: a storyteller's (a lost tablet), an observer's (a wall), a
player's (one phone of a character that has several), from another storyteller's
tablet (``/sessions/{s}/devices``) or from ``conteur revoke``; the socket it holds closes
at once with 4401 "token revoked", and its next request gets 401.

Before: the stores' revocation touched player tokens only, and no command did more, so a
lost tablet kept control of the chronicle for good.
"""

from __future__ import annotations

import asyncio

import httpx
import pytest

from conteur.server.cli.main import main
from conteur.server.core.auth import digest, grant_id
from conteur.server.testing import Device, Venue
from conteur.server.web.ws import CLOSE_UNAUTHORIZED, REASON_REVOKED
from tests.support.revoke_support import characters, closed_with


@pytest.fixture
def venue(tmp_path):
    with Venue(tmp_path / "chronicle.db") as v:
        v.runtime.hub.close()  # no re-reading of the tokens table: the revocation itself acts
        yield v


def http(venue: Venue, token: str) -> httpx.Client:
    return httpx.Client(base_url=venue.url, headers={"Authorization": f"Bearer {token}"})


async def test_the_storyteller_sees_every_device_of_each_character_and_the_others(venue):
    storyteller = await characters(venue)
    phones = [venue.token("player", "anna", "s1"), venue.token("player", "anna", "s1"),
              venue.token("player", "bruno", "s1")]
    wall = venue.token("observer", session="s1")
    venue.token("player", "anna", "other")  # another session's: not listed
    async with Device(venue.ws_url, phones[0], "s1"), Device(venue.ws_url, phones[0], "s1"):
        listed = await asyncio.to_thread(lambda: http(venue, storyteller).get("/sessions/s1/devices").json())
    by_grant = {d["grant"]: d for d in listed}
    assert set(by_grant) == {grant_id(digest(t)) for t in [storyteller, *phones, wall]}
    anna = [d for d in listed if d["character"] == "anna"]
    assert len(anna) == 2 and sorted(d["sockets"] for d in anna) == [0, 2]
    assert by_grant[grant_id(digest(wall))]["role"] == "observer"
    assert by_grant[grant_id(digest(storyteller))]["you"] is True
    assert not any(t in str(listed) for t in [storyteller, *phones, wall])  # ids, never tokens


def test_only_a_storyteller_lists_or_revokes_devices_and_the_refusal_says_nothing_more(venue):
    asyncio.run(characters(venue))
    anna = venue.token("player", "anna", "s1")
    target = grant_id(digest(venue.token("player", "bruno", "s1")))
    answers = {(r.status_code, r.content) for r in (
        http(venue, anna).get("/sessions/s1/devices"), http(venue, anna).get("/sessions/s2/devices"),
    )}
    assert answers == {(403, http(venue, anna).get("/sessions/s1/devices").content)}
    revoke = http(venue, anna).post(f"/sessions/s1/devices/{target}/revoke")
    assert revoke.status_code == 403
    assert venue.runtime.tokens.revoke_grants([]) == 0
    assert len([d for d in venue.runtime.tokens.devices("s1") if d.id == target]) == 1


async def test_a_lost_tablet_is_revoked_from_another_and_its_socket_closes_at_once(venue):
    await characters(venue)
    lost, kept = venue.token(), venue.token()
    tablet = Device(venue.ws_url, lost, "s1")
    await tablet.connect()
    gid = grant_id(digest(lost))
    reply = await asyncio.to_thread(lambda: http(venue, kept).post(f"/sessions/s1/devices/{gid}/revoke"))
    assert reply.status_code == 200 and reply.json() == {"grant": gid, "revoked": 1}, reply.text
    assert await closed_with(tablet) == (CLOSE_UNAUTHORIZED, REASON_REVOKED)
    assert (await asyncio.to_thread(lambda: http(venue, lost).get("/me"))).status_code == 401
    again = await asyncio.to_thread(lambda: http(venue, kept).post(f"/sessions/s1/devices/{gid}/revoke"))
    assert again.status_code == 404  # revoked once
    assert (await asyncio.to_thread(lambda: http(venue, kept).get("/me"))).status_code == 200


async def test_an_observer_and_one_phone_of_a_character_are_revoked_alone(venue):
    storyteller = await characters(venue)
    wall, first, second = (venue.token("observer", session="s1"), venue.token("player", "anna", "s1"),
                           venue.token("player", "anna", "s1"))
    async with Device(venue.ws_url, wall, "s1") as screen, Device(venue.ws_url, first, "s1") as phone, \
            Device(venue.ws_url, second, "s1") as other:
        for token, device in ((wall, screen), (first, phone)):
            gid = grant_id(digest(token))
            reply = await asyncio.to_thread(
                lambda: http(venue, storyteller).post(f"/sessions/s1/devices/{gid}/revoke"))
            assert reply.status_code == 200, reply.text
            assert await closed_with(device) == (CLOSE_UNAUTHORIZED, REASON_REVOKED)
        assert (await other.command({"type": "take_action", "character": "anna"}))["type"] == "ack"


def test_conteur_revoke_lists_and_revokes_a_storyteller_an_observer_and_a_character(venue, capsys):
    asyncio.run(characters(venue))
    storyteller = venue.token()
    venue.token("observer", session="s1")
    venue.token("player", "bruno", "s1")
    db = str(venue.path)
    assert main(["revoke", "--db", db, "--session", "s1", "--list"]) == 0
    listing = capsys.readouterr().out
    assert grant_id(digest(storyteller)) in listing and storyteller not in listing
    assert main(["revoke", "--db", db, "--grant", grant_id(digest(storyteller))]) == 0
    assert "1 token revoked" in capsys.readouterr().out
    assert venue.runtime.tokens.check(storyteller) is None
    assert main(["revoke", "--db", db, "--role", "observer", "--session", "s1"]) == 0
    assert main(["revoke", "--db", db, "--session", "s1", "--character", "bruno"]) == 0
    roles = {(d.role, d.character) for d in venue.runtime.tokens.devices("s1")}
    assert ("observer", None) not in roles and ("player", "bruno") not in roles
    assert main(["revoke", "--db", db, "--grant", "0" * 12]) == 1  # nothing to revoke
    assert main(["revoke", "--db", db]) == 2


# -- the tablet ------------------------------------------------------------------------


@pytest.mark.browser
def test_the_tablet_lists_each_characters_devices_and_revokes_a_lost_tablet_and_a_phone(browser, tmp_path):
    from tests.support import web_support as web
    from tests.support.client_support import make_chronicle, served

    setup = make_chronicle(tmp_path / "chronicle.db")
    with served(setup.db) as server:
        server.runtime.hub.close()  # the revocation itself acts, not the timer
        lost = server.runtime.tokens.issue("storyteller", name="lost tablet")
        tablet = web.Device(browser, server.url, f"{setup.storyteller}&session={setup.session}", viewport=web.TABLET)
        other = web.Device(browser, server.url, f"{lost}&session={setup.session}", viewport=web.TABLET)
        phone = web.Device(browser, server.url, f"{setup.players['anna']}&session={setup.session}")
        try:
            page = tablet.page
            page.get_by_test_id("show-devices").click()
            devices = page.get_by_test_id("device")
            tablet.expect(devices.first).to_be_visible()
            # her link, and the credential her phone made of it (docs/protocol.md, Tokens and join links)
            tablet.expect(page.locator('[data-testid=device][data-character="anna"]')).to_have_count(2)
            anna = page.locator('[data-testid=device][data-character="anna"]', has_text="1 open")
            tablet.expect(anna).to_have_count(1)
            mine = grant_id(digest(setup.storyteller))
            tablet.expect(page.locator(f'[data-testid=device][data-grant="{mine}"]')).to_contain_text("this device")
            # the lost tablet, confirmed: disconnected at once, told so
            page.locator(f'[data-testid=device][data-grant="{grant_id(digest(lost))}"] '
                         '[data-testid=revoke-device]').click()
            page.get_by_test_id("confirm-yes").click()
            other.expect(other.page.locator("#conn.revoked")).to_be_visible()
            tablet.expect(page.locator(f'[data-testid=device][data-grant="{grant_id(digest(lost))}"]')).to_have_count(0)
            # anna's phone
            anna.locator("[data-testid=revoke-device]").click()
            page.get_by_test_id("confirm-yes").click()
            phone.expect(phone.page.locator("#conn.revoked")).to_be_visible()
            tablet.expect(anna).to_have_count(0)
            tablet.expect(page.locator("#conn.online")).to_be_visible()  # the tablet itself goes on
        finally:
            for device in (tablet, other, phone):
                device.close()
