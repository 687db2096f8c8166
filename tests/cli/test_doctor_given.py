"""`conteur doctor` loose ends: under ``--cert``/``--key`` (as given to serve) it
checks that certificate's dates, names and key, not the venue one beside the database; and a
0-byte database file is said to be empty, a note and not a failure, in English and French.
Real files: a real database, real certificates (one made by ``conteur serve --tls``'s own
code, one expired, made with cryptography), the real command line."""

from __future__ import annotations

import datetime as dt
import socket

import pytest

from conteur.server.cli.doctor import FAIL, NOTE, PASS, Doctor
from conteur.server.cli.main import main
from conteur.server.web import tls
from conteur.server.cli.serve import tls_folder
from tests.support.client_support import make_chronicle

LOOPBACK = lambda: ["127.0.0.1"]  # noqa: E731  (tests talk only to 127.0.0.1)


def free_port() -> int:
    with socket.create_server(("127.0.0.1", 0)) as s:
        return s.getsockname()[1]


def self_signed(folder, *, start: dt.datetime, end: dt.datetime, host: str = "127.0.0.1"):
    """A certificate and key for ``host``, valid from ``start`` to ``end``."""
    import ipaddress

    from cryptography import x509
    from cryptography.hazmat.primitives import hashes, serialization
    from cryptography.hazmat.primitives.asymmetric import ec
    from cryptography.x509.oid import NameOID

    folder.mkdir(parents=True, exist_ok=True)
    key = ec.generate_private_key(ec.SECP256R1())
    name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "given")])
    cert = (x509.CertificateBuilder().subject_name(name).issuer_name(name).public_key(key.public_key())
            .serial_number(x509.random_serial_number()).not_valid_before(start).not_valid_after(end)
            .add_extension(x509.SubjectAlternativeName([x509.IPAddress(ipaddress.ip_address(host))]), critical=False)
            .sign(key, hashes.SHA256()))
    cert_path, key_path = folder / "given.crt", folder / "given.key"
    cert_path.write_bytes(cert.public_bytes(serialization.Encoding.PEM))
    key_path.write_bytes(key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8,
                                           serialization.NoEncryption()))
    return cert_path, key_path


@pytest.fixture
def db(tmp_path):
    path = tmp_path / "chronicle.db"
    make_chronicle(path)
    # the venue certificate serve --tls keeps beside the database: valid, naming 127.0.0.1
    tls.ensure_certificate(tls_folder(str(path)), ["localhost", "127.0.0.1"])
    return path


def doctor(db, *extra) -> list[str]:
    return ["doctor", "--db", str(db), "--address", "127.0.0.1", "--port", str(free_port()), *extra]


def tls_line(out: str) -> str:
    return out.strip().splitlines()[-2]  # the certificate is the last check, then the summary


def test_tls_alone_checks_the_venue_certificate(db, capsys):
    main(doctor(db, "--tls"))
    assert tls_line(capsys.readouterr().out).startswith("[ OK ] Certificate valid")


def test_an_expired_certificate_given_by_cert_fails_though_the_venue_one_is_valid(db, tmp_path, capsys):
    now = dt.datetime.now(dt.UTC)
    cert, key = self_signed(tmp_path / "given", start=now - dt.timedelta(days=400), end=now - dt.timedelta(days=35))
    for extra in (["--tls", "--cert", str(cert), "--key", str(key)], ["--cert", str(cert), "--key", str(key)]):
        code = main(doctor(db, *extra))
        line = tls_line(capsys.readouterr().out)
        assert code == 1
        assert line.startswith("[FAIL]") and str(cert) in line and "not valid now" in line, line
        assert (now - dt.timedelta(days=35)).date().isoformat() in line  # its own end date
    code = main(doctor(db, "--cert", str(cert), "--key", str(key), "--lang", "fr"))
    line = tls_line(capsys.readouterr().out)
    assert code == 1 and line.startswith("[FAIL]") and "non valable maintenant" in line and str(cert) in line


def test_a_valid_certificate_given_by_cert_passes_with_its_own_dates(db, tmp_path, capsys):
    now = dt.datetime.now(dt.UTC)
    end = now + dt.timedelta(days=90)
    cert, key = self_signed(tmp_path / "given", start=now - dt.timedelta(days=1), end=end)
    main(doctor(db, "--tls", "--cert", str(cert), "--key", str(key)))
    out = capsys.readouterr().out
    line = tls_line(out)
    assert line.startswith("[ OK ]") and str(cert) in line and end.date().isoformat() in line, line
    assert "https://127.0.0.1:" in out  # the address phones use is https, as serve --cert serves it
    soon = Doctor(db=db, discover=LOOPBACK, cert=cert, key=key, now=lambda: end.astimezone() - dt.timedelta(days=3))
    soon.addresses()
    check = soon.tls()
    assert check.status == FAIL and "expires soon" in check.text and "where it came from" in check.text


def test_a_key_that_does_not_go_with_the_given_certificate_fails(db, tmp_path):
    now = dt.datetime.now(dt.UTC)
    cert, _ = self_signed(tmp_path / "a", start=now - dt.timedelta(days=1), end=now + dt.timedelta(days=90))
    _, other_key = self_signed(tmp_path / "b", start=now - dt.timedelta(days=1), end=now + dt.timedelta(days=90))
    check = Doctor(db=db, discover=LOOPBACK, cert=cert, key=other_key).tls()
    assert check.status == FAIL and str(other_key) in check.text and "does not go with" in check.text
    unreadable = Doctor(db=db, discover=LOOPBACK, cert=tmp_path / "absent.crt", key=other_key).tls()
    assert unreadable.status == FAIL and "absent.crt" in unreadable.text


def test_cert_without_key_is_refused_like_serve(db, tmp_path, capsys):
    assert main(doctor(db, "--cert", str(tmp_path / "x.crt"))) == 2
    assert "--cert and --key go together" in capsys.readouterr().err


@pytest.mark.parametrize("lang,words", [("en", "is empty (0 bytes)"), ("fr", "est vide (0 octet)")])
def test_a_zero_byte_database_is_said_empty_not_failed(tmp_path, capsys, lang, words):
    empty = tmp_path / "empty.db"
    empty.touch()
    code = main(["doctor", "--db", str(empty), "--address", "127.0.0.1", "--port", str(free_port()), "--lang", lang])
    out = capsys.readouterr().out
    [line] = [line for line in out.splitlines() if str(empty) in line and "[" in line[:1]
              and ("base" in line.lower() or "database" in line.lower())]
    assert line.startswith("[NOTE]") and words in line, line
    assert "FAIL" not in line and "verif" not in line.lower()
    assert empty.stat().st_size == 0  # looked at, not written
    check = Doctor(db=empty, discover=LOOPBACK).database()
    assert check.status == NOTE and check.status not in (PASS, FAIL)
    # the exit code counts failures only: the hotspot may fail on this machine, never the database
    assert code == (1 if "[FAIL]" in out else 0)
