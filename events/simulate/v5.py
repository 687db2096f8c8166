"""Random V5 play (V5-1..9): mostly a player's pool, some Rouse checks, Willpower rerolls
(some refused: already rerolled, nothing to avoid), blind storyteller rolls, Hunger set."""

from __future__ import annotations

import random

from conteur.events.game import GameState
from conteur.events.model import STORYTELLER, Actor, Command
from conteur.events.session import sheet_of
from conteur.events.sheets import V5Sheet
from conteur.events.simulate import player
from conteur.events.v5 import RollPool, RouseCheck, SetHunger, WillpowerReroll


def random_command(
    rng: random.Random, state: GameState, characters: list[str] | None = None
) -> tuple[Actor, Command]:
    """One random, mostly valid V5 command against the current state."""
    characters = characters or [
        c for c in sorted(state.session.characters) if isinstance(sheet_of(state, c), V5Sheet)
    ]
    if not characters:
        return STORYTELLER, RollPool(pool=rng.randint(1, 8), hunger=rng.randint(0, 5))
    who = rng.choice(characters)
    actor = player(who)
    sheet = sheet_of(state, who)
    visibility = rng.choice(("open", "open", "open", "secret"))
    pick = rng.random()
    if pick < 0.55:
        if isinstance(sheet, V5Sheet) and sheet.attributes:
            return actor, RollPool(
                character=who,
                attribute=rng.choice(sorted(sheet.attributes)),
                skill=rng.choice(sorted(sheet.skills)) if sheet.skills else None,
                difficulty=rng.randint(1, 5),
                visibility=visibility,
            )
        return actor, RollPool(character=who, pool=rng.randint(1, 9), difficulty=rng.randint(1, 5))
    if pick < 0.7:
        return actor, RouseCheck(character=who, visibility=visibility)
    if pick < 0.85:
        latest = state.v5.rolls.get(who)
        strategy = rng.choice(("reroll_failures", "maximise_criticals", "avoid_messy"))
        return actor, WillpowerReroll(
            character=who, roll=latest.id if latest else "r1", strategy=strategy
        )
    if pick < 0.95:
        return STORYTELLER, RollPool(
            character=who, pool=rng.randint(1, 7), difficulty=rng.randint(1, 4), visibility="blind"
        )
    return STORYTELLER, SetHunger(character=who, hunger=rng.randint(0, 5))
