"""A bound on player-declared bonuses: the session option
``max_player_bonus`` (roster ``[options]``, default 3, docs/rules-choices.md), beyond which a
player's roll is refused naming the option; storytellers unbounded; every bonus logged."""

from __future__ import annotations

import httpx
import pytest

from conteur.events.action import RollAction
from conteur.events.model import STORYTELLER, Actor
from conteur.events.met import MetOptions
from conteur.events.session import CharacterAdded, OpenSession, SessionOpened
from conteur.events.sheets import ActionSheet, V5Sheet
from conteur.events.testing import assert_refuses, decide_after
from conteur.events.v5 import RollPool
from conteur.server.testing import Device, Venue

VIC = Actor(role="player", character="vic", name="Vic")
ADA = Actor(role="player", character="ada", name="Ada")


def opened(limit: int | None = None) -> list:
    options = MetOptions() if limit is None else MetOptions(max_player_bonus=limit)
    return [
        SessionOpened(name="n", options=options),
        CharacterAdded(character="vic", name="Vic",
                       sheet=V5Sheet(attributes={"Dexterity": 3}, skills={"Stealth": 2}, hunger=0)),
        CharacterAdded(character="ada", name="Ada", sheet=ActionSheet(characteristics={"Science": 5})),
    ]


def pool(bonus: int) -> RollPool:
    return RollPool(character="vic", attribute="Dexterity", skill="Stealth", bonus=bonus)


def act(bonus: int) -> RollAction:
    return RollAction(character="ada", characteristic="Science", difficulty=2, bonus=bonus)


def test_the_default_is_three_and_open_session_records_the_option():
    assert MetOptions().max_player_bonus == 3 and OpenSession().max_player_bonus == 3
    (event,) = decide_after([], OpenSession(max_player_bonus=5))
    assert event.options.max_player_bonus == 5
    assert_refuses(given=[], when=OpenSession(max_player_bonus=-1), code="invalid",
                   match="max_player_bonus")


def test_a_players_pool_bonus_beyond_the_option_is_refused_naming_it():
    violation = assert_refuses(given=opened(), when=pool(26), actor=VIC, code="rule",
                               match="max_player_bonus of 3")
    assert violation.rule == "max_player_bonus"
    assert_refuses(given=opened(), when=pool(4), actor=VIC, match="max_player_bonus")
    (rolled,) = decide_after(opened(), pool(3), actor=VIC, draws=[6] * 8)
    assert rolled.pool == 8 and rolled.bonus == 3  # logged in the event
    (rolled,) = decide_after(opened(), pool(-2), actor=VIC, draws=[6] * 3)
    assert rolled.pool == 3 and rolled.bonus == -2  # removing dice is never bounded


def test_a_players_action_bonus_beyond_the_option_is_refused_naming_it():
    assert_refuses(given=opened(), when=act(10), actor=ADA, code="rule", match="max_player_bonus of 3")
    events = decide_after(opened(), act(3), actor=ADA, draws=[8, 8, 8, 5, 5, 5])
    assert events[0].bonus == 3 and events[0].net == 3


def test_the_option_moves_the_bound_both_ways():
    assert_refuses(given=opened(1), when=act(2), actor=ADA, match="max_player_bonus of 1")
    assert_refuses(given=opened(0), when=pool(1), actor=VIC, match="max_player_bonus of 0")
    (rolled,) = decide_after(opened(10), pool(10), actor=VIC, draws=[6] * 15)
    assert rolled.bonus == 10


def test_storytellers_are_unbounded_and_their_bonus_is_logged():
    (rolled,) = decide_after(opened(0), pool(20), actor=STORYTELLER, draws=[6] * 25)
    assert rolled.pool == 25 and rolled.bonus == 20
    events = decide_after(opened(0), act(12), actor=STORYTELLER, draws=[8, 8, 8] + [5] * 12)
    assert events[0].bonus == 12


@pytest.fixture
def venue(tmp_path):
    with Venue(tmp_path / "chronicle.db") as v:
        yield v


async def test_the_roster_option_bounds_a_phone_over_the_wire(venue):
    roster = {
        "name": "Night", "ruleset": "v5", "options": {"max_player_bonus": 2},
        "characters": [{"id": "vic", "name": "Vic",
                        "sheet": {"attributes": {"Dexterity": 3}, "skills": {"Stealth": 2}}}],
    }
    headers = {"Authorization": f"Bearer {venue.token()}"}
    reply = httpx.post(f"{venue.url}/sessions/s1/roster", json=roster, headers=headers)
    assert reply.status_code == 200, reply.text
    assert venue.runtime.chronicle.state("s1").session.options.max_player_bonus == 2
    async with Device(venue.ws_url, venue.token("player", "vic", session="s1"), "s1") as phone:
        refused = await phone.command(msgspec_dict(pool(3)))
        assert refused["type"] == "reject" and refused["code"] == "rule"
        assert "max_player_bonus of 2" in refused["message"]
        ack = await phone.command(msgspec_dict(pool(2)))
        assert ack["type"] == "ack"
        rolled = await phone.wait_event("v5.pool_rolled")
        assert rolled["bonus"] == 2 and rolled["pool"] == 7


def msgspec_dict(command) -> dict:
    import msgspec

    return msgspec.to_builtins(command)
