"""Noninterference for sealed opposed action rolls (ACT-12): two worlds
that differ only in the initiator's sealed roll (its dice through its entropy, its bonus,
malus, Expertise and option) must look byte for byte the same to the defender, to a third
player and to the wall until the defender answers: live, on resync, over HTTP and in their
exports. What does not differ: that Kim rolled against Lou and on what characteristic (what
a player declares aloud), and everything the others do meanwhile, Kim's own open rolls
included (their counters must not count the sealed roll's dice). The session is not closed:
closing reveals the seed, and the sealed roll's draws are then recomputable only by who
holds its record."""

from __future__ import annotations

import asyncio
import itertools
import random

import msgspec
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from conteur.events.sheets import ActionSheet
from tests.support.examples import examples
from tests.support.noninterference import Step, differences, observe

SEED = bytes(range(32, 64))
CHARACTERS = ["kim", "lou", "max"]
VIEWERS = ["lou", "max", "wall"]
_sessions = itertools.count(1)



def sheet(seed: int) -> dict:
    rng = random.Random(seed)
    return msgspec.to_builtins(ActionSheet(characteristics={"Science": rng.randint(4, 8), "Combat": rng.randint(4, 8)},
                                           expertises=("Sauter",)))


def sealed_roll(world: random.Random, visibility: str) -> Step:
    """Kim's roll against Lou: what is sealed comes from ``world``."""
    command = {"type": "roll_action", "character": "kim", "characteristic": "Combat", "opponent": "lou",
               "bonus": world.randint(0, 2), "malus": world.randint(0, 3),
               "option": world.choice(("none", "none", "surpass", "sacrifice")), "visibility": visibility}
    if world.random() < 0.5:
        command["expertise"] = "Sauter"
    return Step(who="kim", entropy=world.choice(("", world.randbytes(8).hex())), command=command)


def public_step(rng: random.Random) -> Step:
    """What the others (and Kim, openly) do while Lou has not answered: the same in both worlds."""
    who = rng.choice(CHARACTERS)
    pick = rng.random()
    if pick < 0.15:
        return Step(who="st", command={"type": "next_turn"})
    return Step(who=who, entropy=rng.randbytes(8).hex(), command={
        "type": "roll_action", "character": who, "characteristic": rng.choice(("Science", "Combat")),
        "difficulty": rng.randint(1, 3), "bonus": rng.randint(0, 2),
        "visibility": "open" if who == "kim" else rng.choice(("open", "secret"))})


def script(public: random.Random, world: random.Random, before: int, after: int, visibility: str) -> list[Step]:
    setup = [Step(who="st", command={"type": "open_session", "name": "Night"})] + [
        Step(who="st", command={"type": "add_character", "character": c, "name": c.title(), "sheet": sheet(i)})
        for i, c in enumerate(CHARACTERS)]
    # Kim rolls openly at once after her sealed roll: its counters are where a sealed roll
    # drawn from her open stream would show its number of dice (its bonus and malus)
    kim_open = Step(who="kim", entropy=public.randbytes(8).hex(), command={
        "type": "roll_action", "character": "kim", "characteristic": "Science", "difficulty": 1})
    return (setup + [public_step(public) for _ in range(before)] + [sealed_roll(world, visibility), kim_open]
            + [public_step(public) for _ in range(after)])


@settings(max_examples=examples(6), deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])
@given(seed=st.integers(0, 2**32 - 1), before=st.integers(0, 6), after=st.integers(0, 8),
       visibility=st.sampled_from(["open", "secret"]))
def test_an_opposed_roll_before_its_answer_looks_the_same_to_the_defender_and_everyone_else(
        worlds, seed, before, after, visibility):
    async def play():
        session = f"sealed-{next(_sessions)}"
        out = []
        for venue, world in zip(worlds, (seed, seed + 1)):
            steps = script(random.Random(seed), random.Random(f"{world}-sealed"), before, after, visibility)
            out.append(await observe(venue, session, SEED, steps, CHARACTERS, VIEWERS))
        return out

    a, b = asyncio.run(play())
    diff = differences(a, b)
    assert not diff, "\n".join(diff[:10])
