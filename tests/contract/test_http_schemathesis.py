"""Schemathesis over /schema/openapi.json, against the app in process (its ASGI transport,
the app's own lifespan and a real SQLite chronicle), as a third-party integrator runs it:
every operation through the examples, coverage and fuzzing phases, then the stateful phase
chaining the operations by the links Schemathesis infers, each with a storyteller's, a
player's and an observer's token, and every check on (server errors, status codes,
content types, bodies and headers as documented, schema-violating requests refused and
schema-valid ones accepted, the Allow header, requests without the token refused). Any
failure fails the test. Seeded: a failure found once is found again.

Its cost is bounded by the examples per operation (``CONTEUR_EXAMPLES`` scales them for
a thorough run before a release) and the stateful phase's scenarios and steps."""

from __future__ import annotations

import collections
import copy
import os
import shutil
import tempfile
from pathlib import Path

import hypothesis
import msgspec
import pytest
import schemathesis
from schemathesis.config import SchemathesisConfig
from schemathesis.python import asgi

from conteur.server.web.app import create_app
from tests.support.examples import examples

SEED = 20261203
ROLES = ("storyteller", "player", "observer")
# the storyteller reaches every operation; a player's and an observer's are mostly 403s,
# which the coverage phase reaches anyway: fewer generated examples for them
EXAMPLES = {"storyteller": examples(6), "player": examples(2), "observer": examples(2)}
STATEFUL = {"storyteller": examples(8), "player": examples(3), "observer": examples(3)}
STEPS = 12

# Schemathesis's pytest integration reads the schema when the module is collected; the
# app's chronicle is made (and removed) by the fixture, so collecting writes nothing
FOLDER = Path(tempfile.gettempdir()) / f"conteur-schemathesis-{os.getpid()}"
APP = create_app(FOLDER / "chronicle.db", web_dir=None)
DESCRIPTION = msgspec.json.decode(msgspec.json.encode(APP.openapi_schema.to_schema()))
TOKENS: dict[str, str] = {}
CALLS: collections.Counter = collections.Counter()  # (role, phase, operation) -> requests


def load(role: str):
    # the coverage phase enumerates the commands body's every command and every boundary of
    # its fields, about 2,300 requests, two thirds of the whole run: the storyteller's once
    # (the body is decoded the same for every role; the rules answer a player's with a
    # documented 200 reject), and the player's and observer's commands by examples and fuzzing
    operations = [] if role == "storyteller" else [
        {"include-path": "/sessions/{session}/commands", "phases": {"coverage": {"enabled": False}}}]
    # a copy: Schemathesis adds the links it infers to the description it is given
    loaded = schemathesis.openapi.from_dict(copy.deepcopy(DESCRIPTION), config=SchemathesisConfig.from_dict({
        "seed": SEED,
        "generation": {"max-examples": EXAMPLES[role], "database": "none"},
        "phases": {"stateful": {"max-steps": STEPS}},
        "checks": {"enabled": True},
        "operations": operations,
    }))
    loaded.app = APP  # called through the ASGI transport, in process
    loaded.location = "/schema/openapi.json"
    return loaded


SCHEMAS = {role: load(role) for role in ROLES}


@pytest.fixture(scope="module", autouse=True)
def venue():
    """The app's lifespan started on a fresh chronicle, with a session that has a
    character, and a token per role (the player's for that character, the observer's
    for that session)."""
    FOLDER.mkdir(exist_ok=True)
    try:
        with asgi.get_client(APP) as client:
            tokens = APP.state.conteur.tokens
            storyteller = tokens.issue("storyteller", name="storyteller")
            auth = {"Authorization": f"Bearer {storyteller}"}
            assert client.post("/sessions", json={"session": "night"}, headers=auth).json()["type"] == "ack"
            imported = client.post("/sessions/night/roster", headers=auth, json={"characters": [
                {"id": "anna", "name": "Anna", "sheet": {"physical": 6}}]}).json()
            TOKENS.update(storyteller=storyteller, player=imported["players"][0]["token"],
                          observer=imported["observer"])
            yield client
    finally:
        asgi.shutdown_lifespans()  # the store closed, then its folder removed
        shutil.rmtree(FOLDER, ignore_errors=True)


def operations_test(role: str):
    @SCHEMAS[role].parametrize()
    def test(case):
        CALLS[role, "examples, coverage, fuzzing", case.operation.label] += 1
        case.call_and_validate(headers={"Authorization": f"Bearer {TOKENS[role]}"})
    return test


test_operations_as_storyteller = operations_test("storyteller")
test_operations_as_player = operations_test("player")
test_operations_as_observer = operations_test("observer")


@pytest.mark.parametrize("role", ROLES)
def test_sequences_of_operations_conform(role):
    """The stateful phase: scenarios of calls, each answer feeding the next (a session
    opened, then its events, its state, its export...), every answer checked."""

    class Machine(SCHEMAS[role].as_state_machine()):
        def get_call_kwargs(self, case):
            CALLS[role, "stateful", case.operation.label] += 1
            return {"headers": {"Authorization": f"Bearer {TOKENS[role]}"}}

        def validate_response(self, response, case, additional_checks=None, **kwargs):
            case.validate_response(response, additional_checks=additional_checks, transport_kwargs=kwargs)

    Machine.run(settings=hypothesis.settings(
        max_examples=STATEFUL[role], stateful_step_count=STEPS, deadline=None, database=None,
        derandomize=True, suppress_health_check=list(hypothesis.HealthCheck)))


def test_the_description_tested_is_the_one_served(venue):
    assert venue.get("/schema/openapi.json").json() == DESCRIPTION


def test_every_operation_was_called_with_every_token():
    """After the runs above (this module's tests run in order): none of the description's
    operations went untried by a role, and the stateful phase made sequences of calls."""
    if not CALLS:
        pytest.skip("it counts what the module's other tests called: run it after them")
    operations = {f"{method.upper()} {path}" for path, item in DESCRIPTION["paths"].items() for method in item}
    for role in ROLES:
        called = {op for (r, phase, op) in CALLS if r == role and phase != "stateful"}
        assert called == operations, (role, sorted(operations - called))
        assert sum(n for (r, phase, _), n in CALLS.items() if r == role and phase == "stateful") > STATEFUL[role]
    by_phase = collections.Counter()
    for (role, phase, _), n in CALLS.items():
        by_phase[role, phase] += n
    print(f"\nschemathesis: {len(operations)} operations, {sum(CALLS.values())} requests: "
          + ", ".join(f"{role} {phase} {n}" for (role, phase), n in sorted(by_phase.items())))
