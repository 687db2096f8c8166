"""Join links phones can reach: the join sheet and minted links use the
LAN address (or ``--public-url``), never localhost while the machine has a LAN address,
and say beside each QR code which Wi-Fi to join and the address in plain text."""

from __future__ import annotations

import contextlib
import io
import re
from typing import Iterator

import httpx
import pytest

from conteur.server.web.app import Settings
from conteur.server.cli.demo import announce
from conteur.server.web.lan import is_loopback, reachable_base
from conteur.server.store.sqlite import SQLiteStore
from conteur.server.testing import Venue

ROSTER = {
    "name": "Elysium",
    "characters": [
        {"id": "anna", "name": "Anna", "player": "Alice", "sheet": {"physical": 6, "social": 3, "mental": 4}},
        {"id": "bruno", "name": "Bruno", "player": "Bob", "sheet": {"physical": 5, "social": 5, "mental": 5}},
    ],
}
LAN = "10.42.0.1"  # a simulated LAN address: nothing is ever sent to it


@contextlib.contextmanager
def night(venue: Venue, host: str) -> Iterator[httpx.Client]:
    """The storyteller's tablet, opened through ``host`` (localhost, 127.0.0.1, ...)."""
    with httpx.Client(base_url=f"http://{host}:{venue.served.port}",
                      headers={"Authorization": f"Bearer {venue.token()}"}, timeout=10) as http:
        assert http.post("/sessions", json={"session": "night", "name": "Elysium"}).json()["type"] == "ack"
        assert http.post("/sessions/night/roster", json=ROSTER).status_code == 200
        yield http


@pytest.mark.parametrize("host", ["localhost", "127.0.0.1"])
def test_a_tablet_opened_through_loopback_prints_the_lan_address_never_localhost(tmp_path, host):
    settings = Settings(lan_addresses=lambda: [LAN], wifi="Elysium-guests")
    with Venue(tmp_path / "c.db", settings=settings) as venue, night(venue, host) as http:
        port = venue.served.port
        page = http.post("/sessions/night/join-sheet", json={}).text
        assert "localhost" not in page and "127.0.0.1" not in page
        links = re.findall(r"(http://[^\"<]+)#join=", page)
        assert links == [f"http://{LAN}:{port}/"] * 2
        # beside each QR code: the Wi-Fi to join and the address for a camera that will not scan
        assert page.count("Wi-Fi: <b>Elysium-guests</b>") == 2
        assert page.count(f'<div class="address" data-address>http://{LAN}:{port}/</div>') == 2
        assert "data-warning" not in page
        minted = http.post("/sessions/night/tokens", json={"role": "observer"}).json()["link"]
        assert minted.startswith(f"http://{LAN}:{port}/#join=")


def test_a_tablet_opened_through_the_lan_address_keeps_it(tmp_path):
    # the address the tablet used is one phones reach: no need to guess another
    settings = Settings(lan_addresses=lambda: ["192.168.1.9"])
    with Venue(tmp_path / "c.db", settings=settings) as venue:
        assert reachable_base(f"http://10.0.0.7:{venue.served.port}/", "",
                              settings.lan_addresses) == f"http://10.0.0.7:{venue.served.port}"


def test_public_url_wins_over_every_address(tmp_path):
    settings = Settings(lan_addresses=lambda: [LAN], public_url="https://conteur.lan/")
    with Venue(tmp_path / "c.db", settings=settings) as venue, night(venue, "localhost") as http:
        page = http.post("/sessions/night/join-sheet", json={}).text
        assert page.count("https://conteur.lan/#join=") == 2 and LAN not in page
        assert "Wi-Fi:" not in page  # no --wifi given: no line that would guess one


def test_without_any_lan_address_the_sheet_says_phones_cannot_reach_it(tmp_path):
    with Venue(tmp_path / "c.db", settings=Settings(lan_addresses=lambda: [])) as venue, \
            night(venue, "127.0.0.1") as http:
        page = http.post("/sessions/night/join-sheet", json={}).text
        assert "data-warning" in page and "Phones cannot open these links" in page
        assert "--public-url" in page


def test_the_sheet_speaks_the_tablets_language(tmp_path):
    # every string in both languages; the tablet sends its own (app.js joinSheet)
    with Venue(tmp_path / "c.db", settings=Settings(lan_addresses=lambda: [])) as venue, \
            night(venue, "127.0.0.1") as http:
        fr = http.post("/sessions/night/join-sheet", json={"lang": "fr"}).text
        assert '<html lang="fr">' in fr and "Elysium : rejoindre la partie" in fr
        assert "scannez avec l'appareil photo" in fr and "Les téléphones ne peuvent pas" in fr
        assert "scan with the phone" not in fr and "Phones cannot" not in fr
        en = http.post("/sessions/night/join-sheet", json={}).text
        assert '<html lang="en">' in en and "Elysium: join" in en
        refused = http.post("/sessions/night/join-sheet", json={"lang": "de"})
        assert refused.status_code == 400 and "lang" in refused.text


def test_reachable_base_keeps_scheme_and_port_and_knows_loopback_names():
    lan = lambda: [LAN]  # noqa: E731
    assert reachable_base("https://localhost:8443/", "", lan) == f"https://{LAN}:8443"
    assert reachable_base("http://[::1]:8000", "", lan) == f"http://{LAN}:8000"
    assert reachable_base("http://127.0.1.1:80", "", lambda: ["fd00::5"]) == "http://[fd00::5]:80"
    assert reachable_base("http://conteur.lan:8000", "", lan) == "http://conteur.lan:8000"
    assert all(map(is_loopback, ["localhost", "127.0.0.1", "::1", "[::1]", "app.localhost"]))
    assert not any(map(is_loopback, ["10.0.0.1", "conteur.lan", "192.168.4.1"]))


def test_start_up_names_the_wifi_to_join(tmp_path):
    out = io.StringIO()
    with SQLiteStore(tmp_path / "c.db") as store:
        announce(store, "10.42.0.1", 8000, out=out, wifi="Elysium-guests")
    text = out.getvalue()
    assert "Phones on the Wi-Fi 'Elysium-guests' reach it at:\n  http://10.42.0.1:8000/" in text


@pytest.mark.parametrize(("lang", "reload", "offline"), [("en", "reloads the page", "opens even with no network"),
                                                         ("fr", "recharge la page", "ouvre alors même sans réseau")])
def test_a_sheet_over_plain_http_says_what_a_reload_offline_does_and_what_tls_adds(tmp_path, lang, reload, offline):
    # no service worker outside a secure context: the sheet says so where phones join
    settings = Settings(lan_addresses=lambda: [LAN])
    with Venue(tmp_path / "c.db", settings=settings) as venue, night(venue, "127.0.0.1") as http:
        page = http.post("/sessions/night/join-sheet", json={"lang": lang}).text
        plain = re.search(r"<p class=\"plain\" data-plain-http>(.*?)</p>", page, re.S)
        assert plain is not None
        assert reload in plain.group(1) and offline in plain.group(1) and "<code>--tls</code>" in plain.group(1)
