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
    from server.verify import verify_path

    path = Path(args.path)
    if not path.exists():
        print(f"conteur verify: {path}: no such file", file=sys.stderr)
        return 2
    report = verify_path(path, progress_factory=Progress)
    if args.json:
        print(msgspec.json.encode(report).decode())
    else:
        print(report.text())
    return 0 if report.ok else 1


def cmd_replay(args) -> int:
    from server.store import SQLiteStore

    with SQLiteStore(args.db) as store:
        if args.session not in store.sessions():
            print(f"conteur replay: no session {args.session!r} in {args.db}", file=sys.stderr)
            return 2
        progress = Progress("replaying")
        state = store.load_state(args.session, at=args.at, use_snapshots=not args.no_snapshots,
                                 progress=progress)
        progress.close()
    sys.stdout.write(msgspec.json.format(msgspec.json.encode(state).decode(), indent=2) + "\n")
    return 0


def cmd_simulate(args) -> int:
    from server.simulate import simulate

    summary = simulate(args.db, events=args.events, seed=args.seed, session=args.session,
                       ruleset=args.ruleset, progress=Progress("simulating", args.events))
    if args.json:
        print(msgspec.json.encode(summary).decode())
    else:
        print(f"simulated {', '.join(summary.sessions)}: {summary.events} events "
              f"({summary.accepted} commands accepted, {summary.rejected} rejected) in {args.db}")
    return 0


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="conteur",
        description="Session server for live-action role-playing games.",
    )
    sub = parser.add_subparsers(dest="command", required=True)

    p = sub.add_parser("verify", help="check the hash chain (and fair draws) of a database or exported log")
    p.add_argument("path", help="a chronicle database (.db) or an exported JSON Lines log")
    p.add_argument("--json", action="store_true", help="print the report as JSON")
    p.set_defaults(func=cmd_verify)

    p = sub.add_parser("replay", help="print a session's folded state as JSON")
    p.add_argument("--db", required=True, help="the chronicle database")
    p.add_argument("--session", required=True, help="the session id")
    p.add_argument("--at", type=int, default=None, help="fold only up to this seq")
    p.add_argument("--no-snapshots", action="store_true", help="fold from the first event")
    p.set_defaults(func=cmd_replay)

    p = sub.add_parser("simulate", help="play a random valid session through the real decide-and-append path")
    p.add_argument("--db", required=True)
    p.add_argument("--events", type=int, default=1000, help="about how many events to produce")
    p.add_argument("--seed", type=int, default=0, help="random seed of the simulated players")
    p.add_argument("--session", default=None, help="session id (default: sim-SEED; with mixed, a suffix per ruleset)")
    p.add_argument("--ruleset", default="mixed", choices=["mixed", "met", "v5", "action"],
                   help="mixed plays one session per ruleset side by side")
    p.add_argument("--json", action="store_true", help="print a JSON summary")
    p.set_defaults(func=cmd_simulate)

    for extra in _EXTRA_COMMANDS:
        extra(sub)
    return parser


def _extra_commands() -> list:
    from client.cli import add_command as client_commands
    from server.app import add_commands as serve_commands
    from server.backup import add_commands as backup_commands
    from server.doctor import add_commands as doctor_commands
    from server.export import add_commands as export_commands

    return [serve_commands, export_commands, backup_commands, client_commands, doctor_commands]


_EXTRA_COMMANDS: list = _extra_commands()


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    if argv[:1] == ["client"]:  # its own parser, options and all (argparse's REMAINDER drops them)
        from client.cli import main as client_main

        return client_main(argv[1:] or ["--help"])
    parser = build_parser()
    args = parser.parse_args(argv)
    return args.func(args)


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
