"""How soon a phone is live again, on Chromium, Firefox ESR and WebKitGTK: after the server
was down (stopped, then started again on the same port, ``--outage`` seconds later), and
after its screen was locked then unlocked while the server restarted.

Each run times, in the page, the moment the app is live again (its websocket welcomed and
caught up, ``window.conteur.live``) against the moment the server answers again. Beside
it, side by side in the same page and run, the baseline: a bare loop fetching /health
every 50 ms, the soonest any page could know the server is back. The figure kept is the
p95 over the runs (targets: < 3 s after an outage, < 1 s after the screen is shown).
The engines are driven as the cross-engine tests drive them (tests/support/engines_support.py).

    python bench/reconnect.py                       # 120 s outages, 10 runs an engine (about 2 hours)
    python bench/reconnect.py --outage 20 --runs 10 # shorter outages
    python bench/reconnect.py --quick               # CI's smoke run: 3 s outages, 2 runs
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench import results  # noqa: E402
from tests.support.client_support import make_chronicle  # noqa: E402
from tests.support.engines_support import ENGINES, HIDE, MISSING, Engine, free_port  # noqa: E402
from conteur.server.web.app import Served, create_app  # noqa: E402

# In the page: when the app is live again, and when /health first answers, after ``since``.
WATCH = """(down) => {
  // what counts is after the outage: the app seen offline, a fetch seen failing
  window.__back = { live: 0, health: 0, offline: down, failed: down };
  clearInterval(window.__watch);
  window.__watch = setInterval(() => {
    const b = window.__back;
    if (!window.conteur.live) b.offline = true;
    else if (b.offline && !b.live) b.live = Date.now();
  }, 10);
  const poll = async () => {
    const b = window.__back;
    while (!b.health) {
      try {
        const res = await fetch("/health", { cache: "no-store" });
        if (res.ok && b.failed) { b.health = Date.now(); break; }
      } catch (err) { b.failed = true; }
      await new Promise((ok) => setTimeout(ok, 50));
    }
  };
  poll();
  return true;
}"""
LIVE = "() => window.conteur && window.conteur.live"
# a hidden page's timers stand still on a phone (iOS suspends it): its backoff never fires
ASLEEP = "(on) => { const n = window.conteur.net; Object.assign(n, on ? { base: 6e5, cap: 6e5, probeCap: 6e5 } : { base: 500, cap: 10000, probeCap: 1500 }); return true; }"
OFFLINE = "() => !window.conteur.live"
BACK = "() => window.__back.live && window.__back.health ? window.__back : null"


def p95(xs: list[float]) -> float:
    xs = sorted(xs)
    return xs[min(len(xs) - 1, round(0.95 * (len(xs) - 1)))]


def measure(engine: str, runs: int, outage: float, playwright) -> dict[str, list[tuple[float, float]]]:
    folder = Path(tempfile.mkdtemp(prefix="conteur-reconnect-"))
    setup = make_chronicle(folder / "c.db")
    port = free_port()
    server = Served(create_app(setup.db), port=port, timeout_graceful_shutdown=1).__enter__()
    eng = Engine(engine, playwright)
    out: dict[str, list[tuple[float, float]]] = {"outage": [], "shown": []}
    try:
        tab = eng.tab()
        tab.goto(f"http://127.0.0.1:{port}/#join={setup.players['anna']}")
        tab.wait(LIVE, what="the phone online")
        for i in range(runs):
            # an outage: the server down for ``outage`` s, the phone awake all along
            tab.run(ASLEEP, False)
            tab.run(WATCH, False)
            server.stop()
            tab.wait(OFFLINE, what="the phone offline", timeout=30)
            time.sleep(outage)
            server = Served(create_app(setup.db), port=port, timeout_graceful_shutdown=1).__enter__()
            back = time.time() * 1000
            seen = tab.wait(BACK, what="the phone back", timeout=180)
            out["outage"].append(((seen["live"] - back) / 1000, (seen["health"] - back) / 1000))
            # the screen locked while the server restarts, then unlocked
            tab.run(ASLEEP, True)
            tab.run(HIDE, "hidden")
            server.stop()
            tab.wait(OFFLINE, what="the phone offline", timeout=30)
            server = Served(create_app(setup.db), port=port, timeout_graceful_shutdown=1).__enter__()
            time.sleep(2)  # the server is up before the player looks again
            tab.run(WATCH, True)
            shown = time.time() * 1000
            tab.run(HIDE, "visible")
            seen = tab.wait(BACK, what="the phone live once shown", timeout=60)
            out["shown"].append(((seen["live"] - shown) / 1000, (seen["health"] - shown) / 1000))
            print(f"  {engine} run {i + 1}: back {out['outage'][-1][0]:.2f} s after the outage "
                  f"(/health {out['outage'][-1][1]:.2f} s), live {out['shown'][-1][0]:.2f} s after shown", flush=True)
    finally:
        eng.close()
        server.stop()
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--outage", type=float, default=120.0, help="seconds the server stays down (default 120)")
    parser.add_argument("--runs", type=int, default=10)
    parser.add_argument("--engines", default=",".join(ENGINES))
    parser.add_argument("--quick", action="store_true", help="CI smoke run: 3 s outages, 2 runs")
    results.option(parser)
    args = parser.parse_args()
    if args.quick:
        args.outage, args.runs = 3.0, 2
    results.start("reconnect", args)
    from playwright.sync_api import sync_playwright

    with sync_playwright() as playwright:
        for engine in args.engines.split(","):
            if MISSING[engine]:
                print(f"{engine}: skipped, {MISSING[engine]}")
                continue
            out = measure(engine, args.runs, args.outage, playwright)
            for kind, target, what in (("outage", "< 3 s", f"online again after a {args.outage:g} s outage"),
                                       ("shown", "< 1 s", "live again once shown after a locked screen")):
                live = p95([a for a, _ in out[kind]])
                floor = p95([b for _, b in out[kind]])
                ratio = live / floor if floor > 0 else None
                print(f"{engine}: {what}: p95 {live:.2f} s over {args.runs} runs (median "
                      f"{statistics.median(a for a, _ in out[kind]):.2f} s); a bare /health loop {floor:.2f} s")
                results.record(f"reconnect.{engine}.{kind}", live, "s", floor, ratio, target,
                               what=f"{engine}: {what}, p95 of {args.runs}",
                               against="a bare /health loop in the same page")


if __name__ == "__main__":
    main()
