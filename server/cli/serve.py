"""`conteur serve` and `conteur init`: their arguments, and starting the server.

``run`` checks the chronicle, opens its store, prints the addresses and join links and
serves ``create_app`` (conteur.server.web.app) with uvicorn, over TLS when asked; with a
PostgreSQL store, ``serve_workers`` runs several server processes on one port.
"""

from __future__ import annotations

import logging
import os
import sys
from pathlib import Path

import msgspec
import uvicorn

from conteur.server.store.factory import is_postgres_url, writing
from conteur.server.web.app import Settings, create_app, uvicorn_config

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
