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

from conteur.events import game, v5
from conteur.events.fair import FairDraws
from conteur.events.model import STORYTELLER, Actor, DrawRecord
from conteur.events.session import AmendSheet, CharacterAdded
from conteur.events.sheets import ActionSheet, V5Sheet
from conteur.events.testing import assert_decides, assert_refuses, decide_after
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


# ---------------------------------------------------------------- refusals: rule, code and the facts they name

BRUNO = Actor(role="player", character="bruno", name="Bruno")
KIM = Actor(role="player", character="kim", name="Kim")
TABLE = ROSTER + [
    CharacterAdded(character="bruno", name="Bruno", sheet=V5Sheet(attributes={"Wits": 3})),
    CharacterAdded(character="kim", name="Kim", sheet=ActionSheet(characteristics={"Science": 6})),
]


def with_rolls(*commands, given=TABLE):
    """``given`` and the storyteller's rolls ``commands``, their dice the first of 1, 2, 10, 3, 4."""
    events = list(given)
    for command in commands:
        events += decide_after(events, command, draws=[1, 2, 10, 3, 4][: command.pool])
    return events


ANNAS = RollPool(character="anna", pool=3, hunger=1)  # r1: normal (1, 2), Hunger (10,)
SECRET = RollPool(character="anna", pool=3, hunger=1, visibility="secret")
REROLLED = with_rolls(ANNAS)
REROLLED += decide_after(REROLLED, WillpowerReroll(roll="r1", dice=(0,)), draws=[7])
MESSY_TWICE = TABLE + OFFICIAL + decide_after(TABLE + OFFICIAL, RollPool(character="anna", pool=4, hunger=2),
                                               draws=[10, 2, 10, 10])

REFUSALS = {
    "V5-1 no character": (TABLE, RollPool(attribute="Wits"), ANNA, "invalid", "V5-1",
                          "name the character who rolls"),
    "V5-1 unknown attribute": (TABLE, RollPool(character="anna", attribute="Charisma"), ANNA, "invalid", "V5-1",
                               "anna's sheet has no trait 'Charisma' (V5-1)"),
    "V5-1 unknown skill": (TABLE, RollPool(character="anna", attribute="Wits", skill="Brawl"), ANNA, "invalid",
                           "V5-1", "anna's sheet has no trait 'Brawl' (V5-1)"),
    "V5-1 a number from a sheet's player": (
        TABLE, RollPool(character="anna", pool=3), ANNA, "invalid", "V5-1",
        "anna's sheet is on record: name the attribute and skill (or Willpower, Humanity) instead of a number "
        "of dice (V5-1)"),
    "V5-1 no sheet, no character": (TABLE, RollPool(attribute="Wits"), STORYTELLER, "invalid", "V5-1",
                                    "no V5 sheet for this roll: give the pool as a number of dice (V5-1)"),
    "V5-1 no V5 sheet": (TABLE, RollPool(character="kim", attribute="Wits"), KIM, "invalid", "V5-1",
                         "no V5 sheet for kim: give the pool as a number of dice (V5-1)"),
    "V5-1 no pool named": (TABLE, RollPool(character="anna"), ANNA, "invalid", "V5-1",
                           "name the pool: an attribute and a skill, or a number of dice (V5-1)"),
    "V5-1 zero dice": (TABLE, RollPool(pool=0), STORYTELLER, "rule", "V5-1",
                       "a pool of 0 dice cannot be rolled (V5-1)"),
    "V5-1 thirty-one dice": (TABLE, RollPool(pool=31), STORYTELLER, "invalid", "V5-1",
                             "a pool of 31 dice is above 30 (V5-1)"),
    "V5-1 a player's bonus of four": (
        TABLE, RollPool(character="anna", attribute="Wits", bonus=4), ANNA, "rule", "max_player_bonus",
        "a bonus of 4 dice is above this session's max_player_bonus of 3: ask a storyteller for more"),
    "V5-3 difficulty -1": (TABLE, RollPool(pool=3, difficulty=-1), STORYTELLER, "invalid", "V5-3",
                           "difficulty -1 is below 0 (V5-3)"),
    "V5-5 a Willpower roll with an attribute": (
        TABLE, RollPool(character="anna", kind="willpower", attribute="Wits"), ANNA, "invalid", "V5-5",
        "a willpower roll has no attribute or skill: it is the willpower pool alone (V5-1, V5-5)"),
    "V5-5 a roll at Hunger 6": (TABLE, RollPool(pool=3, hunger=6), STORYTELLER, "invalid", "V5-5",
                                "Hunger 6 is not in 0-5 (V5-5)"),
    "V5-5 a roll at Hunger -1": (TABLE, RollPool(pool=3, hunger=-1), STORYTELLER, "invalid", "V5-5",
                                 "Hunger -1 is not in 0-5 (V5-5)"),
    "V5-5 Hunger set to 6": (TABLE, SetHunger(character="anna", hunger=6), STORYTELLER, "invalid", "V5-5",
                             "Hunger 6 is not in 0-5 (V5-5)"),
    "V5-5 Hunger set to -1": (TABLE, SetHunger(character="anna", hunger=-1), STORYTELLER, "invalid", "V5-5",
                              "Hunger -1 is not in 0-5 (V5-5)"),
    "V5-9 a player's Hunger": (TABLE, RollPool(character="anna", attribute="Wits", hunger=1), ANNA, "forbidden",
                               "V5-9", "Hunger comes from your sheet; only a storyteller sets it (V5-9)"),
    "V5-9 a player's pool of Rouse dice": (
        TABLE, RollPool(character="anna", kind="rouse"), ANNA, "forbidden", "V5-9",
        "a player's Rouse check is the rouse command; only a storyteller rolls a pool of Rouse dice (V5-9)"),
    "V5-9 a roll no longer the latest": (
        with_rolls(SECRET, SECRET), WillpowerReroll(roll="r1.anna", dice=(0,)), ANNA, "rule", "V5-9",
        "roll r1.anna is no longer its character's latest pool roll: Willpower rerolls the roll just made (V5-9)"),
    "V5-9 a roll of another audience": (
        with_rolls(RollPool(character="bruno", pool=3, hunger=0, visibility="secret")),
        WillpowerReroll(roll="r1.bruno", dice=(0,)), ANNA, "not_found", "V5-9", "no pool roll 'r1.bruno' to reroll"),
    "V5-9 a roll that never was": (TABLE, WillpowerReroll(roll="r9", dice=(0,)), STORYTELLER, "not_found", "V5-9",
                                   "no pool roll 'r9' to reroll"),
    "V5-9 another player's roll": (with_rolls(ANNAS), WillpowerReroll(roll="r1", dice=(0,)), BRUNO, "forbidden",
                                   "V5-9", "roll r1 is not bruno's to reroll"),
    "V5-9 a roll named for another character": (
        with_rolls(ANNAS), WillpowerReroll(roll="r1", character="bruno", dice=(0,)), STORYTELLER, "invalid", "V5-9",
        "roll r1 was made by anna"),
    "V5-9 a second reroll": (REROLLED, WillpowerReroll(roll="r1", dice=(1,)), ANNA, "rule", "V5-9",
                             "roll r1 was already rerolled with Willpower: once per roll (V5-9)"),
    "V5-9 neither dice nor strategy": (with_rolls(ANNAS), WillpowerReroll(roll="r1"), ANNA, "invalid", "V5-9",
                                       "give either the dice to reroll or a strategy (V5-9)"),
    "V5-9 a die twice": (with_rolls(ANNAS), WillpowerReroll(roll="r1", dice=(1, 1)), ANNA, "invalid", "V5-9",
                         "each die is rerolled at most once (V5-9)"),
    "V5-7 avoid_messy without a messy critical": (
        with_rolls(RollPool(character="anna", pool=2, hunger=0)), WillpowerReroll(roll="r1", strategy="avoid_messy"),
        ANNA, "invalid", "V5-7", "this roll is not a messy critical: nothing to avoid (V5-7)"),
    "V5-9 four dice": (with_rolls(RollPool(character="anna", pool=5, hunger=0)),
                       WillpowerReroll(roll="r1", dice=(0, 1, 2, 3)), ANNA, "rule", "V5-9",
                       "Willpower rerolls at most three dice, not 4 (V5-9)"),
    "V5-9 a Hunger die": (with_rolls(ANNAS), WillpowerReroll(roll="r1", dice=(2,)), ANNA, "rule", "V5-9",
                          "die 2 is not one of the 2 normal dice; Hunger dice are never rerolled (V5-9)"),
    "V5-9 a messy critical of Hunger dice alone": (
        MESSY_TWICE, WillpowerReroll(roll="r1", strategy="avoid_messy"), ANNA, "rule", "V5-9",
        "this messy critical comes from the Hunger dice alone, which Willpower cannot reroll (V5-7, V5-9)"),
    "roles a player's blind roll": (TABLE, RollPool(character="anna", attribute="Wits", visibility="blind"), ANNA,
                                    "forbidden", "roles",
                                    "only a storyteller may roll blind; choose an open or secret roll"),
    "roles a player's blind Rouse check": (TABLE, RouseCheck(character="anna", visibility="blind"), ANNA,
                                           "forbidden", "roles",
                                           "only a storyteller may roll blind; choose an open or secret roll"),
}


@pytest.mark.parametrize("case", REFUSALS)
def test_v5_each_refusal_cites_its_rule_with_its_code_and_the_facts_it_names(case):
    given, when, actor, code, rule, message = REFUSALS[case]
    violation = assert_refuses(given=given, when=when, actor=actor, draws=[7] * 4, code=code)
    assert (violation.rule, violation.message) == (rule, message)


def test_v5_9_strategy_reroll_failures_finds_no_die_in_a_roll_without_failures():
    given = TABLE + decide_after(TABLE, RollPool(character="anna", pool=2, hunger=0), draws=[6, 10])
    violation = assert_refuses(given=given, when=WillpowerReroll(roll="r1", strategy="reroll_failures"), actor=ANNA,
                               code="rule")
    assert (violation.rule, violation.message) == ("V5-9", "strategy reroll_failures finds no normal die to reroll (V5-9)")


# ---------------------------------------------------------------- what a roll records


def records(faces):
    return tuple(DrawRecord(counter=i, sides=10, face=f) for i, f in enumerate(faces))


def test_v5_1_a_player_s_secret_roll_records_its_bonus_of_three_its_label_and_its_audience():
    assert_decides(
        given=TABLE,
        when=RollPool(character="anna", attribute="Wits", skill="Awareness", bonus=3, visibility="secret",
                      label="at the door"),
        actor=ANNA,
        draws=[6, 7, 2, 1, 10, 3],
        then=[PoolRolled(roll="r1.anna", character="anna", kind="normal", pool=6, difficulty=1,
                         normal=(6, 7, 2, 1), hunger=(10, 3), successes=3, margin=2, success=True, critical=False,
                         messy=True, bestial=False, source="Wits 2 + Awareness 1 +3", visibility="secret",
                         label="at the door", draws=records([6, 7, 2, 1, 10, 3]), bonus=3, hunger_level=2)],
    )


def test_v5_1_a_willpower_pool_is_named_after_the_sheet_s_willpower():
    (event,) = decide_after(TABLE, RollPool(character="anna", kind="willpower"), actor=ANNA, draws=[6] * 4)
    assert (event.pool, event.source, event.hunger) == (4, "Willpower 4", ())


def test_v5_1_a_player_whose_sheet_is_not_a_v5_sheet_declares_a_number_of_dice():
    (event,) = decide_after(TABLE, RollPool(character="kim", pool=3), actor=KIM, draws=[6, 6, 6])
    assert (event.pool, event.source, event.hunger_level) == (3, "declared 3", 0)


def test_v5_7_a_storyteller_switches_the_chronicle_to_the_official_rule():
    given = TABLE + assert_decides(given=TABLE, when=v5.ConfigureV5(messy_rule="official"),
                                   then=[v5.V5Configured(messy_rule="official")])
    assert pool([6, 10], hunger=1, given=given).messy_rule == "official"


def test_v5_7_a_reroll_under_the_official_rule_is_scored_by_the_official_rule():
    given = with_rolls(RollPool(character="anna", pool=3, hunger=1), given=TABLE + OFFICIAL)  # (1, 2), Hunger (10,)
    (event,) = decide_after(given, WillpowerReroll(roll="r1", dice=(0,)), actor=ANNA, draws=[7])
    # a success with a Hunger 10 but no pair: messy by the text, not by the official rule
    assert (event.normal, event.success, event.messy, event.messy_rule) == ((7, 2), True, False, "official")


def test_v5_9_a_blind_roll_is_rerolled_once_only():
    given = with_rolls(RollPool(character="anna", pool=3, hunger=0, visibility="blind"))
    given += decide_after(given, WillpowerReroll(roll="r1.*", dice=(0,)), draws=[9])
    assert_refuses(given=given, when=WillpowerReroll(roll="r1.*", dice=(1,)), match="once per roll")


# ---------------------------------------------------------------- ids and draw streams by audience


def test_v5_9_rolls_and_rouse_checks_are_numbered_within_their_audience():
    steps = [
        (ANNA, RouseCheck(character="anna"), "r1"),
        (ANNA, RouseCheck(character="anna", visibility="secret"), "r1.anna"),
        (ANNA, RouseCheck(character="anna", visibility="secret"), "r2.anna"),
        (ANNA, RollPool(character="anna", attribute="Wits"), "r2"),
        (ANNA, RollPool(character="anna", attribute="Wits", visibility="secret"), "r3.anna"),
        (ANNA, RollPool(character="anna", attribute="Wits", visibility="secret"), "r4.anna"),
        (STORYTELLER, RouseCheck(character="anna", visibility="blind"), "r1.*"),
        (STORYTELLER, RollPool(character="anna", pool=2, visibility="blind"), "r2.*"),
        (ANNA, RouseCheck(character="anna"), "r3"),
    ]
    given, ids = list(TABLE), []
    for actor, command, _ in steps:
        (event,) = decide_after(given, command, actor=actor, draws=[6, 6])
        given.append(event)
        ids.append(event.roll)
    assert ids == [expected for _, _, expected in steps]


def test_v5_9_a_secret_rouse_check_records_its_audience_and_label():
    assert_decides(given=TABLE, when=RouseCheck(character="anna", visibility="secret", label="the door"), actor=ANNA,
                   draws=[3], then=[v5.RouseChecked(roll="r1.anna", character="anna", face=3, hunger_before=2,
                                                    hunger_after=3, visibility="secret", label="the door",
                                                    draws=records([3]))])


def test_fair_2_a_v5_roll_its_reroll_and_a_rouse_check_draw_in_the_stream_of_their_audience():
    steps = [
        (ANNA, RollPool(character="anna", attribute="Wits", skill="Awareness", visibility="secret"), "anna/secret=anna"),
        (ANNA, WillpowerReroll(roll="r1.anna", dice=(0,)), "anna/secret=anna"),
        (ANNA, RouseCheck(character="anna", visibility="secret"), "anna/secret=anna"),
        (ANNA, RouseCheck(character="anna"), "anna/open"),
        (ANNA, RollPool(character="anna", attribute="Wits"), "anna/open"),
        (STORYTELLER, RollPool(character="anna", pool=3, hunger=0, visibility="blind"), "*/blind"),
        (STORYTELLER, WillpowerReroll(roll="r1.*", dice=(0,)), "*/blind"),
    ]
    state = game.fold(TABLE)
    for actor, command, stream in steps:
        draws = FairDraws(b"\x07" * 32, "night", entropy="e", streams=state.streams)
        (event,) = game.decide(state, command, draws, actor=actor)
        assert {r.stream for r in event.draws} == {stream}, command
        state = game.fold([event], state)
