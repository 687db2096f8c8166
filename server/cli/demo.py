"""What ``conteur serve`` prints, and the demo chronicle of ``conteur serve --demo``.

The demo gives a new user something to play at once from two browser tabs: one session
per ruleset (Mind's Eye Theatre, V5, action dice), a few characters each, a storyteller
token, every join link, and a QR code for the storyteller's link. Tokens are stored
hashed, so links cannot be shown again later: the demo mints fresh ones at every start
(it is a demo), and a plain ``serve`` mints a storyteller link only when the chronicle
has no storyteller yet.
"""

from __future__ import annotations

import io
import sys
from typing import TextIO

import qrcode

from conteur.events.sheets import ActionSheet, MetSheet, V5Sheet
from conteur.server.core.auth import Tokens
from conteur.server.web.lan import lan_addresses
from conteur.server.core.roster import Imported, Roster, RosterCharacter, RosterScene, import_roster_sync, join_link
from conteur.server.core.service import Chronicle
from conteur.server.store.interface import EventStore

DEMO: tuple[Roster, ...] = (
    Roster(
        session="met-demo", name="Elysium (Mind's Eye Theatre)", ruleset="met",
        scenes=[RosterScene(id="elysium", name="Elysium")],
        characters=[
            RosterCharacter(id="lucien", name="Lucien", scene="elysium", sheet=MetSheet(
                physical=7, social=5, mental=4, abilities={"Brawl": 2}, merits=("Lucky",))),
            RosterCharacter(id="mara", name="Mara", scene="elysium", sheet=MetSheet(
                physical=5, social=7, mental=6, abilities={"Dodge": 1}, powers=("Fortitude",))),
            RosterCharacter(id="ezra", name="Ezra", scene="elysium", sheet=MetSheet(
                physical=4, social=4, mental=8, abilities={"Occult": 3})),
        ],
    ),
    Roster(
        session="v5-demo", name="Harbour Night (V5)", ruleset="v5",
        characters=[
            RosterCharacter(id="iris", name="Iris", sheet=V5Sheet(
                attributes={"strength": 2, "dexterity": 3, "wits": 3, "charisma": 4},
                skills={"brawl": 1, "stealth": 3, "persuasion": 3}, willpower=5, humanity=7, hunger=2)),
            RosterCharacter(id="viktor", name="Viktor", sheet=V5Sheet(
                attributes={"strength": 4, "dexterity": 2, "wits": 2, "charisma": 2},
                skills={"brawl": 4, "intimidation": 3}, willpower=6, humanity=5, hunger=3)),
        ],
    ),
    Roster(
        session="action-demo", name="Station Omega (action dice)", ruleset="action",
        characters=[
            RosterCharacter(id="nova", name="Nova", sheet=ActionSheet(
                characteristics={"science": 5, "combat": 7, "athletics": 6}, expertises=("hacking",))),
            RosterCharacter(id="rook", name="Rook", sheet=ActionSheet(
                characteristics={"science": 7, "combat": 5, "athletics": 5}, expertises=("melee",))),
        ],
    ),
)


def base_urls(host: str, port: int, scheme: str = "http") -> list[str]:
    hosts = (lan_addresses() or ["127.0.0.1"]) if host in ("0.0.0.0", "::", "") else [host]
    return [f"{scheme}://{h}:{port}" for h in hosts]


def qr_ascii(data: str) -> str:
    code = qrcode.QRCode(border=1)
    code.add_data(data)
    out = io.StringIO()
    code.print_ascii(out=out, invert=True)
    return out.getvalue()


def create_demo(store: EventStore) -> tuple[str, list[Imported]]:
    """The demo sessions (added only where missing) and fresh tokens for all of them."""
    chronicle = Chronicle(store)
    tokens = Tokens(store)
    imported = [import_roster_sync(chronicle, tokens, roster) for roster in DEMO]
    return tokens.issue("storyteller", name="storyteller (demo)"), imported


def announce(store: EventStore, host: str, port: int, *, demo: bool = False,
             scheme: str = "http", out: TextIO | None = None, public_url: str = "",
             wifi: str = "") -> None:
    """Prints the addresses, the storyteller link with its QR code and (demo) join links.
    Links use ``public_url`` when given (a name on the hotspot's DNS), else the first
    LAN address."""
    out = out or sys.stdout
    urls = [public_url.rstrip("/")] if public_url else base_urls(host, port, scheme)
    base = urls[0]
    network = f"the Wi-Fi {wifi!r}" if wifi else "this network"
    print(f"conteur is starting. Phones on {network} reach it at:", file=out)
    for url in urls:
        print(f"  {url}/", file=out)
    if not public_url and host in ("0.0.0.0", "::", "") and not lan_addresses():
        print("No LAN address found: phones cannot reach this machine yet. Start the hotspot "
              "(deploy/hotspot.sh) or join the venue Wi-Fi; join sheets printed after that "
              "use the new address (conteur doctor checks it).", file=out)
    if host in ("0.0.0.0", "::", ""):
        # on the laptop itself localhost is a secure context (the offline app installs)
        print(f"On this computer: {scheme}://localhost:{port}/ (join sheets printed from it "
              "still point phones to the address above)", file=out)
    tokens = Tokens(store)
    sessions = store.sessions()
    if demo and sessions and not {r.session for r in DEMO} & set(sessions):
        # a real chronicle: demo sessions and tokens have no place in its record
        print("\n--demo ignored: this database already holds a chronicle. Use another --db "
              "(for example --db demo.db) to try the demo.", file=out)
        demo = False
    if demo:
        storyteller, imported = create_demo(store)
        print("\nDemo chronicle: one session per ruleset. Open a join link in a browser tab per "
              "character, and the storyteller link in another.", file=out)
        for item in imported:
            print(f"\n[{item.session}]", file=out)
            print(f"  storyteller: {join_link(base, storyteller, item.session)}", file=out)
            for p in item.players:
                print(f"  {p.name:<8} {join_link(base, p.token, item.session)}", file=out)
            print(f"  wall display: {join_link(base, item.observer, item.session)}", file=out)
        first = imported[0].session
    elif tokens.count("storyteller") == 0:
        storyteller = tokens.issue("storyteller", name="storyteller")
        first = sessions[0] if sessions else "main"
        print(f"\nNo storyteller yet: this token was just created and is shown once: {storyteller}",
              file=out)
    else:
        print("\nStoryteller: use the link `conteur init` printed (tokens are stored hashed "
              "and cannot be shown again).", file=out)
        out.flush()
        return
    link = join_link(base, storyteller, first)
    print(f"\nStoryteller link ({first}), scan it with the tablet:\n  {link}", file=out)
    print(qr_ascii(link), file=out)
    out.flush()  # before uvicorn's own logging, even when stdout is a pipe (systemd)
