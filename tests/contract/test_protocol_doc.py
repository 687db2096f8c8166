"""docs/protocol.md is the authority on the wire: it must name every command and frame the
code knows, and every JSON example in it must decode with the server's own decoders."""

from __future__ import annotations

import re
from pathlib import Path

import msgspec
import pytest

from conteur.events import game
from conteur.events import wire

from tests.support.protocol_doc_support import COMMANDS, DOC, FRAMES, TEXT, example, sections  # noqa: F401

TAGS = sorted(game.COMMAND_BY_TAG)


def test_every_command_of_the_code_is_documented():
    missing = [tag for tag in TAGS if tag not in COMMANDS]
    assert not missing, f"commands missing from docs/protocol.md: {missing}"


def test_the_doc_names_no_command_the_code_lacks():
    stale = sorted(set(COMMANDS) - set(TAGS))
    assert not stale, f"docs/protocol.md documents unknown commands: {stale}"


@pytest.mark.parametrize("tag", TAGS)
def test_each_command_example_decodes_as_that_command(tag):
    command = msgspec.json.decode(example(COMMANDS[tag]), type=game.AnyCommand)
    assert command.__struct_config__.tag == tag
    wrapped = b'{"type": "command", "id": "x", "command": ' + example(COMMANDS[tag]) + b"}"
    assert wire.decode(wrapped).command == command


@pytest.mark.parametrize("tag", wire.CLIENT_TAGS)
def test_each_client_frame_is_documented_and_its_examples_decode(tag):
    examples = re.findall(r"```json\n(.*?)\n```", FRAMES[tag], re.S)
    assert examples, "no ```json example"
    for text in examples:
        assert wire.decode(text.encode()).__struct_config__.tag == tag


@pytest.mark.parametrize("tag", wire.SERVER_TAGS)
def test_each_server_frame_is_documented_with_its_example(tag):
    raw = msgspec.json.decode(example(FRAMES[tag]))
    assert raw["type"] == tag
    if tag == "batch":
        inner = [f["type"] for f in raw["frames"]]
        assert inner and set(inner) <= set(wire.SERVER_TAGS) - {"batch"}
    elif tag == "event":
        event = msgspec.json.decode(msgspec.json.encode(raw["event"]), type=game.AnyEvent)
        assert wire.encode_event(raw["seq"], event) == msgspec.json.encode(raw).decode()
    else:
        kind = next(t for t in wire.ServerFrame.__args__ if t.__struct_config__.tag == tag)
        assert msgspec.json.decode(example(FRAMES[tag]), type=kind)


def test_every_error_code_the_server_sends_is_in_the_table():
    root = Path(__file__).resolve().parents[2]
    source = "".join(p.read_text() for d in ("server", "events") for p in (root / d).rglob("*.py"))
    sent = set(re.findall(r'Error\(\s*code="([a-z_]+)"', source))
    sent |= set(re.findall(r'FrameError\("([a-z_]+)"', source))
    table = set(re.findall(r"^\| `([a-z_]+)` \|", TEXT, re.M))
    assert sent and sent <= table, f"undocumented error codes: {sorted(sent - table)}"


def test_every_http_route_of_the_app_is_in_the_http_table():
    """The OpenAPI schema lists what the server answers; protocol.md must name each
    (method, path) in its HTTP table, query strings aside."""
    from conteur.server.web.app import create_app

    schema = create_app(":memory:", web_dir=None).openapi_schema
    routes = {(method.upper(), path) for path, item in schema.paths.items()
              for method in ("get", "post", "put", "patch", "delete") if getattr(item, method, None)}
    documented = set(re.findall(r"^\| `(GET|POST|PUT|PATCH|DELETE) (/[^`?\s]*)", TEXT, re.M))
    missing = sorted(routes - documented)
    assert routes and not missing, f"HTTP routes missing from docs/protocol.md: {missing}"
    stale = sorted(documented - routes)
    assert not stale, f"docs/protocol.md documents routes the app lacks: {stale}"


# -- every example, not only each section's first ---------------------

DOCS = [DOC, DOC.parent / "rules-choices.md"]
EXAMPLES = [(doc.name, text) for doc in DOCS
            for text in re.findall(r"```json\n(.*?)\n```", doc.read_text(encoding="utf-8"), re.S)]


def decoded_parts(raw: dict) -> list[tuple[dict, object]]:
    """(the JSON shown, what the server's own decoder made of it), for an example and for
    the frames and events it wraps."""
    tag = raw["type"]
    text = msgspec.json.encode(raw)
    if tag in game.COMMAND_BY_TAG:
        return [(raw, msgspec.json.decode(text, type=game.AnyCommand))]
    if tag in wire.CLIENT_TAGS:
        frame = wire.decode(text)
        inner = decoded_parts(raw["command"]) if tag == "command" else []
        return [({k: v for k, v in raw.items() if k != "command"}, frame)] + inner
    if tag == "batch":
        return [part for frame in raw["frames"] for part in decoded_parts(frame)]
    if tag == "event":
        return decoded_parts(raw["event"])
    if tag in wire.SERVER_TAGS:
        kind = next(t for t in wire.ServerFrame.__args__ if t.__struct_config__.tag == tag)
        return [(raw, msgspec.json.decode(text, type=kind))]
    return [(raw, msgspec.json.decode(text, type=game.AnyEvent))]


@pytest.mark.parametrize("doc,text", EXAMPLES, ids=[f"{d}:{i}" for i, (d, _) in enumerate(EXAMPLES)])
def test_every_documented_json_example_decodes_with_the_real_decoders(doc, text):
    for shown, decoded in decoded_parts(msgspec.json.decode(text.encode())):
        # nothing the example shows is silently dropped: each field is one the decoder has
        unknown = set(shown) - {"type"} - set(decoded.__struct_fields__)
        assert not unknown, f"{shown['type']}: fields unknown to the decoder: {sorted(unknown)}"


def test_the_documented_fields_of_a_client_are_shown():
    # what a client needs is in the examples, not only in the code
    fields = {tag: set() for tag in ("challenge", "bid", "overbid", "open_session", "throw")}
    for _, text in EXAMPLES:
        raw = msgspec.json.decode(text.encode())
        if raw["type"] in fields:
            fields[raw["type"]] |= set(raw)
    assert {"defender_attribute", "abilities", "defender", "difficulty"} <= fields["challenge"]
    assert "abilities" in fields["bid"] and "abilities" in fields["overbid"]
    assert {"carried", "chronicle"} <= fields["open_session"]
    storyteller_throws = [msgspec.json.decode(t.encode()) for _, t in EXAMPLES
                          if '"type": "throw"' in t and '"character": "storyteller"' in t]
    assert storyteller_throws and "choice" not in storyteller_throws[0]
    assert "the answer to an overbid is a `bid`" in TEXT.lower().replace("\n", " ")


def test_the_roster_example_parses_and_lists_every_option_key():
    import tomllib

    from conteur.server.core.roster import OPTION_KEYS, RosterError, parse_roster

    toml = re.search(r"```toml\n(.*?)\n```", TEXT, re.S).group(1)
    roster = parse_roster(tomllib.loads(toml))
    assert sorted(roster.options) == sorted(OPTION_KEYS)
    with pytest.raises(RosterError, match=r"unknown key in \[options\]: seed_commitment"):
        parse_roster({"options": {"seed_commitment": "x"}})
