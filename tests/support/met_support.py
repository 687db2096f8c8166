"""Givens shared by the session and Mind's Eye Theatre tests (no tests here)."""

from __future__ import annotations

from conteur.events.met import ChallengeIssued, RoundWon, ThrowCommitted, ThrowsRevealed
from conteur.events.model import Actor
from conteur.events.met import MetOptions
from conteur.events.session import CharacterAdded, SceneJoined, SceneOpened, SessionOpened
from conteur.events.sheets import MetSheet


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
