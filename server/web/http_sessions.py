"""Sessions over HTTP: list, create (open_session), close, any command, roster import,
tokens. Every change goes through the same command path as the websocket."""

from __future__ import annotations

import functools
from typing import Annotated, Any, Literal

import msgspec
from litestar import Controller, HttpMethod, Request, Response, get, post, route
from litestar.exceptions import NotFoundException, PermissionDeniedException, ValidationException
from litestar.openapi.spec import Schema
from litestar.params import Body, JSONBody
from msgspec import Meta

from conteur.events import game
from conteur.events import session as session_events
from conteur.events.model import Command
from conteur.events import wire
from conteur.events.bounds import Key, Name
from conteur.server.core.offload import Unavailable
from conteur.server.store.interface import StoreError
from conteur.server.core import venue
from conteur.server.core.auth import Grant
from conteur.server.web.http_common import (DEPENDENCIES, OPENS_SESSION, RAISES, SECURITY, SESSION_RAISES,
                                            GrantDep, allow, runtime, storyteller_only, SessionPath,
                                            strict_body, too_many)
from conteur.server.web.lan import lan_addresses, reachable_base
from conteur.server.web.roster_schema import roster_body
from conteur.server.core.roster import Imported, Roster, RosterError, import_roster, join_link, parse_roster

SessionId = Annotated[str, Meta(min_length=1, max_length=128, pattern=wire.SESSION_ID_PATTERN)]


class SessionInfo(msgspec.Struct, frozen=True, kw_only=True):
    session: str
    name: str
    status: str
    characters: int
    head: int
    devices: int


class CreateSession(msgspec.Struct, frozen=True, kw_only=True):
    session: SessionId
    name: Name = ""
    chronicle: Annotated[str, Meta(max_length=128)] = ""  # TIME-2: tie debts carry within it
    scenario: Annotated[str, Meta(max_length=128)] = ""
    turn_seconds: Annotated[int, Meta(ge=1, le=3600)] = 4
    bomb: bool = False
    retest_cancel: bool = False
    accept_timeout: Annotated[int, Meta(ge=0, le=86400)] = 60
    celerity_extra_actions: bool = True
    max_player_bonus: Annotated[int, Meta(ge=0, le=30)] = 3


class CommandBody(msgspec.Struct, frozen=True, kw_only=True):
    """The HTTP twin of the websocket ``command`` frame."""

    id: Annotated[str, Meta(min_length=1, max_length=128)]
    command: game.AnyCommand  # type: ignore[valid-type]
    entropy: Annotated[str, Meta(max_length=256)] = ""


class NewToken(msgspec.Struct, frozen=True, kw_only=True):
    role: Literal["player", "observer", "storyteller"]
    character: Key | None = None
    name: Name = ""


class IssuedToken(msgspec.Struct, frozen=True, kw_only=True):
    token: str
    role: str
    character: str | None = None
    session: str | None = None
    link: str


def base_url(request: Request) -> str:
    """Where phones reach this server: never localhost while the machine has a LAN address."""
    settings = runtime(request).settings
    return reachable_base(str(request.base_url), settings.public_url,
                          settings.lan_addresses or lan_addresses)


async def run_command(request: Request, grant: Grant, session_id: str, command: Command,
                      command_id: str, entropy: str = "") -> wire.Ack | wire.Reject:
    rt = runtime(request)
    wait = rt.limits.command(grant.id)  # the token's budget, shared with its sockets
    if wait:
        raise too_many(wait, f"more than {rt.settings.rate:g} commands per second from this token: "
                       f"resend in {wait:.1f} s")
    try:
        executed = await venue.execute(
            rt.chronicle, session_id, command, grant.actor, device=f"{grant.id}:http", command_id=command_id,
            entropy=entropy)
    except StoreError as exc:  # nothing was written here: resent with its id, it is decided once
        rt.outage.failed(str(exc))
        retry = exc.retry_after if isinstance(exc, Unavailable) else rt.chronicle.work.retry_after
        return wire.Reject(id=command_id, code="unavailable", retry_after=retry,
                           message=f"the server could not record it, retry in {retry:g} s: {exc}")
    rt.outage.succeeded()
    outcome = executed.outcome
    if outcome.rejected:
        return wire.Reject(id=command_id, code=outcome.code or "rule", message=outcome.message or "")
    return wire.Ack(id=command_id, seqs=outcome.seqs)


# the roster body as the server reads it: its keys are the Roster's, any other is refused
# (a typo in a roster file is an error, not a silent default), each typed as the server
# converts it (server/web/roster_schema.py: a sheet may leave out its ``kind``)
ROSTER_BODY = Body(
    description="a roster (docs/protocol.md, \"Roster file\"): any key but these is refused",
    schema_extra={"properties": {f.encode_name: Schema() for f in msgspec.structs.fields(Roster)
                                 if f.encode_name != "session"},
                  "additionalProperties": False, **roster_body()},
)


class SessionController(Controller):
    path = "/sessions"
    tags = ["sessions"]
    dependencies = DEPENDENCIES
    security = SECURITY

    # named to come first: Litestar registers a controller's handlers by name, and the
    # first one on a path would otherwise get an OPTIONS answer naming its method alone
    @route("/", http_method=[HttpMethod.OPTIONS], include_in_schema=False)
    async def allow_methods(self, request: Request) -> Response:
        return allow(request, self.path)

    @get("/", raises=RAISES, summary="The sessions this token may see")
    async def list_sessions(self, request: Request, grant: GrantDep) -> list[SessionInfo]:
        rt = runtime(request)
        run = rt.chronicle.work.run
        names = [s for s in await run(rt.store.sessions) if grant.allows(s)]
        out = []
        for name in names:
            state = await rt.chronicle.state_now(name)
            await rt.hub.warm(name, run)
            out.append(SessionInfo(session=name, name=state.session.name, status=state.session.status,
                                   characters=len(state.session.characters), head=rt.hub.head(name),
                                   devices=rt.hub.connections(name)))
        return out

    @post("/", guards=[storyteller_only], raises=RAISES, summary="Open a new session (open_session)", status_code=200)
    async def create(self, request: Request, grant: GrantDep,
                     data: JSONBody[CreateSession]) -> wire.Ack | wire.Reject:
        fields = msgspec.structs.asdict(await strict_body(request, CreateSession))
        sid = fields.pop("session")
        if grant.session is not None and grant.session != sid:
            # a storyteller token minted for one session runs that one only: opening
            # another is for the chronicle's owner (the token of every session, conteur init)
            raise PermissionDeniedException(f"this token is for session {grant.session!r}: opening "
                                            "another session needs the chronicle owner's token")
        return await run_command(request, grant, sid, session_events.OpenSession(**fields), f"create:{sid}")

    @post("/{session:str}/close", guards=[storyteller_only], status_code=200,
          raises=SESSION_RAISES, summary="Close a session (close_session): its draw seed is revealed")
    async def close(self, request: Request, grant: GrantDep, session: SessionPath) -> wire.Ack | wire.Reject:
        return await run_command(request, grant, session, session_events.CloseSession(), f"close:{session}")

    @post("/{session:str}/commands", status_code=200,
          raises=SESSION_RAISES, summary="Run one command, as the websocket's command frame does")
    async def command(self, request: Request, grant: GrantDep, session: SessionPath,
                      data: JSONBody[CommandBody]) -> wire.Ack | wire.Reject:
        data = await strict_body(request, CommandBody)
        return await run_command(request, grant, session, data.command, data.id, data.entropy)

    @post("/{session:str}/roster", guards=[storyteller_only], status_code=200, opt=OPENS_SESSION,
          raises=RAISES, summary="Import a roster (JSON): characters and sheets; returns the join tokens once. "
          "Opens the session if it has no event yet")
    async def roster(self, request: Request, grant: GrantDep, session: SessionPath,
                     data: Annotated[dict[str, Any], ROSTER_BODY]) -> Imported:
        if data.get("session", session) != session:
            raise ValidationException(f"session: the roster's session is the URL's ({session!r}); "
                                      f"the body names {str(data['session'])[:128]!r}: leave it out or make it the same")
        try:
            roster = parse_roster({**data, "session": session})
        except RosterError as exc:
            raise ValidationException(str(exc)) from None
        rt = runtime(request)
        try:
            return await import_roster(rt.chronicle, rt.tokens, roster)
        except RosterError as exc:
            raise ValidationException(str(exc)) from None

    @post("/{session:str}/tokens", guards=[storyteller_only], status_code=200,
          raises=SESSION_RAISES, summary="Mint a token for this session (a player's new phone, a wall display)")
    async def token(self, request: Request, grant: GrantDep, session: SessionPath,
                    data: JSONBody[NewToken]) -> IssuedToken:
        data = await strict_body(request, NewToken)
        rt = runtime(request)
        if data.role == "player":
            state = await rt.chronicle.state_now(session)
            if not data.character or data.character not in state.session.characters:
                raise NotFoundException(f"no character {data.character!r} in session {session!r}")
        character = data.character if data.role == "player" else None
        token = await rt.chronicle.work.run(functools.partial(
            rt.tokens.issue, data.role, character=character, session=session,
            name=data.name or character or data.role))
        return IssuedToken(token=token, role=data.role, character=character, session=session,
                           link=join_link(base_url(request), token, session))


class Me(msgspec.Struct, frozen=True, kw_only=True):
    role: str
    character: str | None = None
    session: str | None = None
    name: str = ""


@get("/me", tags=["auth"], dependencies=DEPENDENCIES, security=SECURITY,
     raises=RAISES, summary="Who this token is: role, character, session")
async def me(grant: GrantDep) -> Me:
    return Me(role=grant.role, character=grant.character, session=grant.session, name=grant.name)
