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
from litestar.params import Parameter

from server import export as ex
from server import review as rv
from server.auth import Grant
from server.http_common import DEPENDENCIES, SECURITY, runtime, storyteller_only

RAISES = [NotAuthorizedException, PermissionDeniedException, NotFoundException]  # 401, 403, 404
Lang = Literal["en", "fr"]
Format = Literal["md", "html", "jsonl", "csv"]


async def _review(request: Request, grant: Grant, session: str, lang: str = "en") -> rv.Review:
    store = runtime(request).store
    if session not in store.sessions():
        raise NotFoundException(f"no session {session!r}")
    return await asyncio.to_thread(rv.build, store, session, grant.actor, lang)


class ReviewController(Controller):
    path = "/sessions/{session:str}"
    tags = ["review"]
    dependencies = DEPENDENCIES
    security = SECURITY

    @get("/review", guards=[storyteller_only], raises=RAISES,
         summary="Everything the review page shows: timeline, challenges, disputes first, verification, fairness")
    async def bundle(self, request: Request, grant: Grant, session: str, lang: Lang = "en") -> dict[str, Any]:
        review = await _review(request, grant, session, lang)
        return await asyncio.to_thread(rv.bundle, review)

    @get("/review/timeline", guards=[storyteller_only], raises=RAISES,
         summary="The session's events as sentences, filtered by character, challenge, scene and event type")
    async def timeline(
        self, request: Request, grant: Grant, session: str, lang: Lang = "en",
        character: str | None = None, challenge: str | None = None, scene: str | None = None,
        type: Annotated[str | None, Parameter(description="an event type, or a prefix: met, offline, v5")] = None,
    ) -> list[dict[str, Any]]:
        review = await _review(request, grant, session, lang)
        items = rv.timeline(review, character=character, challenge=challenge, scene=scene, type=type)
        return [rv.item_dict(i) for i in items]

    @get("/review/challenges/{challenge:str}", guards=[storyteller_only], raises=RAISES,
         summary="One challenge (or offline record) and its whole story: who won and why, who saw what when")
    async def challenge(self, request: Request, grant: Grant, session: str, challenge: str,
                        lang: Lang = "en") -> dict[str, Any]:
        story = rv.challenge_story(await _review(request, grant, session, lang), challenge)
        if story is None:
            raise NotFoundException(f"no challenge {challenge!r} in session {session!r}")
        return msgspec.to_builtins(story)

    @get("/review/scenes/{scene:str}/steps", guards=[storyteller_only], raises=RAISES,
         summary="The scene's state after each event that concerns it: the review's slider")
    async def scene_steps(self, request: Request, grant: Grant, session: str, scene: str,
                          lang: Lang = "en") -> list[dict[str, Any]]:
        review = await _review(request, grant, session, lang)
        if scene not in review.scenes:
            raise NotFoundException(f"no scene {scene!r} in session {session!r}")
        return msgspec.to_builtins(await asyncio.to_thread(rv.scene_steps, review, scene))

    @get("/review/fairness", guards=[storyteller_only], raises=RAISES,
         summary="Every die face and throw against the uniform share; challenges won and lost per character")
    async def fairness(self, request: Request, grant: Grant, session: str) -> dict[str, Any]:
        return msgspec.to_builtins(rv.fairness(await _review(request, grant, session)))

    @get("/review/verify", raises=RAISES,
         summary="The session's hash chain (and, once closed, its fair draws): verified or the first bad seq")
    async def verify(self, request: Request, grant: Grant, session: str) -> dict[str, Any]:
        store = runtime(request).store
        if session not in store.sessions():
            raise NotFoundException(f"no session {session!r}")
        rows = await asyncio.to_thread(store.read_after, session, 0)
        return msgspec.to_builtins(await asyncio.to_thread(rv.verify, rows))

    @get("/export", raises=RAISES, media_type="text/plain",
         summary="The session as md or html (the chronicle record), jsonl or csv, in the caller's view")
    async def export(self, request: Request, grant: Grant, session: str, format: Format = "html",
                     lang: Lang = "en", download: bool = False) -> Response[bytes]:
        review = await _review(request, grant, session, lang)
        data = await asyncio.to_thread(ex.render, review, format)
        disposition = "attachment" if download or format in ("jsonl", "csv") else "inline"
        name = ex.filename(session, format, lang)
        return Response(content=data, media_type=ex.MEDIA_TYPES[format].split(";")[0],
                        headers={"Content-Disposition": f'{disposition}; filename="{name}"'})
