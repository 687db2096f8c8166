"""The Litestar application: ``create_app``, and ``Served`` to run it on a thread.

The lifespan opens the store (unless given one), builds the ``Chronicle`` (the command
path), the token table and the hub, and closes the store at shutdown. One process serves
a SQLite file; a PostgreSQL store takes several (``serve --workers``, or ``serve`` on
several hosts), each following the others' commits through the store's tail. Uvicorn runs with permessage-deflate off (it costs 2-3x at 300 devices, DESIGN)
and a hard frame limit above the protocol's 64 KiB, which the endpoint enforces with a
readable ``error``. ``conteur serve`` (conteur.server.cli.serve) runs it on a port.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import socket
import threading
from pathlib import Path
from typing import Any, AsyncIterator, Callable

import msgspec
import uvicorn
from litestar import Litestar, MediaType, Request, Response
from litestar.config.compression import CompressionConfig
from litestar.exceptions import TooManyRequestsException
from litestar.openapi import OpenAPIConfig
from litestar.openapi.spec import Components, SecurityScheme
from litestar.static_files import create_static_files_router

from conteur.server.core.auth import Tokens
from conteur.server.core.heap import fix_mmap_threshold
from conteur.events import nesting
from conteur.events.catalogue import MESSAGES_DIR
from conteur.server.core.hub import Hub
from conteur.server.core.limits import Limits
from conteur.server.core.offload import Outage
from conteur.server.core.projections import Projections
from conteur.server.core.safety import SafetyCalls
from conteur.server.core.service import Chronicle
from conteur.server.store.codec import decode_events
from conteur.server.store.interface import EventStore, StoreError
from conteur.server.store.factory import open_store
from conteur.server.core.timers import WindowTimers
from conteur.server.web.headers import security_headers
from conteur.server.web.health import health
from conteur.server.web.http_common import unavailable
from conteur.server.web.limits import body_limit
from conteur.server.web.schema_page import VendoredRedoc
from conteur.server.web.ws import ws_endpoint



def _web_dir() -> Path | None:
    """The web app's folder, as the installed client declares it (the ``conteur.web`` entry
    point of pyproject.toml): the server never imports the client by name."""
    from importlib.metadata import entry_points

    for ep in entry_points(group="conteur.web", name="app"):
        return Path(ep.load())
    return None


WEB_DIR = _web_dir()
HARD_FRAME_LIMIT = 1 << 20  # above this uvicorn closes with 1009; below, the app answers


class Settings(msgspec.Struct, kw_only=True):
    origins: tuple[str, ...] = ()  # extra Origins allowed on /ws (same host always is)
    max_frame: int = 64 * 1024
    max_body: int = 64 * 1024  # an HTTP request body, refused above with 413 (server/web/limits.py)
    rate: float = 20.0  # frames per second per connection, sustained
    burst: int = 200  # an offline outbox flushing at once
    sockets_per_token: int = 32  # sockets one token may hold at once (server/core/limits.py)
    bad_credentials: int = 10  # unknown tokens from one address a minute, then refused for the rest of it
    send_queue: int = 4096  # frames waiting for a device before it is dropped
    hello_timeout: float = 30.0
    public_url: str = ""  # the base of join links, when not the request's own host
    wifi: str = ""  # the network phones join, printed beside each QR code of the join sheet
    # how the join sheet finds this machine's LAN addresses (server.lan; tests pass their own)
    lan_addresses: Callable[[], list[str]] | None = None
    window_timers: bool = True  # MET-16: close retest/overbid windows after accept_timeout
    timer_clock: Any = None  # what those timers wait on (conteur.server.core.timers.Clock); tests pass a ManualClock
    ca_file: str = ""  # with --tls: the venue CA served at /ca.crt (conteur.server.web.door)
    https: bool = False  # served over TLS (--tls, --cert): answers carry HSTS


class Runtime:
    """What the handlers share, built by the lifespan: ``app.state.conteur``."""

    def __init__(self, store: EventStore, settings: Settings):
        self.store = store
        self.settings = settings
        self.chronicle = Chronicle(store)
        self.tokens = Tokens(store)
        self.hub = Hub(store, tokens=self.tokens, run=self.chronicle.work.run)  # revoked tokens lose their sockets
        self.timers = WindowTimers(self.chronicle, settings.timer_clock)
        self.projections = Projections(store)  # GET /state: per view, not folded per call
        # a token's commands (websocket and HTTP together), its sockets, an address's bad tokens
        self.limits = Limits(rate=settings.rate, burst=settings.burst, sockets=settings.sockets_per_token,
                             bad=settings.bad_credentials)
        self.chronicle.listeners.append(self.hub.on_executed)
        self.safety = SafetyCalls(self.chronicle, self.hub)  # every storyteller hears a safety call
        self.chronicle.listeners.append(self.safety.on_executed)
        if settings.window_timers:
            self.chronicle.listeners.append(self.timers.on_executed)
        self.follower = None
        self.name = f"{socket.gethostname()}:{os.getpid()}"  # welcome and /health name the process
        self.outage = Outage()  # failed commands logged in a few lines, not one traceback each

    def follow(self) -> None:
        """With a store other processes append to (PostgreSQL): their commits reach this
        process's devices, states and timers through the store's tail."""
        follow = getattr(self.store, "follow", None)
        if follow is None:  # a SQLite file has one writer: this process
            return
        loop = asyncio.get_running_loop()

        def deliver(rows) -> None:
            items = list(zip((r.seq for r in rows), (r.session for r in rows),
                             decode_events([r.data for r in rows])))
            self.hub.on_committed(items)
            loop.call_soon_threadsafe(self._remote, items)

        self.follower = follow(self.hub.delivered, deliver)
        self.hub.tailed = True

    def _remote(self, items: list) -> None:
        self.chronicle.take_remote(items)
        self.safety.on_remote(items)
        if self.settings.window_timers:
            for session in {session for _, session, _ in items}:
                self.timers.on_remote(session)

    def stop_following(self) -> None:
        if self.follower is not None:
            self.follower.close()
            self.follower = None


async def refuse_deep_bodies(request: Request) -> Response | None:
    """Every HTTP body is checked for nesting before Litestar decodes it (msgspec recurses:
    a 50,000-deep body raised a RecursionError, an HTTP 500). Guards have run already, so
    an unauthorised caller still gets 401/403 and learns nothing more. The body read here
    is cached for the handler."""
    if request.method in ("POST", "PUT", "PATCH"):
        body = await request.body()
        if nesting.too_deep(body):
            return Response({"status_code": 400, "detail": nesting.message()}, status_code=400,
                            media_type=MediaType.JSON)
    return None


def too_many_requests(_: Request, exc: TooManyRequestsException) -> Response:
    """A 429 is JSON with its Retry-After on every route, the HTML ones (the join sheet)
    included: a client reads when to come back the same way everywhere."""
    return Response({"status_code": 429, "detail": exc.detail}, status_code=429, media_type=MediaType.JSON,
                    headers=exc.headers or {})


def create_app(db: str | Path | EventStore, *, settings: Settings | None = None,
               web_dir: str | Path | None = WEB_DIR, debug: bool = False) -> Litestar:
    """The app for one chronicle database (a path, opened by the lifespan, or an open
    store, left open)."""
    settings = settings or Settings()

    @contextlib.asynccontextmanager
    async def lifespan(app: Litestar) -> AsyncIterator[None]:
        fix_mmap_threshold()  # server/core/heap.py: big blocks freed (snapshots) leave no mark
        owned = isinstance(db, (str, Path))  # a chronicle file or a postgresql:// URL
        store = open_store(db, create=True) if owned else db
        runtime = Runtime(store, settings)
        runtime.hub.bind()
        runtime.chronicle.preload()
        runtime.chronicle.serve_on(asyncio.get_running_loop())
        if settings.window_timers:
            runtime.timers.bind(store.sessions())
        runtime.follow()
        reviews = ReviewFollower(store)  # kept reviews caught up between requests (http_review.py)
        app.state.conteur = runtime
        try:
            yield
        finally:
            await reviews.close()
            runtime.stop_following()
            runtime.timers.cancel_all()
            runtime.hub.close()
            runtime.projections.close()  # the views' snapshots queued, written before the store goes
            runtime.chronicle.work.close()
            if owned:
                store.close()

    from conteur.server.web.door import ca_certificate, join_sheet_page
    from conteur.server.web.http_api import CONTROLLERS
    from conteur.server.web.http_review import Follower as ReviewFollower, ReviewController

    from conteur.server.web.sealed import open_http_channel, sealed_request

    handlers: list = [health, ws_endpoint, *CONTROLLERS, ReviewController, ca_certificate,
                      join_sheet_page, open_http_channel, sealed_request]
    if web_dir is not None and Path(web_dir).is_dir():
        # the catalogues of messages, which the web app loads beside itself (messages.js)
        handlers.append(create_static_files_router(
            path="/messages", directories=[MESSAGES_DIR], name="messages", include_in_schema=False,
        ))
        handlers.append(create_static_files_router(
            path="/", directories=[Path(web_dir)], html_mode=True, name="web",
            include_in_schema=False,
        ))
    openapi = OpenAPIConfig(
        title="conteur",
        version="0.1.0",
        description="Session server for live-action role-playing games. The websocket "
        "protocol at /ws is described in docs/protocol.md, and its frames, machine-readable, "
        "by the AsyncAPI 3 document at /schema/asyncapi.json.",
        render_plugins=[VendoredRedoc()],  # the page's Redoc from the package, not a CDN
        components=Components(security_schemes={
            "token": SecurityScheme(type="http", scheme="bearer",
                                    description="a storyteller, player or observer token"),
        }),
    )
    # gzip for HTTP answers a browser accepts it for: a big night's review bundle is
    # about 11 MB of JSON, about a tenth of that gzipped, over a venue's hotspot to a
    # tablet (level 6: most of the gain for a fraction of level 9's CPU on a Pi)
    compression = CompressionConfig(backend="gzip", gzip_compress_level=6, minimum_size=1024)
    return Litestar(route_handlers=handlers, lifespan=[lifespan], openapi_config=openapi,
                    compression_config=compression, debug=debug,
                    before_request=refuse_deep_bodies, middleware=[security_headers(settings.https), body_limit(settings.max_body)],
                    request_max_body_size=settings.max_body * 4 // 3 + 4096,  # body_limit's own
                    exception_handlers={TooManyRequestsException: too_many_requests, StoreError: unavailable})


def uvicorn_config(app: Litestar, host: str = "127.0.0.1", port: int = 8000, **extra) -> uvicorn.Config:
    return uvicorn.Config(
        app, host=host, port=port, ws="websockets-sansio", ws_per_message_deflate=False,
        ws_max_size=HARD_FRAME_LIMIT, lifespan="on", log_level=extra.pop("log_level", "warning"),
        **extra,
    )


class Served:
    """A real server on a background thread, for tests and benchmarks.

    ``with Served(create_app(db)) as s: s.url, s.ws_url``. Port 0 picks a free port.
    """

    def __init__(self, app: Litestar, host: str = "127.0.0.1", port: int = 0, **extra):
        self.app = app
        self.server = uvicorn.Server(uvicorn_config(app, host, port, **extra))
        self.thread = threading.Thread(target=self.server.run, name="conteur-uvicorn", daemon=True)
        self.host = host
        self.port = port

    def __enter__(self) -> Served:
        self.thread.start()
        while not self.server.started:
            if not self.thread.is_alive():
                raise RuntimeError("the server did not start")
            self.thread.join(0.02)
        self.port = self.server.servers[0].sockets[0].getsockname()[1]
        return self

    def __exit__(self, *exc) -> None:
        self.stop()

    def stop(self) -> None:
        self.server.should_exit = True
        self.thread.join(10)

    @property
    def url(self) -> str:
        return f"http://{self.host}:{self.port}"

    @property
    def ws_url(self) -> str:
        return f"ws://{self.host}:{self.port}/ws"

    @property
    def runtime(self) -> Runtime:
        return self.app.state.conteur
