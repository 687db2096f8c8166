"""The baseline for fan-out and resync: a bare ``websockets`` broadcast server.

It speaks just enough of docs/protocol.md for the load generator's devices to run
unchanged against it: ``hello`` -> ``welcome``, the frames after ``after`` (in ``batch``
frames of 256 when the hello asks, as conteur does), ``live``; ``command`` -> one ``event`` frame broadcast to every live device (the same size
as conteur's ``session.went_out_of_game``) and an ``ack`` to the sender; ``ping`` ->
``pong``. No rules, no store, no redaction: what is left is the cost of websockets itself,
which is what conteur's figures are divided by.

    python bench/baseline_ws.py PORT
"""

from __future__ import annotations

import asyncio
import http
import sys

import msgspec
from websockets.asyncio.server import broadcast, serve

_decode = msgspec.json.Decoder().decode
_encode = msgspec.json.Encoder().encode


class Baseline:
    def __init__(self) -> None:
        self.seq = 0
        self.history: list[str] = []
        self.live: set = set()

    async def handler(self, ws) -> None:
        try:
            async for message in ws:
                frame = _decode(message)
                kind = frame.get("type")
                if kind == "hello":
                    after = int(frame.get("after", 0))
                    head = self.seq
                    await ws.send(_encode({"type": "welcome", "viewer": {"role": "player"},
                                           "session": frame.get("session", ""), "head": head}).decode())
                    backlog = self.history[after:head]  # seq n is history[n - 1]
                    if frame.get("batch"):  # the same grouping as conteur's (256 a message)
                        backlog = ['{"type":"batch","frames":[' + ",".join(backlog[i:i + 256]) + "]}"
                                   for i in range(0, len(backlog), 256)]
                    for text in backlog:
                        await ws.send(text)
                    await ws.send(_encode({"type": "live", "head": head}).decode())
                    self.live.add(ws)
                elif kind == "command":
                    command = frame.get("command") or {}
                    self.seq += 1
                    event = _encode({"type": "event", "seq": self.seq, "event": {
                        "type": "session.went_out_of_game", "character": command.get("character", ""),
                        "reason": command.get("reason", "")}}).decode()
                    self.history.append(event)
                    broadcast(self.live, event)
                    broadcast([ws], _encode({"type": "ack", "id": frame["id"], "seqs": [self.seq]}).decode())
                elif kind == "ping":
                    await ws.send('{"type":"pong"}')
        finally:
            self.live.discard(ws)


def health(connection, request):
    if request.path == "/health":
        return connection.respond(http.HTTPStatus.OK, "ok\n")
    return None


async def main(port: int) -> None:
    baseline = Baseline()
    async with serve(baseline.handler, "127.0.0.1", port, compression=None, max_size=1 << 20,
                     process_request=health, ping_interval=None) as server:
        await server.serve_forever()


PROGRAM = "import sys, asyncio; from bench.baseline_ws import main; asyncio.run(main(int(sys.argv[1])))"

if __name__ == "__main__":
    asyncio.run(main(int(sys.argv[1])))
