"""Action dice with D+/- (RULES ACT-1..13) and the texts' worked examples.

D+/- faces as scripted draws: 5 or 6 is "+", 1 or 2 is "-", 3 or 4 is blank (ACT-4).
"""

from __future__ import annotations

import msgspec
import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from conteur.events import action, game, views
from conteur.events.action import (
    ActionBegun,
    ActionRevealed,
    ActionRolled,
    ActionRuled,
    ApplyModifier,
    CharacterSacrificed,
    ConfigureAction,
    OppositionOpened,
    OppositionSettled,
    RollAction,
    Rolled,
    RuleAction,
    SettleOpposition,
    TensionRaised,
)
from conteur.events.model import STORYTELLER, DrawRecord
from conteur.events.session import NextTurn, SetTurnLength, SkipTime, TimeSkipped, TurnAdvanced
from conteur.events.testing import assert_decides, assert_refuses, decide_after
from tests.support.action_support import ROSTER, act, player
from tests.support.examples import examples

PLUS, MINUS, BLANK = 5, 1, 3



def draws(*pairs):
    return tuple(DrawRecord(counter=i, sides=s, face=f) for i, (s, f) in enumerate(pairs))


# ---------------------------------------------------------------- worked examples


def test_act_3_act_11_jake_jumps_with_his_expertise():
    """Expertise "Sauter": 3d10 at 6+, rolls 2, 7, 8 -> 2 PS against "Difficile" (2)."""
    assert_decides(
        given=ROSTER,
        when=RollAction(character="jake", characteristic="Motricité", difficulty="Difficile",
                        expertise="Sauter"),
        actor=player("jake"),
        draws=[2, 7, 8],
        then=[
            ActionRolled(
                roll="a1", character="jake", characteristic="Motricité", threshold=6,
                expertise=True, expertise_name="Sauter", sides=10, dice=(2, 7, 8),
                plusminus=(), signs=(), net=0, ps_dice=2, ps=2, success=True, difficulty=2,
                difficulty_name="Difficile", notation="Test (Motricité, Difficile)",
                draws=draws((10, 2), (10, 7), (10, 8)),
            )
        ],
    )


def test_act_8_sergei_surpasses_himself():
    """Carrure 5+, "Extrême" (4): 5, 8, 6 -> 3 PS, "+" and "-" -> 4 PS: success, NT+1."""
    rolled, raised = act("sergei", [5, 8, 6, PLUS, MINUS], characteristic="Carrure",
                         difficulty="Extrême", option="surpass")
    assert (rolled.ps_dice, rolled.signs, rolled.ps, rolled.success) == (3, ("+", "-"), 4, True)
    assert raised == TensionRaised(character="sergei", tension=1, roll="a1")


def test_act_8_sergei_sacrifices_himself():
    """5, 8, 1 -> 2 PS, one "+" -> 3, the Sacrifice's +2 -> 5: success, and he dies."""
    rolled, died = act("sergei", [5, 8, 1, PLUS, BLANK], characteristic="Carrure",
                       difficulty="Extrême", option="sacrifice")
    assert (rolled.ps_dice, rolled.ps, rolled.success) == (2, 5, True)
    assert died == CharacterSacrificed(character="sergei", roll="a1")
    assert_refuses(given=ROSTER + [rolled, died],
                   when=RollAction(character="sergei", characteristic="Carrure", difficulty=1),
                   actor=player("sergei"), match="ACT-8")


def test_act_10_natalia_runs_and_hacks_at_once():
    """Two simultaneous actions, malus 1 each. The run: 6, 3, 1 at 5+ and a "+" that does
    not count -> 1 PS, success at 1; the door: 4, 5, 7 at 7+ and a "-" -> 0 PS, failure."""
    (run,) = act("natalia", [6, 3, 1, PLUS], characteristic="Motricité", difficulty=1,
                 simultaneous=2)
    (door,) = act("natalia", [4, 5, 7, MINUS], given=[run], characteristic="Science",
                  difficulty=1, simultaneous=2)
    assert (run.net, run.ps, run.success) == (-1, 1, True)
    assert (door.net, door.ps, door.success) == (-1, 0, False)
    assert_refuses(given=ROSTER + [run, door],
                   when=RollAction(character="natalia", characteristic="Science", difficulty=1,
                                   simultaneous=2),
                   actor=player("natalia"), match="ACT-10")


def test_act_12_jaleel_against_nella_more_ps_wins():
    jaleel, opened = act("jaleel", [6, 2, 3], characteristic="Persuasion", opponent="nella")
    nella, revealed, settled = act("nella", [6, 7, 1], given=[jaleel, opened],
                                   characteristic="Volonté", against="a1")
    assert (jaleel.ps, nella.ps, jaleel.success) == (1, 2, None)
    assert revealed == ActionRevealed(roll="a1", character="jaleel", opponent="nella", rolled=jaleel)
    assert settled == OppositionSettled(initiator_roll="a1", defender_roll="a2",
                                        initiator="jaleel", defender="nella",
                                        initiator_ps=1, defender_ps=2, winner="nella")


def test_act_9_alfred_and_judith_cooperate():
    """Each gets bonus 1; the door opens if at least one of them reaches the difficulty."""
    (alfred,) = act("alfred", [2, 3, 4, BLANK], characteristic="Carrure", difficulty=2,
                    cooperation="porte")
    (judith,) = act("judith", [5, 6, 1, PLUS], given=[alfred], characteristic="Carrure",
                    difficulty=2, cooperation="porte")
    assert (alfred.net, alfred.success, alfred.cooperation_success) == (1, False, False)
    assert (judith.net, judith.ps, judith.success, judith.cooperation_success) == (1, 3, True, True)
    state = game.fold(ROSTER + [alfred, judith])
    assert action.cooperation_succeeded(state, "porte")


def test_act_2_louisa_hacks_for_three_turns_and_rolls_at_the_last():
    (begun,) = act("louisa", [], characteristic="Science", difficulty=2, turns=3)
    assert isinstance(begun, ActionBegun) and (begun.roll, begun.last_turn) == ("a1", 2)
    turn1 = [begun, TurnAdvanced(turn=1, game_seconds=4)]
    assert_refuses(given=ROSTER + turn1, when=RollAction(character="louisa", resume="a1"),
                   actor=player("louisa"), match="rolled at turn 2")
    turn2 = turn1 + [TurnAdvanced(turn=2, game_seconds=8)]
    (rolled,) = act("louisa", [6, 7, 2], given=turn2, resume="a1")
    assert (rolled.roll, rolled.turns, rolled.turn, rolled.success) == ("a1", 3, 2, True)
    state = game.fold(ROSTER + turn2 + [rolled])
    assert state.action.pending == {} and state.action.next_roll == 2


def test_act_7_dalia_malus_lasts_the_next_two_turns():
    (malus,) = decide_after(ROSTER, ApplyModifier(character="dalia",
                                                  notation="Malus (2 Tours) de 1"))
    assert (malus.value, malus.unit, malus.expires_turn) == (-1, "turns", 2)
    at_turn_2 = [malus, TurnAdvanced(turn=2, game_seconds=8)]
    (rolled,) = act("dalia", [6, 6, 6, MINUS], given=at_turn_2, characteristic="Motricité",
                    difficulty=3)
    assert (rolled.net, rolled.modifiers, rolled.ps) == (-1, ("m1.dalia",), 2)
    (later,) = act("dalia", [6, 6, 6], given=at_turn_2 + [TurnAdvanced(turn=3, game_seconds=12)],
                   characteristic="Motricité", difficulty=3)
    assert (later.net, later.modifiers) == (0, ())


@pytest.mark.parametrize(
    "notation, seconds", [("Malus (30 min) de 1", 1800), ("Malus (1 h) de 1", 3600)]
)
def test_act_7_enrik_and_janus_maluses_run_on_game_time(notation, seconds):
    (malus,) = decide_after(ROSTER, ApplyModifier(character="dalia", notation=notation))
    assert malus.expires_seconds == seconds
    just_before = [malus, TimeSkipped(seconds=seconds - 1, turn=0, game_seconds=seconds - 1)]
    assert [m.id for m in action.active_modifiers(game.fold(ROSTER + just_before), "dalia")] == ["m1.dalia"]
    over = just_before + [TimeSkipped(seconds=1, turn=0, game_seconds=seconds)]
    state = game.fold(ROSTER + over)
    assert action.active_modifiers(state, "dalia") == ()
    assert state.action.modifiers == ()  # dropped by the clock hook (TIME-1)


def test_act_13_sylvio_hacks_a_terminal_noted_as_a_test():
    (rolled,) = act("sylvio", [6, 6, 6], test="Test (Science, 3)")
    assert (rolled.notation, rolled.difficulty, rolled.success) == ("Test (Science, 3)", 3, True)


# ---------------------------------------------------------------- rules


def test_act_1_the_director_rules_trivial_actions_successful_without_a_roll():
    assert_decides(given=ROSTER, when=RuleAction(character="jake", ruling="trivial",
                                                 description="s'asseoir"),
                   then=[ActionRuled(roll="a1", character="jake", ruling="trivial", success=True,
                                     description="s'asseoir")])


def test_act_1_impossible_actions_fail_without_a_roll():
    (ruled,) = decide_after(ROSTER, RuleAction(character="jake", ruling="impossible"))
    assert ruled.success is False


def test_act_1_only_the_director_rules():
    assert_refuses(given=ROSTER, when=RuleAction(character="jake", ruling="trivial"),
                   actor=player("jake"), code="forbidden")


def test_act_1_only_player_characters_roll():
    assert_refuses(given=ROSTER, when=RollAction(character="mutant", characteristic="Carrure",
                                                 difficulty=1, threshold=5),
                   match="ACT-1")


def test_act_1_a_difficulty_of_zero_is_a_ruling_not_a_roll():
    assert_refuses(given=ROSTER, when=RollAction(character="jake", characteristic="Motricité",
                                                 difficulty=0),
                   actor=player("jake"), match="ACT-1")


def test_act_3_three_d8_without_expertise_and_the_threshold_counts():
    (rolled,) = act("jake", [5, 6, 8], characteristic="Motricité", difficulty=1)
    assert (rolled.sides, rolled.dice, rolled.ps) == (8, (5, 6, 8), 2)


def test_act_3_the_number_of_action_dice_is_a_setting():
    given = [*decide_after(ROSTER, ConfigureAction(dice=4))]
    (rolled,) = act("jake", [6, 6, 6, 6], given=given, characteristic="Motricité", difficulty=1)
    assert rolled.ps == 4


def test_act_3_an_expertise_not_on_the_sheet_is_refused():
    assert_refuses(given=ROSTER, when=RollAction(character="jake", characteristic="Motricité",
                                                 difficulty=1, expertise="Nager"),
                   actor=player("jake"), match="ACT-3")


def test_act_3_a_player_with_a_sheet_cannot_declare_a_threshold():
    assert_refuses(given=ROSTER, when=RollAction(character="jake", characteristic="Motricité",
                                                 difficulty=1, threshold=2),
                   actor=player("jake"), code="invalid")


@pytest.mark.parametrize("face, sign", [(1, "-"), (2, "-"), (3, ""), (4, ""), (5, "+"), (6, "+")])
def test_act_4_the_d_plus_minus_has_two_plus_two_minus_two_blank_faces(face, sign):
    (rolled,) = act("jake", [6, 1, 1, face], characteristic="Motricité", difficulty=1, bonus=1)
    assert (rolled.plusminus, rolled.signs) == ((face,), (sign,))
    assert rolled.ps == 1 + (sign == "+")  # a bonus counts its "+" only (ACT-6)


def test_act_5_bonuses_and_maluses_cancel_each_other():
    (rolled,) = act("jake", [6, 6, 2, PLUS], characteristic="Motricité", difficulty=1,
                    bonus=3, malus=2)
    assert (rolled.net, len(rolled.plusminus), rolled.ps) == (1, 1, 3)


def test_act_8_options_are_exclusive_by_the_command_shape():
    with pytest.raises(msgspec.ValidationError):
        msgspec.json.decode(b'{"type":"roll_action","character":"x","option":"both"}',
                            type=RollAction)


def test_act_8_an_option_on_one_simultaneous_action_only():
    (first,) = [e for e in act("natalia", [6, 3, 1, PLUS, PLUS], characteristic="Motricité",
                               difficulty=1, simultaneous=2, option="surpass")
                if isinstance(e, ActionRolled)]
    assert_refuses(given=ROSTER + [first],
                   when=RollAction(character="natalia", characteristic="Science", difficulty=1,
                                   simultaneous=2, option="surpass"),
                   actor=player("natalia"), match="ACT-8")


def test_act_8_the_options_bonus_nets_with_a_malus():
    rolled, _ = act("jake", [6, 2, 2, PLUS], characteristic="Motricité", difficulty=1,
                    malus=1, option="surpass")
    assert rolled.net == 1


def test_act_10_an_automatic_success_still_counts_among_simultaneous_actions():
    ruled = decide_after(ROSTER, RuleAction(character="natalia", ruling="trivial",
                                            simultaneous=2))
    (run,) = act("natalia", [6, 3, 1, MINUS], given=ruled, characteristic="Motricité",
                 difficulty=1, simultaneous=2)
    assert (run.net, run.ps, run.success) == (-1, 0, False)


def test_act_11_named_levels_come_from_the_settings_table():
    table = {"Facile": 1, "Difficile": 2, "Ardu": 3, "Extrême": 4}
    given = decide_after(ROSTER, ConfigureAction(levels=table))
    (rolled,) = act("jake", [6, 6, 6], given=given, characteristic="Motricité", difficulty="ardu")
    assert (rolled.difficulty, rolled.difficulty_name) == (3, "Ardu")


def test_act_11_names_match_without_accents_or_case():
    (rolled,) = act("jake", [6, 6, 6], characteristic="motricite", difficulty="extreme")
    assert (rolled.difficulty, rolled.characteristic) == (4, "motricite")


def test_act_11_an_unknown_level_is_refused_with_the_table():
    assert_refuses(given=ROSTER, when=RollAction(character="jake", characteristic="Motricité",
                                                 difficulty="Ardu"),
                   actor=player("jake"), match="Difficile (2), Extrême (4)")


def test_act_12_on_equal_ps_the_defender_holds():
    jaleel = act("jaleel", [6, 2, 3], characteristic="Persuasion", opponent="nella")
    *_, settled = act("nella", [6, 2, 1], given=jaleel, characteristic="Volonté", against="a1")
    assert settled.winner == "nella"


def test_act_12_only_the_opposed_character_answers_once():
    jaleel = act("jaleel", [6, 2, 3], characteristic="Persuasion", opponent="nella")
    # jake is told what he would be told of a roll that does not exist
    assert_refuses(given=ROSTER + jaleel, when=RollAction(character="jake",
                   characteristic="Motricité", against="a1"), actor=player("jake"),
                   code="not_found", match="no opposed roll 'a1' waits for jake's answer")
    assert_refuses(given=ROSTER + jaleel, when=RollAction(character="jake",
                   characteristic="Motricité", against="a9"), actor=player("jake"),
                   code="not_found", match="no opposed roll 'a9' waits for jake's answer")
    assert_refuses(given=ROSTER + jaleel, when=RollAction(character="jake", threshold=6,
                   characteristic="Motricité", against="a1"), actor=STORYTELLER,
                   match="roll a1 opposes nella, not jake")
    answer = act("nella", [6, 2, 1], given=jaleel, characteristic="Volonté", against="a1")
    assert_refuses(given=ROSTER + jaleel + answer,
                   when=RollAction(character="nella", characteristic="Volonté", against="a1"),
                   actor=player("nella"), match="waits for nella's answer")


# ---------------------------------------------------------------- ACT-12 sealed


def test_act_12_the_initiators_roll_is_sealed_from_the_defender_until_it_answers():
    """Like MET throws, each side commits before seeing the other: nella is called with
    what jaleel declares aloud (the characteristic), never his dice, PS or options."""
    jaleel, opened = act("jaleel", [8, 8, 8, PLUS, PLUS, PLUS], characteristic="Persuasion",
                         opponent="nella", bonus=1, option="surpass")
    assert jaleel.sealed and jaleel.owners() == frozenset({"jaleel"}) and jaleel.redacted() is None
    assert opened == OppositionOpened(roll="a1", character="jaleel", opponent="nella",
                                      characteristic="Persuasion")
    assert opened.owners() is None  # an open contest: everyone learns it is under way
    nella_view = [views.view(e, player("nella")) for e in (jaleel, opened)]
    assert nella_view == [None, opened]
    # the defender's fold knows the roll waits, not its PS
    state = views.fold_view(ROSTER + [jaleel, opened], player("nella"))
    assert state.action.waiting["a1"] == Rolled(character="jaleel", ps=0, opponent="nella")
    assert state.action.next_roll == 2


def test_act_12_the_answer_reveals_the_initiators_roll_and_its_option_together():
    jaleel = act("jaleel", [8, 8, 8, PLUS, PLUS, PLUS], characteristic="Persuasion",
                 opponent="nella", bonus=1, option="surpass")
    events = act("nella", [6, 7, 1], given=jaleel, characteristic="Volonté", against="a1")
    nella, revealed, settled, raised = events
    assert revealed.rolled == jaleel[0] and revealed.owners() is None
    assert (settled.initiator_ps, settled.defender_ps, settled.winner) == (6, 2, "jaleel")
    # ACT-8: jaleel's Surpass, held back with his roll, counts once the contest is over
    assert raised == TensionRaised(character="jaleel", tension=1, roll="a1")
    assert [views.view(e, player("jake")) for e in events] == events


def test_act_12_a_secret_sealed_roll_reaches_the_defender_only_as_a_call():
    jaleel, opened = act("jaleel", [6, 2, 3], characteristic="Persuasion", opponent="nella",
                         visibility="secret")
    assert jaleel.owners() == frozenset({"jaleel"})
    assert opened.owners() == frozenset({"jaleel", "nella"})
    assert views.view(opened, player("jake")) is None
    nella, revealed, settled = act("nella", [6, 2, 1], given=[jaleel, opened],
                                   characteristic="Volonté", against=jaleel.roll)
    assert revealed.owners() == settled.owners() == frozenset({"jaleel", "nella"})
    assert views.view(revealed, player("jake")) is None


def test_act_12_a_blind_opposed_roll_stays_with_the_storytellers():
    jaleel, opened = act("jaleel", [6, 2, 3], actor=STORYTELLER, characteristic="Persuasion",
                         opponent="nella", visibility="blind")
    assert jaleel.owners() == opened.owners() == frozenset()


def test_act_12_a_sealed_sacrifice_takes_effect_when_the_contest_is_revealed():
    """Until then jaleel acts as any character: refusing him would tell everyone, by his
    missing rolls, what he chose."""
    jaleel = act("jaleel", [6, 2, 3, PLUS, PLUS], characteristic="Persuasion", opponent="nella",
                 option="sacrifice")
    assert [type(e) for e in jaleel] == [ActionRolled, OppositionOpened]
    meanwhile = act("jaleel", [6, 6, 6], given=jaleel, characteristic="Persuasion", difficulty=1)
    assert meanwhile[0].success
    *_, sacrificed = act("nella", [6, 2, 1], given=jaleel + meanwhile, characteristic="Volonté",
                         against="a1")
    assert sacrificed == CharacterSacrificed(character="jaleel", roll="a1")


def test_act_12_a_storytellers_settlement_reveals_the_sealed_roll():
    jaleel = act("jaleel", [6, 2, 3], characteristic="Persuasion", opponent="nella",
                 visibility="secret")
    revealed, ruled = decide_after(ROSTER + jaleel, SettleOpposition(roll=jaleel[0].roll, outcome="initiator"))
    assert revealed.rolled == jaleel[0] and revealed.owners() == ruled.owners()


def test_act_12_an_unsealed_roll_from_an_old_log_is_answered_as_it_was():
    """Logs from before the seal hold opposed rolls the defender saw whole, options already
    applied: their answer adds no reveal and no second option."""
    jaleel, _ = act("jaleel", [6, 2, 3], characteristic="Persuasion", opponent="nella")
    old = msgspec.structs.replace(jaleel, sealed=False)
    assert old.owners() is None
    events = act("nella", [6, 2, 1], given=[old], characteristic="Volonté", against="a1")
    assert [type(e) for e in events] == [ActionRolled, OppositionSettled]


def test_act_12_an_opposed_roll_has_no_difficulty():
    assert_refuses(given=ROSTER, when=RollAction(character="jaleel", characteristic="Persuasion",
                                                 difficulty=2, opponent="nella"),
                   actor=player("jaleel"), match="ACT-12")


def test_act_13_a_named_level_in_the_notation():
    (rolled,) = act("jake", [6, 6, 6], test="test ( Motricité , Difficile )")
    assert (rolled.characteristic, rolled.difficulty, rolled.difficulty_name) == ("Motricité", 2, "Difficile")


def test_act_13_a_malformed_notation_is_refused():
    assert_refuses(given=ROSTER, when=RollAction(character="sylvio", test="Science 3"),
                   actor=player("sylvio"), match="ACT-13")


# ---------------------------------------------------------------- visibility


def test_a_secret_action_is_seen_by_its_roller_only():
    rolled, raised = act("sergei", [5, 8, 6, PLUS, MINUS], characteristic="Carrure",
                         difficulty=4, option="surpass", visibility="secret")
    assert rolled.owners() == raised.owners() == frozenset({"sergei"})
    assert rolled.redacted() is None


def test_a_blind_action_is_for_storytellers_and_only_they_roll_it():
    (rolled,) = act("jake", [6, 6, 6], actor=STORYTELLER, characteristic="Motricité",
                    difficulty=1, visibility="blind")
    assert rolled.owners() == frozenset() and rolled.redacted() is None
    assert_refuses(given=ROSTER, when=RollAction(character="jake", characteristic="Motricité",
                                                 difficulty=1, visibility="blind"),
                   actor=player("jake"), code="forbidden")


def test_a_modifier_is_seen_by_its_character():
    (malus,) = decide_after(ROSTER, ApplyModifier(character="dalia", value=-1, duration=2))
    assert malus.owners() == frozenset({"dalia"})


def test_act_12_a_secret_opposed_roll_is_settled_before_both_characters():
    jaleel = act("jaleel", [6, 2, 3], characteristic="Persuasion", opponent="nella",
                 visibility="secret")
    assert jaleel[0].roll == jaleel[1].roll == "a1.jaleel+nella"  # numbered among the rolls both see
    *_, settled = act("nella", [6, 2, 1], given=jaleel, characteristic="Volonté", against=jaleel[0].roll)
    assert settled.owners() == frozenset({"jaleel", "nella"})


_clock_or_modifier = st.one_of(
    st.tuples(st.just("turn")),
    st.tuples(st.just("skip"), st.integers(1, 7200)),
    st.tuples(st.just("length"), st.integers(1, 120)),  # a turn of up to two minutes (TIME-3)
    st.tuples(st.just("modifier"), st.sampled_from(["turns", "minutes"]), st.integers(1, 6)),
)


@settings(max_examples=examples(100), deadline=None)
@given(steps=st.lists(_clock_or_modifier, max_size=20))  # 20 modifiers at most: a net of -20 (ACT-6)
# a minute's modifier, then one of turns that outlasts it: the turn that ends the minute;
# one of turns ending before two of minutes: the turn after its last; a shorter one after
# a longer one, of turns or of minutes
@example(steps=[("length", 60), ("modifier", "minutes", 1), ("modifier", "turns", 6), ("turn",)])
@example(steps=[("modifier", "turns", 1), ("modifier", "minutes", 1), ("modifier", "minutes", 1), ("turn",), ("turn",)])
@example(steps=[("modifier", "turns", 3), ("modifier", "turns", 1), ("turn",), ("turn",)])
@example(steps=[("modifier", "minutes", 5), ("modifier", "minutes", 1), ("skip", 60)])
def test_act_7_expired_modifiers_leave_at_each_clock_move_and_the_rest_stay(steps):
    """Modifiers applied and clocks moved by commands, in any order: dalia's roll then counts
    exactly the modifiers still running (a modifier in turns up to its last turn included,
    in minutes until that much game time has passed), and the state holds those only (it
    keeps the earliest expiry, so a clock move that expires nothing scans nothing)."""
    events = list(ROSTER)
    expiries: dict[str, tuple[int | None, int | None]] = {}
    for step in steps:
        if step[0] == "turn":
            command = NextTurn()
        elif step[0] == "skip":
            command = SkipTime(seconds=step[1])
        elif step[0] == "length":
            command = SetTurnLength(seconds=step[1])
        else:
            command = ApplyModifier(character="dalia", value=-1, duration=step[2], unit=step[1])
        decided = decide_after(events, command)
        events += decided
        for e in decided:
            if isinstance(e, action.ModifierApplied):
                expiries[e.modifier] = (e.applied_turn + e.duration if step[1] == "turns" else None,
                                        e.applied_seconds + 60 * e.duration if step[1] == "minutes" else None)
    turn, seconds = 0, 0
    for e in events:
        if isinstance(e, (TurnAdvanced, TimeSkipped)):
            turn, seconds = e.turn, e.game_seconds
    running = {m for m, (t, sec) in expiries.items() if (t is None or turn <= t) and (sec is None or seconds < sec)}
    (rolled,) = act("dalia", [6, 6, 6] + [BLANK] * len(running), given=events[len(ROSTER):],
                    characteristic="Motricité", difficulty=1)
    assert (set(rolled.modifiers), rolled.net) == (running, -len(running))
    assert {m.id for m in game.fold(events).action.modifiers} == running


@pytest.mark.parametrize("bonus", [0, 3])
def test_act_12_a_sealed_roll_draws_from_a_stream_of_its_own(bonus):
    """FAIR-2 with the seal: jaleel's sealed dice (3 + his bonus's D+/-) move no
    counter of his other streams, so his next open roll, before nella answers, tells nothing
    of them; and the sealed stream, once revealed, counts nothing but the sealed roll."""
    from conteur.events import fair

    state = game.fold(ROSTER)
    draws = fair.FairDraws(bytes(range(32)), "night", nonce="n0nce")
    sealed, opened = game.decide(state, RollAction(character="jaleel", characteristic="Persuasion",
                                                   opponent="nella", bonus=bonus),
                                 draws, actor=player("jaleel"))
    assert {r.stream for r in sealed.draws} == {"jaleel/sealed=a1"}
    assert [r.counter for r in sealed.draws] == list(range(3 + bonus))
    assert {r.entropy for r in sealed.draws} == {"n0nce"}  # hidden until revealed: the nonce
    state = game.fold([sealed, opened], state)
    after = fair.FairDraws(bytes(range(32)), "night", streams=state.streams, entropy="e")
    (open_roll,) = game.decide(state, RollAction(character="jaleel", characteristic="Persuasion",
                                                 difficulty=1), after, actor=player("jaleel"))
    assert [(r.stream, r.counter) for r in open_roll.draws] == [("jaleel/open", i) for i in range(3)]
    assert open_roll.roll == "a2"


def test_act_2_a_long_secret_action_against_someone_is_numbered_among_what_its_opponent_sees():
    # the id an opposed roll shows its opponent counts only what that opponent sees; a
    # long action begun in secret must not keep its roller's secret numbering (a2.louisa
    # after one secret roll of hers), which would tell Sylvio how many secret rolls Louisa made
    secret = act("louisa", [6, 7, 2, 2, 2, 2], characteristic="Science", difficulty=2, visibility="secret")
    ids = []
    for given in ([], secret):
        (begun,) = act("louisa", [], given=given, characteristic="Science", opponent="sylvio",
                       visibility="secret", turns=2)
        ids.append(begun.roll)
        rolled = act("louisa", [6, 7, 2, 2, 2, 2], given=[*given, begun, TurnAdvanced(turn=1, game_seconds=4)],
                     resume=begun.roll)
        seen = [views.view(e, player("sylvio")) for e in rolled]
        assert [e.roll for e in seen if e is not None] == [begun.roll]
    assert ids[0] == ids[1] == "a1.louisa+sylvio"


def test_act_8_a_secret_sacrifice_is_not_told_by_a_refusal_to_one_who_rolls_against_the_dead():
    # Sergei sacrificed himself in a secret roll; Jake, who did not see it, rolling
    # against him is answered as if Sergei lived (the contest waits for a storyteller's
    # ruling, ACT-12), not "sergei died", which would tell him the secret death
    rolled, died = act("sergei", [5, 8, 1, PLUS, BLANK], characteristic="Carrure",
                       difficulty="Extrême", option="sacrifice", visibility="secret")
    assert died.visibility == "secret" and views.view(died, player("jake")) is None
    against = RollAction(character="jake", characteristic="Motricité", opponent="sergei")
    alive = decide_after(ROSTER, against, actor=player("jake"), draws=[6, 7, 2, 2, 2, 2])
    dead = decide_after(ROSTER + [rolled, died], against, actor=player("jake"),
                        draws=[6, 7, 2, 2, 2, 2])
    assert [type(e) for e in dead] == [type(e) for e in alive]
    # a storyteller saw it: refused, naming ACT-8; so is Sergei's own next roll
    assert_refuses(given=ROSTER + [rolled, died], when=against, actor=STORYTELLER, match="ACT-8")
    # an open sacrifice is seen by everyone: the refusal tells nothing new
    open_rolled, open_died = act("sergei", [5, 8, 1, PLUS, BLANK], characteristic="Carrure",
                                 difficulty="Extrême", option="sacrifice")
    assert_refuses(given=ROSTER + [open_rolled, open_died], when=against, actor=player("jake"),
                   match="ACT-8")
