"""`conteur revoke`: any token of a chronicle, from the machine that holds it.

A lost tablet holds a storyteller's token, a wall an observer's, a phone a player's: each
is revoked by its grant id (``--list`` shows them, never the tokens themselves), every
token of a character, or every token of a role. A server on the same store closes the
sockets of a revoked token within its recheck interval (server/core/hub.py).
"""

from __future__ import annotations

import sys

from conteur.server.core.auth import Tokens


def cmd_revoke(args) -> int:
    from conteur.server.store.factory import open_store

    with open_store(args.db) as store:  # a mistyped --db is an error, never a new chronicle
        tokens = Tokens(store)
        if args.list:
            for g in tokens.devices(args.session):
                who = g.character or "-"
                print(f"{g.id}  {g.role:<11} {who:<16} {g.session or '*':<12} {g.name}")
            return 0
        if args.grant:
            count = tokens.revoke_grants(args.grant, session=args.session)
        elif args.character:
            if not args.session:
                print("conteur revoke: --character needs --session", file=sys.stderr)
                return 2
            count = tokens.revoke(session=args.session, character=args.character)
        elif args.role:
            count = tokens.revoke_role(args.role, session=args.session)
        else:
            print("conteur revoke: say what to revoke: --grant ID, --character C or --role R "
                  "(--list shows the live tokens)", file=sys.stderr)
            return 2
    print(f"{count} token{'s' if count != 1 else ''} revoked")
    return 0 if count else 1


def add_commands(sub) -> None:
    p = sub.add_parser("revoke", help="revoke tokens: a player's, an observer's or a storyteller's (--list shows them)")
    p.add_argument("--db", "--store", dest="db", required=True,
                   help="the chronicle: a database file or a postgresql:// URL")
    p.add_argument("--session", default=None, help="only tokens valid in this session")
    p.add_argument("--list", action="store_true", help="list the live tokens by grant id")
    p.add_argument("--grant", action="append", default=[], metavar="ID",
                   help="a token's grant id, as --list and the tablet show it (repeatable)")
    p.add_argument("--character", default=None, help="every token of this character (with --session)")
    p.add_argument("--role", default=None, choices=("player", "observer", "storyteller"),
                   help="every token of this role")
    p.set_defaults(func=cmd_revoke)
