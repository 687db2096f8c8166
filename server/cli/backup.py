"""`conteur backup` and `conteur restore`: thin over ``conteur.server.store.backup``.

A restore checks the backup with ``conteur verify``'s checks (``verify_path``) before it
puts it back; the store takes that check as an argument, since it folds with layers above
the store.
"""

from __future__ import annotations

import sys
from datetime import UTC, datetime
from pathlib import Path

from conteur.server.store.backup import backup, restore


def add_commands(sub) -> None:
    """Register `backup` and `restore` on the CLI's argparse subparsers."""
    p = sub.add_parser("backup", help="copy a live database consistently (e.g. to a USB stick)")
    p.add_argument("--db", "--store", dest="db", required=True,
                   help="the chronicle database, or a postgresql:// URL (the server may be running)")
    p.add_argument("--to", required=True,
                   help="the copy to write; an existing directory gets a timestamped file")
    p.set_defaults(func=cmd_backup)

    p = sub.add_parser("restore", help="replace a database by a backup (stop the server first)")
    p.add_argument("--from", dest="source", required=True, help="the backup file")
    p.add_argument("--db", required=True, help="the database to replace (moved aside, not deleted)")
    p.add_argument("--force", action="store_true",
                   help="restore even if another process has the database open, or if the "
                        "backup holds fewer events than the database it replaces")
    p.set_defaults(func=cmd_restore)


def cmd_backup(args) -> int:
    from conteur.server.store.postgres import database_name, is_postgres_url, redact

    target = Path(args.to)
    postgres = is_postgres_url(args.db)
    if target.is_dir():
        stamp = datetime.now(UTC).strftime("%Y%m%dT%H%M%SZ")
        stem = database_name(args.db) if postgres else Path(args.db).stem
        target = target / f"{stem}-{stamp}.db"
    if postgres:  # one read snapshot of the database, written as a chronicle file
        from conteur.server.store.migrate import backup_postgres

        count = backup_postgres(args.db, target)
        print(f"backed up {count} events from {redact(args.db)} to {target}")
        return 0
    count = backup(args.db, target)  # errors: one line from conteur.server.cli.main
    print(f"backed up {count} events from {args.db} to {target}")
    return 0


def cmd_restore(args) -> int:
    from conteur.server.audit.verify import verify_path

    count = restore(args.source, args.db, verify=verify_path, force=args.force)
    print(f"restored {count} events from {args.source} to {args.db}; "
          f"the previous database, if any, is beside it as {Path(args.db).name}.before-restore-*")
    return 0


def main(argv: list[str] | None = None) -> int:
    """`python -m conteur.server.cli.backup backup|restore ...`, the same as `conteur backup|restore`."""
    from conteur.server.cli.main import main as conteur

    return conteur(sys.argv[1:] if argv is None else argv)


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
