"""The session clock: roster, scenes, Time Out, out of game, turns and time skips.

Units of play (TIME-2): a chronicle holds scenarios, a scenario sessions; this module
decides one session (one evening), its scenes and its turns. What must outlive the
session (MET-13 tie debts, ``met.carry_over``) comes back in the next session's
``OpenSession.carried``.

The game clock (TIME-1, TIME-3) only moves through events: ``next_turn`` adds one turn
of ``turn_seconds``; ``skip_time`` adds seconds and the turns they make. Rulesets with
timed effects compare their expiry with ``clock(state)``; those that drop what ran out
when the clock moves fold ``TurnAdvanced`` and ``TimeSkipped`` too, as ``events.game``
composes them.

The options of ``OpenSession`` are kept here for every ruleset (``met_rules.MetOptions``,
named after the first of them: Celerity's actions, MET-16's timeout, the bonus bound).
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING, Iterable, Literal

import msgspec
from msgspec.structs import replace

from conteur.events.bounds import Count, Key, Name, Seconds, Text
from conteur.events.met_rules import MetOptions, TieDebt
from conteur.events.model import Actor, Command, Draws, Event, refuse
from conteur.events.sheets import AnySheet, MetSheet

if TYPE_CHECKING:
    from conteur.events.game import Decider, Evolver, GameState

STORYTELLER_SIDE = "storyteller"  # the side a storyteller plays in static/simple/complex tests


# ---------------------------------------------------------------- state


class Carried(msgspec.Struct, frozen=True, kw_only=True, gc=False):
    """What a session inherits from the previous session of its chronicle."""

    tie_debts: tuple[TieDebt, ...] = ()


class Character(msgspec.Struct, frozen=True, kw_only=True, gc=False):
    id: str
    name: str
    sheet: AnySheet | None = None
    scene: str | None = None
    out_of_game: bool = False  # TIME-6
    no_sheet: bool = False  # MET-6: the player has no sheet at hand, loses ties
    busy_until: int = 0  # TIME-4: turn at which a multi-turn action ends
    actions_turn: int = -1  # the turn ``actions_used`` counts for
    actions_used: int = 0


class Scene(msgspec.Struct, frozen=True, kw_only=True, gc=False):
    id: str
    name: str
    open: bool = True
    frozen: bool = False  # TIME-5, scope "scene"
    paced: bool = False  # turn by turn (combat): the TIME-4 action budget applies


class State(msgspec.Struct, frozen=True, kw_only=True, gc=False):
    name: str = ""
    chronicle: str = ""  # TIME-2
    scenario: str = ""
    status: Literal["pending", "open", "closed"] = "pending"
    turn_seconds: int = 4  # TIME-3
    options: MetOptions = MetOptions()
    characters: dict[str, Character] = {}
    scenes: dict[str, Scene] = {}
    frozen: bool = False  # TIME-5, scope "session"
    venue_frozen: bool = False  # TIME-5, scope "venue": every session the server serves
    turn: int = 0
    game_seconds: int = 0
    seed_commitment: str = ""
    seed: str = ""


def initial() -> State:
    return State()


# ---------------------------------------------------------------- helpers


def check_turn_length(turn_seconds: float) -> None:
    """TIME-3: a turn lasts more than 0 seconds."""
    if turn_seconds <= 0:
        raise refuse("a turn lasts more than 0 seconds (TIME-3)", "TIME-3", "invalid")


def turns_for(seconds: float, turn_seconds: float) -> int:
    """TIME-3: a duration of more than 0 seconds lasts ceil(seconds / turn length) turns
    (15 s of 4 s turns -> 4); a skip of 0 seconds or less is refused first (TIME-1)."""
    check_turn_length(turn_seconds)
    return math.ceil(seconds / turn_seconds)


def actions_per_turn(sheet: AnySheet | None, options: MetOptions = MetOptions()) -> int:
    """TIME-4: one action per turn, plus one per Celerity level when the option is on."""
    celerity = sheet.celerity if isinstance(sheet, MetSheet) else 0
    return 1 + (max(0, celerity) if options.celerity_extra_actions else 0)


def clock(state: GameState) -> tuple[int, int]:
    """(turn, game_seconds): the game clock (TIME-1) that timed effects compare with."""
    return state.session.turn, state.session.game_seconds


def sheet_of(state: GameState, character_id: str | None) -> AnySheet | None:
    """The sheet of a character of the roster, or None (no such character, no sheet)."""
    found = state.session.characters.get(character_id)  # None is no character's id
    return found.sheet if found is not None else None


def character(session: State, character_id: str) -> Character:
    found = session.characters.get(character_id)
    if found is None:
        raise refuse(f"no character {character_id!r} in this session", "TIME-2", "not_found")
    return found


def _scene(session: State, scene_id: str) -> Scene:
    found = session.scenes.get(scene_id)
    if found is None:
        raise refuse(f"no scene {scene_id!r}", "TIME-2", "not_found")
    return found


def check_not_frozen(session: State, character_id: str) -> None:
    """TIME-5: refused when the session or the character's scene is in Time Out."""
    if session.venue_frozen:
        raise refuse(
            "Time Out for the whole venue: every session is frozen until a storyteller resumes (TIME-5)",
            "TIME-5",
            "frozen",
        )
    if session.frozen:
        raise refuse(
            "Time Out: the session is frozen until a storyteller resumes (TIME-5)",
            "TIME-5",
            "frozen",
        )
    found = session.characters.get(character_id)
    if found is not None and found.scene is not None:
        scene = session.scenes.get(found.scene)
        if scene is not None and scene.frozen:
            raise refuse(
                f"Time Out: scene {scene.name!r} is frozen until a storyteller resumes (TIME-5)",
                "TIME-5",
                "frozen",
            )


def check_in_game(session: State, character_id: str, *, target: bool = False) -> None:
    """TIME-6: an out-of-game character neither acts nor is the target of a challenge."""
    found = session.characters.get(character_id)
    if found is not None and found.out_of_game:
        who = f"{found.name} is" if target else "you are"
        raise refuse(
            f"{who} out of game and interact{'s' if target else ''} with no other player (TIME-6)",
            "TIME-6",
            "out_of_game",
        )


def check_open(state: GameState, command: Command) -> None:
    """TIME-2, FAIR-2: a closed session has revealed its seed, so any dice rolled after it
    could be searched for offline; nothing changes it any more, for any role (storytellers
    included). Reading (events, state, exports, review, verify) goes on."""
    if state.session.status == "closed":
        tag = command.__struct_config__.tag
        raise refuse(
            f"the session is already closed (TIME-2): {tag} is refused, a closed session changes no "
            "more (its draw seed is public); play on in a new session",
            "TIME-2",
        )


def check_player_bonus(state: GameState, actor: Actor, bonus: int, what: str) -> None:
    """A player's declared bonus is bounded by the session option ``max_player_bonus``
    (default 3, the largest bonus the action text shows, ACT-5; V5-1 has the storyteller
    name the pool, so extra dice beyond that are the storyteller's to give). Storytellers
    are unbounded; the bonus is logged in the roll either way."""
    limit = state.session.options.max_player_bonus
    if bonus > limit and not actor.is_storyteller:
        raise refuse(
            f"a bonus of {bonus} {what} is above this session's max_player_bonus of {limit}: "
            "ask a storyteller for more",
            "max_player_bonus",
        )


def check_playable(state: GameState, command: Command, actor: Actor) -> None:
    """TIME-5 / TIME-6: raise RuleViolation(code="frozen" | "out_of_game") if refused."""
    session: State = state.session  # a closed one was refused first (check_open)
    if actor.character is None:
        return
    check_not_frozen(session, actor.character)
    check_in_game(session, actor.character)


# ---------------------------------------------------------------- commands


class OpenSession(Command, frozen=True, kw_only=True, tag="open_session"):
    storyteller_only = True
    play = False
    name: Name = ""
    chronicle: Name = ""  # TIME-2: the series of scenarios this session belongs to
    scenario: Name = ""
    turn_seconds: Seconds = 4
    bomb: bool = False
    retest_cancel: bool = False
    accept_timeout: Seconds = 60
    celerity_extra_actions: bool = True
    max_player_bonus: Count = 3  # players declare at most this bonus; storytellers any
    seed_commitment: Name = ""  # FAIR-2, filled by the server
    carried: Carried = Carried()


class CloseSession(Command, frozen=True, kw_only=True, tag="close_session"):
    storyteller_only = True
    play = False
    seed: Name = ""  # FAIR-2, filled by the server, revealed in SessionClosed


class AddCharacter(Command, frozen=True, kw_only=True, tag="add_character"):
    storyteller_only = True
    play = False
    character: Key
    name: Name
    sheet: AnySheet | None = None


class OpenScene(Command, frozen=True, kw_only=True, tag="open_scene"):
    storyteller_only = True
    play = False
    scene: Key
    name: Name = ""


class CloseScene(Command, frozen=True, kw_only=True, tag="close_scene"):
    storyteller_only = True
    play = False
    scene: Key


class JoinScene(Command, frozen=True, kw_only=True, tag="join_scene"):
    character: Key
    scene: Key


class LeaveScene(Command, frozen=True, kw_only=True, tag="leave_scene"):
    character: Key


Scope = Literal["scene", "session", "venue"]


class Freeze(Command, frozen=True, kw_only=True, tag="freeze"):
    """TIME-5. Scope ``venue`` is decided in every open session the server serves, one
    ``freeze`` each (``desk.venue_wide``; the server's ``venue`` module): an emergency stops
    every room at once, and its resume ends it everywhere without ending a session's or a
    scene's own Time Out."""

    storyteller_only = True
    play = False
    scope: Scope = "session"
    scene: Key | None = None


class Resume(Command, frozen=True, kw_only=True, tag="resume"):
    storyteller_only = True
    play = False
    scope: Scope = "session"
    scene: Key | None = None


class OutOfGame(Command, frozen=True, kw_only=True, tag="out_of_game"):
    play = False  # a player may ask for a pause even during a Time Out
    character: Key
    reason: Text = ""


class BackInGame(Command, frozen=True, kw_only=True, tag="back_in_game"):
    play = False
    character: Key


class NextTurn(Command, frozen=True, kw_only=True, tag="next_turn"):
    storyteller_only = True
    play = False
    scene: Key | None = None  # the scene that plays turn by turn from now on (TIME-4)


class SkipTime(Command, frozen=True, kw_only=True, tag="skip_time"):
    storyteller_only = True
    play = False
    seconds: Seconds
    note: Text = ""  # "an hour later..."


class SetTurnLength(Command, frozen=True, kw_only=True, tag="set_turn_length"):
    storyteller_only = True
    play = False
    seconds: Seconds


class MarkNoSheet(Command, frozen=True, kw_only=True, tag="mark_no_sheet"):
    storyteller_only = True
    play = False
    character: Key
    no_sheet: bool = True


class TakeAction(Command, frozen=True, kw_only=True, tag="take_action"):
    """TIME-4: an action that costs one action, or lasts several (hacking 5-20...)."""

    character: Key
    description: Text = ""
    actions: Count = 1  # how many actions it takes
    celerity_shortens: bool = True  # False: a duration Celerity cannot shorten


class AmendSheet(Command, frozen=True, kw_only=True, tag="amend_sheet"):
    """A storyteller changes a character's sheet in play (a wound, a power, a lost trait).

    ``sheet`` is the whole new sheet, of the kind the character already has; ``reason`` is
    for the storytellers' review ("wounded: -2 Physical").
    """

    storyteller_only = True
    play = False
    character: Key
    sheet: AnySheet
    reason: Text = ""


# ---------------------------------------------------------------- events


class SessionOpened(Event, frozen=True, kw_only=True, tag="session.opened"):
    name: str = ""
    chronicle: str = ""  # TIME-2: the series of scenarios this session belongs to
    scenario: str = ""
    turn_seconds: int = 4
    options: MetOptions = MetOptions()
    seed_commitment: str = ""
    carried: Carried = Carried()


class SessionClosed(Event, frozen=True, kw_only=True, tag="session.closed"):
    seed: str = ""


class CharacterAdded(Event, frozen=True, kw_only=True, tag="session.character_added"):
    """Secret: the sheet is for its character and the storytellers; others learn the name."""

    character: str
    name: str
    sheet: AnySheet | None = None

    def owners(self) -> frozenset[str] | None:
        return frozenset((self.character,))

    def redacted(self) -> Event | None:
        return replace(self, sheet=None)


class SceneOpened(Event, frozen=True, kw_only=True, tag="session.scene_opened"):
    scene: str
    name: str = ""


class SceneClosed(Event, frozen=True, kw_only=True, tag="session.scene_closed"):
    scene: str


class SceneJoined(Event, frozen=True, kw_only=True, tag="session.scene_joined"):
    character: str
    scene: str


class SceneLeft(Event, frozen=True, kw_only=True, tag="session.scene_left"):
    character: str
    scene: str


class TimeOutCalled(Event, frozen=True, kw_only=True, tag="session.time_out_called"):
    scope: Scope = "session"
    scene: str | None = None


class TimeOutEnded(Event, frozen=True, kw_only=True, tag="session.time_out_ended"):
    scope: Scope = "session"
    scene: str | None = None


class WentOutOfGame(Event, frozen=True, kw_only=True, tag="session.went_out_of_game"):
    character: str
    reason: str = ""


class CameBackInGame(Event, frozen=True, kw_only=True, tag="session.came_back_in_game"):
    character: str


class TurnAdvanced(Event, frozen=True, kw_only=True, tag="session.turn_advanced"):
    turn: int  # the new turn number
    game_seconds: int  # the game clock after it
    scene: str | None = None


class TimeSkipped(Event, frozen=True, kw_only=True, tag="session.time_skipped"):
    seconds: int
    turn: int
    game_seconds: int
    note: str = ""


class TurnLengthSet(Event, frozen=True, kw_only=True, tag="session.turn_length_set"):
    seconds: int


class NoSheetMarked(Event, frozen=True, kw_only=True, tag="session.no_sheet_marked"):
    character: str
    no_sheet: bool = True


class ActionTaken(Event, frozen=True, kw_only=True, tag="session.action_taken"):
    character: str
    turn: int
    description: str = ""
    ends_turn: int = 0  # the turn it completes; after that the character is free again


class SheetAmended(Event, frozen=True, kw_only=True, tag="session.sheet_amended"):
    """Secret like ``CharacterAdded``: others learn only that this character's sheet was
    amended. The reason goes too: "lost two Physical to a stake" tells the sheet."""

    character: str
    sheet: AnySheet | None = None  # None only in the redacted form
    reason: str = ""

    def owners(self) -> frozenset[str] | None:
        return frozenset((self.character,))

    def redacted(self) -> Event | None:
        return replace(self, sheet=None, reason="")


# ---------------------------------------------------------------- deciders


def decide_open_session(state: GameState, cmd: OpenSession, draws: Draws, actor: Actor) -> list[Event]:
    if state.session.status != "pending":
        # a closed session revealed its seed (FAIR-2): the next evening is a new session
        raise refuse(f"the session is already {state.session.status} (TIME-2)", "TIME-2")
    check_turn_length(cmd.turn_seconds)  # TIME-3
    options = MetOptions(
        bomb=cmd.bomb,
        retest_cancel=cmd.retest_cancel,
        accept_timeout=cmd.accept_timeout,
        celerity_extra_actions=cmd.celerity_extra_actions,
        max_player_bonus=cmd.max_player_bonus,
    )
    if cmd.max_player_bonus < 0:
        raise refuse("max_player_bonus counts dice, 0 or more", "max_player_bonus", "invalid")
    return [
        SessionOpened(
            name=cmd.name,
            chronicle=cmd.chronicle,
            scenario=cmd.scenario,
            turn_seconds=cmd.turn_seconds,
            options=options,
            seed_commitment=cmd.seed_commitment,
            carried=cmd.carried,
        )
    ]


def decide_close_session(state: GameState, cmd: CloseSession, draws: Draws, actor: Actor) -> list[Event]:
    return [SessionClosed(seed=cmd.seed)]


def decide_add_character(state: GameState, cmd: AddCharacter, draws: Draws, actor: Actor) -> list[Event]:
    if cmd.character in state.session.characters:
        raise refuse(f"character {cmd.character!r} is already on the roster", "TIME-2", "invalid")
    if not cmd.character or cmd.character == STORYTELLER_SIDE:
        raise refuse(f"{cmd.character!r} cannot be a character id", "TIME-2", "invalid")
    if cmd.sheet is not None:
        check_sheet(cmd.sheet)
    return [CharacterAdded(character=cmd.character, name=cmd.name, sheet=cmd.sheet)]


def decide_open_scene(state: GameState, cmd: OpenScene, draws: Draws, actor: Actor) -> list[Event]:
    if not cmd.scene:  # a character's empty scene means "in no scene"
        raise refuse(f"{cmd.scene!r} cannot be a scene id", "TIME-2", "invalid")
    found = state.session.scenes.get(cmd.scene)
    if found is not None and found.open:
        raise refuse(f"scene {found.name!r} is already open (TIME-2)", "TIME-2")
    return [SceneOpened(scene=cmd.scene, name=cmd.name or cmd.scene)]


def decide_close_scene(state: GameState, cmd: CloseScene, draws: Draws, actor: Actor) -> list[Event]:
    if not _scene(state.session, cmd.scene).open:
        raise refuse(f"scene {cmd.scene!r} is already closed (TIME-2)", "TIME-2")
    return [SceneClosed(scene=cmd.scene)]


def decide_join_scene(state: GameState, cmd: JoinScene, draws: Draws, actor: Actor) -> list[Event]:
    found = character(state.session, cmd.character)
    scene = _scene(state.session, cmd.scene)
    if not scene.open:
        raise refuse(f"scene {scene.name!r} is closed (TIME-2)", "TIME-2")
    if found.scene == cmd.scene:
        raise refuse(f"{found.name} is already in scene {scene.name!r}", "TIME-2")
    if not actor.is_storyteller:  # the player's own scene frozen: refused by check_playable
        if scene.frozen:  # entering a frozen scene: no (TIME-5)
            raise refuse(f"Time Out: scene {scene.name!r} is frozen (TIME-5)", "TIME-5", "frozen")
    left = [SceneLeft(character=cmd.character, scene=found.scene)] if found.scene else []
    return left + [SceneJoined(character=cmd.character, scene=cmd.scene)]


def decide_leave_scene(state: GameState, cmd: LeaveScene, draws: Draws, actor: Actor) -> list[Event]:
    found = character(state.session, cmd.character)
    if found.scene is None:
        raise refuse(f"{found.name} is in no scene", "TIME-2")
    return [SceneLeft(character=cmd.character, scene=found.scene)]


def _scope_scene(state: GameState, cmd: Freeze | Resume) -> Scene | None:
    if cmd.scope in ("session", "venue"):
        return None
    if cmd.scene is None:
        raise refuse("a scene Time Out names its scene (TIME-5)", "TIME-5", "invalid")
    return _scene(state.session, cmd.scene)


def decide_freeze(state: GameState, cmd: Freeze, draws: Draws, actor: Actor) -> list[Event]:
    scene = _scope_scene(state, cmd)
    if cmd.scope == "venue":
        already = state.session.venue_frozen
    else:
        already = state.session.frozen if scene is None else scene.frozen
    if already:
        raise refuse("already in Time Out (TIME-5)", "TIME-5")
    return [TimeOutCalled(scope=cmd.scope, scene=scene.id if scene else None)]


def decide_resume(state: GameState, cmd: Resume, draws: Draws, actor: Actor) -> list[Event]:
    scene = _scope_scene(state, cmd)
    if cmd.scope == "venue":
        frozen = state.session.venue_frozen
    else:
        frozen = state.session.frozen if scene is None else scene.frozen
    if not frozen:
        raise refuse("there is no Time Out to end here (TIME-5)", "TIME-5")
    return [TimeOutEnded(scope=cmd.scope, scene=scene.id if scene else None)]


def decide_out_of_game(state: GameState, cmd: OutOfGame, draws: Draws, actor: Actor) -> list[Event]:
    if character(state.session, cmd.character).out_of_game:
        raise refuse("already out of game (TIME-6)", "TIME-6")
    return [WentOutOfGame(character=cmd.character, reason=cmd.reason)]


def decide_back_in_game(state: GameState, cmd: BackInGame, draws: Draws, actor: Actor) -> list[Event]:
    if not character(state.session, cmd.character).out_of_game:
        raise refuse("not out of game (TIME-6)", "TIME-6")
    return [CameBackInGame(character=cmd.character)]


def decide_next_turn(state: GameState, cmd: NextTurn, draws: Draws, actor: Actor) -> list[Event]:
    session = state.session
    if cmd.scene is not None:
        _scene(session, cmd.scene)
    return [
        TurnAdvanced(
            turn=session.turn + 1,
            game_seconds=session.game_seconds + session.turn_seconds,
            scene=cmd.scene,
        )
    ]


def decide_skip_time(state: GameState, cmd: SkipTime, draws: Draws, actor: Actor) -> list[Event]:
    if cmd.seconds <= 0:
        raise refuse("time only moves forward (TIME-1)", "TIME-1", "invalid")
    session = state.session
    return [
        TimeSkipped(
            seconds=cmd.seconds,
            turn=session.turn + turns_for(cmd.seconds, session.turn_seconds),
            game_seconds=session.game_seconds + cmd.seconds,
            note=cmd.note,
        )
    ]


def decide_set_turn_length(state: GameState, cmd: SetTurnLength, draws: Draws, actor: Actor) -> list[Event]:
    check_turn_length(cmd.seconds)
    return [TurnLengthSet(seconds=cmd.seconds)]


def decide_mark_no_sheet(state: GameState, cmd: MarkNoSheet, draws: Draws, actor: Actor) -> list[Event]:
    character(state.session, cmd.character)
    return [NoSheetMarked(character=cmd.character, no_sheet=cmd.no_sheet)]


def spend_action(state: GameState, character_id: str) -> None:
    """TIME-4: refuse an action beyond the turn's budget in a scene played turn by turn."""
    session: State = state.session
    found = character(session, character_id)
    scene = session.scenes.get(found.scene) if found.scene else None
    if scene is None or not scene.paced:
        return  # real-time play: no turn budget (choice)
    if found.busy_until > session.turn:
        raise refuse(
            f"{found.name} is busy with a longer action until turn {found.busy_until} (TIME-4)",
            "TIME-4",
        )
    allowed = actions_per_turn(found.sheet, session.options)
    used = found.actions_used if found.actions_turn == session.turn else 0
    if used >= allowed:
        raise refuse(
            f"{found.name} has used its {allowed} action{'s' if allowed > 1 else ''} this turn (TIME-4)",
            "TIME-4",
        )


def decide_take_action(state: GameState, cmd: TakeAction, draws: Draws, actor: Actor) -> list[Event]:
    if cmd.actions < 1:
        raise refuse("an action takes at least one action (TIME-4)", "TIME-4", "invalid")
    session = state.session
    spend_action(state, cmd.character)
    found = character(session, cmd.character)
    per_turn = actions_per_turn(found.sheet, session.options) if cmd.celerity_shortens else 1
    turns = math.ceil(cmd.actions / per_turn)
    ends = session.turn + turns if cmd.actions > 1 else 0
    return [ActionTaken(character=cmd.character, turn=session.turn, description=cmd.description, ends_turn=ends)]


def check_sheet(sheet: AnySheet) -> None:
    """A sheet is valid when it decodes as a sheet from its wire form: what the wire
    decoder enforces for ``add_character`` and ``amend_sheet``, applied here too for a
    command built in Python, which msgspec does not type-check."""
    try:
        msgspec.convert(msgspec.to_builtins(sheet), type=AnySheet)
    except (msgspec.ValidationError, TypeError) as exc:
        raise refuse(f"the sheet does not validate: {exc}", "sheet", "invalid") from None


def _kind(sheet: AnySheet) -> str:
    return sheet.__struct_config__.tag


def decide_amend_sheet(state: GameState, cmd: AmendSheet, draws: Draws, actor: Actor) -> list[Event]:
    found = character(state.session, cmd.character)
    if cmd.sheet is None:
        raise refuse("amend_sheet needs the whole new sheet", "sheet", "invalid")
    check_sheet(cmd.sheet)
    if found.sheet is not None and type(cmd.sheet) is not type(found.sheet):
        raise refuse(
            f"{found.name} has a {_kind(found.sheet)} sheet: a {_kind(cmd.sheet)} sheet cannot replace it"
            f" (send a {_kind(found.sheet)} sheet)",
            "sheet",
            "invalid",
        )
    return [SheetAmended(character=cmd.character, sheet=cmd.sheet, reason=cmd.reason)]


# ---------------------------------------------------------------- evolvers
# fn(own: State, event, state: GameState) -> State: the session's part only; ``state`` is
# the whole state before the event, to read (events.game composes them).


def _with_character(own: State, character_id: str, **changes) -> State:
    characters = own.characters
    updated = replace(characters[character_id], **changes)
    return replace(own, characters={**characters, character_id: updated})


def _with_scene(own: State, scene_id: str, **changes) -> State:
    scenes = own.scenes
    return replace(own, scenes={**scenes, scene_id: replace(scenes[scene_id], **changes)})


def evolve_session_opened(own: State, e: SessionOpened, state: GameState) -> State:
    return replace(
        own,
        name=e.name,
        status="open",
        chronicle=e.chronicle,
        scenario=e.scenario,
        turn_seconds=e.turn_seconds,
        options=e.options,
        seed_commitment=e.seed_commitment,
    )


def evolve_session_closed(own: State, e: SessionClosed, state: GameState) -> State:
    return replace(own, status="closed", seed=e.seed)


def evolve_character_added(own: State, e: CharacterAdded, state: GameState) -> State:
    new = Character(id=e.character, name=e.name, sheet=e.sheet)
    return replace(own, characters={**own.characters, e.character: new})


def evolve_scene_opened(own: State, e: SceneOpened, state: GameState) -> State:
    return replace(own, scenes={**own.scenes, e.scene: Scene(id=e.scene, name=e.name or e.scene)})


def evolve_scene_closed(own: State, e: SceneClosed, state: GameState) -> State:
    own = _with_scene(own, e.scene, open=False, paced=False)
    for c in own.characters.values():
        if c.scene == e.scene:
            own = _with_character(own, c.id, scene=None)
    return own


def evolve_scene_joined(own: State, e: SceneJoined, state: GameState) -> State:
    return _with_character(own, e.character, scene=e.scene)


def evolve_scene_left(own: State, e: SceneLeft, state: GameState) -> State:
    return _with_character(own, e.character, scene=None)


def _frozen(own: State, e: TimeOutCalled | TimeOutEnded, frozen: bool) -> State:
    if e.scope == "venue":
        return replace(own, venue_frozen=frozen)
    if e.scope == "session":
        return replace(own, frozen=frozen)
    return _with_scene(own, e.scene, frozen=frozen)


def evolve_time_out_called(own: State, e: TimeOutCalled, state: GameState) -> State:
    return _frozen(own, e, True)


def evolve_time_out_ended(own: State, e: TimeOutEnded, state: GameState) -> State:
    return _frozen(own, e, False)


def evolve_went_out_of_game(own: State, e: WentOutOfGame, state: GameState) -> State:
    return _with_character(own, e.character, out_of_game=True)


def evolve_came_back_in_game(own: State, e: CameBackInGame, state: GameState) -> State:
    return _with_character(own, e.character, out_of_game=False)


def evolve_turn_advanced(own: State, e: TurnAdvanced, state: GameState) -> State:
    own = replace(own, turn=e.turn, game_seconds=e.game_seconds)
    if e.scene is not None:
        own = _with_scene(own, e.scene, paced=True)
    return own


def evolve_time_skipped(own: State, e: TimeSkipped, state: GameState) -> State:
    # a skip ends turn-by-turn play: the scene is back to real time (choice)
    scenes = {k: replace(s, paced=False) if s.paced else s for k, s in own.scenes.items()}
    return replace(own, turn=e.turn, game_seconds=e.game_seconds, scenes=scenes)


def evolve_turn_length_set(own: State, e: TurnLengthSet, state: GameState) -> State:
    return replace(own, turn_seconds=e.seconds)


def evolve_no_sheet_marked(own: State, e: NoSheetMarked, state: GameState) -> State:
    return _with_character(own, e.character, no_sheet=e.no_sheet)


def _action_counted(own: State, character_id: str, turn: int | None = None, **changes) -> State:
    """TIME-4: one more action of ``character_id`` in ``turn`` (default: the current one)."""
    found = own.characters.get(character_id)
    if found is None:
        return own
    turn = own.turn if turn is None else turn
    used = found.actions_used + 1 if found.actions_turn == turn else 1
    return _with_character(own, character_id, actions_turn=turn, actions_used=used, **changes)


def evolve_actions_counted(own: State, characters: Iterable[str]) -> State:
    """TIME-4: an action of each of ``characters`` this turn, recorded by another ruleset's
    event (a challenge initiated: ``events.game`` says which)."""
    for character_id in characters:
        own = _action_counted(own, character_id)
    return own


def evolve_action_taken(own: State, e: ActionTaken, state: GameState) -> State:
    return _action_counted(own, e.character, e.turn, busy_until=e.ends_turn)


def starting_value_changed(state: GameState, e: SheetAmended, field: str) -> bool:
    """Whether amended sheet ``e`` gives its character another starting ``field`` (V5-5
    Hunger, ACT-8 tension): a value a ruleset keeps once it moved, set again then (choice).
    ``state`` is the state before the amendment; a redacted amendment changes nothing."""
    if e.sheet is None:
        return False
    old = state.session.characters[e.character].sheet
    return getattr(old, field, None) != getattr(e.sheet, field, None)


def evolve_sheet_amended(own: State, e: SheetAmended, state: GameState) -> State:
    if e.sheet is None:
        return own  # the redacted form: another character's sheet, unknown here
    return _with_character(own, e.character, sheet=e.sheet)


DECIDERS: dict[type[Command], Decider] = {
    OpenSession: decide_open_session,
    CloseSession: decide_close_session,
    AddCharacter: decide_add_character,
    OpenScene: decide_open_scene,
    CloseScene: decide_close_scene,
    JoinScene: decide_join_scene,
    LeaveScene: decide_leave_scene,
    Freeze: decide_freeze,
    Resume: decide_resume,
    OutOfGame: decide_out_of_game,
    BackInGame: decide_back_in_game,
    NextTurn: decide_next_turn,
    SkipTime: decide_skip_time,
    SetTurnLength: decide_set_turn_length,
    MarkNoSheet: decide_mark_no_sheet,
    TakeAction: decide_take_action,
    AmendSheet: decide_amend_sheet,
}

EVOLVERS: dict[type[Event], Evolver[State]] = {
    SessionOpened: evolve_session_opened,
    SessionClosed: evolve_session_closed,
    CharacterAdded: evolve_character_added,
    SceneOpened: evolve_scene_opened,
    SceneClosed: evolve_scene_closed,
    SceneJoined: evolve_scene_joined,
    SceneLeft: evolve_scene_left,
    TimeOutCalled: evolve_time_out_called,
    TimeOutEnded: evolve_time_out_ended,
    WentOutOfGame: evolve_went_out_of_game,
    CameBackInGame: evolve_came_back_in_game,
    TurnAdvanced: evolve_turn_advanced,
    TimeSkipped: evolve_time_skipped,
    TurnLengthSet: evolve_turn_length_set,
    NoSheetMarked: evolve_no_sheet_marked,
    ActionTaken: evolve_action_taken,
    SheetAmended: evolve_sheet_amended,
}

EVENTS: tuple = tuple(EVOLVERS)
COMMANDS: tuple = tuple(DECIDERS)
