"""Replay-only steps for nearly every kind of the met, dice and action parts: the same parts
as their evolvers give, without a frozen part per event.

A replay folds a night's events one by one, and the pure evolvers build a new frozen part
(``replace``) and copy a dict or two for every one of them: for a roll or a throw that is
most of the fold's cost. ``game.Replay`` folds these kinds instead into a ``Work``: a
replay-owned copy of the fields they change (its dicts copied when the work is made or when
first written, so nothing a caller holds is ever changed), turned back into a frozen part
(``done``) before any other evolver of that part runs, before an evolver that reads the
whole state, and at the end of every ``feed``: between feeds, ``Replay.parts`` are frozen
parts as ever. What only ``done`` reads waits in the work as it came: a live challenge's
changes by the events of its rounds (``MetWork.changed``: one ``replace`` when it is read,
not one per throw), a pool roll's event (its ``v5.Roll`` built once, for the latest roll).
A step may read the session part, which no work holds, in the replay's parts (a retest
reads the options); an evolver that touches only fields its work does not hold runs on the
work's own part (``_on_own``: a tie debt, a modifier).

The evolvers stay the definition: each step does what its evolver does, written against the
work (dict insertion order included, so snapshots encode the same bytes), and a case a step
does not cover (a round event of a challenge no longer live, a modifier run out as the clock
moves) runs the evolver itself on the frozen part. ``tests/test_replay_fold.py`` and
``tests/test_replay_onepass.py`` fold random nights and every kind both ways.
"""
from __future__ import annotations

from typing import Any, Callable

from msgspec.structs import replace

from conteur.events import action, met, session, slim, v5

OPEN = met.OPEN
_page = met._page
_roll_key = v5._roll_key


class Work:
    """A part being folded by steps: ``own`` the frozen part it started from (or last went
    through an evolver), the fields below owned by this work alone. Made from ``own`` and
    the replay's parts (``game.Replay.parts``, lent): a step may read the session part
    there, which no work holds (``SESSION``), as it stands before the event."""

    __slots__ = ("own",)
    HOLDS: frozenset[str] = frozenset()  # the fields of its part that ``done`` sets from the work

    def done(self) -> Any:
        raise NotImplementedError


class _Counted(Work):
    """A part with roll ids counted (``model.id_counted``, written out in place)."""

    __slots__ = ("next_roll", "next_hidden")

    def count(self, value: str) -> None:
        digits, _, key = value[1:].partition(".")
        if not digits.isdigit() or digits[0] == "0":  # not empty once digits
            return
        number = int(digits)
        if not key:
            if number >= self.next_roll:
                self.next_roll = number + 1
        elif self.next_hidden.get(key, 1) <= number:
            self.next_hidden[key] = number + 1


class V5Work(_Counted):
    """A pool roll waits in ``rolls`` as its event (keys in ``fresh``): only the latest
    of a character's rolls is kept, and its ``v5.Roll`` is built once, by ``done``."""

    __slots__ = ("rolls", "hunger", "fresh")
    HOLDS = frozenset({"rolls", "hunger", "next_roll", "next_hidden"})

    def __init__(self, own: v5.State, parts: list) -> None:
        self.own = own
        self.rolls, self.hunger = dict(own.rolls), dict(own.hunger)
        self.next_roll, self.next_hidden = own.next_roll, dict(own.next_hidden)
        self.fresh: set[str] = set()

    def done(self) -> v5.State:
        for key in self.fresh:
            self.rolls[key] = self._built(key)
        self.fresh = set()
        return replace(self.own, rolls=self.rolls, hunger=self.hunger, next_roll=self.next_roll,
                       next_hidden=self.next_hidden)

    def _built(self, key: str) -> v5.Roll:
        e = self.rolls[key]
        return v5.Roll(id=e.roll, character=e.character, normal=e.normal, hunger=e.hunger,
                       difficulty=e.difficulty, visibility=e.visibility)

    def roll(self, key: str) -> v5.Roll | None:
        """The latest roll at ``key``, built now if it waits as its event."""
        if key in self.fresh:
            self.fresh.discard(key)
            self.rolls[key] = self._built(key)
        return self.rolls.get(key)


class ActionWork(_Counted):
    """``waiting``, ``pending``, ``cooperations`` and ``tension`` copied when first written,
    ``groups`` a new dict whenever changed (``action._count_in_group``): each None until
    then, the part's own, unchanged."""

    __slots__ = ("waiting", "pending", "cooperations", "tension", "groups")
    HOLDS = frozenset({"next_roll", "next_hidden", "waiting", "pending", "cooperations", "tension", "groups"})

    def __init__(self, own: action.State, parts: list) -> None:
        self.own = own
        self.next_roll, self.next_hidden = own.next_roll, dict(own.next_hidden)
        self.waiting = self.pending = self.cooperations = self.tension = self.groups = None

    def done(self) -> action.State:
        own = self.own
        return replace(own, next_roll=self.next_roll, next_hidden=self.next_hidden,
                       waiting=own.waiting if self.waiting is None else self.waiting,
                       pending=own.pending if self.pending is None else self.pending,
                       cooperations=own.cooperations if self.cooperations is None else self.cooperations,
                       tension=own.tension if self.tension is None else self.tension,
                       groups=own.groups if self.groups is None else self.groups)

    def grouped(self, e, option: str) -> None:
        """``action._count_in_group`` for roll or ruling ``e``, one of simultaneous ones."""
        self.groups = action._count_in_group(self.own.groups if self.groups is None else self.groups,
                                             e.character, e.simultaneous, e.together, e.turn, option)

    def owned_pending(self) -> dict:
        if self.pending is None:
            self.pending = dict(self.own.pending)
        return self.pending

    def owned_waiting(self) -> dict:
        if self.waiting is None:
            self.waiting = dict(self.own.waiting)
        return self.waiting


class MetWork(Work):
    """``live`` copied; a page of ``done`` copied when first written (``owned``). A live
    challenge's changes by the steps of its rounds (a throw, a reveal, a bid, a round won)
    wait in ``changed`` (id -> the fields changed, its dicts owned by this work): the
    challenge is ``replace``d once when something reads it whole (``get``, ``update``,
    ``done``), not at every event of its rounds."""

    __slots__ = ("live", "pages", "owned", "counter", "changed", "parts")
    HOLDS = frozenset({"live", "done", "counter"})

    def __init__(self, own: met.State, parts: list) -> None:
        self.own, self.parts = own, parts
        self.live, self.pages, self.owned, self.counter = dict(own.live), list(own.done), set(), own.counter
        self.changed: dict[str, dict[str, Any]] = {}

    def done(self) -> met.State:
        if self.changed:
            live = self.live
            for challenge_id, changes in self.changed.items():
                live[challenge_id] = replace(live[challenge_id], **changes)
            self.changed = {}
        return replace(self.own, live=self.live, done=tuple(self.pages), counter=self.counter)

    def get(self, challenge_id: str) -> met.Challenge | None:
        found = self.live.get(challenge_id)
        if found is None:
            page = _page(challenge_id)
            if page < len(self.pages):
                found = self.pages[page].get(challenge_id)
        elif challenge_id in self.changed:
            found = self.live[challenge_id] = replace(found, **self.changed.pop(challenge_id))
        return found

    def changes(self, challenge_id: str) -> dict[str, Any] | None:
        """The changes waiting for live challenge ``challenge_id``, to add to; None where
        it is not live (or, never, not open): the evolver's case."""
        changes = self.changed.get(challenge_id)
        if changes is None:
            ch = self.live.get(challenge_id)
            if ch is None or ch.status not in OPEN:
                return None
            changes = self.changed[challenge_id] = {}
        return changes  # the steps' changes keep a challenge open

    def put(self, ch: met.Challenge) -> None:
        """``met._put``."""
        if self.changed:
            self.changed.pop(ch.id, None)
        if ch.status in OPEN:
            self.live[ch.id] = ch
            return
        if ch.id in self.live:
            del self.live[ch.id]
        n = _page(ch.id)
        pages = self.pages
        while len(pages) <= n:
            pages.append({})
            self.owned.add(len(pages) - 1)
        if n not in self.owned:
            pages[n] = dict(pages[n])
            self.owned.add(n)
        pages[n][ch.id] = ch

    def update(self, challenge_id: str, **changes) -> None:
        """``met._update``: the changes waiting for it and these in one ``replace``."""
        waiting = self.changed.pop(challenge_id, None) if self.changed else None
        if waiting is not None:
            waiting.update(changes)
            changes = waiting
        self.put(replace(self.get(challenge_id), **changes))


# ---------------------------------------------------------------- the steps
# step(work, event) -> None; a step that returns True did not fold the event: the caller
# folds it through the evolver (the work turned back into its part first)


def _pool_rolled(w: V5Work, e) -> None:
    key = _roll_key(e.character, e.visibility)
    w.rolls[key] = e
    w.fresh.add(key)
    w.count(e.roll)


def _rouse_checked(w: V5Work, e) -> None:
    w.hunger[e.character] = e.hunger_after
    w.count(e.roll)


def _action_rolled(w: ActionWork, e) -> None:
    # ``action.evolve_action_rolled`` on the work, each dict changed in place (a key set
    # keeps its place as in ``{**d, key: value}``; ``_without`` keeps the others' order)
    if e.opponent is not None:
        w.owned_waiting()[e.roll] = action.Rolled(character=e.character, ps=e.ps, opponent=e.opponent,
                                                  visibility=e.visibility, rolled=e if e.sealed else None)
    if e.against is not None:
        waiting = w.own.waiting if w.waiting is None else w.waiting
        if e.against in waiting:
            del w.owned_waiting()[e.against]
    if e.roll in (w.own.pending if w.pending is None else w.pending):
        del w.owned_pending()[e.roll]
    if e.cooperation:
        if w.cooperations is None:
            w.cooperations = dict(w.own.cooperations)
        w.cooperations[e.cooperation] = bool(e.cooperation_success)
    if e.simultaneous > 1:
        w.grouped(e, e.option)
    w.count(e.roll)


def _action_begun(w: ActionWork, e: action.ActionBegun) -> None:
    w.owned_pending()[e.roll] = e
    w.count(e.roll)


def _action_ruled(w: ActionWork, e: action.ActionRuled) -> None:
    if e.simultaneous > 1:
        w.grouped(e, "none")
    w.count(e.roll)


def _opposition_opened(w: ActionWork, e: action.OppositionOpened) -> None:
    waiting = w.own.waiting if w.waiting is None else w.waiting
    if e.roll not in waiting:
        w.owned_waiting()[e.roll] = action.Rolled(character=e.character, ps=0, opponent=e.opponent,
                                                  visibility=e.visibility)
    w.count(e.roll)


def _tension_raised(w: ActionWork, e: action.TensionRaised) -> None:
    if w.tension is None:
        w.tension = dict(w.own.tension)
    w.tension[e.character] = e.tension


def _clock_moved(w: ActionWork, e) -> bool | None:
    """``action.evolve_clock_moved`` where no modifier can have run out (the work changes
    neither the modifiers nor their expiry): nearly every turn; else the evolver."""
    own = w.own
    if not own.modifiers:
        return None
    expiry = own.expiry
    if expiry is not None and e.turn <= expiry[0] and e.game_seconds < expiry[1]:
        return None
    return True


def _willpower_rerolled(w: V5Work, e) -> None:
    key = _roll_key(e.character, e.visibility)
    roll = w.roll(key)
    if roll is not None and roll.id == e.roll:  # else unchanged: a viewer's partial fold
        w.rolls[key] = replace(roll, normal=e.normal, rerolled=True)


def _hunger_set(w: V5Work, e: v5.HungerSet) -> None:
    w.hunger[e.character] = e.hunger


def _challenge_issued(w: MetWork, e: met.ChallengeIssued) -> None:
    w.put(met.Challenge(
        id=e.challenge, kind=e.kind, initiator=e.initiator, defender=e.defender, tested=e.tested,
        attribute=e.attribute, defender_attribute=e.defender_attribute, difficulty=e.difficulty,
        tests=e.tests, abilities=e.abilities, defender_abilities=e.defender_abilities, mutual=e.mutual))
    w.counter += 1


def _throw_committed(w: MetWork, e) -> bool | None:
    changes = w.changes(e.challenge)
    if changes is None:
        return True
    throws = changes.get("throws")
    if throws is None:  # copied once: ``{**ch.throws, character: choice}``, in place after
        throws = changes["throws"] = dict(w.live[e.challenge].throws)
    throws[e.character] = e.choice
    changes["cancellable"] = None
    return None


def _throws_revealed(w: MetWork, e: met.ThrowsRevealed) -> bool | None:
    changes = w.changes(e.challenge)
    if changes is None:
        return True
    changes["status"] = "throwing" if e.winner else "bidding"
    changes["bids"] = {}
    return None


def _bid_declared(w: MetWork, e: met.BidDeclared) -> bool | None:
    changes = w.changes(e.challenge)
    if changes is None:
        return True
    bids = changes.get("bids")
    if bids is None:
        bids = changes["bids"] = dict(w.live[e.challenge].bids)
    bids[e.character] = e.value
    return None


def _overbid_declared(w: MetWork, e: met.OverbidDeclared) -> bool | None:
    changes = w.changes(e.challenge)
    if changes is None:
        return True
    overbids = changes.get("overbids")
    changes.update(status="overbid", overbids=(w.live[e.challenge].overbids if overbids is None else overbids)
                   + (e.character,), overbid_value=e.value, bids={})
    return None


def _retest_taken(w: MetWork, e: met.RetestTaken) -> bool | None:
    """``met.evolve_retest_taken``, the session's options read from the replay's parts."""
    changes = w.changes(e.challenge)
    if changes is None:
        return True
    ch = w.live[e.challenge]
    retests = changes.get("retests")
    if retests is None:
        retests = changes["retests"] = dict(ch.retests)
    retests[e.character] = retests.get(e.character, 0) + 1
    if w.parts[SESSION].options.retest_cancel:
        now = {**{name: getattr(ch, name) for name in ("winner", "loser", "by")}, **changes}
        changes.update(cancellable=e.character, previous=(now["winner"], now["loser"], now["by"], e.round))
    return None


def _round_won(w: MetWork, e: met.RoundWon) -> bool | None:
    changes = w.changes(e.challenge)
    if changes is None:
        return True
    changes.update(status="window", winner=e.winner, loser=e.loser, by=e.by)
    return None


def _round_started(w: MetWork, e: met.RoundStarted) -> bool | None:
    changes = w.changes(e.challenge)
    if changes is None:
        return True
    changes.update(status="throwing", round=e.round, test=e.test, throws={}, bids={}, overbid_value=None)
    return None


def _challenge_overruled(w: MetWork, e: met.ChallengeOverruled) -> None:
    w.update(e.challenge, status="resolved", winner=e.winner, loser=e.loser, reason="overruled")


def _challenge_resolved(w: MetWork, e: met.ChallengeResolved) -> None:
    w.update(e.challenge, status="resolved", winner=e.winner, loser=e.loser, reason=e.reason)


def _challenge_cancelled(w: MetWork, e: met.ChallengeCancelled) -> None:
    w.update(e.challenge, status="cancelled", reason=e.reason or "cancelled")


def _on_own(evolver: Callable) -> Callable:
    """The step of an evolver that reads and changes only fields of its part that its work
    does not hold (a tie debt, a modifier): run on the work's ``own``, in place of settling
    the work for it and making it again for the next step."""
    def step(w: Work, e) -> None:
        w.own = evolver(w.own, e, None)
    step.evolver = evolver  # type: ignore[attr-defined]  # tests/test_replay_onepass.py checks it
    return step


# the session part's place in game.PART_NAMES: a part no work holds
SESSION = 0
# the kinds whose evolver reads the whole state before the event, and whose step reads the
# session part for it (from the replay's parts: ``Work``)
READS_SESSION: frozenset[type] = frozenset({met.RetestTaken})
# the work of each part that has steps, by its name in game.PART_NAMES
WORKS: dict[str, Callable[[Any], Work]] = {"met": MetWork, "v5": V5Work, "action": ActionWork}

# whole event type -> (part, its evolver the step stands for, step)
STEPS: dict[type, tuple[str, Callable, Callable]] = {
    v5.PoolRolled: ("v5", v5.evolve_pool_rolled, _pool_rolled),
    v5.RouseChecked: ("v5", v5.evolve_rouse_checked, _rouse_checked),
    action.ActionRolled: ("action", action.evolve_action_rolled, _action_rolled),
    action.OppositionOpened: ("action", action.evolve_opposition_opened, _opposition_opened),
    action.TensionRaised: ("action", action.evolve_tension_raised, _tension_raised),
    action.ActionBegun: ("action", action.evolve_action_begun, _action_begun),
    action.ActionRuled: ("action", action.evolve_action_ruled, _action_ruled),
    # the clock's own part (session) through its evolver beside it (game._FAST's others)
    session.TurnAdvanced: ("action", action.evolve_clock_moved, _clock_moved),
    session.TimeSkipped: ("action", action.evolve_clock_moved, _clock_moved),
    v5.HungerSet: ("v5", v5.evolve_hunger_set, _hunger_set),
    v5.WillpowerRerolled: ("v5", v5.evolve_willpower_rerolled, _willpower_rerolled),
    met.OverbidDeclared: ("met", met.evolve_overbid_declared, _overbid_declared),
    met.RetestTaken: ("met", met.evolve_retest_taken, _retest_taken),
    met.ChallengeOverruled: ("met", met.evolve_challenge_overruled, _challenge_overruled),
    # the debts (met), the modifiers and their counters, the dead (action): no work holds them
    met.TieDebtIncurred: ("met", met.evolve_tie_debt_incurred, _on_own(met.evolve_tie_debt_incurred)),
    met.TieDebtPaid: ("met", met.evolve_tie_debt_paid, _on_own(met.evolve_tie_debt_paid)),
    action.ModifierApplied: ("action", action.evolve_modifier_applied, _on_own(action.evolve_modifier_applied)),
    action.CharacterSacrificed: ("action", action.evolve_character_sacrificed,
                                 _on_own(action.evolve_character_sacrificed)),
    met.ChallengeIssued: ("met", met.evolve_challenge_issued, _challenge_issued),
    met.ThrowCommitted: ("met", met.evolve_throw_committed, _throw_committed),
    met.ThrowsRevealed: ("met", met.evolve_throws_revealed, _throws_revealed),
    met.BidDeclared: ("met", met.evolve_bid_declared, _bid_declared),
    met.RoundWon: ("met", met.evolve_round_won, _round_won),
    met.RoundStarted: ("met", met.evolve_round_started, _round_started),
    met.ChallengeResolved: ("met", met.evolve_challenge_resolved, _challenge_resolved),
    met.ChallengeCancelled: ("met", met.evolve_challenge_cancelled, _challenge_cancelled),
}
STEPS.update({kind: STEPS[full] for kind, full in slim.SLIM.items() if full in STEPS})
