"""A group challenge played through the real command path (no tests here): Anna against
Bruno, Clara and Dora at once (MET-1), with sealed throws, a tie settled by bids, one
retest and two overbids, until the group is settled."""

from __future__ import annotations

from conteur.events.model import STORYTELLER, Actor
from conteur.server.core.service import Chronicle
from conteur.server.store.sqlite import SQLiteStore
from tests.support.review_support import run

SHEETS = {
    "anna": {"kind": "met", "physical": 10, "social": 3, "mental": 3, "abilities": {"Brawl": 2}},
    "bruno": {"kind": "met", "physical": 5, "social": 4, "mental": 3, "abilities": {"Dodge": 1}},
    "clara": {"kind": "met", "physical": 5, "social": 4, "mental": 4, "abilities": {"Athletics": 1}},
    "dora": {"kind": "met", "physical": 4, "social": 6, "mental": 5, "abilities": {"Melee": 1}},
}
DEFENDERS = ("bruno", "clara", "dora")


def player(character: str) -> Actor:
    return Actor(role="player", character=character, name=character)


def open_group_session(chronicle: Chronicle, sid: str) -> None:
    def go(actor, tag, **fields):
        run(chronicle, actor, tag, sid, **fields)

    go(STORYTELLER, "open_session", name="The brawl")
    for who, sheet in SHEETS.items():
        go(STORYTELLER, "add_character", character=who, name=who.title(), sheet=sheet)
    go(STORYTELLER, "open_scene", scene="yard", name="Yard")
    for who in SHEETS:
        go(player(who), "join_scene", character=who, scene="yard")


def play_group(chronicle: Chronicle, sid: str) -> str:
    """The group challenge c1 from its issue to its settling; returns its id."""
    def go(who, tag, **fields):
        run(chronicle, player(who) if who else STORYTELLER, tag, sid, **fields)

    go("anna", "challenge", character="anna", defenders=list(DEFENDERS), attribute="physical")
    # round 1, sealed: Anna beats Bruno, ties Clara, loses to Dora
    go("anna", "throw", character="anna", challenge="c1", round=1, choice="rock")
    go("bruno", "throw", character="bruno", challenge="c1", round=1, choice="scissors")
    go("clara", "throw", character="clara", challenge="c1", round=1, choice="rock")
    go("dora", "throw", character="dora", challenge="c1", round=1, choice="paper")
    # the tie with Clara, by bids: Anna declares first (MET-3)
    go("anna", "bid", character="anna", challenge="c1.2", round=1, value=10)
    go("clara", "bid", character="clara", challenge="c1", round=1, value=5)
    # two overbids (MET-14): Bruno's fails, Anna's against Dora earns a retest
    go("bruno", "overbid", character="bruno", challenge="c1", value=5)
    go("anna", "bid", character="anna", challenge="c1.1", round=1, value=10)
    go("anna", "overbid", character="anna", challenge="c1", value=10)
    go("dora", "bid", character="dora", challenge="c1", round=1, value=4)
    # one retest: Clara's
    go("clara", "retest", character="clara", challenge="c1", source="Athletics")
    # round 2 of both pairs, one throw of Anna's against both
    go("anna", "throw", character="anna", challenge="c1", round=2, choice="rock")
    go("clara", "throw", character="clara", challenge="c1", round=2, choice="scissors")
    go("dora", "throw", character="dora", challenge="c1", round=2, choice="scissors")
    go("clara", "accept", character="clara", challenge="c1")
    go("dora", "accept", character="dora", challenge="c1")
    return "c1"


def play_static_group(chronicle: Chronicle, sid: str) -> str:
    """A storyteller's trap tested on Bruno, Clara and Dora at once (MET-10, one static
    group c1, Physical, difficulty 5) until it is settled; returns its id."""
    def go(who, tag, **fields):
        run(chronicle, player(who) if who else STORYTELLER, tag, sid, **fields)

    go(None, "challenge", character="trap", kind="static", defenders=list(DEFENDERS), attribute="physical",
       difficulty=5)
    # the trap's one throw against all three: beats Bruno, ties Clara, loses to Dora
    go(None, "throw", character="trap", challenge="c1", round=1, choice="rock")
    go("bruno", "throw", character="bruno", challenge="c1", round=1, choice="scissors")
    go("clara", "throw", character="clara", challenge="c1", round=1, choice="rock")
    go("dora", "throw", character="dora", challenge="c1", round=1, choice="paper")
    # only Clara declares, against the difficulty: 6 is above 5
    go("clara", "bid", character="clara", challenge="c1", round=1, value=6, abilities=["Athletics"])
    go("bruno", "retest", character="bruno", challenge="c1", source="Dodge")
    go(None, "throw", character="trap", challenge="c1", round=2, choice="paper")
    go("bruno", "throw", character="bruno", challenge="c1", round=2, choice="rock")
    go(None, "close_window", challenge="c1")
    return "c1"


def closed_group_night(path, sid: str, play) -> str:
    """A SQLite chronicle at ``path`` whose session ``sid`` played one group challenge
    (``play``: play_group or play_static_group) and was closed: the record tests' night."""
    with SQLiteStore(str(path)) as store:
        chronicle = Chronicle(store)
        open_group_session(chronicle, sid)
        play(chronicle, sid)
        run(chronicle, STORYTELLER, "close_session", sid)
    return str(path)
