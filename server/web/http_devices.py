"""The devices of a session over HTTP: every live token a storyteller may revoke.

``GET /sessions/{s}/devices`` lists each token valid in the session (players' by
character, the observers', the storytellers'), by its grant id (a prefix of its digest:
the token itself is never shown again) and the sockets it holds open now;
``POST /sessions/{s}/devices/{grant}/revoke`` revokes one, whatever its role, and its
sockets close at once (a lost tablet, a phone left on a table).
"""

from __future__ import annotations

import functools
from typing import Annotated

import msgspec
from litestar import Controller, Request, get, post
from litestar.exceptions import NotFoundException
from litestar.params import Parameter

from conteur.server.web.http_common import (DEPENDENCIES, SECURITY, SESSION_RAISES, GrantDep, SessionPath,
                                            runtime, storyteller_only)

GrantPath = Annotated[str, Parameter(pattern="^[0-9a-f]{12}$", min_length=12, max_length=12,
                                     description="a device's grant id, as GET /devices lists it")]


class Device(msgspec.Struct, frozen=True, kw_only=True):
    grant: str  # the grant id: a prefix of the token's digest, never the token
    role: str
    character: str | None = None
    session: str | None = None  # None: a token for every session of the chronicle
    name: str = ""
    sockets: int = 0  # open on this server now
    you: bool = False  # the token of this request


class Revoked(msgspec.Struct, frozen=True, kw_only=True):
    grant: str
    revoked: int


class DevicesController(Controller):
    path = "/sessions/{session:str}/devices"
    tags = ["devices"]
    dependencies = DEPENDENCIES
    security = SECURITY

    @get("/", guards=[storyteller_only], raises=SESSION_RAISES,
         summary="Every live token valid in this session, by role and character, with its open sockets")
    async def devices(self, request: Request, grant: GrantDep, session: SessionPath) -> list[Device]:
        rt = runtime(request)
        return [Device(grant=g.id, role=g.role, character=g.character, session=g.session, name=g.name,
                       sockets=rt.hub.sockets_of(g.id), you=g.id == grant.id)
                for g in await rt.chronicle.work.run(rt.tokens.devices, session)]

    @post("/{device:str}/revoke", guards=[storyteller_only], status_code=200,
          raises=SESSION_RAISES,
          summary="Revoke one token (a player's, an observer's or a storyteller's): its sockets close at once")
    async def revoke(self, request: Request, grant: GrantDep, session: SessionPath, device: GrantPath) -> Revoked:
        rt = runtime(request)
        revoked = await rt.chronicle.work.run(functools.partial(rt.tokens.revoke_grants, [device], session=session))
        if not revoked:
            raise NotFoundException(f"no live token {device!r} in session {session!r}")
        return Revoked(grant=device, revoked=revoked)
