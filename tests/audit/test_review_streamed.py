"""The whole review bundle streamed by parts is the whole one, byte for byte.

``GET /sessions/{s}/review`` is made part by part from a kept review and the store
(server/audit/streamed.py): its verification reads the rows by chunks in two passes, its
challenges and timeline walk the review's pages. These tests play random nights of each
ruleset through the real command path on a real SQLite file, take the review in random
pieces as a server does, and compare the streamed bytes with the bundle made whole from
the review built at once (``page.bundle``), for a storyteller, an observer and each
player; the verification alone also on tampered logs; then over HTTP on loopback, and a
stream that fails in the middle.
"""

from __future__ import annotations

import random
import sqlite3

import httpx
import msgspec
import pytest

from conteur.events import met
from conteur.events.model import STORYTELLER, Actor
from conteur.server.audit import paged, streamed, verify
from conteur.server.audit import review as rv
from conteur.server.audit import checks
from conteur.server.audit import page
from conteur.server.cli.simulate import RULESETS
from conteur.server.core.auth import Tokens
from conteur.server.store.chain import row_hash
from conteur.server.store.sqlite import SQLiteStore, decode_events
from tests.support.client_support import served
from tests.support.examples import examples
from tests.support.review_support import every_viewer, met_night, random_night


@pytest.fixture
def small_pages(monkeypatch):
    """Pages of 16 items, one kept besides the one being filled; parts of 7 values: a short
    night has many of each."""
    monkeypatch.setattr(paged, "PAGE", 16)
    monkeypatch.setattr(met, "PAGE", 4)  # finished challenges compressed by pages of 4...
    monkeypatch.setattr(verify, "COMPRESS_EVERY", 5)  # ...in the verification's walk too
    monkeypatch.setattr(paged, "CACHED", 1)
    monkeypatch.setattr(streamed, "ITEMS", 7)
    monkeypatch.setattr(streamed, "ROWS", 50)


def kept(store, session: str, viewer: Actor, lang: str, rng: random.Random) -> rv.Builder:
    """A review as a server keeps it: paged from the store, taken in random pieces."""
    builder = rv.Builder(session, viewer, lang, keep_rows=False, store=store)
    rows = store.read_after(session, 0)
    at = 0
    while at < len(rows):
        step = rows[at:at + rng.randint(1, 120)]
        builder.extend(step, decode_events([r.data for r in step]))
        at += len(step)
        if rng.random() < 0.3:
            builder.marks()  # the first screen asked for now and then, as a server does
    return builder


def streamed_bytes(store, builder: rv.Builder) -> bytes:
    return b"".join(streamed.bundle(store, streamed.taken(builder)))


@pytest.mark.parametrize("ruleset", RULESETS)
def test_the_streamed_bundle_is_the_whole_one_for_every_viewer(tmp_path, small_pages, ruleset):
    for n in range(examples(2)):
        rng = random.Random(f"{ruleset}-{n}")
        db = tmp_path / f"{ruleset}-{n}.db"
        random_night(db, "s", ruleset, rng.randint(20, 120), rng, close=rng.random() < 0.6)
        with SQLiteStore(db) as store:
            for viewer in every_viewer(store, "s"):
                lang = rng.choice(("en", "fr"))
                whole = msgspec.json.encode(page.bundle(rv.build(store, "s", viewer, lang)))
                assert streamed_bytes(store, kept(store, "s", viewer, lang, rng)) == whole, (ruleset, n, viewer)


def test_an_empty_part_and_a_night_of_one_part_stream_whole(tmp_path, monkeypatch):
    monkeypatch.setattr(streamed, "ITEMS", 10_000)
    db = tmp_path / "short.db"
    random_night(db, "s", "met", 3, random.Random(3), close=False)
    with SQLiteStore(db) as store:
        builder = kept(store, "s", STORYTELLER, "en", random.Random(4))
        parts = list(streamed.bundle(store, streamed.taken(builder)))
        assert b"".join(parts) == msgspec.json.encode(page.bundle(rv.build(store, "s")))
        assert parts[-1] == b"}"  # sent last, after every part was made


def tamper(db, sql: str) -> None:
    conn = sqlite3.connect(db)
    conn.executescript("DROP TRIGGER IF EXISTS events_no_update; DROP TRIGGER IF EXISTS events_no_delete;" + sql)
    conn.commit()
    conn.close()


@pytest.mark.parametrize("edit", [
    "",
    "UPDATE events SET data = CAST(data AS TEXT) || ' ' WHERE seq = {mid};",
    "DELETE FROM events WHERE seq = {mid};",
    "UPDATE events SET actor = 'mallory' WHERE seq = {last};",
])
def test_the_verification_by_chunks_answers_as_the_whole_one(tmp_path, monkeypatch, edit):
    monkeypatch.setattr(streamed, "ROWS", 7)
    db = tmp_path / "v.db"
    rng = random.Random(edit)
    random_night(db, "s", "met", 60, rng, close=True)
    with SQLiteStore(db) as store:
        seqs = [r.seq for r in store.read_after("s", 0)]
    tamper(db, edit.format(mid=seqs[len(seqs) // 2], last=seqs[-1]))
    with SQLiteStore(db) as store:
        rows = store.read_after("s", 0)
        head = rows[-1].seq
        for viewer in [None, *every_viewer(store, "s")]:
            whole = checks.verify(rows, "", viewer)
            by_chunks = streamed.verify_session(lambda: streamed.session_rows(store, "s", head), "s", viewer)
            assert by_chunks == whole, (edit, viewer)
            assert whole.ok == (edit == ""), whole


def forge(db, seq: int, data: bytes) -> None:
    """Rewrites one row's body and hashes the session's chain again from it: a forger who
    knows the chain's recipe; only the draws and verdicts can tell."""
    tamper(db, "")
    conn = sqlite3.connect(db)
    rows = conn.execute("SELECT seq, session, type, data, actor, device, command_id, at, prev_hash FROM events "
                        "WHERE session = 's' AND seq >= ? ORDER BY seq", (seq,)).fetchall()
    prev = rows[0][8]
    for n, session, type_, body, actor, device, command_id, at, _ in rows:
        body = data if n == seq else body
        digest = row_hash(prev, n, session, type_, body, actor, device, command_id, at)
        conn.execute("UPDATE events SET data = ?, hash = ?, prev_hash = ? WHERE seq = ?", (body, digest, prev, n))
        prev = digest
    conn.commit()
    conn.close()


@pytest.mark.parametrize("how", ["face", "undecodable"])
def test_a_forged_draw_and_an_undecodable_row_are_named_as_before(tmp_path, monkeypatch, how):
    monkeypatch.setattr(streamed, "ROWS", 5)
    db = tmp_path / "f.db"
    random_night(db, "s", "v5", 40, random.Random(7), close=True)
    with SQLiteStore(db) as store:
        rows = store.read_after("s", 0)
        who = [None, *every_viewer(store, "s")]
    drawn = [(r, msgspec.json.decode(r.data)) for r in rows if b'"face":' in bytes(r.data)]
    assert drawn
    row, body = drawn[len(drawn) // 2]
    if how == "face":
        text = bytes(row.data)
        at = text.index(b'"face":') + len(b'"face":')
        face = int(text[at:at + 1])
        data = text[:at] + str(face % 2 + 1 if face != 1 else 2).encode() + text[at + 1:]
    else:
        data = b'{"type":"no such event"}'
    forge(db, row.seq, data)
    with SQLiteStore(db) as store:
        rows = store.read_after("s", 0)
        for viewer in who:
            whole = checks.verify(rows, "", viewer)
            by_chunks = streamed.verify_session(lambda: streamed.session_rows(store, "s", rows[-1].seq), "s", viewer)
            assert by_chunks == whole, viewer
            assert not whole.ok and whole.first_bad_seq == row.seq, whole


def test_over_http_the_bundle_streams_the_whole_ones_bytes(tmp_path, small_pages):
    db = tmp_path / "served.db"
    met_night(db, "s", examples(150), "streamed", overrules=0.03)
    with SQLiteStore(db) as store:
        storyteller = Tokens(store).issue("storyteller", name="st")
    with served(db) as server:
        url = f"{server.url}/sessions/s/review"
        auth = {"Authorization": f"Bearer {storyteller}"}
        for lang in ("en", "fr"):
            httpx.get(f"{url}/first", params={"lang": lang}, headers=auth, timeout=60).raise_for_status()
            met_night(db, "s", examples(60), f"later {lang}", overrules=0.03)  # another writer on the file
            answer = httpx.get(url, params={"lang": lang}, headers=auth, timeout=60)
            assert answer.status_code == 200, answer.text
            assert answer.headers.get("transfer-encoding") == "chunked"
            assert answer.headers["content-type"].startswith("application/json")
            with SQLiteStore(db) as store:
                whole = page.bundle(rv.build(store, "s", Actor(role="storyteller", name="st"), lang))
            assert answer.content == msgspec.json.encode(whole)


def test_a_stream_that_fails_midway_never_ends_as_a_whole_bundle(tmp_path, small_pages):
    db = tmp_path / "broken.db"
    met_night(db, "s", examples(150), "broken")
    with SQLiteStore(db) as store:
        storyteller = Tokens(store).issue("storyteller", name="st")
        seqs = [r.seq for r in store.read_after("s", 0)]
    with served(db) as server:
        url = f"{server.url}/sessions/s/review"
        auth = {"Authorization": f"Bearer {storyteller}"}
        httpx.get(f"{url}/first", headers=auth, timeout=60).raise_for_status()  # the review is kept
        # rows the kept review took go missing from the store: the pages behind them cannot
        # be read again, and the stream fails after its header and verification went out
        gone = seqs[len(seqs) // 3:len(seqs) // 2]
        tamper(db, f"DELETE FROM events WHERE seq BETWEEN {gone[0]} AND {gone[-1]};")
        got = bytearray()
        failed = None
        with httpx.stream("GET", url, headers=auth, timeout=60) as answer:
            assert answer.status_code == 200  # the header was on its way before the failure
            try:
                for part in answer.iter_bytes():
                    got += part
            except httpx.HTTPError as exc:  # the chunked body ends without its last chunk
                failed = exc
        assert failed is not None, bytes(got[-200:])
        assert got.startswith(b'{"session":"s"')
        with pytest.raises(msgspec.DecodeError):
            msgspec.json.decode(bytes(got))
