"""``conteur client``: a storyteller's terminal and scripts, over the same websocket.

    conteur client join http://10.0.0.1:8000/#join=TOKEN    remember the server and token
    conteur client watch [--after SEQ] [--limit N] [--json] [--lang fr]  the session as a live log, in the web log's sentences
    conteur client send '{"type": "freeze", "scope": "session"}'
    conteur client challenge --defender bruno [--defender clara ...] --attribute physical
    conteur client state                                     this viewer's folded state, JSON

The state file (``--state``, default ``$XDG_DATA_HOME/conteur/client.sqlite``) holds the
token, the outbox and the events received: a ``send`` made while the Wi-Fi is down stays
queued there and goes out, with the same id, at the next run of any of these commands.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import sqlite3
import sys
from pathlib import Path
from urllib.parse import urlsplit

import msgspec

from conteur.client.client import Backoff, Client, ClientError, Delivered, Restarted
from conteur.client.outbox import Outbox
from conteur.events import game
from conteur.events.met import ATTRIBUTES, GROUP_DEFENDERS
from conteur.events.wire import decode_event
from conteur.client.outbox import NewerStateFile
from conteur.events.narrate import Teller, sentence

# The exit statuses `conteur --help` lists (the server's EXIT_CODES; the client does not
# import the server, tests/house/test_layers.py checks they agree): 1 a command rejected, 2 what
# was given cannot be used (a bad link, a refused token), 3 the server did not answer in
# time, 4 the state file is locked, 5 it is a newer client's.
EXIT_CHECK_FAILED = 1
EXIT_BAD_INPUT = 2
EXIT_UNREACHABLE = 3
EXIT_IN_USE = 4
EXIT_REJECTED = EXIT_CHECK_FAILED
EXIT_REFUSED = EXIT_BAD_INPUT


class Exit(Exception):
    """Ends the command with a message on stderr and an exit status."""

    def __init__(self, code: int, message: str):
        super().__init__(message)
        self.code = code
        self.message = message


def default_state() -> Path:
    base = os.environ.get("XDG_DATA_HOME") or str(Path.home() / ".local" / "share")
    return Path(base) / "conteur" / "client.sqlite"


def parse_link(link: str) -> tuple[str, str, str]:
    """``http://HOST:PORT/#join=TOKEN[&session=S]`` -> (websocket URL, token, session)."""
    parts = urlsplit(link)
    if parts.scheme not in ("http", "https", "ws", "wss") or not parts.netloc:
        raise ValueError(f"not a join link: {link!r}")
    fragment = dict(p.split("=", 1) for p in parts.fragment.split("&") if "=" in p)
    token = fragment.get("join", "")
    if not token:
        raise ValueError("the link has no #join=TOKEN part")
    scheme = "wss" if parts.scheme in ("https", "wss") else "ws"
    return f"{scheme}://{parts.netloc}/ws", token, fragment.get("session", "")


# -- the readable log ----------------------------------------------------------------------

def know(tell: Teller, client: Client) -> Teller:
    """The roster's names as this viewer knows them now, into a Teller kept for the whole
    watch (its sentence table is built once, not for every line of a long resync)."""
    state = client.state
    if state is not None:
        tell.names.update((c, ch.name) for c, ch in state.session.characters.items())
        tell.scenes.update((k, sc.name) for k, sc in state.session.scenes.items())
    return tell


def describe(raw: dict, tell: Teller | None = None) -> str:
    """One line a storyteller reads at a glance, as the web log says it; a type this
    version does not know (a newer server) falls back to key=value."""
    event = decode_event(raw)
    if not isinstance(event, dict):
        try:
            return sentence(event, tell or Teller())
        except (KeyError, IndexError, ValueError):
            pass
    fields = " ".join(f"{k}={v}" for k, v in raw.items() if k not in ("type", "draws"))
    return f"{raw.get('type', '?')} {fields}".strip()


def line(item: Delivered, tell: Teller | None = None) -> str:
    return f"#{item.seq:<6} {item.type:<28} {describe(item.raw, tell)}"


# -- commands ----------------------------------------------------------------------------


def _client(args, outbox: Outbox) -> Client:
    url = outbox.get_meta("url")
    token = outbox.get_meta("token")
    if not url or not token:
        raise Exit(EXIT_BAD_INPUT, "no server known yet: run `conteur client join LINK` first")
    session = args.session or outbox.get_meta("session") or ""
    return Client(url, token, session, outbox=outbox, backoff=Backoff(0.25, args.backoff_cap))


def _refused(refused: ClientError) -> Exit:
    return Exit(EXIT_REFUSED, f"refused by the server: {refused.message} ({refused.code})")


async def _live(client: Client, timeout: float) -> None:
    try:
        await client.wait_live(timeout=timeout)
    except ClientError as refused:
        raise _refused(refused)
    except TimeoutError:
        queued = len(client.queued())
        raise Exit(EXIT_UNREACHABLE, f"server unreachable at {client.url}"
                   + (f"; {queued} command(s) stay queued" if queued else ""))


async def _join(args) -> int:
    try:
        url, token, session = parse_link(args.link)
    except ValueError as exc:
        raise Exit(EXIT_BAD_INPUT, f"{exc} (a join link looks like http://10.42.0.1:8000/#join=TOKEN)")
    outbox = Outbox(args.state)
    outbox.set_meta("url", url)
    outbox.set_meta("token", token)
    if args.session or session:
        outbox.set_meta("session", args.session or session)
    async with _client(args, outbox) as client:
        await _live(client, args.timeout)
        viewer = client.viewer
        who = viewer and (viewer.character or viewer.role)
        print(f"joined session {client.session!r} as {who} ({viewer and viewer.role}); "
              f"{len(client.received)} events, head {client.head}")
    return 0


async def _watch(args) -> int:
    async with _client(args, Outbox(args.state)) as client:
        shown, tell = 0, Teller(lang=args.lang)
        await _live(client, args.timeout)
        # What this watch printed is its own business: the state file's cursor is shared
        # with every other command using it, so it cannot say what was shown here.
        async for item in client.events(replay=True, notices=True):
            if isinstance(item, Restarted):
                print(json.dumps({"notice": "restarted", "reason": item.reason}) if args.json
                      else f"-- {item.reason}", flush=True)
                continue
            if item.seq <= args.after:
                continue
            print(json.dumps({"seq": item.seq, "event": item.raw}) if args.json
                  else line(item, know(tell, client)), flush=True)
            shown += 1
            if args.limit and shown >= args.limit:
                break
        if client.error is not None:  # the stream ended because the server refused us
            raise _refused(client.error)
    return 0


async def _send(args) -> int:
    try:
        command = json.loads(args.command)
    except json.JSONDecodeError as exc:
        raise Exit(1, f"the command is not JSON: {exc}")
    return await _send_command(args, command)


async def _challenge(args) -> int:
    """A MET challenge from its options: one ``--defender``, or several (a group, MET-1)."""
    command: dict = {"type": "challenge", "kind": args.kind, "attribute": args.attribute,
                     "abilities": args.abilities, "action": args.told}
    if len(args.defenders) > 1:
        command["defenders"] = args.defenders
    elif args.defenders:
        command["defender"] = args.defenders[0]
    if args.kind == "static":
        command.update(difficulty=args.difficulty, tests=args.tests)
    elif args.kind in ("simple", "complex"):
        command.update(attribute=None, tests=args.tests)
    if args.character:
        return await _send_command(args, {**command, "character": args.character})
    async with _client(args, Outbox(args.state)) as client:  # the token's own character
        await _live(client, args.timeout)
        character = client.character
    if not character:
        raise Exit(EXIT_BAD_INPUT, "--as: this token plays no character: name the initiator "
                   "(an antagonist's name, or storyteller)")
    return await _send_command(args, {**command, "character": character})


async def _send_command(args, command: dict) -> int:
    async with _client(args, Outbox(args.state)) as client:
        try:
            command_id = client.send(command)
        except (ValueError, msgspec.ValidationError) as exc:
            print(f"not a valid command: {exc}", file=sys.stderr)
            return EXIT_REJECTED
        if args.no_wait:
            # sent at once when the server is up (the frame leaves before this exits);
            # otherwise it stays queued for the next run of any client command
            print(command_id)
            try:
                await client.wait_live(timeout=args.timeout)
            except (ClientError, TimeoutError):
                print(f"queued: the server is not reachable now; {command_id} goes out at "
                      f"the next client command", file=sys.stderr)
                return 0
            await client.wait_written(command_id, timeout=args.timeout)
            return 0
        await _live(client, args.timeout)
        try:
            result = await client.outcome(command_id, timeout=args.timeout)
        except ClientError as refused:  # revoked while waiting: the command stays queued
            raise _refused(refused)
        except TimeoutError:
            raise Exit(EXIT_UNREACHABLE, f"no answer from {client.url} within {args.timeout:g} s; "
                       f"{command_id} stays queued and goes out again at the next client command")
        if result.ok:
            print(f"ack {command_id} seqs {list(result.seqs)}")
            return 0
        print(f"reject {command_id} {result.code}: {result.message}")
        return EXIT_REJECTED


async def _state(args) -> int:
    async with _client(args, Outbox(args.state)) as client:
        await _live(client, args.timeout)
        await asyncio.sleep(0)  # the queue flush after live
        if client.state is None:
            print(f"this viewer's events cannot be folded: {client.fold_error}", file=sys.stderr)
            return 1
        sys.stdout.write(msgspec.json.encode(client.state, enc_hook=game.enc_hook).decode() + "\n")
    return 0


def parser() -> argparse.ArgumentParser:
    common = argparse.ArgumentParser(add_help=False)
    common.add_argument("--state", default=str(default_state()), help="the client's SQLite file")
    common.add_argument("--session", default="", help="the session, when the token allows several")
    common.add_argument("--timeout", type=float, default=15.0, help="seconds to wait for the server")
    common.add_argument("--backoff-cap", type=float, default=10.0, help=argparse.SUPPRESS)
    p = argparse.ArgumentParser(prog="conteur client", description=__doc__.split("\n\n")[0])
    sub = p.add_subparsers(dest="action", required=True)
    j = sub.add_parser("join", parents=[common], help="remember a join link's server and token")
    j.add_argument("link")
    w = sub.add_parser("watch", parents=[common], help="the session as a readable live log")
    w.add_argument("--after", type=int, default=0, help="only events after this seq")
    w.add_argument("--limit", type=int, default=0, help="stop after this many events")
    w.add_argument("--json", action="store_true", help="one JSON object per line")
    w.add_argument("--lang", choices=("en", "fr"), default="en", help="the language of the sentences")
    s = sub.add_parser("send", parents=[common], help="send one command given as JSON")
    s.add_argument("command")
    s.add_argument("--no-wait", action="store_true", help="queue it and print its id")
    c = sub.add_parser("challenge", parents=[common], help="issue a Mind's Eye Theatre challenge",
                       description="Issue a challenge (the `challenge` command of docs/protocol.md). "
                                   "Repeat --defender for a group challenge: one initiator against each "
                                   f"of them, at most {GROUP_DEFENDERS} (MET-1), classic, or static when "
                                   "a storyteller tests them all against one --difficulty (MET-10).")
    c.add_argument("--as", dest="character", default="", metavar="NAME",
                   help="the initiator (default: the token's character); a storyteller names an "
                        "antagonist, or storyteller")
    c.add_argument("--defender", dest="defenders", action="append", default=[], metavar="NAME",
                   help="a character challenged; repeat it to challenge several at once (a group)")
    c.add_argument("--attribute", choices=ATTRIBUTES, help="physical, social or mental (not for simple "
                                                           "and complex tests)")
    c.add_argument("--kind", choices=("classic", "static", "simple", "complex"), default="classic")
    c.add_argument("--difficulty", type=int, default=0, help="static: the traits to beat (MET-10)")
    c.add_argument("--tests", type=int, default=1, help="static, simple, complex: successive tests")
    c.add_argument("--ability", dest="abilities", action="append", default=[], metavar="NAME",
                   help="an ability of the initiator's that applies (MET-3); repeat for more")
    c.add_argument("--action", dest="told", default="", metavar="TEXT",
                   help="what the initiator does, told in the log")
    c.add_argument("--no-wait", action="store_true", help="queue it and print its id")
    sub.add_parser("state", parents=[common], help="print this viewer's folded state as JSON")
    return p


def add_command(sub) -> None:
    """Plugs ``client`` into ``conteur``'s subcommands: pyproject.toml names this function in
    the ``conteur.commands`` entry points, which ``conteur`` reads (no import either way)."""
    p = sub.add_parser("client", help="join, watch and command a session from a terminal",
                       add_help=False)
    p.add_argument("args", nargs=argparse.REMAINDER)
    p.set_defaults(func=lambda parsed: main(parsed.args or ["--help"]), passthrough=main)


def main(argv: list[str] | None = None) -> int:
    args = parser().parse_args(argv)
    handler = {"join": _join, "watch": _watch, "send": _send, "challenge": _challenge, "state": _state}[args.action]
    try:
        try:
            # the client's own data folder (XDG): made, unlike a server's --db folder
            Path(args.state).parent.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            raise Exit(EXIT_BAD_INPUT, f"cannot make the folder of --state {args.state}: {exc.strerror}")
        return asyncio.run(handler(args))
    except Exit as stop:
        print(f"conteur client {args.action}: {stop.message}", file=sys.stderr)
        return stop.code
    except NewerStateFile as exc:
        print(f"conteur client {args.action}: {exc}", file=sys.stderr)
        return exc.exit_code
    except sqlite3.DatabaseError as exc:  # the --state file, the only database here
        locked = isinstance(exc, sqlite3.OperationalError) and "locked" in str(exc)
        print(f"conteur client {args.action}: the state file {args.state} "
              + ("is locked by another process" if locked else "is not a client state file")
              + f" ({exc})", file=sys.stderr)
        return EXIT_IN_USE if locked else EXIT_BAD_INPUT
    except KeyboardInterrupt:
        return 130


if __name__ == "__main__":
    sys.exit(main())
