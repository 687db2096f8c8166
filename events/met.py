"""Mind's Eye Theatre challenges (MET-1..16): throws, bids, retests, overbids, outcomes.

A challenge has two sides: ``initiator`` and ``defender``. A side is a roster character,
an antagonist a storyteller plays (a name not on the roster, storytellers only), or
``"storyteller"`` (the other side of static, simple and complex tests). Rounds are
numbered across the whole challenge (a new throw after equal bids, a retest, an overbid
retest or the next successive test is a new round), so a stale throw names an old round
and is refused.

Flow: ``challenge`` -> sealed ``throw`` from each side -> reveal. A winner on the throw
(or on the bids that follow a tie, or by a tie rule) opens the loser's window: ``retest``,
``overbid`` (classic only), ``accept``; a storyteller's ``close_window`` (or the server's,
after ``accept_timeout`` seconds, with ``timeout=True``) makes the result stand.

A group challenge (MET-1: "défie un ou plusieurs personnages") is one initiator against
several defenders. It is a record of its own (``defenders`` set, status ``open``) and one
challenge per defender, its pairs ``<group>.1``, ``<group>.2``..., classic, or static when
a storyteller tests several characters against one difficulty (MET-10: a trap, a power),
each played by the rules above with three group rules: the initiator's one throw counts
against every defender throwing with it (a command naming the group; a server's draw is
drawn once); no throw of the group is revealed before every pair that is throwing has
both of its throws (MET-2 for all participants); and retests and overbids are counted
per participant over the whole group (MET-12, MET-14). When every pair's outcome stands,
``GroupSettled`` says so.
"""

from __future__ import annotations

import functools
from typing import TYPE_CHECKING, Iterable, Literal

import msgspec
from msgspec.structs import replace

from conteur.events import met_rules as rules
from conteur.events.bounds import Count, Key, Name, Names, Text
from conteur.events.met_rules import ATTRIBUTES, GROUP_DEFENDERS, Attribute, MetOptions, TieDebt, traits  # noqa: F401 (MET's names)
from conteur.events.model import Actor, Command, DrawRecord, Draws, Event, RuleViolation, refuse, unchanged
from conteur.events.session import (
    STORYTELLER_SIDE,
    Carried,
    SessionOpened,
    check_in_game,
    check_not_frozen,
    spend_action,
)
from conteur.events.sheets import MetSheet

if TYPE_CHECKING:
    from conteur.events.game import Decider, Evolver, GameState

Kind = Literal["classic", "static", "simple", "complex"]
Choice = Literal["rock", "paper", "scissors", "bomb"]
OPEN = ("throwing", "bidding", "window", "overbid", "open")  # "open": a group still playing


# ---------------------------------------------------------------- state


class Challenge(msgspec.Struct, frozen=True, kw_only=True, gc=False):
    id: str
    kind: str
    initiator: str
    defender: str
    tested: str | None = None  # static/simple/complex: the character facing the storyteller
    attribute: str | None = None
    defender_attribute: str | None = None  # Example 2: Mental power resisted with Physical
    difficulty: int = 0
    tests: int = 1
    test: int = 1
    abilities: tuple[str, ...] = ()
    defender_abilities: tuple[str, ...] = ()
    mutual: bool = False
    round: int = 1
    status: str = "throwing"  # throwing | bidding | window | overbid | resolved | cancelled
    # this round's sealed throws (the server knows them); None where the fold is a view's
    # that was told only that a throw is in (ThrowCommitted.redacted): a view's snapshot
    # is stored with these types (server/core/keep.py)
    throws: dict[str, str | None] = {}
    bids: dict[str, int | None] = {}  # this round's bids, or the overbid answer (None: as throws)
    winner: str | None = None
    loser: str | None = None
    by: str = ""  # how the current result came: throw | bid | difficulty | ...
    retests: dict[str, int] = {}  # MET-12, per side
    overbids: tuple[str, ...] = ()  # MET-14, sides that overbid
    overbid_value: int | None = None
    cancellable: str | None = None  # the side whose retest may still be cancelled
    previous: tuple[str, str, str, int] | None = None  # result before that retest
    reason: str = ""  # why it ended (accepted, window_closed, overruled, ...)
    group: str | None = None  # a pair of a group challenge: the group's id
    defenders: tuple[str, ...] = ()  # a group challenge's record: its defenders, pair by pair
    results: dict[str, str] = {}  # a settled group: each defender's pair's winner

    @property
    def pairs(self) -> tuple[str, ...]:
        """A group's pairs' ids, in the order of its defenders."""
        return tuple(f"{self.id}.{i}" for i in range(1, len(self.defenders) + 1))

    @property
    def sides(self) -> tuple[str, str]:
        return (self.initiator, self.defender)

    def other(self, side: str) -> str:
        return self.defender if side == self.initiator else self.initiator

    def attribute_of(self, side: str) -> str | None:
        if side == self.defender and self.defender_attribute:
            return self.defender_attribute
        return self.attribute

    def abilities_of(self, side: str) -> tuple[str, ...]:
        return self.defender_abilities if side == self.defender else self.abilities


PAGE = 256  # finished challenges per page: see State


class State(msgspec.Struct, frozen=True, kw_only=True, gc=False):
    """Open challenges in ``live``; finished ones (resolved, cancelled) in pages of
    ``PAGE`` by challenge number. Every MET event replaces one challenge, and copying a
    dict of every challenge of the evening on each event made replay quadratic: only the
    small ``live`` dict, or one page, is copied now. ``challenges`` merges both."""

    live: dict[str, Challenge] = {}
    done: tuple[dict[str, Challenge], ...] = ()
    counter: int = 0  # challenge ids are "c1", "c2", ... from this counter
    debts: tuple[TieDebt, ...] = ()  # MET-13, unpaid, carried across sessions

    @property
    def challenges(self) -> dict[str, Challenge]:
        """Every challenge of the session by id (built on each access: O(challenges))."""
        merged: dict[str, Challenge] = {}
        for page in self.done:
            merged.update(page)
        merged.update(self.live)
        return merged

    def get(self, challenge_id: str) -> Challenge | None:
        found = self.live.get(challenge_id)
        if found is None:
            page = _page(challenge_id)
            if page < len(self.done):
                found = self.done[page].get(challenge_id)
        return found


def _page(challenge_id: str) -> int:
    try:  # a group's pair "c5.2" shares its group's page
        return max(0, int(challenge_id[1:].split(".", 1)[0]) - 1) // PAGE
    except ValueError:  # ids are "c<n>"; anything else shares page 0
        return 0


def initial() -> State:
    return State()


# ---------------------------------------------------------------- commands


class IssueChallenge(Command, frozen=True, kw_only=True, tag="challenge"):
    """``character`` initiates. For a static test a storyteller initiates against a
    character (a trap, a power), set ``character`` to an antagonist name or
    "storyteller" and ``defender`` to the character tested."""

    character: Key
    kind: Kind = "classic"
    attribute: Attribute | None = None
    defender: Key | None = None
    # a group challenge (MET-1): one initiator against each of these, classic, or static
    # with a storyteller's initiator; one name here is the same as ``defender``
    defenders: Names = ()
    defender_attribute: Attribute | None = None
    difficulty: Count = 0  # static (MET-10)
    tests: Count = 1  # successive tests, static/simple/complex (MET-10, MET-11)
    abilities: Names = ()  # ability traits that apply to the initiator's bid
    # a storyteller's only: a player cannot see the defender's sheet, so the defender
    # declares its own abilities with its bid (MET-3)
    defender_abilities: Names = ()
    mutual: bool = False  # MET-8: one challenge settles both same-attribute actions
    action: Text = ""


class Throw(Command, frozen=True, kw_only=True, tag="throw"):
    character: Key
    challenge: Key
    round: Count
    choice: Choice | None = None  # None: the server draws a d3 (storytellers only)


class DeclareBid(Command, frozen=True, kw_only=True, tag="bid"):
    """A bid after a tie of throws, or the winner's score answering an overbid (then
    ``round`` is the challenge's current round)."""

    character: Key
    challenge: Key
    round: Count
    value: Count
    # MET-3: the bidder's own abilities that apply, added to any the challenge named for
    # its side; each must be on its sheet (MET-15)
    abilities: Names = ()


class Retest(Command, frozen=True, kw_only=True, tag="retest"):
    character: Key
    challenge: Key
    source: Name  # the ability, power or merit it comes from (MET-12)
    cancels: bool = False  # option retest_cancel: spend it to cancel the opponent's retest


class Overbid(Command, frozen=True, kw_only=True, tag="overbid"):
    character: Key
    challenge: Key
    value: Count
    abilities: Names = ()  # as DeclareBid.abilities


class Concede(Command, frozen=True, kw_only=True, tag="concede"):
    character: Key
    challenge: Key


class Accept(Command, frozen=True, kw_only=True, tag="accept"):
    character: Key
    challenge: Key


class CancelChallenge(Command, frozen=True, kw_only=True, tag="cancel_challenge"):
    storyteller_only = True
    play = False
    challenge: Key
    reason: Text = ""


class Overrule(Command, frozen=True, kw_only=True, tag="overrule"):
    storyteller_only = True
    play = False
    challenge: Key
    winner: Name
    reason: Text = ""


class CloseWindow(Command, frozen=True, kw_only=True, tag="close_window"):
    storyteller_only = True
    play = False
    challenge: Key
    timeout: bool = False  # sent by the server after accept_timeout seconds (MET-16)


# ---------------------------------------------------------------- events


class _Owned(Event, frozen=True, kw_only=True):
    character: str

    def owners(self) -> frozenset[str] | None:
        return frozenset((self.character,))


class ChallengeIssued(Event, frozen=True, kw_only=True, tag="met.challenge_issued"):
    challenge: str
    kind: str
    initiator: str
    defender: str
    tested: str | None = None
    attribute: str | None = None
    defender_attribute: str | None = None
    difficulty: int = 0
    tests: int = 1
    abilities: tuple[str, ...] = ()
    defender_abilities: tuple[str, ...] = ()
    mutual: bool = False
    action: str = ""


class ThrowCommitted(_Owned, frozen=True, kw_only=True, tag="met.throw_committed"):
    """Sealed (MET-2): others learn that a throw is in, not which."""

    challenge: str
    round: int
    choice: str | None = None
    draws: tuple[DrawRecord, ...] = ()

    def redacted(self) -> Event | None:
        return replace(self, choice=None, draws=())


class ThrowsRevealed(Event, frozen=True, kw_only=True, tag="met.throws_revealed"):
    challenge: str
    round: int
    throws: dict[str, str]
    winner: str | None = None  # None: a tie


class BidDeclared(_Owned, frozen=True, kw_only=True, tag="met.bid_declared"):
    """Told to the storyteller only (MET-3): others learn that a bid is in."""

    challenge: str
    round: int
    value: int | None = None
    overbid: bool = False  # the winner's score answering an overbid (MET-13)
    abilities: tuple[str, ...] = ()  # the bidder's own, declared with the bid (MET-3)

    def redacted(self) -> Event | None:
        return replace(self, value=None, abilities=())


class BidsCompared(Event, frozen=True, kw_only=True, tag="met.bids_compared"):
    challenge: str
    round: int
    winner: str | None = None  # None: equal bids, the throw is redone


class RoundWon(Event, frozen=True, kw_only=True, tag="met.round_won"):
    challenge: str
    round: int
    winner: str
    loser: str
    by: str  # throw | bid | difficulty | simple_tie | complex_tie | no_sheet | tie_debt | zero_traits


class RoundStarted(Event, frozen=True, kw_only=True, tag="met.round_started"):
    challenge: str
    round: int
    test: int = 1
    reason: str = ""  # equal_bids | retest | overbid | next_test


class TieDebtPaid(Event, frozen=True, kw_only=True, tag="met.tie_debt_paid"):
    debtor: str
    creditor: str
    challenge: str  # where it was paid


class TieDebtIncurred(Event, frozen=True, kw_only=True, tag="met.tie_debt_incurred"):
    debtor: str
    creditor: str
    challenge: str


class RetestTaken(Event, frozen=True, kw_only=True, tag="met.retest_taken"):
    challenge: str
    character: str
    source: str
    round: int  # the round whose result is ignored


class RetestCancelled(Event, frozen=True, kw_only=True, tag="met.retest_cancelled"):
    challenge: str
    character: str  # who cancelled, spending its own retest
    source: str
    cancelled: str  # whose retest


class OverbidDeclared(_Owned, frozen=True, kw_only=True, tag="met.overbid_declared"):
    challenge: str
    value: int | None = None
    abilities: tuple[str, ...] = ()

    def redacted(self) -> Event | None:
        return replace(self, value=None, abilities=())


class OverbidSettled(Event, frozen=True, kw_only=True, tag="met.overbid_settled"):
    challenge: str
    character: str
    opponent: str
    granted: bool  # 4 or more traits above the opponent: one retest (MET-13)


class ChallengeConceded(Event, frozen=True, kw_only=True, tag="met.challenge_conceded"):
    challenge: str
    character: str


class ChallengeResolved(Event, frozen=True, kw_only=True, tag="met.challenge_resolved"):
    """The outcome stands (MET-16). With ``mutual`` the winner's action succeeds and the
    loser's fails (MET-8)."""

    challenge: str
    winner: str
    loser: str
    reason: str  # final | accepted | window_closed | timeout | conceded | overbid_failed | zero_traits
    mutual: bool = False


class ChallengeCancelled(Event, frozen=True, kw_only=True, tag="met.challenge_cancelled"):
    challenge: str
    reason: str = ""


class ChallengeOverruled(Event, frozen=True, kw_only=True, tag="met.challenge_overruled"):
    challenge: str
    winner: str
    loser: str
    previous_winner: str | None = None
    reason: str = ""


class GroupChallengeIssued(Event, frozen=True, kw_only=True, tag="met.group_challenge_issued"):
    """One initiator against several defenders (MET-1): ``pairs[i]`` is the challenge
    between the initiator and ``defenders[i]``, each of this kind, with this attribute; in
    a static group each defender is the tested character of its pair."""

    challenge: str
    initiator: str
    defenders: tuple[str, ...]
    pairs: tuple[str, ...]
    kind: str = "classic"  # or "static": a storyteller's test of each defender (MET-10)
    attribute: str | None = None
    defender_attribute: str | None = None
    difficulty: int = 0  # static: every defender's
    tests: int = 1  # static: successive tests, in each pair
    abilities: tuple[str, ...] = ()
    defender_abilities: tuple[str, ...] = ()
    action: str = ""


class GroupSettled(Event, frozen=True, kw_only=True, tag="met.group_settled"):
    """Every pair's outcome stands (MET-16): ``results`` names the winner of each
    defender's pair (a cancelled pair has none)."""

    challenge: str
    initiator: str = ""
    results: dict[str, str] = {}


# ---------------------------------------------------------------- queries


def get(state: GameState, challenge_id: str) -> Challenge:
    found = state.met.get(challenge_id)
    if found is None:
        raise refuse(f"no challenge {challenge_id!r}", "MET-1", "not_found")
    return found


def open_windows(state: GameState) -> tuple[str, ...]:
    """Challenges waiting for their loser (MET-16): the server closes each with
    ``CloseWindow(timeout=True)`` after ``state.session.options.accept_timeout`` s."""
    return tuple(c.id for c in state.met.live.values() if c.status in ("window", "overbid"))


def window_paused(state: GameState, challenge_id: str) -> bool:
    """A Time Out over either side stops the acceptance clock (TIME-5, MET-16 choice):
    ``CloseWindow(timeout=True)`` is refused meanwhile; a timer should wait for resume."""
    ch = get(state, challenge_id)
    try:
        for side in ch.sides:
            check_not_frozen(state.session, side)
    except RuleViolation:
        return True
    return False


def carry_over(state: GameState) -> Carried:
    """What the next session of the chronicle inherits: the unpaid MET-13 tie debts."""
    return Carried(tie_debts=tuple(state.met.debts))


def initiative_order(state: GameState, actions: Iterable[tuple[str, str]]) -> list[tuple[tuple[str, str], ...]]:
    """MET-9: the order in which ``(character, attribute)`` actions of one turn resolve.

    Celerity first, higher level first (choice); then more traits in the attribute used.
    Equal on both: one group, acting simultaneously (each attribute still its own throw).
    A storyteller may decree another order: this is only what the storyteller view shows.
    """

    def key(action: tuple[str, str]) -> tuple[int, int]:
        character = state.session.characters.get(action[0])
        sheet = character.sheet if character else None
        celerity = sheet.celerity if isinstance(sheet, MetSheet) else 0
        return (celerity, traits(sheet, action[1]))

    groups: list[tuple[tuple[str, str], ...]] = []
    for action in sorted(actions, key=key, reverse=True):
        if groups and key(action) == key(groups[-1][0]):  # as the last group's
            groups[-1] = groups[-1] + (action,)
        else:
            groups.append((action,))
    return groups


def debts_between(state: GameState, a: str, b: str) -> tuple[TieDebt, ...]:
    return tuple(d for d in state.met.debts if {d.debtor, d.creditor} == {a, b})


def _sheet(state: GameState, side: str) -> MetSheet | None:
    found = state.session.characters.get(side)
    sheet = found.sheet if found else None
    return sheet if isinstance(sheet, MetSheet) else None


def _on_roster(state: GameState, side: str) -> bool:
    return side in state.session.characters


def _live(state: GameState, challenge_id: str) -> Challenge:
    ch = get(state, challenge_id)
    if ch.status not in OPEN:
        raise refuse(f"challenge {ch.id} is {ch.status} (MET-16)", "MET-16")
    return ch


def _side(ch: Challenge, character: str) -> None:
    if character not in ch.sides:
        raise refuse(f"{character} takes no part in challenge {ch.id}", "MET-1", "forbidden")


# ---------------------------------------------------------------- groups


def _pairs(state: GameState, group_id: str) -> list[Challenge]:
    """A group's pairs; every caller names a group on record (a pair's ``group``, or a group)."""
    return [state.met.get(pair) for pair in get(state, group_id).pairs]


def _apply(state: GameState, events: Iterable[Event]) -> GameState:
    """The state after ``events`` (MET's own only), to decide what follows them in one
    command: a group's reveal waits for its other pairs' throws."""
    own = state.met
    for e in events:
        own = EVOLVERS[type(e)](own, e, state)
    return replace(state, met=own)


def _retests_used(state: GameState, ch: Challenge, side: str) -> int:
    """MET-12: one retest per character per challenge, a group counting as one."""
    if ch.group is None:
        return ch.retests.get(side, 0)
    return sum(p.retests.get(side, 0) for p in _pairs(state, ch.group))


def _overbade(state: GameState, ch: Challenge, side: str) -> bool:
    """MET-14: one overbid per character per challenge, a group counting as one."""
    if ch.group is None:
        return side in ch.overbids
    return any(side in p.overbids for p in _pairs(state, ch.group))


def _release(state: GameState, group_id: str) -> list[Event]:
    """MET-2 for every participant of a group: the throws are revealed when every pair
    that is throwing has both of its throws, and then all of them at once."""
    throwing = [p for p in _pairs(state, group_id) if p.status == "throwing"]
    if not throwing or any(len(p.throws) < 2 for p in throwing):
        return []
    events: list[Event] = []
    for pair in throwing:
        revealed = _reveal(state, pair, pair.throws)
        events += revealed
        state = _apply(state, revealed)  # a debt paid in one pair is paid for the next
    return events


def _settle(state: GameState, group_id: str) -> list[Event]:
    group = state.met.get(group_id)
    if group is None or group.status != "open":
        return []
    pairs = _pairs(state, group_id)
    if any(p.status in OPEN for p in pairs):
        return []
    return [GroupSettled(challenge=group_id, initiator=group.initiator,
                         results={p.defender: p.winner for p in pairs if p.status == "resolved" and p.winner})]


_MANY = (Throw, DeclareBid, Concede, Accept, CloseWindow)  # one command may act in several pairs


def _targets(state: GameState, group: Challenge, cmd: Command) -> list[Challenge]:
    """The pairs a command naming a group acts in. A defender's is its own pair; the
    initiator's are those waiting for it (its throw counts against every defender throwing
    with it, its bid in every pair tied at that round); a retest, an overbid, an overbid's
    answer or an overrule for it in several pairs must name one."""
    pairs = _pairs(state, group.id)
    character = cmd.winner if isinstance(cmd, Overrule) else getattr(cmd, "character", None)
    if character is not None and character != group.initiator:
        own = [p for p in pairs if p.defender == character]
        if not own:
            raise refuse(f"{character} takes no part in challenge {group.id}", "MET-1", "forbidden")
        return own
    me = group.initiator
    live = [p for p in pairs if p.status in OPEN]
    if isinstance(cmd, Throw):
        found = [p for p in live if p.status == "throwing" and p.round == cmd.round and me not in p.throws]
    elif isinstance(cmd, DeclareBid):
        found = [p for p in live if p.round == cmd.round and (
            (p.status == "bidding" and me not in p.bids) or (p.status == "overbid" and p.winner == me))]
    elif isinstance(cmd, Retest):
        found = [p for p in live if (p.cancellable not in (None, me) if cmd.cancels
                                     else p.status == "window" and p.loser == me)]
    elif isinstance(cmd, Overbid):
        found = [p for p in live if p.status == "window" and p.loser == me and p.by == "throw"]
    elif isinstance(cmd, Accept):
        found = [p for p in live if p.status == "window" and p.loser == me]
    elif isinstance(cmd, CloseWindow):
        found = [p for p in live if p.status in ("window", "overbid")]
    elif isinstance(cmd, Overrule):
        found = pairs
    else:  # Concede: the initiator gives up against every defender still playing
        found = live
    if not found:  # the pair's own refusal says why
        return (live or pairs)[:1]
    # an overbid's answer is for one pair (MET-13), a bid after a tie may count for several
    answers = isinstance(cmd, DeclareBid) and any(p.status == "overbid" for p in found)
    if len(found) > 1 and (answers or not isinstance(cmd, _MANY)):
        ids = ", ".join(p.id for p in found)
        raise refuse(f"challenge {group.id} has several pairs this may be for: name one of {ids} (MET-1)",
                     "MET-1", "invalid")
    return found


def _grouped(decider: Decider) -> Decider:
    """A command naming a group, or one of its pairs: the pairs' rules, then what the
    group adds (the reveal of its throws, its settling)."""

    @functools.wraps(decider)  # named after its command still
    def decide(state: GameState, cmd: Command, draws: Draws, actor: Actor) -> list[Event]:
        found = state.met.get(cmd.challenge)
        if found is None or (found.group is None and not found.defenders):
            return decider(state, cmd, draws, actor)
        if found.defenders and not isinstance(cmd, CancelChallenge):
            events: list[Event] = []
            now = state
            for pair in _targets(state, found, cmd):
                decided = decider(now, replace(cmd, challenge=pair.id), draws, actor)
                events += decided
                now = _apply(now, decided)
                if isinstance(cmd, Throw) and cmd.choice is None:
                    # one throw against all (MET-1, MET-2): the server's d3 is drawn once,
                    # recorded in the first pair's throw, and counts in every other pair
                    cmd = replace(cmd, choice=next(e.choice for e in decided if isinstance(e, ThrowCommitted)))
        else:
            events = decider(state, cmd, draws, actor)
        group_id = found.group or found.id
        after = _apply(state, events)
        revealed = _release(after, group_id)
        return events + revealed + _settle(_apply(after, revealed), group_id)

    return decide


def _own_abilities(state: GameState, ch: Challenge, side: str, declared: tuple[str, ...]) -> tuple[str, ...]:
    """MET-3: the abilities that count for ``side``: those the challenge named for it and
    those it declares itself, each on its sheet (MET-15)."""
    sheet = _sheet(state, side)
    if sheet is not None:
        missing = [a for a in declared if a not in sheet.abilities]
        if missing:
            held = ", ".join(sorted(sheet.abilities)) or "none"
            raise refuse(
                f"{', '.join(missing)}: not an ability on {state.session.characters[side].name}'s sheet "
                f"(abilities held: {held}) (MET-3, MET-15)",
                "MET-3",
                "invalid",
            )
    return tuple(dict.fromkeys(ch.abilities_of(side) + tuple(declared)))


def _check_declared(state: GameState, ch: Challenge, side: str, value: int, what: str, actor: Actor,
                    declared: tuple[str, ...] = ()) -> None:
    """MET-4, MET-15: the server knows the true sheet and checks every declaration."""
    if value < 0:
        raise refuse(f"a {what} counts traits: {value} is below 0 (MET-3)", "MET-3", "invalid")
    abilities = _own_abilities(state, ch, side, declared)
    sheet = _sheet(state, side)
    if sheet is not None:
        rules.check_score(sheet, ch.attribute_of(side), abilities, value, what)
    elif not actor.is_storyteller:
        raise refuse(f"no sheet on file for {side}: a storyteller declares for it (MET-15)", "MET-15")


# ---------------------------------------------------------------- outcomes


def _loser_can_act(state: GameState, ch: Challenge, loser: str, by: str) -> bool:
    """Whether the loser still has a window (MET-12, MET-13); else the result stands."""
    if loser == STORYTELLER_SIDE:  # MET-5's zero traits never come here: they end the challenge at its issue
        return False
    sheet = _sheet(state, loser)
    has_source = sheet is None or bool(rules.retest_sources(sheet))  # else nothing to retest with
    if has_source and _retests_used(state, ch, loser) < rules.retests_allowed(sheet, ch.kind):
        return True
    return ch.kind == "classic" and by == "throw" and not _overbade(state, ch, loser)


def _won(state: GameState, ch: Challenge, winner: str, loser: str, by: str, round: int | None = None) -> list[Event]:
    events: list[Event] = [
        RoundWon(challenge=ch.id, round=ch.round if round is None else round, winner=winner, loser=loser, by=by)
    ]
    if ch.tested is not None and winner == ch.tested and ch.test < ch.tests:
        # MET-10/11 successive tests: all must be won (choice); the next one starts
        events.append(RoundStarted(challenge=ch.id, round=ch.round + 1, test=ch.test + 1, reason="next_test"))
    elif not _loser_can_act(state, ch, loser, by):
        events.append(
            ChallengeResolved(challenge=ch.id, winner=winner, loser=loser, reason="final", mutual=ch.mutual)
        )
    return events


def _tie(state: GameState, ch: Challenge) -> list[Event]:
    """A tie of throws: MET-11 for simple/complex, MET-6 and MET-13 handicaps, else bids."""
    if ch.kind == "simple":
        return _won(state, ch, ch.tested, STORYTELLER_SIDE, "simple_tie")
    if ch.kind == "complex":
        return _won(state, ch, STORYTELLER_SIDE, ch.tested, "complex_tie")
    characters = state.session.characters
    a, b = ch.sides
    no_sheet = {s for s in ch.sides if s in characters and characters[s].no_sheet}  # MET-6
    debts = debts_between(state, a, b)  # MET-13
    handicapped = no_sheet | {d.debtor for d in debts}
    # one debt per debtor is paid by this tie: the next tie, not every later one
    first: dict[str, TieDebt] = {}
    for d in debts:
        first.setdefault(d.debtor, d)
    paid = [TieDebtPaid(debtor=d.debtor, creditor=d.creditor, challenge=ch.id) for d in first.values()]
    if len(handicapped) == 1:
        (loser,) = handicapped
        by = "tie_debt" if loser in first else "no_sheet"
        return paid + _won(state, ch, ch.other(loser), loser, by)
    # both handicapped: the handicaps cancel out (choice) and the debts are paid
    return paid  # the tie goes to bids (ThrowsRevealed with no winner opened them)


def bids_winner(ch: Challenge, bids: dict[str, int]) -> str | None:
    """Who the bids make the winner; None: equal bids (MET-3), the throw is redone.
    Against a difficulty (MET-10) declared <= difficulty loses, above it wins."""
    if ch.kind == "static":
        return ch.tested if bids[ch.tested] > ch.difficulty else ch.other(ch.tested)
    a, b = ch.sides
    if bids[a] == bids[b]:
        return None
    return a if bids[a] > bids[b] else b


def _compare_bids(state: GameState, ch: Challenge, bids: dict[str, int]) -> list[Event]:
    winner = bids_winner(ch, bids)
    compared = BidsCompared(challenge=ch.id, round=ch.round, winner=winner)
    if winner is None:  # MET-3: a perfect tie redoes the throw
        return [compared,
                RoundStarted(challenge=ch.id, round=ch.round + 1, test=ch.test, reason="equal_bids")]
    by = "difficulty" if ch.kind == "static" else "bid"
    return [compared] + _won(state, ch, winner, ch.other(winner), by)


# ---------------------------------------------------------------- deciders


def decide_issue_challenge(state: GameState, cmd: IssueChallenge, draws: Draws, actor: Actor) -> list[Event]:
    if cmd.defenders:
        if cmd.defender is not None:
            raise refuse("a challenge names its defender in defender or in defenders, not both (MET-1)",
                         "defenders", "invalid")
        if len(cmd.defenders) == 1:  # one defender: the challenge of two sides, as with defender
            return decide_issue_challenge(state, replace(cmd, defender=cmd.defenders[0], defenders=()), draws, actor)
        return _issue_group(state, cmd, draws, actor)
    session = state.session
    initiator = cmd.character
    defender = cmd.defender
    tested = None
    if cmd.kind in ("simple", "complex"):
        if not _on_roster(state, initiator):
            raise refuse(f"a {cmd.kind} test is for a character of the roster (MET-11)", "MET-11", "invalid")
        if cmd.attribute is not None:
            raise refuse(f"a {cmd.kind} test uses no traits (MET-11)", "MET-11", "invalid")
        tested, defender = initiator, STORYTELLER_SIDE
    elif cmd.attribute is None:
        raise refuse("a challenge names Physical, Social or Mental (MET-1)", "MET-1", "invalid")
    elif cmd.kind == "static":
        if cmd.difficulty < 0:
            raise refuse("a difficulty counts traits, 0 or more (MET-10)", "MET-10", "invalid")
        if _on_roster(state, initiator):
            tested, defender = initiator, STORYTELLER_SIDE
        elif defender and _on_roster(state, defender):
            tested = defender  # a storyteller's static against a character (trap, power)
        else:
            raise refuse("a static challenge tests one character of the roster (MET-10)", "MET-10", "invalid")
    else:
        if not defender or defender == STORYTELLER_SIDE:
            raise refuse(
                "a classic challenge names its defender; against the storyteller use a static test (MET-8)",
                "MET-8",
                "invalid",
            )
        if not actor.is_storyteller and not _on_roster(state, defender):
            raise refuse(f"no character {defender!r} in this session", "MET-1", "not_found")
    if defender == initiator:
        raise refuse("a character cannot challenge itself (MET-1)", "MET-1", "invalid")
    if cmd.tests < 1 or (cmd.tests > 1 and cmd.kind == "classic"):
        raise refuse(
            "successive tests are for static, simple and complex tests (MET-10, MET-11)",
            "MET-10",
            "invalid",
        )
    if cmd.mutual and (cmd.kind != "classic" or cmd.defender_attribute not in (None, cmd.attribute)):
        raise refuse(
            "one challenge settles both actions only when both use the same attribute (MET-8)",
            "MET-8",
            "invalid",
        )
    if not _on_roster(state, initiator) and (not actor.is_storyteller or initiator == ""):
        raise refuse(f"no character {initiator!r} in this session", "MET-1", "not_found")
    if cmd.defender_abilities and not actor.is_storyteller:
        raise refuse(
            "the defender declares its own abilities with its bid; the initiator names only its own (MET-3)",
            "MET-3",
            "invalid",
        )
    for side in (initiator, defender):
        found = session.characters.get(side)
        if found is not None and found.sheet is not None and not isinstance(found.sheet, MetSheet):
            raise refuse(f"{found.name} has no Mind's Eye Theatre sheet", "MET-1", "invalid")
    initiator_sheet = _sheet(state, initiator)
    if initiator_sheet is not None and initiator_sheet.cannot_initiate:
        raise refuse(
            f"{session.characters[initiator].name} can initiate no challenge, only defend (MET-1)",
            "MET-1",
        )
    for side in (initiator, defender):
        # TIME-6: out of game, a character is no one's target, a storyteller's neither
        if side in session.characters:
            check_in_game(session, side, target=True)
    if not actor.is_storyteller and defender in session.characters:
        check_not_frozen(session, defender)  # TIME-5
        if session.characters[defender].scene != session.characters[initiator].scene:
            raise refuse(f"{session.characters[defender].name} is not in your scene (TIME-2)", "TIME-2")
    for side in (initiator, defender) if cmd.mutual else (initiator,):
        if _on_roster(state, side):
            spend_action(state, side)  # TIME-4
    ch = Challenge(
        id=f"c{state.met.counter + 1}",
        kind=cmd.kind,
        initiator=initiator,
        defender=defender,
        tested=tested,
        attribute=cmd.attribute,
        defender_attribute=cmd.defender_attribute,
        difficulty=cmd.difficulty,
        tests=cmd.tests,
        abilities=cmd.abilities,
        defender_abilities=cmd.defender_abilities,
        mutual=cmd.mutual,
    )
    issued = ChallengeIssued(
        challenge=ch.id,
        kind=ch.kind,
        initiator=initiator,
        defender=defender,
        tested=ch.tested,
        attribute=ch.attribute,
        defender_attribute=ch.defender_attribute,
        difficulty=ch.difficulty,
        tests=ch.tests,
        abilities=ch.abilities,
        defender_abilities=ch.defender_abilities,
        mutual=ch.mutual,
        action=cmd.action,
    )
    # MET-5: 0 traits or less in the attribute loses at once (both: the initiator, choice)
    zero = [s for s in ch.sides if (sheet := _sheet(state, s)) is not None and traits(sheet, ch.attribute_of(s)) <= 0]
    if ch.attribute is None or not zero:
        return [issued]
    loser = zero[0]  # ch.sides lists the initiator first: both at 0, it is the initiator
    winner = ch.other(loser)
    return [
        issued,
        RoundWon(challenge=ch.id, round=1, winner=winner, loser=loser, by="zero_traits"),
        ChallengeResolved(challenge=ch.id, winner=winner, loser=loser, reason="zero_traits", mutual=ch.mutual),
    ]


def _issue_group(state: GameState, cmd: IssueChallenge, draws: Draws, actor: Actor) -> list[Event]:
    limit = rules.GROUP_DEFENDERS
    if len(cmd.defenders) > limit:
        raise refuse(f"defenders: at most {limit} in one group challenge, not {len(cmd.defenders)} (MET-1)",
                     "defenders", "invalid")
    if cmd.kind in ("simple", "complex"):
        raise refuse(f"a {cmd.kind} test is one character's own, against the storyteller, and names no "
                     f"defenders: give each character its own {cmd.kind} test (MET-11)", "MET-11", "invalid")
    if cmd.kind == "static" and _on_roster(state, cmd.character):
        raise refuse("a static test against several characters is a storyteller's (a trap, a power): its "
                     "initiator is the storyteller or an antagonist; a character's own static test faces a "
                     "difficulty alone, and against several characters it is a classic challenge (MET-10)",
                     "MET-10", "invalid")
    if cmd.mutual:
        raise refuse("one challenge settles both actions between two characters only (MET-8)", "MET-8", "invalid")
    if len(set(cmd.defenders)) != len(cmd.defenders):
        raise refuse("defenders: each character once", "defenders", "invalid")
    for defender in cmd.defenders:
        # every check of a challenge against each defender: roster, scene, Time Out, out
        # of game, the initiator's action of the turn (one, TIME-4: the group is one action)
        decide_issue_challenge(state, replace(cmd, defender=defender, defenders=()), draws, actor)
    group = f"c{state.met.counter + 1}"
    issued = GroupChallengeIssued(
        challenge=group,
        initiator=cmd.character,
        defenders=tuple(cmd.defenders),
        pairs=tuple(f"{group}.{i}" for i in range(1, len(cmd.defenders) + 1)),
        kind=cmd.kind,
        attribute=cmd.attribute,
        defender_attribute=cmd.defender_attribute,
        difficulty=cmd.difficulty if cmd.kind == "static" else 0,
        tests=cmd.tests,  # 1 unless static: each pair's checks above refused successive classic tests
        abilities=cmd.abilities,
        defender_abilities=cmd.defender_abilities,
        action=cmd.action,
    )
    after = _apply(state, [issued])
    events: list[Event] = [issued]
    for pair in _pairs(after, group):
        # MET-5 in each pair: 0 traits or less loses at once (both: the initiator, choice)
        zero = [s for s in pair.sides
                if (sheet := _sheet(state, s)) is not None and traits(sheet, pair.attribute_of(s)) <= 0]
        if zero:
            loser = zero[0]  # both at zero: the initiator (choice), first of the pair's sides
            winner = pair.other(loser)
            events += [
                RoundWon(challenge=pair.id, round=1, winner=winner, loser=loser, by="zero_traits"),
                ChallengeResolved(challenge=pair.id, winner=winner, loser=loser, reason="zero_traits"),
            ]
    return events + _settle(_apply(state, events), group)


def decide_throw(state: GameState, cmd: Throw, draws: Draws, actor: Actor) -> list[Event]:
    ch = _live(state, cmd.challenge)
    _side(ch, cmd.character)
    if ch.status != "throwing" or cmd.round != ch.round:
        raise refuse(
            f"round {cmd.round} of challenge {ch.id} takes no throw now (it is at round {ch.round}, {ch.status}) (MET-2)",
            "MET-2",
        )
    if cmd.character in ch.throws:
        raise refuse("your throw for this round is already sealed (MET-2)", "MET-2")
    records: tuple[DrawRecord, ...] = ()
    choice = cmd.choice
    if choice is None:
        if not actor.is_storyteller:
            raise refuse("choose rock, paper or scissors (MET-2)", "MET-2", "invalid")
        # in the thrower's stream: ThrowCommitted is seen whole by its thrower alone
        record = draws.stream(actor, frozenset((cmd.character,))).roll(len(rules.DRAWN))  # d3: 1 rock, 2 paper, 3 scissors
        choice, records = rules.DRAWN[record.face - 1], (record,)
    if choice == "bomb":
        sheet = _sheet(state, cmd.character)
        if not state.session.options.bomb:
            raise refuse("this chronicle plays without the bomb (MET-2)", "MET-2")
        if _on_roster(state, cmd.character) and not (sheet and sheet.bomb):
            raise refuse("only a character whose power grants it may throw the bomb (MET-2)", "MET-2")
    committed = ThrowCommitted(
        challenge=ch.id, round=ch.round, character=cmd.character, choice=choice, draws=records
    )
    throws = {**ch.throws, cmd.character: choice}
    if len(throws) < 2 or ch.group is not None:  # a group's pairs are revealed together (_release)
        return [committed]
    return [committed] + _reveal(state, ch, throws)


def _reveal(state: GameState, ch: Challenge, throws: dict[str, str]) -> list[Event]:
    a, b = ch.sides
    winner = rules.throw_winner(a, throws[a], b, throws[b])
    revealed = ThrowsRevealed(challenge=ch.id, round=ch.round, throws=throws, winner=winner)
    if winner is not None:
        return [revealed] + _won(state, ch, winner, ch.other(winner), "throw")
    return [revealed] + _tie(state, ch)


def decide_declare_bid(state: GameState, cmd: DeclareBid, draws: Draws, actor: Actor) -> list[Event]:
    ch = _live(state, cmd.challenge)
    _side(ch, cmd.character)
    if cmd.round != ch.round:
        raise refuse(f"challenge {ch.id} is at round {ch.round}, not {cmd.round} (MET-3)", "MET-3")
    if ch.status == "overbid":
        if cmd.character != ch.winner:
            raise refuse("the winner answers the overbid; the loser announced first (MET-13)", "MET-13")
        _check_declared(state, ch, cmd.character, cmd.value, "score", actor, cmd.abilities)
        overbidder = ch.loser
        granted = rules.overbid_granted(ch.overbid_value, cmd.value)  # MET-13
        events: list[Event] = [
            BidDeclared(challenge=ch.id, round=ch.round, character=cmd.character, value=cmd.value, overbid=True,
                        abilities=cmd.abilities),
            OverbidSettled(challenge=ch.id, character=overbidder, opponent=cmd.character, granted=granted),
        ]
        if granted:
            return events + [RoundStarted(challenge=ch.id, round=ch.round + 1, test=ch.test, reason="overbid")]
        return events + [
            TieDebtIncurred(debtor=overbidder, creditor=cmd.character, challenge=ch.id),
            ChallengeResolved(
                challenge=ch.id, winner=cmd.character, loser=overbidder, reason="overbid_failed", mutual=ch.mutual
            ),
        ]
    if ch.status != "bidding":
        raise refuse(f"challenge {ch.id} takes bids only after a tie of throws (MET-3)", "MET-3")
    bidders = (ch.tested,) if ch.kind == "static" else ch.sides
    if cmd.character not in bidders:
        raise refuse("against a difficulty only the tested character declares (MET-10)", "MET-10")
    if cmd.character in ch.bids:
        raise refuse("your bid for this round is already declared (MET-3)", "MET-3")
    if ch.kind == "classic" and cmd.character == ch.defender and ch.initiator not in ch.bids:
        raise refuse("the initiator declares its traits first (MET-3)", "MET-3")
    _check_declared(state, ch, cmd.character, cmd.value, "bid", actor, cmd.abilities)
    declared = BidDeclared(challenge=ch.id, round=ch.round, character=cmd.character, value=cmd.value,
                           abilities=cmd.abilities)
    bids = {**ch.bids, cmd.character: cmd.value}
    if len(bids) < len(bidders):
        return [declared]
    return [declared] + _compare_bids(state, ch, bids)


def _check_source(state: GameState, ch: Challenge, character: str, source: str, actor: Actor) -> None:
    if not source.strip():
        raise refuse("a retest names its source: ability, power or merit (MET-12)", "MET-12", "invalid")
    sheet = _sheet(state, character)
    if sheet is not None and not actor.is_storyteller and source not in rules.retest_sources(sheet):
        raise refuse(f"{source!r} is not an ability, power or merit on your sheet (MET-12, MET-15)", "MET-12")
    allowed = rules.retests_allowed(sheet, ch.kind)
    if _retests_used(state, ch, character) >= allowed:
        raise refuse(
            "one retest per character per challenge; Lucky allows a second on a static challenge only (MET-12)",
            "MET-12",
        )


def decide_retest(state: GameState, cmd: Retest, draws: Draws, actor: Actor) -> list[Event]:
    ch = _live(state, cmd.challenge)
    _side(ch, cmd.character)
    if cmd.cancels:
        if not state.session.options.retest_cancel:
            raise refuse("this chronicle does not let a retest cancel a retest (MET-12 option)", "MET-12")
        if ch.cancellable is None or ch.cancellable == cmd.character or ch.throws or ch.previous is None:
            raise refuse("there is no opponent's retest to cancel now (MET-12 option)", "MET-12")
        _check_source(state, ch, cmd.character, cmd.source, actor)
        winner, loser, by, round = ch.previous
        cancelled = RetestCancelled(
            challenge=ch.id, character=cmd.character, source=cmd.source, cancelled=ch.cancellable
        )
        return [cancelled] + _won(state, ch, winner, loser, by, round=round)
    if ch.status != "window" or cmd.character != ch.loser:
        raise refuse("only the loser of the challenge may retest, before it is accepted (MET-12)", "MET-12")
    _check_source(state, ch, cmd.character, cmd.source, actor)
    return [
        RetestTaken(challenge=ch.id, character=cmd.character, source=cmd.source, round=ch.round),
        RoundStarted(challenge=ch.id, round=ch.round + 1, test=ch.test, reason="retest"),
    ]


def decide_overbid(state: GameState, cmd: Overbid, draws: Draws, actor: Actor) -> list[Event]:
    ch = _live(state, cmd.challenge)
    _side(ch, cmd.character)
    if ch.kind != "classic":
        raise refuse("an overbid answers an opponent's score: classic challenges only (MET-13)", "MET-13")
    if ch.status != "window" or cmd.character != ch.loser:
        raise refuse("only the loser may overbid, before the effects are resolved (MET-13)", "MET-13")
    if ch.by != "throw":
        raise refuse("an overbid is for a challenge lost on the throw (MET-13)", "MET-13")
    if _overbade(state, ch, cmd.character):
        raise refuse("one overbid per character per challenge (MET-14)", "MET-14")
    _check_declared(state, ch, cmd.character, cmd.value, "score", actor, cmd.abilities)
    return [OverbidDeclared(challenge=ch.id, character=cmd.character, value=cmd.value, abilities=cmd.abilities)]


def decide_concede(state: GameState, cmd: Concede, draws: Draws, actor: Actor) -> list[Event]:
    ch = _live(state, cmd.challenge)
    _side(ch, cmd.character)
    if ch.kind == "static" and cmd.character == ch.defender:
        raise refuse("the defender of a static challenge cannot choose to lose (MET-7)", "MET-7")
    winner = ch.other(cmd.character)
    return [
        ChallengeConceded(challenge=ch.id, character=cmd.character),
        ChallengeResolved(challenge=ch.id, winner=winner, loser=cmd.character, reason="conceded", mutual=ch.mutual),
    ]


def decide_accept(state: GameState, cmd: Accept, draws: Draws, actor: Actor) -> list[Event]:
    ch = _live(state, cmd.challenge)
    if ch.status != "window" or cmd.character != ch.loser:
        raise refuse("only the loser accepts a result, once it is known (MET-16)", "MET-16")
    return [ChallengeResolved(challenge=ch.id, winner=ch.winner, loser=ch.loser, reason="accepted", mutual=ch.mutual)]


def decide_close_window(state: GameState, cmd: CloseWindow, draws: Draws, actor: Actor) -> list[Event]:
    ch = _live(state, cmd.challenge)
    if ch.status not in ("window", "overbid"):
        raise refuse(f"challenge {ch.id} has no open window for a retest or an overbid (MET-16)", "MET-16")
    if cmd.timeout and window_paused(state, ch.id):
        raise refuse(
            "Time Out: the acceptance window waits for the resume (TIME-5, MET-16)",
            "TIME-5",
            "frozen",
        )
    reason = "timeout" if cmd.timeout else "window_closed"
    return [ChallengeResolved(challenge=ch.id, winner=ch.winner, loser=ch.loser, reason=reason, mutual=ch.mutual)]


def decide_cancel_challenge(state: GameState, cmd: CancelChallenge, draws: Draws, actor: Actor) -> list[Event]:
    ch = get(state, cmd.challenge)
    if ch.status == "cancelled":
        raise refuse(f"challenge {ch.id} is already cancelled (MET-16)", "MET-16")
    return [ChallengeCancelled(challenge=ch.id, reason=cmd.reason)]


def decide_overrule(state: GameState, cmd: Overrule, draws: Draws, actor: Actor) -> list[Event]:
    ch = get(state, cmd.challenge)
    if ch.status == "cancelled":
        raise refuse(f"challenge {ch.id} is cancelled (MET-16)", "MET-16")
    _side(ch, cmd.winner)
    return [
        ChallengeOverruled(
            challenge=ch.id,
            winner=cmd.winner,
            loser=ch.other(cmd.winner),
            previous_winner=ch.winner,
            reason=cmd.reason,
        )
    ]


# ---------------------------------------------------------------- evolvers
# fn(own: State, event, state: GameState) -> State: MET's part only; ``state`` is the whole
# state before the event, to read (events.game composes them).


def _put(own: State, ch: Challenge, **changes) -> State:
    if ch.status in OPEN:
        return replace(own, live={**own.live, ch.id: ch}, **changes)
    live = {k: v for k, v in own.live.items() if k != ch.id} if ch.id in own.live else own.live
    n = _page(ch.id)
    done = own.done + ({},) * (n + 1 - len(own.done))
    done = done[:n] + ({**done[n], ch.id: ch},) + done[n + 1 :]
    return replace(own, live=live, done=done, **changes)


def _update(own: State, challenge_id: str, **changes) -> State:
    return _put(own, replace(own.get(challenge_id), **changes))


def evolve_challenge_issued(own: State, e: ChallengeIssued, state: GameState) -> State:
    ch = Challenge(
        id=e.challenge,
        kind=e.kind,
        initiator=e.initiator,
        defender=e.defender,
        tested=e.tested,
        attribute=e.attribute,
        defender_attribute=e.defender_attribute,
        difficulty=e.difficulty,
        tests=e.tests,
        abilities=e.abilities,
        defender_abilities=e.defender_abilities,
        mutual=e.mutual,
    )
    return _put(own, ch, counter=own.counter + 1)


def evolve_group_challenge_issued(own: State, e: GroupChallengeIssued, state: GameState) -> State:
    group = Challenge(
        id=e.challenge, kind=e.kind, initiator=e.initiator, defender=e.defenders[0], attribute=e.attribute,
        defender_attribute=e.defender_attribute, difficulty=e.difficulty, tests=e.tests, abilities=e.abilities,
        defender_abilities=e.defender_abilities, status="open", defenders=e.defenders,
    )
    own = _put(own, group, counter=own.counter + 1)
    static = e.kind == "static"  # each defender faces the difficulty: the tested of its pair
    for pair, defender in zip(e.pairs, e.defenders):
        own = _put(own, replace(group, id=pair, defender=defender, tested=defender if static else None,
                                status="throwing", defenders=(), group=e.challenge))
    return own


def evolve_group_settled(own: State, e: GroupSettled, state: GameState) -> State:
    return _update(own, e.challenge, status="resolved", results=e.results, reason="settled")


def acting(e: ChallengeIssued) -> tuple[str, ...]:
    """TIME-4: whose action of the turn a challenge is: its initiator's, and its defender's
    too when it settles both actions (MET-8)."""
    return (e.initiator, e.defender) if e.mutual else (e.initiator,)


def evolve_throw_committed(own: State, e: ThrowCommitted, state: GameState) -> State:
    ch = own.get(e.challenge)
    return _update(own, e.challenge, throws={**ch.throws, e.character: e.choice}, cancellable=None)


def evolve_throws_revealed(own: State, e: ThrowsRevealed, state: GameState) -> State:
    return _update(own, e.challenge, status="throwing" if e.winner else "bidding", bids={})


def evolve_bid_declared(own: State, e: BidDeclared, state: GameState) -> State:
    ch = own.get(e.challenge)
    return _update(own, e.challenge, bids={**ch.bids, e.character: e.value})


def evolve_round_won(own: State, e: RoundWon, state: GameState) -> State:
    return _update(own, e.challenge, status="window", winner=e.winner, loser=e.loser, by=e.by)


def evolve_round_started(own: State, e: RoundStarted, state: GameState) -> State:
    return _update(
        own, e.challenge, status="throwing", round=e.round, test=e.test, throws={}, bids={}, overbid_value=None
    )


def evolve_retest_taken(own: State, e: RetestTaken, state: GameState) -> State:
    ch = own.get(e.challenge)
    retests = {**ch.retests, e.character: ch.retests.get(e.character, 0) + 1}
    if not state.session.options.retest_cancel:
        return _update(own, ch.id, retests=retests)
    previous = (ch.winner, ch.loser, ch.by, e.round)
    return _update(own, ch.id, retests=retests, cancellable=e.character, previous=previous)


def evolve_retest_cancelled(own: State, e: RetestCancelled, state: GameState) -> State:
    ch = own.get(e.challenge)
    retests = {**ch.retests, e.character: ch.retests.get(e.character, 0) + 1}
    return _update(own, ch.id, retests=retests, cancellable=None, previous=None)


def evolve_overbid_declared(own: State, e: OverbidDeclared, state: GameState) -> State:
    ch = own.get(e.challenge)
    return _update(
        own, ch.id, status="overbid", overbids=ch.overbids + (e.character,), overbid_value=e.value, bids={}
    )


def evolve_challenge_resolved(own: State, e: ChallengeResolved, state: GameState) -> State:
    return _update(own, e.challenge, status="resolved", winner=e.winner, loser=e.loser, reason=e.reason)


def evolve_challenge_cancelled(own: State, e: ChallengeCancelled, state: GameState) -> State:
    own = _update(own, e.challenge, status="cancelled", reason=e.reason or "cancelled")
    for pair in own.get(e.challenge).pairs:  # a group cancelled: its pairs still playing too
        if own.get(pair).status in OPEN:
            own = _update(own, pair, status="cancelled", reason=e.reason or "cancelled")
    return own


def evolve_challenge_overruled(own: State, e: ChallengeOverruled, state: GameState) -> State:
    own = _update(own, e.challenge, status="resolved", winner=e.winner, loser=e.loser, reason="overruled")
    ch = own.get(e.challenge)
    group = own.get(ch.group) if ch.group is not None else None
    if group is not None and group.status == "resolved":  # a settled group's outcome follows
        own = _update(own, group.id, results={**group.results, ch.defender: e.winner})
    return own


def evolve_tie_debt_paid(own: State, e: TieDebtPaid, state: GameState) -> State:
    debts = list(own.debts)
    for i, d in enumerate(debts):
        if (d.debtor, d.creditor) == (e.debtor, e.creditor):
            del debts[i]
            break
    return replace(own, debts=tuple(debts))


def evolve_tie_debt_incurred(own: State, e: TieDebtIncurred, state: GameState) -> State:
    debt = TieDebt(debtor=e.debtor, creditor=e.creditor, challenge=e.challenge)
    return replace(own, debts=own.debts + (debt,))


def evolve_debts_carried(own: State, e: SessionOpened, state: GameState) -> State:
    """MET-13: debts from earlier sessions of the chronicle, merged with any already known."""
    debts = tuple(own.debts) + tuple(d for d in e.carried.tie_debts if d not in own.debts)
    return replace(own, debts=debts)


DECIDERS: dict[type[Command], Decider] = {
    IssueChallenge: decide_issue_challenge,
    Throw: _grouped(decide_throw),
    DeclareBid: _grouped(decide_declare_bid),
    Retest: _grouped(decide_retest),
    Overbid: _grouped(decide_overbid),
    Concede: _grouped(decide_concede),
    Accept: _grouped(decide_accept),
    CancelChallenge: _grouped(decide_cancel_challenge),
    Overrule: _grouped(decide_overrule),
    CloseWindow: _grouped(decide_close_window),
}

EVOLVERS: dict[type[Event], Evolver[State]] = {
    ChallengeIssued: evolve_challenge_issued,
    ThrowCommitted: evolve_throw_committed,
    ThrowsRevealed: evolve_throws_revealed,
    BidDeclared: evolve_bid_declared,
    BidsCompared: unchanged,
    RoundWon: evolve_round_won,
    RoundStarted: evolve_round_started,
    TieDebtPaid: evolve_tie_debt_paid,
    TieDebtIncurred: evolve_tie_debt_incurred,
    RetestTaken: evolve_retest_taken,
    RetestCancelled: evolve_retest_cancelled,
    OverbidDeclared: evolve_overbid_declared,
    OverbidSettled: unchanged,
    ChallengeConceded: unchanged,
    ChallengeResolved: evolve_challenge_resolved,
    ChallengeCancelled: evolve_challenge_cancelled,
    ChallengeOverruled: evolve_challenge_overruled,
    GroupChallengeIssued: evolve_group_challenge_issued,
    GroupSettled: evolve_group_settled,
}

EVENTS: tuple = tuple(EVOLVERS)
COMMANDS: tuple = tuple(DECIDERS)
