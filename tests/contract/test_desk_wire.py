"""docs/protocol.md gives each command of the storyteller's desk (events/desk.py) and of the
venue-wide Time Out a JSON Schema: it must be the one the code's types make."""

from __future__ import annotations

import json

import pytest

from conteur.events import desk, session
from tests.support.protocol_doc_support import COMMANDS, SCHEMA, schema_of

@pytest.mark.parametrize("kind", desk.COMMANDS, ids=lambda k: k.__struct_config__.tag)
def test_each_desk_commands_schema_in_the_doc_is_the_codes(kind):
    (documented,) = SCHEMA.findall(COMMANDS[kind.__struct_config__.tag])
    assert json.loads(documented) == schema_of(kind)


@pytest.mark.parametrize("kind", [session.Freeze, session.Resume], ids=lambda k: k.__struct_config__.tag)
def test_the_time_out_schemas_name_the_venue_scope(kind):
    (documented,) = SCHEMA.findall(COMMANDS[kind.__struct_config__.tag])
    expected = schema_of(kind)
    assert json.loads(documented)["properties"] == expected["properties"]
