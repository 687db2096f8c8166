"""A storyteller credential is bound to its sessions: a storyteller token minted for one
session opens no other (``POST /sessions`` needs the chronicle owner's token, the one of
every session), and a roster imported into a session someone already opened says which
of its options the session holds otherwise, instead of keeping the squatter's in silence.
"""

from __future__ import annotations

import httpx
import msgspec
import pytest

from conteur.server.core.roster import Imported, format_imported
from conteur.server.testing import Venue


@pytest.fixture(scope="module")
def venue(tmp_path_factory):
    with Venue(tmp_path_factory.mktemp("scope") / "chronicle.db") as v:
        yield v


def client(venue: Venue, token: str) -> httpx.Client:
    return httpx.Client(base_url=venue.url, headers={"Authorization": f"Bearer {token}"})


def test_a_storyteller_token_of_one_session_opens_no_other(venue):
    owner = client(venue, venue.token())
    assert owner.post("/sessions", json={"session": "s1"}).json()["type"] == "ack"
    minted = owner.post("/sessions/s1/tokens", json={"role": "storyteller", "name": "guest"}).json()
    assert minted["session"] == "s1"
    guest = client(venue, minted["token"])
    refused = guest.post("/sessions", json={"session": "s2"})
    assert refused.status_code == 403 and "owner" in refused.json()["detail"], refused.text
    assert "s2" not in venue.runtime.store.sessions()
    # its own session is its own: the command path answers (already open)
    again = guest.post("/sessions", json={"session": "s1"})
    assert again.status_code == 200 and again.json()["type"] == "reject", again.text
    assert guest.get("/sessions/s3/state").status_code == 403
    # the owner still opens any
    assert owner.post("/sessions", json={"session": "s2"}).json()["type"] == "ack"


def test_a_roster_import_says_which_options_the_open_session_holds_otherwise(venue):
    owner = client(venue, venue.token())
    squat = owner.post("/sessions", json={"session": "night", "name": "Squatted", "bomb": True,
                                          "turn_seconds": 9})
    assert squat.json()["type"] == "ack"
    roster = {"name": "Elysium", "options": {"bomb": False, "turn_seconds": 9, "accept_timeout": 60},
              "characters": [{"id": "anna", "name": "Anna"}]}
    imported = owner.post("/sessions/night/roster", json=roster).json()
    differs = imported["differs"]
    assert len(differs) == 2, differs
    assert any(d.startswith("bomb: the session has True, the roster says False") for d in differs)
    assert any(d.startswith("name: the session has 'Squatted'") for d in differs)
    assert "kept as the open session has it: bomb" in format_imported(msgspec.convert(imported, Imported), "http://x")
    # a roster that agrees says nothing
    agreeing = {"name": "Squatted", "options": {"bomb": True, "turn_seconds": 9}, "characters": []}
    assert owner.post("/sessions/night/roster", json=agreeing).json()["differs"] == []

