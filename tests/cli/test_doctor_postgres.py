"""`conteur doctor --store postgresql://...`: the checks at the door for a server
that will run on a PostgreSQL chronicle. The database line verifies the same chain `verify`
does, on a real throwaway PostgreSQL; a chronicle that cannot be reached or that was tampered
with fails in one line, and the password is never printed."""

from __future__ import annotations

import socket

import pytest

from conteur.server.cli.doctor import FAIL, PASS, Doctor, report
from conteur.server.cli.main import main

psycopg = pytest.importorskip("psycopg")

LOOPBACK = lambda: ["127.0.0.1"]  # noqa: E731  (tests talk only to 127.0.0.1)


def free_port() -> int:
    with socket.create_server(("127.0.0.1", 0)) as s:
        return s.getsockname()[1]


def password(url: str) -> str:
    return url.split("://", 1)[1].split("@")[0].split(":")[1]


@pytest.fixture
def chronicle(pg_url):
    assert main(["simulate", "--store", pg_url, "--events", "80", "--ruleset", "met", "--seed", "3"]) == 0
    return pg_url


def by_name(checks):
    return {c.name: c for c in checks}


def test_a_postgresql_chronicle_verifies_at_the_door(chronicle):
    checks = by_name(Doctor(db=chronicle, port=free_port(), discover=LOOPBACK).run())
    assert checks["database"].status == PASS
    assert "hash chain intact" in checks["database"].text
    # the disk that holds the log is the database server's: this one holds tls/ and exports
    assert checks["disk"].status == PASS and "PostgreSQL server" in checks["disk"].text
    text, _ = report(list(checks.values()))
    assert password(chronicle) not in text


def test_a_tampered_postgresql_chronicle_fails_naming_the_seq(chronicle):
    # the owner (a superuser here) switches the append-only triggers off: what an intruder
    # with the database's keys could do, and what verify must catch
    with psycopg.connect(chronicle, autocommit=True) as conn:
        conn.execute("ALTER TABLE events DISABLE TRIGGER USER")
        conn.execute("UPDATE events SET actor = 'mallory' WHERE seq = 5")
    checks = by_name(Doctor(db=chronicle, port=free_port(), discover=LOOPBACK).run())
    assert checks["database"].status == FAIL
    assert "seq 5" in checks["database"].text
    text, code = report(list(checks.values()))
    assert code == 1 and password(chronicle) not in text


def test_an_unreachable_database_is_one_line_without_its_password(pg_cluster, capsys):
    url = f"postgresql://conteur:door-s3cret@127.0.0.1:{free_port()}/nowhere"
    checks = by_name(Doctor(db=url, port=free_port(), discover=LOOPBACK, lang="fr").run())
    database = checks["database"]
    assert database.status == FAIL and "\n" not in database.text
    assert database.text.startswith("La chronique postgresql://conteur:***@127.0.0.1")
    assert "door-s3cret" not in database.text
    # the command line takes --store as serve does, and says the same
    assert main(["doctor", "--store", url, "--port", str(free_port()), "--lang", "en"]) == 1
    out = capsys.readouterr().out
    assert "[FAIL] Cannot use the chronicle at postgresql://conteur:***@" in out
    assert "door-s3cret" not in out
