"""What every HTTP controller shares: the caller's grant from ``Authorization: Bearer``,
the storyteller guard, and the per-session scope of player and observer tokens."""

from __future__ import annotations

from typing import Annotated

from litestar import Request
from litestar.connection import ASGIConnection
from litestar.di import NamedDependency, Provide
from litestar.exceptions import NotAuthorizedException, PermissionDeniedException
from litestar.handlers import BaseRouteHandler

from litestar.params import Parameter

from conteur.server.core.auth import Grant
from conteur.events.wire import SESSION_ID_PATTERN

SECURITY = [{"token": []}]

# Litestar 2.23+ wants explicit markers: an inferred dependency or path parameter is
# deprecated (and stops working in 3.0)
GrantDep = NamedDependency[Grant]
# every /sessions/{session} route checks the id's form, so no request can leave a row
# under a session that could never have been opened (or break an export's header)
SessionPath = Annotated[str, Parameter(pattern=SESSION_ID_PATTERN, min_length=1, max_length=128,
                                       description="the session id: letters, digits, _ . -")]

RAISES = [NotAuthorizedException, PermissionDeniedException]  # documented 401 and 403


def runtime(connection: ASGIConnection):
    return connection.app.state.conteur


def grant_of(connection: ASGIConnection) -> Grant:
    header = connection.headers.get("authorization", "")
    scheme, _, token = header.partition(" ")
    if scheme.lower() != "bearer" or not token.strip():
        raise NotAuthorizedException("send the token as Authorization: Bearer TOKEN")
    grant = runtime(connection).tokens.check(token.strip())
    if grant is None:
        raise NotAuthorizedException("unknown or revoked token")
    return grant


async def provide_grant(request: Request) -> Grant:
    grant = grant_of(request)
    session = request.path_params.get("session")
    if session is not None and not grant.allows(session):
        raise PermissionDeniedException(f"this token is for session {grant.session!r}")
    return grant


def storyteller_only(connection: ASGIConnection, _: BaseRouteHandler) -> None:
    if grant_of(connection).role != "storyteller":
        raise PermissionDeniedException("only a storyteller may do this")


DEPENDENCIES = {"grant": Provide(provide_grant)}
