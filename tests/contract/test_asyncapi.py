"""The websocket described as the HTTP API is: an AsyncAPI 3 document made from the
server's msgspec types, served beside the OpenAPI one, that every frame of a night
validates against (tests/support/asyncapi_support.py), and that refuses a frame it does not
describe."""

from __future__ import annotations

import asyncio
import json
import re

import httpx
import pytest
import websockets
from pydantic_asyncapi import AsyncAPI

from conteur.events import game, wire
from conteur.server.testing import Device, Venue
from conteur.server.web.asyncapi import document
from tests.support.asyncapi_support import FRAMES, FrameInvalid, check_frames
from tests.support.protocol_doc_support import COMMANDS, FRAMES as DOC_FRAMES, example

frames_checked = check_frames()
DOC = document()


@pytest.fixture
def venue(tmp_path):
    with Venue(tmp_path / "chronicle.db") as v:
        yield v


def refs(node):
    if isinstance(node, dict):
        if isinstance(node.get("$ref"), str):
            yield node["$ref"]
        for value in node.values():
            yield from refs(value)
    elif isinstance(node, list):
        for value in node:
            yield from refs(value)


def resolve(ref: str):
    assert ref.startswith("#/"), ref
    node = DOC
    for part in ref[2:].split("/"):
        node = node[part]
    return node


def test_the_document_has_the_asyncapi_3_shape():
    parsed = AsyncAPI.model_validate(DOC).root  # the AsyncAPI 3 object model (pydantic-asyncapi)
    assert parsed.asyncapi == "3.0.0"
    assert set(parsed.channels) == {"ws"} and parsed.channels["ws"].address == "/ws"
    for ref in refs(DOC):  # every reference lands, in the document itself
        assert resolve(ref) is not None, ref
    for name, operation in DOC["operations"].items():
        assert operation["action"] in ("send", "receive"), name
        assert all(m["$ref"].startswith("#/channels/ws/messages/") for m in operation["messages"]), name


def test_every_frame_command_and_event_of_the_code_is_a_message_of_it():
    messages = DOC["channels"]["ws"]["messages"]
    assert set(messages) == set(wire.CLIENT_TAGS) | set(wire.SERVER_TAGS)
    receive = {DOC["operations"][n]["messages"][0]["$ref"].rsplit("/", 1)[1]
               for n, op in DOC["operations"].items() if op["action"] == "receive"}
    assert receive == set(wire.CLIENT_TAGS)  # the server receives the device's frames, sends its own
    for tag, message in messages.items():  # each message's payload is its frame, by its type
        payload = resolve(message["payload"]["$ref"])
        assert payload["properties"]["type"] == {"enum": [tag]} and "type" in payload["required"]
    command = resolve(messages["command"]["payload"]["$ref"])["properties"]["command"]
    commands = {resolve(r["$ref"])["properties"]["type"]["enum"][0] for r in command["anyOf"]}
    assert commands == set(game.COMMAND_BY_TAG)
    event = resolve(messages["event"]["payload"]["$ref"])["properties"]["event"]
    events = {resolve(r["$ref"])["properties"]["type"]["enum"][0] for r in event["anyOf"]}
    assert events == set(game.EVENT_BY_TAG)


def test_the_document_is_served_beside_the_openapi_one(venue):
    served = httpx.get(venue.url + "/schema/asyncapi.json")
    assert served.status_code == 200 and served.headers["content-type"].startswith("application/json")
    assert served.json() == json.loads(json.dumps(DOC))
    openapi = httpx.get(venue.url + "/schema/openapi.json", timeout=120).json()  # made at this request
    assert "/schema/asyncapi.json" in openapi["info"]["description"]
    assert "/schema/asyncapi.json" in openapi["paths"]


@pytest.mark.parametrize("tag", sorted(set(wire.CLIENT_TAGS) | set(wire.SERVER_TAGS)))
def test_each_frame_example_of_the_protocol_doc_validates(tag):
    section = re.split(r"\n#{1,6} ", DOC_FRAMES[tag])[0]  # up to the next heading of any level
    for text in re.findall(r"```json\n(.*?)\n```", section, re.S):
        FRAMES.check("sent" if tag in wire.CLIENT_TAGS else "received", json.loads(text))


@pytest.mark.parametrize("tag", sorted(game.COMMAND_BY_TAG))
def test_each_command_example_of_the_protocol_doc_validates(tag):
    FRAMES.check("sent", {"type": "command", "id": "c1", "command": json.loads(example(COMMANDS[tag]))})


@pytest.mark.parametrize("frame", [
    {"type": "command", "id": "c1", "command": {"type": "roll_pool", "character": "iris", "pool": "5"}},
    {"type": "command", "id": "c1", "command": {"type": "dance"}},
    {"type": "command", "id": "", "command": {"type": "close_session"}},
    {"type": "hello", "token": 7, "session": "night"},  # a token is text
    {"type": "open", "id": "tok", "nonce": "short"},  # an id is hex, a nonce 32 bytes
    {"type": "sealed", "box": "not base64!"},
    {"type": "hello", "token": "t", "after": -1},
    {"type": "welcome", "session": "night", "head": 3},  # not a device's frame
])
def test_a_frame_it_does_not_describe_is_refused(frame):
    with pytest.raises(FrameInvalid):
        FRAMES.check("sent", frame)


async def test_a_device_sending_an_undescribed_frame_fails_its_test(venue):
    async with Device(venue.ws_url, venue.token(), "night") as st:
        with pytest.raises(FrameInvalid, match="roll_pool"):
            await st.command({"type": "roll_pool", "character": "iris", "pool": "5"})


async def test_a_device_receiving_an_undescribed_frame_fails_its_test():
    """A server (here a stand-in on loopback) sending a welcome without its viewer."""
    async def serve(ws):
        await ws.recv()
        await ws.send(json.dumps({"type": "welcome", "session": "night", "head": 0}))
        await ws.send(json.dumps({"type": "live", "head": 0}))
        await asyncio.sleep(1)

    async with websockets.serve(serve, "127.0.0.1", 0) as server:
        port = server.sockets[0].getsockname()[1]
        device = Device(f"ws://127.0.0.1:{port}", "token", "night")
        with pytest.raises(FrameInvalid, match="viewer"):
            await device.connect()
        device.invalid.clear()
        await device.close()


async def test_a_night_exercises_every_message_and_each_validates(venue):
    """hello, command, ping, open, sealed; welcome, event, live, ack, reject, error, pong,
    venue_calls, batch, opened: each
    sent or received at least once, each checked against its message."""
    FRAMES.checked.clear()
    st = Device(venue.ws_url, venue.token(), "night", batch=True)
    async with st:
        for command in ({"type": "open_session", "name": "Elysium"},
                        {"type": "add_character", "character": "anna", "name": "Anna",
                         "sheet": {"kind": "met", "physical": 6, "social": 3, "mental": 4}},
                        {"type": "open_scene", "scene": "hall", "name": "Great hall"},
                        {"type": "join_scene", "character": "anna", "scene": "hall"}):
            assert (await st.command(command))["type"] == "ack"
        anna_token = venue.token("player", "anna", "night")
    async with Device(venue.ws_url, anna_token, "night", batch=True) as anna:  # its resync: a batch
        assert (await anna.command({"type": "freeze"}))["type"] == "reject"
        await anna.send('{"type": "dance"}')  # an error (sent as text: deliberately undescribed)
        assert (await anna.next_error())["code"] == "unknown_type"
        await anna.sync()
    async with Device(venue.ws_url, anna_token, "night", channel=True) as sealed:  # open, opened, sealed
        await sealed.sync()
    # venue_calls: a safety call told to the storyteller of another session
    async with Device(venue.ws_url, venue.token(), "garden") as other, \
            Device(venue.ws_url, anna_token, "night") as anna:
        assert (await other.command({"type": "open_session", "name": "Garden"}))["type"] == "ack"
        assert (await anna.command({"type": "call_storyteller", "character": "anna", "kind": "safety"}))["type"] == "ack"
        await other.wait_for(lambda f: f["type"] == "venue_calls")
    seen = {key.split(" ", 1)[1] for key in FRAMES.checked}
    assert seen == set(wire.CLIENT_TAGS) | set(wire.SERVER_TAGS), FRAMES.checked
