"""A safety call reaches every storyteller of the venue (server/core/safety.py): over a
real server with two sessions, a storyteller on the other session gets ``venue_calls``
at once, after a reconnect and after a restart; one bound to the other session learns
where, not who; no player and no wall of either session gets the frame."""

from __future__ import annotations

import asyncio

from conteur.server.testing import Device as Socket, Venue

SHEET = {"kind": "met", "physical": 5, "social": 3, "mental": 3}


async def night(venue: Venue, session: str, name: str, characters: list[str]) -> None:
    async with Socket(venue.ws_url, venue.token("storyteller", session=session), session) as st:
        for command in [{"type": "open_session", "name": name}] + [
                {"type": "add_character", "character": c, "name": c.title(), "sheet": SHEET} for c in characters]:
            assert (await st.command(command))["type"] == "ack", command


def venue_calls(device: Socket) -> list[dict]:
    return [f for f in device.frames if f["type"] == "venue_calls"]


async def last_venue_calls(device: Socket, count: int) -> dict:
    """The device's latest ``venue_calls`` frame, once it lists ``count`` calls: what its
    tablet shows now."""
    seen = [i for i, f in enumerate(device.frames) if f["type"] == "venue_calls"]
    start = seen[-1] if seen else 0
    return await device.wait_for(lambda f: f["type"] == "venue_calls" and len(f["calls"]) == count, start=start)


def test_a_safety_call_reaches_the_storytellers_of_every_session_and_no_one_else(tmp_path):
    with Venue(tmp_path / "c.db") as venue:
        asyncio.run(night(venue, "cellar", "The cellar", ["anna", "bruno"]))
        asyncio.run(night(venue, "garden", "The garden", ["clara"]))
        head = venue.runtime.tokens.issue("storyteller", name="Morgane")  # every session
        bound = venue.runtime.tokens.issue("storyteller", session="garden", name="Léa")

        async def play() -> None:
            anna = Socket(venue.ws_url, venue.token("player", "anna", "cellar"), "cellar", create=False)
            bruno = Socket(venue.ws_url, venue.token("player", "bruno", "cellar"), "cellar", create=False)
            clara = Socket(venue.ws_url, venue.token("player", "clara", "garden"), "garden", create=False)
            wall = Socket(venue.ws_url, venue.token("observer", session="garden"), "garden", create=False)
            cellar_wall = Socket(venue.ws_url, venue.token("observer", session="cellar"), "cellar", create=False)
            here = Socket(venue.ws_url, head, "cellar", create=False)
            there = Socket(venue.ws_url, head, "garden", create=False)
            lea = Socket(venue.ws_url, bound, "garden", create=False, batch=True)
            devices = (anna, bruno, clara, wall, cellar_wall, here, there, lea)
            for device in devices:
                await device.connect()
            assert (await anna.command({"type": "call_storyteller", "character": "anna", "kind": "ruling",
                                        "text": "who won?"}))["type"] == "ack"
            assert (await anna.command({"type": "call_storyteller", "character": "anna", "kind": "safety",
                                        "text": "Bruno fainted"}))["type"] == "ack"
            # the other session's storytellers: one whose token opens the cellar sees who and why
            told = await last_venue_calls(there, 1)
            assert told["calls"] == [{"session": "cellar", "session_name": "The cellar", "call": "anna.2",
                                      "character": "anna", "name": "Anna", "text": "Bruno fainted"}]
            # one bound to the garden learns that a safety call waits in the cellar, nothing more
            told = await last_venue_calls(lea, 1)
            assert told["calls"] == [{"session": "cellar", "session_name": "The cellar"}]
            # a ruling call stays in its session: no venue_calls came for it
            assert len(venue_calls(there)) == len(venue_calls(lea)) == 1
            assert (await bruno.command({"type": "call_storyteller", "character": "bruno",
                                         "kind": "safety"}))["type"] == "ack"
            assert [c.get("character") for c in (await last_venue_calls(there, 2))["calls"]] == ["anna", "bruno"]
            await last_venue_calls(lea, 2)
            # a reconnect is told again, from the sessions' state
            await lea.close()
            lea = Socket(venue.ws_url, bound, "garden", create=False)
            await lea.connect()
            await last_venue_calls(lea, 2)
            # taking a call takes it off every other tablet
            assert (await here.command({"type": "take_call", "call": "anna.2"}))["type"] == "ack"
            assert [c["call"] for c in (await last_venue_calls(there, 1))["calls"]] == ["bruno.1"]
            await last_venue_calls(lea, 1)
            for device in (anna, bruno, clara, wall, cellar_wall, here):
                await device.sync()
            # the cellar's own tablet has its calls as events, not as venue_calls
            assert not venue_calls(here)
            for device in (anna, bruno, clara, wall, cellar_wall):
                assert not venue_calls(device), device.session
                assert not any("fainted" in str(f) for f in device.frames if device is not anna)
            for device in (anna, bruno, clara, wall, cellar_wall, here, there, lea):
                await device.close()

        asyncio.run(play())
        venue.restart()

        async def after_restart() -> None:
            async with Socket(venue.ws_url, bound, "garden", create=False) as lea:
                told = await last_venue_calls(lea, 1)
                assert told["calls"] == [{"session": "cellar", "session_name": "The cellar"}]
            async with Socket(venue.ws_url, head, "cellar", create=False) as here:
                assert (await here.command({"type": "close_call", "call": "bruno.1"}))["type"] == "ack"
                async with Socket(venue.ws_url, bound, "garden", create=False) as lea:
                    await lea.sync()
                    assert not venue_calls(lea)  # nothing waits: nothing said

        asyncio.run(after_restart())


def test_a_closed_session_leaves_the_venues_list(tmp_path):
    with Venue(tmp_path / "c.db") as venue:
        asyncio.run(night(venue, "cellar", "The cellar", ["anna"]))
        asyncio.run(night(venue, "garden", "The garden", ["clara"]))

        async def play() -> None:
            anna = Socket(venue.ws_url, venue.token("player", "anna", "cellar"), "cellar", create=False)
            st = Socket(venue.ws_url, venue.token("storyteller", session="cellar"), "cellar", create=False)
            lea = Socket(venue.ws_url, venue.token("storyteller", session="garden"), "garden", create=False)
            for device in (anna, st, lea):
                await device.connect()
            assert (await anna.command({"type": "call_storyteller", "character": "anna",
                                        "kind": "safety"}))["type"] == "ack"
            await last_venue_calls(lea, 1)
            assert (await st.command({"type": "close_session"}))["type"] == "ack"
            await last_venue_calls(lea, 0)
            for device in (anna, st, lea):
                await device.close()

        asyncio.run(play())
