"""Noninterference for calls (events/desk.py): two worlds on real servers, identical but for
what one player's calls to a storyteller are (a safety call, or a ruling, or a question,
with lines of other lengths), must look byte for byte the same to every other player and
to the wall: live, on resync, over HTTP and in their exports, before and after the close.
What they may see of it is what any event hidden from them shows, a gap in seq; the
kind, the line, who took it and when it closed never reach them, nor a counter or id that
counts calls. (DESIGN "Who sees what"; docs/protocol.md, ``call_storyteller``.)"""

from __future__ import annotations

import asyncio
import itertools

import pytest

from tests.support.noninterference import Step, differences, observe

SEED = bytes(range(32, 64))
CHARACTERS = ["anna", "bruno", "clara"]
OTHERS = ["bruno", "clara", "wall"]
_sessions = itertools.count(1)

WORLDS = {
    # anna's two calls in each world: (kind, line)
    "safety": [("safety", "Bruno fell down the stairs and is not answering"), ("question", "")],
    "ruling": [("ruling", "who won?"), ("safety", "I need to stop")],
}


def met_sheet(physical: int) -> dict:
    return {"kind": "met", "physical": physical, "social": 3, "mental": 3}


def script(calls: list[tuple[str, str]]) -> list[Step]:
    setup = [Step(who="st", command={"type": "open_session", "name": "Night"}),
             Step(who="st", command={"type": "open_scene", "scene": "hall", "name": "Hall"})]
    for who, physical in (("anna", 6), ("bruno", 5), ("clara", 4)):
        setup += [Step(who="st", command={"type": "add_character", "character": who, "name": who.title(),
                                          "sheet": met_sheet(physical)}),
                  Step(who="st", command={"type": "join_scene", "character": who, "scene": "hall"})]
    (kind1, text1), (kind2, text2) = calls
    return setup + [
        Step(who="anna", command={"type": "call_storyteller", "character": "anna", "kind": kind1, "text": text1}),
        # clara calls too, the same in both worlds: her call's id counts only hers
        Step(who="clara", command={"type": "call_storyteller", "character": "clara", "kind": "question"}),
        Step(who="st", command={"type": "announce", "text": "A storyteller is coming"}),
        Step(who="st", command={"type": "take_call", "call": "anna.1"}),
        Step(who="anna", command={"type": "call_storyteller", "character": "anna", "kind": kind2, "text": text2}),
        # probing: a player naming another's call is refused the same way in both worlds
        Step(who="bruno", command={"type": "call_storyteller", "character": "anna", "kind": "safety"}),
        Step(who="bruno", command={"type": "take_call", "call": "anna.1"}),
        Step(who="st", command={"type": "close_call", "call": "anna.1"}),
        Step(who="st", command={"type": "take_call", "call": "anna.2"}),
        Step(who="st", command={"type": "close_call", "call": "clara.1"}),
        Step(who="st", command={"type": "close_session"}),
    ]


@pytest.mark.parametrize("first,second", [("safety", "ruling"), ("ruling", "safety")])
def test_others_receive_the_same_bytes_whatever_a_players_calls(worlds, first, second):
    session = f"calls-{next(_sessions)}"

    async def both():
        return [await observe(venue, session, SEED, script(WORLDS[world]), CHARACTERS, OTHERS + ["anna"])
                for venue, world in zip(worlds, (first, second))]

    a, b = asyncio.run(both())
    diff = differences({k: a[k] for k in OTHERS}, {k: b[k] for k in OTHERS})
    assert not diff, "\n".join(diff[:10])
    # no record a player can read holds a call, its caller's own included (its exports)
    for world in (a, b):
        assert any(b"desk.storyteller_called" in m.encode() for m in world["anna"]["live"])  # she saw her own
        for name in ("anna", "clara"):
            for key, (status, body) in world[name]["http"].items():
                if key.startswith("export."):
                    assert status == 200, key
                    for trace in (b"storyteller_called", b"call_taken", b"call_closed", b"called a storyteller",
                                  b"Bruno fell", b"I need to stop"):
                        assert trace not in body, (name, key, trace)
