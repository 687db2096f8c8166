"""A revoked token loses its live sockets at once (docs/protocol.md, "Tokens and join
links"): a phone already connected with the old token of a reprinted join sheet is
closed with 4401 "token revoked", receives nothing of its character afterwards, and
both clients stop reconnecting and say why."""

from __future__ import annotations

import asyncio
import subprocess
import sys
import threading

import httpx
import pytest

from conteur.client.cli import EXIT_REFUSED, main
from conteur.client.client import Backoff, Client, ClientError
from conteur.server.testing import Device, Venue
from conteur.server.web.ws import CLOSE_UNAUTHORIZED, REASON_REVOKED
from tests.support import web_support as web
from tests.support.browser_support import TIMEOUT
from tests.support.client_support import make_chronicle, served
from tests.support.revoke_support import CHALLENGE, CHARACTERS, THROW, characters, closed_with, reprint


@pytest.fixture
def venue(tmp_path):
    with Venue(tmp_path / "chronicle.db") as v:
        yield v


async def test_reprinting_the_join_sheet_closes_the_old_token_s_socket_at_once(venue):
    venue.runtime.hub.close()  # no re-reading of the tokens table: the revocation itself acts
    storyteller = venue.token()
    st = Device(venue.ws_url, storyteller, "s1")
    await st.connect()
    for command in CHARACTERS + [{"type": "open_scene", "scene": "hall", "name": "Hall"}] + [
            {"type": "join_scene", "character": c, "scene": "hall"} for c in ("anna", "bruno")]:
        assert (await st.command(command))["type"] == "ack"
    old = venue.token("player", "anna", "s1")
    async with Device(venue.ws_url, old, "s1") as phone, \
            Device(venue.ws_url, venue.token("player", "bruno", "s1"), "s1") as bruno:
        assert (await bruno.command(CHALLENGE))["type"] == "ack"
        await phone.wait_event("met.challenge_issued")
        held = list(phone.frames)

        [new] = await asyncio.to_thread(reprint, venue.url, storyteller, "s1", "anna")
        assert await closed_with(phone) == (CLOSE_UNAUTHORIZED, REASON_REVOKED)
        assert phone.frames == held  # nothing between the revocation and the close

        # play goes on: anna's new phone throws, bruno (untouched) sees it sealed
        async with Device(venue.ws_url, new, "s1") as again:
            assert (await again.command(THROW))["type"] == "ack"
            thrown = await again.wait_event("met.throw_committed")
        assert thrown["choice"] == "rock"
        assert (await bruno.wait_event("met.throw_committed"))["choice"] is None
        assert phone.frames == held
    async with Device(venue.ws_url, old, "s1") as later:  # and the old token stays refused
        assert later.frames[-1]["code"] == "unauthorized"
    await st.close()


async def test_a_revocation_by_another_process_closes_the_socket_on_the_next_recheck(venue):
    """Another process (a script on the same chronicle file) tells this server's hub
    nothing: the hub finds the revocation when it re-reads the tokens table (every 5 s)."""
    await characters(venue)
    async with Device(venue.ws_url, venue.token("player", "anna", "s1"), "s1") as phone:
        revoke = ("import sys; from conteur.server.store.sqlite import SQLiteStore; from conteur.server.core.auth import Tokens\n"
                  "store = SQLiteStore(sys.argv[1])\n"
                  "try: print(Tokens(store).revoke(session='s1', character='anna'))\n"
                  "finally: store.close()")
        done = await asyncio.to_thread(subprocess.run, [sys.executable, "-c", revoke, venue.path],
                                       capture_output=True, text=True, check=True, timeout=60)
        assert done.stdout.strip() == "1"
        with pytest.raises(ConnectionError):
            await phone.wait_for(lambda f: False, timeout=30)
        assert (phone.close_code, phone.ws.close_reason) == (CLOSE_UNAUTHORIZED, REASON_REVOKED)


# -- the Python client -------------------------------------------------------------------


async def test_the_python_client_stops_reconnecting_and_says_its_token_was_revoked(venue, tmp_path):
    venue.runtime.hub.close()  # the revocation itself acts, not the timer
    await characters(venue)
    client = Client(venue.ws_url, venue.token("player", "anna", "s1"), "s1",
                    outbox=tmp_path / "anna.db", backoff=Backoff(0.05, 0.1))
    async with client:
        await client.wait_live()
        waiting = asyncio.ensure_future(client.outcome("never-answered", timeout=30))
        ended = asyncio.ensure_future(client._task)
        # revoked from another thread of the server's process (a handler in a thread pool)
        await asyncio.to_thread(venue.runtime.tokens.revoke, session="s1", character="anna")
        await asyncio.wait_for(asyncio.shield(ended), 10)
        assert client.error is not None and client.error.code == "revoked"
        assert "revoked" in client.error.message and "storyteller" in client.error.message
        assert client.connections == 1  # it never came back
        # whoever waits for an outcome, or asks for one later, is told why at once
        with pytest.raises(ClientError, match="revoked"):
            await waiting
        with pytest.raises(ClientError, match="revoked"):
            await client.request({"type": "back_in_game", "character": "anna"})


def test_conteur_client_watch_exits_2_and_says_the_token_was_revoked(venue, tmp_path, capsys):
    asyncio.run(characters(venue))
    state = str(tmp_path / "anna.sqlite")
    assert main(["join", f"{venue.url}/#join={venue.token('player', 'anna', 's1')}", "--state", state]) == 0
    capsys.readouterr()
    hub = venue.runtime.hub
    before = hub.connections("s1")
    result: list[int] = []
    watching = threading.Thread(target=lambda: result.append(main(["watch", "--state", state])))
    watching.start()
    for _ in range(200):  # until the watch is connected
        if hub.connections("s1") > before:
            break
        watching.join(0.05)
    venue.runtime.tokens.revoke(session="s1", character="anna")
    watching.join(20)
    assert result == [EXIT_REFUSED]
    err = capsys.readouterr().err
    assert "token was revoked" in err and "new join link" in err


# -- the web app ------------------------------------------------------------------------


@pytest.mark.browser
def test_the_web_app_says_its_link_was_revoked_forgets_the_character_and_stops_retrying(browser, tmp_path):
    setup = make_chronicle(tmp_path / "chronicle.db")
    with served(setup.db) as server:
        server.runtime.hub.close()  # the revocation itself acts, not the timer
        context = browser.new_context(viewport=web.PHONE, locale="en-US")
        page = context.new_page()
        errors: list[str] = []
        page.on("pageerror", lambda e: errors.append(str(e)))
        sockets: list[object] = []
        page.on("websocket", lambda ws: sockets.append(ws))
        page.clock.install()  # the page's timers, run forward below instead of waited for
        page.goto(f"{server.url}/#join={setup.players['anna']}")
        web.Device.expect(page.locator("h1")).to_have_text("Anna", timeout=TIMEOUT)
        web.Device.expect(page.locator("#conn.online")).to_be_visible(timeout=TIMEOUT)

        reprint(server.url, setup.storyteller, setup.session, "anna")
        web.Device.expect(page.locator("#conn.revoked")).to_be_visible(timeout=TIMEOUT)
        web.Device.expect(page.get_by_test_id("conn-note")).to_contain_text("revoked")
        web.Device.expect(page.locator("main.wait")).to_contain_text("ask a storyteller for your new link")
        web.Device.expect(page.locator("h1")).to_have_count(0)  # the character's view is gone
        assert page.evaluate("localStorage.getItem('conteur.token')") is None
        page.clock.run_for(120_000)  # every backoff delay and heartbeat of two minutes
        web.Device.expect(page.locator("#conn.revoked")).to_be_visible()
        assert len(sockets) == 1, "it reconnected"
        page.reload()  # nothing left of the old link: the page asks for a new one
        web.Device.expect(page.locator("#join-link")).to_be_visible(timeout=TIMEOUT)
        assert page.evaluate("window.conteur.vm.characters") == {}
        assert errors == []
        context.close()


@pytest.mark.browser
def test_a_reprint_for_one_lost_phone_cuts_off_that_phone_only(browser, tmp_path):  # noqa: F811
    # the tablet's reprint for one character revokes that character's codes and no other:
    # mid-game, every other phone plays on (a reprint for everyone warns first)
    setup = make_chronicle(tmp_path / "chronicle.db")
    with served(setup.db) as server:
        server.runtime.hub.close()  # the revocation itself acts, not the timer
        anna = web.Device(browser, server.url, setup.players["anna"])
        bruno = web.Device(browser, server.url, setup.players["bruno"])
        tablet = web.Device(browser, server.url, setup.storyteller, viewport=web.TABLET)
        page = tablet.page
        page.get_by_test_id("join-sheet-revoke").check()
        tablet.expect(page.get_by_test_id("revoke-all-warning")).to_contain_text("Every phone")
        page.get_by_test_id("join-sheet-for").select_option("anna")
        tablet.expect(page.get_by_test_id("revoke-all-warning")).to_have_count(0)
        with page.context.expect_page() as printed:
            page.get_by_test_id("join-sheet").click()
        sheet = printed.value
        tablet.expect(sheet.locator(".card")).to_have_count(1)  # Anna's new code, alone
        tablet.expect(sheet.locator(".card .name")).to_have_text("Anna")
        anna.expect(anna.page.locator("#conn.revoked")).to_be_visible()
        bruno.expect(bruno.page.locator("#conn.online")).to_be_visible()
        bruno.expect(bruno.page.locator("h1")).to_have_text("Bruno")
        # Bruno's old code still joins: only Anna's were revoked
        answer = httpx.get(f"{server.url}/me", headers={"Authorization": f"Bearer {setup.players['bruno']}"})
        assert answer.status_code == 200 and answer.json()["character"] == "bruno"
        answer = httpx.get(f"{server.url}/me", headers={"Authorization": f"Bearer {setup.players['anna']}"})
        assert answer.status_code == 401
        assert anna.errors == bruno.errors == tablet.errors == []
        for device in (anna, bruno, tablet):
            device.close()


@pytest.mark.browser
def test_a_phone_whose_code_was_revoked_while_it_was_offline_forgets_the_character(browser, tmp_path):  # noqa: F811
    # the revocation's close never reaches a phone out of Wi-Fi: its next hello is refused,
    # and a code this page was welcomed with, refused now, was revoked (docs/protocol.md)
    setup = make_chronicle(tmp_path / "chronicle.db")
    with served(setup.db) as server:
        server.runtime.hub.close()  # no recheck timer: the phone's socket is left as it is
        anna = web.Device(browser, server.url, setup.players["anna"])
        anna.page.context.set_offline(True)  # the Wi-Fi drops; the heartbeat notices
        anna.expect(anna.page.locator("#conn.offline")).to_be_visible()
        assert server.runtime.store.revoke_tokens(session=setup.session, character="anna")
        anna.page.context.set_offline(False)
        anna.expect(anna.page.locator("#conn.revoked")).to_be_visible()
        anna.expect(anna.page.locator("h1")).to_have_count(0)  # the character's view is gone
        assert anna.page.evaluate("localStorage.getItem('conteur.token')") is None
        assert anna.errors == []
        anna.close()
