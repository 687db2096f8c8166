"""The simulated storyteller overrules what a death left stuck (ACT-8 with ACT-12 and
ACT-2), so a simulated night ends with no roll waiting on a dead defender and no dead
character's long action under way."""

from __future__ import annotations

import random

from conteur.events import action, game
from conteur.events.simulate import action as simulate_action
from conteur.events.action import CancelAction, CharacterSacrificed, SettleOpposition
from conteur.events.model import STORYTELLER, ScriptedDraws
from conteur.server.cli.simulate import simulate
from conteur.server.store.sqlite import SQLiteStore
from tests.support.action_support import ROSTER, act


def night_with_two_deaths():
    rolled = act("jaleel", [6, 2, 3], characteristic="Persuasion", opponent="nella")
    (begun,) = act("louisa", [], given=rolled, characteristic="Science", difficulty=3, turns=3)
    return ROSTER + [*rolled, begun, CharacterSacrificed(character="nella", roll="a8"),
                     CharacterSacrificed(character="louisa", roll="a9")]


def test_act_8_act_12_act_2_what_a_death_left_stuck_is_listed_for_the_storyteller():
    state = game.fold(night_with_two_deaths())
    assert simulate_action.stuck(state) == [
        (STORYTELLER, SettleOpposition(roll="a1", outcome="initiator",
                                       reason="nella died before answering")),
        (STORYTELLER, CancelAction(roll="a2", reason="louisa died")),
    ]
    for actor, command in simulate_action.stuck(state):
        state = game.fold(game.decide(state, command, ScriptedDraws(), actor=actor), state)
    assert state.action.waiting == {} and state.action.pending == {}
    assert simulate_action.stuck(state) == []


def test_act_12_a_living_defenders_roll_is_not_the_storytellers_to_settle():
    rolled = act("jaleel", [6, 2, 3], characteristic="Persuasion", opponent="nella")
    state = game.fold(ROSTER + [*rolled, CharacterSacrificed(character="jaleel", roll="a9")])
    assert simulate_action.stuck(state) == []  # nella still answers a dead initiator's roll


def test_the_simulated_storyteller_soon_settles_or_cancels_what_is_stuck():
    state = game.fold(night_with_two_deaths())
    picks = [simulate_action.random_command(random.Random(seed), state)[1] for seed in range(40)]
    rulings = [c for c in picks if isinstance(c, (SettleOpposition, CancelAction))]
    assert 10 < len(rulings) < 30  # about one command in two while something is stuck
    assert {c.outcome for c in rulings if isinstance(c, SettleOpposition)} == {"initiator", "cancelled"}
    for command in rulings:
        game.decide(state, command, ScriptedDraws(), actor=STORYTELLER)  # never refused


def test_a_simulated_action_night_ends_with_nothing_stuck(tmp_path):
    db = tmp_path / "night.db"
    summary = simulate(str(db), events=5000, seed=2, ruleset="action")  # a night with a ruling
    with SQLiteStore(db) as store:
        state = store.load_state(summary.sessions[0])
        events = [e for _, chunk in store.iter_events(summary.sessions[0]) for e in chunk]
    assert state.action.dead  # ACT-8: the night had its deaths
    assert simulate_action.stuck(state) == []
    assert not any(r.opponent in state.action.dead for r in state.action.waiting.values())
    assert not any(b.character in state.action.dead for b in state.action.pending.values())
    assert any(isinstance(e, (action.OppositionRuled, action.ActionCancelled)) for e in events)
