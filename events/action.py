"""Action dice with D+/- dice (ACT-1..13): commands, events, state, deciders.

A roll: ``dice`` action dice (3, a setting), d8 or d10 with a fitting Expertise (ACT-3);
each die at or above the characteristic's threshold is one success point (PS); the net
bonus or malus rolls that many D+/- (ACT-5, ACT-6). The D+/- is a d6 read as

    faces 1, 2 -> "-"      faces 3, 4 -> blank      faces 5, 6 -> "+"      (ACT-4)

Roll ids ("a1", "a2.nova" secret, "a1.nova+rook" secret opposed, "a1.*" blind) and
modifier ids ("m1.nova") come from the state, numbered within their audience
(``events.model.scoped_id``); dice are drawn in the roller's stream for the roll's audience
(``events.model.stream_name``). The game clock is the session's (``session.clock``).

Choices where the text is silent (RULES marks some **(choice)**):

- ACT-1: a difficulty below 1 is refused (the director rules it with ``rule_action``).
  With a roster on record, only its characters roll; a sacrificed character rolls no more.
- ACT-2: ``turns`` > 1 records ``ActionBegun`` with the whole command; ``resume`` rolls it
  at its last turn (started turn + turns - 1) or later, with the modifiers then active.
- ACT-3: 3 dice, d8, d10 with an Expertise: ``action_settings``. A player whose sheet is
  on record names its characteristic and Expertise (checked on the sheet); a bare
  ``threshold`` or ``expertise=True`` is for storytellers or characters without a sheet.
- ACT-4: D+/- faces 1-2 "-", 3-4 blank, 5-6 "+".
- ACT-5: declared ``bonus``/``malus``, cooperation (+1), the option (+2), the simultaneous
  malus and active temporary modifiers all add up into one net value, so the options'
  two D+/- cancel against maluses like any bonus.
- ACT-6: PS never go below 0; the Sacrifice's +2 PS come after that floor.
- ACT-7: a modifier in turns applied at turn t applies through turn t + duration (the
  rest of the current turn and the next ``duration`` turns); in minutes or hours it
  applies while game_seconds < applied + duration. No removal command: they expire.
  ``ModifierApplied`` is seen by its character only.
- ACT-8: ``option`` is one field (exclusive by shape). Surpass appends
  ``TensionRaised`` (NT+1 from the sheet's ``tension``), Sacrifice ``CharacterSacrificed``.
  "One action only" is checked within the character's simultaneous group of the turn.
- ACT-9: cooperating rolls share a ``cooperation`` label; each event records whether
  the group has succeeded so far, ``cooperation_succeeded`` answers for the label.
- ACT-10: ``simultaneous`` = the number of actions attempted at once (trivial ones
  included); the rolls and rulings of one character in one turn with the same
  ``together`` label form the group; it may not exceed the declared count.
- ACT-11: named levels are matched without case or accents; default table Difficile 2,
  Extrême 4; organisers name 1 and 3 in ``action_settings``.
- ACT-12: the initiator rolls with ``opponent``, the defender answers with ``against``
  (no difficulty); more PS wins, equal PS the defender holds. Like MET throws, each side
  commits before seeing the other: the initiator's roll is logged sealed
  (``ActionRolled.sealed``: seen whole by its roller and storytellers only) beside an
  ``OppositionOpened`` without dice or options, which calls the defender; its Surpass or
  Sacrifice waits too (a sacrificing initiator still acts until then: refusing it would
  show everyone, by its missing rolls, what it chose). The answer (or a storyteller's settlement) reveals the initiator's
  roll whole (``ActionRevealed``) in the same batch as the verdict. A hidden side makes the
  settlement seen by both characters only (or storytellers only if one side is blind).
  A roll whose defender never answers (dead, gone) waits until a storyteller settles it
  (``settle_opposition``: initiator, defender or cancelled), seen as the roll was; a
  storyteller drops a long action nobody will roll with ``cancel_action`` (ACT-2).
- ACT-13: ``Test (Characteristic, Difficulty)`` with a number or a named level; the log
  shows the level's name when one was used.
"""

from __future__ import annotations

import re
import unicodedata
from typing import TYPE_CHECKING, Any, Literal

import msgspec
from msgspec.structs import replace

from conteur.events.bounds import Count, CountMap, CountOrName, Key, Name, Seconds, Text
from conteur.events.model import (STORYTELLER, Actor, Command, DrawRecord, Draws, Event, refuse,
                                  audience_key, id_counted, id_known, id_scope, scoped_id, sees, unchanged)
from conteur.events.session import (SheetAmended, TimeSkipped, TurnAdvanced, check_player_bonus, clock,
                                    sheet_of, starting_value_changed)
from conteur.events.sheets import ActionSheet
from conteur.events.v5 import Visible, Visibility, check_visibility, visible_owners

if TYPE_CHECKING:
    from conteur.events.game import Decider, Evolver, GameState

Option = Literal["none", "surpass", "sacrifice"]
Unit = Literal["turns", "minutes", "hours"]

PLUS_FACES = (5, 6)
MINUS_FACES = (1, 2)
OPTION_BONUS = 2  # ACT-8: two extra D+/- as a bonus, netted with the rest (ACT-5)
SACRIFICE_PS = 2
MAX_PLUSMINUS = 20  # a guard against typos (choice)
SECONDS = {"turns": 0, "minutes": 60, "hours": 3600}


def sign(face: int) -> str:
    """ACT-4: the symbol a D+/- face shows."""
    if face in PLUS_FACES:
        return "+"
    if face in MINUS_FACES:
        return "-"
    return ""


def fold_name(name: str) -> str:
    """Names compare without case or accents: "extreme" is "Extrême" on a phone."""
    decomposed = unicodedata.normalize("NFKD", name.strip())
    return "".join(c for c in decomposed if not unicodedata.combining(c)).casefold()


# ---------------------------------------------------------------- pure outcome


class ActionOutcome(msgspec.Struct, frozen=True, kw_only=True):
    ps_dice: int  # PS from the action dice alone
    ps: int  # final PS
    success: bool | None  # None for an opposed roll (no difficulty)


def points(
    dice: list[int] | tuple[int, ...],
    threshold: int,
    plusminus: list[int] | tuple[int, ...],
    net: int,
    difficulty: int | None,
    sacrifice: bool,
) -> ActionOutcome:
    """ACT-3, ACT-6, ACT-8, ACT-11. PS never go below 0 (choice), and the Sacrifice's
    +2 PS come after that floor."""
    ps_dice = sum(1 for f in dice if f >= threshold)
    ps = ps_dice
    signs = [sign(f) for f in plusminus]
    if net > 0:
        ps += signs.count("+")
    elif net < 0:
        ps -= signs.count("-")
    ps = max(0, ps)
    if sacrifice:
        ps += SACRIFICE_PS
    success = None if difficulty is None else ps >= difficulty
    return ActionOutcome(ps_dice=ps_dice, ps=ps, success=success)


def net_modifier(bonus: int, malus: int, cooperation: str, option: str, simultaneous: int,
                 modifiers: tuple[int, ...] | list[int]) -> int:
    """ACT-5: the one net bonus (> 0) or malus (< 0) of a roll: declared bonus and malus,
    +1 for cooperation (ACT-9), +2 for an option (ACT-8), -1 per simultaneous action beyond
    the first (ACT-10), and the values of the active temporary modifiers (ACT-7)."""
    plus = bonus + (1 if cooperation else 0) + (OPTION_BONUS if option != "none" else 0)
    minus = malus + (simultaneous - 1)
    return plus - minus + sum(modifiers)


def opposed_winner(initiator: str, initiator_ps: int, defender: str, defender_ps: int) -> str:
    """ACT-12: more PS wins; on equal PS the defender's position holds (choice)."""
    return initiator if initiator_ps > defender_ps else defender


def ruled_winner(outcome: str, initiator: str, defender: str) -> str | None:
    """ACT-12 overruled (``settle_opposition``): None when the contest was cancelled."""
    return {"initiator": initiator, "defender": defender}.get(outcome)


_TEST = re.compile(r"^\s*test\s*\(\s*([^,()]+?)\s*,\s*([^,()]+?)\s*\)\s*$", re.IGNORECASE)


def parse_test(text: str) -> tuple[str, int | str]:
    """ACT-13: ``Test (Science, 3)`` -> ("Science", 3); a named level stays a name:
    ``Test (Motricité, Difficile)`` -> ("Motricité", "Difficile")."""
    match = _TEST.match(text)
    if not match:
        raise refuse(
            f"{text!r} is not a test: write it Test (Characteristic, Difficulty) (ACT-13)",
            "ACT-13",
            "invalid",
        )
    characteristic, difficulty = match.groups()
    return characteristic, int(difficulty) if difficulty.lstrip("-").isdigit() else difficulty


def notation(characteristic: str, difficulty: int | str) -> str:
    return f"Test ({characteristic}, {difficulty})"


_MODIFIER = re.compile(
    r"^\s*(bonus|malus)\s*\(\s*(\d+)\s*(tours?|turns?|min(?:utes?)?|h(?:eures?|ours?)?)\s*\)"
    r"\s*(?:de\s*|of\s*)?(\d+)\s*$",
    re.IGNORECASE,
)


def parse_modifier(text: str) -> tuple[int, int, Unit]:
    """ACT-7 notation: ``Malus (2 Tours) de 1`` -> (-1, 2, "turns");
    ``Bonus (30 min) de 2`` -> (2, 30, "minutes"); ``Malus (1 h) de 1`` -> (-1, 1, "hours")."""
    match = _MODIFIER.match(text)
    if not match:
        raise refuse(f"{text!r} is not a modifier: write it Malus (2 Tours) de 1 (ACT-7)", "ACT-7", "invalid")
    kind, duration, unit, value = match.groups()
    unit_name: Unit = (
        "turns" if unit[0].lower() == "t" else "minutes" if unit[0].lower() == "m" else "hours"
    )
    amount = int(value) if kind.lower() == "bonus" else -int(value)
    return amount, int(duration), unit_name


# ---------------------------------------------------------------- settings and state


DEFAULT_LEVELS = {"Difficile": 2, "Extrême": 4}  # ACT-11; 1 and 3 named by organisers


class Settings(msgspec.Struct, frozen=True, kw_only=True):
    dice: int = 3  # ACT-3 (choice: a setting)
    die: int = 8
    expert_die: int = 10
    levels: dict[str, int] = msgspec.field(default_factory=lambda: dict(DEFAULT_LEVELS))


class Modifier(msgspec.Struct, frozen=True, kw_only=True, gc=False):
    id: str
    character: str
    value: int  # > 0 bonus, < 0 malus
    unit: str
    duration: int
    expires_turn: int | None = None  # last turn it applies
    expires_seconds: int | None = None  # game time at which it stops applying
    reason: str = ""


class Rolled(msgspec.Struct, frozen=True, kw_only=True, gc=False):
    character: str
    ps: int
    opponent: str
    visibility: str = "open"
    # the initiator's sealed roll whole, revealed with the answer (None: an old log's roll,
    # seen whole from the start, or a viewer's fold that only saw ``OppositionOpened``)
    rolled: "ActionRolled | None" = None


class Group(msgspec.Struct, frozen=True, kw_only=True, gc=False):
    """Simultaneous actions of one character in one turn (ACT-8, ACT-10)."""

    declared: int
    turn: int = 0
    actions: int = 0
    option: str = "none"


class State(msgspec.Struct, frozen=True, kw_only=True):
    settings: Settings = Settings()
    waiting: dict[str, Rolled] = {}  # ACT-12: opposed rolls not yet answered, by roll id
    next_roll: int = 1  # the next public roll number ("a4")
    modifiers: tuple[Modifier, ...] = ()
    next_modifier: int = 1  # ids from before audiences ("m3" for any modifier)
    next_hidden: dict[str, int] = {}  # the next roll number of each other audience ("a2.jack")
    modifier_ids: dict[str, int] = {}  # the next modifier number of each character ("m1.jack")
    tension: dict[str, int] = {}  # NT once it moved from the sheet's
    dead: dict[str, str] = {}  # character -> the roll it sacrificed itself in
    pending: dict[str, ActionBegun] = {}  # ACT-2: multi-turn actions begun, by roll id
    groups: dict[str, Group] = {}
    cooperations: dict[str, bool] = {}  # label -> someone reached the difficulty
    # (turn, game seconds) before which no modifier can have expired, so a clock move that
    # expires nothing scans nothing: a long night holds hour-long modifiers by the hundred.
    # None with modifiers held: not known yet (a snapshot from before the field).
    expiry: tuple[int, int] | None = None


_NEVER = 1 << 62


def _expiry(modifiers: tuple[Modifier, ...]) -> tuple[int, int] | None:
    if not modifiers:
        return None
    return (min((m.expires_turn for m in modifiers if m.expires_turn is not None), default=_NEVER),
            min((m.expires_seconds for m in modifiers if m.expires_seconds is not None), default=_NEVER))


def _without(d: dict, key: str) -> dict:
    """``d`` less ``key`` as a new dict (copied in C: a dict comprehension over hundreds of
    waiting rolls was a third of a long night's replay)."""
    if key not in d:
        return d
    d = dict(d)
    del d[key]
    return d


def initial() -> State:
    return State()


def running(modifier: Modifier, turn: int, seconds: int) -> bool:
    """ACT-7: a modifier in turns applies up to and including its last turn; one in
    minutes or hours until that much game time has passed."""
    return (modifier.expires_turn is None or turn <= modifier.expires_turn) and (
        modifier.expires_seconds is None or seconds < modifier.expires_seconds
    )


def active_modifiers(state: GameState, character: str) -> tuple[Modifier, ...]:
    turn, seconds = clock(state)
    return tuple(
        m for m in state.action.modifiers if m.character == character and running(m, turn, seconds)
    )


def tension_of(state: GameState, character: str) -> int:
    if character in state.action.tension:
        return state.action.tension[character]
    sheet = sheet_of(state, character)
    return sheet.tension if isinstance(sheet, ActionSheet) else 0


def cooperation_succeeded(state: GameState, label: str) -> bool:
    """ACT-9: the cooperative action succeeds if one of its rolls reached the difficulty."""
    return state.action.cooperations.get(label, False)


# ---------------------------------------------------------------- commands


class RollAction(Command, frozen=True, kw_only=True, tag="roll_action"):
    """Roll an action (ACT-1..13). Give ``characteristic`` + ``difficulty`` (a number or
    a named level) or ``test`` ("Test (Science, 3)"); for a roll against another player
    character give ``opponent`` (initiator) or ``against`` = the initiator's roll id
    (defender) and no difficulty. ``turns`` > 1 begins a multi-turn action, rolled later
    with ``resume`` = its id at its last turn."""

    character: Key
    characteristic: Name | None = None
    difficulty: CountOrName = None
    test: Name | None = None
    threshold: Count | None = None  # storytellers, or a character without a sheet
    expertise: bool | Name | None = None  # an Expertise's name is checked on the sheet
    bonus: Count = 0
    malus: Count = 0
    cooperation: Name = ""  # ACT-9: label shared by the cooperating rolls
    simultaneous: Count = 1  # ACT-10: actions attempted at once, this one included
    together: Name = ""  # ties the simultaneous actions of one turn
    option: Option = "none"  # ACT-8: one field, so the options are exclusive
    opponent: Key | None = None
    against: Key | None = None
    turns: Count = 1
    resume: Key | None = None
    visibility: Visibility = "open"
    label: Name = ""


class ApplyModifier(Command, frozen=True, kw_only=True, tag="apply_modifier"):
    """ACT-7: ``value`` > 0 a bonus, < 0 a malus, for ``duration`` ``unit``s of game
    time; or the notation ``Malus (2 Tours) de 1``."""

    storyteller_only = True
    play = False

    character: Key
    value: Count = 0
    duration: Seconds = 0
    unit: Unit = "turns"
    notation: Name | None = None
    reason: Text = ""


class RuleAction(Command, frozen=True, kw_only=True, tag="rule_action"):
    """ACT-1: the director rules an action trivial (succeeds) or impossible (fails),
    without a roll. It still counts among simultaneous actions (ACT-10)."""

    storyteller_only = True
    play = False

    character: Key
    ruling: Literal["trivial", "impossible"]
    description: Text = ""
    simultaneous: Count = 1
    together: Name = ""


class ConfigureAction(Command, frozen=True, kw_only=True, tag="action_settings"):
    storyteller_only = True
    play = False

    dice: Count = 3
    die: Count = 8
    expert_die: Count = 10
    levels: CountMap = msgspec.field(default_factory=lambda: dict(DEFAULT_LEVELS))


class SettleOpposition(Command, frozen=True, kw_only=True, tag="settle_opposition"):
    """ACT-12 overruled: a storyteller settles an opposed roll still waiting for its
    defender's answer (the defender died, left, lost its phone): ``outcome`` is
    "initiator" (the initiator wins), "defender" (the defender's position holds) or
    "cancelled" (the contest is dropped). A plain ``str``, so a bad outcome is refused with
    a sentence naming the rule rather than a decoding error."""

    storyteller_only = True
    play = False

    roll: Key
    outcome: Name
    reason: Text = ""


class CancelAction(Command, frozen=True, kw_only=True, tag="cancel_action"):
    """ACT-2 overruled: a storyteller drops a multi-turn action that will never be rolled
    (its character died, left the game)."""

    storyteller_only = True
    play = False

    roll: Key
    reason: Text = ""


# ---------------------------------------------------------------- events


class ActionRolled(Visible, Event, frozen=True, kw_only=True, tag="action.rolled"):
    roll: str
    character: str
    characteristic: str
    threshold: int
    expertise: bool
    sides: int
    dice: tuple[int, ...]
    plusminus: tuple[int, ...]  # D+/- faces; see ``sign``
    signs: tuple[str, ...]
    net: int  # net bonus (> 0) or malus (< 0) after ACT-5
    ps_dice: int
    ps: int
    success: bool | None
    difficulty: int | None = None
    difficulty_name: str = ""
    notation: str = ""  # ACT-13, for tests
    expertise_name: str = ""
    bonus: int = 0  # declared
    malus: int = 0  # declared
    modifiers: tuple[str, ...] = ()  # ids of the temporary modifiers counted
    cooperation: str = ""
    cooperation_success: bool | None = None  # ACT-9: this roll or an earlier one succeeded
    simultaneous: int = 1
    together: str = ""
    option: str = "none"
    opponent: str | None = None
    against: str | None = None
    turns: int = 1
    turn: int = 0
    visibility: str = "open"
    label: str = ""
    draws: tuple[DrawRecord, ...] = ()
    # ACT-12: an initiator's roll sealed until the defender has rolled; False in
    # logs from before the seal, whose opposed rolls the defender saw at once
    sealed: bool = False

    def owners(self) -> frozenset[str] | None:
        """A sealed opposed roll is its roller's alone (and the storytellers') until
        ``ActionRevealed``; an old unsealed one was seen by the opponent too."""
        if self.sealed:
            return frozenset() if self.visibility == "blind" else frozenset((self.character,))
        if self.opponent is not None:
            return _opposed_owners(self.visibility, self.character, self.opponent)
        return Visible.owners(self)


class OppositionOpened(Event, frozen=True, kw_only=True, tag="action.opposed"):
    """ACT-12: ``character`` rolled against ``opponent`` (roll ``roll``), who must answer.
    Only what the initiator declares aloud: no dice, PS, threshold, Expertise, bonus or
    option, so the defender commits to its own roll blind. Seen by who will see
    the contest: everyone when open, both characters when secret, storytellers when blind."""

    roll: str
    character: str
    opponent: str
    characteristic: str = ""
    label: str = ""
    turn: int = 0
    visibility: str = "open"

    def owners(self) -> frozenset[str] | None:
        return _opposed_owners(self.visibility, self.character, self.opponent)


class ActionRevealed(Event, frozen=True, kw_only=True, tag="action.revealed"):
    """ACT-12: the initiator's sealed roll ``rolled``, shown whole once the defender has
    rolled (or a storyteller settled the contest), in the same batch as the verdict. Seen
    by who saw ``OppositionOpened``. Its draws are the sealed roll's, already logged:
    ``draws`` stays empty so they are counted once."""

    roll: str
    character: str
    opponent: str
    rolled: ActionRolled
    visibility: str = "open"

    def owners(self) -> frozenset[str] | None:
        return _opposed_owners(self.visibility, self.character, self.opponent)


class ActionBegun(Visible, Event, frozen=True, kw_only=True, tag="action.begun"):
    """ACT-2: a multi-turn action, rolled only at its last turn."""

    roll: str
    character: str
    turns: int
    started_turn: int
    last_turn: int
    command: RollAction
    notation: str = ""
    visibility: str = "open"


class ActionRuled(Event, frozen=True, kw_only=True, tag="action.ruled"):
    roll: str
    character: str
    ruling: str
    success: bool
    description: str = ""
    simultaneous: int = 1
    together: str = ""
    turn: int = 0


class OppositionSettled(Event, frozen=True, kw_only=True, tag="action.opposition_settled"):
    """ACT-12: more PS wins; on equal PS the defender's position holds (choice)."""

    initiator_roll: str
    defender_roll: str
    initiator: str
    defender: str
    initiator_ps: int
    defender_ps: int
    winner: str
    visibility: str = "open"

    def owners(self) -> frozenset[str] | None:
        if self.visibility == "open":
            return None
        if self.visibility == "secret":
            return frozenset((self.initiator, self.defender))
        return frozenset()


def _opposed_owners(visibility: str, character: str, opponent: str) -> frozenset[str] | None:
    """Who sees an opposed roll whole (``ActionRolled.owners``): everyone when open, its
    roller and the opponent who must answer it when secret, storytellers alone when blind."""
    if visibility == "open":
        return None
    if visibility == "secret":
        return frozenset((character, opponent))
    return frozenset()


class OppositionRuled(Event, frozen=True, kw_only=True, tag="action.opposition_ruled"):
    """ACT-12 overruled by a storyteller: the waiting roll ``roll`` of ``character``
    against ``opponent`` is settled without the defender's roll. ``winner`` is None when
    the contest was cancelled. Seen by exactly who could see the roll it settles."""

    roll: str
    character: str  # the initiator
    opponent: str  # the defender who never answered
    outcome: str  # initiator | defender | cancelled
    winner: str | None = None
    initiator_ps: int = 0
    reason: str = ""
    visibility: str = "open"

    def owners(self) -> frozenset[str] | None:
        return _opposed_owners(self.visibility, self.character, self.opponent)


class ActionCancelled(Visible, Event, frozen=True, kw_only=True, tag="action.cancelled"):
    """ACT-2 overruled: a multi-turn action dropped by a storyteller before its last
    turn's roll. Seen by who saw it begin (``ActionBegun`` is ``Visible`` too)."""

    roll: str
    character: str
    turns: int
    started_turn: int
    last_turn: int
    notation: str = ""
    reason: str = ""
    visibility: str = "open"


class TensionRaised(Visible, Event, frozen=True, kw_only=True, tag="action.tension_raised"):
    """ACT-8: NT+1 once the action in which the character surpassed itself is over."""

    character: str
    tension: int
    roll: str
    visibility: str = "open"


class CharacterSacrificed(Visible, Event, frozen=True, kw_only=True, tag="action.sacrificed"):
    """ACT-8: the character dies; its player narrates the death."""

    character: str
    roll: str
    visibility: str = "open"


class ModifierApplied(Event, frozen=True, kw_only=True, tag="action.modifier_applied"):
    """ACT-7. Seen by its character and the storytellers (a modifier is sheet-like)."""

    modifier: str
    character: str
    value: int
    duration: int
    unit: str
    applied_turn: int
    applied_seconds: int
    expires_turn: int | None = None
    expires_seconds: int | None = None
    reason: str = ""

    def owners(self) -> frozenset[str] | None:
        return frozenset((self.character,))


class ActionConfigured(Event, frozen=True, kw_only=True, tag="action.configured"):
    settings: Settings


# ---------------------------------------------------------------- deciders


def _check_player_character(state: GameState, character: str, actor: Actor | None = None) -> None:
    """ACT-1: only player characters roll; checked when a roster is on record. ACT-8: the
    dead roll no more, nor are rolled against by whoever ``actor`` is, if it saw the death."""
    roster = state.session.characters
    if roster and character not in roster:
        raise refuse(f"{character} is not a player character: only they roll (ACT-1)", "ACT-1")
    if character in state.action.dead and (actor is None or _saw_death(state, actor, character)):
        raise refuse(f"{character} died sacrificing itself (ACT-8)", "ACT-8")


def _saw_death(state: GameState, actor: Actor, character: str) -> bool:
    """Whether ``actor`` saw ``character``'s sacrifice: its roll id names the audience.
    One who did not is answered as if the character lived (a refusal would tell
    it of a secret death); the contest then waits, and a storyteller settles it (ACT-12)."""
    scope = id_scope(state.action.dead[character])
    if scope is None or not scope[1] or actor.is_storyteller:
        return True
    return actor.character is not None and audience_key(frozenset((actor.character,))) in scope[1].split("+")


def _difficulty(state: GameState, value: int | str | None) -> tuple[int | None, str]:
    if value is None or isinstance(value, int):
        return value, ""
    if value.strip().isdigit():
        return int(value), ""
    levels = state.action.settings.levels
    for name, number in levels.items():
        if fold_name(name) == fold_name(value):
            return number, name
    table = ", ".join(f"{n} ({v})" for n, v in sorted(levels.items(), key=lambda kv: kv[1]))
    raise refuse(f"unknown difficulty {value!r}: the table names {table} (ACT-11)", "ACT-11", "invalid")


def _threshold(state: GameState, cmd: RollAction, actor: Actor, characteristic: str) -> int:
    sheet = sheet_of(state, cmd.character)
    sheet = sheet if isinstance(sheet, ActionSheet) else None
    if cmd.threshold is not None:
        if sheet is not None and not actor.is_storyteller:
            raise refuse(
                f"{cmd.character}'s sheet is on record: name the characteristic, not a threshold (ACT-3)",
                "ACT-3",
                "invalid",
            )
        threshold = cmd.threshold
    elif sheet is None:
        raise refuse(
            f"no action sheet for {cmd.character}: give the characteristic's threshold (ACT-3)",
            "ACT-3",
            "invalid",
        )
    else:
        found = [v for k, v in sheet.characteristics.items() if fold_name(k) == fold_name(characteristic)]
        if not found:
            raise refuse(
                f"{cmd.character}'s sheet has no characteristic {characteristic!r} (ACT-3)",
                "ACT-3",
                "invalid",
            )
        threshold = found[0]
    if not 1 <= threshold <= state.action.settings.expert_die:
        raise refuse(f"threshold {threshold}+ is not on the dice (ACT-3)", "ACT-3", "invalid")
    return threshold


def _expertise(state: GameState, cmd: RollAction, actor: Actor) -> tuple[bool, str]:
    if cmd.expertise is None or cmd.expertise is False:
        return False, ""
    sheet = sheet_of(state, cmd.character)
    if isinstance(cmd.expertise, str):
        if not isinstance(sheet, ActionSheet):
            return True, cmd.expertise
        for name in sheet.expertises:
            if fold_name(name) == fold_name(cmd.expertise):
                return True, name
        raise refuse(f"{cmd.character} has no Expertise {cmd.expertise!r} (ACT-3)", "ACT-3", "invalid")
    if isinstance(sheet, ActionSheet) and not actor.is_storyteller:
        raise refuse("name the Expertise from your sheet that fits the action (ACT-3)", "ACT-3", "invalid")
    return True, ""


def _group_key(character: str, turn: int, together: str) -> str:
    return f"{character}\x1f{turn}\x1f{together}"


def _check_group(state: GameState, character: str, simultaneous: int, together: str, option: str) -> None:
    """ACT-10 count, and ACT-8: an option on one of the simultaneous actions only."""
    if simultaneous < 1:
        raise refuse(f"{simultaneous} simultaneous actions is not a count (ACT-10)", "ACT-10", "invalid")
    if simultaneous == 1:
        return
    turn, _ = clock(state)
    group = state.action.groups.get(_group_key(character, turn, together))
    if group is None:
        return
    if group.declared != simultaneous:
        raise refuse(
            f"{character} declared {group.declared} simultaneous actions this turn, not "
            f"{simultaneous} (ACT-10)",
            "ACT-10",
            "invalid",
        )
    if group.actions >= group.declared:
        raise refuse(
            f"{character} already attempted its {group.declared} simultaneous actions this turn (ACT-10)",
            "ACT-10",
        )
    if option != "none" and group.option != "none":
        raise refuse(
            f"{character} already used {group.option} on one of these simultaneous actions: "
            "an option goes on one of them only (ACT-8)",
            "ACT-8",
        )


def decide_roll_action(state: GameState, cmd: RollAction, draws: Draws, actor: Actor) -> list[Event]:
    if cmd.resume is not None:
        return _resume_action(state, cmd, draws, actor)
    check_visibility(cmd.visibility, actor)
    _check_player_character(state, cmd.character)
    characteristic, difficulty_value = cmd.characteristic, cmd.difficulty
    if cmd.test is not None:
        if cmd.characteristic is not None or cmd.difficulty is not None:
            raise refuse(
                "give the test notation or the characteristic and difficulty, not both (ACT-13)",
                "ACT-13",
                "invalid",
            )
        characteristic, difficulty_value = parse_test(cmd.test)
    if not characteristic:
        raise refuse("name the characteristic the action uses (ACT-3)", "ACT-3", "invalid")
    difficulty, difficulty_name = _difficulty(state, difficulty_value)
    opposed = cmd.opponent is not None or cmd.against is not None
    if opposed and difficulty is not None:
        raise refuse(
            "a roll against another player character has no difficulty: "
            "more PS wins (ACT-12)",
            "ACT-12",
            "invalid",
        )
    if cmd.opponent is not None and cmd.against is not None:
        raise refuse("a roll either opposes a character or answers a roll (ACT-12)", "ACT-12", "invalid")
    if not opposed:
        if difficulty is None:
            raise refuse("a test needs a difficulty (ACT-11)", "ACT-11", "invalid")
        if difficulty < 1:
            raise refuse(
                f"difficulty {difficulty} needs no roll: the director rules a trivial action "
                "successful (rule_action) (ACT-1)",
                "ACT-1",
            )
    if cmd.opponent is not None:
        if cmd.opponent == cmd.character:
            raise refuse("a character cannot oppose itself (ACT-12)", "ACT-12", "invalid")
        _check_player_character(state, cmd.opponent, actor=actor)
    initiator = None
    if cmd.against is not None:
        initiator = state.action.waiting.get(cmd.against)
        # a player naming a roll that does not call its character is told what it would be
        # told of a roll that does not exist: a secret contest of others stays unknown
        if initiator is None or (initiator.opponent != cmd.character and not actor.is_storyteller):
            raise refuse(
                f"no opposed roll {cmd.against!r} waits for {cmd.character}'s answer (ACT-12)",
                "ACT-12",
                "not_found",
            )
        if initiator.opponent != cmd.character:
            raise refuse(
                f"roll {cmd.against} opposes {initiator.opponent}, not {cmd.character} (ACT-12)",
                "ACT-12",
                "invalid",
            )
    if cmd.bonus < 0 or cmd.malus < 0:
        raise refuse("bonus and malus are counts of D+/-, 0 or more (ACT-5)", "ACT-5", "invalid")
    check_player_bonus(state, actor, cmd.bonus, "D+/-")
    if cmd.turns < 1:
        raise refuse(f"an action lasts at least one turn, not {cmd.turns} (ACT-2)", "ACT-2", "invalid")
    _check_group(state, cmd.character, cmd.simultaneous, cmd.together, cmd.option)
    threshold = _threshold(state, cmd, actor, characteristic)
    expertise, expertise_name = _expertise(state, cmd, actor)
    shown = "" if opposed else notation(characteristic, difficulty_name or str(difficulty))
    if cmd.turns > 1:  # ACT-2: rolled only at its last turn
        # numbered in the audience of the roll it will be: an opposed one's id
        # reaches the opponent at the end, and must count only what the opponent sees
        roll_id = _roll_id(state, _roll_owners(cmd))
        turn, _ = clock(state)
        return [
            ActionBegun(
                roll=roll_id,
                character=cmd.character,
                turns=cmd.turns,
                started_turn=turn,
                last_turn=turn + cmd.turns - 1,
                command=cmd,
                notation=shown,
                visibility=cmd.visibility,
            )
        ]
    owners = _roll_owners(cmd)
    roll_id = _roll_id(state, owners)
    return _roll(state, cmd, _roll_draws(draws, actor, cmd, owners, roll_id), roll_id, characteristic,
                 threshold, expertise, expertise_name, difficulty, difficulty_name, shown, initiator)


def _roll_draws(draws: Draws, actor: Actor, cmd: RollAction, owners: frozenset[str] | None,
                roll_id: str) -> Draws:
    """FAIR-2's stream for the roll ``cmd`` makes: an initiator's sealed roll (ACT-12) draws
    from a stream of its own (``sealed_stream_name``), so nothing in the drawer's other
    streams counts its dice before the reveal, nor does its reveal show their counters."""
    return draws.stream(actor, owners, sealed=roll_id if cmd.opponent is not None else "")


def _roll_owners(cmd: RollAction) -> frozenset[str] | None:
    """``ActionRolled.owners`` of the roll ``cmd`` makes: its draws' stream (FAIR-2)."""
    if cmd.opponent is not None:
        return _opposed_owners(cmd.visibility, cmd.character, cmd.opponent)
    return visible_owners(cmd.visibility, cmd.character)


def _roll_id(state: GameState, owners: frozenset[str] | None) -> str:
    return scoped_id("a", owners, state.action.next_roll, state.action.next_hidden)


def _roll_counted(own: State, roll: str) -> dict[str, Any]:
    public_next, hidden = id_counted(roll, own.next_roll, own.next_hidden)
    return {"next_roll": public_next, "next_hidden": hidden}


def _resume_action(state: GameState, cmd: RollAction, draws: Draws, actor: Actor) -> list[Event]:
    begun = state.action.pending.get(cmd.resume)
    if begun is not None and not sees(actor, begun.owners()):
        begun = None  # answered as if it did not exist
    if begun is None:
        raise refuse(f"no multi-turn action {cmd.resume!r} under way", "ACT-2", "not_found")
    if begun.character != cmd.character:
        raise refuse(f"action {cmd.resume} is {begun.character}'s", "ACT-2", "forbidden")
    turn, _ = clock(state)
    if turn < begun.last_turn:
        raise refuse(
            f"{begun.character}'s action lasts {begun.turns} turns: it is rolled at turn "
            f"{begun.last_turn}, and this is turn {turn} (ACT-2)",
            "ACT-2",
        )
    spec = begun.command  # ``_roll`` reads no ``turns``: the event takes the begun's below
    _check_player_character(state, spec.character)
    characteristic, difficulty_value = spec.characteristic, spec.difficulty
    if spec.test is not None:
        characteristic, difficulty_value = parse_test(spec.test)
    difficulty, difficulty_name = _difficulty(state, difficulty_value)
    threshold = _threshold(state, spec, STORYTELLER, characteristic)
    expertise, expertise_name = _expertise(state, spec, STORYTELLER)
    events = _roll(state, spec, _roll_draws(draws, actor, spec, _roll_owners(spec), begun.roll), begun.roll, characteristic,
                   threshold, expertise,
                   expertise_name, difficulty, difficulty_name, begun.notation, None)
    first = events[0]
    events[0] = replace(first, turns=begun.turns)
    return events


def _roll(state: GameState, cmd: RollAction, draws: Draws, roll_id: str, characteristic: str,
          threshold: int, expertise: bool, expertise_name: str, difficulty: int | None,
          difficulty_name: str, shown: str, initiator: Rolled | None) -> list[Event]:
    settings = state.action.settings
    modifiers = active_modifiers(state, cmd.character)
    net = net_modifier(cmd.bonus, cmd.malus, cmd.cooperation, cmd.option, cmd.simultaneous,
                       [m.value for m in modifiers])  # ACT-5
    if abs(net) > MAX_PLUSMINUS:
        raise refuse(f"a net modifier of {net} is beyond {MAX_PLUSMINUS} D+/- (ACT-6)", "ACT-6", "invalid")
    sides = settings.expert_die if expertise else settings.die
    action_records = tuple(draws.roll(sides) for _ in range(settings.dice))
    pm_records = tuple(draws.roll(6) for _ in range(abs(net)))
    dice = tuple(r.face for r in action_records)
    plusminus = tuple(r.face for r in pm_records)
    outcome = points(dice, threshold, plusminus, net, difficulty, cmd.option == "sacrifice")
    cooperation_success = None
    if cmd.cooperation:
        cooperation_success = bool(outcome.success) or cooperation_succeeded(state, cmd.cooperation)
    turn, _ = clock(state)
    rolled = ActionRolled(
        roll=roll_id,
        character=cmd.character,
        characteristic=characteristic,
        threshold=threshold,
        expertise=expertise,
        expertise_name=expertise_name,
        sides=sides,
        dice=dice,
        plusminus=plusminus,
        signs=tuple(sign(f) for f in plusminus),
        net=net,
        ps_dice=outcome.ps_dice,
        ps=outcome.ps,
        success=outcome.success,
        difficulty=difficulty,
        difficulty_name=difficulty_name,
        notation=shown,
        bonus=cmd.bonus,
        malus=cmd.malus,
        modifiers=tuple(m.id for m in modifiers),
        cooperation=cmd.cooperation,
        cooperation_success=cooperation_success,
        simultaneous=cmd.simultaneous,
        together=cmd.together,
        option=cmd.option,
        opponent=cmd.opponent,
        against=cmd.against,
        turn=turn,
        visibility=cmd.visibility,
        label=cmd.label,
        draws=action_records + pm_records,
    )
    if cmd.opponent is not None:  # ACT-12: sealed; its option waits for the answer
        rolled = replace(rolled, sealed=True)
        return [rolled, OppositionOpened(roll=roll_id, character=cmd.character,
                                         opponent=cmd.opponent, characteristic=characteristic,
                                         label=cmd.label, turn=turn, visibility=cmd.visibility)]
    events: list[Event] = [rolled]
    if initiator is not None:
        events += _reveal(initiator, cmd.against)
        winner = opposed_winner(initiator.character, initiator.ps, cmd.character, outcome.ps)
        hidden = [v for v in (initiator.visibility, cmd.visibility) if v != "open"]
        events.append(
            OppositionSettled(
                initiator_roll=cmd.against,
                defender_roll=roll_id,
                initiator=initiator.character,
                defender=cmd.character,
                initiator_ps=initiator.ps,
                defender_ps=outcome.ps,
                winner=winner,
                visibility="blind" if "blind" in hidden else hidden[0] if hidden else "open",
            )
        )
        events += _sealed_option(state, initiator, cmd.against)
    events += _option_events(state, cmd.option, cmd.character, roll_id, cmd.visibility)
    return events


def _option_events(state: GameState, option: str, character: str, roll_id: str,
                   visibility: str) -> list[Event]:
    if option == "surpass":  # ACT-8
        return [TensionRaised(character=character, tension=tension_of(state, character) + 1,
                              roll=roll_id, visibility=visibility)]
    if option == "sacrifice":
        return [CharacterSacrificed(character=character, roll=roll_id, visibility=visibility)]
    return []


def _sealed(waiting: Rolled) -> ActionRolled | None:
    """The initiator's roll if it was sealed; an unsealed one (an old log's) was seen whole
    and had its option applied when rolled: nothing to reveal or apply at its answer."""
    return waiting.rolled  # set only for a sealed roll (``evolve_action_rolled``)


def _reveal(waiting: Rolled, roll_id: str) -> list[Event]:
    """ACT-12: the sealed initiator's roll shown whole, in the batch of the verdict."""
    rolled = _sealed(waiting)
    if rolled is None:
        return []
    return [ActionRevealed(roll=roll_id, character=rolled.character, opponent=waiting.opponent,
                           rolled=rolled, visibility=rolled.visibility)]


def _sealed_option(state: GameState, waiting: Rolled, roll_id: str) -> list[Event]:
    """ACT-8: the sealed initiator's Surpass or Sacrifice, held back with its roll so the
    defender could not answer knowing it, takes effect once the contest is over."""
    rolled = _sealed(waiting)
    if rolled is None:
        return []
    return _option_events(state, rolled.option, rolled.character, roll_id, rolled.visibility)


def decide_apply_modifier(state: GameState, cmd: ApplyModifier, draws: Draws, actor: Actor) -> list[Event]:
    value, duration, unit = cmd.value, cmd.duration, cmd.unit
    if cmd.notation is not None:
        value, duration, unit = parse_modifier(cmd.notation)
    if value == 0:
        raise refuse("a modifier of 0 changes nothing (ACT-7)", "ACT-7", "invalid")
    if duration < 1:
        raise refuse(f"a temporary modifier lasts at least 1 {unit} (ACT-7)", "ACT-7", "invalid")
    turn, seconds = clock(state)
    expires_turn = turn + duration if unit == "turns" else None
    expires_seconds = seconds + duration * SECONDS[unit] if unit != "turns" else None
    owners = frozenset((cmd.character,))
    return [
        ModifierApplied(
            modifier=scoped_id("m", owners, state.action.next_modifier, state.action.modifier_ids),
            character=cmd.character,
            value=value,
            duration=duration,
            unit=unit,
            applied_turn=turn,
            applied_seconds=seconds,
            expires_turn=expires_turn,
            expires_seconds=expires_seconds,
            reason=cmd.reason,
        )
    ]


def decide_rule_action(state: GameState, cmd: RuleAction, draws: Draws, actor: Actor) -> list[Event]:
    _check_group(state, cmd.character, cmd.simultaneous, cmd.together, "none")
    turn, _ = clock(state)
    return [
        ActionRuled(
            roll=_roll_id(state, None),
            character=cmd.character,
            ruling=cmd.ruling,
            success=cmd.ruling == "trivial",
            description=cmd.description,
            simultaneous=cmd.simultaneous,
            together=cmd.together,
            turn=turn,
        )
    ]


def decide_configure_action(state: GameState, cmd: ConfigureAction, draws: Draws, actor: Actor) -> list[Event]:
    if cmd.dice < 1 or cmd.die < 2 or cmd.expert_die < 2:
        raise refuse("at least one action die of two sides or more (ACT-3)", "ACT-3", "invalid")
    if any(v < 1 for v in cmd.levels.values()):
        raise refuse("a named difficulty needs at least 1 PS (ACT-11)", "ACT-11", "invalid")
    settings = Settings(dice=cmd.dice, die=cmd.die, expert_die=cmd.expert_die, levels=cmd.levels)
    return [ActionConfigured(settings=settings)]


OUTCOMES = ("initiator", "defender", "cancelled")


def _known(state: GameState, roll: str) -> bool:
    """A roll id this session has handed out (storytellers see every audience)."""
    return roll.startswith("a") and id_known(STORYTELLER, roll, state.action.next_roll,
                                              state.action.next_hidden)


def decide_settle_opposition(state: GameState, cmd: SettleOpposition, draws: Draws,
                             actor: Actor) -> list[Event]:
    if cmd.outcome not in OUTCOMES:
        raise refuse(
            f"outcome {cmd.outcome!r} is not one of {', '.join(OUTCOMES)} (ACT-12)",
            "ACT-12",
            "invalid",
        )
    waiting = state.action.waiting.get(cmd.roll)
    if waiting is None:
        if not _known(state, cmd.roll):
            raise refuse(f"no roll {cmd.roll!r} in this session (ACT-12)", "ACT-12", "not_found")
        raise refuse(
            f"roll {cmd.roll} waits for no answer: it was answered or settled "
            "already, or opposed nobody (ACT-12)",
            "ACT-12",
        )
    winner = ruled_winner(cmd.outcome, waiting.character, waiting.opponent)
    ruled = OppositionRuled(roll=cmd.roll, character=waiting.character, opponent=waiting.opponent,
                            outcome=cmd.outcome, winner=winner, initiator_ps=waiting.ps,
                            reason=cmd.reason, visibility=waiting.visibility)
    return [*_reveal(waiting, cmd.roll), ruled, *_sealed_option(state, waiting, cmd.roll)]


def decide_cancel_action(state: GameState, cmd: CancelAction, draws: Draws, actor: Actor) -> list[Event]:
    begun = state.action.pending.get(cmd.roll)
    if begun is None:
        if cmd.roll in state.action.waiting:
            raise refuse(
                f"roll {cmd.roll} is an opposed roll waiting for its answer: settle it "
                "with settle_opposition (ACT-12)",
                "ACT-12",
            )
        if not _known(state, cmd.roll):
            raise refuse(f"no action {cmd.roll!r} in this session (ACT-2)", "ACT-2", "not_found")
        raise refuse(
            f"action {cmd.roll} is not under way: it was rolled or cancelled already, "
            "or lasted one turn (ACT-2)",
            "ACT-2",
        )
    return [ActionCancelled(roll=cmd.roll, character=begun.character, turns=begun.turns,
                            started_turn=begun.started_turn, last_turn=begun.last_turn,
                            notation=begun.notation, reason=cmd.reason,
                            visibility=begun.visibility)]


# ---------------------------------------------------------------- evolvers
# fn(own: State, event, state: GameState) -> State: the action dice's part only; ``state``
# is the whole state before the event, to read (events.game composes them).


def _count_in_group(groups: dict[str, Group], character: str, simultaneous: int, together: str,
                    turn: int, option: str) -> dict[str, Group]:
    """``groups`` with one more action in the group of ``character``'s simultaneous ones
    (a new dict; ``groups`` itself for a roll that is not one of them)."""
    if simultaneous <= 1:
        return groups
    # groups of past turns can take no more actions: dropped to keep the state small
    groups = {k: g for k, g in groups.items() if g.turn >= turn}
    key = _group_key(character, turn, together)
    group = groups.get(key, Group(declared=simultaneous, turn=turn))
    group = replace(group, actions=group.actions + 1,
                    option=option if option != "none" else group.option)
    return {**groups, key: group}


def evolve_action_rolled(own: State, e: ActionRolled, state: GameState) -> State:
    waiting = own.waiting
    if e.opponent is not None:
        waiting = {**waiting, e.roll: Rolled(character=e.character, ps=e.ps, opponent=e.opponent,
                                             visibility=e.visibility,
                                             rolled=e if e.sealed else None)}
    if e.against is not None:
        waiting = _without(waiting, e.against)
    pending = _without(own.pending, e.roll)
    cooperations = own.cooperations
    if e.cooperation:
        cooperations = {**cooperations, e.cooperation: bool(e.cooperation_success)}
    # one roll in five of a night: the counters and groups without a call each when unchanged
    groups = own.groups if e.simultaneous <= 1 else \
        _count_in_group(own.groups, e.character, e.simultaneous, e.together, e.turn, e.option)
    next_roll, next_hidden = id_counted(e.roll, own.next_roll, own.next_hidden)
    return replace(own, waiting=waiting, pending=pending, cooperations=cooperations,
                   groups=groups, next_roll=next_roll, next_hidden=next_hidden)


def evolve_action_begun(own: State, e: ActionBegun, state: GameState) -> State:
    return replace(own, pending={**own.pending, e.roll: e}, **_roll_counted(own, e.roll))


def evolve_action_ruled(own: State, e: ActionRuled, state: GameState) -> State:
    groups = _count_in_group(own.groups, e.character, e.simultaneous, e.together, e.turn, "none")
    return replace(own, groups=groups, **_roll_counted(own, e.roll))


def evolve_tension_raised(own: State, e: TensionRaised, state: GameState) -> State:
    return replace(own, tension={**own.tension, e.character: e.tension})


def evolve_character_sacrificed(own: State, e: CharacterSacrificed, state: GameState) -> State:
    return replace(own, dead={**own.dead, e.character: e.roll})


def evolve_modifier_applied(own: State, e: ModifierApplied, state: GameState) -> State:
    modifier = Modifier(id=e.modifier, character=e.character, value=e.value, unit=e.unit,
                        duration=e.duration, expires_turn=e.expires_turn,
                        expires_seconds=e.expires_seconds, reason=e.reason)
    modifiers = own.modifiers + (modifier,)
    known, new = own.expiry, _expiry((modifier,))
    expiry = _expiry(modifiers) if known is None else (min(known[0], new[0]), min(known[1], new[1]))
    next_modifier, modifier_ids = id_counted(e.modifier, own.next_modifier,
                                             own.modifier_ids)
    return replace(own, modifiers=modifiers, expiry=expiry, next_modifier=next_modifier,
                   modifier_ids=modifier_ids)


def evolve_action_configured(own: State, e: ActionConfigured, state: GameState) -> State:
    return replace(own, settings=e.settings)


def evolve_opposition_opened(own: State, e: OppositionOpened, state: GameState) -> State:
    """Whoever saw the sealed roll has it waiting already; a defender or a bystander learns
    here that the roll waits (its PS unknown to them: 0 stands in) and that its id is taken."""
    if e.roll in own.waiting:
        return own  # its ActionRolled counted the id already
    counted = _roll_counted(own, e.roll)
    waiting = {**own.waiting, e.roll: Rolled(character=e.character, ps=0,
                                             opponent=e.opponent, visibility=e.visibility)}
    return replace(own, waiting=waiting, **counted)


def evolve_opposition_ruled(own: State, e: OppositionRuled, state: GameState) -> State:
    return replace(own, waiting=_without(own.waiting, e.roll))


def evolve_action_cancelled(own: State, e: ActionCancelled, state: GameState) -> State:
    return replace(own, pending=_without(own.pending, e.roll))


def evolve_clock_moved(own: State, e: TurnAdvanced | TimeSkipped, state: GameState) -> State:
    """ACT-7: expired modifiers leave once the game clock moved (TIME-1). Rolls check
    expiry themselves too, so this only keeps the state small."""
    modifiers = own.modifiers
    if not modifiers:
        return own
    turn, seconds = e.turn, e.game_seconds
    expiry = own.expiry
    if expiry is not None and turn <= expiry[0] and seconds < expiry[1]:
        return own  # running() holds for every one of them
    kept = tuple(m for m in modifiers if running(m, turn, seconds))
    return replace(own, modifiers=kept, expiry=_expiry(kept))


def evolve_sheet_amended(own: State, e: SheetAmended, state: GameState) -> State:
    """ACT-8: tension starts at the sheet's value and lives here once it moved."""
    if e.character in own.tension and starting_value_changed(state, e, "tension"):
        return replace(own, tension=_without(own.tension, e.character))
    return own


DECIDERS: dict[type[Command], Decider] = {
    RollAction: decide_roll_action,
    ApplyModifier: decide_apply_modifier,
    RuleAction: decide_rule_action,
    ConfigureAction: decide_configure_action,
    SettleOpposition: decide_settle_opposition,
    CancelAction: decide_cancel_action,
}
EVOLVERS: dict[type[Event], Evolver[State]] = {
    ActionRolled: evolve_action_rolled,
    ActionBegun: evolve_action_begun,
    ActionRuled: evolve_action_ruled,
    OppositionSettled: unchanged,
    TensionRaised: evolve_tension_raised,
    CharacterSacrificed: evolve_character_sacrificed,
    ModifierApplied: evolve_modifier_applied,
    ActionConfigured: evolve_action_configured,
    OppositionRuled: evolve_opposition_ruled,
    ActionCancelled: evolve_action_cancelled,
    OppositionOpened: evolve_opposition_opened,
    ActionRevealed: unchanged,
}
EVENTS = (ActionRolled, ActionBegun, ActionRuled, OppositionSettled, TensionRaised,
          CharacterSacrificed, ModifierApplied, ActionConfigured, OppositionRuled, ActionCancelled,
          OppositionOpened, ActionRevealed)
COMMANDS = (RollAction, ApplyModifier, RuleAction, ConfigureAction, SettleOpposition, CancelAction)
