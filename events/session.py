"""Stub: to be filled by its issue. Module contract: see events/game.py."""

from __future__ import annotations

import msgspec


class State(msgspec.Struct, frozen=True, kw_only=True):
    pass


def initial() -> State:
    return State()


DECIDERS: dict = {}
EVOLVERS: dict = {}
EVENTS: tuple = ()
COMMANDS: tuple = ()


def check_playable(state, command, actor) -> None:
    """TIME-5 / TIME-6: raise RuleViolation(code="frozen" | "out_of_game") if refused."""
