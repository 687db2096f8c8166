"""The websocket wire contract against a real server on loopback (docs/protocol.md):
hello/welcome/live, errors that leave the connection open, auth, Origin, limits,
idempotent retries."""

from __future__ import annotations

import asyncio
import base64
import json
import os
import socket
import time
from pathlib import Path

import pytest
import websockets

from conteur.server.web.app import Settings
from conteur.server.testing import Device, Venue


@pytest.fixture
def venue(tmp_path):
    with Venue(tmp_path / "chronicle.db") as v:
        yield v


OPEN = {"type": "open_session", "name": "Night"}
ANNA = {"type": "add_character", "character": "anna", "name": "Anna",
        "sheet": {"kind": "met", "physical": 6, "social": 3, "mental": 4}}
BRUNO = {"type": "add_character", "character": "bruno", "name": "Bruno",
         "sheet": {"kind": "met", "physical": 5, "social": 5, "mental": 5}}


async def opened(venue: Venue, session: str = "s1") -> Device:
    st = Device(venue.ws_url, venue.token(), session)
    await st.connect()
    for command in (OPEN, ANNA, BRUNO):
        assert (await st.command(command))["type"] == "ack"
    return st


async def test_hello_gets_welcome_then_live_with_the_head(venue):
    async with Device(venue.ws_url, venue.token(), "s1") as st:
        assert st.frames[0] == {"type": "welcome", "session": "s1", "head": 0,
                                "viewer": {"role": "storyteller", "character": None,
                                           "name": "storyteller", "session": "s1"},
                                # which process the socket reached: this one, host and pid
                                "server": f"{socket.gethostname()}:{os.getpid()}"}
        assert st.frames[1] == {"type": "live", "head": 0}
        ack = await st.command(OPEN)
        assert ack == {"type": "ack", "id": ack["id"], "seqs": [1]}
        assert st.events[0][0] == 1 and st.events[0][1]["type"] == "session.opened"


async def test_ping_gets_pong(venue):
    async with Device(venue.ws_url, venue.token(), "s1") as st:
        before = time.time()
        await st.sync()
        pong = st.frames[-1]
        # with the server's clock, which the phones' countdowns are set by
        assert pong["type"] == "pong" and set(pong) == {"type", "now"} and pong["now"] >= before - 1


@pytest.mark.parametrize("raw, code", [
    ("not json", "malformed"),
    ("[1, 2]", "malformed"),
    ('{"no": "type"}', "unknown_type"),
    ('{"type": "shout"}', "unknown_type"),
    ('{"type": "command", "id": "c1", "command": {"type": "dance"}}', "unknown_command"),
    ('{"type": "command", "id": "c2", "command": {"type": "throw", "character": "anna"}}', "invalid"),
    ('{"type": "command", "command": {"type": "freeze"}}', "invalid"),
    ('{"type": "hello", "token": "x", "session": "s1"}', "already_hello"),
])
async def test_a_bad_frame_gets_an_error_and_the_connection_stays_open(venue, raw, code):
    async with Device(venue.ws_url, venue.token(), "s1") as st:
        await st.send(raw)
        error = await st.next_error()
        assert error["code"] == code, error
        assert error["message"]
        ack = await st.command(OPEN)  # still open, still working
        assert ack["type"] == "ack"


async def test_an_invalid_command_frame_error_names_its_id_for_the_outbox(venue):
    async with Device(venue.ws_url, venue.token(), "s1") as st:
        await st.send({"type": "command", "id": "c9", "command": {"type": "bid", "value": "high"}})
        error = await st.next_error()
        assert error["id"] == "c9" and error["code"] == "invalid"


async def test_an_oversized_frame_is_refused_with_a_clear_error_and_the_connection_stays(venue):
    async with Device(venue.ws_url, venue.token(), "s1") as st:
        await st.send(json.dumps({"type": "ping", "pad": "x" * 70_000}))
        error = await st.next_error()
        assert error["code"] == "too_large" and "65536" in error["message"]
        await st.sync()


async def raw_websocket(venue: Venue) -> tuple[asyncio.StreamReader, asyncio.StreamWriter]:
    """A websocket opened by hand, so a test can write a frame header alone."""
    reader, writer = await asyncio.open_connection(venue.served.host, venue.served.port)
    key = base64.b64encode(os.urandom(16)).decode()
    writer.write(f"GET /ws HTTP/1.1\r\nHost: {venue.served.host}:{venue.served.port}\r\n"
                 f"Upgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Key: {key}\r\n"
                 "Sec-WebSocket-Version: 13\r\n\r\n".encode())
    answer = await reader.readuntil(b"\r\n\r\n")
    assert answer.startswith(b"HTTP/1.1 101"), answer
    return reader, writer


async def close_code_of(reader: asyncio.StreamReader) -> int:
    """Reads server frames (never masked) up to the close frame; returns its code."""
    while True:
        first, second = await reader.readexactly(2)
        length = second & 0x7F
        if length == 126:
            length = int.from_bytes(await reader.readexactly(2), "big")
        elif length == 127:
            length = int.from_bytes(await reader.readexactly(8), "big")
        payload = await reader.readexactly(length)
        if first & 0x0F == 0x8:
            return int.from_bytes(payload[:2], "big")


async def test_a_huge_frame_closes_the_connection_with_1009(venue):
    # The header announcing 2 MiB is what the server judges: it closes with 1009 before
    # reading any payload. Writing the whole 2 MiB raced that close (the server's kernel
    # answers the unread bytes with a reset, which can swallow the close frame), so only
    # the header and a few payload bytes are written here.
    reader, writer = await raw_websocket(venue)
    try:
        mask = os.urandom(4)
        payload = bytes(b ^ mask[i % 4] for i, b in enumerate(b"x" * 16))
        writer.write(bytes([0x81, 0x80 | 127]) + (2 << 20).to_bytes(8, "big") + mask + payload)
        await writer.drain()
        assert await asyncio.wait_for(close_code_of(reader), 10) == 1009
    finally:
        writer.close()


async def test_a_command_before_hello_is_refused_until_hello(venue):
    async with Device(venue.ws_url, venue.token(), "s1", hello=False) as dev:
        await dev.send({"type": "command", "id": "c1", "command": OPEN})
        error = await dev.next_error()
        assert error == {"type": "error", "code": "hello_first", "message": "send hello first", "id": "c1"}
        await dev.send({"type": "hello", "token": dev.token, "session": "s1", "create": True})
        await dev.wait_for(lambda f: f["type"] == "live")


async def test_a_hello_without_token_is_invalid_and_a_wrong_token_closes(venue):
    async with Device(venue.ws_url, "", "s1", hello=False) as dev:
        await dev.send({"type": "hello", "session": "s1"})
        assert (await dev.next_error())["code"] == "invalid"
        await dev.send({"type": "hello", "token": "not-a-token", "session": "s1"})
        assert (await dev.next_error())["code"] == "unauthorized"
        with pytest.raises(ConnectionError):
            await dev.wait_for(lambda f: False)
        assert dev.close_code == 4401


async def test_a_token_revoked_by_another_process_stops_working_without_a_restart(venue):
    """A lost phone's token revoked from another process on the same chronicle file
    (here a separate Python) is refused at the next hello and HTTP request."""
    import subprocess
    import sys

    import httpx

    st = await opened(venue)
    await st.close()
    token = venue.token("player", "anna", "s1")
    async with Device(venue.ws_url, token, "s1") as before:
        assert before.frames[-1]["type"] == "live"
    assert httpx.get(f"{venue.url}/me", headers={"Authorization": f"Bearer {token}"}).status_code == 200
    revoke = ("import sys; from conteur.server.store.sqlite import SQLiteStore; from conteur.server.core.auth import Tokens\n"
              "store = SQLiteStore(sys.argv[1])\n"
              "try: print(Tokens(store).revoke(session='s1', character='anna'))\n"
              "finally: store.close()")
    done = subprocess.run([sys.executable, "-c", revoke, venue.path], capture_output=True,
                          text=True, check=True, timeout=60)
    assert done.stdout.strip() == "1"
    async with Device(venue.ws_url, token, "s1") as after:
        assert after.frames[-1] == {"type": "error", "code": "unauthorized",
                                    "message": "unknown or revoked token"}
    assert httpx.get(f"{venue.url}/me", headers={"Authorization": f"Bearer {token}"}).status_code == 401


async def rehello(venue: Venue, token: str, held: Device) -> dict:
    """The welcome a device gets when it comes back holding ``held``'s events."""
    seq, event = held.events[-1]
    async with Device(venue.ws_url, token, "s1", hello=False) as dev:
        await dev.send({"type": "hello", "token": token, "session": "s1", "after": held.after,
                        "last": {"seq": seq, "event": event}})
        await dev.wait_for(lambda f: f["type"] == "live")
        return dev.welcome


async def test_a_device_holding_a_history_from_before_a_restored_backup_is_told_it_diverged(
        venue, tmp_path):
    """The older backup comes back and play goes on, reusing seqs the device already
    holds: its hello's ``last`` event no longer matches, so the welcome says ``diverged``
    (and a device whose ``after`` is above the head is told so too)."""
    import shutil
    import sqlite3

    st = await opened(venue)
    await st.close()
    token, anna = venue.token(), venue.token("player", "anna", "s1")
    bruno = venue.token("player", "bruno", "s1")
    backup = tmp_path / "backup.db"
    with sqlite3.connect(venue.path) as src, sqlite3.connect(backup) as dst:
        src.backup(dst)
    async with Device(venue.ws_url, token, "s1") as st, Device(venue.ws_url, anna, "s1") as phone, \
            Device(venue.ws_url, bruno, "s1") as other:
        for command in ({"type": "open_scene", "scene": "hall"},
                        {"type": "join_scene", "character": "anna", "scene": "hall"},
                        {"type": "join_scene", "character": "bruno", "scene": "hall"},
                        {"type": "challenge", "character": "anna", "kind": "classic",
                         "attribute": "physical", "defender": "bruno"},
                        {"type": "throw", "character": "anna", "challenge": "c1", "round": 1,
                         "choice": "rock"}):
            assert (await st.command(command))["type"] == "ack"
        for device in (st, phone, other):
            await device.sync()
    assert other.events[-1][1]["choice"] is None  # bruno holds anna's throw sealed
    for device, who in ((st, token), (phone, anna), (other, bruno)):
        assert (await rehello(venue, who, device)).get("diverged") is None

    venue.stop()
    for suffix in ("", "-wal", "-shm"):
        Path(venue.path + suffix).unlink(missing_ok=True)
    shutil.copy(backup, venue.path)
    venue.start()
    assert (await rehello(venue, token, st))["diverged"] is True  # above the head
    async with Device(venue.ws_url, token, "s1") as again:
        for scene in ("crypt", "tower", "vault", "keep", "moat", "gate"):
            assert (await again.command({"type": "open_scene", "scene": scene}))["type"] == "ack"
    for device, who in ((st, token), (phone, anna), (other, bruno)):
        welcome = await rehello(venue, who, device)
        assert welcome["head"] >= device.after and welcome["diverged"] is True


async def test_a_token_bound_to_another_session_is_refused(venue):
    token = venue.token("observer", session="s2")
    async with Device(venue.ws_url, token, "s1") as dev:
        assert dev.frames[-1]["code"] == "forbidden"


async def test_a_hello_without_session_takes_the_token_session(venue):
    st = await opened(venue, "s7")
    token = venue.token("player", "anna", "s7")
    async with Device(venue.ws_url, token, "") as anna:
        assert anna.welcome["session"] == "s7"
        assert anna.welcome["viewer"] == {"role": "player", "character": "anna", "name": "anna",
                                          "session": "s7"}
        assert [t for t in anna.types()][:1] == ["session.opened"]
    await st.close()


async def test_a_player_commanding_another_character_is_rejected(venue):
    st = await opened(venue)
    async with Device(venue.ws_url, venue.token("player", "anna", "s1"), "s1") as anna:
        reject = await anna.command({"type": "leave_scene", "character": "bruno"})
        assert reject["type"] == "reject" and reject["code"] == "forbidden"
        assert "anna" in reject["message"] and "bruno" in reject["message"]
        reject = await anna.command({"type": "freeze"})
        assert reject["code"] == "forbidden"
    await st.close()


async def test_an_observer_cannot_act(venue):
    st = await opened(venue)
    async with Device(venue.ws_url, venue.token("observer", session="s1"), "s1") as wall:
        reject = await wall.command({"type": "leave_scene", "character": "anna"})
        assert reject["code"] == "forbidden"
    await st.close()


async def test_a_retried_command_id_gets_its_first_ack_and_no_new_event(venue):
    async with Device(venue.ws_url, venue.token(), "s1", device="tablet") as st:
        first = await st.command(OPEN, id="same")
        again = await st.command(OPEN, id="same")
        assert first == again == {"type": "ack", "id": "same", "seqs": [1]}
        await st.sync()
        assert [seq for seq, _ in st.events] == [1]


async def test_a_retried_rejected_command_gets_its_first_reject(venue):
    async with Device(venue.ws_url, venue.token(), "s1", device="tablet") as st:
        await st.command(OPEN)
        first = await st.command(OPEN, id="twice")
        assert first["type"] == "reject" and "already open" in first["message"]
        assert await st.command(OPEN, id="twice") == first


async def test_the_same_device_name_under_two_tokens_does_not_share_outcomes(venue):
    """Idempotency records are keyed by token and device: no replaying another's ack."""
    st = await opened(venue)
    anna = Device(venue.ws_url, venue.token("player", "anna", "s1"), "s1", device="phone")
    bruno = Device(venue.ws_url, venue.token("player", "bruno", "s1"), "s1", device="phone")
    async with anna, bruno:
        a = await anna.command({"type": "out_of_game", "character": "anna"}, id="x1")
        b = await bruno.command({"type": "out_of_game", "character": "bruno"}, id="x1")
        assert a["type"] == b["type"] == "ack" and a["seqs"] != b["seqs"]
    await st.close()


async def test_a_foreign_origin_is_refused_at_the_handshake(venue):
    with pytest.raises(websockets.exceptions.InvalidStatus) as refused:
        async with websockets.connect(venue.ws_url, origin="http://evil.example"):
            pass
    assert refused.value.response.status_code == 403


async def test_the_server_own_origin_and_no_origin_are_allowed(venue):
    own = f"http://127.0.0.1:{venue.served.port}"
    async with Device(venue.ws_url, venue.token(), "s1", origin=own) as st:
        assert st.live_head == 0
    async with Device(venue.ws_url, venue.token(), "s1") as st:  # the Python client
        assert st.live_head == 0


async def test_a_configured_origin_is_allowed(tmp_path):
    settings = Settings(origins=("https://conteur.example",))
    with Venue(tmp_path / "c.db", settings) as venue:
        async with Device(venue.ws_url, venue.token(), "s1", origin="https://conteur.example") as st:
            assert st.live_head == 0


async def test_the_rate_limit_answers_with_an_error_and_keeps_the_connection(tmp_path):
    with Venue(tmp_path / "c.db", Settings(rate=0.5, burst=3)) as venue:
        async with Device(venue.ws_url, venue.token(), "s1") as st:  # hello took one
            for _ in range(3):
                await st.send({"type": "ping"})
            error = await st.next_error()
            assert error["code"] == "rate_limited" and "per second" in error["message"]
            assert [f["type"] for f in st.frames].count("pong") == 2
            assert not st.closed
            dropped = await st.command({"type": "freeze"}, id="c-late")
            assert dropped == {"type": "error", "code": "rate_limited", "id": "c-late",
                               "message": dropped["message"]}


async def test_permessage_deflate_is_off(venue):
    async with websockets.connect(venue.ws_url) as ws:  # offers deflate by default
        assert ws.response.headers.get("Sec-WebSocket-Extensions") is None
