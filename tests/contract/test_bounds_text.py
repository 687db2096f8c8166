"""Every text a client sends is bounded (docs/protocol.md, "Bounds"): each string field of
every command type, sheets included, and of a roster entry has a maximum length; at it
the decoder lets the command through to the rules, one character over it answers
``invalid`` naming the field and its limit; a request body over 64 KiB gets HTTP 413 and
a websocket frame over it ``too_large``, both naming the field that runs long.

The 9,900,000-character ``take_action`` description was acknowledged and stored: one
player grew the database by gigabytes an hour and every phone downloaded it.
"""

from __future__ import annotations

import itertools
import re
from pathlib import Path

import httpx
import msgspec
import pytest
from websockets.sync.client import connect

from conteur.events import game, wire
from conteur.events.bounds import MAX_ITEMS, MAX_TEXT
from conteur.server.core.roster import Roster, RosterError, parse_roster
from conteur.server.testing import Venue
from conteur.server.web.app import Settings
from tests.support.every_command import SETUP
from tests.support.every_command import with_value
from tests.support.types_support import leaves

_ids = itertools.count(1)
DOCS = Path(__file__).resolve().parents[2] / "docs" / "protocol.md"


def str_fields(kind):
    """(path, max_length) for every string a client may send inside ``kind``, map keys too."""
    return [(path, info.max_length) for path, info in leaves(kind, msgspec.inspect.StrType, keys=True)]


def many_fields(kind, path=(), seen=frozenset()):
    """(path, max_length) for every tuple, list and dict a client may send inside ``kind``."""
    info = kind if isinstance(kind, msgspec.inspect.Type) else msgspec.inspect.type_info(kind)
    if isinstance(info, msgspec.inspect.Metadata):
        yield from many_fields(info.type, path, seen)
    elif isinstance(info, msgspec.inspect.StructType):
        if info.cls not in seen:
            for f in info.fields:
                yield from many_fields(f.type, path + (f.encode_name,), seen | {info.cls})
    elif isinstance(info, msgspec.inspect.UnionType):
        for t in info.types:
            yield from many_fields(t, path, seen)
    elif isinstance(info, (msgspec.inspect.DictType, msgspec.inspect.VarTupleType, msgspec.inspect.ListType)):
        yield path, info.max_length


# the fields the server fills itself; a client's value is replaced or refused by the rules
SERVER_FILLED = {("open_session", ("carried",))}

FIELDS = sorted({(t.__struct_config__.tag, path, bound) for t in game.COMMAND_TYPES
                 for path, bound in str_fields(t)
                 if not any(path[:len(p)] == p for tag, p in SERVER_FILLED
                            if tag == t.__struct_config__.tag)}, key=str)
COLLECTIONS = sorted({(t.__struct_config__.tag, path, bound) for t in game.COMMAND_TYPES
                      for path, bound in many_fields(t)
                      if not any(path[:len(p)] == p for tag, p in SERVER_FILLED
                                 if tag == t.__struct_config__.tag)}, key=str)


def test_every_text_a_command_carries_has_a_maximum():
    assert len(FIELDS) > 50, FIELDS
    unbounded = [(tag, path) for tag, path, bound in FIELDS if bound is None]
    assert not unbounded, f"give these fields a max_length (events/bounds.py): {unbounded}"


def test_every_list_and_map_a_command_carries_has_a_maximum():
    unbounded = [(tag, path) for tag, path, bound in COLLECTIONS if bound is None]
    assert not unbounded, f"give these a max_length (events/bounds.py): {unbounded}"


def test_every_text_of_a_roster_entry_has_a_maximum():
    fields = [(path, bound) for path, bound in str_fields(Roster)
              if path[0] not in ("options", "v5", "action")]  # become commands, checked there
    assert fields and not [p for p, bound in fields if bound is None], fields


def command_with(tag: str, path: tuple, length: int) -> dict:
    """The example command of ``tag`` with a text of ``length`` characters at ``path``."""
    text = "é" * length  # two bytes each: the bound counts characters, not bytes
    if path[-1] == "*key":
        command = with_value(tag, path[:-1] + ("*",), 1 if "throws" not in path else "rock")
        target = command
        for key in path[:-2]:
            target = target[key] if not isinstance(target, list) else target[0]
        target[path[-2]] = {text: target[path[-2]].pop("x")}
        return command
    return with_value(tag, path, text)


def name_of(path: tuple) -> str:
    return next(k for k in reversed(path) if k not in ("*", 0, "*key"))


@pytest.mark.parametrize("field", FIELDS, ids=lambda f: f"{f[0]}.{'.'.join(map(str, f[1]))}")
def test_at_its_limit_a_text_decodes_and_one_over_is_invalid_naming_field_and_limit(field):
    tag, path, bound = field
    at = {"type": "command", "id": "at", "command": command_with(tag, path, bound)}
    decoded = wire.decode(msgspec.json.encode(at))
    assert isinstance(decoded, wire.CommandFrame)
    over = {"type": "command", "id": "over", "command": command_with(tag, path, bound + 1)}
    with pytest.raises(wire.FrameError) as refused:
        wire.decode(msgspec.json.encode(over))
    assert refused.value.code == "invalid"
    message = refused.value.message
    assert f"length <= {bound}" in message, message
    if path[-1] != "*key":  # a key is named by its map
        assert name_of(path) in message, message


def test_a_list_one_item_over_its_limit_is_invalid():
    command = {"type": "bid", "character": "anna", "challenge": "c1", "round": 1, "value": 1,
               "abilities": ["a"] * MAX_ITEMS}
    assert isinstance(wire.decode(msgspec.json.encode(
        {"type": "command", "id": "x", "command": command})), wire.CommandFrame)
    command["abilities"].append("a")
    with pytest.raises(wire.FrameError, match=rf"length <= {MAX_ITEMS}.*abilities"):
        wire.decode(msgspec.json.encode({"type": "command", "id": "x", "command": command}))


def test_a_roster_entry_over_its_limit_is_refused_naming_the_field():
    parse_roster({"characters": [{"id": "anna", "name": "n" * 128}]})
    with pytest.raises(RosterError, match=r"length <= 128.*characters\[0\]\.name"):
        parse_roster({"characters": [{"id": "anna", "name": "n" * 129}]})
    with pytest.raises(RosterError, match=r"length <= 128.*scenes\[0\]\.id"):
        parse_roster({"scenes": [{"id": "s" * 129}]})


def test_protocol_md_lists_every_text_bound():
    text = DOCS.read_text()
    section = text[text.index("### Bounds"):]
    section = section[:section.index("\n## ")]
    missing = sorted({f"{tag}.{name_of(path)}" for tag, path, _ in FIELDS
                      if f"`{name_of(path)}`" not in section})
    assert not missing, f"docs/protocol.md, Bounds, does not name: {missing}"
    for limit in ("128", str(MAX_TEXT), str(MAX_ITEMS), "64 KiB"):
        assert limit in section


# -- on a real server ------------------------------------------------------------------


@pytest.fixture(scope="module")
def venue(tmp_path_factory):
    with Venue(tmp_path_factory.mktemp("bounds") / "chronicle.db",
               settings=Settings(rate=100000, burst=100000)) as v:
        http = httpx.Client(base_url=v.url, headers={"Authorization": f"Bearer {v.token()}"})
        assert http.post("/sessions", json={"session": "night"}).json()["type"] == "ack"
        for raw in SETUP[1:]:
            assert http.post("/sessions/night/commands", json={
                "id": f"setup-{next(_ids)}", "command": raw}).json()["type"] == "ack"
        v.http = http
        yield v


def action(length: int) -> dict:
    return {"id": f"a-{next(_ids)}", "command": {"type": "take_action", "character": "anna",
                                                 "description": "x" * length}}


def test_the_ten_megabyte_description_is_refused_over_http_naming_the_field(venue):
    head = venue.runtime.hub.head("night")
    reply = venue.http.post("/sessions/night/commands", json=action(9_900_000))
    assert reply.status_code == 413, reply.text
    detail = reply.json()["detail"]
    assert "65536" in detail and "`description`" in detail and f"{MAX_TEXT} characters" in detail
    assert venue.runtime.hub.head("night") == head


def test_over_http_a_description_at_its_limit_is_acked_and_one_over_is_400_naming_it(venue):
    head = venue.runtime.hub.head("night")
    over = venue.http.post("/sessions/night/commands", json=action(MAX_TEXT + 1))
    assert over.status_code == 400, over.text
    assert over.json()["extra"][0]["key"] == "command.description"
    assert f"length <= {MAX_TEXT}" in over.json()["extra"][0]["message"]
    assert venue.runtime.hub.head("night") == head
    at = venue.http.post("/sessions/night/commands", json=action(MAX_TEXT))
    assert at.json()["type"] == "ack", at.text


def test_an_unauthenticated_oversized_body_is_refused_by_its_size_alone(venue):
    # the answer is the same whoever asks: it says nothing about the session or the token
    for headers in ({}, {"Authorization": "Bearer nope"}, venue.http.headers):
        reply = httpx.post(venue.url + "/sessions/night/commands", json=action(70_000),
                           headers=headers)
        assert reply.status_code == 413, reply.text
    bodies = {httpx.post(venue.url + "/sessions/other/commands", json=action(70_000),
                         headers=h).content for h in ({}, venue.http.headers)}
    assert len(bodies) == 1


def frames(ws):
    while True:
        yield msgspec.json.decode(ws.recv(timeout=10))


def test_over_the_websocket_the_phone_is_told_the_field_and_its_limit(venue):
    with connect(venue.ws_url, compression=None, max_size=None, open_timeout=10) as ws:
        ws.send(msgspec.json.encode({"type": "hello", "token": venue.token(), "session": "night"}).decode())
        got = frames(ws)
        next(f for f in got if f["type"] == "live")
        big = {"type": "command", **action(200_000)}
        ws.send(msgspec.json.encode(big).decode())
        reply = next(f for f in got if f["type"] == "error")
        assert reply["code"] == "too_large" and reply["id"] == big["id"], reply
        assert "`description`" in reply["message"] and f"{MAX_TEXT} characters" in reply["message"]
        over = {"type": "command", **action(MAX_TEXT + 1)}
        ws.send(msgspec.json.encode(over).decode())
        reply = next(f for f in got if f["type"] in ("error", "ack", "reject"))
        assert reply["type"] == "error" and reply["code"] == "invalid" and reply["id"] == over["id"]
        assert re.search(rf"length <= {MAX_TEXT}.*description", reply["message"]), reply
        at = {"type": "command", **action(MAX_TEXT)}
        ws.send(msgspec.json.encode(at).decode())
        reply = next(f for f in got if f["type"] in ("error", "ack", "reject"))
        assert reply["type"] == "ack" and reply["id"] == at["id"], reply
