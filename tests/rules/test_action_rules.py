"""Action dice's numeric rules on both sides of each boundary, through ``decide``.

A die at the threshold is a PS and one below is not (ACT-3); PS at the difficulty succeed
and one short fail (ACT-11); a net bonus counts only "+" and a malus only "-" (ACT-6), PS
never below 0; bonus and malus net (ACT-5); each simultaneous action beyond the first is a
malus (ACT-10); equal PS leave the defender's position standing (ACT-12).
D+/- faces as scripted draws: 5 or 6 is "+", 1 or 2 is "-", 3 or 4 is blank (ACT-4).
"""

from __future__ import annotations

import pytest

from conteur.events import game
from conteur.events.action import (
    ActionConfigured,
    ActionRolled,
    ApplyModifier,
    ConfigureAction,
    RollAction,
    Settings,
    TurnAdvanced,
)
from conteur.events.model import STORYTELLER
from conteur.events.session import CharacterAdded, TimeSkipped
from conteur.events.testing import assert_refuses, decide_after
from tests.support.action_support import ROSTER, act, player

PLUS, MINUS, BLANK = 5, 1, 3


def rolled(faces, character="jake", **fields) -> ActionRolled:
    fields.setdefault("characteristic", "Motricité")  # jake: 6+
    return act(character, faces, **fields)[0]


# ---------------------------------------------------------------- ACT-3 threshold, ACT-11 difficulty


def test_act_3_a_die_at_the_threshold_is_a_ps_and_one_below_is_not():
    assert rolled([6, 5, 8], difficulty=1).ps_dice == 2
    assert rolled([5, 5, 5], difficulty=1).ps_dice == 0
    assert rolled([8, 7, 6], difficulty=1).ps_dice == 3


@pytest.mark.parametrize("faces, difficulty, success", [
    ([6, 7, 1], 2, True), ([6, 1, 1], 2, False), ([6, 7, 8], 3, True), ([6, 7, 1], 3, False)])
def test_act_11_ps_at_the_difficulty_succeed_and_one_short_fail(faces, difficulty, success):
    event = rolled(faces, difficulty=difficulty)
    assert (event.ps, event.success) == (sum(f >= 6 for f in faces), success)


def test_act_11_difficulty_one_is_rolled_and_zero_needs_no_roll():
    assert rolled([1, 1, 6], difficulty=1).success is True
    assert_refuses(given=ROSTER, when=RollAction(character="jake", characteristic="Motricité", difficulty=0),
                   actor=player("jake"), match="ACT-1")


def test_act_3_a_threshold_from_one_to_the_expert_die_is_on_the_dice():
    kim = [CharacterAdded(character="kim", name="Kim")]  # no sheet: the storyteller gives the threshold
    for threshold in (1, 10):
        assert act("kim", [10, 10, 10], given=kim, actor=STORYTELLER, characteristic="Force", threshold=threshold,
                   difficulty=1, expertise=True)[0].threshold == threshold
    for threshold in (0, 11):
        assert_refuses(given=ROSTER + kim, when=RollAction(character="kim", characteristic="Force",
                                                           threshold=threshold, difficulty=1, expertise=True),
                       match="not on the dice")


def test_act_3_an_expertise_rolls_d10_and_without_it_d8():
    assert rolled([8, 8, 8], difficulty=1).sides == 8
    assert rolled([10, 9, 8], difficulty=1, expertise="Sauter").sides == 10


# ---------------------------------------------------------------- ACT-5, ACT-6 D+/-


@pytest.mark.parametrize("bonus, malus, net", [(3, 2, 1), (2, 2, 0), (2, 3, -1), (0, 1, -1), (1, 0, 1)])
def test_act_5_bonus_and_malus_net_to_one_modifier(bonus, malus, net):
    faces = [6, 1, 1] + [BLANK] * abs(net)
    event = rolled(faces, difficulty=1, bonus=bonus, malus=malus, actor=STORYTELLER)
    assert (event.net, len(event.plusminus)) == (net, abs(net))


def test_act_6_a_net_bonus_adds_a_ps_per_plus_and_ignores_minus():
    event = rolled([6, 1, 1, PLUS, MINUS, BLANK], difficulty=2, bonus=3)
    assert (event.ps_dice, event.ps, event.success) == (1, 2, True)


def test_act_6_a_net_malus_removes_a_ps_per_minus_and_ignores_plus():
    event = rolled([6, 7, 1, MINUS, PLUS], difficulty=1, malus=2, actor=STORYTELLER)
    assert (event.ps_dice, event.ps, event.success) == (2, 1, True)
    event = rolled([6, 7, 1, MINUS, MINUS], difficulty=1, malus=2, actor=STORYTELLER)
    assert (event.ps, event.success) == (0, False)


def test_act_6_ps_never_go_below_zero():
    event = rolled([6, 1, 1, MINUS, MINUS, MINUS], difficulty=1, malus=3, actor=STORYTELLER)
    assert (event.ps_dice, event.ps) == (1, 0)


def test_act_5_bonus_and_malus_are_zero_or_more():
    for field in ("bonus", "malus"):
        assert_refuses(given=ROSTER, when=RollAction(character="jake", characteristic="Motricité", difficulty=1,
                                                     **{field: -1}), code="invalid", match="0 or more")


# ---------------------------------------------------------------- ACT-8 options, ACT-9 cooperation


def test_act_8_sacrifice_adds_two_ps_after_the_floor():
    event = rolled([1, 1, 1, MINUS, MINUS], difficulty=2, option="sacrifice", malus=4, actor=STORYTELLER)
    assert (event.net, event.ps_dice, event.ps, event.success) == (-2, 0, 2, True)
    surpass = rolled([1, 1, 1, PLUS, PLUS], difficulty=2, option="surpass")
    assert (surpass.net, surpass.ps, surpass.success) == (2, 2, True)


def test_act_9_cooperation_is_a_bonus_of_one():
    event = rolled([1, 1, 1, PLUS], difficulty=1, cooperation="door")
    assert (event.net, event.ps, event.cooperation_success) == (1, 1, True)


# ---------------------------------------------------------------- ACT-10 simultaneous actions


@pytest.mark.parametrize("simultaneous, net", [(1, 0), (2, -1), (3, -2)])
def test_act_10_each_action_beyond_the_first_is_a_malus_of_one(simultaneous, net):
    event = rolled([6, 6, 6] + [BLANK] * abs(net), difficulty=1, simultaneous=simultaneous, together="t")
    assert event.net == net


def test_act_10_the_declared_count_bounds_the_actions_of_the_turn():
    given = ROSTER + act("jake", [6, 6, 6, BLANK], characteristic="Motricité", difficulty=1, simultaneous=2,
                         together="t")
    second = decide_after(given, RollAction(character="jake", characteristic="Motricité", difficulty=1,
                                            simultaneous=2, together="t"), actor=player("jake"),
                          draws=[6, 6, 6, BLANK])
    assert second[0].net == -1
    assert_refuses(given=given + second, when=RollAction(character="jake", characteristic="Motricité", difficulty=1,
                                                          simultaneous=2, together="t"), actor=player("jake"),
                   match="already attempted its 2 simultaneous actions")
    assert_refuses(given=given, when=RollAction(character="jake", characteristic="Motricité", difficulty=1,
                                                simultaneous=3, together="t"), actor=player("jake"),
                   code="invalid", match="declared 2 simultaneous actions this turn, not 3")
    assert_refuses(given=ROSTER, when=RollAction(character="jake", characteristic="Motricité", difficulty=1,
                                                 simultaneous=0), actor=player("jake"), code="invalid",
                   match="not a count")


# ---------------------------------------------------------------- ACT-12 contests


@pytest.mark.parametrize("initiator_faces, defender_faces, winner", [
    ([6, 2, 3], [6, 2, 3], "nella"),    # equal PS: the defender holds
    ([6, 6, 3], [6, 2, 3], "jaleel"),   # one PS more wins
    ([6, 2, 3], [6, 6, 3], "nella"),
])
def test_act_12_more_ps_wins_and_equal_ps_leave_the_defender_standing(initiator_faces, defender_faces, winner):
    opened = act("jaleel", initiator_faces, characteristic="Persuasion", opponent="nella")
    answer = act("nella", defender_faces, given=opened, characteristic="Volonté", against=opened[0].roll)
    settled = [e for e in answer if type(e).__name__ == "OppositionSettled"]
    assert [s.winner for s in settled] == [winner]


# ---------------------------------------------------------------- ACT-7 modifiers, ACT-2 turns, ACT-3 settings


def test_act_7_a_modifier_lasts_one_unit_or_more_and_is_never_zero():
    assert decide_after(ROSTER, ApplyModifier(character="jake", value=1, duration=1, unit="turns"))[0].expires_turn == 1
    assert_refuses(given=ROSTER, when=ApplyModifier(character="jake", value=1, duration=0, unit="turns"),
                   code="invalid", match="at least 1")
    assert_refuses(given=ROSTER, when=ApplyModifier(character="jake", value=0, duration=2, unit="turns"),
                   code="invalid", match="changes nothing")
    minutes = decide_after(ROSTER + [TurnAdvanced(turn=2, game_seconds=8)],
                           ApplyModifier(character="jake", value=-1, duration=2, unit="minutes"))[0]
    assert (minutes.expires_turn, minutes.expires_seconds) == (None, 128)


def test_act_7_a_modifier_in_turns_counts_up_to_its_last_turn_included():
    given = ROSTER + decide_after(ROSTER, ApplyModifier(character="jake", value=1, duration=2, unit="turns"))
    assert rolled([6, 1, 1, PLUS], given=given, difficulty=1).net == 1
    last = given + [TurnAdvanced(turn=2, game_seconds=8)]
    assert rolled([6, 1, 1, PLUS], given=last, difficulty=1).net == 1
    expired = last + [TurnAdvanced(turn=3, game_seconds=12)]
    assert rolled([6, 1, 1], given=expired, difficulty=1).net == 0


def test_act_7_a_modifier_in_minutes_counts_until_that_much_game_time_has_passed():
    given = ROSTER + decide_after(ROSTER, ApplyModifier(character="jake", value=-1, duration=1, unit="minutes"))
    before = given + [TimeSkipped(seconds=59, turn=15, game_seconds=59)]
    assert rolled([6, 6, 1, BLANK], given=before, difficulty=1, actor=STORYTELLER).net == -1
    after = given + [TimeSkipped(seconds=60, turn=15, game_seconds=60)]
    assert rolled([6, 6, 1], given=after, difficulty=1).net == 0


@pytest.mark.parametrize("turns", [1, 2])
def test_act_2_an_action_of_one_turn_is_rolled_at_once_and_of_two_later(turns):
    (event,) = act("jake", [6, 6, 6], characteristic="Motricité", difficulty=1, turns=turns)
    assert (type(event).__name__, getattr(event, "last_turn", None)) == (
        ("ActionRolled", None) if turns == 1 else ("ActionBegun", 1))
    assert_refuses(given=ROSTER, when=RollAction(character="jake", characteristic="Motricité", difficulty=1, turns=0),
                   actor=player("jake"), code="invalid", match="at least one turn")


def test_act_3_settings_need_a_die_of_two_sides_and_named_levels_of_one_ps():
    assert decide_after(ROSTER, ConfigureAction(dice=1, die=2, expert_die=2, levels={"Facile": 1})) == [
        ActionConfigured(settings=Settings(dice=1, die=2, expert_die=2, levels={"Facile": 1}))]
    for fields in ({"dice": 0}, {"die": 1}, {"expert_die": 1}, {"levels": {"Facile": 0}}):
        assert_refuses(given=ROSTER, when=ConfigureAction(**fields), code="invalid")


def test_act_3_the_dice_count_is_the_ruleset_setting():
    given = ROSTER + [ActionConfigured(settings=Settings(dice=2))]
    assert rolled([6, 6], given=given, difficulty=1).dice == (6, 6)
    assert game.fold(given).action.settings.dice == 2


# ---------------------------------------------------------------- who rolls what, and with which dice


KIM = [CharacterAdded(character="kim", name="Kim")]  # on the roster without an action sheet


def test_act_6_a_d_plus_minus_is_a_d6_and_the_net_is_at_most_twenty():
    event = rolled([6, 1, 1] + [BLANK] * 20, difficulty=1, bonus=20, actor=STORYTELLER)
    assert [d.sides for d in event.draws] == [8, 8, 8] + [6] * 20
    assert_refuses(given=ROSTER, when=RollAction(character="jake", characteristic="Motricité", difficulty=1,
                                                 bonus=21), code="invalid", match="beyond 20 D+/-")
    assert_refuses(given=ROSTER, when=RollAction(character="jake", characteristic="Motricité", difficulty=1,
                                                 malus=21), code="invalid", match="net modifier of -21")


def test_act_7_a_modifier_counts_for_its_own_character_only():
    given = decide_after(ROSTER, ApplyModifier(character="natalia", value=1, duration=2, unit="turns"))
    assert rolled([6, 6, 1], given=given, difficulty=1).net == 0


def test_act_8_surpassing_raises_tension_from_the_sheet_or_from_zero():
    kim = act("kim", [8, 8, 8, BLANK, BLANK], given=KIM, actor=STORYTELLER, characteristic="Force", threshold=6,
              difficulty=1, option="surpass")
    assert [e.tension for e in kim if type(e).__name__ == "TensionRaised"] == [1]
    jake = act("jake", [8, 8, 8, BLANK, BLANK], characteristic="Motricité", difficulty=1, option="surpass")
    assert [e.tension for e in jake if type(e).__name__ == "TensionRaised"] == [1]


def test_act_1_without_a_roster_a_storyteller_rolls_for_anyone():
    assert decide_after([], RollAction(character="Ghoul", characteristic="Force", threshold=6, difficulty=1),
                        draws=[6, 6, 6])[0].ps == 3
    assert_refuses(given=ROSTER, when=RollAction(character="Ghoul", characteristic="Force", threshold=6,
                                                 difficulty=1), match="not a player character")


def test_act_3_a_sheet_on_record_gives_the_threshold_unless_a_storyteller_names_one():
    assert_refuses(given=ROSTER, when=RollAction(character="jake", characteristic="Motricité", threshold=2,
                                                 difficulty=1), actor=player("jake"), code="invalid",
                   match="name the characteristic, not a threshold")
    assert rolled([2, 2, 2], threshold=2, difficulty=1, actor=STORYTELLER).ps == 3
    assert rolled([2, 2, 2], threshold=None, difficulty=1).ps == 0  # jake's own 6+
    assert act("kim", [2, 2, 2], given=KIM, actor=player("kim"), characteristic="Force", threshold=2,
               difficulty=1)[0].ps == 3
    assert_refuses(given=ROSTER + KIM, when=RollAction(character="kim", characteristic="Force", difficulty=1),
                   actor=player("kim"), code="invalid", match="give the characteristic's threshold")


def test_act_3_an_expertise_is_named_from_the_sheet_or_taken_as_given_without_one():
    named = act("kim", [10, 10, 10], given=KIM, actor=STORYTELLER, characteristic="Force", threshold=6,
                difficulty=1, expertise="Hacking")[0]
    assert (named.sides, named.expertise, named.expertise_name) == (10, True, "Hacking")
    bare = act("kim", [10, 10, 10], given=KIM, actor=player("kim"), characteristic="Force", threshold=6,
               difficulty=1, expertise=True)[0]
    assert (bare.sides, bare.expertise_name) == (10, "")
    assert_refuses(given=ROSTER, when=RollAction(character="jake", characteristic="Motricité", difficulty=1,
                                                 expertise=True), actor=player("jake"), code="invalid",
                   match="name the Expertise from your sheet")
    assert rolled([10, 10, 10], difficulty=1, expertise=True, actor=STORYTELLER).sides == 10
    assert rolled([8, 8, 8], difficulty=1, expertise=False).sides == 8
    assert_refuses(given=ROSTER, when=RollAction(character="jake", characteristic="Motricité", difficulty=1,
                                                 expertise="Voler"), actor=player("jake"), code="invalid",
                   match="no Expertise 'Voler'")


def test_act_10_a_single_action_beside_a_declared_group_is_its_own():
    group = act("jake", [6, 6, 6, BLANK], characteristic="Motricité", difficulty=1, simultaneous=2)
    single = act("jake", [6, 6, 6], given=group, characteristic="Motricité", difficulty=1)
    assert single[0].net == 0


def test_act_8_an_option_on_one_of_simultaneous_actions_only():
    surpass = act("jake", [6, 6, 6, BLANK], characteristic="Motricité", difficulty=1, simultaneous=2, together="t",
                  option="surpass")
    plain = act("jake", [6, 6, 6, BLANK], given=surpass, characteristic="Motricité", difficulty=1, simultaneous=2,
                together="t")
    assert plain[0].option == "none"
    first_plain = act("jake", [6, 6, 6, BLANK], characteristic="Motricité", difficulty=1, simultaneous=2,
                      together="t")
    then_option = act("jake", [6, 6, 6, BLANK], given=first_plain, characteristic="Motricité", difficulty=1,
                      simultaneous=2, together="t", option="surpass")
    assert then_option[0].option == "surpass"
    assert_refuses(given=ROSTER + surpass, when=RollAction(character="jake", characteristic="Motricité", difficulty=1,
                                                           simultaneous=2, together="t", option="sacrifice"),
                   actor=player("jake"), match="already used surpass")


def test_act_13_the_notation_or_the_characteristic_and_difficulty_not_both():
    assert rolled([6, 6, 1], characteristic=None, test="Test (Motricité, 2)").success is True
    for extra in ({"characteristic": "Motricité"}, {"difficulty": 2}):
        assert_refuses(given=ROSTER, when=RollAction(character="jake", test="Test (Motricité, 2)", **extra),
                       actor=player("jake"), code="invalid", match="not both")


def test_act_8_who_saw_a_secret_sacrifice_may_not_roll_against_the_dead_who_did_not_waits():
    jaleel = act("jaleel", [6, 2, 3, PLUS, PLUS], characteristic="Persuasion", opponent="nella", option="sacrifice",
                 visibility="secret")
    roll = jaleel[0].roll
    answered = jaleel + act("nella", [6, 2, 1], given=jaleel, characteristic="Volonté", against=roll)
    assert type(answered[-1]).__name__ == "CharacterSacrificed"
    assert_refuses(given=ROSTER + answered, when=RollAction(character="nella", characteristic="Volonté",
                                                            opponent="jaleel"), actor=player("nella"),
                   match="jaleel died sacrificing itself")
    unaware = act("louisa", [6, 6, 6], given=answered, characteristic="Science", opponent="jaleel")
    assert type(unaware[-1]).__name__ == "OppositionOpened"  # she cannot know: the roll waits for a storyteller
    assert_refuses(given=ROSTER + answered, when=RollAction(character="louisa", characteristic="Science",
                                                            opponent="jaleel"), match="died sacrificing itself")
