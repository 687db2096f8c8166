"""Random action-dice play (ACT-1..13), as on a venue night: a defender answers an opposed
roll at once, a multi-turn action is rolled when it is due, the storyteller moves the clock
and settles what a death left stuck (``stuck``)."""

from __future__ import annotations

import random

from msgspec.structs import replace

from conteur.events.action import CancelAction, RollAction, ApplyModifier, RuleAction, SettleOpposition
from conteur.events.game import GameState
from conteur.events.model import STORYTELLER, Actor, Command, id_scope
from conteur.events.session import NextTurn, SkipTime, clock, sheet_of
from conteur.events.sheets import ActionSheet, V5Sheet
from conteur.events.simulate import v5

def _order(roll: str) -> tuple[int, str]:
    """Roll ids by number, then audience: ids of different audiences have no common order."""
    return id_scope(roll) or (0, roll)


def stuck(state: GameState) -> list[tuple[Actor, Command]]:
    """The storyteller's rulings that end what a death left stuck, oldest first: an opposed
    roll waiting on a dead defender (ACT-8: it can no longer answer; the initiator wins) and
    a dead character's multi-turn action (it will never be rolled). For the simulator, at
    random during the night and all at once before the session closes."""
    dead = state.action.dead
    if not dead:
        return []
    rulings: list[tuple[Actor, Command]] = [
        (STORYTELLER, SettleOpposition(roll=roll, outcome="initiator",
                                       reason=f"{r.opponent} died before answering"))
        for roll, r in sorted(state.action.waiting.items(), key=lambda kv: _order(kv[0]))
        if r.opponent in dead
    ]
    rulings += [
        (STORYTELLER, CancelAction(roll=roll, reason=f"{b.character} died"))
        for roll, b in sorted(state.action.pending.items(), key=lambda kv: _order(kv[0]))
        if b.character in dead
    ]
    return rulings


def random_command(rng: random.Random, state: GameState,
                   characters: list[str] | None = None) -> tuple[Actor, Command]:
    """One random action-dice command against the current state, as on a venue night: a
    defender answers an opposed roll at once, a multi-turn action is rolled when it is due,
    the storyteller moves the clock and now and then skips 10 to 60 minutes (so minute and
    hour modifiers expire), a sacrifice is rare, and about one command in twenty is wrong
    on purpose (the rules refuse it, as a player's slip would be)."""
    characters = characters or [
        c for c in sorted(state.session.characters)
        if isinstance(sheet_of(state, c), ActionSheet) and c not in state.action.dead
    ]
    # ACT-8 with ACT-12 and ACT-2: what a death left stuck, the storyteller soon overrules
    overdue = stuck(state)
    if overdue and rng.random() < 0.5:
        actor, command = overdue[0]
        if isinstance(command, SettleOpposition) and rng.random() < 0.3:
            command = replace(command, outcome="cancelled")
        return actor, command
    if not characters:
        return STORYTELLER, RollAction(character="pc", characteristic="Motricité",
                                       threshold=rng.randint(4, 8), difficulty=rng.randint(1, 4))
    # ACT-12: the defender answers the oldest roll waiting on it before anything else; a roll
    # on a character who died since waits for the storyteller (``stuck``).
    answer = min(((_order(k), k, r.opponent) for k, r in state.action.waiting.items()
                  if r.opponent in characters), default=None)
    who = answer[2] if answer is not None and rng.random() < 0.85 else rng.choice(characters)
    player = Actor(role="player", character=who, name=who)
    sheet = sheet_of(state, who)
    names = sorted(sheet.characteristics) if isinstance(sheet, ActionSheet) else []
    characteristic = rng.choice(names) if names else "Motricité"
    threshold = None if names else rng.randint(4, 8)
    if answer is not None and who == answer[2]:
        return player, RollAction(character=who, characteristic=characteristic,
                                  threshold=threshold, against=answer[1])
    pick = rng.random()
    turn, _ = clock(state)
    due = sorted(k for k, b in state.action.pending.items()
                 if b.character == who and b.last_turn <= turn)
    if due:
        return player, RollAction(character=who, resume=due[0])
    if pick < 0.02:  # "an hour later": modifiers expire
        minutes = rng.randint(10, 60)
        return STORYTELLER, SkipTime(seconds=minutes * 60, note=f"{minutes} minutes later")
    if pick < 0.07:
        return STORYTELLER, NextTurn()
    if pick < 0.11:
        return STORYTELLER, ApplyModifier(character=who, value=rng.choice((-2, -1, 1, 2)),
                                          duration=rng.randint(1, 3),
                                          unit=rng.choice(("turns", "minutes", "hours")))
    if pick < 0.16:
        return STORYTELLER, RuleAction(character=who, ruling=rng.choice(("trivial", "impossible")))
    others = [c for c in characters if c != who]
    if pick < 0.21:  # a slip the rules refuse (ACT-1, ACT-12, ACT-12, ACT-8)
        slips = [
            (player, RollAction(character=who, characteristic=characteristic, threshold=threshold,
                                difficulty=0)),
            (player, RollAction(character=who, characteristic=characteristic, threshold=threshold,
                                opponent=who)),
            (player, RollAction(character=who, characteristic=characteristic, threshold=threshold,
                                difficulty=2, opponent=rng.choice(others or [who]))),
        ]
        if state.action.dead:  # the player of a dead character rolls for it once more
            ghost = rng.choice(sorted(state.action.dead))
            slips.append((Actor(role="player", character=ghost, name=ghost),
                          RollAction(character=ghost, characteristic=characteristic,
                                     threshold=threshold, difficulty=2)))
        return rng.choice(slips)
    if pick < 0.31 and others:
        return player, RollAction(character=who, characteristic=characteristic,
                                  threshold=threshold, opponent=rng.choice(others))
    difficulty: int | str = rng.choice((1, 2, 3, "Difficile", "Extrême"))
    if pick < 0.36:
        return player, RollAction(character=who, characteristic=characteristic,
                                  threshold=threshold, difficulty=difficulty,
                                  turns=rng.randint(2, 3))
    # ACT-8: a sacrifice is a night's rare event, and a night holds only so many deaths
    sacrifice = 0.002 if len(state.action.dead) < 20 else 0.0
    option = rng.choices(("none", "surpass", "sacrifice"), (0.92 - sacrifice, 0.08, sacrifice))[0]
    expertise = rng.choice(sheet.expertises) if isinstance(sheet, ActionSheet) and \
        sheet.expertises and rng.random() < 0.3 else None
    return player, RollAction(
        character=who, characteristic=characteristic, threshold=threshold,
        difficulty=difficulty, expertise=expertise, bonus=rng.choice((0, 0, 0, 1, 2)),
        malus=rng.choice((0, 0, 0, 1)), option=option,
        visibility=rng.choice(("open", "open", "secret")),
    )


def random_dice_command(rng: random.Random, state: GameState) -> tuple[Actor, Command]:
    """A random dice command for a random character of the roster, V5 or action dice after
    its sheet; storyteller rolls without a roster."""
    characters = sorted(state.session.characters)
    if characters:
        who = rng.choice(characters)
        if isinstance(sheet_of(state, who), V5Sheet):
            return v5.random_command(rng, state)
        if isinstance(sheet_of(state, who), ActionSheet):
            return random_command(rng, state)
    return (v5.random_command if rng.random() < 0.5 else random_command)(rng, state)
