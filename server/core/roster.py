"""Roster files: a session, its options and its characters with their sheets.

A roster is TOML or JSON (docs/protocol.md, "Roster file")::

    session = "night-1"            # the session id (default "main")
    name = "Elysium, first night"
    ruleset = "met"                # the sheet kind of characters whose sheet names none

    [options]                      # open_session: OPTION_KEYS below, nothing else
    turn_seconds = 4

    [v5]                           # optional: v5_settings (messy_rule)
    [action]                       # optional: action_settings (dice, die, expert_die, levels)

    [[scenes]]
    id = "elysium"
    name = "Elysium"

    [[characters]]
    id = "anna"
    name = "Anna Volkova"
    player = "Alice"               # shown on the join sheet
    scene = "elysium"              # optional: joins that scene
    [characters.sheet]
    physical = 6
    social = 4

Importing turns it into storyteller commands (open_session, v5_settings, action_settings,
add_character, open_scene, join_scene) through the ordinary command path, so the roster
is in the log like everything else, and mints one player token per character plus one
observer token. Re-importing skips what is already there.
"""

from __future__ import annotations

import asyncio
import json
import tomllib
from pathlib import Path
from typing import Annotated, Any, Literal

import msgspec

from conteur.events import action, session, v5
from conteur.events.bounds import MAX_ID, Key, Name
from conteur.events.model import STORYTELLER, Command
from conteur.events.sheets import AnySheet
from conteur.server.core.auth import Tokens
from conteur.server.core.service import Chronicle
from conteur.server.store.interface import EventStore

Ruleset = Literal["met", "v5", "action"]
# a scene's or a character's id: a token and a join link are made for it, so never empty
Id = Annotated[str, msgspec.Meta(min_length=1, max_length=MAX_ID)]


# every text bounded as the commands it becomes are (docs/protocol.md, "Bounds"): a file
# is refused whole, naming the field, before anything is written
class RosterScene(msgspec.Struct, kw_only=True, forbid_unknown_fields=True):
    id: Id
    name: Name = ""


class RosterCharacter(msgspec.Struct, kw_only=True, forbid_unknown_fields=True):
    id: Id
    name: Name = ""
    player: Name = ""
    scene: Key | None = None
    sheet: AnySheet | None = None


class Roster(msgspec.Struct, kw_only=True, forbid_unknown_fields=True):
    session: Key = "main"
    name: Name = ""
    ruleset: Ruleset = "met"
    options: dict[str, Any] = {}
    v5: dict[str, Any] | None = None
    action: dict[str, Any] | None = None
    scenes: list[RosterScene] = []
    characters: list[RosterCharacter] = []


class JoinToken(msgspec.Struct, frozen=True, kw_only=True):
    character: str
    name: str
    player: str = ""
    token: str


class Imported(msgspec.Struct, frozen=True, kw_only=True):
    """What an import gives back: the tokens, shown once."""

    session: str
    players: tuple[JoinToken, ...] = ()
    observer: str = ""
    storyteller: str = ""  # only from ``init_from_roster``
    rejected: tuple[str, ...] = ()  # commands the rules refused, with their reasons
    # the roster's options that the session, already open, holds otherwise: kept as the
    # session has them (an open session's options are not changed by a file), and said
    differs: tuple[str, ...] = ()


class RosterError(ValueError):
    pass


# the roster's [options]: what a storyteller chooses for the evening (docs/protocol.md);
# the seed commitment and the carried debts are the server's to fill, never a file's
OPTION_KEYS = ("chronicle", "scenario", "turn_seconds", "bomb", "retest_cancel", "accept_timeout",
               "celerity_extra_actions", "max_player_bonus")


def parse_roster(data: dict[str, Any]) -> Roster:
    """A roster from decoded TOML/JSON; sheets without ``kind`` take the roster's ruleset."""
    if not isinstance(data, dict):
        raise RosterError("a roster is a table (TOML) or an object (JSON)")
    data = _whole(data)
    ruleset = data.get("ruleset", "met")
    characters = data.get("characters", [])
    if isinstance(characters, list):  # anything else is refused by the conversion, naming it
        characters = [{**raw, "sheet": {"kind": ruleset, **raw["sheet"]}}
                      if isinstance(raw, dict) and isinstance(raw.get("sheet"), dict)
                      and "kind" not in raw["sheet"] else raw
                      for raw in characters]
    try:
        roster = msgspec.convert({**data, "characters": characters}, Roster)
    except msgspec.ValidationError as exc:
        raise RosterError(f"invalid roster: {exc}") from None
    unknown = sorted(set(roster.options) - set(OPTION_KEYS))
    if unknown:
        raise RosterError(f"invalid roster: unknown key{'s' if len(unknown) > 1 else ''} in [options]: "
                          f"{', '.join(unknown)} (known: {', '.join(OPTION_KEYS)})")
    try:  # checked even when the session is open already and only compared with them
        msgspec.convert(roster.options, session.OpenSession)
    except msgspec.ValidationError as exc:
        raise RosterError(f"invalid options: {exc}") from None
    return roster


def _whole(value: Any) -> Any:
    """``value`` with each float that is a whole number made an int: JSON counts 4.0 an
    integer (and JSON Schema with it), the strict conversion would not."""
    if isinstance(value, float) and value.is_integer():
        return int(value)
    if isinstance(value, dict):
        return {k: _whole(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_whole(v) for v in value]
    return value


def load_roster(path: str | Path) -> Roster:
    path = Path(path)
    raw = path.read_bytes()
    try:
        if path.suffix.lower() == ".json":
            data = json.loads(raw)
        else:
            data = tomllib.loads(raw.decode("utf-8"))
    except (ValueError, tomllib.TOMLDecodeError) as exc:
        raise RosterError(f"{path}: {exc}") from None
    return parse_roster(data)


def roster_commands(roster: Roster, state) -> list[tuple[str, Command]]:
    """(idempotency key, command) for what the session still lacks."""
    def build(kind: type, fields: dict[str, Any], what: str) -> Command:
        try:
            return msgspec.convert(fields, kind)
        except msgspec.ValidationError as exc:
            raise RosterError(f"invalid {what}: {exc}") from None

    out: list[tuple[str, Command]] = []
    if state.session.status == "pending":
        out.append(("open", build(session.OpenSession, {"name": roster.name, **roster.options}, "options")))
    if roster.v5 is not None:
        out.append(("v5", build(v5.ConfigureV5, roster.v5, "v5 settings")))
    if roster.action is not None:
        out.append(("action", build(action.ConfigureAction, roster.action, "action settings")))
    for scene in roster.scenes:
        if scene.id not in state.session.scenes:
            out.append((f"scene:{scene.id}", session.OpenScene(scene=scene.id, name=scene.name or scene.id)))
    for c in roster.characters:
        if c.id not in state.session.characters:
            out.append((f"character:{c.id}", session.AddCharacter(
                character=c.id, name=c.name or c.id, sheet=c.sheet)))
            if c.scene:
                out.append((f"join:{c.id}", session.JoinScene(character=c.id, scene=c.scene)))
    return out


def differences(roster: Roster, state) -> list[str]:
    """The roster's name and options an already open session holds otherwise, each as
    "key: the session's value (the roster says the file's)"."""
    s = state.session
    if s.status == "pending":
        return []
    held = {"name": s.name, "chronicle": s.chronicle, "scenario": s.scenario, "turn_seconds": s.turn_seconds,
            **msgspec.structs.asdict(s.options)}
    wanted = {**({"name": roster.name} if roster.name else {}), **roster.options}
    return [f"{key}: the session has {held[key]!r}, the roster says {value!r}"
            for key, value in wanted.items() if key in held and held[key] != value]


def _mint(tokens: Tokens, roster: Roster, rejected: list[str], differs: list[str] = ()) -> Imported:
    minted = tokens.issue_many(
        [("player", c.id, roster.session, c.player or c.name or c.id) for c in roster.characters]
        + [("observer", None, roster.session, "wall display")]
    )
    players = tuple(
        JoinToken(character=c.id, name=c.name or c.id, player=c.player, token=token)
        for c, token in zip(roster.characters, minted)
    )
    return Imported(session=roster.session, players=players, observer=minted[-1],
                    rejected=tuple(rejected), differs=tuple(differs))


def import_roster_sync(chronicle: Chronicle, tokens: Tokens, roster: Roster) -> Imported:
    rejected = []
    differs = differences(roster, chronicle.state(roster.session))
    for key, command in roster_commands(roster, chronicle.state(roster.session)):
        done = chronicle.execute_sync(roster.session, command, STORYTELLER, device="roster",
                                      command_id=f"{roster.session}:{key}")
        if done.outcome.rejected:
            rejected.append(f"{key}: {done.outcome.message}")
    return _mint(tokens, roster, rejected, differs)


async def import_roster(chronicle: Chronicle, tokens: Tokens, roster: Roster) -> Imported:
    """``import_roster_sync`` for the event loop: the store read and the tokens minted off
    it (``Chronicle.work``)."""
    # each execute decides (and folds) before its first await, in order: the commands are
    # decided one after the other and committed together (one fsync, not one each)
    state = await chronicle.state_now(roster.session)
    differs = differences(roster, state)
    commands = roster_commands(roster, state)
    done = await asyncio.gather(*(
        chronicle.execute(roster.session, command, STORYTELLER, device="roster",
                          command_id=f"{roster.session}:{key}")
        for key, command in commands
    ))
    rejected = [f"{key}: {d.outcome.message}" for (key, _), d in zip(commands, done)
                if d.outcome.rejected]
    return await chronicle.work.run(_mint, tokens, roster, rejected, differs)


def init_from_roster(store: EventStore, path: str | Path) -> Imported:
    """``conteur init --db FILE --roster FILE``: the session, its characters and every
    token, the storyteller's included. Tokens are printed once and stored hashed."""
    roster = load_roster(path)
    tokens = Tokens(store)
    imported = import_roster_sync(Chronicle(store), tokens, roster)
    storyteller = tokens.issue("storyteller", name="storyteller")
    return msgspec.structs.replace(imported, storyteller=storyteller)


def join_link(base: str, token: str, session: str) -> str:
    """The token rides in the fragment: browsers never send it, so no log holds it."""
    return f"{base.rstrip('/')}/#join={token}&session={session}"


def format_imported(imported: Imported, base: str) -> str:
    """The text ``conteur init`` prints."""
    lines = [f"session {imported.session}"]
    if imported.storyteller:
        lines.append(f"storyteller token (shown once): {imported.storyteller}")
        lines.append(f"  {join_link(base, imported.storyteller, imported.session)}")
    lines.append(f"observer token: {imported.observer}")
    for p in imported.players:
        who = f" ({p.player})" if p.player else ""
        lines.append(f"{p.character}: {p.name}{who}  {join_link(base, p.token, imported.session)}")
    for r in imported.rejected:
        lines.append(f"refused: {r}")
    for d in imported.differs:
        lines.append(f"kept as the open session has it: {d}")
    return "\n".join(lines)
