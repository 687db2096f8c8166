"""Protocol fuzzing on a real server.

- A hypothesis state machine over connect, drop, command, freeze and resync: after every
  step, every connected device holds exactly the server's log filtered for its viewer
  (``events.views``), in seq order, each event once, whatever its dropouts.
- Byte-level frames (random bytes, random text, huge numbers, deep nesting, invalid UTF-8
  in a text frame, unknown fields, random commands): the server answers or closes, never
  crashes, and the log stays whole: every row decodes, the hash chain holds, a replay
  from zero folds, and a fresh device still plays.
"""

from __future__ import annotations

import itertools
import os
import struct

import msgspec
import pytest
from hypothesis import HealthCheck, settings
from hypothesis import strategies as st
from hypothesis.stateful import RuleBasedStateMachine, initialize, invariant, precondition, rule
from websockets.sync.client import connect

from conteur.events import game, views
from conteur.events.model import Actor
from conteur.server.web.app import Settings
from conteur.server.store.chain import verify_rows
from conteur.server.store.sqlite import decode_events
from conteur.server.testing import Venue
from tests.support.examples import examples

_sessions = itertools.count(1)
CHARACTERS = ("anna", "bruno", "clara")
FAST = Settings(rate=100000, burst=100000)  # the fuzzer sends faster than a phone may


@pytest.fixture(scope="module")
def venue(tmp_path_factory):
    with Venue(tmp_path_factory.mktemp("fuzz") / "chronicle.db", settings=FAST) as v:
        yield v


def as_json(value):
    return msgspec.json.decode(msgspec.json.encode(value))


class SyncDevice:
    """A blocking device: reads only when asked, so a test step sees a settled stream."""

    def __init__(self, url: str, token: str, session: str, device: str):
        self.url, self.token, self.session, self.device = url, token, session, device
        self.events: list[tuple[int, dict]] = []  # kept across connections, as a phone does
        self.replies: list[dict] = []  # every other frame
        self.ws = None
        self.ids = itertools.count()

    @property
    def after(self) -> int:
        return self.events[-1][0] if self.events else 0

    def connect(self) -> None:
        # entered by hand: the connection outlives this call, closed in drop()
        self.ws = connect(self.url, compression=None, max_size=None, open_timeout=10).__enter__()
        self.ws.send(msgspec.json.encode({"type": "hello", "token": self.token, "session": self.session,
                                          "after": self.after, "device": self.device,
                                          "create": True}).decode())
        self.read_until(lambda f: f["type"] == "live")

    def drop(self) -> None:
        self.ws.close()
        self.ws = None

    def read_until(self, done) -> dict:
        while True:
            frame = msgspec.json.decode(self.ws.recv(timeout=10))
            if frame["type"] == "event":
                assert frame["seq"] > self.after, f"seq {frame['seq']} after {self.after}"
                self.events.append((frame["seq"], frame["event"]))
            else:
                self.replies.append(frame)
            if done(frame):
                return frame

    def command(self, command: dict) -> dict:
        command_id = f"{self.device}-{next(self.ids)}"
        self.ws.send(msgspec.json.encode({"type": "command", "id": command_id, "command": command}).decode())
        return self.read_until(lambda f: f["type"] in ("ack", "reject", "error") and f.get("id") == command_id)

    def sync(self) -> None:
        self.ws.send('{"type":"ping"}')
        self.read_until(lambda f: f["type"] == "pong")


class Protocol(RuleBasedStateMachine):
    """Three phones, a wall display and a storyteller's tablet on one session."""

    venue: Venue  # set by the test

    @initialize()
    def open_session(self):
        v = self.venue
        self.session = f"fuzz-{next(_sessions)}"
        tokens = v.runtime.tokens
        self.viewers: dict[str, Actor] = {"storyteller": Actor(role="storyteller", name="st"),
                                          "wall": Actor(role="observer", name="wall")}
        token = {"storyteller": tokens.issue("storyteller", session=self.session, name="st"),
                 "wall": tokens.issue("observer", session=self.session, name="wall")}
        for c in CHARACTERS:
            self.viewers[c] = Actor(role="player", character=c, name=c)
            token[c] = tokens.issue("player", character=c, session=self.session, name=c)
        self.devices = {name: SyncDevice(v.ws_url, token[name], self.session, f"{self.session}-{name}")
                        for name in self.viewers}
        st_ = self.devices["storyteller"]
        st_.connect()
        setup = [{"type": "open_session", "name": self.session},
                 {"type": "open_scene", "scene": "hall", "name": "Hall"}]
        for c in CHARACTERS:
            setup += [{"type": "add_character", "character": c, "name": c,
                       "sheet": {"kind": "met", "physical": 6, "social": 4, "mental": 5}},
                      {"type": "join_scene", "character": c, "scene": "hall"}]
        for command in setup:
            assert st_.command(command)["type"] == "ack"
        self.out = {c: False for c in CHARACTERS}
        self.in_scene = {c: True for c in CHARACTERS}

    def connected(self):
        return [n for n, d in self.devices.items() if d.ws is not None]

    def offline(self):
        return [n for n, d in self.devices.items() if d.ws is None]

    @rule(data=st.data())
    def connect(self, data):
        if self.offline():
            self.devices[data.draw(st.sampled_from(self.offline()))].connect()

    @rule(data=st.data())
    def drop(self, data):
        if self.connected():
            self.devices[data.draw(st.sampled_from(self.connected()))].drop()

    @rule(data=st.data())
    def resync(self, data):
        """Drop and come straight back with the last seq held."""
        if self.connected():
            device = self.devices[data.draw(st.sampled_from(self.connected()))]
            device.drop()
            device.connect()

    @rule(data=st.data(), kind=st.sampled_from(["out_of_game", "back_in_game", "join_scene", "leave_scene"]))
    def command(self, data, kind):
        players = [c for c in CHARACTERS if self.devices[c].ws is not None]
        if not players:
            return
        c = data.draw(st.sampled_from(players))
        command = {"type": kind, "character": c}
        if kind == "join_scene":
            command["scene"] = "hall"
        reply = self.devices[c].command(command)
        assert reply["type"] in ("ack", "reject"), reply  # refusals are outcomes, not errors

    @precondition(lambda self: self.devices["storyteller"].ws is not None)
    @rule(scope=st.sampled_from(["session", "scene"]), resume=st.booleans())
    def freeze(self, scope, resume):
        command = {"type": "resume" if resume else "freeze", "scope": scope}
        if scope == "scene":
            command["scene"] = "hall"
        reply = self.devices["storyteller"].command(command)
        assert reply["type"] in ("ack", "reject"), reply

    @invariant()
    def every_device_sees_the_replay_filtered_for_it(self):
        if not hasattr(self, "session"):
            return
        rows = self.venue.runtime.store.read_after(self.session)
        log = list(zip([r.seq for r in rows], decode_events([r.data for r in rows])))
        for name, device in self.devices.items():
            expected = [(s, as_json(e)) for s, e in views.view_events(log, self.viewers[name])]
            if device.ws is not None:
                device.sync()
                assert device.events == expected, name
            else:  # what it held when it dropped is a prefix of its view
                assert device.events == expected[:len(device.events)], name

    def teardown(self):
        for device in getattr(self, "devices", {}).values():
            if device.ws is not None:
                device.drop()


def test_protocol_state_machine_every_view_is_the_filtered_replay(venue):
    Protocol.venue = venue
    steps = int(os.environ.get("CONTEUR_FUZZ_STEPS", "20"))
    examples_n = examples(int(os.environ.get("CONTEUR_FUZZ_EXAMPLES", "12")))
    from hypothesis.stateful import run_state_machine_as_test

    run_state_machine_as_test(Protocol, settings=settings(
        max_examples=examples_n, stateful_step_count=steps, deadline=None,
        suppress_health_check=list(HealthCheck)))


# -- byte-level frames ---------------------------------------------------------------------


def masked_text_frame(payload: bytes) -> bytes:
    """A client text frame with any payload, invalid UTF-8 included (RFC 6455 5.2)."""
    mask = os.urandom(4)
    n = len(payload)
    head = bytes([0x81])
    if n < 126:
        head += bytes([0x80 | n])
    elif n < 1 << 16:
        head += bytes([0x80 | 126]) + struct.pack("!H", n)
    else:
        head += bytes([0x80 | 127]) + struct.pack("!Q", n)
    return head + mask + bytes(b ^ mask[i % 4] for i, b in enumerate(payload))


json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=20),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=10), inner, max_size=4),
    max_leaves=20,
)
huge = st.sampled_from([10**400, -10**400, 2**63, -2**63 - 1, 2**64, 1e308, -1e308])
command_tags = st.sampled_from(sorted(game.COMMAND_BY_TAG))
frame_fields = st.sampled_from(["type", "id", "command", "token", "session", "after", "device",
                                "entropy", "character", "round", "value", "scene", "unknown"])


@st.composite
def hostile_frames(draw) -> tuple[str, bytes]:
    """(how to send, payload): a frame a broken or malicious client could send."""
    kind = draw(st.sampled_from(["bytes", "text", "huge", "deep", "utf8", "unknown", "command"]))
    if kind == "bytes":
        return "binary", draw(st.binary(max_size=512))
    if kind == "text":
        return "text", draw(st.text(max_size=512)).encode("utf-8", "surrogatepass")
    if kind == "huge":
        field = draw(frame_fields)
        tag = draw(command_tags)
        number = draw(huge)
        frame = {"type": "command", "id": "h", "command": {"type": tag, field: number}}
        if draw(st.booleans()):
            frame = {"type": "hello", "token": "x", "after": number}
        return "text", msgspec.json.encode(frame)
    if kind == "deep":
        depth = draw(st.integers(100, 30000))
        opener, closer = draw(st.sampled_from([("[", "]"), ('{"a":', "}")]))
        inner = opener * depth + "1" + closer * depth
        return "text", f'{{"type":"command","id":"d","command":{inner}}}'.encode()
    if kind == "utf8":
        good = b'{"type":"command","id":"u","command":{"type":"out_of_game","character":"'
        return "raw", good + draw(st.sampled_from([b"\xff", b"\xc3\x28", b"\xed\xa0\x80", b"\x80"])) + b'"}}'
    if kind == "unknown":
        frame = {"type": "command", "id": "k", "command": {"type": "out_of_game", "character": "anna",
                                                          draw(st.text(min_size=1, max_size=8)): draw(json_values)},
                 draw(st.text(min_size=1, max_size=8)): draw(json_values)}
        return "text", msgspec.json.encode(frame)
    fields = draw(st.dictionaries(frame_fields, json_values, max_size=5))
    frame = {"type": "command", "id": draw(st.text(min_size=1, max_size=10)),
             "command": {**fields, "type": draw(command_tags)}}
    return "text", msgspec.json.encode(frame, order=None)


def test_hostile_frames_never_crash_the_server_or_poison_the_log(venue):
    from hypothesis import given

    tokens = venue.runtime.tokens
    session = f"bytes-{next(_sessions)}"
    storyteller = tokens.issue("storyteller", session=session, name="st")
    anna = tokens.issue("player", character="anna", session=session, name="anna")
    st_ = SyncDevice(venue.ws_url, storyteller, session, "st")
    st_.connect()
    for command in ({"type": "open_session", "name": session},
                    {"type": "add_character", "character": "anna", "name": "Anna",
                     "sheet": {"kind": "met", "physical": 6, "social": 4, "mental": 5}}):
        assert st_.command(command)["type"] == "ack"
    st_.drop()
    closed = {"n": 0}

    @settings(max_examples=examples(int(os.environ.get("CONTEUR_FUZZ_FRAMES", "150"))), deadline=None,
              suppress_health_check=list(HealthCheck))
    @given(frames=st.lists(hostile_frames(), min_size=1, max_size=5), as_storyteller=st.booleans())
    def fuzz(frames, as_storyteller):
        device = SyncDevice(venue.ws_url, storyteller if as_storyteller else anna, session, "fuzzer")
        device.connect()
        try:
            for how, payload in frames:
                if how == "binary":
                    device.ws.send(payload)
                elif how == "text":
                    device.ws.send(payload.decode("utf-8", "replace"))
                else:  # below the websockets library: a text frame that is not UTF-8
                    device.ws.socket.sendall(masked_text_frame(payload))
            device.ws.send('{"type":"ping"}')
            device.read_until(lambda f: f["type"] == "pong")  # still answering this socket
            # "unavailable" is the answer to an exception inside the command path
            assert not [f for f in device.replies if f.get("code") == "unavailable"], device.replies
        except Exception as exc:  # noqa: BLE001 - a protocol-level close is a fair answer
            from websockets.exceptions import ConnectionClosed

            if not isinstance(exc, (ConnectionClosed, OSError)):  # EPIPE, EBADF: closed on us
                raise
            closed["n"] += 1
        finally:
            device.ws.close()

    fuzz()
    # the server is alive, plays on, and its log is whole
    phone = SyncDevice(venue.ws_url, anna, session, "after-fuzz")
    phone.connect()
    reply = phone.command({"type": "out_of_game", "character": "anna", "reason": "after the fuzz"})
    assert reply["type"] in ("ack", "reject") and reply.get("code") != "unavailable", reply
    phone.drop()
    store = venue.runtime.store
    rows = list(store.rows())
    decode_events([r.data for r in rows])  # every stored row decodes
    assert verify_rows(iter(rows), gapless=True)[1] is None
    for sid in store.sessions():
        store.load_state(sid, use_snapshots=False)  # and folds
