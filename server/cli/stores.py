"""`conteur migrate`, `conteur import` and `conteur pg-setup`: chronicles between stores.

Thin over ``conteur.server.store.migrate`` and ``postgres``: the same functions a test or
a script calls (an import checked by ``conteur verify``'s ``verify_path``).
"""

from __future__ import annotations

import sys

from conteur.server.store.dbfile import EXIT_BAD_INPUT, EXIT_CHECK_FAILED


def cmd_migrate(args) -> int:
    from conteur.server.store.migrate import MigrateError, migrate

    try:
        moved = migrate(args.source, args.to)
    except MigrateError as exc:
        print(f"conteur migrate: {exc}", file=sys.stderr)
        return EXIT_CHECK_FAILED
    print(moved.text())
    return 0


def cmd_import(args) -> int:
    from conteur.server.audit.verify import verify_path
    from conteur.server.store.migrate import MigrateError, import_night

    code = 0
    for path in args.logs:
        try:
            added = import_night(path, args.store, verify=verify_path)
        except MigrateError as exc:
            print(f"conteur import: {exc}", file=sys.stderr)
            code = EXIT_CHECK_FAILED
            continue
        print(f"{path}: " + added.text("imported"))
    return code


def cmd_pg_setup(args) -> int:
    from conteur.server.store.postgres import PostgresStore, grant_server_role, is_postgres_url

    if not is_postgres_url(args.store):
        print("conteur pg-setup: --store must be a postgresql:// URL (the database's owner)", file=sys.stderr)
        return EXIT_BAD_INPUT
    PostgresStore(args.store, create=True).close()
    if args.server_role:
        grant_server_role(args.store, args.server_role)
        print(f"conteur tables ready; {args.server_role} may read and append, never update or delete the log")
    else:
        print("conteur tables ready")
    return 0


def add_commands(sub) -> None:
    p = sub.add_parser("migrate", help="copy a whole chronicle into an empty one (SQLite file or PostgreSQL)")
    p.add_argument("--from", dest="source", required=True, metavar="STORE",
                   help="the chronicle to copy: a .db file or a postgresql:// URL (left as it is)")
    p.add_argument("--to", required=True, metavar="STORE",
                   help="an empty chronicle, created if missing: a .db file or a postgresql:// URL")
    p.set_defaults(func=cmd_migrate)

    p = sub.add_parser("import", help="add a venue's exported night (JSON Lines) to a central chronicle")
    p.add_argument("logs", nargs="+", metavar="LOG", help="exports of `conteur export --format jsonl`")
    p.add_argument("--store", required=True, help="the central chronicle: a .db file or a postgresql:// URL")
    p.set_defaults(func=cmd_import)

    p = sub.add_parser("pg-setup", help="create conteur's tables in a PostgreSQL database and grant the server's role")
    p.add_argument("--store", required=True, metavar="URL",
                   help="postgresql:// URL of a role that may create tables (the database's owner)")
    p.add_argument("--server-role", default=None, metavar="ROLE",
                   help="the role `conteur serve --store` logs in as: it may read and append to the log, never change it")
    p.set_defaults(func=cmd_pg_setup)
