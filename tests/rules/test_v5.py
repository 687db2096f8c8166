"""V5 dice pools with Hunger (RULES V5-1..9), given events / when command / then events."""

from __future__ import annotations

import pytest
from hypothesis import assume
from hypothesis import given as for_all
from hypothesis import strategies as st
from msgspec.structs import replace

from conteur.events import game, v5
from conteur.events.model import STORYTELLER, Actor, DrawRecord, RuleViolation
from conteur.events.session import CharacterAdded
from conteur.events.sheets import V5Sheet
from conteur.events.testing import assert_decides, assert_refuses, decide_after
from conteur.events.v5 import (
    HungerSet,
    PoolRolled,
    RollPool,
    RouseCheck,
    RouseChecked,
    SetHunger,
    WillpowerReroll,
)

ANNA = Actor(role="player", character="anna", name="Anna")
BRUNO = Actor(role="player", character="bruno", name="Bruno")
SHEET = V5Sheet(
    attributes={"Dexterity": 3, "Wits": 2, "Composure": 2, "Resolve": 3},
    skills={"Stealth": 2, "Awareness": 1},
    willpower=4,
    humanity=7,
    hunger=2,
)
ROSTER = [
    CharacterAdded(character="anna", name="Anna", sheet=SHEET),
    CharacterAdded(character="bruno", name="Bruno", sheet=V5Sheet(hunger=0)),
]


def records(faces, start=0):
    return tuple(DrawRecord(counter=start + i, sides=10, face=f) for i, f in enumerate(faces))


def scored(normal, hunger, difficulty, rule="text") -> PoolRolled:
    """A storyteller's pool of ``normal`` then ``hunger`` dice (the last drawn are Hunger's,
    V5-5) at ``difficulty``, under the chronicle's messy rule ``rule`` (V5-7)."""
    given = [v5.V5Configured(messy_rule=rule)] if rule != "text" else []
    command = RollPool(pool=len(normal) + len(hunger), hunger=len(hunger), difficulty=difficulty)
    (event,) = decide_after(given, command, draws=[*normal, *hunger])
    return event


def verdict(event: PoolRolled) -> tuple:
    return (event.successes, event.margin, event.success, event.critical, event.messy, event.bestial)


def roll(faces, *, given=ROSTER, actor=ANNA, **fields) -> PoolRolled:
    fields.setdefault("character", actor.character)
    (event,) = decide_after(given, RollPool(**fields), actor=actor, draws=faces)
    return event


# ---------------------------------------------------------------- V5-1 pools


def test_v5_1_pool_is_attribute_plus_skill_from_the_sheet():
    event = roll([6, 7, 2, 3, 9], attribute="Dexterity", skill="Stealth")
    assert event.pool == 5
    assert event.source == "Dexterity 3 + Stealth 2"


def test_v5_1_other_combinations_name_two_attributes():
    assert roll([6] * 5, attribute="Composure", skill="Resolve").pool == 5


def test_v5_1_willpower_and_humanity_pools_come_from_the_sheet():
    assert roll([6] * 4, kind="willpower").pool == 4
    assert roll([6] * 7, kind="humanity").pool == 7


def test_v5_1_the_whole_roll_is_recorded_in_its_event():
    assert_decides(
        given=ROSTER,
        when=RollPool(character="anna", attribute="Dexterity", skill="Stealth", difficulty=2),
        actor=ANNA,
        draws=[6, 7, 2, 1, 10],
        then=[
            PoolRolled(
                roll="r1",
                character="anna",
                kind="normal",
                pool=5,
                difficulty=2,
                normal=(6, 7, 2),
                hunger=(1, 10),
                successes=3,
                margin=1,
                success=True,
                critical=False,
                messy=True,
                bestial=False,
                source="Dexterity 3 + Stealth 2",
                hunger_level=2,  # recorded, so verify can count the Hunger dice again
                draws=records([6, 7, 2, 1, 10]),
            )
        ],
    )


def test_v5_1_a_pool_of_zero_or_less_is_refused():
    assert_refuses(
        given=ROSTER,
        when=RollPool(character="anna", attribute="Wits", bonus=-2),
        actor=ANNA,
        match="V5-1",
    )


def test_v5_1_a_player_with_a_sheet_names_traits_not_a_number():
    assert_refuses(
        given=ROSTER, when=RollPool(character="anna", pool=9), actor=ANNA, code="invalid", match="V5-1"
    )


def test_v5_1_an_unknown_trait_is_refused_naming_it():
    assert_refuses(
        given=ROSTER, when=RollPool(character="anna", attribute="Charisma"), actor=ANNA,
        match="'Charisma'",
    )


def test_v5_1_a_storyteller_names_any_pool():
    assert roll([6] * 9, actor=STORYTELLER, character="anna", pool=9).pool == 9


# ---------------------------------------------------------------- V5-2, V5-3, V5-8


def test_v5_2_six_to_ten_succeed_one_to_five_fail():
    assert scored([1, 2, 3, 4, 5], [], 1).successes == 0
    assert scored([6, 7, 8, 9], [], 1).successes == 4


def test_v5_3_difficulty_is_the_number_of_successes_and_the_rest_is_margin():
    assert verdict(scored([6, 7, 8, 2], [], 2)) == (3, 1, True, False, False, False)
    failed = scored([6, 2, 3], [], 2)
    assert (failed.success, failed.margin) == (False, 0)


# ---------------------------------------------------------------- V5-4 tens


def test_v5_4_six_tens_are_twelve_successes():
    assert scored([10] * 6, [], 1).successes == 12


# ---------------------------------------------------------------- V5-5 Hunger dice


def test_v5_5_six_dice_at_hunger_two_are_four_normal_and_two_hunger_dice():
    event = roll([6, 7, 8, 9, 2, 3], actor=STORYTELLER, character="anna", pool=6)
    assert (event.normal, event.hunger) == ((6, 7, 8, 9), (2, 3))


def test_v5_5_never_more_hunger_dice_than_the_pool():
    given = ROSTER + [HungerSet(character="anna", hunger=5, previous=2)]
    event = roll([6, 7, 8], given=given, actor=STORYTELLER, character="anna", pool=3)
    assert (event.normal, event.hunger) == ((), (6, 7, 8))


@pytest.mark.parametrize("kind", ["willpower", "humanity", "rouse"])
def test_v5_5_willpower_humanity_and_rouse_pools_have_no_hunger_dice(kind):
    event = roll([6, 7, 1], actor=STORYTELLER, character="anna", pool=3, kind=kind)
    assert (event.normal, event.hunger, event.bestial) == ((6, 7, 1), (), False)


def test_v5_5_a_willpower_roll_cannot_carry_an_attribute_to_dodge_hunger_dice():
    assert_refuses(given=ROSTER, when=RollPool(character="anna", kind="willpower",
                                               attribute="Dexterity", skill="Stealth"),
                   actor=ANNA, match="V5-5")


def test_v5_9_a_player_rouses_with_the_rouse_command_not_a_pool():
    assert_refuses(given=ROSTER, when=RollPool(character="anna", kind="rouse"), actor=ANNA,
                   code="forbidden")


def test_v5_5_hunger_follows_its_changes():
    given = ROSTER + [RouseChecked(roll="r1", character="anna", face=3, hunger_before=2, hunger_after=3)]
    event = roll([6] * 5, given=given, attribute="Dexterity", skill="Stealth")
    assert len(event.hunger) == 3


def test_v5_5_a_storyteller_roll_without_character_takes_hunger_as_given():
    event = roll([6, 6, 6], actor=STORYTELLER, character=None, pool=3, hunger=1)
    assert event.hunger == (6,)


def test_v5_5_a_player_cannot_set_the_hunger_of_a_roll():
    assert_refuses(given=ROSTER, when=RollPool(character="anna", attribute="Wits", hunger=0),
                   actor=ANNA, code="forbidden")


# ---------------------------------------------------------------- V5-6, V5-7


def test_v5_7_the_same_success_with_a_hunger_ten_is_messy_by_the_text_and_not_by_the_official_rule():
    assert scored([6, 3], [10], 1, "text").messy
    assert not scored([6, 3], [10], 1, "official").messy


def test_v5_7_a_failed_roll_is_never_messy():
    assert not scored([2], [10], 3, "text").messy
    assert not scored([10], [10], 5, "official").messy


def test_v5_7_the_official_rule_is_a_chronicle_option():
    given = ROSTER + [v5.V5Configured(messy_rule="official")]
    event = roll([6, 3, 2, 10], given=given, actor=STORYTELLER, character="anna", pool=4)
    assert (event.success, event.messy, event.messy_rule) == (True, False, "official")


def test_v5_7_only_a_storyteller_configures_the_messy_rule():
    assert_refuses(given=ROSTER, when=v5.ConfigureV5(messy_rule="official"), actor=ANNA,
                   code="forbidden")


# ---------------------------------------------------------------- V5-9 Rouse checks


def test_v5_9_rouse_check_failure_raises_hunger_by_one():
    assert_decides(
        given=ROSTER,
        when=RouseCheck(character="anna"),
        actor=ANNA,
        draws=[5],
        then=[RouseChecked(roll="r1", character="anna", face=5, hunger_before=2,
                           hunger_after=3, draws=records([5]))],
    )


def test_v5_9_rouse_check_success_keeps_hunger():
    (event,) = decide_after(ROSTER, RouseCheck(character="anna"), actor=ANNA, draws=[6])
    assert (event.hunger_after, event.raised) == (2, False)


def test_v5_9_rouse_check_never_raises_hunger_above_five():
    given = ROSTER + [HungerSet(character="anna", hunger=5, previous=2)]
    (event,) = decide_after(given, RouseCheck(character="anna"), actor=ANNA, draws=[1])
    assert (event.hunger_before, event.hunger_after) == (5, 5)


# ---------------------------------------------------------------- V5-9 Willpower reroll

FIRST = PoolRolled(
    roll="r1", character="anna", kind="normal", pool=5, difficulty=3,
    normal=(2, 4, 6, 10), hunger=(1,), successes=2, margin=0, success=False,
    critical=False, messy=False, bestial=True, draws=records([2, 4, 6, 10, 1]),
)


def test_v5_9_willpower_rerolls_chosen_normal_dice_in_an_appended_event():
    events = decide_after(ROSTER + [FIRST], WillpowerReroll(character="anna", roll="r1", dice=(0, 1)),
                          actor=ANNA, draws=[7, 8])
    assert events == [
        v5.WillpowerRerolled(
            roll="r1", character="anna", dice=(0, 1), before=(2, 4), after=(7, 8),
            normal=(7, 8, 6, 10), hunger=(1,), difficulty=3, successes=4, margin=1,
            success=True, critical=False, messy=False, bestial=False,
            draws=records([7, 8], start=5),
        )
    ]


def test_v5_9_willpower_rerolls_at_most_three_dice():
    assert_refuses(given=ROSTER + [FIRST],
                   when=WillpowerReroll(roll="r1", dice=(0, 1, 2, 3)), actor=ANNA, match="V5-9")


def test_v5_9_willpower_never_rerolls_a_hunger_die():
    assert_refuses(given=ROSTER + [FIRST], when=WillpowerReroll(roll="r1", dice=(4,)),
                   actor=ANNA, match="Hunger dice are never rerolled")


def test_v5_9_willpower_rerolls_once_per_roll():
    (reroll,) = decide_after(ROSTER + [FIRST], WillpowerReroll(roll="r1", dice=(0,)), actor=ANNA,
                             draws=[3])
    assert_refuses(given=ROSTER + [FIRST, reroll], when=WillpowerReroll(roll="r1", dice=(1,)),
                   actor=ANNA, match="once per roll")


def test_v5_9_willpower_rerolls_the_latest_roll_only():
    later = replace(FIRST, roll="r2", draws=records([6] * 5, start=5))
    assert_refuses(given=ROSTER + [FIRST, later], when=WillpowerReroll(roll="r1", dice=(0,)),
                   actor=ANNA, match="latest pool roll")


def test_v5_9_a_blind_roll_for_a_character_does_not_displace_its_own_latest_roll():
    blind = replace(FIRST, roll="r2", visibility="blind", draws=records([6] * 5, start=5))
    (event,) = decide_after(ROSTER + [FIRST, blind], WillpowerReroll(roll="r1", dice=(0,)),
                            actor=ANNA, draws=[6])
    assert event.roll == "r1"


def test_a_player_cannot_reroll_a_blind_roll_made_for_its_character():
    blind = replace(FIRST, visibility="blind")
    assert_refuses(given=ROSTER + [blind], when=WillpowerReroll(roll="r1", dice=(0,)), actor=ANNA,
                   match="latest pool roll")


def test_v5_9_a_player_rerolls_only_the_rolls_of_its_character():
    assert_refuses(given=ROSTER + [FIRST], when=WillpowerReroll(roll="r1", dice=(0,)), actor=BRUNO,
                   code="forbidden")


def test_v5_9_strategy_reroll_failures_takes_the_failed_normal_dice():
    (event,) = decide_after(ROSTER + [FIRST], WillpowerReroll(roll="r1", strategy="reroll_failures"),
                            actor=ANNA, draws=[9, 9])
    assert (event.dice, event.strategy, event.success) == ((0, 1), "reroll_failures", True)


def test_v5_9_strategy_maximise_criticals_rerolls_every_non_ten_up_to_three():
    given = ROSTER + decide_after(ROSTER, RollPool(character="anna", pool=5, hunger=0), draws=[9, 2, 10, 6, 7])
    (event,) = decide_after(given, WillpowerReroll(roll="r1", strategy="maximise_criticals"), actor=ANNA,
                            draws=[7, 7, 7])
    assert event.dice == (1, 3, 4)


def test_v5_9_a_reroll_leaves_the_first_roll_in_the_log_and_updates_the_roll():
    (reroll,) = decide_after(ROSTER + [FIRST], WillpowerReroll(roll="r1", dice=(0,)), actor=ANNA,
                             draws=[6])
    state = game.fold(ROSTER + [FIRST, reroll]).v5
    assert state.rolls["anna"].normal == (6, 4, 6, 10) and state.rolls["anna"].rerolled


# ---------------------------------------------------------------- V5-9 Hunger set


def test_v5_9_a_storyteller_sets_hunger():
    assert_decides(given=ROSTER, when=SetHunger(character="anna", hunger=4, reason="fed badly"),
                   then=[HungerSet(character="anna", hunger=4, previous=2, reason="fed badly")])


def test_v5_9_only_a_storyteller_sets_hunger():
    assert_refuses(given=ROSTER, when=SetHunger(character="anna", hunger=0), actor=ANNA,
                   code="forbidden")


def test_v5_5_hunger_is_between_zero_and_five():
    assert_refuses(given=ROSTER, when=SetHunger(character="anna", hunger=6), match="V5-5")


def test_hunger_set_is_seen_by_its_character_only():
    assert HungerSet(character="anna", hunger=4, previous=2).owners() == frozenset({"anna"})


# ---------------------------------------------------------------- visibility and ids


def test_roll_ids_follow_each_other():
    first = roll([6] * 5, attribute="Dexterity", skill="Stealth")
    second = roll([6] * 5, given=ROSTER + [first], attribute="Dexterity", skill="Stealth")
    assert (first.roll, second.roll) == ("r1", "r2")


def test_an_open_roll_is_public():
    assert roll([6] * 5, attribute="Dexterity", skill="Stealth").owners() is None


def test_a_secret_roll_is_seen_by_its_roller_and_hides_even_its_dice_count():
    event = roll([6] * 5, attribute="Dexterity", skill="Stealth", visibility="secret")
    assert event.owners() == frozenset({"anna"}) and event.redacted() is None


def test_a_blind_roll_is_for_storytellers_only():
    event = roll([6] * 2, actor=STORYTELLER, character="anna", pool=2, visibility="blind")
    assert event.owners() == frozenset() and event.redacted() is None


def test_a_player_cannot_roll_blind():
    assert_refuses(given=ROSTER, when=RollPool(character="anna", attribute="Wits", visibility="blind"),
                   actor=ANNA, code="forbidden")


def test_a_reroll_keeps_the_visibility_of_its_roll():
    secret = replace(FIRST, visibility="secret")
    (event,) = decide_after(ROSTER + [secret], WillpowerReroll(roll="r1", dice=(0,)), actor=ANNA,
                            draws=[6])
    assert event.owners() == frozenset({"anna"})


def test_a_player_rolls_only_for_its_own_character():
    assert_refuses(given=ROSTER, when=RollPool(character="anna", attribute="Wits"), actor=BRUNO,
                   code="forbidden")


# ---------------------------------------------------------------- properties


faces = st.lists(st.integers(1, 10), max_size=8)
hunger_faces = st.lists(st.integers(1, 10), max_size=5)  # Hunger is 5 at most (V5-5)


@for_all(faces, hunger_faces, st.integers(0, 10))
def test_v5_4_successes_are_the_successful_dice_plus_two_per_pair_of_tens(normal, hunger, difficulty):
    assume(normal or hunger)
    outcome = scored(normal, hunger, difficulty)
    dice = normal + hunger
    assert outcome.successes == sum(f >= 6 for f in dice) + 2 * (dice.count(10) // 2)
    assert outcome.success == (outcome.successes >= difficulty)
    assert not (outcome.success and outcome.bestial)


@for_all(faces, hunger_faces, st.integers(0, 10))
def test_v5_7_an_official_messy_critical_is_always_a_messy_critical_by_the_text(normal, hunger, d):
    assume(normal or hunger)
    if scored(normal, hunger, d, "official").messy:
        assert scored(normal, hunger, d, "text").messy


@for_all(st.integers(1, 30), st.integers(0, 5), st.sampled_from(["normal", "willpower", "humanity", "rouse"]))
def test_v5_5_hunger_dice_never_exceed_the_pool_nor_hunger(pool, hunger, kind):
    (event,) = decide_after([], RollPool(pool=pool, hunger=hunger, kind=kind), draws=[6] * pool)
    n = len(event.hunger)
    assert n == (min(pool, hunger) if kind == "normal" else 0) and len(event.normal) == pool - n


@for_all(st.lists(st.integers(1, 10), min_size=1, max_size=10), st.lists(st.integers(1, 10), max_size=5),
         st.sampled_from(["reroll_failures", "maximise_criticals", "avoid_messy"]),
         st.sampled_from(["text", "official"]))
def test_v5_9_a_strategy_picks_at_most_three_normal_dice(normal, hunger, strategy, rule):
    given = ROSTER + [v5.V5Configured(messy_rule=rule)]
    given += decide_after(given, RollPool(character="anna", pool=len(normal) + len(hunger), hunger=len(hunger)),
                          draws=normal + hunger)
    try:
        (event,) = decide_after(given, WillpowerReroll(roll="r1", strategy=strategy), actor=ANNA, draws=[7] * 3)
    except RuleViolation:
        return
    assert 1 <= len(event.dice) <= 3 and all(0 <= i < len(normal) for i in event.dice)
