"""Whole plays over real websockets: a Mind's Eye Theatre challenge between two phones and a
storyteller's tablet, V5 and action-dice rolls, Time Out, a dropout mid-challenge and a
server restart. Every device is a real ``websockets`` client on loopback."""

from __future__ import annotations

import asyncio

import pytest

from conteur.server.core.timers import ManualClock
from conteur.server.web.app import Settings
from conteur.server.testing import Device, Venue
from tests.support.asyncapi_support import check_frames

# every frame these nights' devices send and receive is one the AsyncAPI document describes
frames_checked = check_frames()


@pytest.fixture
def venue(tmp_path):
    with Venue(tmp_path / "chronicle.db") as v:
        yield v


MET_SETUP = [
    {"type": "open_session", "name": "Elysium"},
    {"type": "add_character", "character": "anna", "name": "Anna",
     "sheet": {"kind": "met", "physical": 6, "social": 3, "mental": 4, "abilities": {"Brawl": 2}}},
    {"type": "add_character", "character": "bruno", "name": "Bruno",
     "sheet": {"kind": "met", "physical": 5, "social": 5, "mental": 5, "merits": ["Lucky"]}},
    {"type": "open_scene", "scene": "hall", "name": "Great hall"},
    {"type": "join_scene", "character": "anna", "scene": "hall"},
    {"type": "join_scene", "character": "bruno", "scene": "hall"},
]


async def setup(st: Device, commands: list[dict]) -> None:
    for command in commands:
        result = await st.command(command)
        assert result["type"] == "ack", result


def throw(character: str, choice: str, round: int = 1, challenge: str = "c1") -> dict:
    return {"type": "throw", "character": character, "challenge": challenge, "round": round,
            "choice": choice}


def bid(character: str, value: int, round: int = 1, challenge: str = "c1") -> dict:
    return {"type": "bid", "character": character, "challenge": challenge, "round": round,
            "value": value}


async def until(condition, timeout: float = 10) -> None:
    """Waits for something the server does on its own thread (a timer armed or cancelled)."""
    for _ in range(int(timeout / 0.01)):
        if condition():
            return
        await asyncio.sleep(0.01)
    raise AssertionError("the server never got there")


def of_type(device: Device, event_type: str) -> list[dict]:
    return [e for _, e in device.events if e["type"] == event_type]


async def test_met_challenge_with_a_tie_bids_and_a_retest_between_two_phones(venue):
    """MET-2 sealed throws, MET-3 a tie goes to bids (initiator first, bids secret to the
    storyteller), MET-12 the loser retests once, MET-16 the loser accepts."""
    st = Device(venue.ws_url, venue.token(), "night")
    anna = Device(venue.ws_url, venue.token("player", "anna", "night"), "night")
    bruno = Device(venue.ws_url, venue.token("player", "bruno", "night"), "night")
    async with st, anna, bruno:
        await setup(st, MET_SETUP)
        issued = await anna.command({"type": "challenge", "character": "anna", "kind": "classic",
                                     "attribute": "physical", "defender": "bruno"})
        assert issued["type"] == "ack"
        await bruno.wait_event("met.challenge_issued", challenge="c1")

        # MET-2: anna's throw is sealed for bruno until both are in
        assert (await anna.command(throw("anna", "rock")))["type"] == "ack"
        sealed = await bruno.wait_event("met.throw_committed", character="anna")
        assert sealed["choice"] is None and sealed["draws"] == []
        assert (await st.wait_event("met.throw_committed", character="anna"))["choice"] == "rock"
        assert (await bruno.command(throw("bruno", "rock")))["type"] == "ack"
        for device in (st, anna, bruno):
            revealed = await device.wait_event("met.throws_revealed", round=1)
            assert revealed["throws"] == {"anna": "rock", "bruno": "rock"} and revealed["winner"] is None

        # MET-3: the defender may not bid first; then bids, secret but to the storyteller
        early = await bruno.command(bid("bruno", 5))
        assert early["type"] == "reject" and "MET-3" in early["message"]
        assert (await anna.command(bid("anna", 6)))["type"] == "ack"
        assert (await bruno.command(bid("bruno", 5)))["type"] == "ack"
        compared = await bruno.wait_event("met.bids_compared", round=1)
        assert compared["winner"] == "anna"
        await st.sync(), await anna.sync(), await bruno.sync()
        assert [b["value"] for b in of_type(st, "met.bid_declared")] == [6, 5]
        assert [b["value"] for b in of_type(bruno, "met.bid_declared")] == [None, 5]
        assert [b["value"] for b in of_type(anna, "met.bid_declared")] == [6, None]

        # MET-12: bruno lost on bids and retests with his Lucky merit
        assert (await bruno.command({"type": "retest", "character": "bruno", "challenge": "c1",
                                     "source": "Lucky"}))["type"] == "ack"
        await anna.wait_event("met.round_started", round=2, reason="retest")
        assert (await bruno.command(throw("bruno", "rock", round=2)))["type"] == "ack"
        assert (await anna.command(throw("anna", "paper", round=2)))["type"] == "ack"
        won = await bruno.wait_event("met.round_won", round=2)
        assert (won["winner"], won["by"]) == ("anna", "throw")
        again = await bruno.command({"type": "retest", "character": "bruno", "challenge": "c1",
                                     "source": "Lucky"})
        assert again["type"] == "reject" and "MET-12" in again["message"]
        assert (await bruno.command({"type": "accept", "character": "bruno",
                                     "challenge": "c1"}))["type"] == "ack"
        for device in (st, anna, bruno):
            resolved = await device.wait_event("met.challenge_resolved", challenge="c1")
            assert (resolved["winner"], resolved["reason"]) == ("anna", "accepted")

        # every device saw its events in seq order, without gaps in what it may see
        for device in (st, anna, bruno):
            seqs = [seq for seq, _ in device.events]
            assert seqs == sorted(set(seqs))
        assert [s for s, _ in st.events] == list(range(1, st.events[-1][0] + 1))
        # the storyteller alone saw bruno's refused attempts (evidence); anna never did
        assert len(of_type(st, "command_rejected")) == 2
        assert of_type(anna, "command_rejected") == []
        assert len(of_type(bruno, "command_rejected")) == 2


async def test_v5_roll_open_and_secret(venue):
    """V5-1..5: an open roll reaches everyone; a secret one only its roller and storytellers."""
    st = Device(venue.ws_url, venue.token(), "v5")
    iris = Device(venue.ws_url, venue.token("player", "iris", "v5"), "v5")
    viktor = Device(venue.ws_url, venue.token("player", "viktor", "v5"), "v5")
    async with st, iris, viktor:
        await setup(st, [
            {"type": "open_session", "name": "Harbour"},
            {"type": "add_character", "character": "iris", "name": "Iris", "sheet": {
                "kind": "v5", "attributes": {"dexterity": 3}, "skills": {"stealth": 3}, "hunger": 2}},
            {"type": "add_character", "character": "viktor", "name": "Viktor", "sheet": {
                "kind": "v5", "attributes": {"strength": 4}, "skills": {"brawl": 4}, "hunger": 1}},
        ])
        ack = await iris.command({"type": "roll_pool", "character": "iris", "attribute": "dexterity",
                                  "skill": "stealth", "difficulty": 2}, entropy="a1b2")
        assert ack["type"] == "ack"
        for device in (st, iris, viktor):
            rolled = await device.wait_event("v5.pool_rolled", character="iris")
            assert len(rolled["draws"]) == 6 and rolled["draws"][0][3] == "a1b2"
        secret = await iris.command({"type": "roll_pool", "character": "iris", "attribute": "dexterity",
                                     "skill": "stealth", "visibility": "secret"})
        assert secret["type"] == "ack"
        await st.sync(), await iris.sync(), await viktor.sync()
        assert len(of_type(st, "v5.pool_rolled")) == len(of_type(iris, "v5.pool_rolled")) == 2
        assert len(of_type(viktor, "v5.pool_rolled")) == 1
        assert max(s for s, _ in viktor.events) < secret["seqs"][0]


async def test_action_dice_roll(venue):
    """ACT-3, ACT-11: three d8 against the characteristic's threshold, PS against difficulty."""
    st = Device(venue.ws_url, venue.token(), "omega")
    nova = Device(venue.ws_url, venue.token("player", "nova", "omega"), "omega")
    async with st, nova:
        await setup(st, [
            {"type": "open_session", "name": "Station Omega"},
            {"type": "add_character", "character": "nova", "name": "Nova", "sheet": {
                "kind": "action", "characteristics": {"science": 5}, "expertises": ["hacking"]}},
        ])
        ack = await nova.command({"type": "roll_action", "character": "nova", "test": "Test (science, 2)"})
        assert ack["type"] == "ack", ack
        rolled = await st.wait_event("action.rolled", character="nova")
        assert [d[1] for d in rolled["draws"]] == [8, 8, 8]
        mine = await nova.wait_event("action.rolled", character="nova")
        assert mine == rolled


async def test_time_out_refuses_player_commands_with_frozen_and_survives_a_restart(venue):
    """TIME-5: only a storyteller freezes; a frozen session refuses play with code
    ``frozen``; the freeze is folded from the log, so a restart keeps it."""
    st = Device(venue.ws_url, venue.token(), "night")
    anna_token = venue.token("player", "anna", "night")
    async with st, Device(venue.ws_url, anna_token, "night") as anna:
        await setup(st, MET_SETUP)
        assert (await anna.command({"type": "freeze"}))["code"] == "forbidden"
        assert (await st.command({"type": "freeze"}))["type"] == "ack"
        await anna.wait_event("session.time_out_called")
        refused = await anna.command({"type": "challenge", "character": "anna", "kind": "classic",
                                      "attribute": "physical", "defender": "bruno"})
        assert refused["type"] == "reject" and refused["code"] == "frozen"
    venue.restart()
    async with Device(venue.ws_url, venue.token(), "night") as st2, \
            Device(venue.ws_url, anna_token, "night") as anna2:
        refused = await anna2.command({"type": "challenge", "character": "anna", "kind": "classic",
                                       "attribute": "physical", "defender": "bruno"})
        assert refused["code"] == "frozen"
        assert (await st2.command({"type": "resume"}))["type"] == "ack"
        await anna2.wait_event("session.time_out_ended")
        ok = await anna2.command({"type": "challenge", "character": "anna", "kind": "classic",
                                  "attribute": "physical", "defender": "bruno"})
        assert ok["type"] == "ack", ok


async def test_a_phone_dropping_mid_challenge_gets_exactly_what_it_missed(venue):
    st = Device(venue.ws_url, venue.token(), "night")
    bruno_token = venue.token("player", "bruno", "night")
    anna = Device(venue.ws_url, venue.token("player", "anna", "night"), "night")
    async with st, anna:
        await setup(st, MET_SETUP)
        async with Device(venue.ws_url, bruno_token, "night", device="phone") as bruno:
            await anna.command({"type": "challenge", "character": "anna", "kind": "classic",
                                "attribute": "physical", "defender": "bruno"})
            await bruno.wait_event("met.challenge_issued")
            await bruno.sync()
            held = bruno.events
        last = held[-1][0]
        # bruno's phone is gone; anna throws meanwhile
        await anna.command(throw("anna", "scissors"))
        await st.wait_event("met.throw_committed", character="anna")
        async with Device(venue.ws_url, bruno_token, "night", device="phone", after=last) as bruno:
            missed = bruno.events
            assert [e["type"] for _, e in missed] == ["met.throw_committed"]
            assert missed[0][1]["choice"] is None  # still sealed after the resync
            assert bruno.live_head == missed[-1][0]
            # its throw after the resync completes the round for everyone
            assert (await bruno.command(throw("bruno", "rock")))["type"] == "ack"
            won = await anna.wait_event("met.round_won")
            assert (won["winner"], won["by"]) == ("bruno", "throw")
        async with Device(venue.ws_url, bruno_token, "night", device="phone") as fresh:
            await fresh.sync()
            everything = fresh.events
        assert everything[:len(held)] == held
        assert [s for s, _ in everything] == sorted({s for s, _ in everything})


async def test_devices_converge_after_a_server_restart(venue):
    st_token = venue.token()
    tokens = {c: venue.token("player", c, "night") for c in ("anna", "bruno")}
    st = Device(venue.ws_url, st_token, "night")
    phones = {c: Device(venue.ws_url, t, "night", device=c) for c, t in tokens.items()}
    async with st, phones["anna"], phones["bruno"]:
        await setup(st, MET_SETUP)
        await phones["anna"].command({"type": "challenge", "character": "anna", "kind": "classic",
                                      "attribute": "physical", "defender": "bruno"})
        await phones["anna"].command(throw("anna", "paper"))
        for device in (st, *phones.values()):
            await device.sync()
        before = {name: d.events for name, d in (("st", st), *phones.items())}
        seen = {name: d.after for name, d in (("st", st), *phones.items())}
    venue.restart()
    st = Device(venue.ws_url, st_token, "night", after=seen["st"])
    phones = {c: Device(venue.ws_url, t, "night", device=c, after=seen[c]) for c, t in tokens.items()}
    async with st, phones["anna"], phones["bruno"]:
        assert st.events == [] and st.live_head == seen["st"]
        # the challenge goes on where it was: bruno's throw reveals anna's sealed paper
        assert (await phones["bruno"].command(throw("bruno", "rock")))["type"] == "ack"
        for device in (st, *phones.values()):
            revealed = await device.wait_event("met.throws_revealed")
            assert revealed["throws"] == {"anna": "paper", "bruno": "rock"}
            await device.sync()
        after = {"st": st.events, **{c: d.events for c, d in phones.items()}}
    async with Device(venue.ws_url, st_token, "night") as whole:
        await whole.sync()
        assert whole.events == before["st"] + after["st"]
    for name in ("anna", "bruno"):
        async with Device(venue.ws_url, tokens[name], "night") as again:
            await again.sync()
            assert again.events == before[name] + after[name]


async def test_met_16_an_open_window_closes_by_itself_after_accept_timeout_even_across_a_restart(venue):
    """MET-16 (choice): the server closes a retest/overbid window after the session's
    ``accept_timeout``; the closing is a logged event, and a restart re-arms it."""
    setup_quick = [dict(MET_SETUP[0], accept_timeout=1), *MET_SETUP[1:]]
    clock = ManualClock()
    venue.settings = Settings(window_timers=False, timer_clock=clock)  # the first server never closes it
    venue.restart()
    st_token = venue.token()
    async with Device(venue.ws_url, st_token, "night") as st:
        await setup(st, setup_quick)
        for command in ({"type": "challenge", "character": "anna", "kind": "classic",
                         "attribute": "physical", "defender": "bruno"},
                        throw("anna", "paper"), throw("bruno", "rock")):
            assert (await st.command(command))["type"] == "ack"
        won = await st.wait_event("met.round_won")
        assert won["loser"] == "bruno"  # bruno may retest (Lucky) or overbid: a window
        clock.advance(3)  # three timeouts pass
        await st.sync()
        assert st.types()[-1] == "met.round_won" and clock.sleeping == 0  # no timer on this server
        head = st.after
    venue.settings = Settings(timer_clock=clock)
    venue.restart()
    async with Device(venue.ws_url, st_token, "night", after=head) as st:
        await until(lambda: clock.sleeping == 1)  # re-armed from the log at start-up
        clock.advance(0.5)
        await st.sync()
        assert "met.challenge_resolved" not in st.types()  # half the timeout: still open
        clock.advance(0.5)
        resolved = await st.wait_event("met.challenge_resolved", timeout=15)
        assert (resolved["winner"], resolved["reason"]) == ("anna", "timeout")


async def test_met_16_time_5_a_time_out_stops_the_window_clock_until_resume(venue):
    """TIME-5 / MET-16 (choice): during a Time Out the window's timer is not armed, so no
    refused ``close_window`` lands in the log; after resume the window closes on its
    timeout as usual."""
    setup_quick = [dict(MET_SETUP[0], accept_timeout=1), *MET_SETUP[1:]]
    clock = ManualClock()
    venue.settings = Settings(timer_clock=clock)
    venue.restart()
    async with Device(venue.ws_url, venue.token(), "night") as st:
        await setup(st, setup_quick)
        for command in ({"type": "freeze", "scope": "session"},
                        {"type": "resume", "scope": "session"},
                        {"type": "challenge", "character": "anna", "kind": "classic",
                         "attribute": "physical", "defender": "bruno"},
                        throw("anna", "paper"), throw("bruno", "rock")):
            assert (await st.command(command))["type"] == "ack", command
        await st.wait_event("met.round_won")
        await until(lambda: clock.sleeping == 1)  # the window's timer
        assert (await st.command({"type": "freeze", "scope": "session"}))["type"] == "ack"
        await until(lambda: clock.sleeping == 0)  # the Time Out cancelled it
        clock.advance(3)  # three timeouts pass during the Time Out
        await st.sync()
        assert "met.challenge_resolved" not in st.types()
        assert not [e for e in of_type(st, "command_rejected") if e["command_type"] == "close_window"]
        assert (await st.command({"type": "resume", "scope": "session"}))["type"] == "ack"
        await until(lambda: clock.sleeping == 1)  # a full timeout again after resume
        clock.advance(1)
        resolved = await st.wait_event("met.challenge_resolved", timeout=15)
        assert (resolved["winner"], resolved["reason"]) == ("anna", "timeout")
        assert not [e for e in of_type(st, "command_rejected") if e["command_type"] == "close_window"]


async def test_a_device_asking_for_batches_resyncs_in_a_few_messages_in_the_same_order(venue):
    st_token = venue.token()
    async with Device(venue.ws_url, st_token, "night") as st:
        await setup(st, MET_SETUP)
        for n in range(150):  # within the rate limit's burst
            await st.command({"type": "open_scene", "scene": f"room-{n}"})
        await st.sync()
        single = st.events
    async with Device(venue.ws_url, st_token, "night", batch=True) as batched:
        assert batched.events == single
        assert batched.messages < 10  # welcome, a couple of batches, live
        assert [f["type"] for f in batched.frames][-1] == "live"
    async with Device(venue.ws_url, st_token, "night", after=single[100][0], batch=True) as later:
        assert later.events == single[101:]
