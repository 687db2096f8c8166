"""`conteur doctor`: the checks a storyteller runs at the door, one pass/fail line each.

The address phones will use (and the others found), the port reachable on it, the
hotspot, free disk beside the database, the clock, the database verifying (the same
function as ``conteur verify``) and, with ``--tls``, the certificate's dates and names.
English or French (``--lang fr``); the exit code is 1 when any check fails (a note, such as
an empty database file, is no failure). Under ``--cert``/``--key`` the certificate checked is
the one given, as serve would use it. Nothing here
talks to another machine: the port is tried by binding and connecting on this one.
"""

from __future__ import annotations

import datetime as dt
import errno
import json
import os
import shutil
import socket
import ssl
import subprocess
import sys
import urllib.error
import urllib.request
from dataclasses import dataclass
from pathlib import Path
from typing import Callable

from conteur.server.web.lan import Discover, lan_addresses

PASS, FAIL, SKIP, NOTE = "pass", "fail", "skip", "note"
MARK = {PASS: "[ OK ]", FAIL: "[FAIL]", SKIP: "[ -- ]", NOTE: "[NOTE]"}  # a note is no failure
MIN_FREE = 200 * 1024 * 1024  # a whole season's events fit many times in this
CERT_WARN = dt.timedelta(days=14)

TEXT = {
    "en": {
        "addresses": "Address for phones: {url} (LAN addresses: {all})",
        "addresses_public": "Address for phones: {url} (--public-url; LAN addresses: {all})",
        "addresses_none": "No LAN address: phones cannot reach this machine. Start the hotspot "
                          "(deploy/hotspot.sh) or join the venue Wi-Fi",
        "port_free": "Port {port} is free and reachable on {address} (tried on this machine)",
        "port_conteur": "conteur already answers on {url} (/health)",
        "port_other": "Port {port} on {address} is taken by something that is not conteur",
        "port_closed": "Port {port} is in use but nothing answers on {address}: {error}",
        "port_error": "Port {port} cannot be used on {address}: {error}",
        "hotspot": "Hotspot '{name}' is up on {device}",
        "wifi": "Wi-Fi '{name}' is connected on {device} (no hotspot: phones must join it)",
        "hotspot_none": "No hotspot and no Wi-Fi connection active (run deploy/hotspot.sh)",
        "hotspot_no_nmcli": "Hotspot not checked: nmcli not found (NetworkManager)",
        "hotspot_error": "Hotspot not checked: nmcli failed: {error}",
        "disk": "{free} free beside {db}",
        "disk_low": "Only {free} free beside {db} (want {want} or more)",
        "clock": "Clock: {now} ({zone})",
        "clock_bad": "Clock looks wrong: {now} ({zone}); set it (timedatectl set-time) before the game",
        "db": "Database verifies: {report}",
        "db_bad": "Database does not verify: {report}",
        "db_missing": "No database at {db} (conteur init or conteur serve creates it)",
        "disk_pg": "{free} free here (the chronicle itself lives on the PostgreSQL server, {db})",
        "db_pg_down": "Cannot use the chronicle at {db}: {error}",
        "db_empty": "Database {db} is empty (0 bytes): no chronicle in it yet. conteur serve refuses "
                    "a 0-byte file (a failed copy?): remove it and serve starts a new chronicle, "
                    "or restore a backup over it",
        "tls": "Certificate valid {start} to {end}, names {url_host}",
        "tls_given": "Certificate {cert} (--cert) valid {start} to {end}, names {url_host}",
        "tls_given_soon": "Certificate {cert} (--cert) expires soon: {end} (renew it where it came from)",
        "tls_given_dates": "Certificate {cert} (--cert) not valid now: {start} to {end} "
                           "(check the clock, or renew it where it came from)",
        "tls_given_host": "Certificate {cert} (--cert) does not name {host} (names: {names}): "
                          "phones reaching {host} will be warned",
        "tls_given_unreadable": "No PEM certificate can be read from {cert} (--cert)",
        "tls_given_key": "The key {keyfile} (--key) does not go with the certificate {cert}: {error}",
        "tls_soon": "Certificate expires soon: {end} (conteur serve --tls renews it)",
        "tls_dates": "Certificate not valid now: {start} to {end} (check the clock, then conteur serve --tls)",
        "tls_host": "Certificate does not name {host} (names: {names}); conteur serve --tls renews it",
        "tls_missing": "No certificate in {dir} (conteur serve --tls makes one)",
        "summary_ok": "All checks passed.",
        "summary_fail": "{n} check(s) failed.",
    },
    "fr": {
        "addresses": "Adresse pour les téléphones : {url} (adresses du réseau local : {all})",
        "addresses_public": "Adresse pour les téléphones : {url} (--public-url ; adresses du réseau local : {all})",
        "addresses_none": "Aucune adresse sur le réseau local : les téléphones ne peuvent pas joindre "
                          "cette machine. Lancez le point d'accès (deploy/hotspot.sh) ou rejoignez le Wi-Fi du lieu",
        "port_free": "Le port {port} est libre et joignable sur {address} (essayé sur cette machine)",
        "port_conteur": "conteur répond déjà sur {url} (/health)",
        "port_other": "Le port {port} sur {address} est pris par autre chose que conteur",
        "port_closed": "Le port {port} est utilisé mais rien ne répond sur {address} : {error}",
        "port_error": "Le port {port} est inutilisable sur {address} : {error}",
        "hotspot": "Point d'accès « {name} » actif sur {device}",
        "wifi": "Wi-Fi « {name} » connecté sur {device} (pas de point d'accès : les téléphones doivent le rejoindre)",
        "hotspot_none": "Ni point d'accès ni Wi-Fi actif (lancez deploy/hotspot.sh)",
        "hotspot_no_nmcli": "Point d'accès non vérifié : nmcli introuvable (NetworkManager)",
        "hotspot_error": "Point d'accès non vérifié : nmcli a échoué : {error}",
        "disk": "{free} libres à côté de {db}",
        "disk_low": "Seulement {free} libres à côté de {db} (il en faut {want} ou plus)",
        "clock": "Horloge : {now} ({zone})",
        "clock_bad": "L'horloge semble fausse : {now} ({zone}) ; réglez-la (timedatectl set-time) avant le jeu",
        "db": "La base se vérifie : {report}",
        "db_bad": "La base ne se vérifie pas : {report}",
        "db_missing": "Pas de base en {db} (conteur init ou conteur serve la crée)",
        "disk_pg": "{free} libres ici (la chronique elle-même est sur le serveur PostgreSQL, {db})",
        "db_pg_down": "La chronique {db} n'est pas utilisable : {error}",
        "db_empty": "La base {db} est vide (0 octet) : aucune chronique encore. conteur serve refuse "
                    "un fichier de 0 octet (une copie ratée ?) : supprimez-le et serve commence une "
                    "nouvelle chronique, ou restaurez une sauvegarde à sa place",
        "tls": "Certificat valable du {start} au {end}, nomme {url_host}",
        "tls_given": "Certificat {cert} (--cert) valable du {start} au {end}, nomme {url_host}",
        "tls_given_soon": "Le certificat {cert} (--cert) expire bientôt : {end} (renouvelez-le là d'où il vient)",
        "tls_given_dates": "Certificat {cert} (--cert) non valable maintenant : du {start} au {end} "
                           "(vérifiez l'horloge, ou renouvelez-le là d'où il vient)",
        "tls_given_host": "Le certificat {cert} (--cert) ne nomme pas {host} (noms : {names}) : "
                          "les téléphones qui joignent {host} seront avertis",
        "tls_given_unreadable": "Aucun certificat PEM lisible dans {cert} (--cert)",
        "tls_given_key": "La clé {keyfile} (--key) ne va pas avec le certificat {cert} : {error}",
        "tls_soon": "Le certificat expire bientôt : {end} (conteur serve --tls le renouvelle)",
        "tls_dates": "Certificat non valable maintenant : du {start} au {end} (vérifiez l'horloge, puis conteur serve --tls)",
        "tls_host": "Le certificat ne nomme pas {host} (noms : {names}) ; conteur serve --tls le renouvelle",
        "tls_missing": "Pas de certificat dans {dir} (conteur serve --tls en crée un)",
        "summary_ok": "Toutes les vérifications sont passées.",
        "summary_fail": "{n} vérification(s) en échec.",
    },
}


@dataclass(frozen=True)
class Check:
    name: str  # addresses | port | hotspot | disk | clock | database | tls
    status: str  # pass | fail | skip
    text: str

    def line(self) -> str:
        return f"{MARK[self.status]} {self.text}"


@dataclass
class Doctor:
    db: Path | str  # a chronicle file, or a postgresql:// URL (--store)
    port: int = 8000
    lang: str = "en"
    public_url: str = ""
    address: str | None = None  # the address phones will use; default: the first LAN one
    tls_dir: Path | None = None
    cert: Path | None = None  # --cert (with --key): the certificate serve is given, checked instead
    key: Path | None = None
    discover: Discover = lan_addresses
    nmcli: str | None = None
    now: Callable[[], dt.datetime] = lambda: dt.datetime.now().astimezone()
    chosen: str | None = None

    def say(self, key: str, **fields) -> str:
        return TEXT[self.lang][key].format(**fields)

    def run(self) -> list[Check]:
        return [self.addresses(), self.port_check(), self.hotspot(), self.disk(), self.clock(),
                self.database()] + ([self.tls()] if self.https else [])

    @property
    def https(self) -> bool:
        """As serve: --tls, or a certificate given by --cert, serves https."""
        return self.tls_dir is not None or self.cert is not None

    # -- each check ------------------------------------------------------------------

    def addresses(self) -> Check:
        found = self.discover()
        self.chosen = self.address or (found[0] if found else None)
        listed = ", ".join(found) or "-"
        scheme = "https" if self.https else "http"
        if self.public_url:
            return Check("addresses", PASS, self.say("addresses_public", url=self.public_url, all=listed))
        if self.chosen is None:
            return Check("addresses", FAIL, self.say("addresses_none"))
        return Check("addresses", PASS, self.say("addresses", url=f"{scheme}://{self.chosen}:{self.port}/",
                                                 all=listed))

    def port_check(self) -> Check:
        address = self.chosen or "127.0.0.1"
        try:
            with socket.create_server((address, self.port), reuse_port=False) as server:
                with socket.create_connection((address, server.getsockname()[1]), timeout=3):
                    pass
            return Check("port", PASS, self.say("port_free", port=self.port, address=address))
        except OSError as exc:
            if exc.errno != errno.EADDRINUSE:
                return Check("port", FAIL, self.say("port_error", port=self.port, address=address, error=exc))
        # in use: conteur itself, already serving, is the good case
        scheme = "https" if self.https else "http"
        host = f"[{address}]" if ":" in address else address
        url = f"{scheme}://{host}:{self.port}"
        unverified = ssl.create_default_context()
        unverified.check_hostname, unverified.verify_mode = False, ssl.CERT_NONE  # only "is it conteur?"
        try:
            with urllib.request.urlopen(f"{url}/health", timeout=3, context=unverified) as answer:
                ok = json.loads(answer.read()).get("status") == "ok"
        except (urllib.error.HTTPError, ValueError, AttributeError):
            ok = False
        except OSError as exc:  # refused, reset, timed out: something holds the port, silent
            return Check("port", FAIL, self.say("port_closed", port=self.port, address=address, error=exc))
        if ok:
            return Check("port", PASS, self.say("port_conteur", url=url))
        return Check("port", FAIL, self.say("port_other", port=self.port, address=address))

    def hotspot(self) -> Check:
        if self.nmcli is None:
            return Check("hotspot", SKIP, self.say("hotspot_no_nmcli"))
        try:
            out = subprocess.run([self.nmcli, "-t", "-f", "NAME,TYPE,DEVICE", "connection", "show", "--active"],
                                 capture_output=True, text=True, timeout=10, check=True).stdout
        except (OSError, subprocess.SubprocessError) as exc:
            return Check("hotspot", FAIL, self.say("hotspot_error", error=exc))
        wifi = [line.rsplit(":", 2) for line in out.splitlines() if ":802-11-wireless:" in line]
        for name, _, device in wifi:
            if name.replace("\\:", ":") == "conteur-hotspot":
                return Check("hotspot", PASS, self.say("hotspot", name=name, device=device))
        if wifi:
            name, _, device = wifi[0]
            return Check("hotspot", PASS, self.say("wifi", name=name.replace("\\:", ":"), device=device))
        return Check("hotspot", FAIL, self.say("hotspot_none"))

    @property
    def postgres(self) -> bool:
        from conteur.server.store.factory import is_postgres_url

        return is_postgres_url(str(self.db))

    def disk(self) -> Check:
        if self.postgres:  # the log is the database server's: here, only tls/ and exports
            from conteur.server.store.factory import describe

            free = shutil.disk_usage(Path.cwd()).free
            return Check("disk", PASS if free >= MIN_FREE else FAIL,
                         self.say("disk_pg" if free >= MIN_FREE else "disk_low",
                                  free=_size(free), db=describe(self.db), want=_size(MIN_FREE)))
        db = Path(self.db)
        where = db.parent if db.parent.exists() else Path.cwd()
        free = shutil.disk_usage(where).free
        fields = dict(free=_size(free), db=where, want=_size(MIN_FREE))
        return Check("disk", PASS if free >= MIN_FREE else FAIL,
                     self.say("disk" if free >= MIN_FREE else "disk_low", **fields))

    def clock(self) -> Check:
        now = self.now()
        zone = now.tzname() or "?"
        sane = 2025 <= now.year <= 2099  # a Pi without a battery wakes up in its past
        return Check("clock", PASS if sane else FAIL,
                     self.say("clock" if sane else "clock_bad", now=now.strftime("%Y-%m-%d %H:%M"), zone=zone))

    def database(self) -> Check:
        from conteur.server.audit.verify import verify_path

        if self.postgres:
            return self.database_postgres()
        if not self.db.exists():
            return Check("database", FAIL, self.say("db_missing", db=self.db))
        if self.db.is_file() and self.db.stat().st_size == 0:
            # nothing to verify, nothing broken: said as it is, with what serve will do with it
            return Check("database", NOTE, self.say("db_empty", db=self.db))
        report = verify_path(self.db)
        return Check("database", PASS if report.ok else FAIL,
                     self.say("db" if report.ok else "db_bad", report=report.text()))

    def database_postgres(self) -> Check:
        """The same verification as a file's, on the PostgreSQL chronicle serve would use;
        a database that cannot be reached or used is one line, its password never shown."""
        from conteur.server.audit.verify import verify_store
        from conteur.server.cli.main import cli_error
        from conteur.server.store.factory import describe, open_store

        name = describe(self.db)
        try:
            with open_store(str(self.db)) as store:
                report = verify_store(store, name)
        except Exception as exc:  # noqa: BLE001 - what a user can meet is said; a bug is not hidden
            code, line = cli_error(exc)
            if code is None:
                raise
            return Check("database", FAIL, self.say("db_pg_down", db=name, error=line))
        return Check("database", PASS if report.ok else FAIL,
                     self.say("db" if report.ok else "db_bad", report=report.text()))

    def tls(self) -> Check:
        from conteur.server.web import tls

        given = self.cert is not None
        cert_path = Path(self.cert) if given else Path(self.tls_dir) / "server.crt"
        cert = tls._load_cert(cert_path) if cert_path.is_file() else None
        # a certificate given by --cert is the operator's: its lines name it, and the advice
        # is not serve --tls's (which renews only its own)
        key = "tls_given" if given else "tls"
        named = dict(cert=cert_path) if given else {}
        if cert is None:
            if given:
                return Check("tls", FAIL, self.say("tls_given_unreadable", cert=cert_path))
            return Check("tls", FAIL, self.say("tls_missing", dir=self.tls_dir))
        if given and self.key is not None:
            try:
                ssl.create_default_context(ssl.Purpose.CLIENT_AUTH).load_cert_chain(str(cert_path), str(self.key))
            except (OSError, ssl.SSLError) as exc:
                return Check("tls", FAIL, self.say("tls_given_key", keyfile=self.key, cert=cert_path,
                                                   error=getattr(exc, "reason", None) or exc))
        start, end = cert.not_valid_before_utc, cert.not_valid_after_utc
        now = self.now().astimezone(dt.UTC)
        dates = dict(start=start.date().isoformat(), end=end.date().isoformat(), **named)
        if not start <= now <= end:
            return Check("tls", FAIL, self.say(f"{key}_dates", **dates))
        names = tls.certificate_hosts(cert_path)
        host = self.chosen
        if host and host not in names:
            return Check("tls", FAIL, self.say(f"{key}_host", host=host,
                                               names=", ".join(names), **named))
        if end - now < CERT_WARN:
            return Check("tls", FAIL, self.say(f"{key}_soon", **dates))
        return Check("tls", PASS, self.say(key, url_host=host or ", ".join(names), **dates))


def _size(n: int) -> str:
    for unit in ("B", "KiB", "MiB", "GiB"):
        if n < 1024 or unit == "GiB":
            return f"{n:.0f} {unit}" if unit == "B" else f"{n:.1f} {unit}"
        n /= 1024
    return f"{n} TiB"  # pragma: no cover


def report(checks: list[Check], lang: str = "en") -> tuple[str, int]:
    failed = sum(c.status == FAIL for c in checks)
    lines = [c.line() for c in checks]
    lines.append(TEXT[lang]["summary_fail"].format(n=failed) if failed else TEXT[lang]["summary_ok"])
    return "\n".join(lines), 1 if failed else 0


def cmd_doctor(args) -> int:
    from conteur.server.store.factory import is_postgres_url
    from conteur.server.cli.serve import tls_folder

    if (args.cert is None) != (args.key is None):
        print("conteur doctor: --cert and --key go together", file=sys.stderr)
        return 2
    given = args.cert is not None
    doctor = Doctor(
        db=args.db if is_postgres_url(args.db) else Path(args.db), port=args.port, lang=args.lang, public_url=args.public_url,
        address=args.address, nmcli=shutil.which("nmcli"),
        tls_dir=Path(args.tls_dir or tls_folder(args.db)) if args.tls and not given else None,
        cert=Path(args.cert) if given else None, key=Path(args.key) if given else None,
    )
    text, code = report(doctor.run(), args.lang)
    print(text)
    return code


def add_commands(sub) -> None:
    p = sub.add_parser("doctor", help="the checks to run at the door: address, port, hotspot, disk, "
                       "clock, database, certificate; one pass/fail line each")
    p.add_argument("--db", "--store", dest="db", default="conteur.db",
                   help="the chronicle: a database file, or the postgresql:// URL serve is given")
    p.add_argument("--port", type=int, default=8000, help="the port conteur serves on")
    p.add_argument("--address", default=None,
                   help="the address phones will use (default: the first LAN address found)")
    p.add_argument("--public-url", default="", help="as given to conteur serve")
    p.add_argument("--tls", action="store_true", help="also check the venue certificate")
    p.add_argument("--tls-dir", default=None,
                   help="where the venue certificate lives (default: tls/ beside --db, as serve)")
    p.add_argument("--cert", default=None, metavar="FILE",
                   help="as given to conteur serve: check this certificate's dates and names "
                        "(and that --key goes with it) instead of the venue one")
    p.add_argument("--key", default=None, metavar="FILE", help="the private key of --cert (PEM)")
    p.add_argument("--lang", choices=("en", "fr"),
                   default="fr" if os.environ.get("LANG", "").startswith("fr") else "en",
                   help="en or fr (default: from $LANG)")
    p.set_defaults(func=cmd_doctor)

