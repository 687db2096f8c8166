"""One flooding player against 60 honest phones: the honest phones' ack p99 before and
during the flood, side by side, and what the flooder got through (server/core/limits.py).

The flooder holds one join link and does what the venue test did: 20 sockets and HTTP
posts at once, each sending commands as fast as the server answers. The honest phones each
send one ``take_action`` a second on their own socket. The figures are ratios beside the
same run's baseline, not thresholds.

    .venv/bin/python bench/flood.py [--phones 60] [--seconds 10]
"""

from __future__ import annotations

import argparse
import asyncio
import collections
import itertools
import multiprocessing
import statistics
import sys
import tempfile
import time
from pathlib import Path

import httpx
import msgspec
import websockets

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
from bench.harness import ServerProcess, prepare_venue  # noqa: E402

_ids = itertools.count(1)
REFUSED: collections.Counter[str] = collections.Counter()  # honest commands not acked, by code


def command(character: str) -> dict:
    return {"type": "command", "id": f"b{next(_ids)}", "command": {"type": "take_action", "character": character}}


async def phone(url: str, session: str, character: str, token: str, until: float, out: list[float],
                start: asyncio.Event) -> None:
    async with websockets.connect(url, compression=None, max_size=None) as ws:
        await ws.send(msgspec.json.encode({"type": "hello", "token": token, "session": session}).decode())
        while msgspec.json.decode(await ws.recv())["type"] != "live":
            pass
        await start.wait()
        while time.perf_counter() < until:
            frame = command(character)
            t0 = time.perf_counter()
            await ws.send(msgspec.json.encode(frame).decode())
            while True:
                reply = msgspec.json.decode(await ws.recv())
                if reply.get("id") == frame["id"]:
                    break
            if reply["type"] == "ack":
                out.append(time.perf_counter() - t0)
            else:
                REFUSED[reply.get("code") or reply["type"]] += 1
            await asyncio.sleep(max(0.0, 1.0 - (time.perf_counter() - t0)))


async def flood_socket(url: str, session: str, character: str, token: str, until: float, got: list[int]) -> None:
    try:
        async with websockets.connect(url, compression=None, max_size=None) as ws:
            await ws.send(msgspec.json.encode({"type": "hello", "token": token, "session": session}).decode())

            async def read() -> None:
                async for raw in ws:
                    if msgspec.json.decode(raw)["type"] == "ack":
                        got[0] += 1

            reader = asyncio.create_task(read())
            while time.perf_counter() < until:
                await ws.send(msgspec.json.encode(command(character)).decode())
                await asyncio.sleep(0.002)
            reader.cancel()
    except (websockets.ConnectionClosed, OSError):
        got[1] += 1  # refused or closed


async def flood_http(base: str, session: str, character: str, token: str, until: float, got: list[int]) -> None:
    async with httpx.AsyncClient(base_url=base, headers={"Authorization": f"Bearer {token}"}) as http:
        while time.perf_counter() < until:
            frame = command(character)
            reply = await http.post(f"/sessions/{session}/commands", json={"id": frame["id"], "command": frame["command"]})
            if reply.status_code == 200 and reply.json()["type"] == "ack":
                got[0] += 1
            elif reply.status_code == 429:
                got[2] += 1
                await asyncio.sleep(float(reply.headers.get("retry-after", "1")) / 10)


async def phase(server: ServerProcess, venue, phones: int, seconds: float, flood: bool) -> tuple[list[float], list[int]]:
    start = asyncio.Event()
    until = time.perf_counter() + seconds + 3
    latencies: list[float] = []
    honest = venue.players[:phones]
    tasks = [asyncio.create_task(phone(server.ws_url, venue.session, c, t, until, latencies, start)) for c, t in honest]
    await asyncio.sleep(2)  # every phone connected and resynced
    got = [0, 0, 0]  # acks, sockets refused or closed, 429s
    flooder = None
    if flood:  # its own process: a client loop this busy would starve the honest phones' own
        queue = multiprocessing.get_context("spawn").Queue()
        flooder = multiprocessing.get_context("spawn").Process(target=flood_process, args=(
            server.url, server.ws_url, venue.session, *venue.players[phones], seconds + 3, queue))
        flooder.start()
    start.set()
    failed = [r for r in await asyncio.gather(*tasks, return_exceptions=True) if isinstance(r, BaseException)]
    if flooder is not None:
        got = await asyncio.to_thread(queue.get, True, 60)
        flooder.join(10)
    got.append(len(failed))
    return latencies, got


def flood_process(base: str, ws_url: str, session: str, character: str, token: str, seconds: float, queue) -> None:
    async def run() -> list[int]:
        until = time.perf_counter() + seconds
        got = [0, 0, 0]
        await asyncio.gather(*[flood_socket(ws_url, session, character, token, until, got) for _ in range(20)],
                             *[flood_http(base, session, character, token, until, got) for _ in range(4)],
                             return_exceptions=True)
        return got

    queue.put(asyncio.run(run()))


def p(values: list[float], q: float) -> float:
    return statistics.quantiles(values, n=100)[int(q) - 1] * 1000 if len(values) > 1 else float("nan")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--phones", type=int, default=60)
    parser.add_argument("--seconds", type=float, default=10)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as folder:
        db = Path(folder) / "flood.db"
        venue = prepare_venue(db, players=args.phones + 1)
        with ServerProcess(db) as server:
            before, _ = asyncio.run(phase(server, venue, args.phones, args.seconds, flood=False))
            during, got = asyncio.run(phase(server, venue, args.phones, args.seconds, flood=True))
    span = args.seconds + 1
    print(f"{args.phones} honest phones, one take_action a second each; one flooder: 20 sockets + 4 HTTP loops")
    print(f"{'':28}{'before':>10}{'during':>10}{'ratio':>8}")
    for label, q in (("ack p50 (ms)", 50), ("ack p99 (ms)", 99)):
        b, d = p(before, q), p(during, q)
        print(f"{label:28}{b:10.1f}{d:10.1f}{d / b:8.2f}")
    print(f"{'honest acks':28}{len(before):10}{len(during):10}")
    print(f"flooder: {got[0] / span:.1f} commands/s acknowledged (documented rate 20/s), "
          f"{got[1]} sockets refused or closed, {got[2]} HTTP 429; {got[3]} phone tasks failed")
    if REFUSED:
        print(f"honest commands not acked: {dict(REFUSED)}")


if __name__ == "__main__":
    main()
