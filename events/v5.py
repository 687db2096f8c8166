"""Vampire-5th-style dice pools with Hunger (V5-1..9): commands, events, state, deciders.

``score`` is the pure outcome function; the deciders only gather the pool, draw the dice
through ``draws`` and record them (FAIR-1), in the stream of the roller and the roll's
audience (``events.model.stream_name``). Roll ids come from the state, so replay gives the
same ids, and are numbered within their audience ("r4" public, "r2.jack" secret to Jack,
"r1.*" blind: ``events.model.scoped_id``), so no id counts rolls its viewer cannot see.

Also home of the helpers the action-dice module shares: who may see a roll (``Visible``,
``visible_owners``, ``check_visibility``).

Choices where the text is silent (RULES marks some **(choice)**):

- V5-1: a pool of 0 or less is refused; more than 30 dice too (a typo guard). A pool is
  ``attribute`` + ``skill`` read from the sheet (either name may be an attribute or a
  skill, for "other combinations"), Willpower or Humanity alone, or a number of dice.
  A player whose sheet is on record names traits; only a storyteller (or a character
  without a sheet) gives a bare number. ``bonus`` dice are open to players and logged.
- V5-3: the margin of a failed roll is 0; difficulty 0 is allowed (always a success).
- V5-5: Hunger starts at the sheet's value and lives in this state once it moves.
  A storyteller's roll without a character has no Hunger unless ``hunger`` is given.
  ``kind="rouse"`` in ``roll_pool`` is a storyteller's pool of Rouse dice: no Hunger
  dice and no Hunger change (the ``rouse`` command is the Rouse check).
- V5-7: the text's rule by default; ``v5_settings`` switches the chronicle to the
  official rule (a critical with a Hunger 10). The rule used is recorded in each roll.
- V5-9: a Rouse check at Hunger 5 that fails leaves Hunger at 5 (recorded, the
  storyteller decides what follows). Willpower reroll: only the latest pool roll of a
  character, once; dice are indices into the normal dice, so Hunger dice cannot be
  named; the Willpower it costs is not tracked here (no Willpower track in the state).
  Strategies: ``reroll_failures`` (failures, lowest first), ``maximise_criticals``
  (failures then the lowest 6-9s), ``avoid_messy`` (the normal 10s that pair with a
  Hunger 10 under the official rule, then failures; refused under the text's rule,
  where Hunger dice alone make the messy critical).
- Visibility: ``open`` (default) is public; ``secret`` is seen by the roll's character
  and storytellers; ``blind`` (storytellers only) by storytellers alone. Hidden rolls
  redact to nothing at all. A reroll has its roll's visibility. ``HungerSet`` is seen by
  its character only; a Rouse check follows its ``visibility`` (default open, as the
  Hunger dice of an open roll already show Hunger).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Literal

import msgspec
from msgspec.structs import replace

from conteur.events.bounds import Count, CountTuple, Key, Name, Text
from conteur.events.model import (
    Actor,
    Command,
    DrawRecord,
    Draws,
    Event,
    refuse,
    id_counted,
    id_known,
    scoped_id,
    sees,
)
from conteur.events.session import SheetAmended, check_player_bonus, sheet_of, starting_value_changed
from conteur.events.sheets import V5Sheet

if TYPE_CHECKING:
    from conteur.events.game import Decider, Evolver, GameState

Visibility = Literal["open", "secret", "blind"]
PoolKind = Literal["normal", "willpower", "humanity", "rouse"]
MessyRule = Literal["text", "official"]
Strategy = Literal["reroll_failures", "maximise_criticals", "avoid_messy"]

MAX_HUNGER = 5
MAX_POOL = 30  # a guard against typos, far above any sheet (choice)
MAX_REROLL = 3


# ---------------------------------------------------------------- shared helpers


class Visible:
    """Who sees a roll: open rolls are public; a secret roll is
    seen by its roller's character (and storytellers); a blind roll by storytellers
    only. Hidden rolls redact to nothing, so not even the dice count leaks."""

    __slots__ = ()

    def owners(self) -> frozenset[str] | None:
        return visible_owners(self.visibility, self.character)  # type: ignore[attr-defined]

    def redacted(self) -> Event | None:
        return None


def visible_owners(visibility: str, character: str | None) -> frozenset[str] | None:
    """``Visible.owners`` of a roll not made yet: deciders draw in its stream (FAIR-2)."""
    if visibility == "open":
        return None
    if visibility == "secret" and character:
        return frozenset((character,))
    return frozenset()


def check_visibility(visibility: str, actor: Actor) -> None:
    if visibility == "blind" and not actor.is_storyteller:
        raise refuse("only a storyteller may roll blind; choose an open or secret roll", "roles", "forbidden")


# ---------------------------------------------------------------- outcome


class Outcome(msgspec.Struct, frozen=True, kw_only=True):
    successes: int
    margin: int
    success: bool
    critical: bool
    messy: bool
    bestial: bool


def successes_of(faces: list[int] | tuple[int, ...]) -> int:
    """V5-2, V5-4: 6-10 is a success; each pair of 10s counts 4 instead of 2."""
    tens = sum(1 for f in faces if f == 10)
    return sum(1 for f in faces if f >= 6) + 2 * (tens // 2)


def score(
    normal: list[int] | tuple[int, ...],
    hunger: list[int] | tuple[int, ...],
    difficulty: int,
    messy_rule: MessyRule,
) -> Outcome:
    """The outcome of a V5 roll (V5-2..V5-8). The margin of a failed roll is 0 (choice)."""
    faces = tuple(normal) + tuple(hunger)
    successes = successes_of(faces)
    success = successes >= difficulty  # V5-3
    critical = success and sum(1 for f in faces if f == 10) >= 2  # V5-4
    hunger_ten = any(f == 10 for f in hunger)
    if messy_rule == "official":
        messy = critical and hunger_ten  # V5-7, the fifth edition's rule
    else:
        messy = success and hunger_ten  # V5-7, the text's rule
    bestial = not success and any(f == 1 for f in hunger)  # V5-6
    return Outcome(
        successes=successes,
        margin=max(0, successes - difficulty),
        success=success,
        critical=critical,
        messy=messy,
        bestial=bestial,
    )


def rouse_after(before: int, face: int) -> int:
    """V5-9: Hunger after a Rouse check whose d10 showed ``face``: 1-5 raises it by one, to
    at most 5."""
    return min(MAX_HUNGER, before + 1) if face <= 5 else before


def hunger_dice_count(pool: int, hunger: int, kind: str) -> int:
    """V5-5: as many Hunger dice as current Hunger, never more than the pool; none for
    Willpower, Humanity and Rouse rolls."""
    if kind != "normal":
        return 0
    return max(0, min(hunger, pool))


def reroll_choice(
    normal: tuple[int, ...], hunger: tuple[int, ...], strategy: Strategy, messy_rule: MessyRule
) -> tuple[int, ...]:
    """Indices of the normal dice a Willpower reroll strategy picks (V5-9), at most three.

    reroll_failures: failures, lowest first. maximise_criticals: every non-10, failures
    first then the lowest successes. avoid_messy: the normal 10s that make a messy
    critical under the official rule, then failures.
    """
    order = sorted(range(len(normal)), key=lambda i: (normal[i], i))
    failures = [i for i in order if normal[i] < 6]
    if strategy == "reroll_failures":
        picked = failures
    elif strategy == "maximise_criticals":
        picked = failures + [i for i in order if 6 <= normal[i] < 10]
    else:
        outcome = score(normal, hunger, 0, messy_rule)
        if not outcome.messy:
            raise refuse("this roll is not a messy critical: nothing to avoid (V5-7)", "V5-7", "invalid")
        if messy_rule == "text" or sum(1 for f in hunger if f == 10) >= 2:
            raise refuse(
                "this messy critical comes from the Hunger dice alone, which Willpower "
                "cannot reroll (V5-7, V5-9)",
                "V5-9",
            )
        picked = [i for i in order if normal[i] == 10] + failures
    return tuple(sorted(picked[:MAX_REROLL]))


# ---------------------------------------------------------------- state


class Roll(msgspec.Struct, frozen=True, kw_only=True, gc=False):
    id: str
    character: str | None
    normal: tuple[int, ...]
    hunger: tuple[int, ...]
    difficulty: int
    visibility: str
    rerolled: bool = False


class State(msgspec.Struct, frozen=True, kw_only=True):
    hunger: dict[str, int] = {}  # current Hunger once it moved from the sheet's
    # the latest pool roll of each character (see ``_roll_key``): only it may be rerolled
    # (choice), which keeps the state small over a long session
    rolls: dict[str, Roll] = {}
    next_roll: int = 1  # the next public roll number ("r4")
    next_hidden: dict[str, int] = {}  # the next number of each other audience ("r2.jack")
    messy_rule: MessyRule = "text"  # V5-7 chronicle option


def initial() -> State:
    return State()


def hunger_of(state: GameState, character: str | None) -> int:
    """Current Hunger: the state's once changed, else the sheet's (V5-5); 0 for no character
    or one without a V5 sheet."""
    if character in state.v5.hunger:
        return state.v5.hunger[character]
    sheet = sheet_of(state, character)
    return sheet.hunger if isinstance(sheet, V5Sheet) else 0


# ---------------------------------------------------------------- commands


class RollPool(Command, frozen=True, kw_only=True, tag="roll_pool"):
    """Roll a pool (V5-1). The pool is ``pool`` dice, or resolved from the sheet:
    ``attribute`` + ``skill`` (each name looked up among attributes then skills), or
    Willpower / Humanity for those kinds. ``bonus`` adds dice (a negative value removes).
    ``hunger`` overrides Hunger for a storyteller's roll without a character."""

    character: Key | None = None
    pool: Count | None = None
    attribute: Name | None = None
    skill: Name | None = None
    bonus: Count = 0
    difficulty: Count = 1
    kind: PoolKind = "normal"
    visibility: Visibility = "open"
    hunger: Count | None = None
    label: Name = ""


class RouseCheck(Command, frozen=True, kw_only=True, tag="rouse"):
    character: Key
    visibility: Visibility = "open"
    label: Name = ""


class WillpowerReroll(Command, frozen=True, kw_only=True, tag="willpower_reroll"):
    """Reroll up to three normal dice of roll ``roll`` (V5-9): ``dice`` are indices into
    the roll's normal dice (0-based), or ``strategy`` picks them."""

    roll: Key
    character: Key | None = None
    dice: CountTuple = ()
    strategy: Strategy | None = None


class SetHunger(Command, frozen=True, kw_only=True, tag="set_hunger"):
    storyteller_only = True
    play = False

    character: Key
    hunger: Count
    reason: Text = ""


class ConfigureV5(Command, frozen=True, kw_only=True, tag="v5_settings"):
    """Chronicle options of the V5 ruleset (V5-7)."""

    storyteller_only = True
    play = False

    messy_rule: MessyRule = "text"


# ---------------------------------------------------------------- events


class PoolRolled(Visible, Event, frozen=True, kw_only=True, tag="v5.pool_rolled"):
    roll: str
    character: str | None
    kind: str
    pool: int
    difficulty: int
    normal: tuple[int, ...]
    hunger: tuple[int, ...]
    successes: int
    margin: int
    success: bool
    critical: bool
    messy: bool
    bestial: bool
    messy_rule: str = "text"
    source: str = ""  # how the pool was named: "Dexterity 3 + Stealth 2", "declared 5"
    visibility: str = "open"
    label: str = ""
    draws: tuple[DrawRecord, ...] = ()
    bonus: int = 0  # the declared bonus dice, already in ``pool`` (every bonus is logged)
    # the Hunger the roll used (V5-5), so the count of Hunger dice can be checked again;
    # None in rolls recorded before it
    hunger_level: int | None = None


class RouseChecked(Visible, Event, frozen=True, kw_only=True, tag="v5.rouse_checked"):
    roll: str
    character: str
    face: int
    hunger_before: int
    hunger_after: int
    visibility: str = "open"
    label: str = ""
    draws: tuple[DrawRecord, ...] = ()

    @property
    def raised(self) -> bool:
        return self.face <= 5


class WillpowerRerolled(Visible, Event, frozen=True, kw_only=True, tag="v5.willpower_rerolled"):
    """A reroll appended after its roll; the first roll's event is never rewritten."""

    roll: str
    character: str | None
    dice: tuple[int, ...]  # indices into the normal dice
    before: tuple[int, ...]  # their faces before
    after: tuple[int, ...]  # their new faces
    normal: tuple[int, ...]  # the whole normal dice after the reroll
    hunger: tuple[int, ...]
    difficulty: int
    successes: int
    margin: int
    success: bool
    critical: bool
    messy: bool
    bestial: bool
    strategy: str = ""
    messy_rule: str = "text"
    visibility: str = "open"
    draws: tuple[DrawRecord, ...] = ()


class HungerSet(Event, frozen=True, kw_only=True, tag="v5.hunger_set"):
    """Hunger is on the sheet: its character and the storytellers see it."""

    character: str
    hunger: int
    previous: int
    reason: str = ""

    def owners(self) -> frozenset[str] | None:
        return frozenset((self.character,))


class V5Configured(Event, frozen=True, kw_only=True, tag="v5.configured"):
    messy_rule: str


# ---------------------------------------------------------------- deciders


def _next_id(state: GameState, owners: frozenset[str] | None) -> str:
    return scoped_id("r", owners, state.v5.next_roll, state.v5.next_hidden)


def _trait(sheet: V5Sheet, name: str, character: str | None) -> int:
    for table in (sheet.attributes, sheet.skills):
        for key, value in table.items():
            if key.casefold() == name.casefold():
                return value
    raise refuse(f"{character}'s sheet has no trait {name!r} (V5-1)", "V5-1", "invalid")


def _resolve_pool(state: GameState, cmd: RollPool, actor: Actor) -> tuple[int, str]:
    sheet = sheet_of(state, cmd.character)
    sheet = sheet if isinstance(sheet, V5Sheet) else None
    if cmd.kind != "normal" and cmd.attribute is not None:
        # otherwise "willpower" would strip the Hunger dice from any attribute roll
        raise refuse(
            f"a {cmd.kind} roll has no attribute or skill: it is the {cmd.kind} pool alone "
            "(V5-1, V5-5)",
            "V5-5",
            "invalid",
        )
    if cmd.kind == "rouse" and not actor.is_storyteller:
        raise refuse(
            "a player's Rouse check is the rouse command; only a storyteller rolls a pool "
            "of Rouse dice (V5-9)",
            "V5-9",
            "forbidden",
        )
    if cmd.pool is not None:
        if sheet is not None and not actor.is_storyteller:
            raise refuse(
                f"{cmd.character}'s sheet is on record: name the attribute and skill "
                "(or Willpower, Humanity) instead of a number of dice (V5-1)",
                "V5-1",
                "invalid",
            )
        pool, source = cmd.pool, f"declared {cmd.pool}"
    elif sheet is None:
        raise refuse(
            f"no V5 sheet for {cmd.character or 'this roll'}: give the pool as a number "
            "of dice (V5-1)",
            "V5-1",
            "invalid",
        )
    elif cmd.attribute is not None:
        pool = _trait(sheet, cmd.attribute, cmd.character)
        source = f"{cmd.attribute} {pool}"
        if cmd.skill is not None:
            skill = _trait(sheet, cmd.skill, cmd.character)
            pool += skill
            source += f" + {cmd.skill} {skill}"
    elif cmd.kind in ("willpower", "humanity"):
        pool = getattr(sheet, cmd.kind)
        source = f"{cmd.kind.capitalize()} {pool}"
    else:
        raise refuse("name the pool: an attribute and a skill, or a number of dice (V5-1)", "V5-1", "invalid")
    if cmd.bonus:
        pool += cmd.bonus
        source += f" {cmd.bonus:+d}"
    return pool, source


def decide_roll_pool(state: GameState, cmd: RollPool, draws: Draws, actor: Actor) -> list[Event]:
    check_visibility(cmd.visibility, actor)
    if cmd.character is None and not actor.is_storyteller:
        raise refuse("name the character who rolls", "V5-1", "invalid")
    if cmd.hunger is not None and not actor.is_storyteller:
        raise refuse("Hunger comes from your sheet; only a storyteller sets it (V5-9)", "V5-9", "forbidden")
    check_player_bonus(state, actor, cmd.bonus, "dice")
    pool, source = _resolve_pool(state, cmd, actor)
    if pool <= 0:  # V5-1 (choice)
        raise refuse(f"a pool of {pool} dice cannot be rolled (V5-1)", "V5-1")
    if pool > MAX_POOL:
        raise refuse(f"a pool of {pool} dice is above {MAX_POOL} (V5-1)", "V5-1", "invalid")
    if cmd.difficulty < 0:
        raise refuse(f"difficulty {cmd.difficulty} is below 0 (V5-3)", "V5-3", "invalid")
    if cmd.hunger is not None:
        current = cmd.hunger
    else:
        current = hunger_of(state, cmd.character)
    if not 0 <= current <= MAX_HUNGER:
        raise refuse(f"Hunger {current} is not in 0-5 (V5-5)", "V5-5", "invalid")
    n_hunger = hunger_dice_count(pool, current, cmd.kind)
    owners = visible_owners(cmd.visibility, cmd.character)
    draws = draws.stream(actor, owners)
    records = tuple(draws.roll(10) for _ in range(pool))
    faces = tuple(r.face for r in records)
    normal, hunger = faces[: pool - n_hunger], faces[pool - n_hunger :]
    rule = state.v5.messy_rule
    outcome = score(normal, hunger, cmd.difficulty, rule)
    return [
        PoolRolled(
            roll=_next_id(state, owners),
            character=cmd.character,
            kind=cmd.kind,
            pool=pool,
            difficulty=cmd.difficulty,
            normal=normal,
            hunger=hunger,
            messy_rule=rule,
            source=source,
            bonus=cmd.bonus,
            hunger_level=current,
            visibility=cmd.visibility,
            label=cmd.label,
            draws=records,
            **msgspec.structs.asdict(outcome),
        )
    ]


def decide_rouse_check(state: GameState, cmd: RouseCheck, draws: Draws, actor: Actor) -> list[Event]:
    check_visibility(cmd.visibility, actor)
    before = hunger_of(state, cmd.character)
    owners = visible_owners(cmd.visibility, cmd.character)
    record = draws.stream(actor, owners).roll(10)  # V5-9: one d10, no Hunger dice
    after = rouse_after(before, record.face)
    return [
        RouseChecked(
            roll=_next_id(state, owners),
            character=cmd.character,
            face=record.face,
            hunger_before=before,
            hunger_after=after,
            visibility=cmd.visibility,
            label=cmd.label,
            draws=(record,),
        )
    ]


def decide_willpower_reroll(
    state: GameState, cmd: WillpowerReroll, draws: Draws, actor: Actor
) -> list[Event]:
    roll = next((r for r in state.v5.rolls.values() if r.id == cmd.roll), None)
    if roll is not None and not sees(actor, visible_owners(roll.visibility, roll.character)):
        # a player neither rerolls nor learns anything of a roll it may not see: the
        # answer is the one for a roll that never was
        roll = None
    if roll is None:
        if id_known(actor, cmd.roll, state.v5.next_roll, state.v5.next_hidden):
            raise refuse(
                f"roll {cmd.roll} is no longer its character's latest pool roll: Willpower "
                "rerolls the roll just made (V5-9)",
                "V5-9",
            )
        raise refuse(f"no pool roll {cmd.roll!r} to reroll", "V5-9", "not_found")
    if not actor.is_storyteller and roll.character != actor.character:
        raise refuse(f"roll {cmd.roll} is not {actor.character}'s to reroll", "V5-9", "forbidden")
    if cmd.character is not None and cmd.character != roll.character:
        raise refuse(f"roll {cmd.roll} was made by {roll.character}", "V5-9", "invalid")
    if roll.rerolled:
        raise refuse(f"roll {cmd.roll} was already rerolled with Willpower: once per roll (V5-9)", "V5-9")
    rule = state.v5.messy_rule
    if (cmd.strategy is None) == (not cmd.dice):
        raise refuse("give either the dice to reroll or a strategy (V5-9)", "V5-9", "invalid")
    if cmd.strategy is not None:
        dice = reroll_choice(roll.normal, roll.hunger, cmd.strategy, rule)
    else:
        dice = tuple(sorted(set(cmd.dice)))
        if len(dice) != len(cmd.dice):
            raise refuse("each die is rerolled at most once (V5-9)", "V5-9", "invalid")
    if not dice:
        raise refuse(f"strategy {cmd.strategy} finds no normal die to reroll (V5-9)", "V5-9")
    if len(dice) > MAX_REROLL:
        raise refuse(f"Willpower rerolls at most three dice, not {len(dice)} (V5-9)", "V5-9")
    for i in dice:
        if not 0 <= i < len(roll.normal):
            raise refuse(
                f"die {i} is not one of the {len(roll.normal)} normal dice; Hunger dice "
                "are never rerolled (V5-9)",
                "V5-9",
            )
    draws = draws.stream(actor, visible_owners(roll.visibility, roll.character))
    records = tuple(draws.roll(10) for _ in dice)
    normal = list(roll.normal)
    for i, r in zip(dice, records):
        normal[i] = r.face
    outcome = score(normal, roll.hunger, roll.difficulty, rule)
    return [
        WillpowerRerolled(
            roll=cmd.roll,
            character=roll.character,
            dice=dice,
            before=tuple(roll.normal[i] for i in dice),
            after=tuple(r.face for r in records),
            normal=tuple(normal),
            hunger=roll.hunger,
            difficulty=roll.difficulty,
            strategy=cmd.strategy or "",
            messy_rule=rule,
            visibility=roll.visibility,
            draws=records,
            **msgspec.structs.asdict(outcome),
        )
    ]


def decide_set_hunger(state: GameState, cmd: SetHunger, draws: Draws, actor: Actor) -> list[Event]:
    if not 0 <= cmd.hunger <= MAX_HUNGER:
        raise refuse(f"Hunger {cmd.hunger} is not in 0-5 (V5-5)", "V5-5", "invalid")
    previous = hunger_of(state, cmd.character)
    return [
        HungerSet(character=cmd.character, hunger=cmd.hunger, previous=previous, reason=cmd.reason)
    ]


def decide_configure_v5(state: GameState, cmd: ConfigureV5, draws: Draws, actor: Actor) -> list[Event]:
    return [V5Configured(messy_rule=cmd.messy_rule)]


# ---------------------------------------------------------------- evolvers
# fn(own: State, event, state: GameState) -> State: V5's part only; ``state`` is the whole
# state before the event, to read (events.game composes them).


def _roll_key(character: str | None, visibility: str) -> str:
    """Blind rolls are kept apart: a storyteller's blind roll for a character must not
    displace, and so reveal itself through, that character's own latest roll."""
    return f"blind:{character or ''}" if visibility == "blind" else character or ""


def evolve_pool_rolled(own: State, e: PoolRolled, state: GameState) -> State:
    roll = Roll(
        id=e.roll,
        character=e.character,
        normal=e.normal,
        hunger=e.hunger,
        difficulty=e.difficulty,
        visibility=e.visibility,
    )
    rolls = {**own.rolls, _roll_key(e.character, e.visibility): roll}
    # ids from before audiences ("r7" for any roll) count as public ones, so new public ids
    # never repeat them (the counters as keywords: a dict to unpack cost a replay 3%)
    next_roll, next_hidden = id_counted(e.roll, own.next_roll, own.next_hidden)
    return replace(own, rolls=rolls, next_roll=next_roll, next_hidden=next_hidden)


def evolve_rouse_checked(own: State, e: RouseChecked, state: GameState) -> State:
    next_roll, next_hidden = id_counted(e.roll, own.next_roll, own.next_hidden)
    return replace(own, hunger={**own.hunger, e.character: e.hunger_after}, next_roll=next_roll,
                   next_hidden=next_hidden)


def evolve_willpower_rerolled(own: State, e: WillpowerRerolled, state: GameState) -> State:
    key = _roll_key(e.character, e.visibility)
    roll = own.rolls.get(key)
    if roll is None or roll.id != e.roll:  # a viewer's partial fold (events.views)
        return own
    return replace(own, rolls={**own.rolls, key: replace(roll, normal=e.normal, rerolled=True)})


def evolve_hunger_set(own: State, e: HungerSet, state: GameState) -> State:
    return replace(own, hunger={**own.hunger, e.character: e.hunger})


def evolve_v5_configured(own: State, e: V5Configured, state: GameState) -> State:
    return replace(own, messy_rule=e.messy_rule)


def evolve_sheet_amended(own: State, e: SheetAmended, state: GameState) -> State:
    """V5-5: Hunger starts at the sheet's value and lives here once it moved."""
    if e.character in own.hunger and starting_value_changed(state, e, "hunger"):
        return replace(own, hunger={k: v for k, v in own.hunger.items() if k != e.character})
    return own


DECIDERS: dict[type[Command], Decider] = {
    RollPool: decide_roll_pool,
    RouseCheck: decide_rouse_check,
    WillpowerReroll: decide_willpower_reroll,
    SetHunger: decide_set_hunger,
    ConfigureV5: decide_configure_v5,
}
EVOLVERS: dict[type[Event], Evolver[State]] = {
    PoolRolled: evolve_pool_rolled,
    RouseChecked: evolve_rouse_checked,
    WillpowerRerolled: evolve_willpower_rerolled,
    HungerSet: evolve_hunger_set,
    V5Configured: evolve_v5_configured,
}
EVENTS = (PoolRolled, RouseChecked, WillpowerRerolled, HungerSet, V5Configured)
COMMANDS = (RollPool, RouseCheck, WillpowerReroll, SetHunger, ConfigureV5)
