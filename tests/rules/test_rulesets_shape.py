"""The shape every ruleset keeps: a Decider owning its part of GameState, named
decide_<command> / evolve_<event>, composed in events.game, every refusal naming its rule."""

from __future__ import annotations

import random
import re

import pytest

from conteur.events import game, session
from conteur.events.game import CommandRejected
from conteur.events.model import STORYTELLER, RuleViolation
from conteur.events.simulate import RandomDraws
from conteur.events.simulate import action as simulate_action
from conteur.events.simulate import met as simulate_met
from conteur.events.simulate import v5 as simulate_v5
from conteur.events.sheets import ActionSheet, V5Sheet
from tests.support.examples import examples


def snake(name: str) -> str:
    return re.sub(r"(?<=[a-z0-9])([A-Z])", r"_\1", re.sub(r"([A-Z]+)([A-Z][a-z])", r"\1_\2", name)).lower()


@pytest.mark.parametrize("part", sorted(game.RULESETS))
def test_deciders_and_evolvers_are_named_after_their_command_and_event(part):
    module = game.RULESETS[part]
    for command, decider in module.DECIDERS.items():
        assert decider.__name__ == f"decide_{snake(command.__name__)}", (part, command)
    for event, evolver in module.EVOLVERS.items():
        assert evolver.__name__ in (f"evolve_{snake(event.__name__)}", "unchanged"), (part, event)


def test_every_event_folds_through_the_composition_and_only_there():
    assert set(game.EVOLVERS) == set(game.EVENT_TYPES)
    for kind, handlers in game.HANDLERS.items():
        parts = [part for part, _ in handlers]
        assert len(parts) == len(set(parts)), kind  # one evolver per part and event
        assert set(parts) <= set(game.RULESETS)
    assert not hasattr(session, "ON_CLOCK")  # nothing registers itself at import time


def _night(rng: random.Random, steps: int):
    """A mixed simulated night: MET challenges, then V5 and action characters rolling."""
    state = game.initial()
    refusals: list[RuleViolation] = []

    def play(actor, command):
        nonlocal state
        try:
            decided = game.decide(state, command, RandomDraws(rng, state.draw_counter), actor=actor)
        except RuleViolation as violation:
            refusals.append(violation)
            return
        state = game.fold(decided, state)

    for actor, command in simulate_met.setup_session(rng, characters=3):
        play(actor, command)
    for cid, sheet in (("vamp", V5Sheet(attributes={"Wits": 3}, skills={"Occult": 2}, hunger=2)),
                       ("agent", ActionSheet(characteristics={"Science": 5}))):
        play(STORYTELLER, session.AddCharacter(character=cid, name=cid, sheet=sheet))
    for _ in range(steps):
        pick = rng.random()
        module = simulate_met if pick < 0.5 else simulate_v5 if pick < 0.75 else simulate_action
        play(*module.random_command(rng, state))
    return refusals


@pytest.mark.parametrize("seed", range(examples(3)))
def test_every_refusal_of_a_simulated_night_names_its_rule(seed):
    refusals = _night(random.Random(seed), 1500)
    assert len(refusals) > 20, "the simulators send wrong commands on purpose"
    unnamed = {v.message for v in refusals if not v.rule}
    assert not unnamed


def test_a_rejected_command_carries_the_rule_to_its_sender():
    state = game.fold([session.SessionOpened()])
    try:
        game.decide(state, session.JoinScene(character="nobody", scene="s1"),
                    RandomDraws(random.Random(0)), actor=STORYTELLER)
    except RuleViolation as violation:
        rejected = CommandRejected(command_type="join_scene", code=violation.code,
                                   message=violation.message, rule=violation.rule)
    assert rejected.rule == "TIME-2" and rejected.code == "not_found"
