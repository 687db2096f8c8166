"""Limits per token and per address, shared by the websocket and HTTP paths
(server/core/limits.py): a token's commands share one budget however many sockets and
requests carry them; a token holds a bounded number of sockets; an address that sent too
many unknown tokens is refused for a while, told when to come back (websocket close 4429,
HTTP 429 with Retry-After).

Before: 372 commands a second from one player over 20 sockets, 200 sockets on one join
link, no limit on bad-token hellos.
"""

from __future__ import annotations

import itertools

import httpx
import msgspec
import pytest
from websockets.sync.client import connect

from conteur.server.core.limits import Limits
from conteur.server.testing import Venue
from conteur.server.web.app import Settings
from conteur.server.web.ws import CLOSE_RATE_LIMITED

_ids = itertools.count(1)


class Clock:
    def __init__(self):
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


def test_a_tokens_budget_is_its_burst_then_its_rate_on_both_sides_of_the_boundary():
    clock = Clock()
    limits = Limits(rate=20, burst=5, clock=clock)
    assert [limits.command("a") for _ in range(5)] == [0.0] * 5
    assert limits.command("a") == pytest.approx(0.05)  # one more waits a twentieth of a second
    assert limits.command("b") == 0.0  # another token's budget is its own
    clock.now += 0.049
    assert limits.command("a") > 0
    clock.now += 0.002
    assert limits.command("a") == 0.0


def test_sockets_per_token_and_bad_credentials_per_address():
    clock = Clock()
    limits = Limits(rate=20, burst=5, sockets=2, bad=3, window=60, clock=clock)
    assert limits.open_socket("a") and limits.open_socket("a") and not limits.open_socket("a")
    limits.close_socket("a")
    assert limits.open_socket("a")
    for _ in range(2):
        limits.failed("10.0.0.9")
    assert limits.refused("10.0.0.9") == 0.0  # two bad tokens: still heard
    limits.failed("10.0.0.9")
    assert limits.refused("10.0.0.9") == pytest.approx(60)  # the third: a minute's wait
    assert limits.refused("10.0.0.8") == 0.0  # another address is not
    clock.now += 59.9
    assert limits.refused("10.0.0.9") > 0
    clock.now += 0.2
    assert limits.refused("10.0.0.9") == 0.0


@pytest.fixture
def venue(tmp_path):
    with Venue(tmp_path / "chronicle.db", settings=Settings(rate=0.1, burst=10, sockets_per_token=3,
                                                            bad_credentials=4)) as v:
        st = v.token()
        http = httpx.Client(base_url=v.url, headers={"Authorization": f"Bearer {st}"})
        assert http.post("/sessions", json={"session": "night"}).json()["type"] == "ack"
        assert http.post("/sessions/night/commands", json={"id": "c", "command": {
            "type": "add_character", "character": "anna", "name": "Anna"}}).json()["type"] == "ack"
        v.anna = v.token("player", "anna", "night")
        yield v


def hello(venue, token):
    ws = connect(venue.ws_url, compression=None, open_timeout=10).__enter__()
    ws.send(msgspec.json.encode({"type": "hello", "token": token, "session": "night"}).decode())
    return ws


def frames(ws):
    while True:
        yield msgspec.json.decode(ws.recv(timeout=10))


def test_a_players_commands_share_one_budget_over_sockets_and_http(venue):
    sockets = [hello(venue, venue.anna) for _ in range(3)]
    try:
        for ws in sockets:
            next(f for f in frames(ws) if f["type"] == "live")
        answers = []
        for n in range(12):  # the burst is 10 for the token, not per socket
            ws = sockets[n % 3]
            frame = {"type": "command", "id": f"f{next(_ids)}", "command": {"type": "take_action", "character": "anna"}}
            ws.send(msgspec.json.encode(frame).decode())
            answers.append(next(f for f in frames(ws) if f.get("id") == frame["id"]))
        limited = [a for a in answers if a["type"] == "error" and a["code"] == "rate_limited"]
        assert len(limited) >= 1 and "resend it in" in limited[0]["message"], answers
        over_http = httpx.post(venue.url + "/sessions/night/commands", headers={"Authorization": f"Bearer {venue.anna}"},
                               json={"id": "h1", "command": {"type": "take_action", "character": "anna"}})
        assert over_http.status_code == 429 and int(over_http.headers["retry-after"]) >= 1, over_http.text
        # a fourth socket on the same token is refused, told why
        fourth = hello(venue, venue.anna)
        reply = next(frames(fourth))
        assert reply["code"] == "rate_limited" and "sockets" in reply["message"]
        with pytest.raises(Exception):
            fourth.recv(timeout=10)
        assert fourth.close_code == CLOSE_RATE_LIMITED
    finally:
        for ws in sockets:
            ws.close()


def test_an_address_guessing_tokens_is_refused_then_told_when_to_retry(venue):
    for n in range(4):
        ws = hello(venue, f"guess-{n}")
        assert next(frames(ws))["code"] == "unauthorized"
        ws.close()
    ws = hello(venue, venue.anna)  # even a good token waits: the guesses counted for the address
    reply = next(frames(ws))
    assert reply["code"] == "rate_limited" and "retry in" in reply["message"], reply
    ws.close()
    refused = httpx.get(venue.url + "/me", headers={"Authorization": f"Bearer {venue.anna}"})
    assert refused.status_code == 429 and 1 <= int(refused.headers["retry-after"]) <= 60


def test_a_socket_that_goes_on_flooding_after_its_drops_is_closed(venue):
    ws = hello(venue, venue.anna)
    got = frames(ws)
    next(f for f in got if f["type"] == "live")
    for _ in range(40):  # a burst of 10 (hello was one), then 10 dropped, then the close
        try:
            ws.send('{"type":"ping"}')
        except Exception:
            break
    seen = []
    with pytest.raises(Exception):
        while True:
            seen.append(next(got))
    assert "rate_limited" in [f["code"] for f in seen if f["type"] == "error"]  # told before the close
    assert ws.close_code == CLOSE_RATE_LIMITED and "flooding" in (ws.close_reason or "")
