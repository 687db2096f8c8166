"""Proof under load: N devices over real websockets against a real conteur server, side by
side with a bare ``websockets`` broadcast server, plus appends and replay against their
baselines. Every figure is printed with its ratio to its baseline (DESIGN, "Numbers to
reach"); nothing is asserted (benchmarks, not timed tests).

    python bench/load.py            # 300 devices, 200 commands/s, K=2000, 1,000,000 events
    python bench/load.py --quick    # CI smoke run: 20 devices, small counts, a short night
    python bench/load.py --skip ws,onecore,store,replay   # the six-hour nights alone (bench/night.py, read and played)

The 1,000,000-event chronicle is made once by ``conteur.server.cli.simulate`` and cached in
``$TMPDIR/conteur-bench`` (``--cache``); the first full run takes about 15 minutes longer.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import os
import json
import platform
import shutil
import sqlite3
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench import results  # noqa: E402
from bench.baseline_ws import PROGRAM as BASELINE  # noqa: E402
from bench.fleet import CLIENTS, close_all, connect_all, drain, event_seqs, percentile, run_phase  # noqa: E402
from bench.harness import ServerProcess, Venue, prepare_venue  # noqa: E402

ms = 1000.0


def line(label: str, value: str, base: str = "", ratio: float | None = None, target: str = "") -> None:
    parts = [f"{label:<44} {value:>16}"]
    if base:
        parts.append(f"baseline {base:>12}")
    if ratio is not None:
        parts.append(f"ratio {ratio:6.2f}x")
    if target:
        parts.append(f"({target})")
    print("  ".join(parts), flush=True)


# -- websockets ------------------------------------------------------------------------


async def ws_suite(url: str, venue: Venue, args, *, sealed: bool = False) -> dict:
    """``sealed``: the devices speak through the venue channel, as the real clients do."""
    devices = [CLIENTS[args.client](url, token, character, venue.session, f"dev-{i}")
               for i, (character, token) in enumerate(venue.players[:args.devices])]
    for device in devices:
        device.sealed = sealed
    out: dict = {"connect": await connect_all(devices)}
    await run_phase(devices, rate=min(args.rate, 50), seconds=0.5)  # warm-up
    await drain(devices)
    everyone = devices
    if args.slow:  # these stop reading (a phone in a pocket): the others must not notice
        for d in devices[:args.slow]:
            d.stop_reading()
        devices = devices[args.slow:]
    out["main"] = await run_phase(devices, args.rate, args.seconds)
    best = 0.0
    for rate in args.ramp:
        await drain(devices)
        phase = await run_phase(devices, rate, args.step)
        ok = (phase.incomplete == 0 and phase.send_rate >= 0.95 * rate
              and percentile(phase.fanout, 99) < args.sustained_p99 / ms)
        out.setdefault("ramp", []).append((rate, phase, ok))
        if not ok:
            break
        best = rate
    out["sustained"] = best
    await drain(devices)
    # resync storm: every device drops and comes back K events behind
    seqs = {d.name: event_seqs(d) for d in devices}
    while (short := args.behind + 1 - min(len(s) for s in seqs.values())) > 0:
        top_rate = max(best, 50)
        await run_phase(devices, top_rate, short / top_rate + 0.01)
        await drain(devices)
        seqs = {d.name: event_seqs(d) for d in devices}
    after = {name: s[-args.behind - 1] for name, s in seqs.items()}
    for d in everyone[:args.slow]:  # every event is public: any device's seqs will do
        after[d.name] = after[devices[0].name]
    await close_all(everyone)
    for d in everyone:
        d.frames, d.n_events, d.n_replies = [], 0, 0
    out["storm"] = await connect_all(everyone, after)
    got = [d.n_events for d in everyone]
    out["storm_events"] = (min(got), max(got))
    await close_all(everyone)
    return out


def report_ws(ours: dict, base: dict, args) -> None:
    print(f"\n== websockets: {args.devices} devices, {args.rate:g} commands/s for {args.seconds:g} s "
          f"(conteur vs bare websockets broadcast server); {args.slow} of them stop reading, "
          f"the figures are the others'; devices on the {args.client} client")
    line("connect + hello + live, all devices", f"{ours['connect']:.2f} s", f"{base['connect']:.2f} s",
         ours["connect"] / base["connect"])
    results.record("fanout.connect", ours["connect"], "s", base["connect"], ours["connect"] / base["connect"],
                   what=f"connect + hello + live, {args.devices} devices", against="bare websockets")
    m, b = ours["main"], base["main"]
    for label, key, p, target in (
        ("command -> ack p50", "acks", 50, ""), ("command -> ack p99", "acks", 99, ""),
        ("fan-out to every device p50", "fanout", 50, ""),
        ("fan-out to every device p99", "fanout", 99, "target <= 2x"),
        ("fan-out, each delivery p99", "deliveries", 99, ""),
    ):
        v, bv = percentile(getattr(m, key), p), percentile(getattr(b, key), p)
        line(label, f"{v * ms:.1f} ms", f"{bv * ms:.1f} ms", v / bv if bv else None, target)
        results.record(f"fanout.{key}_p{p}", v * ms, "ms", bv * ms, v / bv if bv else None,
                       target.removeprefix("target ") or None, against="bare websockets",
                       what=f"{label}, {args.devices} devices, {args.rate:g} commands/s")
    print(f"  (sent {m.sent} commands at {m.send_rate:.0f}/s; {m.rejected} rejected; "
          f"{m.incomplete} did not reach every device; baseline: {b.incomplete}; the load "
          f"generator used {m.load_cpu:.0%} of a core, {b.load_cpu:.0%} against the baseline)")
    results.record("fanout.incomplete", m.incomplete, "commands", target="<= 0",
                   what=f"commands that missed a device while {args.slow} device(s) stopped reading")
    for label, data in (("conteur", ours), ("baseline", base)):
        steps = ", ".join(f"{rate:g}/s p99 {percentile(ph.fanout, 99) * ms:.0f} ms"
                          f"{'' if ok else ' (missed)'}" for rate, ph, ok in data.get("ramp", []))
        print(f"  ramp {label}: {steps}")
    line("highest sustained rate", f"{ours['sustained']:g} cmd/s", f"{base['sustained']:g} cmd/s",
         ours["sustained"] / base["sustained"] if base["sustained"] else None,
         f"fan-out p99 < {args.sustained_p99:g} ms, nothing lost")
    results.record("fanout.sustained", ours["sustained"], "cmd/s", base["sustained"],
                   ours["sustained"] / base["sustained"] if base["sustained"] else None,
                   what=f"highest sustained rate (fan-out p99 < {args.sustained_p99:g} ms, nothing lost)",
                   against="bare websockets")
    line(f"resync storm: {args.devices} devices {args.behind} behind", f"{ours['storm']:.2f} s",
         f"{base['storm']:.2f} s", ours["storm"] / base["storm"], "target < 3 s")
    results.record("fanout.storm", ours["storm"], "s", base["storm"], ours["storm"] / base["storm"], "< 3 s",
                   what=f"resync storm, {args.devices} devices {args.behind} events behind",
                   against="bare websockets")
    print(f"  (events received per device: conteur {ours['storm_events']}, baseline {base['storm_events']})")


# -- one core --------------------------------------------------------------------------


class pinned:
    """This process (the simulated devices) on ``cpus`` for the block. Threads started
    inside inherit it; the devices run on this thread's event loop."""

    def __init__(self, cpus: set[int]):
        self.cpus = cpus

    def __enter__(self) -> None:
        self.before = os.sched_getaffinity(0)
        os.sched_setaffinity(0, self.cpus)

    def __exit__(self, *exc) -> None:
        os.sched_setaffinity(0, self.before)


def one_core(folder: Path, venue: Venue, args) -> tuple[dict, dict, dict | None] | None:
    """A Raspberry-Pi-class venue has about one core for the server: the server (and the
    bare websockets baseline, the same way) pinned to one core, the devices to another,
    so neither borrows the other's. Both at a venue's 50 commands/s, then the same ramp
    and resync storm as the two-core run. conteur's devices speak through the venue
    channel, as the real clients do (``--no-channel``: in the clear); with the channel,
    conteur in the clear runs too, in the same run, for the channel's own cost."""
    cores = sorted(os.sched_getaffinity(0))
    if len(cores) < 2 or not hasattr(os, "sched_setaffinity"):
        print("\n== one core: skipped, this machine gives this process fewer than two cores")
        return None
    server_core, device_core = {cores[0]}, {cores[1]}
    one = argparse.Namespace(**{**vars(args), "rate": 50.0})
    with pinned(device_core):
        with ServerProcess(folder / "onecore.db", cpus=server_core) as server:
            ours = asyncio.run(ws_suite(server.ws_url, venue, one, sealed=args.channel))
        clear = None
        if args.channel:  # a chronicle of its own: the first run left half the characters out
            plain = prepare_venue(folder / "onecore-clear.db", venue.session, players=args.devices)
            with ServerProcess(folder / "onecore-clear.db", cpus=server_core) as server:
                clear = asyncio.run(ws_suite(server.ws_url, plain, one))
        with ServerProcess(folder / "baseline", program=BASELINE, args=(str(free_port := _port()),),
                           port=free_port, cpus=server_core) as server:
            base = asyncio.run(ws_suite(server.ws_url, venue, one))
    return ours, base, clear


def report_one_core(ours: dict, base: dict, clear: dict | None, args) -> None:
    p99, bp99 = percentile(ours["main"].fanout, 99), percentile(base["main"].fanout, 99)
    how = "through the venue channel" if args.channel else "in the clear"
    print(f"\n== one core: the server (and the baseline) pinned to one core, {args.devices} "
          f"devices ({how}) on the other, 50 commands/s for {args.seconds:g} s")
    print(f"one core: fan-out p99 {p99 * ms:.1f} ms, baseline {bp99 * ms:.1f} ms, "
          f"ratio {p99 / bp99 if bp99 else float('nan'):.2f}", flush=True)
    results.record("onecore.fanout_p99", p99 * ms, "ms", bp99 * ms, p99 / bp99 if bp99 else None, "<= 2x",
                   what=f"fan-out p99, server on one core, {args.devices} devices {how}, 50 commands/s",
                   against="bare websockets")
    if clear is not None:
        cp99 = percentile(clear["main"].fanout, 99)
        print(f"one core: fan-out p99 in the clear {cp99 * ms:.1f} ms: the channel costs "
              f"{p99 / cp99 if cp99 else float('nan'):.2f}x conteur in the clear, "
              f"{cp99 / bp99 if bp99 else float('nan'):.2f}x baseline without it", flush=True)
        results.record("onecore.channel_fanout_p99", p99 * ms, "ms", cp99 * ms, p99 / cp99 if cp99 else None,
                       what=f"fan-out p99 through the channel vs conteur in the clear, one core, "
                       f"{args.devices} devices, 50 commands/s", against="conteur in the clear")
    print(f"  (sent {ours['main'].sent} commands; {ours['main'].incomplete} did not reach every "
          f"device; baseline: {base['main'].incomplete})")
    for label, data in (("conteur", ours), ("baseline", base)):
        steps = ", ".join(f"{rate:g}/s p99 {percentile(ph.fanout, 99) * ms:.0f} ms"
                          f"{'' if ok else ' (missed)'}" for rate, ph, ok in data.get("ramp", []))
        print(f"  ramp {label}: {steps}")
    line("one core: highest sustained rate", f"{ours['sustained']:g} cmd/s",
         f"{base['sustained']:g} cmd/s",
         ours["sustained"] / base["sustained"] if base["sustained"] else None,
         f"fan-out p99 < {args.sustained_p99:g} ms, nothing lost")
    results.record("onecore.sustained", ours["sustained"], "cmd/s", base["sustained"],
                   ours["sustained"] / base["sustained"] if base["sustained"] else None,
                   what="one core: highest sustained rate", against="bare websockets")
    line(f"one core: resync storm, {args.behind} behind", f"{ours['storm']:.2f} s",
         f"{base['storm']:.2f} s", ours["storm"] / base["storm"], "target < 3 s")
    results.record("onecore.storm", ours["storm"], "s", base["storm"], ours["storm"] / base["storm"], "< 3 s",
                   what=f"one core: resync storm, {args.devices} devices {args.behind} behind",
                   against="bare websockets")


# -- the channel's own cost -------------------------------------------------------------


def channel_cost() -> dict:
    """CPU time (this process's, so a busy machine slows it less than the wall clock) to
    seal one fan-out frame for one device, against encoding it (what every device's frame
    costs already); and to open a full resync batch, as a device does."""
    from conteur.events import channel, wire
    from conteur.events.session import WentOutOfGame

    psk = channel.psk_of_token("bench")
    nonces = channel.new_nonce(), channel.new_nonce()
    server = channel.server_side(psk, "bench", *nonces)
    device = channel.client_side(psk, "bench", *nonces)
    event = WentOutOfGame(character="character-042", reason="bench")
    frame = wire.encode_event(12345, event)

    def per(fn, n: int) -> float:
        start = time.process_time()
        for _ in range(n):
            fn()
        return (time.process_time() - start) / n

    n = 20000
    encode = per(lambda: wire.encode_event(12345, event), n)
    seal = per(lambda: server.seal(frame), n)
    batch = wire.batches([frame] * 2000)[0]
    resync = channel.server_side(psk, "bench", *nonces)  # counters from 0, as the device's
    sealed = [resync.seal(batch) for _ in range(200)]
    it = iter(sealed)
    open_batch = per(lambda: device.open(next(it)), 200)
    return {"encode": encode, "seal": seal, "open_batch": open_batch, "frame": len(frame),
            "batch": len(batch)}


def report_channel(c: dict) -> None:
    us = 1e6
    print(f"\n== the channel: one fan-out frame ({c['frame']} bytes) sealed for one device, "
          "CPU time of this process")
    line("seal a fan-out frame", f"{c['seal'] * us:.1f} us", f"{c['encode'] * us:.1f} us",
         c["seal"] / c["encode"], "baseline: encoding it, which every device pays already")
    results.record("channel.seal", c["seal"] * us, "us", c["encode"] * us, c["seal"] / c["encode"],
                   what=f"seal one {c['frame']}-byte fan-out frame for one device (CPU time)",
                   against="encoding the same frame")
    share = c["seal"] * 300 * 50
    print(f"  300 devices at 50 commands/s: {300 * 50} frames/s to seal, {share * 100:.1f}% of one core")
    results.record("channel.seal_share", share * 100, "% of a core",
                   what="sealing the fan-out of 300 devices at 50 commands/s (CPU time)")
    line("open a resync batch", f"{c['open_batch'] * 1000:.2f} ms", target=f"{c['batch'] // 1024} KiB, in Python")
    results.record("channel.open_batch", c["open_batch"] * 1000, "ms",
                   what=f"open one {c['batch'] // 1024} KiB sealed batch (CPU time, Python)")


# -- store -----------------------------------------------------------------------------


NIGHT = 100_000  # events per simulated night (each night: one session per ruleset)


def _play_nights(path: str, nights: list[int]) -> int:
    from conteur.server.cli.simulate import simulate

    return sum(simulate(path, events=NIGHT, seed=n, session=f"night-{n}").events for n in nights)


def chronicle(cache: Path, events: int) -> Path:
    """A simulated chronicle of about ``events`` events, made once and kept: nights of
    ``NIGHT`` events played by ``conteur.server.cli.simulate`` (a chronicle holds many sessions),
    played in parallel into part files, then appended in order into one chronicle."""
    from concurrent.futures import ProcessPoolExecutor

    from conteur.server.store.snapshot import VERSION as SNAPSHOT_VERSION

    cache.mkdir(parents=True, exist_ok=True)
    db = cache / f"chronicle-{events}-n{NIGHT}-s{SNAPSHOT_VERSION}.db"
    if db.exists():
        return db
    print(f"  (making the {events:,}-event chronicle once, in {db})", flush=True)
    parts_dir = cache / (db.name + ".parts")
    shutil.rmtree(parts_dir, ignore_errors=True)
    parts_dir.mkdir()
    nights = list(range(1, -(-events // NIGHT) + 1))
    workers = max(1, os.cpu_count() or 1)
    groups = [nights[i::workers] for i in range(workers) if nights[i::workers]]
    parts = [str(parts_dir / f"part-{i}.db") for i in range(len(groups))]
    with ProcessPoolExecutor(len(groups)) as pool:
        list(pool.map(_play_nights, parts, groups))
    merge(parts, db.with_name(db.name + ".making"))
    db.with_name(db.name + ".making").rename(db)
    shutil.rmtree(parts_dir, ignore_errors=True)
    return db


def merge(parts: list[str], out: Path, exclude: tuple[str, ...] = ()) -> int:
    """Appends the events (and idempotency records) of chronicle files into one, with
    new seqs and each session's hash chain recomputed; snapshots are left behind (their
    seqs changed), so the first start-up on the result folds from zero."""
    from conteur.server.store.chain import GENESIS, row_hash
    from conteur.server.store.sqlite import SQLiteStore

    out.unlink(missing_ok=True)
    SQLiteStore(out).close()  # the schema
    conn = sqlite3.connect(out, isolation_level=None)
    conn.execute("PRAGMA journal_mode=WAL")
    head, tips = 0, {}
    for part in parts:
        src = sqlite3.connect(f"file:{part}?mode=ro", uri=True)
        renumber: dict[int, int] = {}
        rows = []
        for seq, session, type_, data, actor, device, command_id, at, _, _ in src.execute(
                "SELECT * FROM events ORDER BY seq"):
            if session.startswith(exclude) and exclude:
                continue
            head += 1
            renumber[seq] = head
            prev = tips.get(session, GENESIS)
            digest = row_hash(prev, head, session, type_, data, actor, device, command_id, at)
            tips[session] = digest
            rows.append((head, session, type_, data, actor, device, command_id, at, prev, digest))
        commands = [(d, c, s_, json.dumps([renumber[x] for x in json.loads(seqs)]), code, msg)
                    for d, c, s_, seqs, code, msg in src.execute("SELECT * FROM commands")
                    if not (exclude and s_.startswith(exclude))]
        secrets = src.execute("SELECT * FROM secrets").fetchall()
        src.close()
        conn.execute("BEGIN")
        conn.executemany("INSERT INTO events VALUES (?,?,?,?,?,?,?,?,?,?)", rows)
        conn.executemany("INSERT INTO commands VALUES (?,?,?,?,?,?)", commands)
        conn.execute("CREATE TABLE IF NOT EXISTS secrets (session TEXT PRIMARY KEY, seed BLOB NOT NULL)")
        conn.executemany("INSERT OR IGNORE INTO secrets VALUES (?,?)", secrets)
        conn.execute("COMMIT")
    conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    conn.close()
    return head


def replay_figures(db: Path) -> dict:
    import gc

    from conteur.events import game
    from conteur.server.store import replay
    from conteur.server.store.sqlite import FOLD_CHUNK, SQLiteStore

    with SQLiteStore(db) as store:
        sessions = store.sessions()
        n = store.head()
        store.load_state(sessions[0], use_snapshots=False)  # warm: imports, page cache
        # the whole chronicle replayed in this process as a start-up without workers does
        # (replay.load_states: session by session, each as load_state); best of 3
        fold = fold_cpu = 0.0
        for _ in range(3):
            gc.collect()
            t, c = time.perf_counter(), time.process_time()
            replay.load_states(store, use_snapshots=False, workers=1)
            fold = max(fold, n / (time.perf_counter() - t))
            fold_cpu = max(fold_cpu, n / (time.process_time() - c))
        # every session over every core (conteur.server.store.replay, as a start-up does)
        gc.collect()
        t = time.perf_counter()
        replay.load_states(store, use_snapshots=False)
        cores = n / (time.perf_counter() - t)
        # one night (NIGHT events: the first sessions of the chronicle, one per ruleset)
        # folded from zero on one core, as load_state folds it; beside it, a raw read of
        # the same rows; and where the time goes: decode and evolve timed apart
        night, first = [], 0
        for sid in sessions:
            if first >= NIGHT:
                break
            night.append(sid)
            first += len(store.read_entries(sid, 0))
        cpus = sorted(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else []
        with pinned({cpus[-1]}) if len(cpus) > 1 else contextlib.nullcontext():
            night_s = night_cpu = night_raw = decode = evolve = float("inf")
            for _ in range(3):
                gc.collect()
                t, c = time.perf_counter(), time.process_time()
                for sid in night:
                    store.load_state(sid, use_snapshots=False)
                night_s, night_cpu = min(night_s, time.perf_counter() - t), min(night_cpu, time.process_time() - c)
                t = time.perf_counter()
                for sid in night:
                    span = store.session_span(sid)
                    rows = store._reader.execute(
                        "SELECT seq, data FROM events WHERE seq >= ? AND seq <= ? AND session = ?",
                        (span[0], span[1], sid)).fetchall()
                night_raw = min(night_raw, time.perf_counter() - t)
                rows = None
                d = e = 0.0
                for sid in night:
                    t0 = time.perf_counter()
                    chunks = list(store.iter_events(sid, chunk=FOLD_CHUNK))
                    t1 = time.perf_counter()
                    state = game.initial()
                    for _, events in chunks:
                        state = game.fold(events, state)
                    e += time.perf_counter() - t1
                    d += t1 - t0
                    chunks = state = None
                decode, evolve = min(decode, d), min(evolve, e)
    return {"events": n, "sessions": len(sessions), "fold": fold, "fold_cpu": fold_cpu, "cores": cores,
            "night": first, "night_sessions": len(night), "night_s": night_s, "night_cpu": night_cpu, "night_raw": night_raw,
            "decode": first / decode, "evolve": first / evolve, "one_core": len(cpus) > 1}


def startup(db: Path) -> tuple[float, float]:
    """Seconds from spawning ``conteur serve`` on ``db`` to its first /health answer,
    with every session's state loaded (the window timers load them at start); twice:
    the first may write the snapshots the second starts from."""
    times = []
    for _ in range(2):
        server = ServerProcess(db)
        times.append(server.start(timeout=600))
        server.stop()
    return times[0], times[1]


def store_figures(folder: Path, args) -> dict:
    from bench import store as bs

    n_conc = 1000 if args.quick else 20000
    raw1 = bs.raw_sqlite(folder / "raw1.db", 400 if args.quick else 5000, 1)
    raw100 = bs.raw_sqlite(folder / "raw100.db", 2000 if args.quick else 100000, 100)
    conc, mean_batch = bs.store_concurrent(folder / "conc.db", n_conc, 50)
    st100 = bs.store_batches(folder / "st100.db", 2000 if args.quick else 100000, 100)
    es_rate, es_replay, _ = bs.eventsourcing_recorder(folder / "es.db", min(n_conc, 5000), 50)
    return {"raw1": raw1, "raw100": raw100, "conc": conc, "batch": mean_batch, "st100": st100,
            "es": es_rate, "es_replay": es_replay}


def report_store(s: dict, replay: dict | None, starts: tuple[float, float], empty: float) -> None:
    print("\n== durable appends (WAL, synchronous=FULL; 50 concurrent appenders)")
    line("conteur group commit", f"{s['conc']:,.0f} ev/s", f"{s['raw1']:,.0f}/s", s["conc"] / s["raw1"],
         "vs raw sqlite3 1 row/txn, target >= 3x")
    results.record("appends.group_commit", s["conc"], "ev/s", s["raw1"], s["conc"] / s["raw1"], ">= 3x",
                   what="group commit, 50 appenders", against="raw sqlite3, 1 row a transaction")
    line("", "", f"{s['es']:,.0f}/s", s["conc"] / s["es"], "vs eventsourcing recorder, target >= 5x")
    results.record("appends.group_commit_es", s["conc"], "ev/s", s["es"], s["conc"] / s["es"], ">= 5x",
                   what="group commit, 50 appenders", against="`eventsourcing` SQLite recorder")
    line("conteur, 100 events per append", f"{s['st100']:,.0f} ev/s", f"{s['raw100']:,.0f}/s",
         s["st100"] / s["raw100"], "vs raw sqlite3 100 rows/txn, target >= 0.5x")
    results.record("appends.batch100", s["st100"], "ev/s", s["raw100"], s["st100"] / s["raw100"], ">= 0.5x",
                   what="100 events per append", against="raw sqlite3, 100 rows a transaction")
    print(f"  (mean group commit {s['batch']:.1f} commands)")
    if replay is None:
        return
    print(f"\n== replay and start-up: {replay['events']:,} events in {replay['sessions']} sessions")
    line("replay, one process", f"{replay['fold']:,.0f} ev/s", f"{s['es_replay']:,.0f}/s",
         replay["fold"] / s["es_replay"], "vs eventsourcing aggregate replay")
    print(f"  (in CPU time: {replay['fold_cpu']:,.0f} ev/s; session by session, as a start-up "
          f"without workers folds; best of 3)")
    line(f"replay, over {os.cpu_count()} cores (start-up's)", f"{replay['cores']:,.0f} ev/s", f"{s['es_replay']:,.0f}/s",
         replay["cores"] / s["es_replay"], "vs eventsourcing aggregate replay")
    where = "one core" if replay["one_core"] else "this process's cores (could not pin to one)"
    line(f"a {replay['night']:,}-event night folded from zero", f"{replay['night_s']:.2f} s",
         f"{replay['night_raw']:.2f} s", replay["night_s"] / replay["night_raw"],
         f"vs a raw sqlite3 read of its rows; {replay['night_sessions']} sessions, {where}; target <= 1.5 s")
    results.record("startup.fold_night", replay["night_s"], "s", replay["night_raw"],
                   replay["night_s"] / replay["night_raw"], "<= 1.5 s",
                   what=f"a {replay['night']:,}-event night folded from zero, {where}",
                   against="a raw sqlite3 read of its rows",
                   note=f"CPU {replay['night_cpu']:.2f} s")
    print(f"  (in CPU time {replay['night_cpu']:.2f} s; its decode {replay['decode']:,.0f} ev/s and evolve "
          f"{replay['evolve']:,.0f} ev/s, each alone; best of 3)")
    line("start-up, spawn to /health, with snapshots", f"{starts[1]:.2f} s", f"{empty:.2f} s",
         starts[1] / empty, "vs the same on an empty chronicle; target < 2 s")
    results.record("startup.snapshots", starts[1], "s", empty, starts[1] / empty, "< 2 s",
                   what=f"start-up on {replay['events']:,} events, spawn to /health, with snapshots",
                   against="an empty chronicle")
    print(f"  (first start on this file: {starts[0]:.2f} s)")


# -- the review page against replay --------------------------------------------------


def review_vs_replay(folder: Path, events: int) -> dict:
    """The review page of a night of about ``events`` events (one MET session, as
    ``bench/night.py`` plays it), built as the server builds it on its first request (the
    review walked once, then its first screen), against replaying the same session from
    zero (``load_state`` without snapshots); this process pinned to one core; the best of
    at least 3 rounds, and of more (up to 15) until the builds took 2 s: a 5,000-event
    night builds in a tenth of a second, where best of 3 was mostly the machine's noise
    (the CI smoke runs printed 3.42 and 3.87 for the same code)."""
    import random

    from bench.night import SESSION, play_hour
    from conteur.server.audit import review as rv
    from conteur.server.audit import page as review_page
    from conteur.server.store.sqlite import SQLiteStore

    db = folder / "review-night.db"
    play_hour(db, random.Random(45), max(1, int(events / 1.7)), first=True)  # 1.7 events a command
    cores = sorted(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else []
    with pinned({cores[-1]}) if len(cores) > 1 else contextlib.nullcontext():
        with SQLiteStore(db) as store:
            n = store.session_head(SESSION) and len(store.read_after(SESSION, 0))
            store.load_state(SESSION, use_snapshots=False)  # warm: imports, page cache
            replay = build = replay_cpu = build_cpu = float("inf")
            rounds = spent = 0
            while rounds < 3 or (spent < 2.0 and rounds < 15):
                rounds += 1
                # each timing without freeing what the last one made (the state, the review)
                builder = first = None
                t, c = time.perf_counter(), time.process_time()
                state = store.load_state(SESSION, use_snapshots=False)
                replay, replay_cpu = min(replay, time.perf_counter() - t), min(replay_cpu, time.process_time() - c)
                state = None
                t, c = time.perf_counter(), time.process_time()
                # as a server keeps it: no rows (its verification reads them again), entries read
                builder = rv.Builder(SESSION, keep_rows=False)
                builder.extend(*rv.read_session(store, SESSION, whole=False))
                first = review_page.first_screen(builder)
                build, build_cpu = min(build, time.perf_counter() - t), min(build_cpu, time.process_time() - c)
                spent += time.perf_counter() - t
    return {"events": n, "replay": replay, "build": build, "replay_cpu": replay_cpu, "build_cpu": build_cpu,
            "first_items": len(first["items"]), "one_core": len(cores) > 1, "rounds": rounds}


def report_review(r: dict) -> None:
    where = "on one core" if r["one_core"] else "on this process's cores (could not pin to one)"
    print(f"\n== the review page of a {r['events']:,}-event night, {where}")
    print(f"review page: {r['events']:,} events built in {r['build']:.2f} s, replay {r['replay']:.2f} s, "
          f"ratio {r['build'] / r['replay']:.2f} (target <= 3)", flush=True)
    results.record("review.page", r["build"], "s", r["replay"], r["build"] / r["replay"],
                   what=f"review page of a {r['events']:,}-event night, built, one core",
                   against="its session folded from zero")
    print(f"  (in CPU time of this process: built in {r['build_cpu']:.2f} s, replay {r['replay_cpu']:.2f} s, "
          f"ratio {r['build_cpu'] / r['replay_cpu']:.2f}; best of {r['rounds']} rounds)")


# -- main ------------------------------------------------------------------------------


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="small counts for a CI smoke run")
    parser.add_argument("--devices", type=int, default=None)
    parser.add_argument("--rate", type=float, default=200.0, help="commands per second")
    parser.add_argument("--seconds", type=float, default=None)
    parser.add_argument("--behind", type=int, default=None, help="K: events each device misses")
    parser.add_argument("--events", type=int, default=None, help="size of the replayed chronicle")
    parser.add_argument("--cache", default=os.path.join(tempfile.gettempdir(), "conteur-bench"))
    parser.add_argument("--skip", default="", help="comma list of: ws, channel, onecore, store, replay, review, night")
    parser.add_argument("--chronicle", default=None,
                        help="replay this chronicle database instead of the cached simulated one")
    parser.add_argument("--make-chronicle", action="store_true",
                        help="only make (and cache) the replayed chronicle")
    parser.add_argument("--client", choices=("sansio", "asyncio"), default="sansio",
                        help="the devices' websockets layer: sans-I/O protocol (light) or asyncio connection")
    parser.add_argument("--slow", type=int, default=1, help="devices that stop reading during the run")
    parser.add_argument("--no-channel", dest="channel", action="store_false",
                        help="the one-core run's devices in the clear instead of through the venue channel")
    results.option(parser)
    args = parser.parse_args()
    results.start("load", args)
    q = args.quick
    args.devices = args.devices or (20 if q else 300)
    args.seconds = args.seconds or (1.5 if q else 10.0)
    args.behind = args.behind or (100 if q else 2000)
    args.events = args.events or (5000 if q else 1_000_000)
    args.rate = min(args.rate, 100.0) if q else args.rate
    args.ramp = [100, 200] if q else [50, 100, 150, 200, 300, 400, 600, 800, 1200, 1600]
    args.step = 1.0 if q else 2.0
    args.sustained_p99 = 250.0
    skip = set(filter(None, args.skip.split(",")))
    if args.make_chronicle:
        print(chronicle(Path(args.cache), args.events))
        return
    print(f"machine: {platform.processor() or platform.machine()}, {os.cpu_count()} cores, "
          f"Linux {platform.release()}, Python {platform.python_version()}, "
          f"SQLite {sqlite3.sqlite_version}; server and devices on 127.0.0.1", flush=True)
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        if "ws" not in skip:
            venue = prepare_venue(folder / "load.db", "night", players=args.devices)
            with ServerProcess(folder / "load.db") as server:
                ours = asyncio.run(ws_suite(server.ws_url, venue, args))
            with ServerProcess(folder / "baseline", program=BASELINE, args=(str(free_port := _port()),),
                               port=free_port) as server:
                base = asyncio.run(ws_suite(server.ws_url, venue, args))
            report_ws(ours, base, args)
        if "channel" not in skip:
            report_channel(channel_cost())
        if "onecore" not in skip:
            venue = prepare_venue(folder / "onecore.db", "night", players=args.devices)
            figures = one_core(folder, venue, args)
            if figures:
                report_one_core(*figures, args)
        if "store" not in skip or "replay" not in skip:
            s = store_figures(folder, args)
            if "replay" in skip:
                report_store(s, None, (0, 0), 1)
            else:
                if args.chronicle:
                    db = Path(args.chronicle)
                elif q:
                    db = _quick_chronicle(folder, args.events)
                else:
                    db = chronicle(Path(args.cache), args.events)
                replay = replay_figures(db)
                starts = startup(db)
                empty = ServerProcess(folder / "empty.db")
                empty_start = empty.start()
                empty.stop()
                report_store(s, replay, starts, empty_start)
        if "review" not in skip:
            report_review(review_vs_replay(folder, 5000 if q else 45_000))
    if "night" not in skip:
        from bench.night import night

        hours, rate = (2, 0.5) if q else (6, 20.0)
        night(hours, rate)
        night(hours, rate, plays=True)  # the server plays it: its true state and command index too


def _port() -> int:
    from bench.harness import free_port

    return free_port()


def _quick_chronicle(folder: Path, events: int) -> Path:
    from conteur.server.cli.simulate import simulate

    db = folder / "quick-chronicle.db"
    simulate(str(db), events=events, seed=7)
    return db


if __name__ == "__main__":
    main()
