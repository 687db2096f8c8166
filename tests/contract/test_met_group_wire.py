"""docs/protocol.md gives the group challenge's command and events a JSON Schema (under
`challenge`): it must be the one the code's types make; and the wire takes a group
challenge as the phones send it."""

from __future__ import annotations

import json

from conteur.events import met, wire
from tests.support.protocol_doc_support import COMMANDS
from tests.support.protocol_doc_support import SCHEMA, schema_of


def test_the_challenge_and_group_event_schemas_in_the_doc_are_the_codes():
    documented = [json.loads(found) for found in SCHEMA.findall(COMMANDS["challenge"])]
    made = [json.loads(json.dumps(schema_of(kind)))  # a tuple default is a JSON list
            for kind in (met.IssueChallenge, met.GroupChallengeIssued, met.GroupSettled)]
    assert documented == made


def test_a_phones_group_challenge_decodes_and_one_without_defenders_is_as_before():
    frame = {"type": "command", "id": "x1", "command": {"type": "challenge", "character": "anna",
                                                           "attribute": "physical", "defenders": ["bruno", "clara"]}}
    decoded = wire.decode(json.dumps(frame))
    assert decoded.command.defenders == ("bruno", "clara") and decoded.command.defender is None
    old = {**frame, "command": {"type": "challenge", "character": "anna", "attribute": "physical", "defender": "bruno"}}
    assert wire.decode(json.dumps(old)).command.defenders == ()
