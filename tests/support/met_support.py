"""Givens shared by the session and Mind's Eye Theatre tests (no tests here)."""

from __future__ import annotations

from conteur.events import game, verdicts
from conteur.events.met import (ChallengeIssued, GroupChallengeIssued, IssueChallenge, MetOptions, RoundWon,
                                Throw, ThrowCommitted, ThrowsRevealed)
from conteur.events.model import STORYTELLER, Actor
from conteur.events.session import CharacterAdded, SceneJoined, SceneOpened, SessionOpened
from conteur.events.sheets import MetSheet
from conteur.events.testing import decide_after


def player(character: str) -> Actor:
    return Actor(role="player", character=character, name=character)


def roster(options: MetOptions = MetOptions(), **sheets: MetSheet) -> list:
    """An open session with one scene holding every character given."""
    events: list = [SessionOpened(name="test", options=options), SceneOpened(scene="s1", name="Elysium")]
    for cid, sheet in sheets.items():
        events.append(CharacterAdded(character=cid, name=cid.upper(), sheet=sheet))
        events.append(SceneJoined(character=cid, scene="s1"))
    return events


def classic(challenge="c1", initiator="a", defender="b", attribute="physical", **fields) -> ChallengeIssued:
    return ChallengeIssued(
        challenge=challenge, kind="classic", initiator=initiator, defender=defender, attribute=attribute, **fields
    )


def static(challenge="c1", tested="a", attribute="physical", difficulty=5, **fields) -> ChallengeIssued:
    return ChallengeIssued(
        challenge=challenge,
        kind="static",
        initiator=tested,
        defender="storyteller",
        tested=tested,
        attribute=attribute,
        difficulty=difficulty,
        **fields,
    )


def thrown(challenge: str, round: int, **throws: str) -> list:
    """Both sealed throws of a round and their reveal (winner from the rules)."""
    from conteur.events.met_rules import throw_winner

    (a, ca), (b, cb) = throws.items()
    return [
        ThrowCommitted(challenge=challenge, round=round, character=a, choice=ca),
        ThrowCommitted(challenge=challenge, round=round, character=b, choice=cb),
        ThrowsRevealed(challenge=challenge, round=round, throws=dict(throws), winner=throw_winner(a, ca, b, cb)),
    ]


def won_on_throw(challenge: str, round: int, winner: str, loser: str) -> list:
    """A round the ``winner`` took on the throw (rock beats scissors)."""
    return thrown(challenge, round, **{winner: "rock", loser: "scissors"}) + [
        RoundWon(challenge=challenge, round=round, winner=winner, loser=loser, by="throw")
    ]


A6 = MetSheet(physical=6, social=3, mental=4, abilities={"Melee": 2})
B7 = MetSheet(physical=7, social=5, mental=7, abilities={"Brawl": 2, "Dodge": 1})


def play(given: list, *moves: tuple) -> list:
    """``given`` and the events each ``(command, actor)`` decides, in turn."""
    given = list(given)
    for command, actor in moves:
        given += decide_after(given, command, actor=actor)
    return given


def findings(events) -> list[str]:
    """What ``conteur verify``'s verdicts find in ``events``, folded one by one."""
    checker, state, found = verdicts.Verdicts(), game.initial(), []
    for event in events:
        bad = checker.check(state, event)
        if bad:
            found.append(bad)
        state = game.evolve(state, event)
    return found


# A storyteller's trap tests b and c against one difficulty at once (a static group):
# the rules tests' given, and the record tests'
C5 = MetSheet(physical=5, social=3, mental=4, abilities={"Athletics": 1})
LUCKY = MetSheet(physical=5, social=3, mental=3, abilities={"Athletics": 1}, merits=("Lucky",))
B, C = player("b"), player("c")
TWO = roster(b=B7, c=C5)
TRAP = IssueChallenge(character="Trap", kind="static", defenders=("b", "c"), attribute="physical", difficulty=5)
ISSUED = GroupChallengeIssued(challenge="c1", initiator="Trap", defenders=("b", "c"), pairs=("c1.1", "c1.2"),
                              kind="static", attribute="physical", difficulty=5)


def group_throw(who: str, choice: str, challenge: str = "c1", round: int = 1) -> tuple:
    """The trap's throw is the storyteller's, a character's its player's."""
    actor = STORYTELLER if who == "Trap" else player(who)
    return Throw(character=who, challenge=challenge, round=round, choice=choice), actor


# the trap beats b and ties c on the first throw
ROUND_1 = play(TWO + [ISSUED], group_throw("Trap", "rock"), group_throw("b", "scissors"), group_throw("c", "rock"))
