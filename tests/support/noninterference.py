"""A noninterference harness over a real server: play one script in two worlds
that differ only in one character's hidden information, and collect every byte the other
viewers can get, so a test asserts both collections are equal.

A world is a ``Venue`` (its own SQLite file, its own server on loopback) and a session
name; both worlds of a pair get the same session name and the same FAIR-2 seed
(``plant_seed``), since the seed is random per server and is public after close. A script
is a list of ``Step``s: who sends which command with which entropy. Each step gets a
command id made from its index, so the acks are byte-comparable.

``observe`` returns, per viewer name, what that viewer got:

- ``live``: the raw text of every ``event`` frame received while the script ran, in order,
  and of every ``ack``/``reject``/``error`` answering its own commands (in order, apart:
  an ack and the fan-out race);
- ``resync``: the raw frames of a fresh device connecting with ``after: 0``;
- ``http``: the bodies of ``GET /events``, ``GET /state``, two pages of ``GET /state/done``
  (the finished challenges /state counts), ``GET /review/verify`` and of
  every export format the viewer may fetch (times of day masked: when a command was
  sent is not hidden information).

Worlds for opposed rolls, throws and bids add scripts; ``observe`` is the same.
"""

from __future__ import annotations

import asyncio
import re
from typing import Any, Callable

import httpx
import msgspec
import websockets

from conteur.server.testing import Venue

EXPORTS = ("jsonl", "csv", "md", "html")
_TIME = re.compile(rb"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?(Z|[+-]\d\d:\d\d)?|\b\d\d:\d\d\b|\d{4}-\d\d-\d\d")


class Step(msgspec.Struct, frozen=True, kw_only=True):
    who: str  # "st" or a character id
    command: dict
    entropy: str = ""


def plant_seed(venue: Venue, session: str, seed: bytes) -> None:
    """The FAIR-2 seed this session will commit to at open (``SecretSeeds.create`` keeps
    a seed already on record)."""
    venue.runtime.chronicle.store.create_secret(session, seed)


def mask_times(body: bytes) -> bytes:
    return _TIME.sub(b"<time>", body)


class _Raw:
    """A websocket device keeping the raw text of every message (no batch: one frame per
    message, so the texts compare)."""

    def __init__(self, url: str, token: str, session: str, name: str, after: int = 0):
        self.url, self.token, self.session, self.name, self.after = url, token, session, name, after
        self.messages: list[str] = []
        self._changed = asyncio.Event()
        self.ws: Any = None
        self._reader: asyncio.Task | None = None

    async def connect(self) -> None:
        self.ws = await websockets.connect(self.url, compression=None, max_size=1 << 24)
        self._reader = asyncio.get_running_loop().create_task(self._read())
        await self.ws.send(msgspec.json.encode({"type": "hello", "token": self.token,
                                                "session": self.session, "after": self.after,
                                                "device": self.name, "create": True}).decode())
        await self.wait(lambda f: f["type"] in ("live", "error"))

    async def _read(self) -> None:
        try:
            async for message in self.ws:
                self.messages.append(message if isinstance(message, str) else message.decode())
                self._changed.set()
        finally:
            self._changed.set()

    async def wait(self, predicate, start: int = 0, timeout: float = 10.0) -> dict:
        async def scan() -> dict:
            index = start
            while True:
                while index < len(self.messages):
                    frame = msgspec.json.decode(self.messages[index])
                    index += 1
                    if predicate(frame):
                        return frame
                if self._reader.done():
                    raise ConnectionError(f"{self.name}: closed before the frame came")
                self._changed.clear()
                if index == len(self.messages):
                    await self._changed.wait()
        return await asyncio.wait_for(scan(), timeout)

    async def command(self, command: dict, command_id: str, entropy: str) -> dict:
        frame: dict[str, Any] = {"type": "command", "id": command_id, "command": command}
        if entropy:
            frame["entropy"] = entropy
        start = len(self.messages)
        await self.ws.send(msgspec.json.encode(frame).decode())
        return await self.wait(lambda f: f["type"] in ("ack", "reject", "error")
                               and f.get("id") == command_id, start)

    async def sync(self) -> None:
        start = len(self.messages)
        await self.ws.send('{"type":"ping"}')
        await self.wait(lambda f: f["type"] == "pong", start)

    async def close(self) -> None:
        await self.ws.close()
        await asyncio.gather(self._reader, return_exceptions=True)

    def kinds(self, *types: str) -> list[str]:
        return [m for m in self.messages if msgspec.json.decode(m)["type"] in types]


async def observe(venue: Venue, session: str, seed: bytes, script: list[Step],
                  characters: list[str], viewers: list[str],
                  resolve: Callable[[Venue, str, dict], dict] | None = None) -> dict[str, dict[str, Any]]:
    """Plays ``script`` in ``session`` of ``venue`` with a device per character, one for
    the storyteller and one for the wall (``"wall"``), and returns what each of
    ``viewers`` got (see the module doc). ``resolve(venue, session, command)`` may fill a
    command from the server's state just before it is sent (an id only the server knows)."""
    plant_seed(venue, session, seed)
    tokens = {c: venue.token("player", c, session) for c in characters}
    tokens["st"] = venue.token("storyteller", session=session)
    tokens["wall"] = venue.token("observer", session=session)
    devices = {name: _Raw(venue.ws_url, token, session, f"{session}-{name}")
               for name, token in tokens.items()}
    for device in devices.values():
        await device.connect()
    replies: dict[str, list[str]] = {name: [] for name in devices}
    for index, step in enumerate(script):
        device = devices[step.who]
        command = resolve(venue, session, step.command) if resolve else step.command
        answer = await device.command(command, f"{session}-{index}", step.entropy)
        assert answer["type"] in ("ack", "reject"), (step, answer)
        replies[step.who].append(msgspec.json.encode(answer).decode())
    for device in devices.values():
        await device.sync()
    seen: dict[str, dict[str, Any]] = {}
    for name in viewers:
        device = devices[name]
        seen[name] = {"live": device.kinds("event", "live"), "replies": replies[name]}
    for device in devices.values():
        await device.close()
    for name in viewers:
        fresh = _Raw(venue.ws_url, tokens[name], session, f"{session}-{name}-again")
        await fresh.connect()
        await fresh.sync()
        await fresh.close()
        seen[name]["resync"] = fresh.kinds("event", "live", "welcome")
        with httpx.Client(base_url=venue.url, headers={"Authorization": f"Bearer {tokens[name]}"}) as http:
            bodies = {}
            for path, params in (("events", {"limit": 5000}), ("state", {}), ("state/done", {"limit": 3}),
                                 ("state/done", {"after": 1}), ("review/verify", {})):
                response = http.get(f"/sessions/{session}/{path}", params=params)
                bodies[f"{path}?{sorted(params.items())}"] = (response.status_code, response.content)
            for fmt in EXPORTS:
                response = http.get(f"/sessions/{session}/export", params={"format": fmt})
                bodies[f"export.{fmt}"] = (response.status_code, mask_times(response.content))
        seen[name]["http"] = bodies
    return seen


def differences(a: dict[str, dict[str, Any]], b: dict[str, dict[str, Any]]) -> list[str]:
    """Where two observations differ: viewer, channel and the first differing item."""
    out = []
    for viewer in a:
        for channel in a[viewer]:
            x, y = a[viewer][channel], b[viewer][channel]
            if x == y:
                continue
            if isinstance(x, dict):
                for key in x:
                    if x[key] != y[key]:
                        out.append(f"{viewer} {channel} {key}: {_first_diff(x[key], y[key])}")
            else:
                out.append(f"{viewer} {channel}: {_first_diff(x, y)}")
    return out


def _first_diff(x: Any, y: Any) -> str:
    if isinstance(x, list) and isinstance(y, list):
        for i, (p, q) in enumerate(zip(x, y)):
            if p != q:
                return f"item {i}: {p!r} != {q!r}"
        return f"lengths {len(x)} != {len(y)}"
    if isinstance(x, tuple):
        x, y = x[1], y[1]
    i = next((i for i, (p, q) in enumerate(zip(x, y)) if p != q), min(len(x), len(y)))
    return f"at byte {i}: {x[max(0, i - 80):i + 80]!r} != {y[max(0, i - 80):i + 80]!r}"
