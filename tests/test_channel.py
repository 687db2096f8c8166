"""The venue channel (docs/protocol.md, "The channel"): tested the way an eavesdropper on
the venue's Wi-Fi would, with a recording proxy on loopback between real clients (the
Python client over the real websockets library, Chromium on a plain-HTTP LAN address)
and the real server, through a night of play. What the recorder holds: no token (nor
its digest), no frame but ``open``, ``opened`` and ``sealed``, no request to the API but
``/channel`` and ``/sealed``. The same night in the clear shows the recorder reads
what it should: the tokens and the throws are there."""

from __future__ import annotations

import asyncio
import base64
import hashlib
import json
import re

import httpx
import pytest
import websockets

from conteur.client.client import Client, ClientError
from conteur.events import channel
from conteur.server.testing import Device, SealedHttp, Venue
from tests.browser_support import CHROMIUM, NO_CHROMIUM
from tests.client_support import Proxy, make_chronicle, served
from tests.eavesdrop_support import overheard

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


def secrets_of(setup, minted: list[str]) -> list[str]:
    tokens = [setup.storyteller, *setup.players.values(), *(t for _s, t in setup.dice.values()), *minted]
    return tokens + [hashlib.sha256(t.encode()).hexdigest() for t in tokens] + [
        base64.b64encode(hashlib.sha256(t.encode()).digest()).decode() for t in tokens]


def assert_nothing_readable(heard, secrets: list[str], *, api_paths=("/channel", "/sealed")) -> None:
    text = "\n".join(h.text() for h in heard)
    assert not [s for s in secrets if s in text], "a token or its digest crossed the air"
    for h in heard:
        if h.kind.startswith("ws"):
            assert json.loads(h.body)["type"] in ("open", "opened", "sealed"), h.body[:200]
        elif h.kind == "request":
            assert h.header("authorization") is None, h.head
            assert not h.path.startswith(("/sessions", "/ws?")), h.head
            if h.path in api_paths:
                body = h.json()
                assert set(body) <= {"type", "id", "nonce", "channel", "n", "box"}, body
        elif h.kind == "response" and h.header("content-type") == "application/json" and h.body:
            body = h.json()
            if isinstance(body, dict) and "box" in body:
                assert set(body) == {"box"}, body


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


# -- the eavesdropper, the phone app and the tablet in Chromium ----------------------------

browser_only = pytest.mark.skipif(CHROMIUM is None, reason=NO_CHROMIUM)


@pytest.mark.browser
@browser_only
def test_a_night_on_phones_and_the_tablet_over_plain_http_leaves_nothing_to_read(lan_browser, tmp_path):
    """The phones and the tablet on a LAN name (plain HTTP, no Web Crypto), every byte
    through the recorder: a challenge thrown from the phones, the tablet's devices card
    and join sheet (HTTP), the review page."""
    from tests.web_support import TABLET, Device as Page, start_challenge

    setup = make_chronicle(tmp_path / "chronicle.db")
    with served(setup.db) as server, Proxy(server.port) as air:
        base = f"http://venue.lan:{air.port}"
        st = Page(lan_browser, base, f"{setup.storyteller}&session={setup.session}", viewport=TABLET)
        anna = Page(lan_browser, base, setup.players["anna"])
        bruno = Page(lan_browser, base, setup.players["bruno"])
        assert not anna.page.evaluate("window.isSecureContext")
        start_challenge(anna)
        anna.challenge().get_by_test_id("throw-rock").click()
        anna.expect(anna.challenge().get_by_test_id("throw-rock")).to_have_count(0)
        bruno.challenge().get_by_test_id("throw-paper").click()
        anna.expect(anna.challenge()).to_have_attribute("data-status", "window")
        st.page.get_by_test_id("show-devices").click()
        st.expect(st.page.get_by_test_id("show-devices")).to_have_text(re.compile("."))
        with st.context.expect_page() as opened:
            st.page.get_by_test_id("join-sheet").click()
        sheet = opened.value
        sheet.wait_for_load_state()
        st.expect(sheet.locator("img, svg").first).to_be_visible()
        minted = re.findall(r"#join=([A-Za-z0-9_-]+)", sheet.content())
        review = st.context.new_page()
        review.goto(f"{base}/review.html#join={setup.storyteller}&session={setup.session}")
        st.expect(review.get_by_text("Anna").first).to_be_visible()
        for page in (st, anna, bruno):
            page.close()
        heard = overheard(air.flows)
    assert minted, "the join sheet came through the channel"
    assert sum(h.kind == "ws-down" for h in heard) > 10
    assert_nothing_readable(heard, secrets_of(setup, minted))


def test_a_client_refused_at_open_says_so(venue):
    async def run():
        client = Client(venue.ws_url, "not-a-token", "night")
        client.start()
        with pytest.raises(ClientError):
            await client.wait_live(timeout=10)
        await client.close()
    asyncio.run(run())
