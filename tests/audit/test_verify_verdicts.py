"""`conteur verify` derives every verdict again from its recorded inputs: a copy where only
a verdict was changed, and the whole hash chain recomputed after it as a forger would,
chains and draws fair; the verdict check alone catches it and names its seq. For a database and for an exported JSON Lines log.

The sessions come from `conteur simulate` (MET, V5 and action dice side by side, played
through the real command path and closed, so the fair-draw check runs too), with fixed
secrets so that the same night, with every way a round is won, is played each time."""

from __future__ import annotations

import json
import shutil
import sqlite3

import msgspec
import pytest

from conteur.events import verdicts
from conteur.events.met import IssueChallenge, Throw
from conteur.events.session import NoSheetMarked
from conteur.events.sheets import MetSheet
from conteur.events.testing import decide_after
from conteur.server.store.chain import GENESIS, Row, row_hash, row_to_line
from conteur.server.cli.main import main
from conteur.server.store.sqlite import SQLiteStore, decode_event
from conteur.server.audit.verify import verify_path
from tests.support.met_support import A6, B7, classic, findings, player, roster


@pytest.fixture(scope="module")
def played(tmp_path_factory):
    db = tmp_path_factory.mktemp("verdicts") / "played.db"
    assert main(["simulate", "--db", str(db), "--events", "1500", "--seed", "7", "--fixed-secrets"]) == 0
    with SQLiteStore(db) as store:
        return db, list(store.rows())


@pytest.fixture(scope="module")
def grouped(tmp_path_factory):
    """MET alone, some challenges one initiator against several defenders (MET-1)."""
    db = tmp_path_factory.mktemp("groups") / "groups.db"
    assert main(["simulate", "--db", str(db), "--events", "1500", "--seed", "3", "--ruleset", "met",
                 "--groups"]) == 0
    with SQLiteStore(db) as store:
        return db, list(store.rows())


def forge(rows: list[Row], index: int, data: bytes) -> list[Row]:
    """One row's data replaced and every hash of its session after it recomputed."""
    out = list(rows[:index])
    prev = {r.session: r.hash for r in out}
    for row in rows[index:]:
        body = data if row is rows[index] else row.data
        prev_hash = prev.get(row.session, GENESIS)
        digest = row_hash(prev_hash, row.seq, row.session, row.type, body, row.actor,
                          row.device, row.command_id, row.at)
        out.append(msgspec.structs.replace(row, data=body, prev_hash=prev_hash, hash=digest))
        prev[row.session] = digest
    return out


def write(source: str, db, rows: list[Row], tmp_path):
    """The forged rows as a database copy (triggers dropped to rewrite it) or a log."""
    if source == "log":
        path = tmp_path / "forged.jsonl"
        path.write_bytes(b"".join(row_to_line(r) + b"\n" for r in rows))
        return path
    path = tmp_path / "forged.db"
    shutil.copy(db, path)
    conn = sqlite3.connect(path)
    conn.executescript("DROP TRIGGER events_no_update; DROP TRIGGER events_no_delete;")
    conn.executemany("UPDATE events SET data=?, prev_hash=?, hash=? WHERE seq=?",
                     [(r.data, r.prev_hash, r.hash, r.seq) for r in rows])
    conn.commit()
    conn.close()
    return path


def first(rows, kind: str, when=lambda e: True) -> int:
    for i, row in enumerate(rows):
        if row.type == kind and when(json.loads(row.data)):
            return i
    raise AssertionError(f"the simulated session has no {kind} to tamper with")


def tampered(rows, index: int, change) -> bytes:
    event = json.loads(rows[index].data)
    change(event)
    return json.dumps(event, separators=(",", ":")).encode()


def flip(field):
    def change(event):
        event[field] = not event[field]
    return change


def swap_round_winner(event):
    event["winner"], event["loser"] = event["loser"], event["winner"]


def other_side(side_a, side_b):
    def change(event):
        event["winner"] = event[side_b] if event["winner"] == event[side_a] else event[side_a]
    return change


def move_last_normal_die_to_hunger(event):
    """The dice in the same order (the draws still match), one more counted as Hunger."""
    event["hunger"] = [event["normal"][-1]] + event["hunger"]
    event["normal"] = event["normal"][:-1]


def change_action_die(event):
    """A die's face changed in the event, its draw record left as drawn (the fair check
    recomputes the records, not the faces the event shows)."""
    event["dice"][0] = event["dice"][0] % event["sides"] + 1


TAMPERS = {
    "a flipped V5 success": ("v5.pool_rolled", lambda e: True, flip("success"), "success"),
    "a flipped V5 messy critical": ("v5.pool_rolled", lambda e: e["success"] and e["hunger"], flip("messy"),
                                    "messy"),
    "a flipped action success": ("action.rolled", lambda e: e["success"] is not None, flip("success"),
                                 "success"),
    "a flipped round winner": ("met.round_won", lambda e: e["by"] == "throw", swap_round_winner, "winner"),
    "a flipped round won by a tie debt": ("met.round_won", lambda e: e["by"] == "tie_debt", swap_round_winner,
                                          "winner"),
    "a round won by a tie debt said won by bid": ("met.round_won", lambda e: e["by"] == "tie_debt",
                                                 lambda e: e.update(by="bid"), "by"),
    "a round won by bid said won by a tie debt": ("met.round_won", lambda e: e["by"] == "bid",
                                                 lambda e: e.update(by="tie_debt"), "by"),
    "a flipped tie lost without the sheet at hand": ("met.round_won", lambda e: e["by"] == "no_sheet",
                                                     swap_round_winner, "winner"),
    "a flipped simple test's tie": ("met.round_won", lambda e: e["by"] == "simple_tie", swap_round_winner,
                                    "winner"),
    "a flipped complex test's tie": ("met.round_won", lambda e: e["by"] == "complex_tie", swap_round_winner,
                                     "winner"),
    "a flipped round won against a difficulty": ("met.round_won", lambda e: e["by"] == "difficulty",
                                                 swap_round_winner, "winner"),
    "a flipped round won by bid": ("met.round_won", lambda e: e["by"] == "bid", swap_round_winner, "winner"),
    "a flipped revealed winner": ("met.throws_revealed", lambda e: e["winner"] is not None,
                                  lambda e: e.update(winner=[s for s in e["throws"] if s != e["winner"]][0]),
                                  "winner"),
    "a flipped bids winner": ("met.bids_compared", lambda e: e["winner"] is not None,
                              lambda e: e.update(winner=None), "winner"),
    "a flipped contest winner": ("action.opposition_settled", lambda e: True,
                                 other_side("initiator", "defender"), "winner"),
    "a flipped overbid": ("met.overbid_settled", lambda e: True, flip("granted"), "granted"),
    "a moved die (V5, a normal die counted as Hunger)": (
        "v5.pool_rolled", lambda e: e["normal"] and e["kind"] == "normal", move_last_normal_die_to_hunger,
        "hunger dice"),
    "a moved die with its verdict made to match (V5, a normal 1 counted as Hunger)": (
        "v5.pool_rolled", lambda e: e["normal"] and e["normal"][-1] == 1 and not e["success"]
        and not e["bestial"], lambda e: (move_last_normal_die_to_hunger(e), e.update(bestial=True)),
        "hunger dice"),
    "a changed action die": ("action.rolled", lambda e: e["dice"][0] < e["threshold"] and e["sides"] >= e["threshold"],
                             change_action_die, "dice"),
}


def test_the_played_chronicle_verifies_with_its_verdicts(played):
    db, rows = played
    report = verify_path(db)
    assert report.ok, report.text()
    judged = sum(verdicts.Verdicts.judges(decode_event(r.data)) for r in rows)
    assert report.verdicts_checked == judged > 500
    assert "verdicts derived again" in report.text()


@pytest.mark.parametrize("source", ["database", "log"])
@pytest.mark.parametrize("name", sorted(TAMPERS))
def test_a_tampered_verdict_is_named_by_its_seq(played, tmp_path, capsys, source, name):
    db, rows = played
    kind, when, change, field = TAMPERS[name]
    index = first(rows, kind, when)
    forged = forge(rows, index, tampered(rows, index, change))
    path = write(source, db, forged, tmp_path)
    report = verify_path(path)
    # the chain holds and the draws are fair: only the verdict check sees the forgery
    assert report.first_break is None and report.bad_draw is None, report.text()
    assert report.bad_verdict is not None and report.bad_verdict.seq == rows[index].seq, report.text()
    assert field in report.bad_verdict.reason
    assert main(["verify", str(path)]) == 1
    out = capsys.readouterr().out
    assert f"verdict in seq {rows[index].seq}" in out, out


def test_a_played_night_of_group_challenges_verifies(grouped):
    db, rows = grouped
    assert any(r.type == "met.group_settled" for r in rows)
    report = verify_path(db)
    assert report.ok, report.text()


def test_met_2_a_group_reveal_before_every_throw_is_in_is_named():
    """A forger who moves a pair's reveal before the other pair's last throw: the checker
    sees a participant told a throw before committing its own."""
    from conteur.events import game, met
    from tests.support.met_support import A6, B7, roster

    given = roster(a=A6, b=B7, c=B7) + [
        met.GroupChallengeIssued(challenge="c1", initiator="a", defenders=("b", "c"), pairs=("c1.1", "c1.2"),
                                 attribute="physical"),
        met.ThrowCommitted(challenge="c1.1", round=1, character="a", choice="rock"),
        met.ThrowCommitted(challenge="c1.2", round=1, character="a", choice="rock"),
        met.ThrowCommitted(challenge="c1.1", round=1, character="b", choice="scissors"),
    ]
    early = met.ThrowsRevealed(challenge="c1.1", round=1, throws={"a": "rock", "b": "scissors"}, winner="a")
    reason = verdicts.Verdicts().check(game.fold(given), early)
    assert reason is not None and "c1.2" in reason and "MET-2" in reason
    in_time = given + [met.ThrowCommitted(challenge="c1.2", round=1, character="c", choice="paper")]
    assert verdicts.Verdicts().check(game.fold(in_time), early) is None


def swap_group_result(event):
    defender = sorted(event["results"])[0]
    event["results"][defender] = "someone else"


@pytest.mark.parametrize("source", ["database", "log"])
def test_a_tampered_group_result_is_named_by_its_seq(grouped, tmp_path, source):
    db, rows = grouped
    index = first(rows, "met.group_settled", lambda e: e["results"])
    forged = forge(rows, index, tampered(rows, index, swap_group_result))
    report = verify_path(write(source, db, forged, tmp_path))
    assert report.first_break is None and report.bad_draw is None, report.text()
    assert report.bad_verdict is not None and report.bad_verdict.seq == rows[index].seq, report.text()
    assert "results" in report.bad_verdict.reason


def test_the_checker_uses_the_deciders_functions():
    """No rule written twice: the checker's module calls the deciders' pure functions."""
    import inspect

    source = inspect.getsource(verdicts)
    for used in ("v5.score", "v5.rouse_after", "action.points", "action.net_modifier",
                 "action.opposed_winner", "action.ruled_winner", "rules.throw_winner",
                 "met.bids_winner", "rules.overbid_granted"):
        assert used in source, used


# -- verdicts the simulated night does not hold, decided by the rules and then edited --------


def decided(given, when, actor):
    return list(given) + decide_after(given, when, actor=actor)


ZERO = roster(a=MetSheet(physical=0), b=MetSheet(physical=0), c=MetSheet(physical=4))


@pytest.mark.parametrize("initiator, defender, loser", [("b", "c", "b"), ("c", "a", "a"), ("a", "b", "a")])
def test_met_5_a_round_lost_on_zero_traits_verifies(initiator, defender, loser):
    events = decided(ZERO, IssueChallenge(character=initiator, defender=defender, attribute="physical"), player(initiator))
    won = [e for e in events if type(e).__name__ == "RoundWon"]
    assert [(w.loser, w.by) for w in won] == [(loser, "zero_traits")]
    assert findings(events) == []


def test_met_5_a_zero_traits_loss_moved_to_a_side_with_traits_is_named():
    events = decided(ZERO, IssueChallenge(character="c", defender="a", attribute="physical"), player("c"))
    forged = [msgspec.structs.replace(e, winner="a", loser="c") if type(e).__name__ == "RoundWon" else e
              for e in events]
    (reason,) = findings(forged)[:1]
    assert "c lost on zero traits, but holds 4 Physical traits (MET-5)" == reason


def test_met_5_when_both_hold_zero_the_initiator_loses_and_an_edit_is_named():
    events = decided(ZERO, IssueChallenge(character="a", defender="b", attribute="physical"), player("a"))
    forged = [msgspec.structs.replace(e, winner="a", loser="b") if type(e).__name__ == "RoundWon" else e
              for e in events]
    assert findings(forged)[0].startswith("loser is 'b', but the initiator 'a' holds 0 traits")


def test_met_6_a_tie_lost_without_the_sheet_is_findings():
    given = roster(a=A6, b=B7) + [NoSheetMarked(character="b"), classic()]
    given = decided(given, Throw(character="a", challenge="c1", round=1, choice="rock"), player("a"))
    events = decided(given, Throw(character="b", challenge="c1", round=1, choice="rock"), player("b"))
    assert [(e.winner, e.by) for e in events if type(e).__name__ == "RoundWon"] == [("a", "no_sheet")]
    assert findings(events) == []
    swapped = [msgspec.structs.replace(e, winner="b", loser="a") if type(e).__name__ == "RoundWon" else e
               for e in events]
    assert findings(swapped)[0] == "winner is 'b', but round 1's no_sheet went to 'a'"
    relabelled = [msgspec.structs.replace(e, by="throw") if type(e).__name__ == "RoundWon" else e
                  for e in events]
    assert findings(relabelled)[0] == "by is 'throw', but round 1 of c1 was decided by 'no_sheet'"
