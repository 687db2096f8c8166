"""Character sheets, one tagged type per ruleset. The server always knows the true sheet
(MET-15): bids, retests and overbids are checked against it. A sheet is secret to its
character and the storytellers ("never another character's sheet")."""

from __future__ import annotations

import msgspec

from conteur.events.bounds import Count, CountMap, Names


class Sheet(msgspec.Struct, frozen=True, kw_only=True, tag_field="kind"):
    pass


class MetSheet(Sheet, frozen=True, kw_only=True, tag="met"):
    """Mind's Eye Theatre (MET-1..16): traits per attribute category, abilities, merits."""

    physical: Count = 0
    social: Count = 0
    mental: Count = 0
    abilities: CountMap = {}  # talent traits that may add to a bid (MET-3)
    merits: Names = ()  # "Lucky" (MET-12), ...
    celerity: Count = 0  # TIME-4, MET-9
    bomb: bool = False  # the chronicle's optional "bomb" throw, when a power grants it
    bonus: CountMap = {}  # bonus (+) or malus (-) traits by category, from powers/weapons
    powers: Names = ()  # disciplines/powers a retest may name as its source (MET-12)
    cannot_initiate: bool = False  # MET-1: may defend normally but initiate no challenge


class V5Sheet(Sheet, frozen=True, kw_only=True, tag="v5"):
    """Vampire-5th-style pools (V5-1..9)."""

    attributes: CountMap = {}
    skills: CountMap = {}
    willpower: Count = 0
    humanity: Count = 0
    hunger: Count = 1


class ActionSheet(Sheet, frozen=True, kw_only=True, tag="action"):
    """Action dice (ACT-1..13): each characteristic has a threshold such as 6 ("6+")."""

    characteristics: CountMap = {}
    expertises: Names = ()
    tension: Count = 0  # NT, raised by Surpass (ACT-8)


AnySheet = MetSheet | V5Sheet | ActionSheet
