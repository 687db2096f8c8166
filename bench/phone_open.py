"""What the venue channel costs a slow phone: the web app's own channel.js, in Debian's
Chromium at 390x844 with its CPU slowed down ``--slowdown`` times (6: Chrome DevTools'
"low-end mobile" profile), opens frames the server's events/channel.py sealed.

Three figures, each against a baseline timed side by side in the same page:
- opening one fan-out frame (a 117-byte event, sealed and padded to 128) against
  ``JSON.parse`` of the same frame, which the phone pays for every frame anyway;
- opening one resync batch (2,000 events, about 29 KiB) against parsing it;
- keying a socket (HKDF-SHA256 from the link's digest and both nonces, once a socket)
  against hashing the token (SHA-256, what a phone does once when it opens the link).

    python bench/phone_open.py                 # 6x slower CPU
    python bench/phone_open.py --slowdown 4    # Lighthouse's mobile profile
    python bench/phone_open.py --quick         # CI's smoke run
"""

from __future__ import annotations

import argparse
import functools
import http.server
import sys
import threading
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench import results  # noqa: E402
from tests.support.browser_support import ARGS, CHROMIUM, NO_CHROMIUM  # noqa: E402
from conteur.client import WEB_DIR  # noqa: E402
from conteur.events import channel, wire  # noqa: E402
from conteur.events.session import WentOutOfGame  # noqa: E402

# In the page: each figure is the median of ``rounds`` timings of ``n`` operations, the
# baseline's rounds alternated with the measured ones so that a neighbour's load falls on both.
MEASURE = """async (a) => {
  const ch = await import("/channel.js");
  const { psk, id } = ch.keyOf(a.token);
  const enc = new TextEncoder();
  const median = (xs) => xs.slice().sort((x, y) => x - y)[Math.floor(xs.length / 2)];
  const time = (n, fn) => { const t = performance.now(); for (let i = 0; i < n; i += 1) fn(i); return (performance.now() - t) / n; };
  // the baseline is cheap: run it more times, so that the clock's 0.1 ms grain does not hide it
  const pair = (n, rounds, ours, base) => {
    const o = [], b = [];
    for (let r = 0; r < rounds; r += 1) { b.push(time(n * 20, base)); o.push(time(n, ours(r))); }
    return { ours: median(o), base: median(b) };
  };
  const keys = ch.derive(psk, id, a.cn, a.sn);
  const checked = new ch.Channel(keys.up, keys.down).open(a.frames[0]);
  if (checked !== a.frame) throw new Error("the page opened another frame than the one sealed");
  const n = a.frames.length / a.rounds;
  const frame = pair(n, a.rounds, (r) => {
    const c = new ch.Channel(keys.up, keys.down);
    c.received = r * n;
    return (i) => c.open(a.frames[r * n + i]);
  }, () => JSON.parse(a.frame));
  const nb = a.batches.length / a.rounds;
  const batch = pair(nb, a.rounds, (r) => {
    const c = new ch.Channel(keys.up, keys.down);
    c.received = r * nb;
    return (i) => JSON.parse(c.open(a.batches[r * nb + i]));
  }, () => JSON.parse(a.batch));
  const key = pair(a.keyings, a.rounds, () => () => ch.derive(psk, id, a.cn, a.sn),
                   (i) => ch.keyOf(a.token + i));
  return { frame, batch, key };
}"""


class _Quiet(http.server.SimpleHTTPRequestHandler):
    def log_message(self, *args) -> None:
        pass


def serve_web() -> tuple[http.server.ThreadingHTTPServer, str]:
    """client/web as static files on loopback: the page needs only channel.js and its
    vendored primitives, not a server."""
    handler = functools.partial(_Quiet, directory=str(WEB_DIR))
    httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    threading.Thread(target=httpd.serve_forever, daemon=True).start()
    return httpd, f"http://127.0.0.1:{httpd.server_address[1]}/"


def sealed_frames(rounds: int, per_round: int, batches_per_round: int) -> dict:
    token = "bench-phone-token"
    psk, key_id = channel.psk_of_token(token), channel.key_id_of_token(token)
    cn, sn = channel.new_nonce(), channel.new_nonce()
    frame = wire.encode_event(12345, WentOutOfGame(character="character-042", reason="bench"))
    batch = wire.batches([frame] * 2000)[0]
    server = channel.server_side(psk, key_id, cn, sn)
    frames = [server.seal(frame) for _ in range(rounds * per_round)]
    server = channel.server_side(psk, key_id, cn, sn)  # counters from 0 again
    batches = [server.seal(batch) for _ in range(rounds * batches_per_round)]
    return {"token": token, "cn": cn, "sn": sn, "frame": frame, "batch": batch,
            "frames": frames, "batches": batches, "rounds": rounds}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--slowdown", type=float, default=6.0, help="CPU slowdown (Chrome DevTools' rate)")
    parser.add_argument("--quick", action="store_true", help="few rounds, for CI's smoke run")
    results.option(parser)
    args = parser.parse_args()
    if CHROMIUM is None:
        raise SystemExit(NO_CHROMIUM)
    results.start("phone_open", args)
    rounds = 3 if args.quick else 9
    work = sealed_frames(rounds, 50 if args.quick else 400, 2 if args.quick else 10)
    work["keyings"] = 5 if args.quick else 40

    from playwright.sync_api import sync_playwright

    httpd, url = serve_web()
    try:
        with sync_playwright() as p:
            browser = p.chromium.launch(executable_path=CHROMIUM, args=ARGS)
            page = browser.new_page(viewport={"width": 390, "height": 844})
            page.goto(url + "channel.js")  # any page of that origin: the module is imported from it
            cdp = page.context.new_cdp_session(page)
            cdp.send("Emulation.setCPUThrottlingRate", {"rate": args.slowdown})
            got = page.evaluate(MEASURE, work)
            browser.close()
    finally:
        httpd.shutdown()

    slow = f"Chromium, CPU {args.slowdown:g}x slower"
    us, ms = 1000.0, 1.0
    print(f"== the venue channel on a slow phone ({slow}, 390x844), median of {rounds} rounds")
    rows = [
        ("open one fan-out frame", "phone.open_frame", got["frame"], us, "us",
         f"open one {len(work['frame'])}-byte fan-out frame (padded to 128), slow phone",
         "JSON.parse of the same frame"),
        ("open one resync batch", "phone.open_batch", got["batch"], ms, "ms",
         f"open and parse one {len(work['batch']) // 1024} KiB resync batch of 2,000 events, slow phone",
         "JSON.parse of the same batch"),
        ("key a socket", "phone.derive", got["key"], ms, "ms",
         "key a socket (HKDF-SHA256 from the link's digest and both nonces), slow phone",
         "SHA-256 of the token"),
    ]
    for label, key, fig, scale, unit, what, against in rows:
        ours, base = fig["ours"] * scale, fig["base"] * scale
        ratio = ours / base if base else None
        print(f"  {label:26} {ours:10.2f} {unit}   baseline {base:8.2f} {unit} ({against})"
              + (f"   {ratio:.1f}x" if ratio else ""))
        results.record(key, ours, unit, base, ratio, what=what, against=against,
                       note=f"{slow}; median of {rounds} rounds")
    frames_per_s = 1e6 / (got["frame"]["ours"] * us) if got["frame"]["ours"] else 0
    print(f"  a slow phone opens {frames_per_s:,.0f} fan-out frames a second"
          f" (a night sends it a few a second)")


if __name__ == "__main__":
    main()
