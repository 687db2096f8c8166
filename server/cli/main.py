"""`conteur`: the command line, thin over the same functions the server uses."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import msgspec


class Progress:
    """A one-line progress bar on a terminal; silent when stderr is not one."""

    def __init__(self, label: str, total: int | None = None, stream=None):
        self.label, self.total, self.done = label, total, 0
        self.stream = stream or sys.stderr
        self.enabled = self.stream.isatty()

    def __call__(self, n: int) -> None:
        self.done += n
        if not self.enabled:
            return
        if self.total:
            width = 30
            filled = int(width * min(self.done, self.total) / self.total)
            bar = "#" * filled + "-" * (width - filled)
            self.stream.write(f"\r{self.label} [{bar}] {self.done}/{self.total}")
        else:
            self.stream.write(f"\r{self.label} {self.done}")
        self.stream.flush()

    def close(self) -> None:
        if self.enabled and self.done:
            self.stream.write("\n")


def cmd_verify(args) -> int:
    from conteur.server.store.dbfile import DatabaseFileError, check_database
    from conteur.server.audit.verify import verify_path, verify_store
    from conteur.server.store.factory import describe, is_postgres_url, open_store

    if is_postgres_url(args.path):
        with open_store(args.path) as store:
            report = verify_store(store, describe(args.path), progress_factory=Progress)
        print(msgspec.json.encode(report).decode() if args.json else report.text())
        return 0 if report.ok else 1
    path = Path(args.path)
    if not path.is_file():
        raise DatabaseFileError(f"{path}: no such file" if not path.exists() else f"{path} is a folder")
    with open(path, "rb") as f:
        start = f.read(16)
    if not start:
        raise DatabaseFileError(f"{path} is empty (0 bytes): neither a chronicle database "
                                f"nor an exported log")
    if start == b"SQLite format 3\x00":
        check_database(path)  # a newer conteur's file says so, rather than "tampered"
    elif not start.lstrip().startswith(b"{"):
        raise DatabaseFileError(f"{path} is neither a chronicle database (SQLite) "
                                f"nor an exported JSON Lines log")
    report = verify_path(path, progress_factory=Progress)
    if args.json:
        print(msgspec.json.encode(report).decode())
    else:
        print(report.text())
    return 0 if report.ok else 1


def cmd_replay(args) -> int:
    from conteur.events import game
    from conteur.server.store.factory import describe, open_store

    # a mistyped --db is an error, never a new empty chronicle
    with open_store(args.db) as store:
        if args.session not in store.sessions():
            print(f"conteur replay: no session {args.session!r} in {describe(args.db)}", file=sys.stderr)
            return 2
        progress = Progress("replaying")
        state = store.load_state(args.session, at=args.at, use_snapshots=not args.no_snapshots,
                                 progress=progress)
        progress.close()
    sys.stdout.write(msgspec.json.format(msgspec.json.encode(state, enc_hook=game.enc_hook).decode(), indent=2) + "\n")
    return 0


def cmd_simulate(args) -> int:
    from conteur.server.cli.simulate import simulate
    from conteur.server.store.factory import writing

    with writing(args.db) as store:
        summary = simulate(store, events=args.events, seed=args.seed, session=args.session,
                           ruleset=args.ruleset, progress=Progress("simulating", args.events),
                           fixed_secrets=args.fixed_secrets, groups=args.groups)
    from conteur.server.store.factory import describe

    if args.json:
        print(msgspec.json.encode(summary).decode())
    else:
        print(f"simulated {', '.join(summary.sessions)}: {summary.events} events "
              f"({summary.accepted} commands accepted, {summary.rejected} rejected) in {describe(args.db)}")
    return 0


def build_parser() -> argparse.ArgumentParser:
    from conteur.server.store.dbfile import EXIT_CODES

    parser = argparse.ArgumentParser(
        prog="conteur",
        description="Session server for live-action role-playing games.",
        epilog="exit status:\n" + "\n".join(f"  {code}  {text}" for code, text in EXIT_CODES.items())
        + "\nEvery error is one line on stderr, starting with the command's name.",
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    sub = parser.add_subparsers(dest="command", required=True)

    p = sub.add_parser("verify", help="check the hash chain, fair draws and verdicts of a database or exported log")
    p.add_argument("path", help="a chronicle database (.db or postgresql:// URL) or an exported JSON Lines log")
    p.add_argument("--json", action="store_true", help="print the report as JSON")
    p.set_defaults(func=cmd_verify)

    p = sub.add_parser("replay", help="print a session's folded state as JSON")
    p.add_argument("--db", "--store", dest="db", required=True,
                   help="the chronicle: a database file or a postgresql:// URL")
    p.add_argument("--session", required=True, help="the session id")
    p.add_argument("--at", type=int, default=None, help="fold only up to this seq")
    p.add_argument("--no-snapshots", action="store_true", help="fold from the first event")
    p.set_defaults(func=cmd_replay)

    p = sub.add_parser("simulate", help="play a random valid session through the real decide-and-append path")
    p.add_argument("--db", "--store", dest="db", required=True,
                   help="the chronicle: a database file or a postgresql:// URL (created if missing)")
    p.add_argument("--events", type=int, default=1000, help="about how many events to produce")
    p.add_argument("--seed", type=int, default=0, help="random seed of the simulated players")
    p.add_argument("--session", default=None, help="session id (default: sim-SEED; with mixed, a suffix per ruleset)")
    p.add_argument("--ruleset", default="mixed", choices=["mixed", "met", "v5", "action"],
                   help="mixed plays one session per ruleset side by side")
    p.add_argument("--fixed-secrets", action="store_true",
                   help="draw seeds and nonces from --seed too, so the same arguments write the same log "
                        "(to compare two versions of the rules; never for a real night)")
    p.add_argument("--groups", action="store_true",
                   help="some MET challenges are one initiator against several defenders")
    p.add_argument("--json", action="store_true", help="print a JSON summary")
    p.set_defaults(func=cmd_simulate)

    for extra in _EXTRA_COMMANDS:
        extra(sub)
    for add_command in plugged_commands():
        add_command(sub)
    # a plugged command that parses its own options ("passthrough") gets the raw argv:
    # argparse's REMAINDER would drop an option given before the first positional
    parser.passthrough = {name: p.get_default("passthrough") for name, p in sub.choices.items()
                          if p.get_default("passthrough")}
    return parser


def plugged_commands() -> list:
    """The subcommands other installed packages add (``conteur client``), found through the
    ``conteur.commands`` entry points of pyproject.toml: the server never imports them."""
    from importlib.metadata import entry_points

    return [ep.load() for ep in sorted(entry_points(group="conteur.commands"), key=lambda ep: ep.name)]


def _extra_commands() -> list:
    from conteur.server.cli.serve import add_commands as serve_commands
    from conteur.server.cli.backup import add_commands as backup_commands
    from conteur.server.cli.doctor import add_commands as doctor_commands
    from conteur.server.cli.export import add_commands as export_commands
    from conteur.server.cli.stores import add_commands as store_commands
    from conteur.server.cli.revoke import add_commands as revoke_commands

    return [serve_commands, export_commands, backup_commands, store_commands, doctor_commands,
            revoke_commands]


_EXTRA_COMMANDS: list = _extra_commands()


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    parser = build_parser()
    passthrough = getattr(parser, "passthrough", {})
    if argv[:1] and argv[0] in passthrough:  # its own parser, options and all
        return passthrough[argv[0]](argv[1:] or ["--help"])
    args = parser.parse_args(argv)
    try:
        return args.func(args)
    except Exception as exc:  # noqa: BLE001 - sorted by cli_errors; unknown ones re-raised
        code, message = cli_error(exc)
        if code is None:
            raise
        print(f"conteur {args.command}: {message}", file=sys.stderr)
        return code


def cli_error(exc: BaseException) -> tuple[int | None, str]:
    """(exit status, one line) for an error a user can meet; (None, "") for a bug."""
    import ssl

    from conteur.server.store.backup import BackupError
    from conteur.server.store.dbfile import EXIT_BAD_INPUT, EXIT_CHECK_FAILED, DatabaseFileError, database_error
    from conteur.server.store.interface import StoreError

    if isinstance(exc, DatabaseFileError):
        return exc.exit_code, str(exc)
    if isinstance(exc, BackupError):
        return getattr(exc, "exit_code", EXIT_CHECK_FAILED), str(exc)
    from conteur.server.store.migrate import MigrateError

    if isinstance(exc, MigrateError):
        return EXIT_CHECK_FAILED, str(exc)
    from conteur.server.store.postgres import postgres_error

    known = database_error(exc) or postgres_error(exc)
    if known is not None:
        return known
    if isinstance(exc, StoreError):
        return EXIT_BAD_INPUT, f"the database cannot be used: {exc}"
    if isinstance(exc, ssl.SSLError):
        return EXIT_BAD_INPUT, f"the certificate or key cannot be used: {exc.reason or exc}"
    if isinstance(exc, OSError):
        where = f" {exc.filename}" if exc.filename else ""
        return EXIT_BAD_INPUT, f"{exc.strerror or exc}{':' if where else ''}{where}"
    return None, ""


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
