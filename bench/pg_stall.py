"""PostgreSQL stalled under a live server: what a venue's phones see for those seconds.

    python bench/pg_stall.py            # 30 devices, 5 commands/s, 20 s before, 20 s stalled
    python bench/pg_stall.py --quick    # smoke run (CI): 5 devices, 4 s before, 4 s stalled

A real ``conteur serve`` (tests/support/pg_support.Serve) on a throwaway PostgreSQL cluster,
``--devices`` websocket devices in one session, each toggling its character out of and into
game (``--rate`` commands/s in all) and retrying a command answered ``unavailable`` with
its id after its ``retry_after``, as a phone's outbox does; each device sends a websocket
ping every second, and a poller asks ``GET /health`` four times a second. After
``--before`` seconds every process of the cluster is stopped (SIGSTOP: a hung host or a
partition) for ``--stall`` seconds, then continued, and the devices go on for ``--after``
seconds. Printed, each beside the same figure in the ``--before`` seconds before the
stall: the p99 of ping and ``/health`` latency during the stall, how long a command waited
for its ``unavailable`` (p99, against the statement timeout), the time from the database's
return to the first ack and to every waiting command acked, and the events logged and
delivered against the commands acked (none lost, none doubled). Asserts nothing.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import random
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench import results  # noqa: E402
from bench.fleet import percentile  # noqa: E402
from bench.harness import prepare_venue  # noqa: E402

ms = 1000.0
now = time.monotonic
GIVE_UP = 120.0  # seconds a device waits for any one answer: far beyond any timeout here


def toggle(character: str, out: bool) -> dict:
    if out:
        return {"type": "back_in_game", "character": character}
    return {"type": "out_of_game", "character": character, "reason": "bench"}


class Run:
    """Every sample of one run, as (monotonic time it was asked, seconds it took)."""

    def __init__(self) -> None:
        self.pings: list[tuple[float, float]] = []
        self.health: list[tuple[float, float, int]] = []
        self.attempts: list[tuple[float, float, str]] = []  # (sent, waited, ack|unavailable|...)
        self.acked: dict[str, list[int]] = {}
        self.acked_at: dict[str, float] = {}
        self.first_sent: dict[str, float] = {}
        self.sending = True


async def player(device, character: str, name: str, interval: float, run: Run) -> None:
    out = False
    count = 0
    await asyncio.sleep(random.uniform(0, interval))
    while run.sending:
        command_id = f"{name}-{count}"
        count += 1
        run.first_sent[command_id] = now()
        while True:
            sent = now()
            answer = await device.command(toggle(character, out), id=command_id, timeout=GIVE_UP)
            kind = answer["type"] if answer["type"] == "ack" else answer.get("code", answer["type"])
            run.attempts.append((sent, now() - sent, kind))
            if answer["type"] == "ack":
                run.acked[command_id] = answer["seqs"]
                run.acked_at[command_id] = now()
                break
            if kind != "unavailable":
                raise RuntimeError(f"{name}: {command_id} answered {answer}")
            await asyncio.sleep(answer.get("retry_after") or 0.5)
        out = not out
        await asyncio.sleep(interval * random.uniform(0.5, 1.5))


async def pinger(device, run: Run, stop: asyncio.Event) -> None:
    while not stop.is_set():
        sent = now()
        try:
            await asyncio.wait_for(await device.ws.ping(), GIVE_UP)
        except asyncio.TimeoutError:
            pass
        run.pings.append((sent, now() - sent))
        await asyncio.sleep(random.uniform(0.8, 1.2))


async def poller(base: str, run: Run, stop: asyncio.Event) -> None:
    import httpx

    async with httpx.AsyncClient(base_url=base, timeout=GIVE_UP) as http:
        while not stop.is_set():
            sent = now()
            try:
                status = (await http.get("/health")).status_code
            except httpx.HTTPError:
                status = 0
            run.health.append((sent, now() - sent, status))
            await asyncio.sleep(0.25)


async def drive(server, cluster, venue, args) -> tuple[Run, dict, list]:
    from conteur.server.testing import Device

    run = Run()
    devices = [Device(server.ws_url, token, venue.session, device=f"phone-{k}", create=False)
               for k, (_character, token) in enumerate(venue.players[:args.devices])]
    for device in devices:
        await device.connect()
    stop = asyncio.Event()
    interval = args.devices / args.rate
    players = [asyncio.ensure_future(player(d, c, f"phone-{k}", interval, run))
               for k, (d, (c, _)) in enumerate(zip(devices, venue.players))]
    watchers = [asyncio.ensure_future(pinger(d, run, stop)) for d in devices]
    watchers.append(asyncio.ensure_future(poller(f"http://127.0.0.1:{server.port}", run, stop)))
    try:
        await asyncio.sleep(args.before)
        marks = {"stalled": now()}
        with cluster.stalled():
            await asyncio.sleep(args.stall)
        marks["resumed"] = now()
        print(f"  stalled {marks['resumed'] - marks['stalled']:.1f} s; going on {args.after:g} s", flush=True)
        await asyncio.sleep(args.after)
        run.sending = False
        await asyncio.gather(*players)
        stop.set()
        await asyncio.gather(*watchers)
        for device in devices:
            await device.sync(timeout=30)
        marks["connected"] = sum(not d.closed for d in devices)
        delivered = [[f["seq"] for f in d.frames if f["type"] == "event"] for d in devices]
        return run, marks, delivered
    finally:
        stop.set()
        for task in players + watchers:
            task.cancel()
        for device in devices:
            await device.close()


def logged_commands(url: str) -> dict[str, list[int]]:
    from conteur.server.store.factory import open_store

    with open_store(url) as store:
        by_id: dict[str, list[int]] = {}
        for row in store.rows():
            if row.command_id.startswith("phone-"):
                by_id.setdefault(row.command_id, []).append(row.seq)
    return by_id


def report(run: Run, marks: dict, delivered: list, logged: dict, args) -> None:
    stalled, resumed = marks["stalled"], marks["resumed"]

    def before(samples):
        return [s[1] for s in samples if stalled - args.before <= s[0] < stalled]

    def during(samples):
        return [s[1] for s in samples if stalled <= s[0] < resumed]

    p99 = lambda xs: percentile(xs, 99) * ms  # noqa: E731
    load = f"{args.devices} devices, {args.rate:g} commands/s, {args.stall:g} s stalled"
    for key, name, samples in (("ping_p99", "websocket ping", run.pings), ("health_p99", "GET /health", run.health)):
        base, bad = p99(before(samples)), p99(during(samples))
        print(f"  {name} p99: {bad:,.0f} ms stalled, {base:,.0f} ms before ({len(during(samples))} asked)")
        results.record(f"pgstall.{key}", bad, "ms", base, bad / base if base else None,
                       what=f"{name} p99 while PostgreSQL is stalled, {load}", against=f"the {args.before:g} s before")
    degraded = sum(1 for s in run.health if stalled <= s[0] < resumed and s[2] == 503)
    waits = [a[1] for a in run.attempts if a[2] == "unavailable"]
    acks_before = [a[1] for a in run.attempts if a[2] == "ack" and stalled - args.before <= a[0] < stalled]
    print(f"  unavailable: {len(waits)} answers, waited p99 {p99(waits):,.0f} ms (statement timeout "
          f"{args.timeout:g} s; an ack p99 {p99(acks_before):,.0f} ms before); /health 503 {degraded} times")
    results.record("pgstall.unavailable_p99", p99(waits), "ms", args.timeout * ms,
                   p99(waits) / (args.timeout * ms) if waits else None,
                   what=f"a command's wait for its unavailable, p99, {load}", against="the statement timeout",
                   note=f"{len(waits)} answers; ack p99 before {p99(acks_before):,.0f} ms")
    first = min((t for t in run.acked_at.values() if t >= resumed), default=float("nan")) - resumed
    waiting = [c for c, t in run.first_sent.items() if t < resumed and run.acked_at.get(c, resumed) >= resumed]
    everyone = max((run.acked_at[c] for c in waiting), default=resumed) - resumed
    lost = [c for c in run.acked if c not in logged]
    doubled = [c for c in run.acked if c in logged and logged[c] != run.acked[c]]
    unacked = [c for c in logged if c not in run.acked]
    seqs = sorted(s for c in logged for s in logged[c])
    short = sum(1 for d in delivered if sorted(s for s in d if s in set(seqs)) != seqs)
    print(f"  after it: first ack {first * ms:,.0f} ms, the {len(waiting)} waiting commands all acked in "
          f"{everyone:,.1f} s (ack p99 before {p99(acks_before):,.0f} ms)")
    print(f"  {len(run.acked)} commands acked, {len(seqs)} events logged for them; lost {len(lost)}, "
          f"doubled {len(doubled)}, logged unacked {len(unacked)}; devices missing or doubling an event "
          f"{short}, connected {marks['connected']}/{args.devices}")
    # the count rides on the recovery's line: BENCHMARKS.md is one page
    results.record("pgstall.first_ack", first * ms, "ms", p99(acks_before),
                   what=f"from PostgreSQL's return to the first ack, {load}", against="ack p99 before",
                   note=f"the {len(waiting)} waiting all acked in {everyone:,.1f} s; {len(run.acked)} acked, "
                        f"{len(seqs)} events logged, {len(lost) + len(doubled) + len(unacked)} lost or "
                        f"doubled, {short} devices missing one; {marks['connected']}/{args.devices} connected")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="a smoke run for CI: small and short")
    parser.add_argument("--devices", type=int, default=30)
    parser.add_argument("--rate", type=float, default=5.0, help="commands/s, all devices together")
    parser.add_argument("--before", type=float, default=20.0, help="seconds before the stall (the baseline)")
    parser.add_argument("--stall", type=float, default=20.0, help="seconds PostgreSQL is stopped")
    parser.add_argument("--after", type=float, default=15.0, help="seconds the devices go on after it")
    parser.add_argument("--timeout", type=float, default=5.0,
                        help="the server's CONTEUR_PG_STATEMENT_TIMEOUT, seconds (5: its default)")
    results.option(parser)
    args = parser.parse_args()
    results.start("pg_stall", args)
    if args.quick:
        args.devices, args.before, args.stall, args.after, args.timeout = 5, 4.0, 4.0, 6.0, 2.0

    from tests.support.pg_support import BINDIR, Cluster, Serve

    if BINDIR is None:
        print("PostgreSQL is not installed: nothing to measure")
        return
    print(f"PostgreSQL stalled {args.stall:g} s under {args.devices} devices at {args.rate:g} commands/s, "
          f"{os.cpu_count()} cores, load {os.getloadavg()[0]:.1f}", flush=True)
    cluster = Cluster(BINDIR, fsync=True).start()
    try:
        url = cluster.url(cluster.create_database())
        venue = prepare_venue(url, "hall", players=args.devices)
        with tempfile.TemporaryDirectory() as tmp, \
                Serve(url, Path(tmp) / "serve.log", deadline=args.timeout) as server:
            run, marks, delivered = asyncio.run(drive(server, cluster, venue, args))
        report(run, marks, delivered, logged_commands(url), args)
    finally:
        cluster.stop()


if __name__ == "__main__":
    main()
