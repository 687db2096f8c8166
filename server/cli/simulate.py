"""`conteur simulate`: a random but valid session played through the real command path.

The simulated players and storyteller pick commands from the random generators of
``events.simulate`` (one module per ruleset); every command goes
through ``Chronicle.submit`` exactly as a websocket command does: decided, folded,
group-committed, with fair draws from the session's secret seed. About one command in
twenty is deliberately wrong, so rejections are in the log as they would be on a night.
The session is closed at the end, which reveals its seed: `conteur verify` then
recomputes every draw.
"""

from __future__ import annotations

import os
import random
from pathlib import Path

import msgspec

from conteur.events import session
from conteur.events.simulate import SCENE, action, met, v5
from conteur.events.model import STORYTELLER, Actor
from conteur.events.sheets import ActionSheet, V5Sheet
from conteur.server.core.service import Chronicle
from conteur.server.store.sqlite import SQLiteStore


class Summary(msgspec.Struct, kw_only=True):
    sessions: list[str]
    events: int
    accepted: int
    rejected: int
    head: int


def _v5_sheet(rng: random.Random) -> V5Sheet:
    return V5Sheet(
        attributes={a: rng.randint(1, 5) for a in ("Strength", "Dexterity", "Wits", "Charisma", "Resolve")},
        skills={s: rng.randint(0, 4) for s in ("Brawl", "Firearms", "Occult", "Persuasion")},
        willpower=rng.randint(3, 7), humanity=rng.randint(5, 8), hunger=rng.randint(0, 3),
    )


def _action_sheet(rng: random.Random) -> ActionSheet:
    return ActionSheet(
        characteristics={c: rng.randint(4, 7) for c in ("Motricité", "Science", "Perception", "Social")},
        expertises=tuple(rng.sample(["Science", "Perception", "Motricité"], rng.randint(0, 2))),
    )


RULESETS = ("met", "v5", "action")


def setup_commands(rng: random.Random, ruleset: str) -> list[tuple[Actor, object]]:
    if ruleset == "met":
        return met.setup_session(rng, characters=4)
    commands: list[tuple[Actor, object]] = [
        (STORYTELLER, session.OpenSession(name=f"simulated {ruleset}")),
        (STORYTELLER, session.OpenScene(scene=SCENE, name="Elysium")),
    ]
    for i in range(1, 5):
        commands += _new_character(rng, ruleset, f"{ruleset}{i}")
    return commands


def _new_character(rng: random.Random, ruleset: str, cid: str) -> list[tuple[Actor, object]]:
    sheet = _v5_sheet(rng) if ruleset == "v5" else _action_sheet(rng)
    return [
        (STORYTELLER, session.AddCharacter(character=cid, name=cid.upper(), sheet=sheet)),
        (Actor(role="player", character=cid, name=cid), session.JoinScene(character=cid, scene=SCENE)),
    ]


def next_commands(rng: random.Random, ruleset: str, state, groups: bool = False) -> list[tuple[Actor, object]]:
    if ruleset == "met":
        return [met.random_command(rng, state, groups)]
    if ruleset == "v5":
        return [v5.random_command(rng, state)]
    alive = [c for c, ch in state.session.characters.items() if c not in state.action.dead]
    if len(alive) < 4:  # a sacrificed character dies (ACT-8): its player brings a new one
        return _new_character(rng, "action", f"action{len(state.session.characters) + 1}")
    return [action.random_command(rng, state)]


def play(chronicle: Chronicle, session_id: str, *, events: int, seed: int, progress=None,
         close: bool = True, ruleset: str = "mixed", groups: bool = False) -> Summary:
    """Plays until about ``events`` events; "mixed" runs one session per ruleset side by
    side (``session_id``-met, -v5, -action), as the demo chronicle does. ``groups``: some
    MET challenges are one initiator against several defenders."""
    rng = random.Random(seed)
    rulesets = RULESETS if ruleset == "mixed" else (ruleset,)
    sessions = {r: f"{session_id}-{r}" if ruleset == "mixed" else session_id for r in rulesets}
    accepted = rejected = 0
    futures = []
    produced = sent = 0

    def submit(sid, actor, command):
        nonlocal sent
        sent += 1
        device = actor.character or "storyteller"
        futures.append(chronicle.submit(sid, command, actor, device=device,
                                        command_id=f"{sid}-{sent}"))

    def settle():
        nonlocal accepted, rejected, produced
        for f in futures:
            executed = f.result()
            produced += len(executed.outcome.seqs)
            if executed.outcome.rejected:
                rejected += 1
            else:
                accepted += 1
            if progress:
                progress(len(executed.outcome.seqs))
        futures.clear()

    for r, sid in sessions.items():
        for actor, command in setup_commands(rng, r):
            submit(sid, actor, command)
    settle()
    while produced < events:
        # pipelined: commands are decided and folded at once, committed in groups
        for _ in range(200):
            r = rng.choice(rulesets)
            sid = sessions[r]
            for actor, command in next_commands(rng, r, chronicle.state(sid), groups):
                submit(sid, actor, command)
        settle()
    if close:
        for sid in sessions.values():
            # ACT-8 with ACT-12, ACT-2: nothing a death left waiting outlives the night
            for actor, command in action.stuck(chronicle.state(sid)):
                submit(sid, actor, command)
            submit(sid, STORYTELLER, session.CloseSession())
        settle()
    if progress and hasattr(progress, "close"):
        progress.close()
    return Summary(sessions=list(sessions.values()), events=produced, accepted=accepted,
                   rejected=rejected, head=chronicle.store.head())


def simulate(db, *, events: int, seed: int, session: str | None = None, progress=None,
             ruleset: str = "mixed", fixed_secrets: bool = False, groups: bool = False) -> Summary:
    """Plays into ``db``: an open store, or a chronicle file opened for the while.
    ``fixed_secrets``: the sessions' draw seeds and hidden rolls' nonces come from
    ``seed`` too, so the same arguments write the same log, byte for byte (the ``at``
    times and the hashes over them aside): how a change to the rules is shown to change
    no behaviour. Never for a real night: its seeds would be guessable."""
    randbytes = random.Random(f"secrets-{seed}").randbytes if fixed_secrets else os.urandom
    if not isinstance(db, (str, Path)):
        return play(Chronicle(db, randbytes=randbytes), session or f"sim-{seed}", events=events,
                    seed=seed, progress=progress, ruleset=ruleset, groups=groups)
    with SQLiteStore(db) as store:
        return play(Chronicle(store, randbytes=randbytes), session or f"sim-{seed}", events=events,
                    seed=seed, progress=progress, ruleset=ruleset, groups=groups)
