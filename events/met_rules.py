"""Mind's Eye Theatre arithmetic, free of commands and events: who beats whom (MET-2),
what a character may declare (MET-3, MET-4, MET-10), how many retests it has (MET-12);
and the MET values the session carries (its options, MET-13 tie debts), which the session
module holds without knowing MET's commands."""

from __future__ import annotations

from typing import Literal

import msgspec

from conteur.events.model import refuse
from conteur.events.sheets import AnySheet, MetSheet

ATTRIBUTES = ("physical", "social", "mental")
Attribute = Literal["physical", "social", "mental"]


class MetOptions(msgspec.Struct, frozen=True, kw_only=True, gc=False):
    """Per-chronicle Mind's Eye Theatre options, off by default."""

    bomb: bool = False  # a "bomb" throw for characters whose powers grant it
    retest_cancel: bool = False  # an opponent may cancel a retest with a retest of its own
    accept_timeout: int = 60  # MET-16 (choice): seconds before the server closes a window
    celerity_extra_actions: bool = True  # TIME-4 (choice): +1 action per Celerity level
    # the most bonus dice (V5) or D+/- (action) a player may declare on a roll
    max_player_bonus: int = 3


# Group challenges (MET-1, "défie un ou plusieurs personnages"), a ruleset setting: one
# initiator against up to this many defenders. Several initiators against one defender
# are not one challenge: the text has one character challenge, and each attacker's action
# is its own (TIME-4, MET-8), so each is its own challenge, in initiative order (MET-9).
GROUP_DEFENDERS = 8


class TieDebt(msgspec.Struct, frozen=True, kw_only=True, gc=False):
    """MET-13: ``debtor`` loses its next tie against ``creditor``, with no time limit."""

    debtor: str
    creditor: str
    challenge: str = ""  # the failed overbid that made the debt (may be from a past session)


def traits(sheet: AnySheet | None, attribute: str | None) -> int:
    if not isinstance(sheet, MetSheet) or attribute not in ATTRIBUTES:
        return 0
    return getattr(sheet, attribute)

DRAWN = ("rock", "paper", "scissors")  # a server draw: d3, face 1..3 (bomb is never drawn)

# MET-2: rock beats scissors, scissors beat paper, paper beats rock. The chronicle option
# "bomb" beats rock and paper, loses to scissors and ties bomb.
_BEATS = {
    "rock": {"scissors"},
    "scissors": {"paper", "bomb"},
    "paper": {"rock"},
    "bomb": {"rock", "paper"},
}


def beats(a: str, b: str) -> bool:
    return b in _BEATS[a]


def throw_winner(a_side: str, a: str, b_side: str, b: str) -> str | None:
    """The side whose throw wins, or None on a tie."""
    if beats(a, b):
        return a_side
    if beats(b, a):
        return b_side
    return None


def label(attribute: str | None) -> str:
    return attribute.capitalize() if attribute else "no"


def true_score(sheet: MetSheet, attribute: str, abilities: tuple[str, ...]) -> int:
    """MET-3: traits in the category, plus applicable ability traits, plus bonus/malus."""
    return (
        traits(sheet, attribute)
        + sum(sheet.abilities.get(name, 0) for name in abilities)
        + sheet.bonus.get(attribute, 0)
    )


def score_breakdown(sheet: MetSheet, attribute: str, abilities: tuple[str, ...]) -> str:
    parts = [f"{label(attribute)} {traits(sheet, attribute)}"]
    parts += [f"{n} {sheet.abilities[n]}" for n in abilities if n in sheet.abilities]
    bonus = sheet.bonus.get(attribute)  # None or 0: no bonus part
    if bonus:
        parts.append(f"bonus {bonus:+d}")
    return " + ".join(parts)


def check_score(sheet: MetSheet, attribute: str, abilities: tuple[str, ...], value: int, what: str) -> None:
    """MET-4: never above twice the attribute; lying downward only (MET-15: checked).

    The one caller (``met._check_declared``) has refused a value below 0 (MET-3) for every
    side, with a sheet or not, and the challenges that take bids (classic and static) are
    refused without an attribute (MET-1): ``attribute`` is one of ``ATTRIBUTES``."""
    base = traits(sheet, attribute)
    cap = 2 * base
    if value > cap:
        raise refuse(
            f"{what} {value} is above your cap of {cap} (twice your {base} {label(attribute)} traits) (MET-4)",
            "MET-4",
        )
    truth = true_score(sheet, attribute, abilities)
    if value > truth:
        raise refuse(
            f"{what} {value} is above your true {truth} ({score_breakdown(sheet, attribute, abilities)}):"
            " you may declare less than the truth, never more (MET-4, MET-15)",
            "MET-4",
        )


def overbid_granted(overbid: int, score: int) -> bool:
    """MET-13: an overbid earns its retest when it is 4 traits or more above the score."""
    return overbid >= score + 4


def retests_allowed(sheet: MetSheet | None, kind: str) -> int:
    """MET-12: one retest per challenge; the Lucky merit allows a second on a static one."""
    lucky = isinstance(sheet, MetSheet) and any(m.lower() == "lucky" for m in sheet.merits)
    return 2 if lucky and kind == "static" else 1


def retest_sources(sheet: MetSheet) -> set[str]:
    return set(sheet.abilities) | set(sheet.merits) | set(sheet.powers)
