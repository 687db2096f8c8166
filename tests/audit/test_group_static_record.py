"""A storyteller's static test of several characters (MET-10, a static group) in the
record: the Markdown export tells it as one test against its difficulty, ``verify`` derives each pair's verdicts again against the group's difficulty
(events/verdicts.py, through the state the evolvers fold), an export of it verifies, and
a group event from before static groups (no ``kind``, ``difficulty`` or ``tests``) still
folds as a classic group."""

from __future__ import annotations

import json

import msgspec
import pytest

from conteur.events import game, met
from conteur.events.wire import decode_event
from conteur.server.audit import export as ex
from conteur.server.audit.verify import verify_path
from conteur.server.core.service import Chronicle
from conteur.server.store.sqlite import SQLiteStore
from tests.support.group_support import closed_group_night, play_static_group
from tests.support.met_support import ISSUED, ROUND_1, TWO, C, findings
from conteur.events.testing import decide_after

SID = "trap"


def at_difficulty() -> list:
    """The tied pair c1.2: Clara declares 5, at the difficulty: the trap wins it."""
    return ROUND_1 + decide_after(ROUND_1, met.DeclareBid(character="c", challenge="c1", round=1, value=5), actor=C)


def test_met_10_an_honest_static_group_verifies():
    assert findings(at_difficulty()) == []


def test_met_10_a_pair_won_at_the_difficulty_edited_to_the_tested_is_named():
    events = at_difficulty()
    forged = [msgspec.structs.replace(e, winner="c") if isinstance(e, met.BidsCompared) else e for e in events]
    [first, *_] = findings(forged)
    assert "winner is 'c'" in first and "MET-10" in first


def test_met_10_a_static_groups_round_won_by_bid_is_named():
    """A round the difficulty decided, recorded as won on bids (the classic way)."""
    events = [msgspec.structs.replace(e, by="bid") if isinstance(e, met.RoundWon) and e.challenge == "c1.2" else e
              for e in at_difficulty()]
    assert any("decided by 'difficulty'" in f for f in findings(events))


def test_a_group_event_from_before_static_groups_folds_as_a_classic_group():
    old = {"type": "met.group_challenge_issued", "challenge": "c1", "initiator": "Ghoul", "defenders": ["b", "c"],
           "pairs": ["c1.1", "c1.2"], "attribute": "physical"}
    event = decode_event(json.loads(json.dumps(old)))
    state = game.fold(TWO + [event])
    pairs = [state.met.get(p) for p in ("c1.1", "c1.2")]
    assert [(p.kind, p.tested, p.difficulty, p.tests) for p in pairs] == [("classic", None, 0, 1)] * 2
    assert ISSUED.kind == "static"  # the new field is what makes a static group


@pytest.fixture(scope="module")
def night(tmp_path_factory):
    return closed_group_night(tmp_path_factory.mktemp("trap") / "trap.db", SID, play_static_group)


def test_the_static_group_is_settled_in_the_record_and_its_export_verifies(night, tmp_path):
    with SQLiteStore(night) as store:
        state = Chronicle(store).state(SID)
        (tmp_path / "trap.jsonl").write_bytes(ex.export(store, SID, "jsonl"))
        md = ex.export(store, SID, "md").decode()
    [line] = [line for line in md.splitlines() if "**c1" in line]
    assert "trap put Bruno, Clara, Dora to a static Physical test together, difficulty 5" in line
    assert "against Clara: tie, declared 6 against 5, Clara won" in line
    group = state.met.get("c1")
    assert (group.status, group.results) == ("resolved", {"bruno": "trap", "clara": "clara", "dora": "dora"})
    report = verify_path(tmp_path / "trap.jsonl")
    assert report.ok and report.verdicts_checked > 0, report.text()
