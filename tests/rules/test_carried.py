"""MET-13 "sans limite de temps": a tie debt made by a failed overbid in
one session is carried into the next session of the chronicle, however that session is
opened: a roster import, ``POST /sessions`` or the ``open_session`` command. A real server."""

from __future__ import annotations

import httpx
import pytest

from conteur.server.testing import Device, Venue
from tests.support.carried_support import debts, failed_overbid, roster, run


@pytest.fixture
def venue(tmp_path):
    with Venue(tmp_path / "chronicle.db") as v:
        yield v


@pytest.fixture
def storyteller(venue):
    token = venue.token()
    with httpx.Client(base_url=venue.url, headers={"Authorization": f"Bearer {token}"}, timeout=10) as http:
        http.token = token
        yield http


async def open_with_command(venue, http, session: str) -> None:
    async with Device(venue.ws_url, http.token, session) as tablet:
        assert (await tablet.command({"type": "open_session", "name": "second night"}))["type"] == "ack"


@pytest.mark.parametrize("way", ["roster", "post_sessions", "open_session"])
async def test_a_tie_debt_is_carried_into_the_next_session_whichever_way_it_opens(venue, storyteller, way):
    http = storyteller
    failed_overbid(http, "night-1")
    if way == "roster":
        assert http.post("/sessions/night-2/roster", json=roster()).status_code == 200
    elif way == "post_sessions":
        assert http.post("/sessions", json={"session": "night-2"}).json()["type"] == "ack"
    else:
        await open_with_command(venue, http, "night-2")
    opened = http.get("/sessions/night-2/events").json()[0]["event"]
    assert opened["type"] == "session.opened"
    assert opened["carried"] == {"tie_debts": [{"debtor": "bruno", "creditor": "anna", "challenge": "c1"}]}
    assert debts(http, "night-2") == [{"debtor": "bruno", "creditor": "anna", "challenge": "c1"}]


async def test_the_debt_is_paid_by_the_next_tie_and_not_carried_again(venue, storyteller):
    http = storyteller
    failed_overbid(http, "night-1")
    assert http.post("/sessions/night-2/roster", json=roster()).status_code == 200
    for step in [
        {"type": "challenge", "character": "bruno", "defender": "anna", "attribute": "physical"},
        {"type": "throw", "character": "bruno", "challenge": "c1", "round": 1, "choice": "paper"},
        {"type": "throw", "character": "anna", "challenge": "c1", "round": 1, "choice": "paper"},
    ]:
        assert run(http, "night-2", step)["type"] == "ack"
    won = [e["event"] for e in http.get("/sessions/night-2/events").json() if e["event"]["type"] == "met.round_won"]
    assert won[-1]["winner"] == "anna" and won[-1]["by"] == "tie_debt"
    assert debts(http, "night-2") == []
    assert http.post("/sessions", json={"session": "night-3"}).json()["type"] == "ack"
    assert debts(http, "night-3") == []


def test_another_chronicle_in_the_same_database_inherits_nothing(venue, storyteller):
    http = storyteller
    failed_overbid(http, "night-1")
    assert http.post("/sessions", json={"session": "other-1", "chronicle": "Sabbat"}).json()["type"] == "ack"
    assert debts(http, "other-1") == []
    assert http.post("/sessions/other-2/roster", json=roster("Sabbat")).status_code == 200
    assert debts(http, "other-2") == []
