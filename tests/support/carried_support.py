"""A MET-13 tie debt made over HTTP, for the tests that carry it into another session
(tests/rules/test_carried.py, in one chronicle; tests/cli/test_import.py, across venues)."""

from __future__ import annotations

import itertools

import httpx

SHEETS = {"anna": {"physical": 6, "social": 3, "mental": 4}, "bruno": {"physical": 7, "social": 5, "mental": 5}}
_ids = itertools.count(1)


def roster(chronicle: str = "") -> dict:
    options = {"chronicle": chronicle} if chronicle else {}
    return {"name": "Elysium", "options": options, "scenes": [{"id": "hall"}],
            "characters": [{"id": c, "name": c.title(), "scene": "hall", "sheet": s} for c, s in SHEETS.items()]}


def run(http: httpx.Client, session: str, command: dict) -> dict:
    answer = http.post(f"/sessions/{session}/commands", json={"id": f"cmd-{next(_ids)}", "command": command})
    assert answer.status_code == 200, answer.text
    return answer.json()


def debts(http: httpx.Client, session: str) -> list[dict]:
    return http.get(f"/sessions/{session}/state").json()["met"]["debts"]


def failed_overbid(http: httpx.Client, session: str) -> None:
    """Bruno loses on the throw, overbids 7 against Anna's 6: short of 4 above, he owes Anna
    his next tie (MET-13)."""
    assert http.post(f"/sessions/{session}/roster", json=roster()).status_code == 200
    steps = [
        {"type": "challenge", "character": "anna", "defender": "bruno", "attribute": "physical"},
        {"type": "throw", "character": "anna", "challenge": "c1", "round": 1, "choice": "rock"},
        {"type": "throw", "character": "bruno", "challenge": "c1", "round": 1, "choice": "scissors"},
        {"type": "overbid", "character": "bruno", "challenge": "c1", "value": 7},
        {"type": "bid", "character": "anna", "challenge": "c1", "round": 1, "value": 6},
    ]
    for step in steps:
        assert run(http, session, step)["type"] == "ack", step
    assert debts(http, session) == [{"debtor": "bruno", "creditor": "anna", "challenge": "c1"}]
    assert http.post(f"/sessions/{session}/close").json()["type"] == "ack"
