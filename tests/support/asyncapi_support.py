"""Frames checked against the AsyncAPI document of the websocket (/schema/asyncapi.json,
made by server/web/asyncapi.py from the server's types): a frame a device sends is one of
the device's messages, a frame it receives one of the server's, each valid against its
payload's JSON Schema (jsonschema-rs, draft 07: AsyncAPI's schema format).

``check_frames`` (a fixture factory for a test module) has the scripted device of
server/testing.py check every frame it sends and receives: a frame that is not described
fails the test (``Device.frame_check``)."""

from __future__ import annotations

import jsonschema_rs
import pytest

from conteur.server.testing import Device
from conteur.server.web.asyncapi import FROM_DEVICE, FROM_SERVER, document

SENT = {tag for tag, _, _ in FROM_DEVICE}
RECEIVED = {tag for tag, _, _ in FROM_SERVER}


class FrameInvalid(AssertionError):
    pass


class Frames:
    """One validator per message of the document's channel."""

    def __init__(self, doc: dict):
        components = doc["components"]
        self.messages = doc["channels"]["ws"]["messages"]
        # each payload with the components beside it, so its $refs resolve in the document
        self.validators = {tag: jsonschema_rs.Draft7Validator({**message["payload"], "components": components})
                           for tag, message in self.messages.items()}
        self.checked: dict[str, int] = {}

    def errors(self, direction: str, frame) -> list[str]:
        tags = SENT if direction == "sent" else RECEIVED
        tag = frame.get("type") if isinstance(frame, dict) else None
        if tag not in tags:
            return [f"a {direction} frame of type {tag!r}: the document's are {sorted(tags)}"]
        self.checked[f"{direction} {tag}"] = self.checked.get(f"{direction} {tag}", 0) + 1
        errors = [f"{e.message} at {'/'.join(map(str, e.instance_path)) or '(root)'}"
                  for e in self.validators[tag].iter_errors(frame)]
        if tag == "batch" and not errors:  # each inner frame by its own message too (and counted)
            for inner in frame["frames"]:
                errors += self.errors(direction, inner)
        return errors

    def check(self, direction: str, frame) -> None:
        errors = self.errors(direction, frame)
        if errors:
            raise FrameInvalid(f"a {direction} frame not described by /schema/asyncapi.json: "
                               f"{frame!r:.300}: " + "; ".join(errors[:5]))


FRAMES = Frames(document())


def check_frames():
    """An autouse fixture for a module: every frame its devices send and receive is checked."""
    @pytest.fixture(autouse=True)
    def frames_checked(monkeypatch):
        monkeypatch.setattr(Device, "frame_check", FRAMES.check)
        yield FRAMES
    return frames_checked
