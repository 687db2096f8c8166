"""Givens shared by the action dice tests (ACT-1..13): a roster of characters with action
sheets, and rolls several test files start from (no tests here)."""

from __future__ import annotations

from conteur.events.action import CharacterSacrificed, RollAction
from conteur.events.model import Actor
from conteur.events.session import CharacterAdded
from conteur.events.sheets import ActionSheet
from conteur.events.testing import decide_after


def pc(character: str, **characteristics: int) -> CharacterAdded:
    return CharacterAdded(
        character=character,
        name=character.capitalize(),
        sheet=ActionSheet(characteristics=characteristics, expertises=("Sauter",)),
    )


def player(character: str) -> Actor:
    return Actor(role="player", character=character, name=character)


ROSTER = [
    pc("jake", Motricité=6),
    pc("sergei", Carrure=5),
    pc("natalia", Motricité=5, Science=7),
    pc("jaleel", Persuasion=6),
    pc("nella", Volonté=6),
    pc("alfred", Carrure=6),
    pc("judith", Carrure=5),
    pc("louisa", Science=6),
    pc("sylvio", Science=6),
    pc("dalia", Motricité=6),
]


def act(character, faces, given=(), actor=None, **fields) -> list:
    return decide_after(ROSTER + list(given), RollAction(character=character, **fields),
                        actor=actor or player(character), draws=faces)



def jaleel_against_nella(visibility="open", actor=None):
    """a1, 1 PS, waiting for nella's answer: the sealed roll and nella's call."""
    return act("jaleel", [6, 2, 3], characteristic="Persuasion", opponent="nella",
               visibility=visibility, actor=actor)


def nella_dies():
    """Nella sacrificed herself in another action (ACT-8): she rolls no more."""
    return CharacterSacrificed(character="nella", roll="a7")

