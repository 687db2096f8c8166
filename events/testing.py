"""Given events, when a command, then events: the shape every rules test takes."""

from __future__ import annotations

from typing import Iterable

from conteur.events import game
from conteur.events.model import STORYTELLER, Actor, Command, Event, RuleViolation, ScriptedDraws


def decide_after(
    given: Iterable[Event],
    when: Command,
    *,
    actor: Actor = STORYTELLER,
    draws: Iterable[int] = (),
) -> list[Event]:
    state = game.fold(given)
    script = ScriptedDraws(list(draws), start=state.draw_counter)
    events = game.decide(state, when, script, actor=actor)
    # folding what was decided must work too: a decider that emits an event its own
    # evolve cannot fold is a bug the test should catch here
    game.fold(events, state)
    return events


def assert_decides(
    *,
    given: Iterable[Event],
    when: Command,
    then: list[Event],
    actor: Actor = STORYTELLER,
    draws: Iterable[int] = (),
) -> list[Event]:
    events = decide_after(given, when, actor=actor, draws=draws)
    assert events == then, f"\n decided: {events}\nexpected: {then}"
    return events


def assert_refuses(
    *,
    given: Iterable[Event],
    when: Command,
    actor: Actor = STORYTELLER,
    draws: Iterable[int] = (),
    code: str | None = None,
    match: str | None = None,
) -> RuleViolation:
    try:
        events = decide_after(given, when, actor=actor, draws=draws)
    except RuleViolation as violation:
        if code is not None:
            assert violation.code == code, f"code {violation.code!r}, expected {code!r}: {violation}"
        if match is not None:
            assert match.lower() in violation.message.lower(), violation.message
        return violation
    raise AssertionError(f"expected a RuleViolation, got events {events}")
