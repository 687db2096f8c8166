"""The log and the state over HTTP, through the same views as the websocket: a player
gets its redacted stream and the state folded from it; a storyteller gets everything."""

from __future__ import annotations

import time
from typing import Annotated, Any

import msgspec

from litestar import Controller, MediaType, Request, Response, get
from litestar.params import Parameter

from conteur.events import game, met, views
from conteur.events import wire
from conteur.server.core.auth import Grant
from conteur.server.core.projections import DONE_PAGE
from conteur.server.web.http_common import DEPENDENCIES, SECURITY, SESSION_RAISES, GrantDep, runtime, SessionPath
from conteur.server.store.codec import decode_events

_json = msgspec.json.Encoder(enc_hook=game.enc_hook)  # a state's draw streams: a dict in name order
MAX_PAGE = 5000
MAX_SEQ = wire.MAX_SEQ


class ClosingWindow(msgspec.Struct, frozen=True, kw_only=True):
    challenge: str
    round: int
    status: str
    closes_at: float  # epoch seconds, the server's clock


class ClosingWindows(msgspec.Struct, frozen=True, kw_only=True):
    now: float  # the server's clock when it answered
    windows: list[ClosingWindow]


class LoggedEvent(wire.Frame, frozen=True, kw_only=True, tag="event"):
    """The websocket's ``event`` frame, typed with every event for the OpenAPI schema."""

    seq: int
    event: game.AnyEvent  # type: ignore[valid-type]


def visible(request: Request, grant: Grant, session: str, after: int, upto: int | None,
            limit: int | None) -> list[LoggedEvent]:
    """The (seq, event) frames ``grant`` may see in (after, upto], at most ``limit``."""
    store = runtime(request).store
    viewer = grant.actor
    out: list[LoggedEvent] = []
    while limit is None or len(out) < limit:
        rows = store.read_after(session, after, limit=MAX_PAGE)
        if upto is not None:
            rows = [r for r in rows if r.seq <= upto]
        if not rows:
            break
        for row, event in zip(rows, decode_events([r.data for r in rows])):
            seen = views.view(event, viewer)
            if seen is not None:
                out.append(LoggedEvent(seq=row.seq, event=seen))
                if limit is not None and len(out) >= limit:
                    break
        after = rows[-1].seq
    return out


class EventsController(Controller):
    path = "/sessions/{session:str}"
    tags = ["events"]
    dependencies = DEPENDENCIES
    security = SECURITY

    @get("/events", raises=SESSION_RAISES, summary="Events after a seq, each in the form this token may see")
    async def events(
        self, request: Request, grant: GrantDep, session: SessionPath,
        after: Annotated[int, Parameter(ge=0, le=MAX_SEQ, description="exclusive: events with seq > after")] = 0,
        limit: Annotated[int, Parameter(ge=1, le=MAX_PAGE)] = 1000,
    ) -> list[LoggedEvent]:
        # at most ``limit`` rows read and decoded: on the store's thread, as a hello's resync
        return await runtime(request).chronicle.work.run(visible, request, grant, session, after, None, limit)

    @get("/state", raises=SESSION_RAISES, summary="The live state at the head, or the whole state at a seq: the true "
         "state for a storyteller, the state folded from its own view for anyone else")
    async def state(
        self, request: Request, grant: GrantDep, session: SessionPath,
        at: Annotated[int, Parameter(ge=0, le=MAX_SEQ, description="a seq: the whole state then, finished "
                                     "challenges included; 0 (the default): the head, live")] = 0,
    ) -> Response[dict[str, Any]]:
        # a dict in the schema, not GameState: Litestar's schema generator cannot take its
        # dict defaults; the body is the state's own JSON, as msgspec encodes it
        rt = runtime(request)
        if not at:  # the head: from the view's projection, finished challenges counted, not sent
            body = await rt.chronicle.work.walk(rt.projections.state_json, session, grant.actor)
        else:
            body = await rt.chronicle.work.walk(_state_at, request, grant, session, at)
        return Response(content=body, media_type=MediaType.JSON)

    @get("/windows", raises=SESSION_RAISES, summary="MET-16: the retest and overbid windows a timer will close, "
         "each with when, on the server's clock: a player's own challenges only")
    async def windows(self, request: Request, grant: GrantDep, session: SessionPath) -> ClosingWindows:
        rt = runtime(request)
        viewer = grant.actor
        state = await rt.chronicle.state_now(session)
        out = []
        for cid, (round_, status, at) in sorted(rt.timers.closing(session).items()):
            if viewer.role == "storyteller" or (viewer.role == "player" and viewer.character in met.get(state, cid).sides):
                out.append(ClosingWindow(challenge=cid, round=round_, status=status, closes_at=at))
        return ClosingWindows(now=time.time(), windows=out)

    @get("/state/done", raises=SESSION_RAISES, summary="Finished challenges of the state at the head, by challenge "
         "number, a page at a time (GET /state counts them and carries only the last few)")
    async def done(
        self, request: Request, grant: GrantDep, session: SessionPath,
        after: Annotated[int, Parameter(ge=0, le=MAX_SEQ, description="a challenge number (c12: 12); exclusive: "
                                        "challenges numbered above it")] = 0,
        limit: Annotated[int, Parameter(ge=1, le=DONE_PAGE)] = DONE_PAGE,
    ) -> Response[dict[str, Any]]:
        rt = runtime(request)
        body = await rt.chronicle.work.walk(rt.projections.done_json, session, grant.actor, after, limit)
        return Response(content=body, media_type=MediaType.JSON)


def _state_at(request: Request, grant: Grant, session: str, at: int) -> bytes:
    """A past state: folded from the log up to ``at`` (a dispute's question, not a phone's)."""
    rt = runtime(request)
    if grant.role == "storyteller":
        return _json.encode(rt.store.load_state(session, at))
    frames = visible(request, grant, session, 0, at, None)
    state = game.fold(f.event for f in frames)  # already in this viewer's forms
    head = frames[-1].seq if frames else 0
    return _json.encode(msgspec.structs.replace(state, head=head))
