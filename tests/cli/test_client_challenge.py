"""``conteur client challenge``: a challenge from a terminal, one ``--defender`` or several
(a group challenge, MET-1), against a real server on loopback."""

from __future__ import annotations

import pytest

from conteur.client.cli import main, parser
from tests.support.client_support import events_of_type


def joined(server, token: str, tmp_path, name: str) -> str:
    state = str(tmp_path / f"{name}.sqlite")
    assert main(["join", f"{server.url}/#join={token}", "--state", state]) == 0
    return state


def test_the_help_says_how_to_challenge_several(capsys):
    with pytest.raises(SystemExit):
        parser().parse_args(["challenge", "--help"])
    text = " ".join(capsys.readouterr().out.split())
    assert "Repeat --defender for a group challenge" in text and "at most 8 (MET-1)" in text
    assert "repeat it to challenge several at once" in text


def test_a_storyteller_challenges_several_characters_for_an_antagonist(server, setup, tmp_path, capsys):
    state = joined(server, setup.storyteller, tmp_path, "st")
    capsys.readouterr()
    assert main(["challenge", "--as", "Ghoul", "--defender", "anna", "--defender", "bruno",
                 "--attribute", "physical", "--ability", "Brawl", "--state", state]) == 0
    assert capsys.readouterr().out.startswith("ack ")
    [issued] = events_of_type(setup.db, "met.group_challenge_issued")
    assert (issued["initiator"], issued["defenders"], issued["pairs"], issued["abilities"]) == \
        ("Ghoul", ["anna", "bruno"], ["c1.1", "c1.2"], ["Brawl"])
    # a trap tested on both against one difficulty: a static group (MET-10)
    assert main(["challenge", "--as", "storyteller", "--kind", "static", "--difficulty", "4",
                 "--defender", "anna", "--defender", "bruno", "--attribute", "mental", "--state", state]) == 0
    static = events_of_type(setup.db, "met.group_challenge_issued")[1]
    assert (static["kind"], static["difficulty"], static["defenders"]) == ("static", 4, ["anna", "bruno"])


def test_one_defender_is_the_challenge_of_two_the_initiator_the_tokens_own(server, setup, tmp_path, capsys):
    state = joined(server, setup.players["anna"], tmp_path, "anna")
    assert main(["challenge", "--defender", "bruno", "--attribute", "social", "--state", state]) == 0
    [issued] = events_of_type(setup.db, "met.challenge_issued")
    assert (issued["initiator"], issued["defender"], issued["kind"]) == ("anna", "bruno", "classic")
    assert events_of_type(setup.db, "met.group_challenge_issued") == []


def test_more_defenders_than_the_limit_are_refused_naming_the_field(server, setup, tmp_path, capsys):
    state = joined(server, setup.storyteller, tmp_path, "st")
    capsys.readouterr()
    nine = [arg for i in range(9) for arg in ("--defender", f"c{i}")]
    assert main(["challenge", "--as", "Ghoul", *nine, "--attribute", "physical", "--state", state]) == 1
    assert "defenders: at most 8 in one group challenge, not 9" in capsys.readouterr().out
    # eight is the limit: a storyteller's antagonist against eight others (off the roster too)
    eight = [arg for i in range(8) for arg in ("--defender", f"c{i}")]
    assert main(["challenge", "--as", "Ghoul", *eight, "--attribute", "physical", "--state", state]) == 0
    [issued] = events_of_type(setup.db, "met.group_challenge_issued")
    assert len(issued["defenders"]) == 8


def test_a_token_without_a_character_must_name_the_initiator(server, setup, tmp_path, capsys):
    state = joined(server, setup.storyteller, tmp_path, "st")
    assert main(["challenge", "--defender", "anna", "--attribute", "physical", "--state", state]) == 2
    assert "--as: this token plays no character" in capsys.readouterr().err
