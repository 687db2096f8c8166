"""One evening told three ways (review, export, page): Anna and Bruno's challenges with a
tie and bids, an overbid that fails, a Time Out, a storyteller's overrule, a static test
the server throws for, and a challenge played by hand while the Wi-Fi was down, disputed
and ruled. Built through the real command path on a real SQLite file."""

from __future__ import annotations

import random
from pathlib import Path

from conteur.events import met
from conteur.events.model import STORYTELLER, Actor
from conteur.server.cli.simulate import next_commands, setup_commands
from conteur.server.core.service import Chronicle
from conteur.server.store.sqlite import SQLiteStore
from tests.support.client_support import SESSION, Setup, command, make_chronicle

ANNA = Actor(role="player", character="anna", name="anna")
BRUNO = Actor(role="player", character="bruno", name="bruno")


def run(chronicle: Chronicle, actor: Actor, tag: str, session: str = SESSION, **fields) -> tuple[int, ...]:
    executed = chronicle.execute_sync(session, command(tag, **fields), actor)
    assert not executed.outcome.rejected, (tag, executed.outcome)
    return executed.outcome.seqs


def play_evening(chronicle: Chronicle, session: str = SESSION, *, close: bool = True) -> None:
    def go(actor, tag, **fields):
        return run(chronicle, actor, tag, session, **fields)

    # c1: a tie of throws, bids 6 to 7: Bruno wins, Anna accepts (MET-3)
    go(ANNA, "challenge", character="anna", defender="bruno", attribute="physical")
    go(ANNA, "throw", character="anna", challenge="c1", round=1, choice="rock")
    go(BRUNO, "throw", character="bruno", challenge="c1", round=1, choice="rock")
    go(ANNA, "bid", character="anna", challenge="c1", round=1, value=6)
    go(BRUNO, "bid", character="bruno", challenge="c1", round=1, value=7)
    go(ANNA, "accept", character="anna", challenge="c1")
    # c2: Anna wins the throw; Bruno overbids 7 to 6, not 4 above: he loses and owes a tie (MET-13)
    go(ANNA, "challenge", character="anna", defender="bruno", attribute="physical")
    go(ANNA, "throw", character="anna", challenge="c2", round=1, choice="rock")
    go(BRUNO, "throw", character="bruno", challenge="c2", round=1, choice="scissors")
    go(BRUNO, "overbid", character="bruno", challenge="c2", value=7)
    go(ANNA, "bid", character="anna", challenge="c2", round=1, value=6)
    # a Time Out, then the storyteller overrules c2 (MET-16)
    go(STORYTELLER, "freeze", scope="session")
    go(STORYTELLER, "overrule", challenge="c2", winner="bruno", reason="Anna's knife was out of reach")
    go(STORYTELLER, "resume", scope="session")
    # c3: a static Mental test; the server throws for the storyteller (FAIR-2)
    go(ANNA, "challenge", character="anna", kind="static", attribute="mental", difficulty=3)
    go(ANNA, "throw", character="anna", challenge="c3", round=1, choice="paper")
    go(STORYTELLER, "throw", character="storyteller", challenge="c3", round=1)
    # the server's face is random: settle whatever it gave (a tie goes to Anna's 4 Mental)
    c3 = chronicle.state(session).met.get("c3")
    if c3.status == "bidding":
        go(ANNA, "bid", character="anna", challenge="c3", round=c3.round, value=4)
    elif c3.status == "window":
        go(ANNA, "accept", character="anna", challenge="c3")
    assert chronicle.state(session).met.get("c3").status == "resolved"
    # o1.anna+bruno: played by hand while the Wi-Fi was down; Bruno disputes; the storyteller rules
    go(ANNA, "record_offline_challenge", character="anna", opponent="bruno", winner="anna",
       attribute="social", played_at="2026-11-29T21:40:00+01:00", account="paper covers rock")
    go(BRUNO, "dispute", character="bruno", record="o1.anna+bruno", reason="we both threw rock", winner="bruno")
    go(STORYTELLER, "rule_offline", record="o1.anna+bruno", winner="bruno", reason="Bruno's bid was higher")
    # o2.anna+bruno: confirmed at once
    go(BRUNO, "record_offline_challenge", character="bruno", opponent="anna", winner="anna",
       attribute="mental", played_at="2026-11-29T21:50:00+01:00")
    go(ANNA, "confirm", character="anna", record="o2.anna+bruno")
    if close:
        go(STORYTELLER, "close_session")


def evening(db: str | Path, *, close: bool = True) -> Setup:
    setup = make_chronicle(db)
    with SQLiteStore(str(db)) as store:
        play_evening(Chronicle(store), close=close)
    return setup


def met_night(db, session: str, commands: int, seed: str, overrules: float | None = None) -> None:
    """A simulated MET night of ``commands`` steps; with ``overrules``, a storyteller
    overrules a finished challenge, any, with that chance at each step (MET-14)."""
    rng = random.Random(seed)
    with SQLiteStore(db) as store:
        chronicle = Chronicle(store)
        for actor, cmd in setup_commands(rng, "met"):
            chronicle.submit(session, cmd, actor).result()
        for _ in range(commands):
            state = chronicle.state(session)
            if overrules is not None and rng.random() < overrules:
                resolved = [c for page in state.met.done for c in page.values() if c.status == "resolved"]
                if resolved:
                    ch = rng.choice(resolved)
                    chronicle.submit(session, met.Overrule(challenge=ch.id, winner=rng.choice(ch.sides),
                                                           reason="on reflection"), STORYTELLER).result()
                    continue
            for actor, cmd in next_commands(rng, "met", state):
                chronicle.submit(session, cmd, actor).result()


def random_night(db, session: str, ruleset: str, commands: int, rng: random.Random, *, close: bool) -> None:
    """A simulated night of one ruleset through the real command path: the set-up, then
    ``commands`` rounds of what the simulator's players would send, closed or not."""
    with SQLiteStore(db) as store:
        chronicle = Chronicle(store)
        for actor, cmd in setup_commands(rng, ruleset):
            chronicle.submit(session, cmd, actor).result()
        for _ in range(commands):
            for actor, cmd in next_commands(rng, ruleset, chronicle.state(session)):
                chronicle.submit(session, cmd, actor).result()
        if close:
            assert not chronicle.execute_sync(session, command("close_session"), STORYTELLER).outcome.rejected


def every_viewer(store: SQLiteStore, session: str) -> list[Actor]:
    """The storytellers, an observer display and each character's player."""
    characters = sorted(store.load_state(session).session.characters)
    return [STORYTELLER, Actor(role="observer", name="eye")] + [
        Actor(role="player", character=c, name=c) for c in characters]
