"""The night's commands sent to the server under test over its websocket, as phones send
them (bench/night.py ``--plays``): the server decides, folds and appends each one itself,
so it holds the session's true state and its command index all night, as at a venue.

One socket per character and one for the storyteller, each with its own token. The random
players of ``conteur simulate`` pick each command from the state as it stands: the
storyteller's socket receives every event in full, and this side folds them into a copy
of the true state before the next pick. One command at a time, waiting for its events:
the same night as the players of ``play_hour`` in one process, the server's own draws.
"""

from __future__ import annotations

import asyncio
import random

import msgspec
import websockets

from conteur.events import game, wire
from conteur.events.game import GameState
from conteur.server.cli.simulate import next_commands

_event = msgspec.json.Decoder(game.AnyEvent)


class _Socket:
    """One device: its frames read all the time (a device that does not read is dropped),
    acks and rejects handed to the command waiting for them, events kept if asked."""

    def __init__(self, ws, keep_events: bool):
        self.ws = ws
        self.keep = keep_events
        self.events: list[tuple[int, game.Event]] = []
        self.seen = 0
        self.waiting: dict[str, asyncio.Future] = {}
        self.moved = asyncio.Event()
        self.reader = asyncio.get_running_loop().create_task(self._read())

    async def _read(self) -> None:
        try:
            async for message in self.ws:
                frame = wire.decode_server(message)
                for one in (frame.frames if isinstance(frame, wire.Batch) else (frame,)):
                    self._take(wire.decode_server(one) if isinstance(one, msgspec.Raw) else one)
                self.moved.set()
        finally:
            for future in self.waiting.values():
                if not future.done():
                    future.set_exception(ConnectionError("the server closed the socket"))
            self.moved.set()

    def _take(self, frame) -> None:
        if isinstance(frame, wire.EventReceived):
            self.seen = frame.seq
            if self.keep:
                self.events.append((frame.seq, _event.decode(frame.event)))
        elif isinstance(frame, (wire.Ack, wire.Reject, wire.Error)):
            future = self.waiting.pop(getattr(frame, "id", None) or "", None)
            if future is not None and not future.done():
                future.set_result(frame)

    async def command(self, command_id: str, command) -> wire.Frame:
        future = self.waiting[command_id] = asyncio.get_running_loop().create_future()
        await self.ws.send(wire.encode(wire.CommandFrame(id=command_id, command=command)))
        return await asyncio.wait_for(future, 60)

    async def until(self, seq: int) -> None:
        while self.seen < seq:
            if self.reader.done():
                raise ConnectionError("the storyteller's socket closed")
            self.moved.clear()
            if self.seen < seq:
                await asyncio.wait_for(self.moved.wait(), 60)


async def _connect(url: str, token: str, session: str, after: int, device: str, keep: bool) -> _Socket:
    ws = await websockets.connect(url, compression=None, max_size=1 << 24)
    await ws.send(wire.encode(wire.Hello(token=token, session=session, after=after, device=device, batch=True)))
    while True:  # the resync (nothing after ``after``) ends with ``live``
        frame = wire.decode_server(await ws.recv())
        frames = [wire.decode_server(f) for f in frame.frames] if isinstance(frame, wire.Batch) else [frame]
        if any(isinstance(f, wire.Error) for f in frames):
            raise ConnectionError(f"hello refused: {frames}")
        if any(isinstance(f, wire.Live) for f in frames):
            return _Socket(ws, keep)


async def play_served(url: str, session: str, storyteller: str, players: dict[str, str],
                      state: GameState, rng: random.Random, commands: int, first_id: int) -> tuple[GameState, int]:
    """Plays ``commands`` random players' steps through the server at ``url`` (its
    ``/ws``), from ``state`` (the session's true state, ``head`` its last seq); returns
    the state after them and the last command id used."""
    after = state.head
    sockets = {None: await _connect(url, storyteller, session, after, "night-storyteller", True)}
    for character, token in players.items():
        sockets[character] = await _connect(url, token, session, after, f"night-{character}", False)
    told = sockets[None]
    n = first_id
    try:
        for _ in range(commands):
            for actor, command in next_commands(rng, "met", state):
                n += 1
                answer = await sockets[actor.character].command(f"night-{n}", command)
                if isinstance(answer, wire.Error):
                    raise RuntimeError(f"the server refused a frame: {answer.code} {answer.message}")
                if isinstance(answer, wire.Ack) and answer.seqs:
                    await told.until(answer.seqs[-1])
                if told.events:
                    state = msgspec.structs.replace(game.fold([e for _, e in told.events], state),
                                                    head=told.events[-1][0])
                    told.events.clear()
    finally:
        for socket in sockets.values():
            await socket.ws.close()
            await asyncio.gather(socket.reader, return_exceptions=True)
    return state, n
