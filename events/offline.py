"""Challenges played by hand while the app was unreachable (DESIGN "Offline devices").

When the Wi-Fi is down players settle a challenge the paper way, then one of them
records it (``record_offline_challenge``) with the time its own device showed. The
opponent confirms or disputes it; a storyteller may rule on any record, and must on a
disputed one. Every step is an event, so the review shows who claimed what and when.

Choices where the rule texts are silent:

- The record is a fact about the past, not play: it is accepted during a Time Out or
  while out of game (``play = False``), but not in a closed session.
- The opponent is a character of the roster (someone must be able to confirm); the
  winner is one of the two. Throws and bids are optional, kept as the recorder told them.
- Only the opponent confirms or disputes, once, while the record is pending. A confirmed
  record stands unless a storyteller rules; a storyteller may rule again (each ruling
  is an event and the earlier one stays in the log).
- Visibility: the two characters and the storytellers see the records whole; other
  players and observers see nothing of them (accounts may name secret powers).
- ``played_at`` is the device's clock, unchecked except that it parses as ISO 8601:
  the store's ``at`` column keeps the server's time of recording beside it.
"""

from __future__ import annotations

from datetime import datetime
from typing import TYPE_CHECKING, Literal

import msgspec
from msgspec.structs import replace

from conteur.events.bounds import CountMap, Key, Name, NameMap, Text
from conteur.events.met_rules import ATTRIBUTES
from conteur.events.model import Actor, Command, Draws, Event, refuse, id_counted, scoped_id
from conteur.events.session import character

if TYPE_CHECKING:
    from conteur.events.game import Decider, Evolver, GameState

Status = Literal["recorded", "confirmed", "disputed", "ruled"]


# ---------------------------------------------------------------- state


class Record(msgspec.Struct, frozen=True, kw_only=True, gc=False):
    id: str
    recorder: str
    opponent: str
    winner: str
    attribute: str | None = None
    played_at: str = ""
    account: str = ""
    throws: dict[str, str] = {}
    bids: dict[str, int] = {}
    status: str = "recorded"
    claimed_winner: str | None = None  # the disputer's claim
    dispute: str = ""
    ruling: str = ""

    @property
    def sides(self) -> tuple[str, str]:
        return (self.recorder, self.opponent)

    @property
    def loser(self) -> str:
        return self.opponent if self.winner == self.recorder else self.recorder


class State(msgspec.Struct, frozen=True, kw_only=True, gc=False):
    records: dict[str, Record] = {}
    counter: int = 0  # records so far (ids from before audiences were "o1", "o2", ...)
    ids: dict[str, int] = {}  # the next record number of each pair of characters ("o2.anna+bruno")


def initial() -> State:
    return State()


# ---------------------------------------------------------------- commands


class RecordOfflineChallenge(Command, frozen=True, kw_only=True, tag="record_offline_challenge"):
    """``character`` records a challenge played by hand against ``opponent``."""

    play = False
    character: Key
    opponent: Key
    winner: Name
    attribute: Literal["physical", "social", "mental"] | None = None
    played_at: Name = ""  # the recording device's own clock, ISO 8601
    account: Text = ""  # how it went, in the recorder's words
    throws: NameMap = {}
    bids: CountMap = {}


class ConfirmOffline(Command, frozen=True, kw_only=True, tag="confirm"):
    play = False
    character: Key
    record: Key


class DisputeOffline(Command, frozen=True, kw_only=True, tag="dispute"):
    play = False
    character: Key
    record: Key
    reason: Text = ""
    winner: Name | None = None  # who the disputer says won


class RuleOffline(Command, frozen=True, kw_only=True, tag="rule_offline"):
    storyteller_only = True
    play = False
    record: Key
    winner: Name
    reason: Text = ""


# ---------------------------------------------------------------- events


class _BetweenTwo(Event, frozen=True, kw_only=True):
    recorder: str
    opponent: str

    def owners(self) -> frozenset[str] | None:
        return frozenset((self.recorder, self.opponent))


class OfflineChallengeRecorded(_BetweenTwo, frozen=True, kw_only=True, tag="offline.recorded"):
    record: str
    winner: str
    attribute: str | None = None
    played_at: str = ""
    account: str = ""
    throws: dict[str, str] = {}
    bids: dict[str, int] = {}


class OfflineChallengeConfirmed(_BetweenTwo, frozen=True, kw_only=True, tag="offline.confirmed"):
    record: str


class OfflineChallengeDisputed(_BetweenTwo, frozen=True, kw_only=True, tag="offline.disputed"):
    record: str
    reason: str = ""
    winner: str | None = None


class OfflineChallengeRuled(_BetweenTwo, frozen=True, kw_only=True, tag="offline.ruled"):
    record: str
    winner: str
    loser: str
    previous_winner: str | None = None
    reason: str = ""


# ---------------------------------------------------------------- deciders


def get(state: GameState, record_id: str) -> Record:
    found = state.offline.records.get(record_id)
    if found is None:
        raise refuse(f"no offline challenge {record_id!r}", "offline", "not_found")
    return found


def decide_record_offline_challenge(state: GameState, cmd: RecordOfflineChallenge, draws: Draws, actor: Actor) -> list[Event]:
    character(state.session, cmd.character)
    if cmd.opponent == cmd.character:
        raise refuse("a character cannot challenge itself (MET-1)", "MET-1", "invalid")
    character(state.session, cmd.opponent)
    if cmd.winner not in (cmd.character, cmd.opponent):
        raise refuse(
            f"the winner is {cmd.character} or {cmd.opponent}, not {cmd.winner!r}",
            "offline",
            "invalid",
        )
    if cmd.attribute is not None and cmd.attribute not in ATTRIBUTES:
        raise refuse("a challenge names Physical, Social or Mental (MET-1)", "MET-1", "invalid")
    strangers = (set(cmd.throws) | set(cmd.bids)) - {cmd.character, cmd.opponent}
    if strangers:
        raise refuse(f"{sorted(strangers)} took no part in this challenge", "offline", "invalid")
    if any(v < 0 for v in cmd.bids.values()):
        raise refuse("a bid counts traits, 0 or more (MET-3)", "MET-3", "invalid")
    if cmd.played_at:
        try:
            datetime.fromisoformat(cmd.played_at)
        except ValueError:
            raise refuse(
                f"played_at {cmd.played_at!r} is not an ISO 8601 time",
                "offline",
                "invalid",
            ) from None
    return [
        OfflineChallengeRecorded(
            # numbered within the pair, who alone see the records
            record=scoped_id("o", frozenset((cmd.character, cmd.opponent)), state.offline.counter + 1,
                             state.offline.ids),
            recorder=cmd.character,
            opponent=cmd.opponent,
            winner=cmd.winner,
            attribute=cmd.attribute,
            played_at=cmd.played_at,
            account=cmd.account,
            throws=dict(cmd.throws),
            bids=dict(cmd.bids),
        )
    ]


def _answerable(state: GameState, record_id: str, who: str, verb: str, actor: Actor) -> Record:
    found = state.offline.records.get(record_id)
    if found is None or (not actor.is_storyteller and who not in found.sides):
        # a player outside the record gets the answer for a record that never was
        raise refuse(f"no offline challenge {record_id!r}", "offline", "not_found")
    if who != found.opponent:
        raise refuse(
            f"only {found.opponent}, the opponent, may {verb} offline challenge {found.id}",
            "offline",
            "forbidden",
        )
    if found.status != "recorded":
        raise refuse(f"offline challenge {found.id} is already {found.status}", "offline")
    return found


def decide_confirm_offline(state: GameState, cmd: ConfirmOffline, draws: Draws, actor: Actor) -> list[Event]:
    found = _answerable(state, cmd.record, cmd.character, "confirm", actor)
    return [OfflineChallengeConfirmed(record=found.id, recorder=found.recorder, opponent=found.opponent)]


def decide_dispute_offline(state: GameState, cmd: DisputeOffline, draws: Draws, actor: Actor) -> list[Event]:
    found = _answerable(state, cmd.record, cmd.character, "dispute", actor)
    if cmd.winner is not None and cmd.winner not in found.sides:
        raise refuse(f"the winner is {found.recorder} or {found.opponent}", "offline", "invalid")
    return [OfflineChallengeDisputed(record=found.id, recorder=found.recorder, opponent=found.opponent,
                                     reason=cmd.reason, winner=cmd.winner)]


def decide_rule_offline(state: GameState, cmd: RuleOffline, draws: Draws, actor: Actor) -> list[Event]:
    found = get(state, cmd.record)
    if cmd.winner not in found.sides:
        raise refuse(f"the winner is {found.recorder} or {found.opponent}", "offline", "invalid")
    loser = found.opponent if cmd.winner == found.recorder else found.recorder
    return [OfflineChallengeRuled(record=found.id, recorder=found.recorder, opponent=found.opponent,
                                  winner=cmd.winner, loser=loser, previous_winner=found.winner,
                                  reason=cmd.reason)]


# ---------------------------------------------------------------- evolvers
# fn(own: State, event, state: GameState) -> State: the offline records only (events.game
# composes them).


def _put(own: State, record: Record, **changes) -> State:
    return replace(own, records={**own.records, record.id: record}, **changes)


def _update(own: State, record_id: str, **changes) -> State:
    return _put(own, replace(own.records[record_id], **changes))


def evolve_offline_challenge_recorded(own: State, e: OfflineChallengeRecorded, state: GameState) -> State:
    record = Record(id=e.record, recorder=e.recorder, opponent=e.opponent, winner=e.winner,
                    attribute=e.attribute, played_at=e.played_at, account=e.account,
                    throws=e.throws, bids=e.bids)
    _, ids = id_counted(e.record, own.counter + 1, own.ids)
    return _put(own, record, counter=own.counter + 1, ids=ids)


def evolve_offline_challenge_confirmed(own: State, e: OfflineChallengeConfirmed, state: GameState) -> State:
    return _update(own, e.record, status="confirmed")


def evolve_offline_challenge_disputed(own: State, e: OfflineChallengeDisputed, state: GameState) -> State:
    return _update(own, e.record, status="disputed", dispute=e.reason, claimed_winner=e.winner)


def evolve_offline_challenge_ruled(own: State, e: OfflineChallengeRuled, state: GameState) -> State:
    return _update(own, e.record, status="ruled", winner=e.winner, ruling=e.reason)


DECIDERS: dict[type[Command], Decider] = {
    RecordOfflineChallenge: decide_record_offline_challenge,
    ConfirmOffline: decide_confirm_offline,
    DisputeOffline: decide_dispute_offline,
    RuleOffline: decide_rule_offline,
}

EVOLVERS: dict[type[Event], Evolver[State]] = {
    OfflineChallengeRecorded: evolve_offline_challenge_recorded,
    OfflineChallengeConfirmed: evolve_offline_challenge_confirmed,
    OfflineChallengeDisputed: evolve_offline_challenge_disputed,
    OfflineChallengeRuled: evolve_offline_challenge_ruled,
}

EVENTS: tuple = tuple(EVOLVERS)
COMMANDS: tuple = tuple(DECIDERS)
