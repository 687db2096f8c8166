"""Statistics of the real draw function, deterministic (fixed seeds): uniform d6/d8/d10,
the D+/- faces (ACT-4), and V5 outcomes (V5-2..V5-7) against exact enumeration.

Each test compares observed counts with expected ones by Pearson's chi-square, refused
above the 0.999 quantile (Wilson-Hilferty): with fixed seeds the result never changes,
and a biased mapping (modulo bias, a wrong split of the pool) fails it.
"""

from __future__ import annotations

import itertools
import math
from collections import Counter

import pytest

from conteur.events import action, game, v5
from conteur.events.fair import FairDraws
from conteur.events.model import STORYTELLER

SEED = bytes.fromhex("5eed" * 16)
Z_999 = 3.0902  # standard normal quantile 0.999


def chi_square_limit(df: int) -> float:
    """0.999 quantile of chi-square with ``df`` degrees of freedom (Wilson-Hilferty)."""
    h = 2 / (9 * df)
    return df * (1 - h + Z_999 * math.sqrt(h)) ** 3


def chi_square(observed: Counter, expected: dict, n: int) -> tuple[float, int]:
    """Pearson's statistic, pooling categories expected fewer than 5 times into one."""
    pooled_obs, pooled_exp, stat, cells = 0, 0.0, 0.0, 0
    for key, p in expected.items():
        e = p * n
        if e < 5:
            pooled_obs += observed.get(key, 0)
            pooled_exp += e
            continue
        stat += (observed.get(key, 0) - e) ** 2 / e
        cells += 1
    if pooled_exp > 0:
        stat += (pooled_obs - pooled_exp) ** 2 / max(pooled_exp, 1e-9)
        cells += 1
    assert set(observed) <= set(expected), f"impossible outcomes {set(observed) - set(expected)}"
    return stat, cells - 1


def assert_fits(observed: Counter, expected: dict, n: int) -> None:
    stat, df = chi_square(observed, expected, n)
    assert stat < chi_square_limit(df), f"chi-square {stat:.1f} with {df} df: {observed}"


@pytest.mark.parametrize("sides", [6, 8, 10])
def test_fair_2_dice_are_uniform(sides):
    draws = FairDraws(SEED, f"uniform-d{sides}", start=0)
    n = 600 * sides
    observed = Counter(draws.roll(sides).face for _ in range(n))
    assert_fits(observed, {f: 1 / sides for f in range(1, sides + 1)}, n)


def test_act_4_plus_minus_and_blank_each_show_a_third_of_the_time():
    draws = FairDraws(SEED, "plusminus", start=0)
    n = 6000
    observed = Counter(action.sign(draws.roll(6).face) for _ in range(n))
    assert_fits(observed, {"+": 1 / 3, "-": 1 / 3, "": 1 / 3}, n)


def exact_v5(normal: int, hunger: int, difficulty: int, rule: str) -> dict:
    """Outcome probabilities by enumerating all 10**pool faces."""
    counts: Counter = Counter()
    for faces in itertools.product(range(1, 11), repeat=normal + hunger):
        counts[outcome_key(v5.score(faces[:normal], faces[normal:], difficulty, rule))] += 1
    total = 10 ** (normal + hunger)
    return {k: c / total for k, c in counts.items()}


def outcome_key(o: v5.Outcome) -> tuple:
    return (o.successes, o.success, o.critical, o.messy, o.bestial)


@pytest.mark.parametrize(
    "pool, hunger, difficulty, rule",
    [(3, 1, 2, "text"), (3, 2, 2, "official"), (4, 4, 3, "text"), (2, 0, 1, "text")],
)
def test_v5_outcomes_of_real_rolls_match_exact_enumeration(pool, hunger, difficulty, rule):
    """The decider's rolls (pool split, Hunger dice, V5-2..V5-7) against enumeration."""
    state = game.fold([v5.V5Configured(messy_rule=rule)])
    command = v5.RollPool(pool=pool, hunger=hunger, difficulty=difficulty)
    draws = FairDraws(SEED, f"v5-{pool}-{hunger}-{rule}", start=0)
    n = 3000
    observed = Counter(
        outcome_key(event) for _ in range(n)
        for event in game.decide(state, command, draws, actor=STORYTELLER)
    )
    assert_fits(observed, exact_v5(pool - hunger, min(hunger, pool), difficulty, rule), n)


def test_the_chi_square_check_catches_a_biased_die():
    """The statistical tests are not vacuous: a d10 made by modulo from a d16 fails."""
    draws = FairDraws(SEED, "biased", start=0)
    n = 3000
    biased = Counter((draws.roll(16).face - 1) % 10 + 1 for _ in range(n))
    stat, df = chi_square(biased, {f: 1 / 10 for f in range(1, 11)}, n)
    assert stat > chi_square_limit(df)
