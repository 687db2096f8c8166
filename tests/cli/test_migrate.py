"""`conteur migrate`: a chronicle moves from its SQLite file to
PostgreSQL and back, the same rows, bytes and hashes at every step, the chain, the draws
and the verdicts verifying after each move; tokens, idempotency records and unrevealed
seeds travel with it. A damaged source or a non-empty destination is refused, nothing
written."""

from __future__ import annotations

import sqlite3
import subprocess
import sys

import pytest

from conteur.server.audit.verify import verify_path
from conteur.server.cli.simulate import play
from conteur.server.core.auth import Tokens, digest
from conteur.server.core.service import Chronicle
from conteur.server.store.chain import verify_rows
from conteur.server.store.factory import open_store
from conteur.server.store.interface import StoreError
from conteur.server.store.migrate import MigrateError, migrate
from conteur.server.store.sqlite import SQLiteStore

pytest.importorskip("psycopg")


@pytest.fixture
def night(tmp_path):
    """A venue's chronicle: two closed sessions with fair draws, one still open (its seed
    unrevealed), tokens of which one is revoked."""
    path = tmp_path / "chronicle.db"
    with SQLiteStore(path) as store:
        chronicle = Chronicle(store)
        play(chronicle, "night", events=150, seed=3, ruleset="met")
        play(chronicle, "v5", events=100, seed=4, ruleset="v5")
        play(chronicle, "open", events=60, seed=5, ruleset="action", close=False)
        tokens = Tokens(store)
        kept = tokens.issue("storyteller")
        lost = tokens.issue("player", character="c1", session="night")
        tokens.revoke(session="night", character="c1")
    return path, kept, lost


def everything(target):
    with open_store(target) as store:
        rows = list(store.rows())
        seeds = {sid: store.secret(sid) for sid in store.sessions()}
        outcome = store.outcome_of("storyteller", "night-1")
        return rows, seeds, outcome


def test_a_chronicle_moves_to_postgresql_and_back_unchanged(night, pg_url, tmp_path):
    path, kept, lost = night
    before = everything(path)
    moved = migrate(str(path), pg_url)
    assert moved.events == len(before[0]) and moved.sessions == ["night", "v5", "open"]
    assert moved.tokens == 2 and moved.secrets == 3
    assert everything(pg_url) == before
    back = tmp_path / "back.db"
    migrate(pg_url, str(back))
    assert everything(back) == before
    report = verify_path(back)
    assert report.ok, report.text()
    assert report.sessions_checked == 2 and report.draws_checked > 0 and report.verdicts_checked > 0
    for target in (pg_url, back):
        with open_store(target) as store:
            assert verify_rows(store.rows(), gapless=True) == (len(before[0]), None)
            assert store.token(digest(kept)) is not None
            assert store.token(digest(lost)) is None  # revoked stays revoked
            assert store.count_tokens() == 1


def test_the_moved_chronicle_plays_on(night, pg_url):
    path, _, _ = night
    migrate(str(path), pg_url)
    with open_store(pg_url) as store:
        chronicle = Chronicle(store)
        head = store.head()
        # a retry of a command decided before the move gets its first outcome
        again = store.outcome_of("storyteller", "night-1")
        assert again is not None and again.replayed
        play(chronicle, "open", events=40, seed=6, ruleset="action")  # goes on, then closes
        assert store.head() > head
        assert verify_rows(store.rows(), gapless=True)[1] is None


def test_the_cli_moves_and_says_what(night, pg_url, tmp_path):
    path, _, _ = night
    done = subprocess.run([sys.executable, "-m", "conteur.server.cli.main", "migrate", "--from", str(path),
                           "--to", pg_url], capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    assert "3 session(s)" in done.stdout and "the chain verifies" in done.stdout
    assert pg_url.split(":")[2].split("@")[0] not in done.stdout + done.stderr  # no password shown
    # a second move into the same store is refused: it is not empty any more
    again = subprocess.run([sys.executable, "-m", "conteur.server.cli.main", "migrate", "--from", str(path),
                            "--to", pg_url], capture_output=True, text=True, timeout=300)
    assert again.returncode == 1 and "already holds" in again.stderr


def test_a_damaged_source_is_refused_naming_the_seq_and_nothing_is_written(night, pg_url):
    path, _, _ = night
    conn = sqlite3.connect(path)
    conn.execute("DROP TRIGGER events_no_update")
    conn.execute("UPDATE events SET actor = 'mallory' WHERE seq = 7")
    conn.commit()
    conn.close()
    with pytest.raises(MigrateError, match="chain broken at seq 7.*nothing was written"):
        migrate(str(path), pg_url)
    with pytest.raises(StoreError, match="no conteur chronicle"):  # not even the tables
        open_store(pg_url)


def test_a_non_empty_destination_is_refused(night, tmp_path):
    path, _, _ = night
    other = tmp_path / "other.db"
    with SQLiteStore(other) as store:
        Chronicle(store)
        play(Chronicle(store), "x", events=10, seed=1, ruleset="met")
    with pytest.raises(MigrateError, match="already holds"):
        migrate(str(path), str(other))
    with pytest.raises(MigrateError, match="same chronicle"):
        migrate(str(path), str(path))


def test_both_stores_read_a_sessions_entries_as_its_rows(night, pg_url):
    """``read_entries`` (the review's read): the columns of ``read_after``
    it keeps, in the same order, after a seq and within a limit, on SQLite and PostgreSQL."""
    path, _, _ = night
    migrate(str(path), pg_url)
    for target in (str(path), pg_url):
        with open_store(target) as store:
            for sid in store.sessions():
                rows = store.read_after(sid, 0)
                entries = store.read_entries(sid)
                assert [(e.seq, e.type, bytes(e.data), e.actor, e.at) for e in entries] == \
                    [(r.seq, r.type, bytes(r.data), r.actor, r.at) for r in rows]
                middle = rows[len(rows) // 2].seq
                assert [e.seq for e in store.read_entries(sid, middle, limit=7)] == \
                    [r.seq for r in rows if r.seq > middle][:7]
            assert store.read_entries("nobody") == []


def test_a_device_credential_moves_to_postgresql_and_back_still_a_device_s(night, pg_url, tmp_path):
    """A credential a join link turned into on a phone (``Tokens.spend``) keeps its link
    through a move: it stays that device's own (not a link it could spend again), and the
    link opening another phone after the move still replaces it."""
    path, _, _ = night
    with SQLiteStore(path) as store:
        tokens = Tokens(store)
        link = tokens.issue("player", character="c2", session="night", name="Bruno")
        credential, grant = tokens.spend(digest(link), tokens.check(link))
        assert grant.device
    migrate(str(path), pg_url)
    back = tmp_path / "back.db"
    migrate(pg_url, str(back))
    for target in (pg_url, back):
        with open_store(target) as store:
            tokens = Tokens(store)
            moved = tokens.check(credential)
            assert moved is not None and moved.device and moved.id == grant.id, target
            assert tokens.by_id(grant.id)[1].device, target
            assert not tokens.check(link).device  # the link stays a link
            # the link opens another phone: the credential it made before is replaced
            tokens.spend(digest(link), tokens.check(link))
            assert tokens.check(credential) is None, target
            assert grant.id in tokens.replaced
