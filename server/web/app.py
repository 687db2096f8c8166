"""The Litestar application: ``create_app`` and the ways to run it.

The lifespan opens the store (unless given one), builds the ``Chronicle`` (the command
path), the token table and the hub, and closes the store at shutdown. One process serves
a SQLite file; a PostgreSQL store takes several (``serve --workers``, or ``serve`` on
several hosts), each following the others' commits through the store's tail. Uvicorn runs with permessage-deflate off (it costs 2-3x at 300 devices, DESIGN)
and a hard frame limit above the protocol's 64 KiB, which the endpoint enforces with a
readable ``error``.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import socket
import sys
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
from conteur.server.core.service import Chronicle
from conteur.server.store.codec import decode_events
from conteur.server.store.interface import EventStore
from conteur.server.store.factory import is_postgres_url, open_store, writing
from conteur.server.core.timers import WindowTimers
from conteur.server.web.headers import security_headers
from conteur.server.web.health import health
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
        self.hub = Hub(store, tokens=self.tokens)  # revoked tokens lose their sockets
        self.timers = WindowTimers(self.chronicle, settings.timer_clock)
        self.projections = Projections(store)  # GET /state: per view, not folded per call
        # a token's commands (websocket and HTTP together), its sockets, an address's bad tokens
        self.limits = Limits(rate=settings.rate, burst=settings.burst, sockets=settings.sockets_per_token,
                             bad=settings.bad_credentials)
        self.chronicle.listeners.append(self.hub.on_executed)
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

    handlers: list = [health, ws_endpoint, *CONTROLLERS, ReviewController, ca_certificate,
                      join_sheet_page]
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
                    request_max_body_size=settings.max_body,
                    exception_handlers={TooManyRequestsException: too_many_requests})


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


def tls_folder(db: str | Path) -> Path:
    """Where `serve --tls` keeps the venue CA and certificate by default: `tls/` beside
    the database, so copying the database's folder to a spare machine copies them too
    (with a PostgreSQL store: tls/ in the current folder)."""
    if is_postgres_url(str(db)):
        return Path.cwd() / "tls"
    return Path(db).resolve().parent / "tls"


def run(db: str | Path = "conteur.db", host: str = "0.0.0.0", port: int = 8000, *,
        demo: bool = False, origins: tuple[str, ...] = (), tls_dir: str | Path | None = None,
        public_url: str = "", wifi: str = "", cert: str | Path | None = None,
        key: str | Path | None = None, out=None, workers: int = 1) -> None:
    """``conteur serve``: prints the addresses, the storyteller's link and QR code (and,
    with ``demo``, creates the demo chronicle and prints every join link), then serves
    until interrupted. ``tls_dir`` serves HTTPS with the venue certificate (conteur.server.web.tls),
    ``cert``/``key`` with one given; either way plain http on the port is redirected
    (conteur.server.web.door). The database is refused before anything is written if it is not one
    (conteur.server.store.dbfile), and held for the server's life: a second server is refused.
    A PostgreSQL store takes ``workers`` processes on one port (``serve_workers``)."""
    from conteur.server.cli import demo as demo_mod

    out = out or sys.stdout
    if not is_postgres_url(str(db)):  # refused before anything, the TLS files included
        from conteur.server.store.dbfile import check_database

        check_database(db, create=True)
    settings = Settings(origins=tuple(origins), public_url=public_url, wifi=wifi)
    extra: dict = {}
    scheme = "http"
    if tls_dir is not None or cert is not None:
        extra, settings.ca_file = _tls(host, tls_dir, cert, key, port=port, public_url=public_url)
        settings.https = True
        scheme = "https"
    # a chronicle file is held for the server's life; a PostgreSQL database takes many
    with writing(db, create=True, shared=True) as store:
        demo_mod.announce(store, host, port, demo=demo, scheme=scheme, public_url=public_url,
                          wifi=wifi, out=out)
        if scheme == "https":
            _announce_tls(settings, host, port, public_url, out)
        if workers > 1:
            store.close()  # each worker opens its own: nothing of this one crosses a fork
            serve_workers(db, settings, host, port, workers, extra, out)
            return
        app = create_app(store, settings=settings)
        config = uvicorn_config(app, host, port, log_level="info", **extra)
        if scheme == "https":  # the door is https, whatever uvicorn believes it runs
            logging.getLogger("uvicorn.error").addFilter(
                lambda record: not str(record.msg).startswith("Uvicorn running on"))
        uvicorn.Server(config).run()


def serve_workers(db: str, settings: Settings, host: str, port: int, workers: int, extra: dict,
                  out) -> None:
    """``workers`` server processes on one listening socket (the kernel spreads the
    connections), each with its own store, Chronicle and hub on the one PostgreSQL
    database: they decide together (``Pending.basis``) and see each other's events
    (the store's tail). A worker that dies is started again; SIGTERM or ^C stops them all.
    Forked: the socket and the TLS context are inherited, nothing else is shared."""
    import multiprocessing
    import signal
    import socket as socketlib

    family = socketlib.AF_INET6 if ":" in host else socketlib.AF_INET
    sock = socketlib.socket(family, socketlib.SOCK_STREAM)
    sock.setsockopt(socketlib.SOL_SOCKET, socketlib.SO_REUSEADDR, 1)
    sock.bind((host, port))
    sock.listen(2048)
    sock.set_inheritable(True)
    context = multiprocessing.get_context("fork")

    def start(k: int):
        # daemon: never outlives this process, whatever happens to it
        proc = context.Process(target=_worker, args=(db, settings, sock, extra), name=f"conteur-worker-{k}",
                               daemon=True)
        proc.start()
        return proc

    procs = [start(k) for k in range(workers)]
    print(f"{workers} server processes on {host}:{port}, pids "
          f"{' '.join(str(p.pid) for p in procs)}", file=out, flush=True)
    stopping = False

    def stop(*_):
        nonlocal stopping
        stopping = True

    previous = signal.signal(signal.SIGTERM, stop)
    try:
        while not stopping:
            for k, proc in enumerate(procs):
                proc.join(0.2 / workers)
                if proc.exitcode is not None and not stopping:
                    print(f"server process {proc.pid} ended ({proc.exitcode}): starting another",
                          file=out, flush=True)
                    procs[k] = start(k)
    except KeyboardInterrupt:
        pass
    finally:
        signal.signal(signal.SIGTERM, previous)
        for proc in procs:
            if proc.is_alive():
                proc.terminate()  # uvicorn's own SIGTERM: the sockets close, the store too
        for proc in procs:
            proc.join(30)
            if proc.is_alive():
                proc.kill()
                proc.join()
        sock.close()


def _worker(db: str, settings: Settings, sock, extra: dict) -> None:
    import signal

    signal.signal(signal.SIGINT, signal.SIG_IGN)  # the parent stops the workers
    signal.signal(signal.SIGTERM, signal.SIG_DFL)  # not the parent's handler: stopped even before uvicorn runs
    with writing(db, create=False, shared=True) as store:
        app = create_app(store, settings=settings)
        config = uvicorn_config(app, log_level="warning", **extra)
        uvicorn.Server(config).run(sockets=[sock])


def _tls(host: str, tls_dir, cert, key, *, port: int = 0, public_url: str = "") -> tuple[dict, str]:
    """uvicorn's options for the TLS door, and the CA file phones install ("" if none).
    Plain http is redirected to the names the certificate is made for (``--url``'s first)."""
    from urllib.parse import urlsplit

    from uvicorn.config import HTTP_PROTOCOLS
    from uvicorn.importer import import_from_string

    from conteur.server.web import door, tls

    ca_file = ""
    hosts = tls.default_hosts() if host in ("0.0.0.0", "::", "") else [host]
    if cert is None:
        cert, key = tls.ensure_certificate(tls_dir, hosts)
        ca_file = str(tls.ca_certificate_path(tls_dir))
    named = urlsplit(public_url).hostname if public_url else None
    if named:
        hosts = [named, *(h for h in hosts if h != named)]
    context = door.server_context(cert, key)
    inner = import_from_string(HTTP_PROTOCOLS["auto"])
    return {"http": door.door_protocol(context, ca_file or None, inner, hosts=hosts, port=port)}, ca_file


def _announce_tls(settings: Settings, host: str, port: int, public_url: str, out) -> None:
    from conteur.server.cli import demo as demo_mod

    base = public_url.rstrip("/") or demo_mod.base_urls(host, port, "https")[0]
    if settings.ca_file:
        print(f"\nHTTPS with the venue certificate. Each phone installs it once from "
              f"{base}/ca.crt (deploy/README.md, section 4).\n"
              f"The CA file is {settings.ca_file}: keep its folder with your backups.",
              file=out)
    else:
        print("\nHTTPS with the certificate given by --cert.", file=out)
    print(f"Serving https on {host}:{port}; plain http:// there is redirected to https://.\n"
          f"Join sheet: {base}/join-sheet", file=out, flush=True)


def cmd_serve(args) -> int:
    if (args.cert is None) != (args.key is None):
        print("conteur serve: --cert and --key go together", file=sys.stderr)
        return 2
    tls_dir = None
    if args.tls and args.cert is None:
        tls_dir = args.tls_dir or tls_folder(args.db)
    if args.workers < 1:
        print("conteur serve: --workers must be 1 or more", file=sys.stderr)
        return 2
    if args.workers > 1 and not is_postgres_url(str(args.db)):
        print(f"conteur serve: --workers {args.workers} needs a PostgreSQL store "
              f"(--store postgresql://...): a chronicle file has one writer, one server process",
              file=sys.stderr)
        return 2
    run(args.db, args.host, args.port, demo=args.demo, origins=tuple(args.origin or ()),
        tls_dir=tls_dir, public_url=args.public_url, cert=args.cert, key=args.key,
        wifi=args.wifi if args.wifi is not None else os.environ.get("CONTEUR_WIFI", ""),
        workers=args.workers)
    return 0


def cmd_init(args) -> int:
    """``conteur init``: the roster's session, characters and tokens, printed once."""
    from conteur.server.cli import demo as demo_mod
    from conteur.server.core.roster import RosterError, format_imported, init_from_roster

    # a chronicle file: never beside a running server, it would append stale seqs (a
    # PostgreSQL database: beside its servers, as one more of them)
    with writing(args.db, create=True, shared=True) as store:
        try:
            imported = init_from_roster(store, args.roster)
        except (RosterError, OSError) as exc:
            print(f"conteur init: {exc}", file=sys.stderr)
            return 2
    if args.json:
        print(msgspec.json.encode(imported).decode())
    else:
        base = args.url or demo_mod.base_urls("0.0.0.0", args.port)[0]
        print(format_imported(imported, base))
    return 0


def add_commands(sub) -> None:
    """``conteur serve`` and ``conteur init``, for conteur.server.cli.main."""
    p = sub.add_parser("serve", help="run the session server (phones join over the venue network)")
    p.add_argument("--db", "--store", dest="db", default="conteur.db",
                   help="the chronicle: a database file, or a postgresql:// URL (created if missing)")
    p.add_argument("--host", default="0.0.0.0", help="address to listen on (default: every interface)")
    p.add_argument("--port", type=int, default=8000)
    p.add_argument("--demo", action="store_true",
                   help="create a demo chronicle (one session per ruleset) and print its join links")
    p.add_argument("--origin", action="append", metavar="URL",
                   help="another web origin allowed to open the websocket (repeatable)")
    p.add_argument("--public-url", default="", help="the base URL printed in join links and join sheets")
    p.add_argument("--wifi", default=None, metavar="NAME",
                   help="the Wi-Fi network phones join, printed on the join sheet and at start-up "
                   "(default: $CONTEUR_WIFI)")
    p.add_argument("--tls", action="store_true",
                   help="serve HTTPS with the venue certificate (made if missing; phones install "
                        "/ca.crt once); plain http on the port is redirected")
    p.add_argument("--tls-dir", default=None,
                   help="where the venue CA and certificate live (default: tls/ beside --db)")
    p.add_argument("--cert", default=None, metavar="FILE",
                   help="serve HTTPS with this certificate chain (PEM) instead of the venue CA's")
    p.add_argument("--key", default=None, metavar="FILE", help="the private key of --cert (PEM)")
    p.add_argument("--workers", type=int, default=1, metavar="N",
                   help="server processes on the port, deciding together (a PostgreSQL --store "
                        "only; the same command on other hosts adds more; default: 1)")
    p.set_defaults(func=cmd_serve)

    p = sub.add_parser("init", help="create a session from a roster file and print every token once")
    p.add_argument("--db", "--store", dest="db", default="conteur.db",
                   help="the chronicle: a database file, or a postgresql:// URL (created if missing)")
    p.add_argument("--roster", required=True, help="a roster file, TOML or JSON (docs/protocol.md)")
    p.add_argument("--json", action="store_true", help="print the tokens as JSON")
    p.add_argument("--port", type=int, default=8000, help="the port printed in join links")
    p.add_argument("--url", default="", help="the base URL printed in join links")
    p.set_defaults(func=cmd_init)
