"""Property: over random simulated sessions (``conteur.server.cli.simulate.play``) with challenges
played by hand between random pairs, no player's export, in any format, holds a secret
of another character: not another's sealed throw, bid or overbid, not another's sheet,
not the account of an offline challenge it took no part in."""

from __future__ import annotations

import json
import random
import tempfile
from pathlib import Path

import msgspec
from hypothesis import HealthCheck, given, settings, strategies as st

from conteur.events import views
from conteur.events.model import STORYTELLER, Actor
from conteur.server.audit import export as ex
from conteur.server.audit import review as rv
from conteur.server.core.service import Chronicle
from conteur.server.cli.simulate import play
from conteur.server.store.sqlite import SQLiteStore, decode_events
from tests.support.client_support import command
from tests.support.examples import examples

SESSION = "prop"


def _offline_play(chronicle: Chronicle, rng: random.Random, canaries: dict[str, frozenset[str]]) -> None:
    """Challenges played by hand between random pairs; each account holds a canary word
    that only the pair (and storytellers) may ever read."""
    state = chronicle.state(SESSION)
    ids = sorted(state.session.characters)
    for n in range(rng.randint(1, 4)):
        a, b = rng.sample(ids, 2)
        canary = f"canary{rng.randrange(10**9)}x{n}"
        canaries[canary] = frozenset((a, b))
        actor = Actor(role="player", character=a, name=a)
        done = chronicle.execute_sync(SESSION, command(
            "record_offline_challenge", character=a, opponent=b, winner=rng.choice((a, b)),
            played_at="2026-11-29T22:00:00", account=f"by hand: {canary}"), actor)
        assert not done.outcome.rejected, done.outcome
        record = f"o{n + 1}"
        answer = rng.choice(("confirm", "dispute", None))
        opponent = Actor(role="player", character=b, name=b)
        if answer == "confirm":
            chronicle.execute_sync(SESSION, command("confirm", character=b, record=record), opponent)
        elif answer == "dispute":
            chronicle.execute_sync(SESSION, command("dispute", character=b, record=record,
                                                    reason=f"no: {canary}"), opponent)
            if rng.random() < 0.5:
                chronicle.execute_sync(SESSION, command("rule_offline", record=record, winner=b), STORYTELLER)


def _secret_fields(event) -> dict:
    """The fields of an event its non-owners must never receive."""
    return {k: getattr(event, k) for k in ("value", "choice", "draws", "sheet", "account")
            if getattr(event, k, None) not in (None, (), "")}


@settings(max_examples=examples(6), deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(seed=st.integers(0, 10_000), size=st.integers(80, 400))
def test_no_players_export_holds_a_secret_of_another(seed, size):
    rng = random.Random(seed)
    canaries: dict[str, frozenset[str]] = {}
    with tempfile.TemporaryDirectory() as tmp:
        with SQLiteStore(Path(tmp) / "prop.db") as store:
            chronicle = Chronicle(store)
            play(chronicle, SESSION, events=size, seed=seed, ruleset="met", close=False)
            _offline_play(chronicle, rng, canaries)
            play(chronicle, SESSION, events=size // 2, seed=seed + 1, ruleset="met", close=True)
            rows = store.read_after(SESSION)
            events = decode_events([r.data for r in rows])
            characters = sorted(chronicle.state(SESSION).session.characters)
            for character in characters:
                viewer = Actor(role="player", character=character, name=character)
                review = rv.build_from(SESSION, rows, events, viewer, "en")
                outputs = {fmt: ex.render(review, fmt).decode() for fmt in ex.FORMATS}
                # 1. no canary of a pair the player is not in, in any format; the pair's
                #    own log does hold it (the test would pass vacuously otherwise)
                for canary, pair in canaries.items():
                    if character in pair:
                        assert canary in outputs["jsonl"] and canary in outputs["csv"]
                        continue
                    for fmt, text in outputs.items():
                        assert canary not in text, (character, fmt, canary)
                # 2. every line of the player's log is exactly its view of that event, and
                #    the events it may not see whole carry none of their secret fields
                lines = [json.loads(line) for line in outputs["jsonl"].splitlines()]
                expected = [(r.seq, views.view(e, viewer)) for r, e in zip(rows, events)]
                expected = [(seq, e) for seq, e in expected if e is not None]
                assert [line["seq"] for line in lines] == [seq for seq, _ in expected]
                for line, (seq, seen) in zip(lines, expected):
                    assert line["event"] == json.loads(msgspec.json.encode(seen))
                for row, event in zip(rows, events):
                    owners = event.owners()
                    if owners is None or character in owners:
                        continue
                    seen = views.view(event, viewer)
                    if seen is not None:
                        assert _secret_fields(seen) == {}, (row.seq, seen)
                # 3. the sentences never tell another's sealed bid: every bid the player
                #    saw sealed is told "(sealed)" in its challenge's line of the record
                for line in lines:
                    e = line["event"]
                    if e["type"] == "met.bid_declared" and e["character"] != character:
                        assert e["value"] is None
