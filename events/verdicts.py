"""Every recorded verdict, derived again from its recorded inputs.

A log whose hash chain was recomputed after an edit still chains: what gives a flipped
``success`` away is that the rules, applied to the dice the event records, say otherwise.
``Verdicts.check`` takes each event with the session's state folded up to just before it
and names the first field the rules disagree with. It calls the very functions the
deciders call (``v5.score``, ``action.points``, ``met_rules.throw_winner``...): no rule is
written twice.

What is checked:

- V5 (``v5.pool_rolled``, ``v5.willpower_rerolled``): the dice are the recorded draws, in
  order; as many Hunger dice as the Hunger the roll records (``v5.hunger_dice_count``);
  successes, margin, success, critical, messy and bestial from ``v5.score``; a
  reroll's dice are its roll's with the rerolled ones replaced. A Rouse check's face is
  its draw and Hunger moves by ``v5.rouse_after``.
- Action dice (``action.rolled``): dice and D+/- are the recorded draws; the signs, the
  count of D+/- (the net), the net from its declared parts (``action.net_modifier``), PS
  and success from ``action.points``. A contest (``action.opposition_settled``): the PS
  are the two rolls' and the winner ``action.opposed_winner``; a storyteller's ruling
  (``action.opposition_ruled``) names the side its outcome says.
- MET: a server-drawn throw is its draw; the revealed throws are the sealed ones and the
  winner is ``met_rules.throw_winner``; the bids' winner is ``met.bids_winner``; a tie of
  throws goes where the decider's own tie rule sends it (simple and complex tests, no sheet
  at hand, a tie debt; ``met._tie``), else to bids; every round won names the way its round
  was decided (``by``) and the winner that way gave (its loser the other side), a round
  lost at once on zero traits (MET-5) included; an overbid's retest is granted by
  ``met_rules.overbid_granted``; a challenge resolved on its result names the winner that
  result had.
  A group challenge: no pair's throws are revealed
  while another pair of the group still waits for a throw (MET-2), and its settling names
  each pair's winner.

An input the log does not hold in this copy (a viewer's export without another
character's sheet, a bid's value redacted) is not guessed at: that check is skipped.
"""

from __future__ import annotations

from conteur.events import action, met, session, v5
from conteur.events import met_rules as rules
from conteur.events.sheets import MetSheet, V5Sheet

_V5_VERDICT = ("successes", "margin", "success", "critical", "messy", "bestial")


class Verdicts:
    """One session's checker: ``check`` each event in seq order, with the state before it."""

    def __init__(self) -> None:
        self._ps: dict[str, int] = {}  # action roll id -> its PS, for the contest's check
        # (challenge, round) -> how that round is decided and by whom (None: not in this copy)
        self._round: dict[tuple[str, int], tuple[str, str | None]] = {}

    @staticmethod
    def judges(event) -> bool:
        """Whether ``event`` records a verdict this checker derives again."""
        return type(event) in _HANDLERS

    def check(self, state, event) -> str | None:
        handler = _HANDLERS.get(type(event))
        return handler(self, state, event) if handler is not None else None

    # -- V5 ------------------------------------------------------------------------------

    def _pool(self, state, e: v5.PoolRolled) -> str | None:
        faces = tuple(e.normal) + tuple(e.hunger)
        bad = _draws(e, faces) or _count(e.pool, len(faces), "pool")
        if bad:
            return bad
        if e.hunger_level is not None:
            count = v5.hunger_dice_count(e.pool, e.hunger_level, e.kind)
            if len(e.hunger) != count:
                return f"{len(e.hunger)} hunger dice, but Hunger {e.hunger_level} on a {e.kind} " \
                       f"pool of {e.pool} makes {count} (V5-5)"
        return _outcome(e, v5.score(e.normal, e.hunger, e.difficulty, e.messy_rule))

    def _reroll(self, state, e: v5.WillpowerRerolled) -> str | None:
        bad = _draws(e, tuple(e.after))
        if bad:
            return bad
        roll = next((r for r in state.v5.rolls.values() if r.id == e.roll), None)
        if roll is not None and not roll.rerolled:
            dice = list(roll.normal)
            for i, face in zip(e.dice, e.after):
                if not 0 <= i < len(dice):
                    return f"die {i} is not one of roll {e.roll}'s {len(dice)} normal dice"
                dice[i] = face
            expected = {"before": tuple(roll.normal[i] for i in e.dice), "normal": tuple(dice),
                        "hunger": tuple(roll.hunger), "difficulty": roll.difficulty}
            recorded = {"before": tuple(e.before), "normal": tuple(e.normal),
                        "hunger": tuple(e.hunger), "difficulty": e.difficulty}
            for name, value in expected.items():
                if recorded[name] != value:
                    return f"{name} is {recorded[name]!r}, but roll {e.roll} makes it {value!r} (V5-9)"
        return _outcome(e, v5.score(e.normal, e.hunger, e.difficulty, e.messy_rule))

    def _rouse(self, state, e: v5.RouseChecked) -> str | None:
        bad = _draws(e, (e.face,))
        if bad:
            return bad
        known = e.character in state.v5.hunger or isinstance(session.sheet_of(state, e.character), V5Sheet)
        if known and e.hunger_before != v5.hunger_of(state, e.character):
            return f"hunger_before is {e.hunger_before}, but {e.character}'s Hunger was " \
                   f"{v5.hunger_of(state, e.character)} (V5-5)"
        after = v5.rouse_after(e.hunger_before, e.face)
        if e.hunger_after != after:
            return f"hunger_after is {e.hunger_after}, but a {e.face} from Hunger " \
                   f"{e.hunger_before} gives {after} (V5-9)"
        return None

    # -- action dice ---------------------------------------------------------------------

    def _action(self, state, e: action.ActionRolled) -> str | None:
        self._ps[e.roll] = e.ps
        bad = _draws(e, tuple(e.dice) + tuple(e.plusminus))
        if bad:
            return bad
        signs = tuple(action.sign(f) for f in e.plusminus)
        if tuple(e.signs) != signs:
            return f"signs are {tuple(e.signs)!r}, but the D+/- faces show {signs!r} (ACT-4)"
        if len(e.plusminus) != abs(e.net):
            return f"{len(e.plusminus)} D+/- rolled for a net of {e.net} (ACT-6)"
        held = {m.id: m.value for m in state.action.modifiers}
        if all(m in held for m in e.modifiers):
            net = action.net_modifier(e.bonus, e.malus, e.cooperation, e.option, e.simultaneous,
                                      [held[m] for m in e.modifiers])
            if e.net != net:
                return f"net is {e.net}, but its bonus, malus and modifiers make {net} (ACT-5)"
        outcome = action.points(e.dice, e.threshold, e.plusminus, e.net, e.difficulty,
                                e.option == "sacrifice")
        for name in ("ps_dice", "ps", "success"):
            if getattr(e, name) != getattr(outcome, name):
                return f"{name} is {getattr(e, name)!r}, but the dice give {getattr(outcome, name)!r} " \
                       "(ACT-3, ACT-6, ACT-11)"
        return None

    def _contest(self, state, e: action.OppositionSettled) -> str | None:
        for roll, ps, side in ((e.initiator_roll, e.initiator_ps, "initiator"),
                               (e.defender_roll, e.defender_ps, "defender")):
            if roll in self._ps and self._ps[roll] != ps:
                return f"{side}_ps is {ps}, but roll {roll} made {self._ps[roll]} PS"
        winner = action.opposed_winner(e.initiator, e.initiator_ps, e.defender, e.defender_ps)
        if e.winner != winner:
            return f"winner is {e.winner!r}, but {e.initiator_ps} PS against {e.defender_ps} " \
                   f"makes {winner!r} the winner (ACT-12)"
        return None

    def _ruled(self, state, e: action.OppositionRuled) -> str | None:
        winner = action.ruled_winner(e.outcome, e.character, e.opponent)
        if e.winner != winner:
            return f"winner is {e.winner!r}, but the outcome {e.outcome!r} makes it {winner!r} (ACT-12)"
        return None

    # -- MET -----------------------------------------------------------------------------

    def _throw(self, state, e: met.ThrowCommitted) -> str | None:
        if e.draws and e.choice is not None:
            face = e.draws[0].face
            drawn = rules.DRAWN[face - 1] if 1 <= face <= len(rules.DRAWN) else None
            if e.choice != drawn:
                return f"the drawn throw is {e.choice!r}, but its d3 shows {face} ({drawn}) (MET-2)"
        return None

    def _revealed(self, state, e: met.ThrowsRevealed) -> str | None:
        ch = state.met.get(e.challenge)
        if ch is None:
            return None
        a, b = ch.sides
        for side in (a, b):
            sealed = ch.throws.get(side)
            if sealed is not None and e.throws.get(side) != sealed:
                return f"{side}'s revealed throw is {e.throws.get(side)!r}, but it sealed {sealed!r} (MET-2)"
        if a not in e.throws or b not in e.throws:
            return f"the revealed throws {e.throws!r} are not {a}'s and {b}'s"
        winner = rules.throw_winner(a, e.throws[a], b, e.throws[b])
        if e.winner != winner:
            return f"winner is {e.winner!r}, but {e.throws[a]} against {e.throws[b]} makes it {winner!r} (MET-2)"
        if winner is not None:
            self._round[(e.challenge, e.round)] = ("throw", winner)
            return None
        # a tie: the decider's own rule, on the state before the reveal, says where it goes;
        # no round won there sends it to bids, whose winner BidsCompared tells
        won = next((w for w in met._tie(state, ch) if isinstance(w, met.RoundWon)), None)
        if won is not None:
            self._round[(e.challenge, e.round)] = (won.by, won.winner)
        else:
            self._round[(e.challenge, e.round)] = ("difficulty" if ch.kind == "static" else "bid", None)
        return None

    def _bids(self, state, e: met.BidsCompared) -> str | None:
        ch = state.met.get(e.challenge)
        if ch is None:
            return None
        needed = (ch.tested,) if ch.kind == "static" else ch.sides
        if any(ch.bids.get(side) is None for side in needed):
            return None  # a viewer's copy: the values are sealed
        winner = met.bids_winner(ch, ch.bids)
        if winner is not None:
            self._round[(e.challenge, e.round)] = ("difficulty" if ch.kind == "static" else "bid", winner)
        if e.winner != winner:
            return f"winner is {e.winner!r}, but the bids {ch.bids!r} make it {winner!r} (MET-3, MET-10)"
        return None

    def _round_won(self, state, e: met.RoundWon) -> str | None:
        ch = state.met.get(e.challenge)
        if ch is not None and e.winner in ch.sides and e.loser != ch.other(e.winner):
            return f"loser is {e.loser!r}, but the winner {e.winner!r} faced {ch.other(e.winner)!r}"
        if e.by == "zero_traits":
            return None if ch is None else _zero_traits(state, ch, e)
        decided = self._round.get((e.challenge, e.round))
        if decided is None:
            return None  # a round this copy does not show decided
        by, winner = decided
        if e.by != by:
            return f"by is {e.by!r}, but round {e.round} of {e.challenge} was decided by {by!r}"
        if winner is not None and e.winner != winner:
            return f"winner is {e.winner!r}, but round {e.round}'s {by} went to {winner!r}"
        return None

    def _overbid(self, state, e: met.OverbidSettled) -> str | None:
        ch = state.met.get(e.challenge)
        if ch is None or ch.overbid_value is None or ch.bids.get(e.opponent) is None:
            return None
        granted = rules.overbid_granted(ch.overbid_value, ch.bids[e.opponent])
        if e.granted != granted:
            return f"granted is {e.granted}, but an overbid of {ch.overbid_value} against " \
                   f"{ch.bids[e.opponent]} gives {granted} (MET-13)"
        return None

    def _resolved(self, state, e: met.ChallengeResolved) -> str | None:
        ch = state.met.get(e.challenge)
        if ch is None or e.reason not in ("final", "accepted", "window_closed", "timeout"):
            return None
        if (e.winner, e.loser) != (ch.winner, ch.loser):
            return f"resolved for {e.winner!r} over {e.loser!r}, but the result stood for " \
                   f"{ch.winner!r} over {ch.loser!r} (MET-16)"
        return None


def _zero_traits(state, ch, e: met.RoundWon) -> str | None:
    """MET-5: the loser has 0 traits or fewer in its attribute, and the initiator loses
    first when both have (choice). A sheet this copy does not hold is not guessed at."""
    def held(side: str) -> int | None:
        found = state.session.characters.get(side)
        if found is None or not isinstance(found.sheet, MetSheet):
            return None
        return rules.traits(found.sheet, ch.attribute_of(side))

    loser = held(e.loser)
    if loser is not None and loser > 0:
        return f"{e.loser} lost on zero traits, but holds {loser} " \
               f"{rules.label(ch.attribute_of(e.loser))} traits (MET-5)"
    initiator = held(ch.initiator)
    if e.loser != ch.initiator and initiator is not None and initiator <= 0:
        return f"loser is {e.loser!r}, but the initiator {ch.initiator!r} holds {initiator} traits " \
               "too and loses first (MET-5)"
    return None


def _group_revealed(state, e: met.ThrowsRevealed) -> str | None:
    """MET-2 for a group: a reveal while another pair of it is still throwing, a throw
    short, told that pair's participant a throw before it committed its own."""
    ch = state.met.get(e.challenge)
    group = state.met.get(ch.group) if ch is not None and ch.group else None
    if group is None:
        return None
    for pid in group.pairs:
        pair = state.met.get(pid)
        if pid != e.challenge and pair is not None and pair.status == "throwing" and len(pair.throws) < 2:
            return f"throws revealed in {e.challenge} while {pid} still waits for a throw (MET-2)"
    return None


def _group_settled(self, state, e: met.GroupSettled) -> str | None:
    group = state.met.get(e.challenge)
    if group is None:
        return None
    pairs = [state.met.get(p) for p in group.pairs]
    results = {p.defender: p.winner for p in pairs if p is not None and p.status == "resolved" and p.winner}
    if e.results != results:
        return f"results are {e.results!r}, but the pairs were won {results!r} (MET-16)"
    return None


def _revealed_in_group(self, state, e: met.ThrowsRevealed) -> str | None:
    return _group_revealed(state, e) or Verdicts._revealed(self, state, e)


def _draws(e, faces: tuple[int, ...]) -> str | None:
    """The dice an event shows are its recorded draws, in order (FAIR-1)."""
    if not e.draws:
        return None  # a hand-made or redacted record: no draw to compare with
    drawn = tuple(d.face for d in e.draws)
    if drawn != faces:
        return f"the dice {faces!r} are not the recorded draws {drawn!r} (FAIR-1)"
    return None


def _count(recorded: int, actual: int, name: str) -> str | None:
    return None if recorded == actual else f"{name} is {recorded}, but {actual} dice were rolled"


def _outcome(e, outcome: v5.Outcome) -> str | None:
    for name in _V5_VERDICT:
        if getattr(e, name) != getattr(outcome, name):
            return f"{name} is {getattr(e, name)!r}, but the dice give {getattr(outcome, name)!r} " \
                   "(V5-2..V5-7)"
    return None


_HANDLERS = {
    v5.PoolRolled: Verdicts._pool,
    v5.WillpowerRerolled: Verdicts._reroll,
    v5.RouseChecked: Verdicts._rouse,
    action.ActionRolled: Verdicts._action,
    action.OppositionSettled: Verdicts._contest,
    action.OppositionRuled: Verdicts._ruled,
    met.ThrowCommitted: Verdicts._throw,
    met.ThrowsRevealed: _revealed_in_group,
    met.BidsCompared: Verdicts._bids,
    met.RoundWon: Verdicts._round_won,
    met.OverbidSettled: Verdicts._overbid,
    met.ChallengeResolved: Verdicts._resolved,
    met.GroupSettled: _group_settled,
}
