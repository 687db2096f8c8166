"""A group challenge in the night's record: the review tells it as one challenge (its
pairs' stories inside), the Markdown export has one line for it, in English and French, and
a defender's export keeps the others' bids sealed (MET-3)."""

from __future__ import annotations

import msgspec
import pytest

from conteur.events.model import Actor
from conteur.server.audit import export as ex
from conteur.server.audit import review as rv
from conteur.server.audit import stories
from conteur.server.audit.verify import verify_path
from conteur.server.core.service import Chronicle
from conteur.server.store.sqlite import SQLiteStore
from tests.support.group_support import closed_group_night, play_group

SID = "brawl"
BRUNO = Actor(role="player", character="bruno", name="bruno")


@pytest.fixture(scope="module")
def night(tmp_path_factory):
    return closed_group_night(tmp_path_factory.mktemp("group") / "group.db", SID, play_group)


def test_the_review_tells_the_group_as_one_challenge(night):
    with SQLiteStore(night) as store:
        review = rv.build(store, SID)
    story = stories.challenge_story(review, "c1")
    assert story.sides == ["anna", "bruno", "clara", "dora"] and story.status == "resolved"
    assert story.sentence.startswith("Anna challenged Bruno, Clara, Dora together (Physical): against Bruno: ")
    assert "against Clara: tie, bids 10 to 5, Anna won, Clara retested (Athletics)" in story.sentence
    assert "against Dora: paper beat rock, Dora won, Anna overbid (10 to 4) and won a retest" in story.sentence
    assert story.results == {"bruno": "anna", "clara": "anna", "dora": "anna"}
    steps = [s.type for s in story.steps]  # the pairs' steps too, in log order
    assert steps[0] == "met.group_challenge_issued" and steps[-1] == "met.group_settled"
    assert steps.count("met.throws_revealed") == 5 and steps.count("met.retest_taken") == 1
    pair = stories.challenge_story(review, "c1.2")  # each pair keeps a page of its own
    assert pair.winner == "anna" and pair.loser == "clara"


def test_the_markdown_record_has_one_line_for_the_group(night):
    with SQLiteStore(night) as store:
        md = ex.export(store, SID, "md").decode()
        fr = ex.export(store, SID, "md", lang="fr").decode()
    lines = [line for line in md.splitlines() if "**c1" in line]
    assert len(lines) == 1, lines
    assert "Anna challenged Bruno, Clara, Dora together (Physical)" in lines[0]
    assert "Bruno overbid (5 to 10) and lost" in lines[0]
    assert "Anna a défié ensemble Bruno, Clara, Dora (Physique) : contre Bruno : " in fr


def test_a_defenders_record_keeps_the_others_bids_sealed(night):
    with SQLiteStore(night) as store:
        md = ex.export(store, SID, "md", viewer=BRUNO).decode()
    [line] = [line for line in md.splitlines() if "**c1" in line]
    assert "Bruno overbid (5 to (sealed)) and lost" in line  # his own score, not Anna's answer
    assert "bids (sealed) to (sealed)" in line and "10 to 5" not in line


def test_the_jsonl_export_of_a_group_verifies(night, tmp_path):
    with SQLiteStore(night) as store:
        (tmp_path / "group.jsonl").write_bytes(ex.export(store, SID, "jsonl"))
    report = verify_path(tmp_path / "group.jsonl")
    assert report.ok and report.verdicts_checked > 0, report.text()


def test_a_finished_group_is_compressed_and_read_back_with_its_pairs(night):
    """A night's finished challenges leave memory by pages (server/core/pages.py): a
    group's record and its pairs ("c1.2") are one page, compressed and read back whole."""
    from conteur.events import met
    from conteur.server.core import pages

    with SQLiteStore(night) as store:
        state = Chronicle(store).state(SID)
    ahead = msgspec.structs.replace(state, met=msgspec.structs.replace(state.met, counter=met.PAGE + 1))
    compressed = pages.compressed(ahead)  # the next issued is on page 1: page 0 is final
    assert type(compressed.met.done[0]) is pages.Page
    assert compressed.met.get("c1.3") == state.met.get("c1.3") is not None  # the pair's page is its group's
    assert compressed.met.challenges == state.met.challenges
    assert pages.whole(compressed).met == ahead.met
