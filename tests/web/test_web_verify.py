"""The phone checks its own dice (FAIR-2): after `session.closed`
reveals the seed, the web app derives its character's draws again with a vendored HMAC-SHA256
(client/web/vendor/noble-hashes) and marks each roll verified, or names the mismatch.

Real Chromium against a real server. Plain HTTP on a LAN name (``lan_browser``: not a secure
context, so no Web Crypto ``subtle``), and on 127.0.0.1 with ``crypto.subtle`` made to fail on
any touch, so the check provably needs neither. A record doctored on its way to the phone (a
websocket frame rewritten by Playwright) is flagged with the draw named. And a differential
test: the browser's faces are ``events.fair.derive_face``'s on random sessions, streams,
counters, entropy (non-ASCII, quotes, control characters) and sides."""

from __future__ import annotations

import hashlib
import hmac
import inspect
import json
import random

import httpx
import pytest

from conteur.events import fair
from tests.support.client_support import events_of_type
from tests.support.examples import examples
from tests.support.browser_support import CHROMIUM
from tests.support.web_support import Device, no_subtle, route_events, second_link, NO_SUBTLE

pytestmark = [
    pytest.mark.browser,
    pytest.mark.skipif(CHROMIUM is None, reason="Debian's chromium is not installed (apt install chromium)"),
]

SESSION = "action-demo"

def roll(device: Device, characteristic: str, difficulty: int = 2, visibility: str = "open") -> None:
    page = device.page
    page.locator("#act-characteristic").select_option(characteristic)
    page.locator("#actdiff").fill(str(difficulty))
    page.locator("#act-vis").select_option(visibility)
    page.get_by_test_id("roll").click()


def close(server, storyteller: str) -> None:
    token = storyteller.split("&")[0]
    answer = httpx.post(f"{server.url}/sessions/{SESSION}/commands", timeout=30,
                        json={"command": {"type": "close_session"}, "id": "close-1"},
                        headers={"Authorization": f"Bearer {token}"})
    assert answer.status_code in (200, 201) and answer.json()["type"] == "ack", answer.text


def play_a_night(nova: Device, rook: Device) -> None:
    """Nova rolls open and secret, and against Rook (sealed until he answers)."""
    roll(nova, "science")
    nova.expect(nova.page.get_by_test_id("roll-result")).to_have_count(1)
    roll(nova, "combat", 3, "secret")
    nova.expect(nova.page.get_by_test_id("roll-result")).to_have_count(2)
    nova.page.get_by_test_id("act-against").select_option("rook")
    nova.page.locator("#act-characteristic").select_option("combat")
    nova.page.get_by_test_id("roll").click()
    call = rook.page.get_by_test_id("opposed-call")
    rook.expect(call).to_have_count(1)
    call.get_by_test_id("opposed-answer").click()
    nova.expect(nova.page.get_by_test_id("opposed-result")).to_have_count(1)


def test_fair_2_after_close_the_phone_shows_its_rolls_verified_over_plain_http(lan_browser, demo):
    server, db, storyteller, links = demo
    base = f"http://venue.lan:{server.port}"
    nova = Device(lan_browser, base, links["nova"])
    rook = Device(lan_browser, base, links["rook"], before=no_subtle)
    assert nova.page.evaluate("window.isSecureContext") is False
    assert nova.page.evaluate("typeof crypto.subtle") == "undefined"  # the browser gives none here
    play_a_night(nova, rook)
    roll(rook, "athletics")
    rook.expect(rook.page.get_by_test_id("roll-result")).to_have_count(2)  # his answer and this one
    assert nova.page.get_by_test_id("dice-check").count() == 0  # nothing to check before close

    close(server, storyteller)
    for device, rolls in ((nova, 3), (rook, 2)):
        check = device.page.get_by_test_id("dice-check")
        device.expect(check).to_have_attribute("data-ok", "true")
        device.expect(check).to_have_attribute("data-verified", str(rolls))
        device.expect(check).to_contain_text(f"All {rolls} of your rolls verified")
        device.expect(device.page.get_by_test_id("roll-verified")).to_have_count(rolls)
        device.expect(device.page.get_by_test_id("roll-mismatch")).to_have_count(0)
    assert rook.page.evaluate("window.__subtle") == 0
    nova.shot("player-dice-verified-360x740", focus="[data-testid=dice-check]")
    for d in (nova, rook):
        d.close()


def doctor(page, roll_id: str, found: dict) -> None:
    """Nova's roll ``roll_id`` reaches this page with its first die raised by one, in its
    shown dice and in its draw record alike (a forger's consistent lie)."""

    def change(event):
        if event.get("type") == "action.rolled" and event.get("roll") == roll_id:
            record = event["draws"][0]  # array-like: counter, sides, face, entropy[, stream]
            face = record[2] % record[1] + 1
            found.update(record=dict(zip(("counter", "sides", "face", "entropy", "stream"), record)), forged=face)
            record[2] = face
            event["dice"] = [face, *event["dice"][1:]]

    route_events(page, change)


def test_fair_2_a_doctored_record_is_flagged_with_the_draw_named(browser, demo):
    server, db, storyteller, links = demo
    nova = Device(browser, server.url, links["nova"])
    found: dict = {}
    forged = Device(browser, server.url, second_link(server, links["nova"]),
                    before=lambda page: (no_subtle(page), doctor(page, "a1", found)))
    roll(nova, "science")
    roll(nova, "combat", 1)
    for d in (nova, forged):
        d.expect(d.page.get_by_test_id("roll-result")).to_have_count(2)
    close(server, storyteller)

    honest = nova.page.get_by_test_id("dice-check")
    nova.expect(honest).to_have_attribute("data-ok", "true")
    check = forged.page.get_by_test_id("dice-check")
    forged.expect(check).to_have_attribute("data-ok", "false")
    forged.expect(check).to_have_attribute("data-mismatches", "1")
    record = found["record"]
    stream = f"{record['stream']} " if record.get("stream") else ""
    named = f"draw {stream}#{record['counter']} (d{record['sides']}): recorded {found['forged']}, the seed gives {record['face']}"
    forged.expect(check.get_by_test_id("dice-mismatches")).to_contain_text(named)
    card = forged.page.locator("[data-testid=roll-result][data-roll=a1]")
    forged.expect(card.get_by_test_id("roll-mismatch")).to_have_text(named)
    forged.expect(forged.page.locator("[data-testid=roll-result][data-roll=a2]").get_by_test_id("roll-verified")).to_have_count(1)
    assert forged.page.evaluate("window.__subtle") == 0
    [stored] = [e for e in events_of_type(db, "action.rolled") if e["roll"] == "a1"]
    assert stored["draws"][0][2] == record["face"] != found["forged"]  # the server's log is honest
    forged.shot("player-dice-mismatch-360x740", focus="[data-testid=dice-check]")
    for d in (nova, forged):
        d.close()


def test_fair_2_a_dice_row_that_is_not_its_draws_is_flagged(browser, demo):
    """A frame whose shown dice were changed but not its record: the record verifies, the
    shown dice do not match it, and the phone says so."""
    server, db, storyteller, links = demo

    def shown_only(page):
        def change(event):
            if event.get("type") == "action.rolled":
                event["dice"] = [event["dice"][0] % event["sides"] + 1, *event["dice"][1:]]

        route_events(page, change)

    nova = Device(browser, server.url, links["nova"], before=shown_only)
    roll(nova, "science")
    nova.expect(nova.page.get_by_test_id("roll-result")).to_have_count(1)
    close(server, storyteller)
    check = nova.page.get_by_test_id("dice-check")
    nova.expect(check).to_have_attribute("data-ok", "false")
    nova.expect(check).to_contain_text("the dice shown (")
    nova.close()


# ---------------------------------------------------------------- differential


def _reference_face(seed: bytes, session: str, counter: int, sides: int, entropy: str, stream: str) -> int:
    """events.fair's derivation with streams, as the draw contract (FAIR-2) states it, written
    out again here."""
    parts = [session, stream, counter, entropy] if stream else [session, counter, entropy]
    width = 1
    while 256**width < sides:
        width += 1
    limit = (256**width // sides) * sides
    block = 0
    while True:
        msg = json.dumps([*parts, block], separators=(",", ":"), ensure_ascii=False).encode()
        digest = hmac.digest(seed, msg, hashlib.sha256)
        for i in range(0, len(digest) - width + 1, width):
            x = int.from_bytes(digest[i : i + width], "big")
            if x < limit:
                return x % sides + 1
        block += 1


HAS_STREAM = "stream" in inspect.signature(fair.derive_face).parameters


def python_face(seed: bytes, session: str, counter: int, sides: int, entropy: str, stream: str) -> int:
    if HAS_STREAM:
        return fair.derive_face(seed, session, counter, sides, entropy, stream=stream)
    if not stream:
        return fair.derive_face(seed, session, counter, sides, entropy)
    return _reference_face(seed, session, counter, sides, entropy, stream)


ALPHABET = "aZ09 _-éàçÉœ€ßøΩ漢字😀\"\\/\n\t\r\b\f\x00\x01\x1f\x7f\u2028\u2029<>&'"


def _text(rng: random.Random, most: int) -> str:
    return "".join(rng.choice(ALPHABET) for _ in range(rng.randint(0, most)))


def test_fair_2_the_browsers_faces_are_pythons(browser, demo):
    """Random (session, stream, counter, entropy, sides) cases, JavaScript against
    events.fair.derive_face; sides up to 70,000 so chunks of two and three bytes are drawn
    too. The messages match byte for byte first, so a difference is named where it starts."""
    server, *_ = demo
    rng = random.Random(13)
    cases = []
    for _ in range(examples(300)):
        seed = bytes(rng.getrandbits(8) for _ in range(32))
        sides = rng.choice([2, 3, 6, 8, 10, 20, 100, 255, 256, 257, 1000, 65536, 70000, rng.randint(1, 5000)])
        cases.append({"seed": seed.hex(), "session": _text(rng, 12) or "s", "stream": rng.choice(["", _text(rng, 10)]),
                      "counter": rng.choice([0, 1, rng.randint(0, 10**6), 2**40]), "entropy": _text(rng, 20),
                      "sides": sides})
    page = browser.new_page()
    page.add_init_script(NO_SUBTLE)
    page.goto(f"{server.url}/offline.html")
    got = page.evaluate("""async (cases) => {
      const v = await import("/verify.js");
      const hex = (b) => [...b].map((x) => x.toString(16).padStart(2, "0")).join("");
      return cases.map((c) => ({
        message: hex(v.blockMessage(c.session, c.stream, c.counter, c.entropy, 0)),
        face: v.deriveFace(v.hexToBytes(c.seed), c.session, c.stream, c.counter, c.sides, c.entropy),
      }));
    }""", cases)
    assert page.evaluate("window.__subtle") == 0
    page.close()
    for case, js in zip(cases, got, strict=True):
        parts = [case["session"], case["stream"], case["counter"], case["entropy"], 0] if case["stream"] \
            else [case["session"], case["counter"], case["entropy"], 0]
        expected_message = json.dumps(parts, separators=(",", ":"), ensure_ascii=False).encode()
        assert bytes.fromhex(js["message"]) == expected_message, case
        if not case["stream"]:
            assert expected_message == fair.block_message(case["session"], case["counter"], case["entropy"], 0)
        face = python_face(bytes.fromhex(case["seed"]), case["session"], case["counter"], case["sides"],
                           case["entropy"], case["stream"])
        assert js["face"] == face, case
