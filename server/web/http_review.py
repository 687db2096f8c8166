"""Dispute review and export over HTTP (issue 7).

The review (timeline, challenge stories, scene slider, fairness, the bundle the review
page loads) is for storytellers; the export and the chain's verification answer any
token of the session, each export in the caller's own view (a player's holds only what
that player was sent). The work is a walk over the session's rows, done off the event
loop so live play is not held up by a long evening's review.
"""

from __future__ import annotations

import asyncio
from typing import Annotated, Any, Literal

import msgspec
from litestar import Controller, Request, Response, get
from litestar.exceptions import NotAuthorizedException, NotFoundException, PermissionDeniedException
from litestar.params import FromPath, FromQuery, Parameter

from conteur.server.audit import export as ex
from conteur.server.audit import review as rv
from conteur.events import wire
from conteur.server.core.auth import Grant
from conteur.server.web.http_common import DEPENDENCIES, SECURITY, GrantDep, runtime, storyteller_only, SessionPath

RAISES = [NotAuthorizedException, PermissionDeniedException, NotFoundException]  # 401, 403, 404
Lang = Literal["en", "fr"]
Format = Literal["md", "html", "jsonl", "csv"]


_CACHE: dict[tuple, rv.Review] = {}
_CACHE_SIZE = 8  # a few storytellers stepping through a few sessions


async def _review(request: Request, grant: Grant, session: str, lang: str = "en") -> rv.Review:
    """The session's review for this caller, rebuilt only when the session has moved on:
    stepping the slider asks for one state after another."""
    store = runtime(request).store
    head = await asyncio.to_thread(store.session_head, session)
    if not head:
        raise NotFoundException(f"no session {session!r}")
    key = (id(store), session, grant.actor, lang, head)
    review = _CACHE.get(key)
    if review is None:
        review = await asyncio.to_thread(rv.build, store, session, grant.actor, lang)
        while len(_CACHE) >= _CACHE_SIZE:
            _CACHE.pop(next(iter(_CACHE)))
        _CACHE[key] = review
    return review


async def _scene_review(request: Request, grant: Grant, session: str, scene: str, lang: str) -> rv.Review:
    review = await _review(request, grant, session, lang)
    if scene not in review.scenes:
        raise NotFoundException(f"no scene {scene!r} in session {session!r}")
    return review


class ReviewController(Controller):
    path = "/sessions/{session:str}"
    tags = ["review"]
    dependencies = DEPENDENCIES
    security = SECURITY

    @get("/review", guards=[storyteller_only], raises=RAISES,
         summary="Everything the review page shows: timeline, challenges, disputes first, verification, fairness")
    async def bundle(self, request: Request, grant: GrantDep, session: SessionPath,
                     lang: FromQuery[Lang] = "en") -> dict[str, Any]:
        review = await _review(request, grant, session, lang)
        return await asyncio.to_thread(rv.bundle, review)

    @get("/review/timeline", guards=[storyteller_only], raises=RAISES,
         summary="The session's events as sentences, filtered by character, challenge, scene and event type")
    async def timeline(
        self, request: Request, grant: GrantDep, session: SessionPath,
        lang: FromQuery[Lang] = "en", character: FromQuery[str | None] = None,
        challenge: FromQuery[str | None] = None, scene: FromQuery[str | None] = None,
        type: Annotated[str | None, Parameter(description="an event type, or a prefix: met, offline, v5")] = None,
    ) -> list[dict[str, Any]]:
        review = await _review(request, grant, session, lang)
        items = rv.timeline(review, character=character, challenge=challenge, scene=scene, type=type)
        return [rv.item_dict(i) for i in items]

    @get("/review/challenges/{challenge:str}", guards=[storyteller_only], raises=RAISES,
         summary="One challenge (or offline record) and its whole story: who won and why, who saw what when")
    async def challenge(self, request: Request, grant: GrantDep, session: SessionPath,
                        challenge: FromPath[str], lang: FromQuery[Lang] = "en") -> dict[str, Any]:
        story = rv.challenge_story(await _review(request, grant, session, lang), challenge)
        if story is None:
            raise NotFoundException(f"no challenge {challenge!r} in session {session!r}")
        return msgspec.to_builtins(story)

    @get("/review/scenes/{scene:str}/steps", guards=[storyteller_only], raises=RAISES,
         summary="The slider's stops: every event that concerns the scene (seq, time, sentence)")
    async def scene_steps(self, request: Request, grant: GrantDep, session: SessionPath,
                          scene: FromPath[str], lang: FromQuery[Lang] = "en") -> list[dict[str, Any]]:
        review = await _scene_review(request, grant, session, scene, lang)
        return msgspec.to_builtins(rv.scene_index(review, scene))

    @get("/review/scenes/{scene:str}/state", guards=[storyteller_only], raises=RAISES,
         summary="The scene's state at a seq: who is there, Time Out, its challenges with throws and bids")
    async def scene_state(
        self, request: Request, grant: GrantDep, session: SessionPath, scene: FromPath[str],
        at: Annotated[int, Parameter(ge=0, le=wire.MAX_SEQ, description="a seq")],
        lang: FromQuery[Lang] = "en",
    ) -> dict[str, Any]:
        review = await _scene_review(request, grant, session, scene, lang)
        view = await asyncio.to_thread(rv.scene_at, review, scene, at)
        if view is None:
            raise NotFoundException(f"scene {scene!r} has no event at or before seq {at}")
        return msgspec.to_builtins(view)

    @get("/review/fairness", guards=[storyteller_only], raises=RAISES,
         summary="Every die face and throw against the uniform share; challenges won and lost per character")
    async def fairness(self, request: Request, grant: GrantDep, session: SessionPath) -> dict[str, Any]:
        return msgspec.to_builtins(rv.fairness(await _review(request, grant, session)))

    @get("/review/verify", raises=RAISES,
         summary="The session's hash chain (and, once closed, its fair draws): verified or the first bad seq")
    async def verify(self, request: Request, grant: GrantDep, session: SessionPath) -> dict[str, Any]:
        rows = await asyncio.to_thread(runtime(request).store.read_after, session, 0)
        if not rows:
            raise NotFoundException(f"no session {session!r}")
        return msgspec.to_builtins(await asyncio.to_thread(rv.verify, rows, "", grant.actor))

    @get("/export", raises=RAISES, media_type="text/plain",
         summary="The session as md or html (the chronicle record), jsonl or csv, in the caller's view")
    async def export(self, request: Request, grant: GrantDep, session: SessionPath,
                     format: FromQuery[Format] = "html", lang: FromQuery[Lang] = "en",
                     download: FromQuery[bool] = False) -> Response[bytes]:
        review = await _review(request, grant, session, lang)
        data = await asyncio.to_thread(ex.render, review, format)
        disposition = "attachment" if download or format in ("jsonl", "csv") else "inline"
        name = ex.filename(session, format, lang)
        return Response(content=data, media_type=ex.MEDIA_TYPES[format].split(";")[0],
                        headers={"Content-Disposition": ex.content_disposition(disposition, name)})
