"""Random, mostly valid play, for ``conteur simulate`` and property tests: one module per
ruleset (``met``, ``v5``, ``action``), each with ``random_command(rng, state)`` that picks
one command, as a player or the storyteller would, for the state it is given. About one
command in twenty is wrong on purpose, so the refusals are exercised too.

Pure like the rules: the caller owns the loop (decide, store, fold) and the draws.
"""

from __future__ import annotations

import random

from conteur.events.model import Actor, DrawRecord

SCENE = "s1"  # the one scene every simulated character joins


def player(character: str) -> Actor:
    return Actor(role="player", character=character, name=character)


class RandomDraws:
    """A Draws for simulations: faces from ``rng``, counter from the state (not FAIR-2)."""

    def __init__(self, rng: random.Random, start: int = 0):
        self._rng = rng
        self._counter = start

    def roll(self, sides: int) -> DrawRecord:
        record = DrawRecord(counter=self._counter, sides=sides, face=self._rng.randint(1, sides))
        self._counter += 1
        return record

    def stream(self, actor, owners, *, sealed: str = "") -> RandomDraws:
        return self  # simulated faces are no FAIR-2 draws: no streams
