"""Simulated devices over real websockets, recording when every frame arrived.

A device records ``(monotonic time, text)`` for each frame and parses nothing on the hot
path (the load generator shares this 2-core machine with the server: every microsecond
it spends is taken from the server); figures are computed after each phase. Each device
plays one character and alternates ``out_of_game`` / ``back_in_game``: public events,
so every command fans out to every device.

A device with ``sealed`` set speaks through the venue channel (events/channel.py), as the
real clients do: ``open`` first, then every message sealed and opened; it opens each
message as it arrives, so ``frames`` holds the frames themselves.
"""

from __future__ import annotations

import asyncio
import itertools
import time

import msgspec
import websockets

from conteur.events import channel
from websockets.client import ClientProtocol
from websockets.frames import Frame, Opcode
from websockets.uri import parse_uri

_now = time.monotonic


class _Head(msgspec.Struct):
    type: str
    seq: int = 0
    id: str = ""
    seqs: list[int] = []
    head: int = 0


class _Batch(msgspec.Struct):
    frames: list[_Head]


_head = msgspec.json.Decoder(_Head).decode
_batch = msgspec.json.Decoder(_Batch).decode
_encode = msgspec.json.Encoder().encode


class Device:
    def __init__(self, url: str, token: str, character: str, session: str, name: str):
        self.url, self.token, self.character, self.session, self.name = url, token, character, session, name
        self.frames: list[tuple[float, str]] = []
        self.live = asyncio.Event()
        self.ws = None
        self.reader: asyncio.Task | None = None
        self.out = False  # whether its character is out of game, as last commanded
        self.ids = itertools.count()
        self.sent: dict[str, float] = {}
        self.n_events = 0
        self.n_replies = 0
        self.sealed = False
        self.channel: channel.Channel | None = None
        self._opened: asyncio.Future | None = None
        self._nonce = ""

    def _hello(self, after: int) -> str:
        # batch: a backlog (a resync) comes as batch frames, as the real clients ask
        hello = {"type": "hello", "session": self.session, "after": after, "device": self.name, "batch": True}
        if not self.sealed:
            hello["token"] = self.token
        return _encode(hello).decode()

    async def _open_channel(self) -> None:
        self.channel = None
        self._nonce = channel.new_nonce()
        self._opened = asyncio.get_running_loop().create_future()
        await self._send(_encode({"type": "open", "id": channel.key_id_of_token(self.token),
                                  "nonce": self._nonce}).decode())
        await asyncio.wait_for(self._opened, 60)

    def _keyed(self, message: str) -> None:
        nonce = msgspec.json.decode(message)["nonce"]
        self.channel = channel.client_side(channel.psk_of_token(self.token), channel.key_id_of_token(self.token),
                                           self._nonce, nonce)
        self._opened.set_result(None)

    async def connect(self, after: int = 0) -> None:
        self.live.clear()
        self.ws = await websockets.connect(self.url, compression=None, max_size=None,
                                           ping_interval=None, open_timeout=60, close_timeout=2)
        self.reader = asyncio.get_running_loop().create_task(self._read())
        if self.sealed:
            await self._open_channel()
        await self._send(self._hello(after))

    async def _read(self) -> None:
        take = self._take
        try:
            async for message in self.ws:
                take(message)
        except websockets.ConnectionClosed:
            pass

    def _take(self, message: str) -> None:
        if self.sealed:
            if self.channel is None:
                self._keyed(message)
                return
            message = self.channel.open(message)
        self.frames.append((_now(), message))
        if message.startswith('{"type":"event"'):
            self.n_events += 1
        elif message.startswith(('{"type":"ack"', '{"type":"reject"', '{"type":"error"')):
            self.n_replies += 1
        elif message.startswith('{"type":"live"'):
            self.live.set()
        elif message.startswith('{"type":"batch"'):
            self.n_events += message.count('{"type":"event"')
            self.n_replies += (message.count('{"type":"ack"') + message.count('{"type":"reject"')
                               + message.count('{"type":"error"'))
            if '{"type":"live"' in message:
                self.live.set()

    async def _send(self, text: str) -> None:
        await self.ws.send(self.channel.seal(text) if self.channel is not None else text)

    def stop_reading(self) -> None:
        """A phone in a pocket: it stays connected and reads nothing more."""
        if self.reader is not None:
            self.reader.cancel()

    async def close(self) -> None:
        if self.ws is not None:
            await self.ws.close()
        if self.reader is not None:
            await asyncio.gather(self.reader, return_exceptions=True)

    async def toggle(self) -> str:
        """Sends the next command of its character; returns its id."""
        command_id = f"{self.name}-{next(self.ids)}"
        if self.out:
            command = {"type": "back_in_game", "character": self.character}
        else:
            command = {"type": "out_of_game", "character": self.character, "reason": "bench"}
        self.out = not self.out
        self.sent[command_id] = _now()
        await self._send(_encode({"type": "command", "id": command_id, "command": command}).decode())
        return command_id

    def parsed(self, since: int = 0) -> list[tuple[float, _Head]]:
        out = []
        for t, text in self.frames[since:]:
            if text.startswith('{"type":"batch"'):
                out += [(t, f) for f in _batch(text).frames]
            else:
                out.append((t, _head(text)))
        return out


class SansIODevice(Device):
    """The same device over websockets' sans-I/O ``ClientProtocol`` on an asyncio
    ``Protocol``: the same library's framing, handshake, pings and close, without the
    asyncio connection's per-message futures and queues. At 300 devices x 200 events/s
    (60,000 frames/s into one process) the generator's own cost is what the bare
    broadcast baseline measured with the asyncio client; this one costs a fraction of it,
    so both servers are measured, not the generator (BENCHMARKS.md, the two clients)."""

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.protocol: ClientProtocol | None = None
        self.transport: asyncio.Transport | None = None
        self.lost: asyncio.Future | None = None

    async def connect(self, after: int = 0) -> None:
        self.live.clear()
        loop = asyncio.get_running_loop()
        uri = parse_uri(self.url)
        self.protocol = protocol = ClientProtocol(uri, max_size=None)
        opened, self.lost = loop.create_future(), loop.create_future()
        self.transport, _ = await asyncio.wait_for(loop.create_connection(
            lambda: _Wire(self, protocol, opened), uri.host, uri.port), 60)
        protocol.send_request(protocol.connect())
        self._flush()
        await asyncio.wait_for(opened, 60)
        if self.sealed:
            await self._open_channel()
        await self._send(self._hello(after))

    def _flush(self) -> None:
        for data in self.protocol.data_to_send():
            if data:
                self.transport.write(data)
            else:  # the protocol's end of stream, after a close handshake
                self.transport.close()

    async def _send(self, text: str) -> None:
        if self.channel is not None:
            text = self.channel.seal(text)
        self.protocol.send_text(text.encode())
        self._flush()

    def stop_reading(self) -> None:
        self.transport.pause_reading()

    async def close(self) -> None:
        if self.transport is None or self.transport.is_closing():
            return
        self.protocol.send_close()
        self._flush()
        try:
            await asyncio.wait_for(asyncio.shield(self.lost), 2)
        except asyncio.TimeoutError:
            self.transport.abort()


class _Wire(asyncio.Protocol):
    def __init__(self, device: SansIODevice, protocol: ClientProtocol, opened: asyncio.Future):
        self.device, self.protocol, self.opened = device, protocol, opened
        self.parts: list[bytes] = []

    def data_received(self, data: bytes) -> None:
        protocol = self.protocol
        protocol.receive_data(data)
        for event in protocol.events_received():
            if isinstance(event, Frame):
                if event.opcode is Opcode.TEXT or event.opcode is Opcode.CONT:
                    self.parts.append(event.data)
                    if event.fin:
                        self.device._take(b"".join(self.parts).decode())
                        self.parts = []
            elif not self.opened.done():  # the handshake's response
                if protocol.handshake_exc is not None:
                    self.opened.set_exception(protocol.handshake_exc)
                else:
                    self.opened.set_result(None)
        self.device._flush()  # pongs, the close handshake

    def connection_lost(self, exc) -> None:
        if not self.opened.done():
            self.opened.set_exception(exc or ConnectionError("closed during the handshake"))
        if not self.device.lost.done():
            self.device.lost.set_result(None)


CLIENTS = {"sansio": SansIODevice, "asyncio": Device}


def percentile(values: list[float], p: float) -> float:
    if not values:
        return float("nan")
    ordered = sorted(values)
    k = min(len(ordered) - 1, max(0, round(p / 100 * (len(ordered) - 1))))
    return ordered[k]


class Phase(msgspec.Struct, kw_only=True):
    """What one timed phase of commands gave."""

    rate: float  # commands per second asked
    sent: int
    send_rate: float  # commands per second actually sent
    acks: list[float]  # command -> ack, seconds
    fanout: list[float]  # command -> the last device, per command that reached every device
    deliveries: list[float]  # command -> each device, every delivery
    incomplete: int  # commands whose event did not reach every device
    rejected: int
    load_cpu: float = 0.0  # the load generator's own CPU share over the phase (1.0: a core)


async def run_phase(devices: list[Device], rate: float, seconds: float,
                    grace: float = 3.0) -> Phase:
    """Sends ``rate`` commands/s round-robin over the devices for ``seconds``."""
    marks = [len(d.frames) for d in devices]
    counts = [(d.n_events, d.n_replies) for d in devices]
    n = max(1, int(rate * seconds))
    order = itertools.cycle(devices)
    start = _now()
    cpu = time.process_time()
    sent_at: dict[str, tuple[Device, float]] = {}
    for i in range(n):
        due = start + i / rate
        delay = due - _now()
        if delay > 0:
            await asyncio.sleep(delay)
        device = next(order)
        command_id = await device.toggle()
        sent_at[command_id] = (device, device.sent[command_id])
    send_time = _now() - start
    # wait until every device has every event (bounded by grace)
    deadline = _now() + grace
    while _now() < deadline:
        await asyncio.sleep(0.1)
        if _settled(devices, counts, len(sent_at)):
            break
    cpu = (time.process_time() - cpu) / (_now() - start)
    return msgspec.structs.replace(_figures(devices, marks, sent_at, rate, n, send_time), load_cpu=cpu)


def _settled(devices: list[Device], counts: list[tuple[int, int]], sent: int) -> bool:
    replies = sum(d.n_replies - r for d, (_, r) in zip(devices, counts))
    return replies >= sent and all(d.n_events - e >= sent for d, (e, _) in zip(devices, counts))


def _figures(devices, marks, sent_at, rate, n, send_time) -> Phase:
    seq_sent: dict[int, float] = {}
    acks: list[float] = []
    rejected = 0
    for d, m in zip(devices, marks):
        for t, frame in d.parsed(m):
            if frame.type == "ack" and frame.id in sent_at:
                t0 = sent_at[frame.id][1]
                acks.append(t - t0)
                for s in frame.seqs:
                    seq_sent[s] = t0
            elif frame.type in ("reject", "error") and frame.id in sent_at:
                rejected += 1
    last: dict[int, float] = {}
    reached: dict[int, int] = {}
    deliveries: list[float] = []
    for d, m in zip(devices, marks):
        for t, frame in d.parsed(m):
            if frame.type == "event" and frame.seq in seq_sent:
                latency = t - seq_sent[frame.seq]
                deliveries.append(latency)
                reached[frame.seq] = reached.get(frame.seq, 0) + 1
                if latency > last.get(frame.seq, -1.0):
                    last[frame.seq] = latency
    complete = [last[s] for s, c in reached.items() if c == len(devices)]
    return Phase(rate=rate, sent=n, send_rate=n / send_time if send_time else rate, acks=acks,
                 fanout=complete, deliveries=deliveries, incomplete=len(seq_sent) - len(complete),
                 rejected=rejected)


async def drain(devices: list[Device], quiet: float = 1.0, timeout: float = 120.0) -> None:
    """Until no device has received anything for ``quiet`` seconds: a phase's backlog
    must not leak into the next one."""
    loop = asyncio.get_running_loop()
    deadline = loop.time() + timeout
    last = -1
    while loop.time() < deadline:
        total = sum(len(d.frames) for d in devices)
        if total == last:
            return
        last = total
        await asyncio.sleep(quiet)


async def connect_all(devices: list[Device], after: dict[str, int] | None = None,
                      timeout: float = 60.0) -> float:
    """Connects every device at once; returns the seconds until the last is live."""
    t0 = _now()
    await asyncio.gather(*(d.connect((after or {}).get(d.name, 0)) for d in devices))
    try:
        await asyncio.wait_for(asyncio.gather(*(d.live.wait() for d in devices)), timeout)
    except asyncio.TimeoutError:
        live = sum(d.live.is_set() for d in devices)
        print(f"  ({live}/{len(devices)} devices live after {timeout:g} s; "
              f"{sum(d.n_events for d in devices)} events received)", flush=True)
        return float("inf")
    return _now() - t0


async def close_all(devices: list[Device]) -> None:
    await asyncio.gather(*(d.close() for d in devices), return_exceptions=True)


def event_seqs(device: Device) -> list[int]:
    return [f.seq for _, f in device.parsed() if f.type == "event"]
