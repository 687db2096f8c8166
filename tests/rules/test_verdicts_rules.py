"""Every verdict ``conteur verify`` derives again, rule by rule: a night decided through
``decide`` verifies, and each recorded verdict edited by one field is named with the
rule that says otherwise. The checker runs as verify runs it: each event with the state
folded up to just before it (``events.verdicts``). The database and log round trip is
``tests/audit/test_verify_verdicts.py``'s; these are the rules, fast.
"""

from __future__ import annotations

import msgspec
import pytest

from conteur.events import action, game, met, v5, verdicts
from conteur.events.model import STORYTELLER, DrawRecord
from conteur.events.session import NoSheetMarked
from conteur.events.sheets import MetSheet
from conteur.events.testing import decide_after
from tests.support.action_support import ROSTER as ACTION_ROSTER
from tests.support.action_support import player as action_player
from tests.support.met_support import A6, B7, classic, findings, player, roster, static

A, B, C = player("a"), player("b"), player("c")
PLUS, MINUS, BLANK = 5, 1, 3


def play(given, *steps) -> list:
    """``given``, then each (command, actor, draws) decided on what came before."""
    events = list(given)
    for command, actor, faces in steps:
        events += decide_after(events, command, actor=actor, draws=faces)
    return events


def edited(events, kind, index=0, **changes) -> list:
    """``events`` with the ``index``-th event of type ``kind`` changed."""
    seen, out = 0, []
    for event in events:
        if isinstance(event, kind):
            if seen == index:
                event = msgspec.structs.replace(event, **changes)
            seen += 1
        out.append(event)
    assert seen > index, f"no {kind.__name__} number {index}"
    return out


def first(events, kind):
    return next(e for e in events if isinstance(e, kind))


def first_finding(events) -> str:
    found = findings(events)
    assert found, "the edit went unseen"
    return found[0]


# ---------------------------------------------------------------- V5


def v5_night():
    return play([], (v5.RollPool(pool=4, hunger=2, difficulty=2), STORYTELLER, [6, 1, 10, 1]))


def test_v5_5_an_honest_pool_verifies_and_its_hunger_dice_are_counted():
    night = v5_night()
    assert findings(night) == []
    rolled = first(night, v5.PoolRolled)
    assert (rolled.normal, rolled.hunger, rolled.hunger_level) == ((6, 1), (10, 1), 2)
    moved = edited(night, v5.PoolRolled, normal=(6,), hunger=(1, 10, 1))  # the verdicts still hold
    assert first_finding(moved) == "3 hunger dice, but Hunger 2 on a normal pool of 4 makes 2 (V5-5)"
    older = edited(night, v5.PoolRolled, normal=(6,), hunger=(1, 10, 1), hunger_level=None)
    assert findings(older) == []  # a roll recorded before its Hunger was: no count to check


@pytest.mark.parametrize("field, value", [("successes", 4), ("margin", 1), ("success", False), ("critical", True),
                                          ("messy", False), ("bestial", True)])
def test_v5_2_to_7_each_edited_verdict_of_a_pool_is_named(field, value):
    night = v5_night()
    assert getattr(first(night, v5.PoolRolled), field) != value
    assert first_finding(edited(night, v5.PoolRolled, **{field: value})).startswith(f"{field} is {value!r}, but")


def test_fair_1_a_pool_s_dice_are_its_draws_and_its_pool_their_count():
    night = v5_night()
    assert first_finding(edited(night, v5.PoolRolled, normal=(7, 1))).startswith("the dice (7, 1, 10, 1) are not")
    assert first_finding(edited(night, v5.PoolRolled, pool=5)) == "pool is 5, but 4 dice were rolled"
    undrawn = edited(night, v5.PoolRolled, draws=())
    assert findings(undrawn) == []  # a hand-made record: no draw to compare with


def rerolled():
    return play(
        [],
        (v5.RollPool(pool=4, hunger=1, difficulty=3), STORYTELLER, [2, 6, 7, 5]),
        (v5.WillpowerReroll(roll="r1", dice=(0,)), STORYTELLER, [9]),
    )


def test_v5_9_an_honest_reroll_verifies():
    night = rerolled()
    assert findings(night) == []
    assert first(night, v5.WillpowerRerolled).success is True


@pytest.mark.parametrize("changes, reason", [
    ({"before": (3,)}, "before is (3,), but roll r1 makes it (2,) (V5-9)"),
    ({"normal": (9, 6, 8)}, "the dice (9, 6, 8, 5) are not the recorded draws"),
    ({"hunger": (6,)}, "hunger is (6,), but roll r1 makes it (5,) (V5-9)"),
    ({"difficulty": 2}, "difficulty is 2, but roll r1 makes it 3 (V5-9)"),
    ({"success": False}, "success is False, but the dice give True"),
    ({"dice": (5,)}, "die 5 is not one of roll r1's 3 normal dice"),
])
def test_v5_9_each_edited_part_of_a_reroll_is_named(changes, reason):
    night = rerolled()
    if "normal" in changes:  # an edited face is caught as not its draw
        night = edited(night, v5.WillpowerRerolled, after=(9,))
        assert first_finding(edited(night, v5.WillpowerRerolled, draws=(), **changes)).startswith(
            "normal is (9, 6, 8)")
        return
    assert first_finding(edited(night, v5.WillpowerRerolled, **changes)).startswith(reason)


def test_v5_9_a_rouse_check_s_hunger_moves_as_its_face_says():
    given = roster(a=A6) + [v5.HungerSet(character="a", hunger=4, previous=0)]
    night = play(given, (v5.RouseCheck(character="a"), STORYTELLER, [3]),
                 (v5.RouseCheck(character="a"), STORYTELLER, [2]), (v5.RouseCheck(character="a"), STORYTELLER, [6]))
    assert findings(night) == []
    assert [(e.hunger_before, e.hunger_after) for e in night if isinstance(e, v5.RouseChecked)] == [
        (4, 5), (5, 5), (5, 5)]
    assert first_finding(edited(night, v5.RouseChecked, hunger_after=4)) == (
        "hunger_after is 4, but a 3 from Hunger 4 gives 5 (V5-9)")
    assert first_finding(edited(night, v5.RouseChecked, 1, hunger_before=4, hunger_after=5)) == (
        "hunger_before is 4, but a's Hunger was 5 (V5-5)")
    assert first_finding(edited(night, v5.RouseChecked, face=4)).startswith("the dice (4,) are not")


def test_v5_9_a_rouse_check_for_a_character_off_the_roster_is_not_guessed_at():
    night = play([], (v5.RouseCheck(character="ghost"), STORYTELLER, [3]))
    assert findings(edited(night, v5.RouseChecked, hunger_before=2, hunger_after=3)) == []


# ---------------------------------------------------------------- action dice


def action_night():
    return play(ACTION_ROSTER, (action.RollAction(character="jake", characteristic="Motricité", difficulty=2,
                                                  bonus=2), action_player("jake"), [6, 1, 1, PLUS, MINUS]))


def test_act_3_an_honest_action_roll_verifies():
    night = action_night()
    assert findings(night) == []
    rolled = first(night, action.ActionRolled)
    assert (rolled.net, rolled.ps_dice, rolled.ps, rolled.success) == (2, 1, 2, True)


@pytest.mark.parametrize("changes, reason", [
    ({"signs": ("+", "+")}, "signs are ('+', '+'), but the D+/- faces show ('+', '-') (ACT-4)"),
    ({"net": 3}, "2 D+/- rolled for a net of 3 (ACT-6)"),
    ({"bonus": 1}, "net is 2, but its bonus, malus and modifiers make 1 (ACT-5)"),
    ({"ps_dice": 2}, "ps_dice is 2, but the dice give 1"),
    ({"ps": 1}, "ps is 1, but the dice give 2"),
    ({"success": False}, "success is False, but the dice give True"),
    ({"dice": (6, 1, 2)}, "the dice (6, 1, 2, 5, 1) are not the recorded draws"),
])
def test_act_5_6_11_each_edited_part_of_an_action_roll_is_named(changes, reason):
    assert first_finding(edited(action_night(), action.ActionRolled, **changes)).startswith(reason)


def test_act_7_a_roll_s_net_counts_its_modifiers_unless_the_copy_lacks_them():
    given = ACTION_ROSTER + decide_after(ACTION_ROSTER, action.ApplyModifier(character="jake", value=-1, duration=2,
                                                                            unit="turns"))
    night = play(given, (action.RollAction(character="jake", characteristic="Motricité", difficulty=1),
                         action_player("jake"), [6, 6, 1, MINUS]))
    assert findings(night) == []
    assert first(night, action.ActionRolled).net == -1
    unknown = [e for e in night if not isinstance(e, action.ModifierApplied)]
    assert findings(unknown) == []  # a modifier this copy does not hold: the net is not guessed at


def contest(initiator_faces, defender_faces):
    opened = play(ACTION_ROSTER, (action.RollAction(character="jaleel", characteristic="Persuasion", opponent="nella"),
                                  action_player("jaleel"), initiator_faces))
    roll = first(opened, action.ActionRolled).roll
    return play(opened, (action.RollAction(character="nella", characteristic="Volonté", against=roll),
                         action_player("nella"), defender_faces))


def test_act_12_an_honest_contest_verifies_and_its_edits_are_named():
    night = contest([6, 6, 3], [6, 2, 3])
    assert findings(night) == []
    assert first(night, action.OppositionSettled).winner == "jaleel"
    assert first_finding(edited(night, action.OppositionSettled, winner="nella")) == (
        "winner is 'nella', but 2 PS against 1 makes 'jaleel' the winner (ACT-12)")
    assert first_finding(edited(night, action.OppositionSettled, initiator_ps=3)).startswith(
        "initiator_ps is 3, but roll")
    assert first_finding(edited(night, action.OppositionSettled, defender_ps=2)).startswith(
        "defender_ps is 2, but roll")
    tied = contest([6, 2, 3], [6, 2, 3])
    assert findings(tied) == [] and first(tied, action.OppositionSettled).winner == "nella"


@pytest.mark.parametrize("outcome, winner", [("initiator", "jaleel"), ("defender", "nella"), ("cancelled", None)])
def test_act_12_a_storyteller_s_ruling_names_the_side_its_outcome_says(outcome, winner):
    opened = play(ACTION_ROSTER, (action.RollAction(character="jaleel", characteristic="Persuasion", opponent="nella"),
                                  action_player("jaleel"), [6, 2, 3]))
    roll = first(opened, action.ActionRolled).roll
    night = play(opened, (action.SettleOpposition(roll=roll, outcome=outcome), STORYTELLER, []))
    assert findings(night) == [] and first(night, action.OppositionRuled).winner == winner
    other = "nella" if winner == "jaleel" else "jaleel"
    assert first_finding(edited(night, action.OppositionRuled, winner=other)).startswith(f"winner is {other!r}")


# ---------------------------------------------------------------- MET


def met_throws(a, b, given=None):
    given = given if given is not None else roster(a=A6, b=B7) + [classic()]
    return play(given, (met.Throw(character="a", challenge="c1", round=1, choice=a), A, []),
                (met.Throw(character="b", challenge="c1", round=1, choice=b), B, []))


def test_met_2_a_round_won_on_the_throw_verifies_and_its_edits_are_named():
    night = met_throws("rock", "scissors")
    assert findings(night) == []
    assert first_finding(edited(night, met.ThrowsRevealed, winner="b")) == (
        "winner is 'b', but rock against scissors makes it 'a' (MET-2)")
    assert first_finding(edited(night, met.ThrowsRevealed, throws={"a": "paper", "b": "scissors"})) == (
        "a's revealed throw is 'paper', but it sealed 'rock' (MET-2)")
    assert first_finding(edited(night, met.ThrowsRevealed, throws={"a": "rock"})).startswith(
        "b's revealed throw is None")
    assert first_finding(edited(night, met.RoundWon, winner="b", loser="a")) == (
        "winner is 'b', but round 1's throw went to 'a'")
    assert first_finding(edited(night, met.RoundWon, loser="c")) == "loser is 'c', but the winner 'a' faced 'b'"
    assert first_finding(edited(night, met.RoundWon, by="bid")) == "by is 'bid', but round 1 of c1 was decided by 'throw'"


def test_met_2_a_throw_the_server_drew_is_its_d3():
    given = roster(a=A6) + [static()]
    night = play(given, (met.Throw(character="storyteller", challenge="c1", round=1), STORYTELLER, [2]))
    assert findings(night) == [] and first(night, met.ThrowCommitted).choice == "paper"
    assert first_finding(edited(night, met.ThrowCommitted, choice="rock")) == (
        "the drawn throw is 'rock', but its d3 shows 2 (paper) (MET-2)")
    off = edited(night, met.ThrowCommitted, draws=(DrawRecord(counter=0, sides=3, face=4),))
    assert first_finding(off) == "the drawn throw is 'paper', but its d3 shows 4 (None) (MET-2)"


def bid_night(a_bid, b_bid):
    night = met_throws("rock", "rock")
    return play(night, (met.DeclareBid(character="a", challenge="c1", round=1, value=a_bid), A, []),
                (met.DeclareBid(character="b", challenge="c1", round=1, value=b_bid), B, []))


def test_met_3_a_round_won_on_bids_verifies_and_its_edits_are_named():
    night = bid_night(5, 6)
    assert findings(night) == []
    assert first_finding(edited(night, met.BidsCompared, winner="a")) == (
        "winner is 'a', but the bids {'a': 5, 'b': 6} make it 'b' (MET-3, MET-10)")
    assert first_finding(edited(night, met.RoundWon, winner="a", loser="b")) == (
        "winner is 'a', but round 1's bid went to 'b'")
    sealed = edited(edited(night, met.BidDeclared, 0, value=None), met.BidDeclared, 1, value=None)
    assert findings(edited(sealed, met.RoundWon, winner="a", loser="b")) == []  # a viewer's copy: not guessed at
    assert first_finding(edited(sealed, met.RoundWon, by="throw")).startswith("by is 'throw'")


def test_met_10_a_static_tie_against_the_difficulty_verifies():
    given = roster(a=A6) + [static(difficulty=5)]
    night = play(given, (met.Throw(character="a", challenge="c1", round=1, choice="rock"), A, []),
                 (met.Throw(character="storyteller", challenge="c1", round=1, choice="rock"), STORYTELLER, []),
                 (met.DeclareBid(character="a", challenge="c1", round=1, value=5), A, []))
    assert findings(night) == []
    assert first(night, met.RoundWon).by == "difficulty"
    assert first_finding(edited(night, met.RoundWon, winner="a", loser="storyteller")) == (
        "winner is 'a', but round 1's difficulty went to 'storyteller'")


def test_met_13_an_overbid_s_grant_is_derived_again():
    given = roster(a=A6, b=B7) + [classic()]
    night = play(given, (met.Throw(character="a", challenge="c1", round=1, choice="scissors"), A, []),
                 (met.Throw(character="b", challenge="c1", round=1, choice="rock"), B, []),
                 (met.Overbid(character="a", challenge="c1", value=6), A, []),
                 (met.DeclareBid(character="b", challenge="c1", round=1, value=2), B, []))
    assert findings(night) == [] and first(night, met.OverbidSettled).granted is True
    assert first_finding(edited(night, met.OverbidSettled, granted=False)) == (
        "granted is False, but an overbid of 6 against 2 gives True (MET-13)")
    sealed = edited(night, met.OverbidDeclared, value=None)
    assert findings(edited(sealed, met.OverbidSettled, granted=False)) == []


def test_met_16_a_challenge_resolved_names_the_result_that_stood():
    night = play(met_throws("rock", "scissors"), (met.CloseWindow(challenge="c1"), STORYTELLER, []))
    assert findings(night) == []
    assert first_finding(edited(night, met.ChallengeResolved, winner="b", loser="a")) == (
        "resolved for 'b' over 'a', but the result stood for 'a' over 'b' (MET-16)")
    conceded = play(roster(a=A6, b=B7) + [classic()], (met.Concede(character="b", challenge="c1"), B, []))
    assert findings(edited(conceded, met.ChallengeResolved, winner="b", loser="a")) == []  # no result to stand


def test_met_13_a_tie_debt_and_a_missing_sheet_decide_ties_and_are_checked():
    debt = [met.TieDebtIncurred(debtor="a", creditor="b", challenge="c0")]
    night = met_throws("paper", "paper", given=roster(a=A6, b=B7) + debt + [classic()])
    assert findings(night) == [] and first(night, met.RoundWon).by == "tie_debt"
    assert first_finding(edited(night, met.RoundWon, winner="a", loser="b")) == (
        "winner is 'a', but round 1's tie_debt went to 'b'")
    marked = met_throws("paper", "paper", given=roster(a=A6, b=B7) + [NoSheetMarked(character="a"), classic()])
    assert findings(marked) == [] and first(marked, met.RoundWon).by == "no_sheet"
    assert first_finding(edited(marked, met.RoundWon, by="tie_debt")) == (
        "by is 'tie_debt', but round 1 of c1 was decided by 'no_sheet'")


@pytest.mark.parametrize("kind, by, winner", [("simple", "simple_tie", "a"), ("complex", "complex_tie", "storyteller")])
def test_met_11_simple_and_complex_ties_are_checked(kind, by, winner):
    issued = met.ChallengeIssued(challenge="c1", kind=kind, initiator="a", defender="storyteller", tested="a")
    night = play(roster(a=A6) + [issued], (met.Throw(character="a", challenge="c1", round=1, choice="rock"), A, []),
                 (met.Throw(character="storyteller", challenge="c1", round=1, choice="rock"), STORYTELLER, []))
    assert findings(night) == []
    won = first(night, met.RoundWon)
    assert (won.by, won.winner) == (by, winner)
    assert first_finding(edited(night, met.RoundWon, winner=won.loser, loser=won.winner)).startswith(
        f"winner is {won.loser!r}, but round 1's {by} went to")


def test_met_5_a_loss_on_zero_traits_is_checked_against_the_sheets_held():
    given = roster(a=MetSheet(physical=0), b=MetSheet(physical=0), c=B7)
    night = play(given, (met.IssueChallenge(character="c", defender="a", attribute="physical"), player("c"), []))
    assert findings(night) == []
    assert first_finding(edited(night, met.RoundWon, winner="a", loser="c")) == (
        "c lost on zero traits, but holds 7 Physical traits (MET-5)")
    both = play(given, (met.IssueChallenge(character="a", defender="b", attribute="physical"), A, []))
    assert findings(both) == []
    assert first_finding(edited(both, met.RoundWon, winner="a", loser="b")) == (
        "loser is 'b', but the initiator 'a' holds 0 traits too and loses first (MET-5)")
    one = MetSheet(physical=1)
    fair = play(roster(a=one, b=MetSheet(physical=0)),
                (met.IssueChallenge(character="a", defender="b", attribute="physical"), A, []))
    assert findings(fair) == [] and first(fair, met.RoundWon).loser == "b"
    assert first_finding(edited(fair, met.RoundWon, winner="b", loser="a")) == (
        "a lost on zero traits, but holds 1 Physical traits (MET-5)")


def test_the_checker_judges_the_verdict_events_and_no_other():
    assert verdicts.Verdicts.judges(met.RoundWon(challenge="c1", round=1, winner="a", loser="b", by="throw"))
    assert not verdicts.Verdicts.judges(met.TieDebtPaid(debtor="a", creditor="b", challenge="c1"))
    assert verdicts.Verdicts().check(game.initial(), met.TieDebtPaid(debtor="a", creditor="b", challenge="c1")) is None


def test_v5_9_a_reroll_is_checked_against_its_roll_once_and_only_when_the_copy_holds_it():
    night = rerolled()
    assert first_finding(edited(night, v5.WillpowerRerolled, dice=(3,))) == "die 3 is not one of roll r1's 3 normal dice"
    without_roll = [e for e in night if not isinstance(e, v5.PoolRolled)]
    assert findings(without_roll) == []  # a viewer's copy without the roll: nothing to compare with
    twice = night + [msgspec.structs.replace(first(night, v5.WillpowerRerolled), before=(2,))]
    assert findings(twice) == []  # the roll is rerolled already: its dice are the reroll's


@pytest.mark.parametrize("face, choice", [(1, "rock"), (2, "paper"), (3, "scissors")])
def test_met_2_each_face_of_the_server_s_d3_is_its_throw(face, choice):
    night = play(roster(a=A6) + [static()],
                 (met.Throw(character="storyteller", challenge="c1", round=1), STORYTELLER, [face]))
    assert first(night, met.ThrowCommitted).choice == choice and findings(night) == []


def test_met_2_a_d3_face_off_the_die_is_named_and_a_reveal_names_both_sides():
    night = play(roster(a=A6) + [static()],
                 (met.Throw(character="storyteller", challenge="c1", round=1), STORYTELLER, [1]))
    zero = edited(night, met.ThrowCommitted, draws=(DrawRecord(counter=0, sides=3, face=0),))
    assert first_finding(zero) == "the drawn throw is 'rock', but its d3 shows 0 (None) (MET-2)"
    # a viewer's copy: the sealed throws are redacted, the reveal still names both sides
    seen = [e.redacted() if isinstance(e, met.ThrowCommitted) else e for e in met_throws("rock", "scissors")]
    assert findings(seen) == []
    assert first_finding(edited(seen, met.ThrowsRevealed, throws={"a": "rock"})) == (
        "the revealed throws {'a': 'rock'} are not a's and b's")


def test_met_5_an_antagonist_off_the_roster_holds_no_sheet_to_check():
    night = play(roster(a=MetSheet(physical=0)),
                 (met.IssueChallenge(character="Ghoul", defender="a", attribute="physical"), STORYTELLER, []))
    assert first(night, met.RoundWon).loser == "a" and findings(night) == []
    assert findings(edited(night, met.RoundWon, winner="a", loser="Ghoul")) == []  # its traits are not on record


# ---------------------------------------------------------------- verdicts the first tests leave unpinned


def test_v5_7_under_the_fifth_edition_s_rule_a_success_on_one_hunger_ten_verifies_as_not_messy():
    official = [v5.V5Configured(messy_rule="official")]
    night = play(official, (v5.RollPool(pool=3, hunger=1, difficulty=1), STORYTELLER, [6, 3, 10]))
    rolled = first(night, v5.PoolRolled)
    assert (rolled.success, rolled.critical, rolled.messy) == (True, False, False)
    assert findings(night) == []
    assert first_finding(edited(night, v5.PoolRolled, messy=True)) == "messy is True, but the dice give False (V5-2..V5-7)"


def test_v5_7_a_reroll_is_scored_under_the_chronicle_s_messy_rule():
    official = [v5.V5Configured(messy_rule="official")]
    night = play(official, (v5.RollPool(pool=3, hunger=1, difficulty=2), STORYTELLER, [2, 3, 10]),
                 (v5.WillpowerReroll(roll="r1", dice=(0,)), STORYTELLER, [7]))
    again = first(night, v5.WillpowerRerolled)
    assert (again.normal, again.success, again.critical, again.messy) == ((7, 3), True, False, False)
    assert findings(night) == []


def test_fair_1_a_reroll_s_new_faces_are_its_draws():
    forged = edited(rerolled(), v5.WillpowerRerolled, after=(8,))
    assert first_finding(forged) == "the dice (8,) are not the recorded draws (9,) (FAIR-1)"


def test_act_8_a_sacrifice_s_two_ps_are_counted_again():
    night = play(ACTION_ROSTER, (action.RollAction(character="sergei", characteristic="Carrure", difficulty=4,
                                                   option="sacrifice"), action_player("sergei"), [5, 8, 1, PLUS, BLANK]))
    rolled = first(night, action.ActionRolled)
    assert (rolled.net, rolled.ps_dice, rolled.ps, rolled.success) == (2, 2, 5, True)
    assert findings(night) == []
    assert first_finding(edited(night, action.ActionRolled, ps=3)) == (
        "ps is 3, but the dice give 5 (ACT-3, ACT-6, ACT-11)")


def test_act_9_a_cooperating_roll_s_plus_one_counts_in_its_net():
    night = play(ACTION_ROSTER, (action.RollAction(character="jake", characteristic="Motricité", difficulty=1,
                                                   cooperation="door"), action_player("jake"), [1, 1, 1, PLUS]))
    assert first(night, action.ActionRolled).net == 1 and findings(night) == []


def test_met_5_a_defender_resisting_with_another_attribute_is_checked_on_that_attribute():
    # c's Mental, resisted with a's Physical: c holds no Mental and loses at once
    given = roster(a=A6, c=MetSheet(physical=5, mental=0))
    night = play(given, (met.IssueChallenge(character="c", defender="a", attribute="mental",
                                            defender_attribute="physical"), C, []))
    won = first(night, met.RoundWon)
    assert (won.by, won.loser) == ("zero_traits", "c") and findings(night) == []
    assert first_finding(edited(night, met.RoundWon, winner="c", loser="a")) == (
        "a lost on zero traits, but holds 6 Physical traits (MET-5)")


def test_met_5_a_loss_on_zero_traits_in_a_challenge_never_issued_is_left_to_the_fold():
    forged = met.RoundWon(challenge="c9", round=1, winner="a", loser="b", by="zero_traits")
    assert verdicts.Verdicts().check(game.fold(roster(a=A6, b=B7)), forged) is None


def test_met_10_a_static_tie_sent_to_the_difficulty_is_checked_when_the_bid_is_sealed():
    given = roster(a=A6) + [static(difficulty=5)]
    night = play(given, (met.Throw(character="a", challenge="c1", round=1, choice="rock"), A, []),
                 (met.Throw(character="storyteller", challenge="c1", round=1, choice="rock"), STORYTELLER, []),
                 (met.DeclareBid(character="a", challenge="c1", round=1, value=5), A, []))
    sealed = edited(night, met.BidDeclared, value=None)  # a viewer's copy: the bid's value is not in it
    assert findings(sealed) == []
    assert first_finding(edited(sealed, met.RoundWon, by="bid")) == (
        "by is 'bid', but round 1 of c1 was decided by 'difficulty'")


def final_night():
    """a, with no retest to take, loses a static test on the throw: the result is final."""
    given = roster(a=MetSheet(physical=6)) + [static()]
    return play(given, (met.Throw(character="a", challenge="c1", round=1, choice="rock"), A, []),
                (met.Throw(character="storyteller", challenge="c1", round=1, choice="paper"), STORYTELLER, []))


@pytest.mark.parametrize("reason", ["final", "accepted", "timeout"])
def test_met_16_a_challenge_resolved_for_each_reason_names_the_result_that_stood(reason):
    if reason == "final":
        night, winner, loser = final_night(), "storyteller", "a"
    else:
        ending = (met.Accept(character="b", challenge="c1"), B, []) if reason == "accepted" else (
            met.CloseWindow(challenge="c1", timeout=True), STORYTELLER, [])
        night, winner, loser = play(met_throws("rock", "scissors"), ending), "a", "b"
    resolved = first(night, met.ChallengeResolved)
    assert (resolved.reason, resolved.winner) == (reason, winner) and findings(night) == []
    assert first_finding(edited(night, met.ChallengeResolved, winner=loser, loser=winner)) == (
        f"resolved for {loser!r} over {winner!r}, but the result stood for {winner!r} over {loser!r} (MET-16)")


# ---------------------------------------------------------------- MET group challenges


AGAINST_TWO = (met.IssueChallenge(character="a", defenders=("b", "c"), attribute="physical"), A, [])


def group_night(*steps) -> list:
    """a challenges b and c at once (pairs c1.1 and c1.2), then ``steps``."""
    return play(roster(a=A6, b=B7, c=B7), AGAINST_TWO, *steps)


def group_thrown() -> list:
    """a's rock beats b's scissors and loses to c's paper."""
    return group_night((met.Throw(character="a", challenge="c1", round=1, choice="rock"), A, []),
                       (met.Throw(character="b", challenge="c1", round=1, choice="scissors"), B, []),
                       (met.Throw(character="c", challenge="c1", round=1, choice="paper"), C, []))


def test_met_2_a_group_s_throws_revealed_once_all_are_in_verify():
    night = group_thrown()
    assert [e.challenge for e in night if isinstance(e, met.ThrowsRevealed)] == ["c1.1", "c1.2"]
    assert findings(night) == []


def test_met_2_a_group_s_reveal_moved_before_another_pair_s_last_throw_is_named():
    night = group_thrown()
    reveal = first(night, met.ThrowsRevealed)
    last_throw = next(e for e in night if isinstance(e, met.ThrowCommitted) and e.character == "c")
    rest = [e for e in night if e is not reveal]
    early = rest[:rest.index(last_throw)] + [reveal] + rest[rest.index(last_throw):]
    assert first_finding(early) == "throws revealed in c1.1 while c1.2 still waits for a throw (MET-2)"


def test_met_2_a_group_s_pair_that_ended_before_its_throws_holds_back_no_reveal():
    night = group_night((met.Concede(character="c", challenge="c1"), C, []),
                        (met.Throw(character="a", challenge="c1", round=1, choice="rock"), A, []),
                        (met.Throw(character="b", challenge="c1", round=1, choice="scissors"), B, []))
    assert first(night, met.ThrowsRevealed).challenge == "c1.1" and findings(night) == []


def test_met_16_a_settled_group_names_each_pair_s_winner():
    night = play(group_thrown(), (met.Accept(character="b", challenge="c1"), B, []),
                 (met.Accept(character="a", challenge="c1"), A, []))
    assert first(night, met.GroupSettled).results == {"b": "a", "c": "c"} and findings(night) == []
    assert first_finding(edited(night, met.GroupSettled, results={"b": "b", "c": "c"})) == (
        "results are {'b': 'b', 'c': 'c'}, but the pairs were won {'b': 'a', 'c': 'c'} (MET-16)")


def test_met_16_a_settled_group_names_no_winner_for_a_pair_cancelled_after_its_round():
    # a beats b, then the storyteller cancels that pair in its window: b's pair has no result
    night = play(group_thrown(), (met.CancelChallenge(challenge="c1.1", reason="b left"), STORYTELLER, []),
                 (met.Accept(character="a", challenge="c1"), A, []))
    assert first(night, met.GroupSettled).results == {"c": "c"} and findings(night) == []
    assert first_finding(edited(night, met.GroupSettled, results={"b": "a", "c": "c"})).startswith(
        "results are {'b': 'a', 'c': 'c'}, but the pairs were won {'c': 'c'}")
