"""Noninterference for a safety call told across the venue (server/core/safety.py): two
worlds on real servers, each with two sessions, identical but for the kind of anna's call
in the cellar (a safety call, told to every storyteller of the venue, or a ruling, kept in
its session). Every frame of every type that a player or a wall of either session gets,
live and on resync, and every body they can fetch over HTTP (their events, state and
exports), is byte for byte the same in both: nothing of the venue's alert reaches them.
(docs/protocol.md, ``venue_calls``; docs/architecture.md, who sees what.) The storyteller
of the garden does get a ``venue_calls`` frame in the safety world: the test holds that
too, so the two worlds do differ where they should."""

from __future__ import annotations

import asyncio
import itertools

import httpx
import msgspec

from conteur.server.testing import Venue
from tests.support.noninterference import EXPORTS, _Raw, differences, mask_times, plant_seed

SEEDS = {"cellar": bytes(range(32, 64)), "garden": bytes(range(64, 96))}
ROSTER = {"cellar": ["anna", "bruno"], "garden": ["clara", "dan"]}
_runs = itertools.count(1)


def sheet(physical: int) -> dict:
    return {"kind": "met", "physical": physical, "social": 3, "mental": 3}


async def world(venue: Venue, run: int, kind: str) -> dict[str, dict]:
    names = {place: f"{place}-{run}" for place in ROSTER}
    tokens: dict[str, tuple[str, str]] = {}  # viewer -> (token, session)
    for place, session in names.items():
        plant_seed(venue, session, SEEDS[place])
        tokens[f"st-{place}"] = (venue.token("storyteller", session=session), session)
        tokens[f"wall-{place}"] = (venue.token("observer", session=session), session)
        for c in ROSTER[place]:
            tokens[c] = (venue.token("player", c, session), session)
    devices = {who: _Raw(venue.ws_url, token, session, f"{session}-{who}") for who, (token, session) in tokens.items()}
    for device in devices.values():
        await device.connect()
    steps = 0

    async def send(who: str, command: dict) -> None:
        nonlocal steps
        steps += 1
        answer = await devices[who].command(command, f"{run}-{steps}", "")
        assert answer["type"] in ("ack", "reject"), (who, command, answer)

    for place, session in names.items():
        await send(f"st-{place}", {"type": "open_session", "name": place.title()})
        await send(f"st-{place}", {"type": "open_scene", "scene": "hall", "name": "Hall"})
        for physical, c in enumerate(ROSTER[place], 4):
            await send(f"st-{place}", {"type": "add_character", "character": c, "name": c.title(),
                                       "sheet": sheet(physical)})
            await send(f"st-{place}", {"type": "join_scene", "character": c, "scene": "hall"})
    await send("anna", {"type": "call_storyteller", "character": "anna", "kind": kind,
                        "text": "Bruno fell down the stairs"})
    await send("st-garden", {"type": "announce", "text": "Ten minutes to midnight"})
    await send("clara", {"type": "call_storyteller", "character": "clara", "kind": "question"})
    await send("st-cellar", {"type": "take_call", "call": "anna.1"})
    await send("st-cellar", {"type": "close_call", "call": "anna.1"})
    await send("st-garden", {"type": "close_session"})
    await send("st-cellar", {"type": "close_session"})
    for device in devices.values():
        await device.sync()
    seen = {who: {"frames": [m for m in device.messages if msgspec.json.decode(m)["type"] != "pong"]}
            for who, device in devices.items()}
    for device in devices.values():
        await device.close()
    for who, (token, session) in tokens.items():
        fresh = _Raw(venue.ws_url, token, session, f"{session}-{who}-again")
        await fresh.connect()
        await fresh.sync()
        await fresh.close()
        seen[who]["resync"] = [m for m in fresh.messages if msgspec.json.decode(m)["type"] != "pong"]
        bodies = {}
        with httpx.Client(base_url=venue.url, headers={"Authorization": f"Bearer {token}"}) as http:
            for path in ("events", "state"):
                response = http.get(f"/sessions/{session}/{path}")
                bodies[path] = (response.status_code, response.content)
            for fmt in EXPORTS:
                response = http.get(f"/sessions/{session}/export", params={"format": fmt})
                bodies[f"export.{fmt}"] = (response.status_code, mask_times(response.content))
        seen[who]["http"] = bodies
    return seen


def test_no_player_and_no_wall_of_any_session_learns_of_a_safety_call_told_to_the_venue(worlds):
    run = next(_runs)

    async def both():
        return [await world(venue, run, kind) for venue, kind in zip(worlds, ("safety", "ruling"))]

    safety, ruling = asyncio.run(both())
    players = ["bruno", "clara", "dan", "wall-cellar", "wall-garden"]
    diff = differences({k: safety[k] for k in players}, {k: ruling[k] for k in players})
    assert not diff, "\n".join(diff[:10])
    for who in players + ["anna"]:
        assert not any('"venue_calls"' in m for m in safety[who]["frames"] + safety[who]["resync"]), who
    # the garden's storyteller was told, where the worlds may differ: a safety call, then none left
    told = [msgspec.json.decode(m) for m in safety["st-garden"]["frames"] if '"venue_calls"' in m]
    assert [len(f["calls"]) for f in told] == [1, 0], told
    assert told[0]["calls"][0] == {"session": f"cellar-{run}", "session_name": "Cellar"}
    assert not any('"venue_calls"' in m for m in ruling["st-garden"]["frames"])
