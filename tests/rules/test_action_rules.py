"""Action dice's numeric rules on both sides of each boundary, through ``decide``.

A die at the threshold is a PS and one below is not (ACT-3); PS at the difficulty succeed
and one short fail (ACT-11); a net bonus counts only "+" and a malus only "-" (ACT-6), PS
never below 0; bonus and malus net (ACT-5); each simultaneous action beyond the first is a
malus (ACT-10); equal PS leave the defender's position standing (ACT-12).
D+/- faces as scripted draws: 5 or 6 is "+", 1 or 2 is "-", 3 or 4 is blank (ACT-4).
"""

from __future__ import annotations

import pytest

from msgspec.structs import replace

from conteur.events import game, views
from conteur.events.action import (
    ActionConfigured,
    ActionRolled,
    ActionRuled,
    ApplyModifier,
    CancelAction,
    CharacterSacrificed,
    ConfigureAction,
    Modifier,
    ModifierApplied,
    Rolled,
    RollAction,
    RuleAction,
    Settings,
    SettleOpposition,
    TensionRaised,
    TurnAdvanced,
)
from conteur.events.model import STORYTELLER, DrawRecord, ScriptedDraws
from conteur.events.session import CharacterAdded, NextTurn, SkipTime, TimeSkipped
from conteur.events.sheets import ActionSheet, V5Sheet
from conteur.events.testing import assert_decides, assert_refuses, decide_after
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


# ---------------------------------------------------------------- ACT-7 modifiers as the state shows them
# GET /state shows the folded state whole: each modifier with its unit, duration and reason,
# the id counters, and the earliest expiry (turn, game seconds) kept for the clock hook.

_NEVER = 1 << 62  # no modifier held of that kind: nothing expires on that clock


def _applied(given, *commands):
    events = list(given)
    for command in commands:
        events += decide_after(events, command)
    return events


def test_act_7_the_state_holds_each_modifier_whole_with_its_earliest_expiry():
    wounded = _applied(ROSTER, ApplyModifier(character="jake", value=-1, duration=20, reason="blessé"))
    state = game.fold(wounded).action
    assert state.modifiers == (Modifier(id="m1.jake", character="jake", value=-1, unit="turns", duration=20,
                                        expires_turn=20, expires_seconds=None, reason="blessé"),)
    assert (state.expiry, state.next_modifier, state.modifier_ids) == ((20, _NEVER), 1, {"jake": 2})
    three = _applied(wounded, ApplyModifier(character="jake", value=2, duration=1, unit="minutes",
                                            reason="adrénaline"),
                     ApplyModifier(character="dalia", value=1, duration=1))
    state = game.fold(three).action
    assert state.modifiers[1:] == (
        Modifier(id="m2.jake", character="jake", value=2, unit="minutes", duration=1, expires_turn=None,
                 expires_seconds=60, reason="adrénaline"),
        Modifier(id="m1.dalia", character="dalia", value=1, unit="turns", duration=1, expires_turn=1,
                 expires_seconds=None, reason=""))
    assert (state.expiry, state.next_modifier, state.modifier_ids) == ((1, 60), 1, {"jake": 3, "dalia": 2})
    # turn 1 (4 s) expires nothing; turn 2 (8 s) takes dalia's out, and the expiry moves on
    turn_1 = _applied(three, NextTurn())
    assert game.fold(turn_1).action == state
    turn_2 = game.fold(_applied(turn_1, NextTurn())).action
    assert ([m.id for m in turn_2.modifiers], turn_2.expiry) == (["m1.jake", "m2.jake"], (20, 60))
    # a minute on (turn 17, 68 s) takes jake's bonus out: only turns are left to expire
    skipped = _applied(turn_1, NextTurn(), SkipTime(seconds=60))
    state = game.fold(skipped).action
    assert ([m.id for m in state.modifiers], state.expiry) == (["m1.jake"], (20, _NEVER))
    over = game.fold(_applied(skipped, SkipTime(seconds=60))).action
    assert (over.modifiers, over.expiry) == ((), None)


def test_act_7_modifiers_expire_from_a_state_that_knows_no_expiry_yet():
    # a snapshot from before the field holds modifiers with no expiry (None): the clock
    # still takes the expired ones out, and the expiry is known from then on
    given = _applied(ROSTER, ApplyModifier(character="jake", value=-1, duration=1),
                     ApplyModifier(character="dalia", value=1, duration=3))
    state = game.fold(given)
    old = replace(state, action=replace(state.action, expiry=None))
    for _ in range(2):
        old = game.fold(game.decide(old, NextTurn(), ScriptedDraws([]), actor=STORYTELLER), old)
    assert ([m.id for m in old.action.modifiers], old.action.expiry) == (["m1.dalia"], (3, _NEVER))


def test_act_7_modifier_ids_stay_distinct_for_a_character_of_no_name():
    # ``character`` is a Key, and an empty one is accepted: its audience key is empty, so
    # its modifiers count in the public space ("m1", "m2") and the state counts them there
    given = _applied([], *[ApplyModifier(character="", value=1, duration=2)] * 2)
    assert [e.modifier for e in given] == ["m1", "m2"]
    state = game.fold(given).action
    assert (state.next_modifier, state.modifier_ids) == (3, {})


def test_act_7_a_public_modifier_id_of_an_old_log_moves_the_public_counter():
    # a log from before audiences numbered modifiers for everyone ("m3")
    old = ModifierApplied(modifier="m3", character="jake", value=-1, duration=2, unit="turns", applied_turn=0,
                          applied_seconds=0, expires_turn=2)
    state = game.fold(ROSTER + [old]).action
    assert (state.next_modifier, state.modifier_ids, state.expiry) == (4, {}, (2, _NEVER))


# ---------------------------------------------------------------- who rolls what, and with which dice


KIM = [CharacterAdded(character="kim", name="Kim")]  # on the roster without an action sheet


def test_act_6_a_d_plus_minus_is_a_d6_and_the_net_is_at_most_twenty():
    event = rolled([6, 1, 1] + [BLANK] * 20, difficulty=1, bonus=20, actor=STORYTELLER)
    assert [d.sides for d in event.draws] == [8, 8, 8] + [6] * 20
    assert_refuses(given=ROSTER, when=RollAction(character="jake", characteristic="Motricité", difficulty=1,
                                                 bonus=21), code="invalid", match="beyond 20 D+/-")
    assert_refuses(given=ROSTER, when=RollAction(character="jake", characteristic="Motricité", difficulty=1,
                                                 malus=21), code="invalid", match="net modifier of -21")


def test_act_7_a_modifier_records_why_it_was_given():
    (applied,) = decide_after(ROSTER, ApplyModifier(character="jake", value=-1, duration=2, reason="blessé"))
    assert applied.reason == "blessé"


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


# ---------------------------------------------------------------- each refusal names its rule


def _roll(**fields) -> RollAction:
    fields.setdefault("character", "jake")
    return RollAction(**fields)


_JAKE = {"characteristic": "Motricité", "difficulty": 1}
_OPENED = act("jaleel", [6, 2, 3], characteristic="Persuasion", opponent="nella")  # a1 waits for nella
_ANSWERED = _OPENED + act("nella", [6, 2, 1], given=_OPENED, characteristic="Volonté", against="a1")
_BEGUN = act("louisa", [], characteristic="Science", difficulty=2, turns=3)  # a1, rolled at turn 2
_DEAD = [CharacterSacrificed(character="nella", roll="a7")]
_PAIR = {"simultaneous": 2, "together": "t", **_JAKE}
_ONE_OF_TWO = act("jake", [6, 6, 6, BLANK, BLANK, BLANK], option="surpass", **_PAIR)
_TWO_OF_TWO = _ONE_OF_TWO + act("jake", [6, 6, 6, BLANK], given=_ONE_OF_TWO, **_PAIR)

# the refusals a player or a storyteller reads, each with the rule it applies (the rule
# lands in CommandRejected.rule) and the facts it names: given, command, actor, rule, code, message
REFUSALS = {
    "ACT-1 not a player character": (
        [], _roll(character="Ghoul", threshold=6, **_JAKE), STORYTELLER, "ACT-1", "rule",
        "Ghoul is not a player character: only they roll (ACT-1)"),
    "ACT-1 an opponent not a player character": (
        [], _roll(characteristic="Motricité", opponent="Ghoul"), player("jake"), "ACT-1", "rule",
        "Ghoul is not a player character: only they roll (ACT-1)"),
    "ACT-1 difficulty 0": (
        [], _roll(characteristic="Motricité", difficulty=0), player("jake"), "ACT-1", "rule",
        "difficulty 0 needs no roll: the director rules a trivial action successful (rule_action) (ACT-1)"),
    "ACT-2 zero turns": (
        [], _roll(turns=0, **_JAKE), player("jake"), "ACT-2", "invalid",
        "an action lasts at least one turn, not 0 (ACT-2)"),
    "ACT-2 resume unknown": (
        _BEGUN, _roll(character="louisa", resume="a9"), player("louisa"), "ACT-2", "not_found",
        "no multi-turn action 'a9' under way"),
    "ACT-2 resume another's": (
        _BEGUN, _roll(character="sylvio", resume="a1"), STORYTELLER, "ACT-2", "forbidden", "action a1 is louisa's"),
    "ACT-2 resume too early": (
        _BEGUN + [TurnAdvanced(turn=1, game_seconds=4)], _roll(character="louisa", resume="a1"), player("louisa"),
        "ACT-2", "rule", "louisa's action lasts 3 turns: it is rolled at turn 2, and this is turn 1 (ACT-2)"),
    "ACT-2 cancel unknown": (
        _BEGUN, CancelAction(roll="a2"), STORYTELLER, "ACT-2", "not_found", "no action 'a2' in this session (ACT-2)"),
    "ACT-2 cancel a roll": (
        _ANSWERED, CancelAction(roll="a2"), STORYTELLER, "ACT-2", "rule",
        "action a2 is not under way: it was rolled or cancelled already, or lasted one turn (ACT-2)"),
    "ACT-2 cancel an opposed roll": (
        _OPENED, CancelAction(roll="a1"), STORYTELLER, "ACT-12", "rule",
        "roll a1 is an opposed roll waiting for its answer: settle it with settle_opposition (ACT-12)"),
    "ACT-3 no characteristic": (
        [], _roll(difficulty=1), player("jake"), "ACT-3", "invalid", "name the characteristic the action uses (ACT-3)"),
    "ACT-3 a threshold beside a sheet": (
        [], _roll(threshold=2, **_JAKE), player("jake"), "ACT-3", "invalid",
        "jake's sheet is on record: name the characteristic, not a threshold (ACT-3)"),
    "ACT-3 no sheet, no threshold": (
        KIM, _roll(character="kim", characteristic="Force", difficulty=1), player("kim"), "ACT-3", "invalid",
        "no action sheet for kim: give the characteristic's threshold (ACT-3)"),
    "ACT-3 no such characteristic": (
        [], _roll(characteristic="Force", difficulty=1), player("jake"), "ACT-3", "invalid",
        "jake's sheet has no characteristic 'Force' (ACT-3)"),
    "ACT-3 threshold off the dice": (
        [], _roll(threshold=11, **_JAKE), STORYTELLER, "ACT-3", "invalid", "threshold 11+ is not on the dice (ACT-3)"),
    "ACT-3 no such expertise": (
        [], _roll(expertise="Voler", **_JAKE), player("jake"), "ACT-3", "invalid",
        "jake has no Expertise 'Voler' (ACT-3)"),
    "ACT-3 a bare expertise beside a sheet": (
        [], _roll(expertise=True, **_JAKE), player("jake"), "ACT-3", "invalid",
        "name the Expertise from your sheet that fits the action (ACT-3)"),
    "ACT-3 settings": (
        [], ConfigureAction(dice=0), STORYTELLER, "ACT-3", "invalid",
        "at least one action die of two sides or more (ACT-3)"),
    "ACT-5 a negative bonus": (
        [], _roll(bonus=-1, **_JAKE), player("jake"), "ACT-5", "invalid",
        "bonus and malus are counts of D+/-, 0 or more (ACT-5)"),
    "ACT-5 a player's bonus beyond the session's bound": (
        [], _roll(bonus=4, **_JAKE), player("jake"), "max_player_bonus", "rule",
        "a bonus of 4 D+/- is above this session's max_player_bonus of 3: ask a storyteller for more"),
    "ACT-6 beyond twenty": (
        [], _roll(bonus=21, **_JAKE), STORYTELLER, "ACT-6", "invalid",
        "a net modifier of 21 is beyond 20 D+/- (ACT-6)"),
    "ACT-7 bad notation": (
        [], ApplyModifier(character="jake", notation="Malus de 1"), STORYTELLER, "ACT-7", "invalid",
        "'Malus de 1' is not a modifier: write it Malus (2 Tours) de 1 (ACT-7)"),
    "ACT-7 zero": (
        [], ApplyModifier(character="jake", value=0, duration=1), STORYTELLER, "ACT-7", "invalid",
        "a modifier of 0 changes nothing (ACT-7)"),
    "ACT-7 no duration": (
        [], ApplyModifier(character="jake", value=1, duration=0, unit="minutes"), STORYTELLER, "ACT-7", "invalid",
        "a temporary modifier lasts at least 1 minutes (ACT-7)"),
    "ACT-8 the dead": (
        _DEAD, _roll(character="nella", characteristic="Volonté", difficulty=1), player("nella"), "ACT-8", "rule",
        "nella died sacrificing itself (ACT-8)"),
    "ACT-8 against the dead": (
        _DEAD, _roll(characteristic="Motricité", opponent="nella"), player("jake"), "ACT-8", "rule",
        "nella died sacrificing itself (ACT-8)"),
    "ACT-8 a second option among simultaneous actions": (
        _ONE_OF_TWO, _roll(option="sacrifice", **_PAIR), player("jake"), "ACT-8", "rule",
        "jake already used surpass on one of these simultaneous actions: an option goes on one of them only (ACT-8)"),
    "ACT-10 zero": (
        [], _roll(simultaneous=0, **_JAKE), player("jake"), "ACT-10", "invalid",
        "0 simultaneous actions is not a count (ACT-10)"),
    "ACT-10 another count": (
        _ONE_OF_TWO, _roll(**{**_PAIR, "simultaneous": 3}), player("jake"), "ACT-10", "invalid",
        "jake declared 2 simultaneous actions this turn, not 3 (ACT-10)"),
    "ACT-10 one action too many": (
        _TWO_OF_TWO, _roll(**_PAIR), player("jake"), "ACT-10", "rule",
        "jake already attempted its 2 simultaneous actions this turn (ACT-10)"),
    "ACT-11 no difficulty": (
        [], _roll(characteristic="Motricité"), player("jake"), "ACT-11", "invalid",
        "a test needs a difficulty (ACT-11)"),
    "ACT-11 unknown level": (
        [], _roll(characteristic="Motricité", difficulty="Ardu"), player("jake"), "ACT-11", "invalid",
        "unknown difficulty 'Ardu': the table names Difficile (2), Extrême (4) (ACT-11)"),
    "ACT-11 a level of 0": (
        [], ConfigureAction(levels={"Facile": 0}), STORYTELLER, "ACT-11", "invalid",
        "a named difficulty needs at least 1 PS (ACT-11)"),
    "ACT-12 a difficulty against someone": (
        [], _roll(characteristic="Motricité", difficulty=1, opponent="nella"), player("jake"), "ACT-12", "invalid",
        "a roll against another player character has no difficulty: more PS wins (ACT-12)"),
    "ACT-12 opponent and against": (
        _OPENED, _roll(characteristic="Motricité", opponent="nella", against="a1"), player("jake"), "ACT-12",
        "invalid", "a roll either opposes a character or answers a roll (ACT-12)"),
    "ACT-12 against oneself": (
        [], _roll(characteristic="Motricité", opponent="jake"), player("jake"), "ACT-12", "invalid",
        "a character cannot oppose itself (ACT-12)"),
    "ACT-12 no such roll waits": (
        [], _roll(characteristic="Motricité", against="a1"), player("jake"), "ACT-12", "not_found",
        "no opposed roll 'a1' waits for jake's answer (ACT-12)"),
    "ACT-12 a roll against another": (
        _OPENED, _roll(characteristic="Motricité", threshold=6, against="a1"), STORYTELLER, "ACT-12", "invalid",
        "roll a1 opposes nella, not jake (ACT-12)"),
    "ACT-12 bad outcome": (
        _OPENED, SettleOpposition(roll="a1", outcome="draw"), STORYTELLER, "ACT-12", "invalid",
        "outcome 'draw' is not one of initiator, defender, cancelled (ACT-12)"),
    "ACT-12 settle unknown": (
        _OPENED, SettleOpposition(roll="a2", outcome="initiator"), STORYTELLER, "ACT-12", "not_found",
        "no roll 'a2' in this session (ACT-12)"),
    "ACT-12 settle an answered roll": (
        _ANSWERED, SettleOpposition(roll="a1", outcome="initiator"), STORYTELLER, "ACT-12", "rule",
        "roll a1 waits for no answer: it was answered or settled already, or opposed nobody (ACT-12)"),
    "ACT-13 bad notation": (
        [], _roll(test="Motricité 2"), player("jake"), "ACT-13", "invalid",
        "'Motricité 2' is not a test: write it Test (Characteristic, Difficulty) (ACT-13)"),
    "ACT-13 notation and fields": (
        [], _roll(test="Test (Motricité, 2)", characteristic="Motricité"), player("jake"), "ACT-13", "invalid",
        "give the test notation or the characteristic and difficulty, not both (ACT-13)"),
}


@pytest.mark.parametrize("given, when, actor, rule, code, message", REFUSALS.values(), ids=REFUSALS.keys())
def test_act_1_to_13_a_refusal_names_the_rule_it_applies(given, when, actor, rule, code, message):
    refused = assert_refuses(given=ROSTER + list(given), when=when, actor=actor, code=code)
    assert (refused.rule, refused.message) == (rule, message)


# ---------------------------------------------------------------- ACT-7 notation, ACT-8 tension, ACT-11 levels


@pytest.mark.parametrize("notation, value, duration, unit", [
    ("Bonus (30 min) de 2", 2, 30, "minutes"), ("malus (3 tours) de 1", -1, 3, "turns"),
    ("BONUS (1 Turn) of 3", 3, 1, "turns"), ("Malus (2 hours) 1", -1, 2, "hours"),
    ("Bonus (5 Minutes) de 1", 1, 5, "minutes"), ("Malus (1 Heure) de 2", -2, 1, "hours")])
def test_act_7_the_modifier_notation_gives_the_value_duration_and_unit(notation, value, duration, unit):
    (applied,) = decide_after(ROSTER, ApplyModifier(character="jake", notation=notation))
    assert (applied.value, applied.duration, applied.unit) == (value, duration, unit)


def test_act_8_each_surpass_raises_tension_by_one_from_where_it_stands():
    sheet = [CharacterAdded(character="kim", name="Kim", sheet=ActionSheet(characteristics={"Force": 6}, tension=2))]
    first = act("kim", [8, 8, 8, BLANK, BLANK], given=sheet, characteristic="Force", difficulty=1, option="surpass")
    second = act("kim", [8, 8, 8, BLANK, BLANK], given=sheet + first, characteristic="Force", difficulty=1,
                 option="surpass")
    assert [e.tension for e in first + second if type(e).__name__ == "TensionRaised"] == [3, 4]


def test_act_11_a_difficulty_written_as_digits_is_a_number_not_a_level():
    event = rolled([6, 6, 1], difficulty=" 2 ")
    assert (event.difficulty, event.difficulty_name, event.success) == (2, "", True)
    assert rolled([6, 1, 1], difficulty="2").success is False
    # a negative number in the notation is a difficulty below 1, not an unknown level
    assert_refuses(given=ROSTER, when=RollAction(character="jake", test="Test (Motricité, -1)"),
                   actor=player("jake"), code="rule", match="difficulty -1 needs no roll")


def test_act_11_an_unknown_level_is_refused_with_the_table_by_ps():
    given = decide_after(ROSTER, ConfigureAction(levels={"Ardu": 3, "Facile": 1, "Corsé": 2}))
    assert_refuses(given=ROSTER + given, when=RollAction(character="jake", characteristic="Motricité",
                                                         difficulty="Difficile"),
                   actor=player("jake"), match="the table names Facile (1), Corsé (2), Ardu (3) (ACT-11)")


def test_act_11_a_level_matches_its_name_in_capitals_letter_for_letter():
    # "ß" has no capital of one letter: "GRÖSSTE" is "Größte" in capitals, "Größe" is not
    given = decide_after(ROSTER, ConfigureAction(levels={"Größte": 3}))
    for written in ("GRÖSSTE", "grosste", "Größte"):
        event = rolled([6, 6, 6], given=given, difficulty=written)
        assert (event.difficulty, event.difficulty_name) == (3, "Größte")
    assert_refuses(given=ROSTER + given, when=RollAction(character="jake", characteristic="Motricité",
                                                         difficulty="Größe"),
                   actor=player("jake"), code="invalid", match="unknown difficulty 'Größe'")


def test_act_13_a_difficulty_of_a_letter_and_digits_is_an_unknown_level():
    # only a minus sign may lead the digits of a number: "X2" is a name, and no level is named so
    assert_refuses(given=ROSTER, when=RollAction(character="jake", test="Test (Motricité, X2)"),
                   actor=player("jake"), code="invalid", match="unknown difficulty 'X2'")


# ---------------------------------------------------------------- ACT-9 cooperation, ACT-7 modifiers add up


def test_act_9_one_success_makes_the_cooperation_succeed_for_the_rolls_after_it():
    first = act("alfred", [6, 6, 1, BLANK], characteristic="Carrure", difficulty=2, cooperation="porte")
    second = act("judith", [1, 1, 1, BLANK], given=first, characteristic="Carrure", difficulty=2,
                 cooperation="porte")
    other = act("judith", [1, 1, 1, BLANK], given=first, characteristic="Carrure", difficulty=2,
                cooperation="mur")
    assert [(e.success, e.cooperation_success) for e in first + second + other] == [
        (True, True), (False, True), (False, False)]
    assert rolled([6, 6, 6], difficulty=1).cooperation_success is None


def test_act_5_act_7_bonus_and_malus_modifiers_add_up_with_the_declared_ones():
    given = []
    for value in (2, -1, 1):
        given += decide_after(ROSTER + given, ApplyModifier(character="jake", value=value, duration=2))
    event = rolled([6, 1, 1, PLUS, PLUS, PLUS], given=given, difficulty=1, bonus=1)
    assert (event.net, event.modifiers, event.ps) == (3, ("m1.jake", "m2.jake", "m3.jake"), 4)
    event = rolled([6, 1, 1, MINUS], given=given, difficulty=1, malus=3, actor=STORYTELLER)
    assert (event.net, event.ps) == (-1, 0)


# ---------------------------------------------------------------- ACT-10, ACT-8 groups across turns and rulings


def test_act_10_the_declared_count_bounds_a_later_turn_too():
    turn_3 = [TurnAdvanced(turn=t, game_seconds=4 * t) for t in (1, 2, 3)]
    first = act("jake", [6, 6, 6, BLANK], given=turn_3, **_PAIR)
    second = act("jake", [6, 6, 6, BLANK], given=turn_3 + first, **_PAIR)
    assert_refuses(given=ROSTER + turn_3 + first + second, when=_roll(**_PAIR), actor=player("jake"),
                   match="already attempted its 2 simultaneous actions")
    # the next turn starts a new group
    turn_4 = turn_3 + first + second + [TurnAdvanced(turn=4, game_seconds=16)]
    assert act("jake", [6, 6, 6, BLANK], given=turn_4, **_PAIR)[0].turn == 4


def test_act_8_the_option_stays_taken_after_a_plain_action_of_the_group():
    trio = {**_JAKE, "simultaneous": 3, "together": "t"}
    surpass = act("jake", [6, 6, 6, BLANK, BLANK, BLANK], option="surpass", **trio)
    plain = act("jake", [6, 6, 6, BLANK, BLANK], given=surpass, **trio)
    assert_refuses(given=ROSTER + surpass + plain, when=_roll(option="sacrifice", **trio), actor=player("jake"),
                   match="already used surpass")


def test_act_10_a_ruling_takes_its_place_in_the_group_of_its_label():
    ruled = decide_after(ROSTER + [TurnAdvanced(turn=2, game_seconds=8)],
                         RuleAction(character="jake", ruling="trivial", simultaneous=2, together="t"))
    assert ruled == [ActionRuled(roll="a1", character="jake", ruling="trivial", success=True, simultaneous=2,
                                 together="t", turn=2)]
    given = [TurnAdvanced(turn=2, game_seconds=8)] + ruled
    (roll,) = act("jake", [6, 6, 6, BLANK], given=given, **_PAIR)
    assert (roll.roll, roll.net) == ("a2", -1)
    assert_refuses(given=ROSTER + given + [roll], when=_roll(**_PAIR), actor=player("jake"),
                   match="already attempted its 2")
    assert_refuses(given=ROSTER + given + [roll], when=RuleAction(character="jake", ruling="impossible",
                                                                   simultaneous=2, together="t"),
                   match="already attempted its 2")
    # another label is another group
    assert act("jake", [6, 6, 6, BLANK], given=given, **{**_PAIR, "together": "u"})[0].net == -1


def test_act_8_a_ruling_beside_an_option_takes_no_option():
    ruled = decide_after(ROSTER + _ONE_OF_TWO, RuleAction(character="jake", ruling="trivial", simultaneous=2,
                                                          together="t"))
    assert [e.success for e in ruled] == [True]
    # and a ruling first leaves the option free for the group's roll
    ruled = decide_after(ROSTER, RuleAction(character="jake", ruling="trivial", simultaneous=2, together="t"))
    surpass = act("jake", [6, 6, 6, BLANK], given=ruled, option="surpass", **_PAIR)
    assert [type(e).__name__ for e in surpass] == ["ActionRolled", "TensionRaised"]


def test_act_10_a_single_action_or_ruling_opens_no_group():
    ruled = decide_after(ROSTER, RuleAction(character="jake", ruling="trivial"))
    single = act("jake", [6, 6, 6], given=ruled, **_JAKE)
    assert game.fold(ROSTER + ruled + single).action.groups == {}


# ---------------------------------------------------------------- ACT-2 a long action rolled at its last turn


def test_act_2_the_last_turns_roll_is_the_begun_action_with_its_notation_level_and_expertise():
    (begun,) = act("jake", [], test="Test (Motricité, Difficile)", expertise="sauter", bonus=1, label="mur",
                   turns=2)
    given = [begun, TurnAdvanced(turn=1, game_seconds=4)]
    assert_decides(given=ROSTER + given, when=RollAction(character="jake", resume="a1"), actor=player("jake"),
                   draws=[6, 1, 1, PLUS], then=[ActionRolled(
                       roll="a1", character="jake", characteristic="Motricité", threshold=6, expertise=True,
                       expertise_name="Sauter", sides=10, dice=(6, 1, 1), plusminus=(PLUS,), signs=("+",), net=1,
                       ps_dice=1, ps=2, success=True, difficulty=2, difficulty_name="Difficile",
                       notation="Test (Motricité, Difficile)", bonus=1, turns=2, turn=1, label="mur",
                       draws=tuple(DrawRecord(counter=i, sides=s, face=f)
                                   for i, (s, f) in enumerate([(10, 6), (10, 1), (10, 1), (6, PLUS)])))])


def test_act_2_a_storytellers_threshold_and_bare_expertise_hold_when_the_player_rolls_the_last_turn():
    (begun,) = act("jake", [], actor=STORYTELLER, characteristic="Motricité", threshold=2, expertise=True,
                   difficulty=1, turns=2)
    (rolled,) = act("jake", [2, 2, 2], given=[begun, TurnAdvanced(turn=1, game_seconds=4)], resume="a1")
    assert (rolled.threshold, rolled.sides, rolled.ps) == (2, 10, 3)


def test_act_2_a_secret_long_action_is_unknown_to_another_player():
    (begun,) = act("louisa", [], characteristic="Science", difficulty=2, turns=2, visibility="secret")
    given = ROSTER + [begun, TurnAdvanced(turn=1, game_seconds=4)]
    assert_refuses(given=given, when=RollAction(character="sylvio", resume=begun.roll), actor=player("sylvio"),
                   code="not_found")
    assert_refuses(given=given, when=RollAction(character="sylvio", resume=begun.roll), code="forbidden")


def test_act_2_a_begun_action_takes_its_id_and_the_next_roll_the_next():
    (begun,) = act("louisa", [], characteristic="Science", difficulty=2, turns=2)
    (ruled,) = decide_after(ROSTER + [begun], RuleAction(character="jake", ruling="trivial"))
    (rolled,) = act("jake", [6, 6, 6], given=[begun, ruled], **_JAKE)
    secret = act("jake", [6, 6, 6], given=[begun, ruled, rolled], visibility="secret", **_JAKE)
    again = act("jake", [6, 6, 6], given=[begun, ruled, rolled, *secret], visibility="secret", **_JAKE)
    assert [e.roll for e in (begun, ruled, rolled, *secret, *again)] == ["a1", "a2", "a3", "a1.jake", "a2.jake"]


@pytest.mark.parametrize("opponent, stream", [(None, "louisa/secret=louisa"),
                                              ("sylvio", "louisa/sealed=a1.louisa%2Bsylvio")])
def test_act_2_the_last_turns_roll_draws_from_the_stream_of_the_roll_it_is(opponent, stream):
    from conteur.events import fair

    fields = {"opponent": opponent} if opponent else {"difficulty": 2}
    (begun,) = act("louisa", [], characteristic="Science", turns=2, visibility="secret", **fields)
    state = game.fold(ROSTER + [begun, TurnAdvanced(turn=1, game_seconds=4)])
    draws = fair.FairDraws(bytes(range(32)), "night", nonce="n0nce")
    rolled = game.decide(state, RollAction(character="louisa", resume=begun.roll), draws, actor=player("louisa"))
    assert {r.stream for r in rolled[0].draws} == {stream}


def test_a_secret_roll_draws_from_its_rollers_secret_stream():
    from conteur.events import fair

    draws = fair.FairDraws(bytes(range(32)), "night", nonce="n0nce")
    (rolled,) = game.decide(game.fold(ROSTER), RollAction(visibility="secret", character="jake", **_JAKE), draws,
                            actor=player("jake"))
    assert {r.stream for r in rolled.draws} == {"jake/secret=jake"}


# ---------------------------------------------------------------- what a roll records


def test_act_5_act_13_a_roll_records_the_declared_bonus_malus_and_label_and_no_expertise():
    event = rolled([6, 6, 1, BLANK], bonus=3, malus=2, label="porte", **_JAKE)
    assert (event.bonus, event.malus, event.label, event.expertise, event.expertise_name) == (3, 2, "porte", False, "")


def test_act_12_the_call_carries_the_label_and_turn_and_the_roll_no_notation():
    jaleel, opened = act("jaleel", [6, 2, 3], given=[TurnAdvanced(turn=2, game_seconds=8)],
                         characteristic="Persuasion", opponent="nella", label="débat")
    assert (opened.label, opened.turn, jaleel.notation, jaleel.label) == ("débat", 2, "", "débat")


@pytest.mark.parametrize("initiator, defender, seen", [
    ("open", "secret", "secret"), ("secret", "open", "secret"), ("open", "blind", "blind"),
    ("secret", "blind", "blind"), ("open", "open", "open")])
def test_act_12_the_verdict_is_seen_as_the_more_hidden_side(initiator, defender, seen):
    opened = act("jaleel", [6, 2, 3], characteristic="Persuasion", opponent="nella", visibility=initiator)
    answer = act("nella", [6, 2, 1], given=opened, actor=STORYTELLER if defender == "blind" else None,
                 characteristic="Volonté", against=opened[0].roll, visibility=defender)
    assert [e.visibility for e in answer if type(e).__name__ == "OppositionSettled"] == [seen]


def test_act_12_the_defender_holds_a_secret_roll_as_waiting_and_secret():
    opened = act("jaleel", [6, 2, 3], characteristic="Persuasion", opponent="nella", visibility="secret")
    waiting = views.fold_view(ROSTER + opened, player("nella")).action.waiting
    assert waiting == {opened[0].roll: Rolled(character="jaleel", ps=0, opponent="nella", visibility="secret")}


def test_act_12_an_old_unsealed_secret_roll_was_seen_by_both_characters():
    jaleel, _ = act("jaleel", [6, 2, 3], characteristic="Persuasion", opponent="nella", visibility="secret")
    assert replace(jaleel, sealed=False).owners() == frozenset({"jaleel", "nella"})


def test_act_12_a_storytellers_settlement_applies_the_sealed_surpass():
    opened = act("jaleel", [6, 2, 3, BLANK, BLANK], characteristic="Persuasion", opponent="nella",
                 option="surpass")
    *_, raised = decide_after(ROSTER + opened, SettleOpposition(roll="a1", outcome="cancelled"))
    assert raised == TensionRaised(character="jaleel", tension=1, roll="a1")


def test_act_12_a_secret_contest_answered_or_unknown_is_refused_as_such():
    opened = act("jaleel", [6, 2, 3], characteristic="Persuasion", opponent="nella", visibility="secret")
    roll = opened[0].roll
    answered = opened + act("nella", [6, 2, 1], given=opened, characteristic="Volonté", against=roll)
    assert_refuses(given=ROSTER + answered, when=SettleOpposition(roll=roll, outcome="initiator"), code="rule",
                   match="answered or settled already")
    assert_refuses(given=ROSTER + answered, when=SettleOpposition(roll="a2.jaleel+nella", outcome="initiator"),
                   code="not_found")


def test_act_3_a_character_with_another_rulesets_sheet_rolls_with_the_threshold_it_gives():
    v5 = [CharacterAdded(character="kim", name="Kim", sheet=V5Sheet())]
    event = act("kim", [4, 4, 1], given=v5, characteristic="Force", threshold=4, difficulty=2)[0]
    assert (event.threshold, event.ps, event.success) == (4, 2, True)
