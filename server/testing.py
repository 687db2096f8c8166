"""A scripted device for tests and benchmarks: a real ``websockets`` client speaking the
protocol of docs/protocol.md, recording every frame it receives.

    async with Device(served.ws_url, token, "night-1") as anna:
        ack = await anna.command({"type": "throw", ...})
        await anna.wait_event("met.throws_revealed")
"""

from __future__ import annotations

import asyncio
import itertools
from typing import Any, Callable

import msgspec
import websockets

_decode = msgspec.json.decode
_encode = msgspec.json.encode
_ids = itertools.count(1)


class Device:
    # called with ("sent" or "received", frame) for every frame this device sends as a dict
    # and every frame it receives; raising says the frame is not as described. Tests set
    # the AsyncAPI document's check (tests/support/asyncapi_support.py); a received frame that fails
    # it fails the test at its next wait or at close, a sent one at once.
    frame_check: Callable[[str, dict], None] | None = None

    def __init__(self, url: str, token: str, session: str = "", *, device: str = "",
                 after: int = 0, origin: str | None = None, hello: bool = True,
                 batch: bool = False, create: bool = True, channel: bool = False):
        self.url = url
        # through the venue channel (events/channel.py): the hello carries no token, and
        # ``frames`` holds what was opened
        self.use_channel = channel
        self.channel: Any = None
        self.token = token
        self.session = session
        self.device = device or f"device-{next(_ids)}"
        self.after = after
        self.origin = origin
        self.say_hello = hello
        self.batch = batch
        # tests open sessions from the storyteller's socket: say so in hello
        self.create = create
        self.messages = 0  # websocket messages received (a batch is one)
        self.frames: list[dict] = []  # everything received, in order
        self.welcome: dict | None = None
        self.live_head: int | None = None
        self.ws: Any = None
        self._reader: asyncio.Task | None = None
        self._changed = asyncio.Event()
        self.invalid: list[Exception] = []  # received frames that failed ``frame_check``

    # -- connection ------------------------------------------------------------------

    async def __aenter__(self) -> Device:
        await self.connect()
        return self

    async def __aexit__(self, *exc) -> None:
        await self.close()

    async def connect(self) -> None:
        kwargs: dict[str, Any] = {"compression": None, "max_size": 1 << 24}
        if self.origin is not None:
            kwargs["origin"] = self.origin
        self.ws = await websockets.connect(self.url, **kwargs)
        if self.use_channel:
            await self._open_channel()
        self._reader = asyncio.get_running_loop().create_task(self._read())
        if self.say_hello:
            hello = {"type": "hello", "token": self.token, "session": self.session,
                     "after": self.after, "device": self.device}
            if self.use_channel:
                del hello["token"]
            if self.batch:
                hello["batch"] = True
            if self.create:
                hello["create"] = True
            await self.send(hello)
            await self.wait_for(lambda f: f["type"] in ("live", "error"))

    async def close(self) -> None:
        if self.ws is not None:
            await self.ws.close()
        if self._reader is not None:
            await asyncio.gather(self._reader, return_exceptions=True)
        self._raise_invalid()

    async def _open_channel(self) -> None:
        from conteur.events import channel

        key_id, nonce = channel.key_id_of_token(self.token), channel.new_nonce()
        opening = {"type": "open", "id": key_id, "nonce": nonce}
        if Device.frame_check is not None:
            Device.frame_check("sent", opening)
        await self.ws.send(_encode(opening).decode())
        opened = _decode(await self.ws.recv())
        if Device.frame_check is not None:
            Device.frame_check("received", opened)
        if opened.get("type") != "opened":  # refused at open (an address over its bad tokens)
            self.frames.append(opened)
            try:
                await asyncio.wait_for(self.ws.wait_closed(), 10)
            except asyncio.TimeoutError:
                pass
            raise ConnectionError(f"closed ({self.ws.close_code}) at open: {opened}")
        self.channel = channel.client_side(channel.psk_of_token(self.token), key_id, nonce, opened["nonce"])

    def _raise_invalid(self) -> None:
        if self.invalid:
            raise self.invalid[0]

    async def _read(self) -> None:
        try:
            async for message in self.ws:
                self.messages += 1
                if self.channel is not None:
                    if Device.frame_check is not None:
                        Device.frame_check("received", _decode(message))
                    message = self.channel.open(message)
                frame = _decode(message)
                check = Device.frame_check
                if check is not None:
                    try:
                        check("received", frame)
                    except Exception as exc:  # noqa: BLE001 - kept for the test, which fails on it
                        self.invalid.append(exc)
                for one in frame["frames"] if frame["type"] == "batch" else (frame,):
                    self._take(one)
                self._changed.set()
        finally:
            self._changed.set()

    def _take(self, frame: dict) -> None:
        self.frames.append(frame)
        if frame["type"] == "welcome":
            self.welcome = frame
        elif frame["type"] == "live":
            self.live_head = frame["head"]
        elif frame["type"] == "event":
            self.after = max(self.after, frame["seq"])

    @property
    def closed(self) -> bool:
        return self._reader is None or self._reader.done()

    @property
    def close_code(self) -> int | None:
        return None if self.ws is None else self.ws.close_code

    # -- frames ----------------------------------------------------------------------

    async def send(self, frame: dict | str | bytes) -> None:
        """Sends a frame; one given as text or bytes is sent as it is, unchecked (the
        malformed frames of the hostile tests)."""
        check = Device.frame_check
        if check is not None and isinstance(frame, dict):
            check("sent", frame)
        text = frame if isinstance(frame, (str, bytes)) else _encode(frame).decode()
        if self.channel is not None:
            text = self.channel.seal(text)
            if check is not None:
                check("sent", _decode(text))
        await self.ws.send(text)

    async def wait_for(self, predicate: Callable[[dict], bool], timeout: float = 10.0,
                       start: int = 0) -> dict:
        """The first frame (from index ``start``) matching ``predicate``."""
        async def scan() -> dict:
            index = start
            while True:
                self._raise_invalid()
                while index < len(self.frames):
                    frame = self.frames[index]
                    index += 1
                    if predicate(frame):
                        return frame
                if self.closed:
                    raise ConnectionError(f"closed ({self.close_code}) before the frame came")
                self._changed.clear()
                if index < len(self.frames):
                    continue
                await self._changed.wait()
        return await asyncio.wait_for(scan(), timeout)

    async def command(self, command: dict | msgspec.Struct, *, id: str | None = None,
                      entropy: str = "", timeout: float = 10.0) -> dict:
        """Sends a command and returns its ``ack``, ``reject`` or ``error`` frame."""
        if isinstance(command, msgspec.Struct):
            command = msgspec.to_builtins(command)
        command_id = id or f"{self.device}-cmd-{next(_ids)}"
        frame: dict[str, Any] = {"type": "command", "id": command_id, "command": command}
        if entropy:
            frame["entropy"] = entropy
        start = len(self.frames)
        await self.send(frame)
        return await self.wait_for(
            lambda f: f["type"] in ("ack", "reject", "error") and f.get("id") == command_id,
            timeout, start)

    async def next_error(self, timeout: float = 10.0) -> dict:
        start = len(self.frames)
        return await self.wait_for(lambda f: f["type"] == "error", timeout, start)

    async def wait_event(self, event_type: str, timeout: float = 10.0, **fields) -> dict:
        def match(f: dict) -> bool:
            if f["type"] != "event" or f["event"]["type"] != event_type:
                return False
            return all(f["event"].get(k) == v for k, v in fields.items())
        return (await self.wait_for(match, timeout))["event"]

    async def sync(self, timeout: float = 10.0) -> None:
        """Until everything the server queued for this device before now has arrived:
        a ``pong`` leaves through the same queue as the events."""
        start = len(self.frames)
        await self.send({"type": "ping"})
        await self.wait_for(lambda f: f["type"] == "pong", timeout, start)

    @property
    def events(self) -> list[tuple[int, dict]]:
        return [(f["seq"], f["event"]) for f in self.frames if f["type"] == "event"]

    def types(self) -> list[str]:
        return [e["type"] for _, e in self.events]


class Venue:
    """A chronicle served on loopback for a test: ``with Venue(tmp_path / "c.db") as v``.

    The app opens the database itself, so ``restart()`` is a real stop and start of the
    server process's app on the same file (on a new port: devices must reconnect).
    """

    def __init__(self, path, settings=None):
        self.path = str(path)
        self.settings = settings
        self.served = None

    def __enter__(self) -> Venue:
        self.start()
        return self

    def __exit__(self, *exc) -> None:
        self.stop()

    def start(self) -> None:
        from conteur.server.web.app import Served, create_app

        self.served = Served(create_app(self.path, settings=self.settings, web_dir=None))
        self.served.__enter__()

    def stop(self) -> None:
        if self.served is not None:
            self.served.stop()
            self.served = None

    def restart(self) -> None:
        self.stop()
        self.start()

    @property
    def runtime(self):
        return self.served.runtime

    @property
    def url(self) -> str:
        return self.served.url

    @property
    def ws_url(self) -> str:
        return self.served.ws_url

    def token(self, role: str = "storyteller", character: str | None = None,
              session: str | None = None) -> str:
        return self.runtime.tokens.issue(role, character=character, session=session,
                                         name=character or role)


class SealedHttp:
    """What the web app does for HTTP on plain HTTP (server/web/sealed.py), for tests:
    ``request(method, path, body)`` through the token's HTTP channel; ``httpx`` answers."""

    def __init__(self, url: str, token: str):
        from conteur.events import channel

        import httpx

        self.url = url
        self.http = httpx.Client(base_url=url, timeout=30)
        key_id, nonce = channel.key_id_of_token(token), channel.new_nonce()
        opened = self.http.post("/channel", json={"id": key_id, "nonce": nonce})
        opened.raise_for_status()
        answer = opened.json()
        self.name = answer["channel"]
        up, down = channel.derive(channel.psk_of_token(token), key_id, nonce, answer["nonce"])
        from cryptography.hazmat.primitives.ciphers.aead import ChaCha20Poly1305

        self.up, self.down = ChaCha20Poly1305(up), ChaCha20Poly1305(down)
        self.n = 0
        self.last_body: dict | None = None  # the last sealed request as it went (a replay test resends it)

    def request(self, method: str, path: str, body: Any = None) -> Any:
        import base64

        import httpx

        from conteur.events.channel import _NONCE

        inner = {"method": method, "path": path, "headers": {"content-type": "application/json"},
                 "body": "" if body is None else (body if isinstance(body, str) else _encode(body).decode())}
        n, self.n = self.n, self.n + 1
        box = self.up.encrypt(_NONCE.pack(n), _encode(inner), None)
        self.last_body = {"channel": self.name, "n": n, "box": base64.b64encode(box).decode()}
        outer = self.http.post("/sealed", json=self.last_body)
        if outer.status_code != 200:
            return outer
        plain = _decode(self.down.decrypt(_NONCE.pack(n), base64.b64decode(outer.json()["box"]), None))
        return httpx.Response(plain["status"], headers=plain["headers"], content=base64.b64decode(plain["body"]))

    def close(self) -> None:
        self.http.close()
