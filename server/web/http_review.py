"""Dispute review and export over HTTP.

The review (timeline, challenge stories, scene slider, fairness, the bundle the review
page loads) is for storytellers; the export and the chain's verification answer any
token of the session, each export in the caller's own view (a player's holds only what
that player was sent). The work is a walk over the session's rows, done off the event
loop so live play is not held up by a long evening's review.
"""

from __future__ import annotations

import asyncio
import collections
import logging
import threading
import weakref
from typing import Annotated, Any, Literal

import msgspec
from litestar import Controller, Request, get
from litestar.response import Stream
from litestar.exceptions import NotAuthorizedException, NotFoundException, PermissionDeniedException, TooManyRequestsException
from litestar.params import FromPath, FromQuery, Parameter

from conteur.server.audit import export as ex
from conteur.server.audit import kept as snapshots
from conteur.server.audit import review as rv
from conteur.server.audit import timeline as review_timeline
from conteur.server.audit import checks
from conteur.server.audit import page as review_page
from conteur.server.audit import scenes as review_scenes
from conteur.server.audit import stories as review_stories
from conteur.server.audit import streamed
from conteur.events import wire
from conteur.server.core import heap
from conteur.server.core.auth import Grant
from conteur.server.web.http_common import (DEPENDENCIES, SECURITY, GrantDep, answered_as, runtime,
                                            storyteller_only, SessionPath)

RAISES = [NotAuthorizedException, PermissionDeniedException, NotFoundException, TooManyRequestsException]  # 401, 403, 404, 429
Lang = Literal["en", "fr"]
Format = Literal["md", "html", "jsonl", "csv"]
PAGE = 5000  # rows or challenges a page of the review holds at most


log = logging.getLogger("conteur.review")


class _Typed(Stream):
    """A stream with its own media type: Litestar gives a route's (the one its return
    annotation implies, for the export, whose type depends on its format) precedence over
    a ``Stream``'s."""

    def to_asgi_response(self, *args, media_type=None, **kwargs):
        return super().to_asgi_response(*args, media_type=self.media_type or media_type, **kwargs)


class _Kept:
    """One review being kept up to date, and its latest snapshot for readers in threads."""

    def __init__(self, builder: rv.Builder):
        self.builder = builder
        self.lock = threading.Lock()
        self.snapshot: rv.Review | None = None
        self.restored = False  # its stored snapshot looked for (at its first catch-up)
        self.saved = 0  # the seq its last stored snapshot was taken at


# a kept review taken this many events past its last stored snapshot saves one
# (server/audit/kept.py): after a restart, the first screen is that snapshot and the rows after it.
# It is taken and written on the snapshots' thread (``Projections.later``), not in the request
# that took the events: a whole review's snapshot grows with the night (about 15 MB at 735,000
# events, written with an fsync), and the hour's first screen must not pay for it
SAVE_EVERY = 20_000


# per store (weakly: a closed venue's reviews go with it), a few reviews by (session,
# viewer, lang), least recently used dropped first: a few storytellers, a few sessions.
# A kept review holds a few pages of items and, per event of its session, its seq, scene
# and a share of its challenge's marks, about 50 bytes (server/audit/paged.py; 600 with
# every item held decoded). The bound is on the events held too: at most
# _KEPT_EVENTS timeline items over all of a store's reviews, the one being asked for
# aside; a dropped one is built again from the store.
_KEPT: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()
_KEPT_SIZE = 8
_KEPT_EVENTS = 1_500_000
_KEPT_LOCK = threading.Lock()  # asked for on the event loop, trimmed after a catch-up in a thread


def _kept(store, session: str, actor, lang: str) -> _Kept:
    with _KEPT_LOCK:
        kept = _KEPT.setdefault(store, collections.OrderedDict())
        key = (session, actor, lang)
        found = kept.get(key)
        if found is None:
            while len(kept) >= _KEPT_SIZE:
                kept.popitem(last=False)
            found = kept[key] = _Kept(rv.Builder(session, actor, lang, keep_rows=False, store=store))
        kept.move_to_end(key)
    return found


def _trim(store, keep: _Kept) -> None:
    """Drops the least recently asked reviews while they hold more than _KEPT_EVENTS
    items in all, ``keep`` (the one just asked for) aside."""
    with _KEPT_LOCK:
        kept = _KEPT.get(store, {})
        held = sum(len(k.builder.items) for k in kept.values())
        for key in [k for k, v in kept.items() if v is not keep]:  # least recently asked first
            if held <= _KEPT_EVENTS:
                break
            held -= len(kept.pop(key).builder.items)


CATCH_UP = 5000  # rows read and decoded at a time: an hour of play is not held at once


def _catch_up(store, kept: _Kept, session: str) -> None:
    """Takes the rows committed since the review last looked (under ``kept.lock``), a
    chunk at a time: the rows and their decoded events of a whole hour at once (about
    1.2 KB per event) would raise the server's memory for good (freed, not returned).
    A review never taken starts from its stored snapshot, if it has a usable one."""
    if not kept.restored:
        kept.restored = True
        if not kept.builder.head:
            b = kept.builder
            found = snapshots.load(store, session, b.viewer, b.lang, store.session_head(session))
            if found is not None:
                kept.builder, kept.saved, kept.snapshot = found, found.head, None
    # entries, not rows: a kept review keeps no rows (its verification reads them again)
    while (taken := rv.read_session(store, session, kept.builder.head, CATCH_UP, whole=False))[0]:
        kept.builder.extend(*taken)
        # the marks of the challenges these rows touched, while their items are still held:
        # later, the pages behind them would be read from the store again (server/audit/paged.py)
        kept.builder.marks()
        kept.snapshot = None


FOLLOW_EVERY = 2.0  # seconds between a kept review's looks at its session's log


def follow(store) -> None:
    """Catches each kept review of ``store`` up with its session's log, one after another;
    a review a request is catching up or reading (its lock held) is left to that request."""
    with _KEPT_LOCK:
        kept = list(_KEPT.get(store, {}).items())
    for (session, _viewer, _lang), k in kept:
        if not k.restored or not k.lock.acquire(blocking=False):
            continue  # never asked for yet (its first catch-up is a request's), or busy
        try:
            if store.session_head(session) > k.builder.head:
                _catch_up(store, k, session)
                _trim(store, k)
        finally:
            k.lock.release()


class Follower:
    """Keeps a store's kept reviews caught up between requests: the first screen a
    storyteller asks after an hour of play then tells what changed, without first taking
    the hour's events (120,000 at a venue's rate, 2-3 s of a core).
    What a review answers is the same either way: a request still takes the rows committed
    since the last look before it answers, and a review's catch-up is the same by chunks of
    any size. It saves nothing: a review's snapshot is queued after an answer (``_save``).
    A task of the server's loop, each look done in the loop's worker threads as a
    request's catch-up is; ``close`` waits for the look under way. A look that fails is
    logged (``conteur.review``) once for its kind of failure, and the looks go on."""

    def __init__(self, store, every: float | None = None):
        self.store = store
        self.every = every or FOLLOW_EVERY
        self.failed: set[str] = set()  # the kinds of failure already logged
        self._stop = asyncio.Event()
        self._task = asyncio.get_running_loop().create_task(self._run())

    async def _run(self) -> None:
        while True:
            try:
                await asyncio.wait_for(self._stop.wait(), self.every)
                return
            except asyncio.TimeoutError:
                pass
            try:
                await asyncio.to_thread(follow, self.store)
            except Exception as e:  # noqa: BLE001 - a read that failed: the next request catches up as before
                # logged once per kind of failure: a look every two seconds all night
                # would flood the log with the same one (a full disk, a locked file)
                kind = type(e).__qualname__
                if kind not in self.failed:
                    self.failed.add(kind)
                    log.warning("kept reviews: a look at the log failed (%s: %s); still following, "
                                "a request catches its review up itself", kind, e, exc_info=e)

    async def close(self) -> None:
        """Ends the looks (after the one under way): before the store is closed."""
        self._stop.set()
        await self._task


def _save(store, kept: _Kept, later) -> None:
    """Queues the kept review's snapshot on ``later`` (the snapshots' thread) once it took
    SAVE_EVERY events past its last; called after an answer, so that the snapshot holds the
    briefs told for it."""
    if kept.builder.head - kept.saved >= SAVE_EVERY:
        later(_write, store, kept)
        kept.saved = kept.builder.head  # tried: a failed save is tried again SAVE_EVERY later


def _write(store, kept: _Kept) -> None:
    """The kept review as it stands when the snapshots' thread comes to it (under its lock
    only while copied), then encoded and written without the lock."""
    with kept.lock:
        taken = snapshots.taken(kept.builder)
    snapshots.write(store, taken)
    del taken
    heap.trim()


def _snapshot(store, kept: _Kept, session: str, later) -> tuple[rv.Review, int]:
    """The review so far and the last seq it took (seen by its viewer or not)."""
    with kept.lock:
        _catch_up(store, kept, session)
        _trim(store, kept)
        if kept.snapshot is None:
            kept.snapshot = kept.builder.review()
        _save(store, kept, later)
        return kept.snapshot, kept.builder.head


def _walk(request: Request, fn, *args):
    """``fn(*args)`` off the event loop, in its worker threads (``StoreWork.walk``): a
    review's walk takes seconds of a core, which the store's own thread never waits for."""
    return runtime(request).chronicle.work.walk(fn, *args)


async def _find(request: Request, grant: Grant, session: str, lang: str) -> _Kept:
    rt = runtime(request)
    head = await rt.chronicle.work.run(rt.store.session_head, session)
    if not head:
        raise NotFoundException(f"no session {session!r}")
    return _kept(rt.store, session, grant.actor, lang)


async def _review(request: Request, grant: Grant, session: str, lang: str = "en") -> rv.Review:
    """The session's review for this caller, extended with what happened since it was
    last asked for, never walked again from the first event."""
    kept = await _find(request, grant, session, lang)
    rt = runtime(request)
    review, _head = await _walk(request, _snapshot, rt.store, kept, session, rt.projections.later)
    return review


def _with_builder(rt, kept: _Kept, session: str, read):
    with kept.lock:
        _catch_up(rt.store, kept, session)
        _trim(rt.store, kept)
        out = read(kept.builder)
        _save(rt.store, kept, rt.projections.later)
        return out


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
                     lang: FromQuery[Lang] = "en") -> Stream:
        # streamed by parts, each made in a worker thread as the last is sent: its memory
        # is a chunk of rows and a few pages of items at any length of night; it is whole
        # once its closing brace came (server/audit/streamed.py)
        kept = await _find(request, grant, session, lang)
        rt = runtime(request)
        took = await _walk(request, _with_builder, rt, kept, session, streamed.taken)
        return Stream(streamed.bundle(rt.store, took), media_type="application/json")

    @get("/review/first", guards=[storyteller_only], raises=RAISES,
         summary="The review page's first screen, the same size at any length of night: disputes first, the "
                 "first challenges and timeline rows and how many there are; the rest by pages")
    async def first(self, request: Request, grant: GrantDep, session: SessionPath,
                    lang: FromQuery[Lang] = "en") -> dict[str, Any]:
        kept = await _find(request, grant, session, lang)
        return await _walk(request, _with_builder, runtime(request), kept, session, review_page.first_screen)

    @get("/review/items", guards=[storyteller_only], raises=RAISES,
         summary="Timeline rows after a seq, without their events (a page of the review's timeline)")
    async def items(
        self, request: Request, grant: GrantDep, session: SessionPath, lang: FromQuery[Lang] = "en",
        after: Annotated[int, Parameter(ge=0, le=wire.MAX_SEQ, description="exclusive: rows with seq > after")] = 0,
        limit: Annotated[int, Parameter(ge=1, le=PAGE)] = PAGE,
    ) -> list[dict[str, Any]]:
        review = await _review(request, grant, session, lang)
        # off the loop: a page of a kept review may be read from the store again (server/audit/paged.py)
        return await _walk(request, review_page.items_page, review, after, limit)

    @get("/review/challenges", guards=[storyteller_only], raises=RAISES,
         summary="Challenge briefs in log order from an offset (a page of the review's challenges)")
    async def challenges(
        self, request: Request, grant: GrantDep, session: SessionPath, lang: FromQuery[Lang] = "en",
        offset: Annotated[int, Parameter(ge=0, le=wire.MAX_SEQ)] = 0,
        limit: Annotated[int, Parameter(ge=1, le=PAGE)] = PAGE,
    ) -> list[dict[str, Any]]:
        kept = await _find(request, grant, session, lang)
        return await _walk(request, _with_builder, runtime(request), kept, session,
                                       lambda b: review_page.challenges_page(b, offset, limit))

    @get("/review/timeline", guards=[storyteller_only], raises=RAISES,
         summary="The session's events as sentences, filtered by character, challenge, scene and event type")
    async def timeline(
        self, request: Request, grant: GrantDep, session: SessionPath,
        lang: FromQuery[Lang] = "en", character: FromQuery[str | None] = None,
        challenge: FromQuery[str | None] = None, scene: FromQuery[str | None] = None,
        type: Annotated[str | None, Parameter(description="an event type, or a prefix: met, offline, v5")] = None,
    ) -> list[dict[str, Any]]:
        review = await _review(request, grant, session, lang)

        def read() -> list[dict[str, Any]]:
            items = review_timeline.timeline(review, character=character, challenge=challenge, scene=scene, type=type)
            return [review_page.item_dict(i) for i in items]
        return await _walk(request, read)

    @get("/review/challenges/{challenge:str}", guards=[storyteller_only], raises=RAISES,
         summary="One challenge (or offline record) and its whole story: who won and why, who saw what when")
    async def challenge(self, request: Request, grant: GrantDep, session: SessionPath,
                        challenge: FromPath[str], lang: FromQuery[Lang] = "en") -> dict[str, Any]:
        story = await _walk(request, review_stories.challenge_story, await _review(request, grant, session, lang), challenge)
        if story is None:
            raise NotFoundException(f"no challenge {challenge!r} in session {session!r}")
        return msgspec.to_builtins(story)

    @get("/review/scenes/{scene:str}/steps", guards=[storyteller_only], raises=RAISES,
         summary="The slider's stops: every event that concerns the scene (seq, time, sentence)")
    async def scene_steps(self, request: Request, grant: GrantDep, session: SessionPath,
                          scene: FromPath[str], lang: FromQuery[Lang] = "en") -> list[dict[str, Any]]:
        review = await _scene_review(request, grant, session, scene, lang)
        return msgspec.to_builtins(await _walk(request, review_scenes.scene_index, review, scene))

    @get("/review/scenes/{scene:str}/state", guards=[storyteller_only], raises=RAISES,
         summary="The scene's state at a seq: who is there, Time Out, its challenges with throws and bids")
    async def scene_state(
        self, request: Request, grant: GrantDep, session: SessionPath, scene: FromPath[str],
        at: Annotated[int, Parameter(ge=0, le=wire.MAX_SEQ, description="a seq")],
        lang: FromQuery[Lang] = "en",
    ) -> dict[str, Any]:
        review = await _scene_review(request, grant, session, scene, lang)
        view = await _walk(request, review_scenes.scene_at, review, scene, at)
        if view is None:
            raise NotFoundException(f"scene {scene!r} has no event at or before seq {at}")
        return msgspec.to_builtins(view)

    @get("/review/fairness", guards=[storyteller_only], raises=RAISES,
         summary="Every die face and throw against the uniform share; challenges won and lost per character")
    async def fairness(self, request: Request, grant: GrantDep, session: SessionPath,
                       lang: FromQuery[Lang] = "en") -> dict[str, Any]:
        # the page's language: its review is the one already kept, not another one walked
        review = await _review(request, grant, session, lang)
        return msgspec.to_builtins(await _walk(request, checks.fairness, review))

    @get("/review/verify", raises=RAISES,
         summary="The session's hash chain (and, once closed, its fair draws): verified or the first bad seq")
    async def verify(self, request: Request, grant: GrantDep, session: SessionPath) -> dict[str, Any]:
        rt = runtime(request)
        store = rt.store
        head = await rt.chronicle.work.run(store.session_head, session)
        if not head:
            raise NotFoundException(f"no session {session!r}")
        # two passes over the rows by chunks, none of the night held (server/audit/streamed.py)
        verification = await _walk(request, 
            streamed.verify_session, lambda: streamed.session_rows(store, session, head), session, grant.actor)
        return msgspec.to_builtins(verification)

    # its 200 answer's type is its format's (each documented); its errors are JSON
    @get("/export", raises=RAISES, operation_class=answered_as(*(t.split(";")[0] for t in ex.MEDIA_TYPES.values())),
         summary="The session as md or html (the chronicle record), jsonl or csv, in the caller's view")
    async def export(self, request: Request, grant: GrantDep, session: SessionPath,
                     format: FromQuery[Format] = "html", lang: FromQuery[Lang] = "en",
                     download: FromQuery[bool] = False) -> _Typed:
        kept = await _find(request, grant, session, lang)
        rt = runtime(request)
        store = rt.store
        review, head = await _walk(request, _snapshot, store, kept, session, rt.projections.later)

        def rows():
            return streamed.session_rows(store, session, head)

        # written as it is made (server/audit/streamed.py): a chunk of rows and a few pages
        # of items at a time; a failure midway ends the body without chunked encoding's
        # last chunk, which a browser or curl reports as a download that failed
        parts = ex.render_parts(review, format, rows=rows,
                                verification=lambda: streamed.verify_session(rows, session, grant.actor))
        disposition = "attachment" if download or format in ("jsonl", "csv") else "inline"
        name = ex.filename(session, format, lang)
        return _Typed(parts, media_type=ex.MEDIA_TYPES[format].split(";")[0],
                      headers={"Content-Disposition": ex.content_disposition(disposition, name)})
