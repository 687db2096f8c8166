"""`conteur export`: a session as the chronicle record, a verifiable log or CSV, written
to a file (whole or not at all) or to standard output. Thin over
``conteur.server.audit.export``."""

from __future__ import annotations

import sys
from pathlib import Path

from conteur.events.model import STORYTELLER
from conteur.server.audit.export import FORMATS, ExportError, export_parts, viewer_of_token, write_atomically


def cmd_export(args) -> int:
    from conteur.server.store.factory import open_store

    with open_store(args.db) as store:  # a mistyped --db is an error, never a new chronicle
        try:
            viewer = viewer_of_token(store, args.as_token, args.session) if args.as_token else STORYTELLER
            parts = export_parts(store, args.session, args.format, lang=args.lang, viewer=viewer)
            if args.out:
                write_atomically(Path(args.out), parts)
            else:
                for part in parts:
                    sys.stdout.buffer.write(part)
                sys.stdout.flush()
        except ExportError as exc:
            print(f"conteur export: {exc}", file=sys.stderr)
            return 2
    return 0


def add_commands(sub) -> None:
    p = sub.add_parser("export", help="a session as the chronicle record (md, html), a verifiable log (jsonl) or csv")
    p.add_argument("--db", "--store", dest="db", required=True,
                   help="the chronicle: a database file or a postgresql:// URL")
    p.add_argument("--session", required=True, help="the session id")
    p.add_argument("--format", required=True, choices=FORMATS,
                   help="md, html and csv's local_time give the venue's time (this machine's zone, or "
                        "CONTEUR_TZ); jsonl and csv's at keep UTC, as stored")
    p.add_argument("--lang", default="en", choices=("en", "fr"))
    p.add_argument("--as", dest="as_token", default=None, metavar="TOKEN",
                   help="export only what this token's holder may see (a player's token: its own view)")
    p.add_argument("--out", default=None, help="write here instead of standard output")
    p.set_defaults(func=cmd_export)
