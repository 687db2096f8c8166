"""What every HTTP controller shares: the caller's grant from ``Authorization: Bearer``,
the storyteller guard, and the per-session scope of player and observer tokens."""

from __future__ import annotations

import dataclasses
import math
from typing import Annotated, TypeVar

import msgspec
from litestar import MediaType, Request, Response
from litestar.connection import ASGIConnection
from litestar.di import NamedDependency, Provide
from litestar.exceptions import (NotAuthorizedException, NotFoundException, PermissionDeniedException,
                                 TooManyRequestsException, ValidationException)
from litestar.handlers import BaseRouteHandler
from litestar.openapi.spec import OpenAPIMediaType, Operation, Schema

from litestar.params import Parameter

from conteur.server.core.auth import Grant
from conteur.server.core.offload import RETRY_AFTER, Unavailable
from conteur.server.store.interface import StoreError
from conteur.events.wire import SESSION_ID_PATTERN

SECURITY = [{"token": []}]

# Litestar 2.23+ wants explicit markers: an inferred dependency or path parameter is
# deprecated (and stops working in 3.0)
GrantDep = NamedDependency[Grant]
# every /sessions/{session} route checks the id's form, so no request can leave a row
# under a session that could never have been opened (or break an export's header)
SessionPath = Annotated[str, Parameter(pattern=SESSION_ID_PATTERN, min_length=1, max_length=128,
                                       description="the session id: letters, digits, _ . -")]

# documented 401, 403 and 429 (a token over its budget, an address over its bad tokens)
RAISES = [NotAuthorizedException, PermissionDeniedException, TooManyRequestsException]
# every /sessions/{session} route: 404 for a session that has no event (opens_session aside)
SESSION_RAISES = [*RAISES, NotFoundException]
# a route's opt: it may name a session that has no event yet, and open it (a roster import)
OPENS_SESSION = {"opens_session": True}


def runtime(connection: ASGIConnection):
    return connection.app.state.conteur


def too_many(wait: float, message: str) -> TooManyRequestsException:
    """A 429 that says when to come back (``Retry-After``, whole seconds)."""
    return TooManyRequestsException(message, headers={"Retry-After": str(max(1, math.ceil(wait)))})


# where a sealed request's grant sits in the ASGI scope of the request it carried
# (server/web/sealed.py): no header, so nothing a request in the clear sends can forge it
GRANT_SCOPE_KEY = "conteur.grant"


# where the grant a request's bearer token was checked for is kept, so that its guard and
# its handler's dependency read the token once
CHECKED_SCOPE_KEY = "conteur.checked"


async def grant_of(connection: ASGIConnection) -> Grant:
    """The caller's grant, its token read from the store off the event loop
    (``StoreWork.run``): a stalled database answers 503 within its deadline, and every
    other request, socket and ping goes on meanwhile."""
    sealed = connection.scope.get(GRANT_SCOPE_KEY)
    if sealed is not None:
        return sealed
    checked = connection.scope.get(CHECKED_SCOPE_KEY)
    if checked is not None:
        return checked
    header = connection.headers.get("authorization", "")
    scheme, _, token = header.partition(" ")
    if scheme.lower() != "bearer" or not token.strip():
        raise NotAuthorizedException("send the token as Authorization: Bearer TOKEN")
    rt = runtime(connection)
    address = connection.client.host if connection.client else ""
    wait = rt.limits.refused(address)
    if wait:  # server/core/limits.py: the websocket's hellos count here too
        raise too_many(wait, f"too many unknown tokens from this address: retry in {math.ceil(wait)} s")
    grant = await rt.chronicle.work.run(rt.tokens.check, token.strip())
    if grant is None:
        rt.limits.failed(address)
        raise NotAuthorizedException("unknown or revoked token")
    connection.scope[CHECKED_SCOPE_KEY] = grant
    return grant


async def provide_grant(request: Request) -> Grant:
    """The caller's grant; on a /sessions/{session} route, 403 for a session the token
    is not for, then 404 for a session that has no event (as the websocket's hello says
    ``unknown_session``): a mistyped session name never gets an empty answer, nor writes
    a first event (a ``close`` of a session that never was)."""
    grant = await grant_of(request)
    session = request.path_params.get("session")
    if session is not None:
        if not grant.allows(session):
            raise PermissionDeniedException(f"this token is for session {grant.session!r}")
        if not request.route_handler.opt.get("opens_session"):
            rt = runtime(request)
            if not await rt.chronicle.work.run(rt.store.session_head, session):
                raise NotFoundException(f"no session {session!r}")
    return grant


async def storyteller_only(connection: ASGIConnection, _: BaseRouteHandler) -> None:
    if (await grant_of(connection)).role != "storyteller":
        raise PermissionDeniedException("only a storyteller may do this")


def unavailable(_: Request, exc: StoreError) -> Response:
    """503 with a ``Retry-After`` when the store did not answer in time or cannot write
    (server/core/offload.py): nothing was done, the request may be sent again as it was."""
    retry = exc.retry_after if isinstance(exc, Unavailable) else RETRY_AFTER
    return Response({"status_code": 503, "detail": f"the database is unavailable: {exc}",
                     "retry_after": retry}, status_code=503, media_type=MediaType.JSON,
                    headers={"Retry-After": str(max(1, math.ceil(retry)))})


DEPENDENCIES = {"grant": Provide(provide_grant)}


T = TypeVar("T")
_json = msgspec.json.Decoder()


def _integral(value):
    """``value`` with every float that has no fractional part made an int: ``4.0`` is an
    integer in JSON Schema (and in the OpenAPI description), and a client's JSON library
    may write one so. The body's depth is bounded already (``refuse_deep_bodies``)."""
    if isinstance(value, float):
        return int(value) if value.is_integer() else value
    if isinstance(value, dict):
        return {k: _integral(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_integral(v) for v in value]
    return value


async def strict_body(request: Request, kind: type[T]) -> T:
    """The body decoded strictly, as the websocket decodes its frames. Litestar converts a
    body leniently (``0`` for ``false``, ``"4"`` for ``4``): a field of the wrong type
    would then reach the rules and come back as a ``reject`` instead of a 400 naming the
    field, and a client would learn the API accepts what its schema says it refuses."""
    body = await request.body()
    if not body.strip():
        raise ValidationException("a JSON object is required as the body ({} for every default)")
    try:
        return msgspec.convert(_integral(_json.decode(body)), kind, strict=True)
    except msgspec.ValidationError as exc:
        # as Litestar's own validation errors say it (the web app's sheet editor reads
        # them): the message, and the field's path in ``extra``
        message, _, at = str(exc).partition(" - at `$")
        raise ValidationException(f"Validation failed for {request.method} {request.url.path}", extra=[
            {"message": message, "key": at.rstrip("`").lstrip(".") or "data", "source": "body"}]) from None
    except msgspec.DecodeError as exc:
        raise ValidationException(f"invalid body: {exc}") from None


def answered_as(*media_types: str, body_required: bool = False) -> type[Operation]:
    """An ``operation_class`` documenting the 200 answer in each of ``media_types``.

    A route's own ``media_type`` would document one, and Litestar would also send that
    type with the route's errors (a JSON body labelled ``text/html``): such routes set
    none, so their errors are ``application/json`` like every other route's, and say
    here what their 200 answers are. ``body_required``: the route's optional body (so
    that ``strict_body`` refuses a missing one with its own message, not Litestar's) is
    documented as the required object it is."""

    @dataclasses.dataclass
    class Answered(Operation):
        def __post_init__(self) -> None:
            ok = (self.responses or {}).get("200")
            if ok is not None:
                ok.content = {t: OpenAPIMediaType(schema=Schema(type="string")) for t in media_types}
            if body_required and self.request_body is not None:
                self.request_body.required = True
                for content in (self.request_body.content or {}).values():
                    one_of = getattr(content.schema, "one_of", None) or []
                    kept = [s for s in one_of if getattr(s, "type", None) != "null"]
                    if len(kept) == 1:
                        content.schema = kept[0]

    return Answered


def allow(request: Request, path: str) -> Response:
    """An OPTIONS answer naming every method of ``path``: Litestar 2's own names only the
    methods of the first handler registered on a path (fixed in Litestar 3)."""
    methods = next(route.methods for route in request.app.routes if route.path == path)
    return Response(None, status_code=204, headers={"Allow": ", ".join(sorted(methods))})
