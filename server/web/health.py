"""``GET /health``: whether this server process can serve, for a load balancer or an
operator's probe. Never waits for the database: what the store last saw of it
(``EventStore.trouble``) says ``degraded``, with its reason and HTTP 503, while the store
cannot write; sockets, pings and hellos go on meanwhile (server/core/offload.py)."""

from __future__ import annotations

from typing import Literal

import msgspec
from litestar import Response, get
from litestar.datastructures import State
from litestar.openapi.datastructures import ResponseSpec

from conteur.server.core.offload import trouble_of


class Health(msgspec.Struct, frozen=True, kw_only=True):
    status: Literal["ok", "degraded"]
    head: int  # the last seq this process dispatched to its devices
    devices: int  # sockets live on this process
    server: str = ""  # which process answered (host:pid), as ``welcome`` says
    reason: str | None = None  # with ``degraded``: why the store cannot write


@get("/health", tags=["server"], summary="Liveness and the chronicle's head seq",
     description="`ok` (200) while the store can write; `degraded` (503) with its `reason` "
                 "while it cannot (the database stalled, unreachable, or its lock lost). "
                 "Answered from memory: never waits for the database.",
     responses={503: ResponseSpec(data_container=Health, description="the store cannot write now")})
async def health(state: State) -> Response[Health]:
    rt = state.conteur
    reason = trouble_of(rt.store)
    body = Health(status="ok" if reason is None else "degraded", head=rt.hub.delivered,
                  devices=rt.hub.connections(), server=rt.name, reason=reason)
    return Response(body, status_code=200 if reason is None else 503)
