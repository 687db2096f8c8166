"""Random, mostly valid Mind's Eye Theatre play (MET-1..16, with the session's Time Out,
out of game and turns): challenges issued, thrown, bid, retested, overbid, accepted.

``simulate`` plays a whole session, pure; ``conteur simulate`` and the server's property
tests call ``setup_session`` and then ``random_command`` with each new state::

    state = game.initial()
    for actor, command in setup_session(rng):
        state = game.fold(game.decide(state, command, draws, actor=actor), state)
    while ...:
        actor, command = random_command(rng, state)
        events = game.decide(state, command, draws, actor=actor)   # may raise RuleViolation
        state = game.fold(events, state)

About one command in twenty is deliberately wrong (a bid above the truth, a throw for a
past round, a retest too many), so the refusals get exercised too.
"""

from __future__ import annotations

import random

from conteur.events import game, met, session
from conteur.events.game import GameState
from conteur.events.met_rules import ATTRIBUTES, retest_sources, true_score
from conteur.events.model import STORYTELLER, Actor, Command, RuleViolation
from conteur.events.sheets import MetSheet
from conteur.events.simulate import SCENE, RandomDraws, player

ABILITIES = ("Melee", "Brawl", "Dodge", "Athletics", "Intimidation", "Occult")


def random_sheet(rng: random.Random) -> MetSheet:
    abilities = {name: rng.randint(1, 3) for name in rng.sample(ABILITIES, rng.randint(0, 3))}
    return MetSheet(
        physical=rng.randint(0, 10),
        social=rng.randint(0, 10),
        mental=rng.randint(0, 10),
        abilities=abilities,
        merits=("Lucky",) if rng.random() < 0.3 else (),
        powers=("Fortitude",) if rng.random() < 0.3 else (),
        celerity=rng.choice((0, 0, 0, 1, 2)),
        bomb=rng.random() < 0.2,
        bonus={"physical": rng.randint(-1, 2)} if rng.random() < 0.3 else {},
    )


def setup_session(
    rng: random.Random, characters: int = 4, **options
) -> list[tuple[Actor, Command]]:
    """Open a session, add ``characters`` random MET characters and put them in one scene."""
    ids = [f"pc{i}" for i in range(1, characters + 1)]
    commands: list[tuple[Actor, Command]] = [(STORYTELLER, session.OpenSession(name="simulated", **options))]
    commands += [
        (STORYTELLER, session.AddCharacter(character=c, name=c.upper(), sheet=random_sheet(rng))) for c in ids
    ]
    commands.append((STORYTELLER, session.OpenScene(scene=SCENE, name="Elysium")))
    commands += [(player(c), session.JoinScene(character=c, scene=SCENE)) for c in ids]
    return commands


def _actor_for(state: GameState, side: str) -> Actor:
    return player(side) if side in state.session.characters else STORYTELLER


def _own(state: GameState, ch: met.Challenge, side: str) -> tuple[str, ...]:
    """The defender declares its own first ability with its bid (MET-3)."""
    found = state.session.characters.get(side)
    sheet = found.sheet if found else None
    if side != ch.defender or not isinstance(sheet, MetSheet):
        return ()
    return tuple(sorted(sheet.abilities))[:1]


def _declared(rng: random.Random, state: GameState, ch: met.Challenge, side: str) -> int:
    """Mostly the truth or a downward lie; now and then an upward lie (refused)."""
    found = state.session.characters.get(side)
    sheet = found.sheet if found else None
    if not isinstance(sheet, MetSheet):
        return rng.randint(0, 12)
    attribute = ch.attribute_of(side)
    abilities = ch.abilities_of(side) + tuple(a for a in _own(state, ch, side) if a not in ch.abilities_of(side))
    truth = min(true_score(sheet, attribute, abilities), 2 * getattr(sheet, attribute))
    if rng.random() < 0.05:
        return truth + 1
    return max(0, truth - (rng.randint(0, 2) if rng.random() < 0.3 else 0))


def _throw(rng: random.Random, state: GameState, ch: met.Challenge) -> tuple[Actor, Command]:
    side = rng.choice([s for s in ch.sides if s not in ch.throws])
    actor = _actor_for(state, side)
    round = ch.round - 1 if rng.random() < 0.03 else ch.round
    if actor.is_storyteller:
        choice = None if rng.random() < 0.7 else rng.choice(("rock", "paper", "scissors"))
    else:
        sheet = state.session.characters[side].sheet
        bomb = state.session.options.bomb and getattr(sheet, "bomb", False) or rng.random() < 0.02
        choice = rng.choice(("rock", "paper", "scissors") + (("bomb",) if bomb else ()))
    return actor, met.Throw(character=side, challenge=ch.id, round=round, choice=choice)


def _bid(rng: random.Random, state: GameState, ch: met.Challenge) -> tuple[Actor, Command]:
    if ch.status == "overbid":
        side = ch.winner
    elif ch.kind == "static":
        side = ch.tested
    else:
        waiting = [s for s in ch.sides if s not in ch.bids]
        side = ch.initiator if ch.initiator in waiting and rng.random() < 0.95 else waiting[-1]
    value = _declared(rng, state, ch, side)
    return _actor_for(state, side), met.DeclareBid(character=side, challenge=ch.id, round=ch.round, value=value,
                                                   abilities=_own(state, ch, side))


def _window(rng: random.Random, state: GameState, ch: met.Challenge) -> tuple[Actor, Command]:
    loser = ch.loser
    actor = _actor_for(state, loser)
    found = state.session.characters.get(loser)
    sheet = found.sheet if found else None
    roll = rng.random()
    if roll < 0.15:
        return STORYTELLER, met.CloseWindow(challenge=ch.id, timeout=rng.random() < 0.5)
    if roll < 0.45 and ch.kind == "classic" and ch.by == "throw":
        return actor, met.Overbid(character=loser, challenge=ch.id, value=_declared(rng, state, ch, loser),
                                  abilities=_own(state, ch, loser))
    if roll < 0.75:
        sources = sorted(retest_sources(sheet)) if isinstance(sheet, MetSheet) else ["Willpower"]
        return actor, met.Retest(character=loser, challenge=ch.id, source=rng.choice(sources or ["Luck"]))
    if roll < 0.8 and not (ch.kind == "static" and loser == ch.defender):
        return actor, met.Concede(character=loser, challenge=ch.id)
    return actor, met.Accept(character=loser, challenge=ch.id)


def _cancel_retest(rng: random.Random, state: GameState, ch: met.Challenge) -> tuple[Actor, Command] | None:
    if not (state.session.options.retest_cancel and ch.cancellable and not ch.throws):
        return None
    side = ch.other(ch.cancellable)
    found = state.session.characters.get(side)
    sources = sorted(retest_sources(found.sheet)) if found and isinstance(found.sheet, MetSheet) else ["Willpower"]
    if not sources or rng.random() < 0.5:
        return None
    return _actor_for(state, side), met.Retest(character=side, challenge=ch.id, source=sources[0], cancels=True)


def _has_action(state: GameState, character: str) -> bool:
    try:
        session.spend_action(state, character)
    except RuleViolation:
        return False
    return True


def _new_challenge(rng: random.Random, state: GameState, groups: bool = False) -> tuple[Actor, Command]:
    present = [c for c in state.session.characters.values() if c.scene and not c.out_of_game]
    free = [c for c in present if _has_action(state, c.id)]
    if not free:
        return STORYTELLER, session.NextTurn()
    initiator = rng.choice(free)
    kind = rng.choice(("classic", "classic", "classic", "static", "simple", "complex"))
    attribute = rng.choice(ATTRIBUTES)
    abilities = tuple(rng.sample(ABILITIES, 2))
    actor = player(initiator.id)
    if kind in ("simple", "complex"):
        return actor, met.IssueChallenge(character=initiator.id, kind=kind, tests=rng.choice((1, 1, 2)))
    if kind == "static":
        return actor, met.IssueChallenge(
            character=initiator.id, kind="static", attribute=attribute, difficulty=rng.randint(2, 10), abilities=abilities
        )
    others = [c for c in present if c.id != initiator.id and c.scene == initiator.scene]
    if not others:
        return STORYTELLER, met.IssueChallenge(
            character=initiator.id, defender="Ghoul", attribute=attribute, abilities=abilities
        )
    if groups and len(others) > 1 and rng.random() < 0.4:  # one against several (MET-1)
        defenders = rng.sample(others, rng.randint(2, len(others)))
        return actor, met.IssueChallenge(character=initiator.id, defenders=tuple(c.id for c in defenders),
                                         attribute=attribute, abilities=abilities[:1])
    defender = rng.choice(others)
    same = rng.random() < 0.7
    return actor, met.IssueChallenge(
        character=initiator.id,
        defender=defender.id,
        attribute=attribute,
        defender_attribute=None if same else rng.choice(ATTRIBUTES),
        abilities=abilities[:1],  # the defender's own come with its bid (_own)
        mutual=same and rng.random() < 0.5,
    )


def _session_command(rng: random.Random, state: GameState) -> tuple[Actor, Command]:
    s = state.session
    ids = sorted(s.characters)
    if s.frozen:
        return STORYTELLER, session.Resume(scope="session")
    frozen = [k for k, sc in s.scenes.items() if sc.frozen]
    if frozen:
        return STORYTELLER, session.Resume(scope="scene", scene=frozen[0])
    out = [c for c in ids if s.characters[c].out_of_game]
    if out:
        return player(out[0]), session.BackInGame(character=out[0])
    roll = rng.random()
    if roll < 0.2:
        return STORYTELLER, session.Freeze(scope=rng.choice(("scene", "session")), scene=SCENE)
    if roll < 0.4 and ids:
        c = rng.choice(ids)
        return player(c), session.OutOfGame(character=c, reason="rules question")
    if roll < 0.5 and ids:
        c = rng.choice(ids)
        return STORYTELLER, session.MarkNoSheet(character=c, no_sheet=not s.characters[c].no_sheet)
    if roll < 0.6:
        return STORYTELLER, session.SkipTime(seconds=rng.choice((15, 60, 3600)))
    return STORYTELLER, session.NextTurn(scene=SCENE if rng.random() < 0.3 else None)


def _group(rng: random.Random, state: GameState, group: met.Challenge) -> tuple[Actor, Command]:
    """A command naming a group: the initiator's one throw against every defender
    throwing, or its acceptance of every pair it lost, or a storyteller's close."""
    pairs = [state.met.get(p) for p in group.pairs]
    rounds = [p.round for p in pairs if p.status == "throwing" and group.initiator not in p.throws]
    actor = _actor_for(state, group.initiator)
    if rounds:
        choice = None if actor.is_storyteller else rng.choice(("rock", "paper", "scissors"))
        return actor, met.Throw(character=group.initiator, challenge=group.id, round=rounds[0], choice=choice)
    if rng.random() < 0.5:
        return actor, met.Accept(character=group.initiator, challenge=group.id)
    return STORYTELLER, met.CloseWindow(challenge=group.id, timeout=rng.random() < 0.5)


def random_command(rng: random.Random, state: GameState, groups: bool = False) -> tuple[Actor, Command]:
    """One random, mostly valid command for this GameState; with ``groups``, some
    challenges are one initiator against several defenders."""
    if rng.random() < 0.08:
        return _session_command(rng, state)
    s = state.session
    if s.frozen or any(c.frozen for c in s.scenes.values()) or any(c.out_of_game for c in s.characters.values()):
        if rng.random() < 0.7:
            return _session_command(rng, state)
    # the open ones only (met.State.live): merging every finished page per command made a
    # simulated night quadratic (bench/night.py at 20 commands/s: 46 events/s by hour 2)
    live = [c for c in state.met.live.values() if c.status in met.OPEN]
    if live and rng.random() < 0.02:
        ch = rng.choice(live)
        if rng.random() < 0.5:
            return STORYTELLER, met.CancelChallenge(challenge=ch.id, reason="simulated")
        return STORYTELLER, met.Overrule(challenge=ch.id, winner=rng.choice(ch.sides), reason="simulated")
    if not live or (len(live) < 3 and rng.random() < 0.15):
        return _new_challenge(rng, state, groups)
    ch = rng.choice(live)
    if ch.defenders:
        return _group(rng, state, ch)
    if ch.status == "throwing" and len(ch.throws) == 2:  # a group's pair waits for the others' throws
        return _group(rng, state, state.met.get(ch.group))
    cancel = _cancel_retest(rng, state, ch)
    if cancel is not None:
        return cancel
    if ch.status == "throwing":
        return _throw(rng, state, ch)
    if ch.status in ("bidding", "overbid"):
        return _bid(rng, state, ch)
    return _window(rng, state, ch)


def simulate(rng: random.Random, steps: int, *, characters: int = 4, groups: bool = False, **options):
    """A whole simulated session, pure: returns (events, refusals, state) with refusals a
    list of (command, RuleViolation) and state the live GameState folded event by event.
    ``options`` go to OpenSession (bomb, retest_cancel, ...)."""
    state = game.initial()
    events: list = []
    refusals: list = []

    def play(actor, command):
        nonlocal state
        try:
            decided = game.decide(state, command, RandomDraws(rng, state.draw_counter), actor=actor)
        except RuleViolation as violation:
            refusals.append((command, violation))
            return
        state = game.fold(decided, state)
        events.extend(decided)

    for actor, command in setup_session(rng, characters, **options):
        play(actor, command)
    for _ in range(steps):
        play(*random_command(rng, state, groups))
    return events, refusals, state
