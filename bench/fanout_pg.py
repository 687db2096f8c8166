"""Fan-out capacity: one and two server processes on PostgreSQL against one on SQLite.

    python bench/fanout_pg.py            # 100 devices, ramp 25..800 commands/s, 3 s a step
    python bench/fanout_pg.py --quick    # smoke run (CI): 10 devices, two short steps
    python bench/fanout_pg.py --halls 2  # two sessions, each hall's devices on its own process

Each configuration is real ``serve`` processes on loopback (bench/harness.ServerProcess)
and N websocket devices in one session (every event reaches every device), spread
round-robin over the processes. Each step sends commands at a fixed rate for ``--step``
seconds (bench/fleet.run_phase); a rate is sustained when every event reached every
device, the rate was really sent, and the p99 from a command's sending to its event on
the last device stayed under ``--p99`` ms. Printed: the highest sustained rate and its
p99s (ack, fan-out). With two processes every command of one is decided on a state the
other just moved: it comes back stale, catches up and is decided again (the worst case;
``--halls 2``, each session's devices on one process, is the kind case). The PostgreSQL cluster is
a throwaway one this script starts (tests/support/pg_support.py), fsync on. Asserts nothing.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import sys
import tempfile
from pathlib import Path

import msgspec

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench import results  # noqa: E402
from bench.fleet import Device, close_all, connect_all, drain, percentile, run_phase  # noqa: E402
from bench.harness import ServerProcess, prepare_venue  # noqa: E402

ms = 1000.0


def merged(phases: list) -> object:
    """The phases of the halls run at once, as one."""
    first = phases[0]
    return msgspec.structs.replace(
        first, rate=sum(p.rate for p in phases), sent=sum(p.sent for p in phases),
        send_rate=sum(p.send_rate for p in phases), acks=[a for p in phases for a in p.acks],
        fanout=[f for p in phases for f in p.fanout], deliveries=[], incomplete=sum(p.incomplete for p in phases),
        rejected=sum(p.rejected for p in phases))


async def ramp(urls: list[str], venues: list, args) -> tuple[float, object]:
    """(highest sustained rate, its phase). One venue: its devices spread across ``urls``
    round robin. Several (halls): hall k's devices on ``urls[k % len(urls)]``, every hall
    at its share of the rate at once."""
    per = args.devices // len(venues)
    if len(venues) == 1:
        groups = [[Device(urls[i % len(urls)], token, character, venues[0].session, f"dev-{i}")
                   for i, (character, token) in enumerate(venues[0].players[:per])]]
    else:
        groups = [[Device(urls[k % len(urls)], token, character, v.session, f"dev-{k}-{i}")
                   for i, (character, token) in enumerate(v.players[:per])] for k, v in enumerate(venues)]
    devices = [d for g in groups for d in g]
    await connect_all(devices)
    try:
        await asyncio.gather(*(run_phase(g, rate=min(args.ramp[0], 20) / len(groups), seconds=0.5)
                               for g in groups))  # warm-up
        best, best_phase = 0.0, None
        for rate in args.ramp:
            await drain(devices, quiet=0.5)
            phase = merged(await asyncio.gather(*(run_phase(g, rate / len(groups), args.step) for g in groups)))
            p99 = percentile(phase.fanout, 99) * ms
            ok = (phase.incomplete == 0 and phase.rejected == 0 and phase.send_rate >= 0.95 * rate
                  and p99 < args.p99)
            print(f"    {rate:>6g}/s: sent {phase.send_rate:,.0f}/s, ack p99 "
                  f"{percentile(phase.acks, 99) * ms:,.0f} ms, fan-out p99 {p99:,.0f} ms, "
                  f"incomplete {phase.incomplete}, rejected {phase.rejected}"
                  f"{'' if ok else '  <- not sustained'}", flush=True)
            if not ok:
                break
            best, best_phase = rate, phase
        return best, best_phase
    finally:
        await close_all(devices)


def measure(label: str, target: str, processes: int, folder: Path, args) -> None:
    venues = [prepare_venue(target, f"hall-{k}", players=args.devices // args.halls)
              for k in range(args.halls)]
    servers = [ServerProcess(target, log_path=folder / f"{label}-{k}.log".replace(" ", "-"))
               for k in range(processes)]
    try:
        for server in servers:
            server.start()
        print(f"  {label}:", flush=True)
        best, phase = asyncio.run(ramp([s.ws_url for s in servers], venues, args))
    finally:
        for server in servers:
            server.stop()
    if phase is None:
        print(f"  {label}: no step sustained (the lowest was {args.ramp[0]:g}/s)")
        return
    print(f"  {label}: sustained {best:g} commands/s, {args.devices} devices, ack p99 "
          f"{percentile(phase.acks, 99) * ms:,.0f} ms, fan-out p99 {percentile(phase.fanout, 99) * ms:,.0f} ms",
          flush=True)
    how = "halls" if args.halls > 1 else "session"
    results.record(f"fanout_pg.{how}.{'sqlite' if label.startswith('SQLite') else 'pg'}{processes}", best, "cmd/s",
                   what=f"{label}, {args.devices} devices " + (f"in {args.halls} halls" if args.halls > 1 else "in one session"),
                   note=f"ack p99 {percentile(phase.acks, 99) * ms:,.0f} ms, fan-out p99 {percentile(phase.fanout, 99) * ms:,.0f} ms")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="a smoke run for CI: small and short")
    parser.add_argument("--devices", type=int, default=100)
    parser.add_argument("--ramp", default="25,50,100,200,400,800", help="commands/s, one step each")
    parser.add_argument("--step", type=float, default=3.0, help="seconds a step")
    parser.add_argument("--p99", type=float, default=250.0, help="the sustained fan-out p99, ms")
    parser.add_argument("--only", default="sqlite,pg1,pg2", help="which configurations")
    parser.add_argument("--halls", type=int, default=1,
                        help="sessions, the devices shared among them; hall k's devices on process "
                             "k (mod the processes); 1: one session spread over every process")
    results.option(parser)
    args = parser.parse_args()
    results.start("fanout_pg", args)
    if args.quick:
        args.devices, args.ramp, args.step = 10, "10,20", 1.0
    args.ramp = [float(r) for r in args.ramp.split(",")]
    only = set(args.only.split(","))
    where = "in one session" if args.halls == 1 else f"in {args.halls} sessions (halls)"
    print(f"fan-out, {args.devices} devices {where}, {os.cpu_count()} cores, load "
          f"{os.getloadavg()[0]:.1f}", flush=True)

    from tests.support.pg_support import BINDIR, Cluster

    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        if "sqlite" in only:
            measure("SQLite, 1 process", str(folder / "fanout.db"), 1, folder, args)
        if BINDIR is None:
            print("PostgreSQL is not installed: its figures are skipped")
            return
        cluster = Cluster(BINDIR, fsync=True).start()
        try:
            for processes in (1, 2):
                if f"pg{processes}" in only:
                    url = cluster.url(cluster.create_database())
                    measure(f"PostgreSQL {cluster.version()}, {processes} process(es)", url, processes,
                            folder, args)
        finally:
            cluster.stop()


if __name__ == "__main__":
    main()
