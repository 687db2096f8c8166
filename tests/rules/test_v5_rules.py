"""V5 dice pools' numeric rules on both sides of each boundary, through ``decide``.

Each roll is a storyteller's (or Anna's) command decided with scripted dice, so the faces,
the Hunger dice and the verdicts are what the rules make of them: a success at 6 and a
failure at 5, success at exactly the difficulty, Hunger dice = min(Hunger, pool), pools of
1 and 30 but not 0 or 31, Hunger 0 to 5, a Rouse check's 5 and 6, three rerolled dice but
not four.
"""

from __future__ import annotations

import pytest
from msgspec.structs import replace

from conteur.events import v5
from conteur.events.model import STORYTELLER, Actor
from conteur.events.session import AmendSheet, CharacterAdded
from conteur.events.sheets import V5Sheet
from conteur.events.testing import assert_refuses, decide_after
from conteur.events.v5 import HungerSet, PoolRolled, RollPool, RouseCheck, SetHunger, WillpowerReroll

ANNA = Actor(role="player", character="anna", name="Anna")
SHEET = V5Sheet(attributes={"Wits": 2}, skills={"Awareness": 1}, willpower=4, hunger=2)
ROSTER = [CharacterAdded(character="anna", name="Anna", sheet=SHEET)]
OFFICIAL = [v5.V5Configured(messy_rule="official")]


def pool(faces, *, hunger=0, given=(), **fields) -> PoolRolled:
    """A storyteller's roll of ``len(faces)`` dice at ``hunger``, its dice ``faces``."""
    fields.setdefault("pool", len(faces))
    (event,) = decide_after(list(given), RollPool(hunger=hunger, **fields), draws=faces)
    return event


def verdict(event: PoolRolled) -> tuple:
    return (event.successes, event.margin, event.success, event.critical, event.messy, event.bestial)


# ---------------------------------------------------------------- V5-1 the pool


@pytest.mark.parametrize("dice", [1, 30])
def test_v5_1_pools_of_one_and_thirty_dice_are_rolled(dice):
    assert pool([7] * dice).pool == dice


@pytest.mark.parametrize("dice, code", [(0, "rule"), (31, "invalid")])
def test_v5_1_pools_of_zero_and_thirty_one_dice_are_refused(dice, code):
    assert_refuses(given=[], when=RollPool(pool=dice, hunger=0), code=code, match="V5-1")


def test_v5_1_a_bonus_counts_into_the_pool_and_may_empty_it():
    given = ROSTER
    event = decide_after(given, RollPool(character="anna", attribute="Wits", skill="Awareness", bonus=1),
                         actor=ANNA, draws=[7, 7, 7, 7])[0]
    assert (event.pool, event.source) == (4, "Wits 2 + Awareness 1 +1")
    assert_refuses(given=given, when=RollPool(character="anna", attribute="Wits", bonus=-2), code="rule",
                   match="a pool of 0 dice")
    assert decide_after(given, RollPool(character="anna", attribute="Wits", bonus=-1), actor=STORYTELLER,
                        draws=[7])[0].pool == 1


# ---------------------------------------------------------------- V5-2, V5-3 successes and difficulty


def test_v5_2_a_six_is_a_success_and_a_five_a_failure():
    assert pool([6], difficulty=1).successes == 1
    assert pool([5], difficulty=1).successes == 0


@pytest.mark.parametrize("faces, difficulty, expected", [
    ([6, 6, 2], 2, (2, 0, True, False, False, False)),   # exactly the difficulty: success, margin 0
    ([6, 2, 2], 2, (1, 0, False, False, False, False)),  # one short: failure, margin 0
    ([6, 6, 6], 2, (3, 1, True, False, False, False)),   # one beyond: margin 1
    ([1, 1, 1], 0, (0, 0, True, False, False, False)),   # difficulty 0 always succeeds
])
def test_v5_3_success_at_exactly_the_difficulty_and_the_margin_beyond(faces, difficulty, expected):
    assert verdict(pool(faces, difficulty=difficulty)) == expected


def test_v5_3_a_difficulty_below_zero_is_refused():
    assert_refuses(given=[], when=RollPool(pool=3, hunger=0, difficulty=-1), code="invalid", match="V5-3")


# ---------------------------------------------------------------- V5-4 tens


@pytest.mark.parametrize("tens, successes", [(1, 1), (2, 4), (3, 5), (4, 8), (5, 9)])
def test_v5_4_each_pair_of_tens_counts_four(tens, successes):
    assert pool([10] * tens + [2], difficulty=1).successes == successes


def test_v5_4_a_critical_is_a_success_with_a_pair_of_tens():
    assert pool([10, 10, 2], difficulty=4).critical is True
    assert pool([10, 10, 2], difficulty=5).critical is False  # a failure with a pair is no critical
    assert pool([10, 9, 2], difficulty=1).critical is False   # one ten is no pair


# ---------------------------------------------------------------- V5-5 Hunger dice = min(Hunger, pool)


@pytest.mark.parametrize("dice, hunger, count", [(3, 0, 0), (3, 2, 2), (3, 3, 3), (3, 4, 3), (1, 5, 1), (6, 5, 5)])
def test_v5_5_hunger_dice_are_the_lesser_of_hunger_and_the_pool(dice, hunger, count):
    event = pool(list(range(1, dice + 1)), hunger=hunger)
    assert len(event.hunger) == count and len(event.normal) == dice - count
    assert event.normal + event.hunger == tuple(range(1, dice + 1))  # the last dice drawn are Hunger's


@pytest.mark.parametrize("kind", ["willpower", "humanity", "rouse"])
def test_v5_5_no_hunger_dice_outside_a_normal_pool(kind):
    assert pool([1, 10, 6], hunger=5, kind=kind).hunger == ()


@pytest.mark.parametrize("hunger", [0, 5])
def test_v5_5_hunger_zero_and_five_are_taken(hunger):
    assert pool([6] * 5, hunger=hunger).hunger_level == hunger
    assert decide_after(ROSTER, SetHunger(character="anna", hunger=hunger)) == [
        HungerSet(character="anna", hunger=hunger, previous=2)]


def test_v5_5_hunger_six_is_refused():
    assert_refuses(given=[], when=RollPool(pool=3, hunger=6), code="invalid", match="not in 0-5")
    assert_refuses(given=ROSTER, when=SetHunger(character="anna", hunger=6), code="invalid", match="not in 0-5")


def test_v5_5_a_character_s_hunger_is_its_sheet_s_then_its_changes():
    event = decide_after(ROSTER, RollPool(character="anna", attribute="Wits", skill="Awareness"), actor=ANNA,
                         draws=[7, 7, 7])[0]
    assert (event.hunger_level, len(event.hunger)) == (2, 2)
    given = ROSTER + [HungerSet(character="anna", hunger=0, previous=2)]
    event = decide_after(given, RollPool(character="anna", attribute="Wits", skill="Awareness"), actor=ANNA,
                         draws=[7, 7, 7])[0]
    assert (event.hunger_level, event.hunger) == (0, ())


# ---------------------------------------------------------------- V5-6, V5-7, V5-8 Hunger's ones and tens


def test_v5_6_a_failure_with_a_hunger_one_is_bestial_and_a_two_is_not():
    assert pool([2, 1], hunger=1, difficulty=1).bestial is True
    assert pool([2, 2], hunger=1, difficulty=1).bestial is False
    assert pool([6, 1], hunger=1, difficulty=1).bestial is False  # a success is never bestial


def test_v5_8_a_one_on_a_normal_die_is_nothing():
    assert verdict(pool([1, 2], hunger=1, difficulty=1)) == (0, 0, False, False, False, False)


def test_v5_7_text_rule_a_success_with_a_hunger_ten_is_messy():
    assert pool([2, 10], hunger=1, difficulty=1).messy is True
    assert pool([10, 9], hunger=1, difficulty=1).messy is False  # the ten is a normal die
    assert pool([2, 10], hunger=1, difficulty=2).messy is False  # a failure is never messy


def test_v5_7_official_rule_a_critical_with_a_hunger_ten_is_messy():
    assert pool([10, 10], hunger=1, difficulty=1, given=OFFICIAL).messy is True
    assert pool([2, 10], hunger=1, difficulty=1, given=OFFICIAL).messy is False  # no pair: no critical
    assert pool([10, 10, 2], hunger=1, difficulty=1, given=OFFICIAL).messy is False  # no Hunger ten


# ---------------------------------------------------------------- V5-9 Rouse check and Willpower


@pytest.mark.parametrize("face, before, after", [(5, 2, 3), (6, 2, 2), (1, 4, 5), (1, 5, 5), (10, 5, 5)])
def test_v5_9_a_rouse_check_of_five_or_less_raises_hunger_to_five_at_most(face, before, after):
    given = ROSTER + [HungerSet(character="anna", hunger=before, previous=2)]
    (event,) = decide_after(given, RouseCheck(character="anna"), actor=ANNA, draws=[face])
    assert (event.face, event.hunger_before, event.hunger_after) == (face, before, after)


def rolled(faces, hunger=0, given=ROSTER):
    """Anna's latest roll r1, a storyteller's pool for her."""
    return list(given) + decide_after(given, RollPool(character="anna", pool=len(faces), hunger=hunger),
                                      draws=faces)


@pytest.mark.parametrize("dice", [(0,), (0, 1, 2), (2, 3, 4)])
def test_v5_9_willpower_rerolls_one_to_three_normal_dice(dice):
    given = rolled([1, 2, 3, 4, 5])
    (event,) = decide_after(given, WillpowerReroll(roll="r1", dice=dice), draws=[9] * len(dice))
    assert event.dice == dice and all(event.normal[i] == 9 for i in dice)


def test_v5_9_willpower_rerolls_four_dice_never():
    assert_refuses(given=rolled([1, 2, 3, 4, 5]), when=WillpowerReroll(roll="r1", dice=(0, 1, 2, 3)),
                   match="at most three dice, not 4")


def test_v5_9_the_last_normal_die_is_rerolled_and_a_hunger_die_never():
    given = rolled([1, 2, 3, 4], hunger=2)  # normal (1, 2), Hunger (3, 4)
    assert decide_after(given, WillpowerReroll(roll="r1", dice=(1,)), draws=[8])[0].normal == (1, 8)
    for die in (2, -1):
        assert_refuses(given=given, when=WillpowerReroll(roll="r1", dice=(die,)), match="Hunger dice are never")
    assert_refuses(given=given, when=WillpowerReroll(roll="r1", dice=(0, 0)), code="invalid", match="at most once")


def test_v5_9_the_strategies_pick_at_most_three_dice_by_their_faces():
    given = rolled([10, 9, 6, 5, 2, 1])
    pick = {s: decide_after(given, WillpowerReroll(roll="r1", strategy=s), draws=[7, 7, 7])[0].dice
            for s in ("reroll_failures", "maximise_criticals")}
    assert pick == {"reroll_failures": (3, 4, 5), "maximise_criticals": (3, 4, 5)}
    few = rolled([10, 9, 6, 5])
    assert decide_after(few, WillpowerReroll(roll="r1", strategy="maximise_criticals"), draws=[7] * 3)[0].dice == (
        1, 2, 3)
    assert decide_after(few, WillpowerReroll(roll="r1", strategy="reroll_failures"), draws=[7])[0].dice == (3,)
    assert_refuses(given=rolled([10, 6]), when=WillpowerReroll(roll="r1", strategy="reroll_failures"),
                   match="finds no normal die")


def test_v5_9_avoid_messy_rerolls_normal_tens_unless_two_hunger_tens_make_it():
    one = rolled([10, 2, 10], hunger=1, given=ROSTER + OFFICIAL)  # a pair with one Hunger ten
    assert decide_after(one, WillpowerReroll(roll="r1", strategy="avoid_messy"), draws=[7, 7])[0].dice == (0, 1)
    two = rolled([2, 10, 10], hunger=2, given=ROSTER + OFFICIAL)
    assert_refuses(given=two, when=WillpowerReroll(roll="r1", strategy="avoid_messy"), match="Hunger dice alone")
    assert_refuses(given=rolled([2, 9, 10], hunger=1, given=ROSTER + OFFICIAL),
                   when=WillpowerReroll(roll="r1", strategy="avoid_messy"), code="invalid", match="not a messy")


# ---------------------------------------------------------------- whose roll, whose Hunger


def test_v5_5_a_roll_for_no_character_or_one_without_a_v5_sheet_has_hunger_zero():
    assert pool([6, 6, 6]).hunger == ()  # a storyteller's pool, Hunger given as 0
    (bare,) = decide_after([], RollPool(pool=3), draws=[6, 6, 6])
    assert (bare.hunger_level, bare.hunger) == (0, ())
    kim = [CharacterAdded(character="kim", name="Kim")]
    (kims,) = decide_after(kim, RollPool(character="kim", pool=3), draws=[6, 6, 6])
    assert (kims.hunger_level, kims.hunger) == (0, ())


def test_v5_5_an_amended_starting_hunger_starts_hunger_again_and_an_unchanged_one_keeps_play():
    given = ROSTER + [HungerSet(character="anna", hunger=4, previous=2)]
    same = given + decide_after(given, AmendSheet(character="anna", sheet=replace(SHEET, willpower=5)))
    assert decide_after(same, RollPool(character="anna", pool=5), draws=[6] * 5)[0].hunger_level == 4
    fed = given + decide_after(given, AmendSheet(character="anna", sheet=replace(SHEET, hunger=1)))
    assert decide_after(fed, RollPool(character="anna", pool=5), draws=[6] * 5)[0].hunger_level == 1
    unknown = ROSTER + decide_after(ROSTER, AmendSheet(character="anna", sheet=replace(SHEET, hunger=3)))
    assert decide_after(unknown, RollPool(character="anna", pool=5), draws=[6] * 5)[0].hunger_level == 3


def test_v5_9_a_rouse_check_s_five_raises_hunger_and_six_does_not():
    raised = [decide_after(ROSTER, RouseCheck(character="anna"), actor=ANNA, draws=[face])[0].raised
              for face in (1, 5, 6, 10)]
    assert raised == [True, True, False, False]


def test_v5_9_each_character_rerolls_its_own_latest_roll():
    bruno = [CharacterAdded(character="bruno", name="Bruno", sheet=V5Sheet(attributes={"Wits": 3}))]
    given = rolled([1, 2, 3], given=ROSTER + bruno)
    given += decide_after(given, RollPool(character="bruno", pool=3, hunger=0), draws=[4, 4, 4])
    assert decide_after(given, WillpowerReroll(roll="r1", dice=(0,)), draws=[9])[0].normal == (9, 2, 3)
    assert decide_after(given, WillpowerReroll(roll="r2", dice=(0,)), draws=[9])[0].normal == (9, 4, 4)


def test_v5_9_a_reroll_names_its_dice_or_a_strategy_not_both_nor_neither():
    given = rolled([1, 2, 3])
    for command in (WillpowerReroll(roll="r1"), WillpowerReroll(roll="r1", dice=(0,), strategy="reroll_failures")):
        assert_refuses(given=given, when=command, code="invalid", match="either the dice to reroll or a strategy")


def test_v5_9_a_reroll_of_another_roll_in_a_partial_fold_leaves_the_latest_roll_alone():
    given = rolled([1, 2, 3])
    stray = v5.WillpowerRerolled(roll="r9", character="anna", dice=(0,), before=(1,), after=(9,), normal=(9, 2, 3),
                                 hunger=(), difficulty=1, messy_rule="text", successes=1, margin=0, success=True,
                                 critical=False, messy=False, bestial=False)
    assert decide_after(given + [stray], WillpowerReroll(roll="r1", dice=(0,)), draws=[8])[0].normal == (8, 2, 3)


def test_v5_7_avoid_messy_is_refused_under_the_text_rule():
    assert_refuses(given=rolled([10, 2, 10], hunger=1), when=WillpowerReroll(roll="r1", strategy="avoid_messy"),
                   match="Hunger dice alone")


def test_v5_9_maximise_criticals_never_rerolls_a_ten():
    given = rolled([10, 10, 9])
    assert decide_after(given, WillpowerReroll(roll="r1", strategy="maximise_criticals"), draws=[7])[0].dice == (2,)


def test_v5_9_a_storyteller_s_blind_rolls_for_two_characters_are_each_rerolled():
    bruno = [CharacterAdded(character="bruno", name="Bruno", sheet=V5Sheet(attributes={"Wits": 3}))]
    given = ROSTER + bruno
    for character in ("anna", "bruno"):
        given = given + decide_after(given, RollPool(character=character, pool=2, hunger=0, visibility="blind"),
                                     draws=[1, 2])
    first = next(e for e in given if isinstance(e, PoolRolled) and e.character == "anna").roll
    assert decide_after(given, WillpowerReroll(roll=first, dice=(0,)), draws=[9])[0].normal == (9, 2)
