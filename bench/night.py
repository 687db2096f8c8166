"""A six-hour night, simulated without waiting: what a reconnecting phone, the review page
and the server's memory cost at each hour, against the first hour.

Each hour, a venue's rate of commands (``--rate`` per second, 20 by default: about 1.4
events each) is played into one session through the real command path
(``conteur.server.cli.simulate``'s random players, ``Chronicle.submit``, fair draws, group commit),
appended to the file of a real server that stays up all night. Then the server is asked
what phones and the storyteller ask after a Wi-Fi drop:

- a player's ``GET /sessions/{s}/state`` (the phone's view of its session);
- the review page's first screen (``GET /sessions/{s}/review/first``), its time and size;
- the server's resident memory after both (``VmRSS``), read a few seconds later: the
  review's snapshot the first screen queued is written meanwhile on the server's
  snapshots' thread (its copies and encoding are not what the server keeps); the RSS at
  once is printed beside it.

At the end the server is killed (``kill -9``, a laptop that crashed) and started again: the
first state query and first screen after the restart come from the snapshots the server
saved of each view and of the review (server/core/keep.py), and the whole bundle
(``/review``) is timed too. Beside it, the same restart on a copy of the file without any
snapshot: each view folded again from the log, as before snapshots of views existed.

The last line gives last hour / first hour for each (targets: at most 1.5x for the state
query and the review's first screen, RSS within 2x). Nothing is asserted.

With ``--plays`` the server under test plays the night itself: each hour's commands go
to it over its websocket, one socket per character and the storyteller's, as phones send
them (bench/night_play.py), so it decides, folds and appends each one and keeps the
session's true state and its command index all night, as at a venue. Without it, the
hour is played in this process on the same file and the server only reads: its RSS is
then what the reading parts keep (projections, a kept review).

    python bench/night.py                 # 6 hours at 20 commands/s (about 735,000 events, 6 minutes)
    python bench/night.py --hours 2 --rate 0.5   # a short night (CI smoke run)
    python bench/night.py --plays        # the server itself plays the night (about 20 minutes)
    python bench/night.py --hours 2 --bundle   # and the whole bundle each hour
"""

from __future__ import annotations

import argparse
import asyncio
import random
import sqlite3
import sys
import tempfile
import time
import urllib.request
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench import results  # noqa: E402
from bench.harness import ServerProcess  # noqa: E402
from bench.night_play import play_served  # noqa: E402

SESSION = "night"
RULESET = "met"


def play_hour(db: Path, rng: random.Random, commands: int, first: bool) -> int:
    """Plays ``commands`` more commands into the night's session; returns its head."""
    from conteur.server.core.service import Chronicle
    from conteur.server.cli.simulate import next_commands, setup_commands
    from conteur.server.store.sqlite import SQLiteStore

    with SQLiteStore(db) as store:
        chronicle = Chronicle(store)
        futures = []
        sent = store.head()

        def submit(actor, command):
            nonlocal sent
            sent += 1
            futures.append(chronicle.submit(SESSION, command, actor,
                                            device=actor.character or "storyteller",
                                            command_id=f"night-{sent}"))

        if first:
            for actor, command in setup_commands(rng, RULESET):
                submit(actor, command)
        done = 0
        while done < commands:
            for _ in range(min(200, commands - done)):
                for actor, command in next_commands(rng, RULESET, chronicle.state(SESSION)):
                    submit(actor, command)
                done += 1
            for f in futures:
                f.result()
            futures.clear()
        return store.head()


def tokens(db: Path) -> tuple[dict[str, str], str]:
    """Each character's token, and a storyteller's."""
    from conteur.server.core.auth import Tokens
    from conteur.server.store.sqlite import SQLiteStore

    with SQLiteStore(db) as store:
        t = Tokens(store)
        players = {c: t.issue("player", character=c, session=SESSION, name=c)
                   for c in sorted(store.load_state(SESSION).session.characters)}
        return players, t.issue("storyteller", name="storyteller")


def true_state(db: Path):
    from conteur.server.store.sqlite import SQLiteStore

    with SQLiteStore(db) as store:
        return store.load_state(SESSION)


# a server that plays: the night is played at many times a phone's rate (a device's frames
# are not limited), and MET-16's windows are left to the players (a timer's seconds would be
# minutes of the venue's night compressed here)
PLAYING = {"rate": 1e9, "burst": 10**9, "window_timers": False}
SETTLE = 5.0  # seconds before the hour's RSS is read: the review's snapshot written meanwhile


def timed_get(url: str, token: str) -> tuple[float, int]:
    request = urllib.request.Request(url, headers={"Authorization": f"Bearer {token}"})
    t = time.perf_counter()
    with urllib.request.urlopen(request, timeout=600) as r:
        size = len(r.read())
    return time.perf_counter() - t, size


def without_snapshots(db: Path, to: Path) -> Path:
    """A copy of the chronicle without its views' snapshots (its states' stay): a restart
    as it was before view snapshots, each view folded from the log."""
    src, dst = sqlite3.connect(db), sqlite3.connect(to)
    try:
        src.backup(dst)
        if dst.execute("SELECT 1 FROM sqlite_master WHERE name='views'").fetchone():
            dst.execute("DELETE FROM views")
        dst.commit()
    finally:
        src.close()
        dst.close()
    return to


def rss_mb(pid: int) -> float:
    for row in Path(f"/proc/{pid}/status").read_text().splitlines():
        if row.startswith("VmRSS:"):
            return int(row.split()[1]) / 1024
    return float("nan")


def whole_bundle(base: str, token: str, pid: int) -> tuple[float, int, float, float, float]:
    """The whole bundle (``GET /review``, what exports and scripts load): its time, its
    size, and the server's RSS before it, at its highest while it was made (sampled) and
    after it."""
    import threading

    before = rss_mb(pid)
    peak, done = [before], threading.Event()

    def sample() -> None:
        while not done.wait(0.05):
            peak[0] = max(peak[0], rss_mb(pid))

    sampler = threading.Thread(target=sample, daemon=True)
    sampler.start()
    try:
        seconds, size = timed_get(f"{base}/review", token)
    finally:
        done.set()
        sampler.join()
    after = rss_mb(pid)
    return seconds, size, before, max(peak[0], after), after


def night(hours: int, rate: float, seed: int = 18, plays: bool = False, bundle: bool = False) -> None:
    per_hour = int(rate * 3600)
    how = ("the server plays the night: the hour's commands sent to it over its websocket"
           if plays else "the hour's play appended to its file by another process, the server reads")
    print(f"\n== night: {hours} hours at {rate:g} commands/s ({per_hour:,} commands an "
          f"hour, one {RULESET} session), simulated without waiting; one server up all night, "
          f"{how}", flush=True)
    rng = random.Random(seed)
    rows, wholes = [], []
    with tempfile.TemporaryDirectory() as tmp:
        db = Path(tmp) / "night.db"
        head = play_hour(db, rng, min(per_hour, 50), first=True)  # the session's opening
        players, storyteller = tokens(db)
        player = players[min(players)]
        state, sent = true_state(db), 0
        with ServerProcess(db, settings=PLAYING if plays else None) as server:
            base = f"{server.url}/sessions/{SESSION}"
            # the phone and the storyteller asked once at the start of the night: their
            # views are kept from then on (a restart is measured at the end)
            timed_get(f"{base}/state", player)
            timed_get(f"{base}/review/first", storyteller)
            start_rss = rss_mb(server.proc.pid)
            print(f"the night's opening: {head:,} events, server RSS {start_rss:.0f} MB", flush=True)
            for hour in range(1, hours + 1):
                if plays:
                    state, sent = asyncio.run(play_served(server.ws_url, SESSION, storyteller, players,
                                                          state, rng, per_hour, sent))
                    head = state.head
                else:
                    head = play_hour(db, rng, per_hour, first=False)
                # the first query of the hour takes in the hour's events; the next ones
                # are what a phone reconnecting in the same minute pays
                state_first, _ = timed_get(f"{base}/state", player)
                state_s, state_size = min(timed_get(f"{base}/state", player) for _ in range(3))
                review_s, review_size = timed_get(f"{base}/review/first", storyteller)
                review_again, _ = timed_get(f"{base}/review/first", storyteller)
                at_once = rss_mb(server.proc.pid)
                # what the server keeps, not what its snapshots' thread holds while it writes
                # the review's snapshot the first screen queued (server/web/http_review.py)
                time.sleep(SETTLE)
                rss = rss_mb(server.proc.pid)
                rows.append((head, state_s, review_s, review_size, rss))
                print(f"hour {hour}: {head:,} events, state query {state_s * 1000:.0f} ms "
                      f"({state_size / 1024:.0f} KB; the hour's first {state_first * 1000:.0f} ms), "
                      f"review first screen {review_s * 1000:.0f} ms ({review_size / 1e6:.2f} MB; "
                      f"again {review_again * 1000:.0f} ms), server RSS {rss:.0f} MB "
                      f"({at_once:.0f} MB at once)", flush=True)
                if bundle:
                    whole = whole_bundle(base, storyteller, server.proc.pid)
                    wholes.append(whole)
                    print(f"hour {hour}: the whole bundle {whole[0] * 1000:.0f} ms ({whole[1] / 1e6:.1f} MB), "
                          f"server RSS {whole[2]:.0f} MB before it, {whole[3]:.0f} MB at most while it was made, "
                          f"{whole[4]:.0f} MB after it ({whole[4] / whole[2]:.2f}x)", flush=True)
            server.kill9()  # the laptop crashes at the end of the night
        bare = without_snapshots(db, Path(tmp) / "bare.db")
        with ServerProcess(db) as server:  # and is started again
            base = f"{server.url}/sessions/{SESSION}"
            cold_state, _ = timed_get(f"{base}/state", player)
            cold_review, _ = timed_get(f"{base}/review/first", storyteller)
            whole_s, whole_size = timed_get(f"{base}/review", storyteller)
            cold_rss = rss_mb(server.proc.pid)
        with ServerProcess(bare) as server:  # the same, every view folded from the log
            base = f"{server.url}/sessions/{SESSION}"
            bare_state, _ = timed_get(f"{base}/state", player)
            bare_review, _ = timed_get(f"{base}/review/first", storyteller)
        print(f"after a kill -9 and a restart at {head:,} events: the first state query "
              f"{cold_state * 1000:.0f} ms (target < 100 ms) and the review's first screen "
              f"{cold_review * 1000:.0f} ms (target < 1 s) (from the views' snapshots; "
              f"without them, folded from the log: {bare_state * 1000:.0f} ms and {bare_review * 1000:.0f} ms), "
              f"the whole bundle {whole_s * 1000:.0f} ms ({whole_size / 1e6:.1f} MB), "
              f"server RSS {cold_rss:.0f} MB", flush=True)
    at = "night.plays" if plays else "night"
    results.record(f"{at}.restart.state_query", cold_state * 1000, "ms", bare_state * 1000, cold_state / bare_state,
                   "< 100 ms", what=f"after a kill -9 at {head:,} events: first state query",
                   against="the same restart without the views' snapshots")
    results.record(f"{at}.restart.first_screen", cold_review * 1000, "ms", bare_review * 1000,
                   cold_review / bare_review, "< 1000 ms",
                   what=f"after a kill -9 at {head:,} events: review's first screen",
                   against="the same restart without the views' snapshots")
    results.record(f"{at}.restart.bundle", whole_s, "s", what="after the restart: the whole bundle",
                   note=f"{whole_size / 1e6:.1f} MB")
    first, last = rows[0], rows[-1]
    print(f"night: last hour / first hour: state query {last[1] / first[1]:.2f}x (target <= 1.5x), "
          f"review first screen {last[2] / first[2]:.2f}x (target <= 1.5x), "
          f"RSS {last[4] / first[4]:.2f}x (target <= 2x{', the server plays' if plays else ''})", flush=True)
    hour = f"hour {len(rows)} ({last[0]:,} events) against hour 1"
    results.record(f"{at}.state_query", last[1] * 1000, "ms", first[1] * 1000, last[1] / first[1],
                   what=f"state query, {hour}")
    results.record(f"{at}.first_screen", last[2] * 1000, "ms", first[2] * 1000, last[2] / first[2], "<= 1.5x",
                   what=f"review's first screen, {hour}")
    results.record(f"{at}.rss", last[4], "MB", first[4], last[4] / first[4], "<= 2x",
                   what=f"server RSS, {hour}" + (", the server plays" if plays else ""))
    if wholes:
        a, b = wholes[0], wholes[-1]
        print(f"night: the whole bundle, last hour / first hour: time {b[0] / a[0]:.2f}x, size {b[1] / a[1]:.2f}x, "
              f"RSS added while made {(b[3] - b[2]) / max(a[3] - a[2], 1):.2f}x; RSS after / before it, "
              f"first hour {a[4] / a[2]:.2f}x, last hour {b[4] / b[2]:.2f}x (target ~1.2x)", flush=True)
        results.record(f"{at}.bundle.time", b[0], "s", a[0], b[0] / a[0], what="the whole bundle, last hour against the first",
                       note=f"{b[1] / 1e6:.1f} MB")
        results.record(f"{at}.bundle.rss_after", b[4], "MB", b[2], b[4] / b[2],
                       what="server RSS after the whole bundle, last hour", against="before it")
    if len(rows) > 1:
        print(f"night: the server's RSS grew {(last[4] - first[4]) * 2**20 / (last[0] - first[0]):.0f} bytes "
              f"per event from hour 1 to hour {len(rows)} (a kept review and a player's projection"
              f"{', the true state and the command index' if plays else ''})", flush=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--hours", type=int, default=6)
    parser.add_argument("--rate", type=float, default=20.0, help="commands per second at the venue")
    parser.add_argument("--quick", action="store_true", help="2 hours at 0.5 commands/s (CI)")
    parser.add_argument("--seed", type=int, default=18)
    parser.add_argument("--bundle", action="store_true",
                        help="also the whole bundle (GET /review) each hour: its time, size, the server's RSS before/after")
    parser.add_argument("--plays", action="store_true",
                        help="the server under test plays the night: commands sent over its websocket")
    results.option(parser)
    args = parser.parse_args()
    results.start("night", args)
    if args.quick:
        args.hours, args.rate = 2, 0.5
    night(args.hours, args.rate, args.seed, args.plays, args.bundle)


if __name__ == "__main__":
    main()
