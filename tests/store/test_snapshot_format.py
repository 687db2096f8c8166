"""One snapshot format (server/store/snapshot.py) for every cache of a session's state:
the store's state snapshots, a view's and a kept review's (server/core/keep.py,
server/audit/kept.py). A file of the previous schema with a snapshot of the previous
format opens, verifies and folds from it; what this conteur writes is the one envelope,
checked against the log it was folded from."""

from __future__ import annotations

import functools
import gzip
import shutil
import sqlite3
from pathlib import Path

import msgspec
import pytest

from conteur.events import game
from conteur.server.audit.verify import verify_path
from conteur.server.core import keep
from conteur.server.store import snapshot
from conteur.server.store import sqlite as store_sqlite
from conteur.server.store.codec import decode_events
from conteur.server.store.sqlite import SQLiteStore

OLD_FILE = Path(__file__).resolve().parents[1] / "support" / "chronicle_schema1.db.gz"


def reference(events) -> game.GameState:
    return functools.reduce(game.evolve, events, game.initial())


def headless(state: game.GameState) -> game.GameState:
    return msgspec.structs.replace(state, head=0)


@pytest.fixture
def old_file(tmp_path) -> Path:
    db = tmp_path / "old.db"
    with gzip.open(OLD_FILE) as src, open(db, "wb") as dst:
        shutil.copyfileobj(src, dst)
    return db


def _longest(db: Path) -> tuple[str, list[tuple[int, str]], list]:
    """The session with the most rows: its (seq, hash) rows and its events."""
    conn = sqlite3.connect(db)
    try:
        sid = conn.execute("SELECT session FROM events GROUP BY session ORDER BY count(*) DESC").fetchone()[0]
        rows = conn.execute("SELECT seq, hash, data FROM events WHERE session=? ORDER BY seq", (sid,)).fetchall()
    finally:
        conn.close()
    return sid, [(seq, h) for seq, h, _ in rows], decode_events([d for _, _, d in rows])


def _previous_state_snapshot(db: Path, sid: str, seq: int, state: game.GameState) -> None:
    """A state snapshot as the previous conteur wrote it: version 1, the bare msgpack of
    the state, no envelope."""
    conn = sqlite3.connect(db)
    with conn:
        conn.execute("INSERT INTO snapshots VALUES (?,?,?,?)",
                     (sid, seq, snapshot.LEGACY_STATE, msgspec.msgpack.encode(state, enc_hook=game.enc_hook)))
    conn.close()


def _state_rows(db: Path, sid: str) -> list[tuple[int, int, bytes]]:
    conn = sqlite3.connect(db)
    try:
        return conn.execute("SELECT seq, version, state FROM snapshots WHERE session=? ORDER BY seq",
                            (sid,)).fetchall()
    finally:
        conn.close()


def test_a_previous_state_snapshot_in_a_previous_schema_file_opens_and_bounds_the_fold(old_file):
    """Given a schema-1 file holding a state snapshot of the previous format halfway
    through its longest session, when it is verified and opened, then it verifies, the
    fold starts from that snapshot (only the events after it folded) and ends where a fold
    from zero ends; the next snapshot saved is of the one format, and opens."""
    sid, rows, events = _longest(old_file)
    half = len(rows) // 2
    seq = rows[half - 1][0]
    _previous_state_snapshot(old_file, sid, seq, msgspec.structs.replace(reference(events[:half]), head=seq))
    assert verify_path(old_file).ok
    with SQLiteStore(old_file, snapshot_every=10**9) as store:
        at, found = store.latest_snapshot(sid)
        assert at == seq and headless(found) == reference(events[:half])
        assert store.snapshot_head(sid) == seq
        state, folded = store_sqlite.fold_session(store._reader, sid)
        assert folded == len(rows) - half
        assert headless(state) == reference(events) == headless(store.load_state(sid, use_snapshots=False))
        store.save_snapshot(sid, rows[-1][0], state)
        at, again = store.latest_snapshot(sid)
        assert at == rows[-1][0] and again == state
    written = _state_rows(old_file, sid)[-1]
    assert written[:2] == (rows[-1][0], snapshot.VERSION)
    envelope = msgspec.msgpack.decode(written[2], type=snapshot.Envelope)
    assert (envelope.version, envelope.seq, envelope.tip) == (snapshot.VERSION, rows[-1][0], rows[-1][1])
    assert verify_path(old_file).ok


def _respoil(db: Path, sid: str, seq: int, data: bytes, version: int) -> None:
    conn = sqlite3.connect(db)
    with conn:
        conn.execute("UPDATE snapshots SET state=?, version=? WHERE session=? AND seq=?", (data, version, sid, seq))
    conn.close()


@pytest.mark.parametrize("spoil", ["another log", "another seq", "a version not read", "garbage"])
def test_a_state_snapshot_that_does_not_fit_the_log_is_skipped(old_file, spoil):
    """A state snapshot whose tip is not the session's row at its seq (another log under
    the same name), whose envelope names another seq than its row, of a version this
    conteur does not read, or not decodable, is skipped: the fold starts from zero and
    ends where it would have."""
    sid, rows, events = _longest(old_file)
    seq = rows[len(rows) // 2 - 1][0]
    with SQLiteStore(old_file, snapshot_every=10**9) as store:
        store.save_snapshot(sid, seq, store.load_state(sid, at=seq, use_snapshots=False))
        assert store.latest_snapshot(sid)[0] == seq
    data = _state_rows(old_file, sid)[-1][2]
    envelope = msgspec.msgpack.decode(data, type=snapshot.Envelope)
    if spoil == "another log":
        _respoil(old_file, sid, seq, msgspec.msgpack.encode(msgspec.structs.replace(envelope, tip="0" * 64)),
                 snapshot.VERSION)
    elif spoil == "another seq":
        _respoil(old_file, sid, seq, msgspec.msgpack.encode(msgspec.structs.replace(envelope, seq=rows[0][0])),
                 snapshot.VERSION)
    elif spoil == "a version not read":
        _respoil(old_file, sid, seq, msgspec.msgpack.encode(msgspec.structs.replace(
            envelope, version=snapshot.VERSION + 1)), snapshot.VERSION + 1)
    else:
        _respoil(old_file, sid, seq, b"\x94not a snapshot", snapshot.VERSION)
    with SQLiteStore(old_file, snapshot_every=10**9) as store:
        assert store.latest_snapshot(sid) == (0, None)
        state, folded = store_sqlite.fold_session(store._reader, sid)
        assert folded == len(rows) and headless(state) == reference(events)


class Body(msgspec.Struct, array_like=True):
    seen: int
    note: str


def test_a_view_snapshot_of_the_previous_envelope_opens_and_the_one_format_is_written(old_file):
    """A view's snapshot in the previous envelope (version ``[1, 1]``) opens as it did,
    at its seq and not before; a view saved now is the one format, as a state's is; a
    view envelope of a version never written (``[1, 2]``) is skipped."""
    sid, rows, _ = _longest(old_file)
    seq, tip = rows[len(rows) // 2]
    with SQLiteStore(old_file) as store:
        previous = msgspec.msgpack.encode([[1, 1], seq, tip, Body(seq, "kept")])
        store.save_views(sid, seq, {"v": previous})
        assert keep.load(store, sid, "v", seq, Body) == (seq, Body(seq, "kept"))
        assert keep.load(store, sid, "v", seq - 1, Body) is None  # folded past where it is asked
        store.save_views(sid, seq, {"v": msgspec.msgpack.encode([[1, 2], seq, tip, Body(seq, "kept")])})
        assert keep.load(store, sid, "v", seq, Body) is None
        assert keep.save(store, sid, "v", seq, Body(seq, "now"))
        assert keep.load(store, sid, "v", rows[-1][0], Body) == (seq, Body(seq, "now"))
        data = store.load_view(sid, "v")[1]
    envelope = msgspec.msgpack.decode(data, type=snapshot.Envelope)
    assert (envelope.version, envelope.seq, envelope.tip) == (snapshot.VERSION, seq, tip)
    assert snapshot.body(data) == msgspec.msgpack.encode(Body(seq, "now"))
