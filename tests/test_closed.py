"""Closed means closed (issue 13, Deliver 4; TIME-2, FAIR-2): once ``session.closed`` has
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

MET = {"kind": "met", "physical": 6, "social": 4, "mental": 5}
V5 = {"kind": "v5", "attributes": {"Dexterity": 3}, "skills": {"Stealth": 2}, "hunger": 1}
ACTION = {"kind": "action", "characteristics": {"Science": 5}}

SETUP = [
    {"type": "open_session", "name": "Night"},
    {"type": "open_scene", "scene": "hall"},
    {"type": "add_character", "character": "anna", "name": "Anna", "sheet": MET},
    {"type": "add_character", "character": "bruno", "name": "Bruno", "sheet": MET},
    {"type": "add_character", "character": "vic", "name": "Vic", "sheet": V5},
    {"type": "add_character", "character": "ada", "name": "Ada", "sheet": ACTION},
    {"type": "join_scene", "character": "anna", "scene": "hall"},
    {"type": "challenge", "character": "anna", "defender": "bruno", "attribute": "physical"},
    {"type": "roll_pool", "character": "vic", "attribute": "Dexterity", "skill": "Stealth"},
    {"type": "roll_action", "character": "ada", "characteristic": "Science", "difficulty": 2,
     "turns": 3},
    {"type": "record_offline_challenge", "character": "anna", "opponent": "bruno",
     "winner": "anna"},
]

# one command of each type, each one the rules would otherwise weigh (not a decode error)
EXAMPLES: dict[str, dict] = {
    "open_session": {"name": "again"},
    "close_session": {},
    "add_character": {"character": "zoe", "name": "Zoe"},
    "open_scene": {"scene": "crypt"},
    "close_scene": {"scene": "hall"},
    "join_scene": {"character": "bruno", "scene": "hall"},
    "leave_scene": {"character": "anna"},
    "freeze": {},
    "resume": {},
    "out_of_game": {"character": "anna"},
    "back_in_game": {"character": "anna"},
    "next_turn": {},
    "skip_time": {"seconds": 60},
    "set_turn_length": {"seconds": 5},
    "mark_no_sheet": {"character": "anna"},
    "take_action": {"character": "anna"},
    "amend_sheet": {"character": "anna", "sheet": MET},
    "challenge": {"character": "anna", "defender": "bruno", "attribute": "social"},
    "throw": {"character": "anna", "challenge": "c1", "round": 1, "choice": "rock"},
    "bid": {"character": "anna", "challenge": "c1", "round": 1, "value": 3},
    "retest": {"character": "anna", "challenge": "c1", "source": "Lucky"},
    "overbid": {"character": "anna", "challenge": "c1", "value": 6},
    "concede": {"character": "anna", "challenge": "c1"},
    "accept": {"character": "anna", "challenge": "c1"},
    "cancel_challenge": {"challenge": "c1"},
    "overrule": {"challenge": "c1", "winner": "anna"},
    "close_window": {"challenge": "c1"},
    "roll_pool": {"character": "vic", "attribute": "Dexterity", "skill": "Stealth"},
    "rouse": {"character": "vic"},
    "willpower_reroll": {"character": "vic", "roll": "r1", "strategy": "reroll_failures"},
    "set_hunger": {"character": "vic", "hunger": 3},
    "v5_settings": {"messy_rule": "official"},
    "roll_action": {"character": "ada", "characteristic": "Science", "difficulty": 2},
    "apply_modifier": {"character": "ada", "value": 1, "duration": 2},
    "rule_action": {"character": "ada", "ruling": "trivial"},
    "action_settings": {"dice": 3},
    "settle_opposition": {"roll": "a1", "outcome": "cancelled"},
    "cancel_action": {"roll": "a1"},
    "record_offline_challenge": {"character": "anna", "opponent": "bruno", "winner": "anna"},
    "confirm": {"character": "bruno", "record": "o1"},
    "dispute": {"character": "bruno", "record": "o1"},
    "rule_offline": {"record": "o1", "winner": "anna"},
}


def command(tag: str) -> dict:
    return {"type": tag, **EXAMPLES[tag]}


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
