"""Noninterference: random dice sessions played twice on real servers, the two
worlds identical except for the content of one character's hidden information, must look
byte for byte the same to every other player and to the wall, live, on resync, over HTTP
and in their exports, even after ``close_session`` reveals the seed.

What differs between the worlds: Iris's sheet values, her secret rolls' pools (named traits
or bonus dice), their dice (entropy, or none so the server draws its own), a storyteller's
blind roll's pool on her, her secret Rouse checks and Willpower rerolls; or Kim's secret
action rolls (bonus and malus, so the number of D+/- dice, and entropy). What does not:
everything the others do, which includes rolls of their own at every visibility and a
storyteller's open rolls, nor the kind and number of the hidden character's hidden events
(a gap in seq shows that something hidden happened). The hidden character rolls nothing
open: an open roll shows Hunger, which a secret Rouse check may have raised (V5-5). (RULES FAIR-1, FAIR-2, V5-1, V5-9, ACT-5; DESIGN "Who sees what".)
"""

from __future__ import annotations

import asyncio
import itertools
import random

import msgspec
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from conteur.events.sheets import ActionSheet, V5Sheet
from tests.support.examples import examples
from tests.support.noninterference import Step, differences, observe

SEED = bytes(range(32))
CHARACTERS = ["iris", "jack", "kim"]
OTHERS = {"iris": ["jack", "kim", "wall"], "kim": ["iris", "jack", "wall"]}
_sessions = itertools.count(1)



def v5_sheet(rng: random.Random) -> dict:
    return msgspec.to_builtins(V5Sheet(
        attributes={"Wits": rng.randint(1, 5), "Strength": rng.randint(1, 5)},
        skills={"Brawl": rng.randint(0, 4), "Stealth": rng.randint(0, 4)},
        willpower=rng.randint(3, 7), humanity=7, hunger=rng.randint(0, 3)))


def action_sheet(rng: random.Random) -> dict:
    return msgspec.to_builtins(ActionSheet(characteristics={"Science": rng.randint(4, 8),
                                                            "Combat": rng.randint(4, 8)}))


def hidden_step(pick: float, rng: random.Random, hidden: str) -> Step:
    """One piece of the hidden character's hidden information: its kind from ``pick`` (the
    same in both worlds, as a hidden event's existence shows as a gap in seq), its content
    from ``rng`` (the world's own)."""
    entropy = rng.choice(("", rng.randbytes(8).hex()))
    if hidden == "kim":
        return Step(who="kim", entropy=entropy, command={
            "type": "roll_action", "character": "kim", "characteristic": "Science",
            "difficulty": 2, "bonus": rng.randint(0, 3), "malus": rng.randint(0, 3),
            "visibility": "secret"})
    if pick < 0.5:
        return Step(who="iris", entropy=entropy, command={
            "type": "roll_pool", "character": "iris", "attribute": rng.choice(("Wits", "Strength")),
            "skill": rng.choice(("Brawl", "Stealth")), "bonus": rng.randint(0, 3),
            "visibility": "secret"})
    if pick < 0.7:
        return Step(who="iris", entropy=entropy,
                    command={"type": "rouse", "character": "iris", "visibility": "secret"})
    if pick < 0.85:
        return Step(who="iris", entropy=entropy, command={
            "type": "willpower_reroll", "character": "iris", "roll": "latest",
            "strategy": "maximise_criticals"})
    return Step(who="st", entropy=entropy, command={
        "type": "roll_pool", "character": "iris", "pool": rng.randint(1, 9), "visibility": "blind"})


def public_step(rng: random.Random, hidden: str) -> Step:
    """Something the others do, the same in both worlds (the hidden character rolls
    nothing open: its open rolls show its sheet, ACT-3, and its Hunger, V5-5)."""
    entropy = rng.randbytes(8).hex()
    pick = rng.random()
    if hidden == "kim" and 0.45 <= pick < 0.6:
        pick = 0.0
    if pick < 0.35:
        return Step(who="jack", entropy=entropy, command={
            "type": "roll_pool", "character": "jack", "attribute": "Wits", "skill": "Brawl",
            "visibility": rng.choice(("open", "open", "secret"))})
    if pick < 0.45:
        return Step(who="jack", entropy=entropy, command={"type": "rouse", "character": "jack"})
    if pick < 0.6:
        return Step(who="kim", entropy=entropy, command={
            "type": "roll_action", "character": "kim", "characteristic": "Combat", "difficulty": 1,
            "bonus": rng.randint(0, 2)})
    if pick < 0.7:
        return Step(who="st", entropy=entropy, command={
            "type": "roll_pool", "character": "jack", "pool": rng.randint(1, 6),
            "visibility": rng.choice(("open", "secret", "blind"))})
    if pick < 0.9:  # probing: naming rolls that may be someone else's secret
        return Step(who="jack", command={"type": "willpower_reroll", "character": "jack",
                                         "roll": f"r{rng.randint(1, 12)}", "strategy": "reroll_failures"})
    return Step(who="st", entropy=entropy, command={"type": "roll_pool", "pool": rng.randint(1, 5),
                                                    "hunger": 0, "label": "weather"})


def script(public: random.Random, world: random.Random, hidden: str, steps: int,
           sheet_world: bool) -> list[Step]:
    setup = [
        Step(who="st", command={"type": "open_session", "name": "Night"}),
        Step(who="st", command={"type": "add_character", "character": "iris", "name": "Iris",
                                "sheet": v5_sheet(world if sheet_world and hidden == "iris" else random.Random(1))}),
        Step(who="st", command={"type": "add_character", "character": "jack", "name": "Jack",
                                "sheet": v5_sheet(random.Random(2))}),
        Step(who="st", command={"type": "add_character", "character": "kim", "name": "Kim",
                                "sheet": action_sheet(world if sheet_world and hidden == "kim" else random.Random(3))}),
    ]
    body = [hidden_step(public.random(), world, hidden) if public.random() < 0.4
            else public_step(public, hidden) for _ in range(steps)]
    return setup + body + [Step(who="st", command={"type": "close_session"})]


async def play_both(worlds, seed: int, steps: int, hidden: str, sheet_world: bool):
    session = f"ni-{next(_sessions)}"
    out = []
    for venue, world_seed in zip(worlds, (seed, seed + 1)):
        steps_ = script(random.Random(seed), random.Random(f"{world_seed}-hidden"), hidden, steps,
                        sheet_world)
        out.append(await observe(venue, session, SEED, steps_, CHARACTERS, OTHERS[hidden],
                                 resolve=latest_roll))
    return out


def latest_roll(venue, session: str, command: dict) -> dict:
    """A Willpower reroll names the hidden character's latest roll, whose id only the
    server knows when the step comes (``"latest"`` in the script)."""
    if command.get("roll") != "latest":
        return command
    roll = venue.runtime.chronicle.state(session).v5.rolls.get(command["character"])
    return {**command, "roll": roll.id if roll else "none"}


@settings(max_examples=examples(8), deadline=None, derandomize=False,
          suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])
@given(seed=st.integers(0, 2**32 - 1), steps=st.integers(4, 24),
       hidden=st.sampled_from(["iris", "kim"]), sheet_world=st.booleans())
def test_others_receive_the_same_bytes_whatever_one_characters_hidden_information(
        worlds, seed, steps, hidden, sheet_world):
    a, b = asyncio.run(play_both(worlds, seed, steps, hidden, sheet_world))
    diff = differences(a, b)
    assert not diff, "\n".join(diff[:10])


# ---------------------------------------------------------------- sealed throws and bids


def met_sheet(physical: int) -> dict:
    return {"kind": "met", "physical": physical, "social": 3, "mental": 3}


def met_script(world: random.Random, kind: str, noise: int) -> list[Step]:
    """Iris challenges Jack; what differs is Iris's sealed throw (hers, or one a storyteller
    draws for her side), her bid after a tie, or her sheet. Jack never answers, so the
    rules never reveal it; Lea and Jack play a whole challenge meanwhile."""
    physical = world.randint(2, 9) if kind == "sheet" else 6
    steps = [
        Step(who="st", command={"type": "open_session", "name": "Elysium"}),
        Step(who="st", command={"type": "add_character", "character": "iris", "name": "Iris",
                                "sheet": met_sheet(physical)}),
        Step(who="st", command={"type": "add_character", "character": "jack", "name": "Jack",
                                "sheet": met_sheet(5)}),
        Step(who="st", command={"type": "add_character", "character": "lea", "name": "Lea",
                                "sheet": met_sheet(4)}),
        Step(who="st", command={"type": "open_scene", "scene": "hall", "name": "Hall"}),
        *(Step(who=c, command={"type": "join_scene", "character": c, "scene": "hall"})
          for c in ("iris", "jack", "lea")),
        Step(who="iris", command={"type": "challenge", "character": "iris", "defender": "jack",
                                  "attribute": "physical"}),
    ]
    throw = {"type": "throw", "character": "iris", "challenge": "c1", "round": 1}
    if kind == "bid":  # a tie on rock, then Iris's sealed bid; Jack never bids
        steps += [Step(who="iris", command={**throw, "choice": "rock"}),
                  Step(who="jack", command={**throw, "character": "jack", "choice": "rock"}),
                  Step(who="iris", command={"type": "bid", "character": "iris", "challenge": "c1",
                                            "round": 1, "value": world.randint(0, 6)})]
    elif kind == "drawn":  # a storyteller throws for Iris's side: the server draws it
        steps.append(Step(who="st", entropy=world.choice(("", world.randbytes(8).hex())),
                          command={**throw, "choice": None}))
    else:
        steps.append(Step(who="iris", command={**throw, "choice": world.choice(("rock", "paper", "scissors"))}))
    steps.append(Step(who="lea", command={"type": "challenge", "character": "lea", "defender": "jack",
                                          "attribute": "physical"}))
    for who, choice in (("lea", "rock"), ("jack", "scissors"))[: noise]:
        steps.append(Step(who=who, command={"type": "throw", "character": who, "challenge": "c2",
                                            "round": 1, "choice": choice}))
    if noise == 2:  # Jack lost and takes it: a finished challenge, counted by /state, paged by /state/done
        steps.append(Step(who="jack", command={"type": "accept", "character": "jack", "challenge": "c2"}))
    return steps + [Step(who="st", command={"type": "close_session"})]


@settings(max_examples=examples(4), deadline=None, derandomize=False,
          suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])
@given(seed=st.integers(0, 2**32 - 1), kind=st.sampled_from(["throw", "drawn", "bid", "sheet"]),
       noise=st.integers(0, 2))
def test_a_sealed_throw_a_bid_and_a_sheet_look_the_same_to_everyone_else_until_revealed(
        worlds, seed, kind, noise):
    async def both():
        session = f"met-{next(_sessions)}"
        return [await observe(venue, session, SEED, met_script(random.Random(f"{seed}-{i}"), kind, noise),
                              ["iris", "jack", "lea"], ["jack", "lea", "wall"])
                for i, venue in enumerate(worlds)]
    a, b = asyncio.run(both())
    diff = differences(a, b)
    assert not diff, "\n".join(diff[:10])


# ---------------------------------------------------------------- group challenges


def group_script(secret: int, kind: str) -> list[Step]:
    """Iris challenges Jack and Lea at once (MET-1). What differs is one participant's
    sealed throw or bid, from ``secret``: Iris's one throw against both, Jack's throw,
    Iris's bid (it counts in both tied pairs) or Jack's answer to it. Lea never throws (or
    never bids), so no throw of the group is revealed (MET-2 for all) and no tie is
    settled by bids."""
    steps = [
        Step(who="st", command={"type": "open_session", "name": "Brawl"}),
        *(Step(who="st", command={"type": "add_character", "character": c, "name": c.title(),
                                  "sheet": met_sheet(p)}) for c, p in (("iris", 6), ("jack", 5), ("lea", 4))),
        Step(who="st", command={"type": "open_scene", "scene": "yard", "name": "Yard"}),
        *(Step(who=c, command={"type": "join_scene", "character": c, "scene": "yard"})
          for c in ("iris", "jack", "lea")),
        Step(who="iris", command={"type": "challenge", "character": "iris", "defenders": ["jack", "lea"],
                                  "attribute": "physical"}),
    ]
    throw = {"type": "throw", "challenge": "c1", "round": 1}
    hidden = ("rock", "paper", "scissors")[secret % 3]
    if kind == "initiator_throw":
        steps += [Step(who="iris", command={**throw, "character": "iris", "choice": hidden}),
                  Step(who="jack", command={**throw, "character": "jack", "choice": "rock"})]
    elif kind == "defender_throw":
        steps += [Step(who="iris", command={**throw, "character": "iris", "choice": "rock"}),
                  Step(who="jack", command={**throw, "character": "jack", "choice": hidden})]
    else:  # both pairs tied on rock, then the bids: Lea never bids
        steps += [Step(who=c, command={**throw, "character": c, "choice": "rock"}) for c in ("iris", "jack", "lea")]
        bid = {"type": "bid", "challenge": "c1", "round": 1}
        steps.append(Step(who="iris", command={**bid, "character": "iris",
                                               "value": secret % 7 if kind == "initiator_bid" else 6}))
        if kind == "defender_bid":
            steps.append(Step(who="jack", command={**bid, "character": "jack", "value": secret % 6}))
    return steps + [Step(who="st", command={"type": "close_session"})]


GROUP_VIEWERS = {"initiator_throw": ["jack", "lea", "wall"], "defender_throw": ["iris", "lea", "wall"],
                 "initiator_bid": ["jack", "lea", "wall"], "defender_bid": ["iris", "lea", "wall"]}


@pytest.mark.parametrize("kind", sorted(GROUP_VIEWERS))
@settings(max_examples=examples(2), deadline=None, derandomize=False,
          suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])
@given(secret=st.integers(0, 2**16))
def test_met_2_in_a_group_no_one_learns_a_throw_or_a_bid_before_its_reveal(worlds, kind, secret):
    async def both():
        session = f"group-{next(_sessions)}"
        # the two worlds' secrets differ: one apart, so the throw and the bid differ too
        return [await observe(venue, session, SEED, group_script(secret + i, kind),
                              ["iris", "jack", "lea"], GROUP_VIEWERS[kind])
                for i, venue in enumerate(worlds)]
    a, b = asyncio.run(both())
    diff = differences(a, b)
    assert not diff, "\n".join(diff[:10])
