"""Closed means closed (TIME-2, FAIR-2): once ``session.closed`` has
revealed the draw seed, every command type is refused for every role, storytellers
included, with a message naming TIME-2, and the log gains no play.

The examples below are checked against ``game.COMMAND_BY_TAG``: a new command type fails
this test until it has an example here, so it cannot escape the rule unseen."""

from __future__ import annotations

import msgspec
import pytest

from conteur.events import game
from conteur.events.model import STORYTELLER, Actor, RuleViolation, ScriptedDraws
from conteur.server.testing import Device, Venue
from tests.support.every_command import EXAMPLES, SETUP, command


# one command of each type, each one the rules would otherwise weigh (not a decode error)



def test_every_command_type_has_an_example():
    assert set(EXAMPLES) == set(game.COMMAND_BY_TAG), "add an example for the new command type"
    for tag in EXAMPLES:  # each decodes: its refusal comes from the rules, not the decoder
        msgspec.convert(command(tag), game.AnyCommand)


ROLES = [
    STORYTELLER,
    Actor(role="player", character="anna", name="anna"),
    Actor(role="observer", name="wall"),
]


@pytest.mark.parametrize("actor", ROLES, ids=lambda a: a.role)
def test_decide_refuses_every_command_type_after_close(actor):
    state = game.initial()
    from conteur.events.session import CloseSession

    for raw in SETUP + [{"type": "close_session"}]:
        cmd = msgspec.convert(raw, game.AnyCommand)
        state = game.fold(game.decide(state, cmd, ScriptedDraws([5] * 20, start=state.draw_counter),
                                      actor=STORYTELLER), state)
    assert state.session.status == "closed"
    assert CloseSession in game.COMMAND_TYPES
    for tag in EXAMPLES:
        cmd = msgspec.convert(command(tag), game.AnyCommand)
        with pytest.raises(RuleViolation) as refused:
            game.decide(state, cmd, ScriptedDraws([10] * 20, start=state.draw_counter), actor=actor)
        assert refused.value.rule == "TIME-2" and "closed (TIME-2)" in refused.value.message, tag
        assert refused.value.code == "rule", tag


@pytest.fixture
def venue(tmp_path):
    with Venue(tmp_path / "chronicle.db") as v:
        yield v


async def test_after_close_every_command_type_is_refused_for_every_role_over_the_wire(venue):
    st = Device(venue.ws_url, venue.token(session="s1"), "s1")
    await st.connect()
    for raw in SETUP:
        assert (await st.command(raw))["type"] == "ack", raw
    assert (await st.command({"type": "close_session"}))["type"] == "ack"
    head = venue.runtime.hub.head("s1")
    devices = {"storyteller": st}
    for name, role, character in (("anna", "player", "anna"), ("wall", "observer", None)):
        devices[name] = Device(venue.ws_url, venue.token(role, character, session="s1"), "s1")
        await devices[name].connect()
    for tag in EXAMPLES:
        for name, device in devices.items():
            reply = await device.command(command(tag), entropy="searched offline")
            assert reply["type"] == "reject", (tag, name, reply)
            assert reply["code"] == "rule" and "closed (TIME-2)" in reply["message"], (tag, name, reply)
    for device in devices.values():
        await device.close()
    # nothing but the refusals themselves (kept as evidence) was appended after the close
    rows = venue.runtime.store.read_after("s1", head)
    assert {r.type for r in rows} <= {"command_rejected"}
    state = venue.runtime.chronicle.state("s1")
    assert state.session.status == "closed" and "zoe" not in state.session.characters
