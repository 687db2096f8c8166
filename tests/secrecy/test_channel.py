"""The venue channel (docs/protocol.md, "The channel"): tested the way an eavesdropper on
the venue's Wi-Fi would, with a recording proxy on loopback between real clients (the
Python client over the real websockets library, Chromium on a plain-HTTP LAN address)
and the real server, through a night of play. What the recorder holds: no token (nor
its digest), no frame but ``open``, ``opened`` and ``sealed``, no request to the API but
``/channel`` and ``/sealed``. The same night in the clear shows the recorder reads
what it should: the tokens and the throws are there."""

from __future__ import annotations

import asyncio
import json
import re

import httpx
import pytest
import websockets

from conteur.client.client import Client, ClientError
from conteur.events import channel
from conteur.server.testing import Device, SealedHttp, Venue
from tests.support.client_support import Proxy, make_chronicle, served
from tests.support.eavesdrop_support import assert_nothing_readable, overheard, secrets_of

CHALLENGE = {"type": "challenge", "character": "anna", "kind": "classic", "attribute": "physical",
             "defender": "bruno"}
# a sheet only the storyteller and its character may read (docs/protocol.md, Who sees what)
DORA = {"type": "add_character", "character": "dora", "name": "Dora",
        "sheet": {"kind": "met", "physical": 5, "social": 4, "mental": 8, "abilities": {"occult": 3}}}


# -- the construction ----------------------------------------------------------------


def test_a_frame_opens_once_in_order_on_its_own_socket_only():
    psk, key_id = channel.psk_of_token("token"), channel.key_id_of_token("token")
    nonces = channel.new_nonce(), channel.new_nonce()
    device, server = channel.client_side(psk, key_id, *nonces), channel.server_side(psk, key_id, *nonces)
    first, second = device.seal('{"type": "ping"}'), device.seal('{"type": "ping"}')
    assert first != second  # a counter nonce: the same frame twice is not the same box
    assert server.open(first) == '{"type": "ping"}'
    other = channel.server_side(psk, key_id, nonces[0], channel.new_nonce())  # another socket
    with pytest.raises(channel.ChannelError):
        other.open(second)
    replayed = channel.server_side(psk, key_id, *nonces)
    replayed.open(first)
    with pytest.raises(channel.ChannelError):
        replayed.open(first)  # the same message again: its counter is spent
    assert server.open(second) == '{"type": "ping"}'
    wrong = channel.server_side(channel.psk_of_token("other"), key_id, *nonces)
    with pytest.raises(channel.ChannelError):
        wrong.open(device.seal("{}"))


def test_sealed_sizes_are_padded_so_a_bid_of_3_and_of_10_look_alike():
    psk, key_id = channel.psk_of_token("token"), channel.key_id_of_token("token")
    device = channel.client_side(psk, key_id, channel.new_nonce(), channel.new_nonce())
    bid = '{"type":"command","id":"c1","command":{"type":"bid","character":"anna","challenge":"c1","round":1,"value":%d}}'
    assert len(device.seal(bid % 3)) == len(device.seal(bid % 10))


# -- the server's side -----------------------------------------------------------------


@pytest.fixture
def venue(tmp_path):
    with Venue(tmp_path / "chronicle.db") as v:
        yield v


async def test_a_hello_sealed_with_another_key_is_refused_and_counts_as_a_bad_token(venue):
    # the answer to open is the same for an id no token has: it says nothing of which exist
    async with websockets.connect(venue.ws_url) as ws:
        await ws.send(json.dumps({"type": "open", "id": "000000000000", "nonce": channel.new_nonce()}))
        assert json.loads(await ws.recv())["type"] == "opened"
    for _ in range(venue.runtime.settings.bad_credentials):
        device = Device(venue.ws_url, "not-a-token-of-this-chronicle", "night", channel=True)
        with pytest.raises(ConnectionError):
            await device.connect()
        assert device.close_code == 4401
    # the address's next open, even with a good token, waits (docs/protocol.md, Transport)
    refused = Device(venue.ws_url, venue.token(), "night", channel=True)
    with pytest.raises(ConnectionError):
        await refused.connect()
    assert refused.close_code == 4429 and refused.frames[-1]["code"] == "rate_limited"


async def test_a_captured_hello_replayed_on_a_new_socket_does_not_open(venue):
    token = venue.token()
    async with websockets.connect(venue.ws_url) as ws:
        key_id, nonce = channel.key_id_of_token(token), channel.new_nonce()
        await ws.send(json.dumps({"type": "open", "id": key_id, "nonce": nonce}))
        opened = json.loads(await ws.recv())
        mine = channel.client_side(channel.psk_of_token(token), key_id, nonce, opened["nonce"])
        captured = mine.seal(json.dumps({"type": "hello", "session": "night", "create": True}))
        await ws.send(captured)
        assert json.loads(mine.open(await ws.recv()))["type"] == "welcome"
    async with websockets.connect(venue.ws_url) as ws:  # the eavesdropper's replay: same open, same hello
        await ws.send(json.dumps({"type": "open", "id": key_id, "nonce": nonce}))
        assert json.loads(await ws.recv())["type"] == "opened"  # with a fresh server nonce
        await ws.send(captured)
        with pytest.raises(websockets.exceptions.ConnectionClosed) as closed:
            await ws.recv()
        assert closed.value.rcvd.code == 4401


def test_a_sealed_http_request_replayed_is_refused(venue):
    sealed = SealedHttp(venue.url, venue.token())
    assert sealed.request("POST", "/sessions", {"session": "night"}).status_code in (200, 201)
    again = httpx.post(venue.url + "/sealed", json=sealed.last_body)
    assert again.status_code == 401 and "replay" in again.json()["detail"]
    sealed.close()


def test_a_revoked_token_s_http_channel_stops_at_once(venue):
    player = venue.token("player", "anna", "night")
    sealed = SealedHttp(venue.url, player)
    sealed.request("GET", "/sessions/night/events")
    venue.runtime.tokens.revoke(session="night", character="anna")
    assert sealed.request("GET", "/sessions/night/events").status_code == 401


# -- the eavesdropper, the Python client ------------------------------------------------


async def python_night(ws_url: str, url: str, setup, *, sealed: bool) -> list[str]:
    """A night from the Python client: a challenge with sealed throws, a V5 secret roll, a
    sheet, a join sheet printed and an export fetched; returns the join sheet's tokens."""
    session = setup.session
    clients = {who: Client(ws_url, token, session, sealed=sealed)
               for who, token in [("st", setup.storyteller), *setup.players.items()]}
    clara_session, clara_token = setup.dice["clara"]
    clients["clara"] = Client(ws_url, clara_token, clara_session, sealed=sealed)
    for client in clients.values():
        client.start()
    try:
        for client in clients.values():
            await client.wait_live()
        assert (await clients["st"].request(DORA)).ok
        assert (await clients["anna"].request(CHALLENGE)).ok
        for who, choice in (("anna", "rock"), ("bruno", "scissors")):
            throw = {"type": "throw", "character": who, "challenge": "c1", "round": 1, "choice": choice}
            assert (await clients[who].request(throw)).ok
        secret = {"type": "roll_pool", "character": "clara", "attribute": "dexterity", "skill": "stealth",
                  "difficulty": 3, "visibility": "secret"}
        assert (await clients["clara"].request(secret)).ok
        await asyncio.sleep(0.3)  # the last fan-out reaches every socket
    finally:
        for client in clients.values():
            await client.close()
    body = {"lang": "en"}
    if sealed:
        http = SealedHttp(url, setup.storyteller)
        sheet = http.request("POST", f"/sessions/{session}/join-sheet", body)
        export = http.request("GET", f"/sessions/{session}/export?format=jsonl")
        http.close()
    else:
        bearer = {"Authorization": f"Bearer {setup.storyteller}"}
        sheet = httpx.post(f"{url}/sessions/{session}/join-sheet", json=body, headers=bearer)
        export = httpx.get(f"{url}/sessions/{session}/export?format=jsonl", headers=bearer)
    assert sheet.status_code == 200 and export.status_code == 200, (sheet.text, export.text)
    assert "rock" in export.text  # what the storyteller holds, and nobody else on the air
    return re.findall(r"#join=([A-Za-z0-9_-]+)", sheet.text)


def test_a_night_from_the_python_client_leaves_nothing_to_read_on_the_air(tmp_path):
    setup = make_chronicle(tmp_path / "chronicle.db")
    with served(setup.db) as server, Proxy(server.port) as air:
        minted = asyncio.run(python_night(air.ws_url, air.url, setup, sealed=True))
        heard = overheard(air.flows)
    assert len(minted) >= 2
    assert sum(h.kind == "ws-down" for h in heard) > 20  # the recorder heard the night
    assert_nothing_readable(heard, secrets_of(setup, minted))


def test_the_same_night_in_the_clear_is_read_off_the_air(tmp_path):
    """The recorder's control: with the channel off (hello and Bearer in the clear) it
    reads every token and the throws before their reveal."""
    setup = make_chronicle(tmp_path / "chronicle.db")
    with served(setup.db) as server, Proxy(server.port) as air:
        minted = asyncio.run(python_night(air.ws_url, air.url, setup, sealed=False))
        heard = overheard(air.flows)
    text = "\n".join(h.text() for h in heard)
    assert setup.storyteller in text and all(t in text for t in setup.players.values())
    assert all(t in text for t in minted)
    frames = [json.loads(h.body) for h in heard if h.kind == "ws-down"]
    commits = [f for f in frames if f["type"] == "event" and f["event"]["type"] == "met.throw_committed"]
    assert any(f["event"].get("choice") == "rock" for f in commits)


def test_a_client_refused_at_open_says_so(venue):
    async def run():
        client = Client(venue.ws_url, "not-a-token", "night")
        client.start()
        with pytest.raises(ClientError):
            await client.wait_live(timeout=10)
        await client.close()
    asyncio.run(run())


# -- a join link is spent on the device that opens it ------------------------------------


async def keeping(venue: Venue, token: str, session: str = "night") -> Device:
    device = Device(venue.ws_url, token, session, channel=True, hello=False)
    await device.connect()
    await device.send({"type": "hello", "session": session, "device": device.device, "keep": True})
    await device.wait_for(lambda f: f["type"] in ("live", "error"))
    return device


async def test_a_join_link_opened_on_a_phone_becomes_that_phone_s_own_credential(venue):
    async with Device(venue.ws_url, venue.token(), "night", channel=True) as st:
        await st.command({"type": "open_session", "name": "Night"})
    link = venue.token("player", "anna", "night")
    first = await keeping(venue, link)
    credential = first.welcome["credential"]
    assert credential and credential != link
    assert venue.runtime.tokens.check(credential).device
    # what the device keeps opens it again, and turns into nothing else
    again = Device(venue.ws_url, credential, "night", channel=True, hello=False)
    await again.connect()
    await again.send({"type": "hello", "session": "night", "device": first.device, "keep": True})
    welcome = await again.wait_for(lambda f: f["type"] == "welcome")
    assert "credential" not in welcome
    await again.close()
    # the same link on a second phone: that phone gets its own, the first is told and closed
    second = await keeping(venue, link)
    assert second.welcome["credential"] not in ("", credential)
    with pytest.raises(ConnectionError):
        await first.wait_for(lambda f: False)
    assert first.close_code == 4401 and first.ws.close_reason == "replaced by another device"
    assert venue.runtime.tokens.check(credential) is None
    assert venue.runtime.tokens.check(second.welcome["credential"]) is not None
    await second.close()


async def test_a_link_opened_without_keep_or_in_the_clear_is_left_as_it_is(venue):
    """A script (the Python client, a hello in the clear) keeps using the token it holds."""
    link = venue.token("player", "anna", "night")
    async with Device(venue.ws_url, venue.token(), "night", channel=True) as st:
        await st.command({"type": "open_session", "name": "Night"})
    async with Device(venue.ws_url, link, "night", channel=True) as sealed, Device(venue.ws_url, link, "night") as clear:
        assert "credential" not in sealed.welcome and "credential" not in clear.welcome
    assert not venue.runtime.tokens.check(link).device


def test_a_chronicle_file_from_before_device_credentials_gets_the_column(tmp_path):
    import sqlite3

    from conteur.server.store.interface import TokenRecord
    from conteur.server.store.sqlite import SQLiteStore

    path = tmp_path / "old.db"
    with SQLiteStore(str(path)) as store:
        store.add_tokens([TokenRecord(hash="a" * 64, role="player", character="anna", session="s")])
    conn = sqlite3.connect(path)
    conn.execute("ALTER TABLE tokens DROP COLUMN parent")  # the table as an older conteur made it
    conn.commit()
    conn.close()
    with SQLiteStore(str(path)) as store:
        assert store.token("a" * 64).parent is None  # a link
        store.add_tokens([TokenRecord(hash="b" * 64, role="player", character="anna", session="s",
                                      parent="a" * 64)])
        assert [r.parent for r in store.live_tokens("s")] == [None, "a" * 64]


async def test_a_revoked_credential_is_told_revoked_through_its_channel_an_unknown_one_refused(venue):
    """So a phone goes back to its link only when the server does not know its credential
    (a restored backup), never when a storyteller revoked it."""
    async with Device(venue.ws_url, venue.token(), "night", channel=True) as st:
        await st.command({"type": "open_session", "name": "Night"})
    phone = await keeping(venue, venue.token("player", "anna", "night"))
    credential = phone.welcome["credential"]
    await phone.close()
    venue.runtime.tokens.revoke_grants([venue.runtime.tokens.check(credential).id])
    for token, reason in ((credential, "token revoked"), ("never-issued-token", "unauthorized")):
        device = Device(venue.ws_url, token, "night", channel=True)
        with pytest.raises(ConnectionError):
            await device.connect()  # an unknown one: closed before any frame opens
            await device.wait_for(lambda f: False)  # a revoked one: told, sealed, then closed
        assert (device.close_code, device.ws.close_reason) == (4401, reason)
