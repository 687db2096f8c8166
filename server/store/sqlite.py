"""The append-only event store: one SQLite file per chronicle.

Durability: WAL with ``synchronous=FULL``, so an acknowledged event survives a power cut.
Throughput: one writer thread batches every append waiting in its queue into one
transaction (group commit) and resolves each caller's future only after COMMIT, so fsyncs
are shared by concurrent appenders and the asyncio loop never blocks on disk. Each
command's events go in their own SAVEPOINT: a batch that fails leaves nothing of itself
and does not take the others down.

Tamper evidence: each row's ``hash`` is SHA-256 over the previous row's hash and the row's
canonical bytes (``chain.py``), chained per session; triggers refuse UPDATE and DELETE.

``EventStore`` (``interface.py``) is the interface the server and CLI use; ``SQLiteStore``
is the venue's implementation, and the only module with SQL on the chronicle's tables
(with ``replay.py``'s read-only workers, ``backup.py`` and ``dbfile.py``, which work on
the file itself).
"""

from __future__ import annotations

import concurrent.futures
import sqlite3
import threading
from pathlib import Path
from typing import Iterable, Iterator, Sequence

import msgspec
import sqlite_utils

from conteur.events.game import GameState
from conteur.events.model import Event
from conteur.server.store.chain import GENESIS, Entry, Row, row_hash
from conteur.server.store import snapshot
from conteur.server.store.codec import decode_event, decode_events, encode_event, event_type
from conteur.server.store.dbfile import SCHEMA_VERSION, NewerDatabase, newer_message, open_readonly, schema_version
from conteur.server.store.fold import fold_chunks
from conteur.server.store.group import GroupCommit, resolve, utc_now
from conteur.server.store.interface import (
    EventStore, Outcome, Pending, Progress, StoreError, TokenRecord, append_events)

__all__ = [
    "EventStore", "Outcome", "Pending", "SQLiteStore", "StoreError",
    "append_events", "decode_event", "file_rows", "decode_events", "encode_event", "fold_session",
    "latest_snapshot",
]

_seqs_encoder = msgspec.json.Encoder()
_seqs_decoder = msgspec.json.Decoder(list[int])


def tip(conn: sqlite3.Connection, session: str, seq: int) -> str | None:
    """The hash of ``session``'s row at ``seq``, None when it has none there: what a
    snapshot is checked against (server/store/snapshot.py)."""
    row = conn.execute("SELECT hash FROM events WHERE seq=? AND session=?", (seq, session)).fetchone()
    return row[0] if row is not None else None


# the state snapshots of a version this conteur opens (server/store/snapshot.py)
_SNAPSHOT_ROWS = f"version IN ({','.join(map(str, snapshot.STATE_ROWS))})"


def latest_snapshot(conn: sqlite3.Connection, session: str,
                    at: int | None = None) -> tuple[int, GameState | None]:
    """(seq, state) of the session's newest usable snapshot (at or before ``at``), or
    (0, None)."""
    sql = f"SELECT seq, version, state FROM snapshots WHERE session=? AND {_SNAPSHOT_ROWS}"
    args: tuple = (session,)
    if at is not None:
        sql += " AND seq <= ?"
        args += (at,)
    row = conn.execute(sql + " ORDER BY seq DESC LIMIT 1", args).fetchone()
    state = None if row is None else snapshot.open_state(row[1], row[2], row[0],
                                                         lambda seq: tip(conn, session, seq))
    if state is None:
        return 0, None  # an unusable snapshot is skipped: replay from zero is the truth
    return row[0], state


def _scan_span(conn: sqlite3.Connection, session: str, after: int, upto: int | None) -> tuple[int, int] | None:
    """(after, upto) of a scan of ``session``'s rows, narrowed to the session's own span
    (``heads``); None for a session with no row."""
    span = conn.execute("SELECT first, last FROM heads WHERE session=?", (session,)).fetchone()
    if span is None:
        return None
    return max(after, span[0] - 1), min(upto if upto is not None else 1 << 62, span[1])


# rows a replay reads and decodes at a time: a few MB at most
FOLD_CHUNK = 5000


def session_events(conn: sqlite3.Connection, session: str, after: int = 0, upto: int | None = None,
                   chunk: int = 20000) -> Iterator[tuple[int, list[Event]]]:
    """Decoded events of a session in chunks: (last seq of chunk, events)."""
    span = _scan_span(conn, session, after, upto)
    if span is None:
        return
    after, upto = span
    while True:
        rows = conn.execute(
            "SELECT seq, data FROM events WHERE seq > ? AND seq <= ? AND session = ? ORDER BY seq LIMIT ?",
            (after, upto, session, chunk),
        ).fetchall()
        if not rows:
            return
        after = rows[-1][0]
        yield after, decode_events([d for _, d in rows])


def fold_session(conn: sqlite3.Connection, session: str, at: int | None = None, *,
                 use_snapshots: bool = True, progress=None) -> tuple[GameState, int]:
    """(state at ``at`` or at the session's end, with ``head`` set; events folded after
    the snapshot it started from): what ``load_state`` and replay workers run."""
    start, state = latest_snapshot(conn, session, at) if use_snapshots else (0, None)
    return fold_chunks(start, state, session_events(conn, session, start, at, FOLD_CHUNK), progress)


def file_rows(path: str | Path) -> Iterator[Row]:
    """Every row of a chronicle file in seq order, read without writing anything to it
    (not even a -wal or -shm file): what ``conteur verify`` walks, server running or not."""
    conn = open_readonly(path)
    try:
        for r in conn.execute("SELECT seq, session, type, data, actor, device, command_id, at, "
                              "prev_hash, hash FROM events ORDER BY seq"):
            yield Row(*r)
    finally:
        conn.close()


def _check_pragmas(conn: sqlite3.Connection, path: str) -> None:
    conn.execute("PRAGMA busy_timeout=5000")
    if path != ":memory:":
        mode = conn.execute("PRAGMA journal_mode=WAL").fetchone()[0]
        if mode.lower() != "wal":
            raise StoreError(f"{path}: could not switch to WAL (journal_mode is {mode})")
    conn.execute("PRAGMA synchronous=FULL")
    sync = conn.execute("PRAGMA synchronous").fetchone()[0]
    if sync != 2:
        raise StoreError(f"{path}: synchronous is {sync}, FULL (2) is required")


SCHEMA_TRIGGERS = """
CREATE TRIGGER IF NOT EXISTS events_no_update BEFORE UPDATE ON events
BEGIN SELECT RAISE(ABORT, 'events are append-only: UPDATE refused'); END;
CREATE TRIGGER IF NOT EXISTS events_no_delete BEFORE DELETE ON events
BEGIN SELECT RAISE(ABORT, 'events are append-only: DELETE refused'); END;
"""


def create_schema(db: sqlite_utils.Database) -> None:
    if "events" not in db.table_names():
        db["events"].create(
            {
                "seq": int,
                "session": str,
                "type": str,
                "data": bytes,
                "actor": str,
                "device": str,
                "command_id": str,
                "at": str,
                "prev_hash": str,
                "hash": str,
            },
            pk="seq",
            not_null={"session", "type", "data", "actor", "device", "command_id", "at", "prev_hash", "hash"},
        )
    if "commands" not in db.table_names():
        # (session, device, command_id) is the idempotency key: a retry gets its first
        # outcome. Its UNIQUE index is made by ``migrate_schema``, after an older file's
        # duplicates (none the server wrote) are left out.
        db.execute(
            "CREATE TABLE commands (device TEXT NOT NULL, command_id TEXT NOT NULL, "
            "session TEXT NOT NULL, seqs TEXT NOT NULL, code TEXT, message TEXT)"
        )
    if "snapshots" not in db.table_names():
        db["snapshots"].create(
            {"session": str, "seq": int, "version": int, "state": bytes},
            pk=("session", "seq"),
        )
    # A view's snapshot (server/core/keep.py): a player's, the observers', the storytellers',
    # a kept review's; one per (session, view), replaced, a cache like ``snapshots``
    db.execute("CREATE TABLE IF NOT EXISTS views (session TEXT NOT NULL, view TEXT NOT NULL, "
               "seq INTEGER NOT NULL, data BLOB NOT NULL, PRIMARY KEY (session, view)) WITHOUT ROWID")
    # Each session's first and last seq, written in the group commit's transaction: the
    # events table has no (session, seq) index (it would cost a third of append speed),
    # so without this, listing sessions and bounding a session's tail scanned the log.
    db.execute("CREATE TABLE IF NOT EXISTS heads (session TEXT PRIMARY KEY, "
               "first INTEGER NOT NULL, last INTEGER NOT NULL) WITHOUT ROWID")
    # Tokens by digest only (a stolen file or backup gives no working token); the FAIR-2
    # seeds outside the append-only log until their session reveals them.
    db.execute("CREATE TABLE IF NOT EXISTS tokens (hash TEXT PRIMARY KEY, role TEXT NOT NULL, "
               "character TEXT, session TEXT, name TEXT NOT NULL DEFAULT '', "
               "created TEXT NOT NULL, revoked TEXT, parent TEXT)")
    # a file from before device credentials: the column is added (NULL: every token a link)
    if "parent" not in {row[1] for row in db.execute("PRAGMA table_info(tokens)").fetchall()}:
        db.execute("ALTER TABLE tokens ADD COLUMN parent TEXT")
    db.execute("CREATE TABLE IF NOT EXISTS secrets (session TEXT PRIMARY KEY, seed BLOB NOT NULL)")
    db.conn.executescript(SCHEMA_TRIGGERS)


# Tables an older conteur kept and this one neither writes nor reads: the draw summaries
# its replay merged beside the events (derived data, outside the hash chain; the log's
# draw records are the truth, and the replay now counts them).
DROPPED_TABLES = ("drawn_pairs", "drawn")


def migrate_schema(conn: sqlite3.Connection) -> None:
    """Brings a file of an older layout (``PRAGMA user_version`` below ``SCHEMA_VERSION``)
    to this one, in one transaction: 0 and 1 kept the draw summaries, dropped here, and
    kept commands unique in the writer's memory, a UNIQUE index here (a later row of a key
    already stored, which no server wrote, is left out: a retry got the first outcome)."""
    if conn.execute("PRAGMA user_version").fetchone()[0] >= SCHEMA_VERSION:
        return
    conn.execute("BEGIN IMMEDIATE")
    try:
        for table in DROPPED_TABLES:
            conn.execute(f"DROP TABLE IF EXISTS {table}")
        conn.execute("DELETE FROM commands WHERE rowid NOT IN "
                     "(SELECT min(rowid) FROM commands GROUP BY session, device, command_id)")
        conn.execute("CREATE UNIQUE INDEX IF NOT EXISTS commands_key ON commands (session, device, command_id)")
        conn.execute(f"PRAGMA user_version={SCHEMA_VERSION}")
        conn.execute("COMMIT")
    except BaseException:
        conn.execute("ROLLBACK")
        raise


def _rebuild_heads(conn: sqlite3.Connection) -> None:
    """When the heads disagree with the log (a file from before the table, rows written
    by another tool), they are recomputed from the log once."""
    last = conn.execute("SELECT max(seq) FROM events").fetchone()[0]
    known = conn.execute("SELECT max(last) FROM heads").fetchone()
    if last == known[0]:
        return
    conn.execute("BEGIN IMMEDIATE")
    conn.execute("DELETE FROM heads")
    conn.execute("INSERT INTO heads SELECT session, min(seq), max(seq) FROM events GROUP BY session")
    conn.execute("COMMIT")


def refuse_newer(path: str) -> None:
    """A newer conteur's file is refused before anything is written to it (even the
    journal mode), with its version and ours: never a traceback at the first read."""
    if path == ":memory:" or not Path(path).is_file() or Path(path).stat().st_size == 0:
        return
    try:
        conn = open_readonly(path)
        try:
            version = schema_version(conn)
        finally:
            conn.close()
    except sqlite3.DatabaseError:
        return  # not readable as a database: the connection below says so
    if version > SCHEMA_VERSION:
        raise NewerDatabase(newer_message(path, version))


# Where a stored command's outcome lies: its idempotency key, in the UNIQUE index
# ``migrate_schema`` makes (``commands_key``).
_OUTCOMES = ("SELECT c.session, c.device, c.command_id, c.seqs, c.code, c.message FROM (VALUES {}) AS k "
             "JOIN commands AS c ON c.session = k.column1 AND c.device = k.column2 AND c.command_id = k.column3")
_KEYS_AT_ONCE = 300  # three variables a key: far below SQLite's limit on variables


def _outcome(row: tuple) -> Outcome:
    return Outcome(seqs=tuple(_seqs_decoder.decode(row[3])), code=row[4], message=row[5], replayed=True)


def stored_outcomes(conn: sqlite3.Connection, keys: Sequence[tuple[str, str, str]]) -> dict[tuple[str, str, str], Outcome]:
    """The stored outcome of each ``(session, device, command_id)`` of ``keys`` that has one:
    one query for a group commit's commands, not one each."""
    found = {}
    for i in range(0, len(keys), _KEYS_AT_ONCE):
        some = keys[i:i + _KEYS_AT_ONCE]
        sql = _OUTCOMES.format(",".join(["(?,?,?)"] * len(some)))
        for row in conn.execute(sql, [v for key in some for v in key]):
            found[row[:3]] = _outcome(row)
    return found


class SQLiteStore(GroupCommit):
    """``EventStore`` on one SQLite file, with a group-committing writer thread."""

    def __init__(self, path: str | Path, *, snapshot_every: int = 1000, max_batch: int = 512):
        self.path = str(path)
        self.snapshot_every = snapshot_every
        self.max_batch = max_batch
        self._local = threading.local()
        refuse_newer(self.path)
        conn = self._connect()
        create_schema(sqlite_utils.Database(conn))
        conn.commit()
        migrate_schema(conn)
        _rebuild_heads(conn)
        last = conn.execute("SELECT max(seq) FROM events").fetchone()
        self._head = last[0] or 0
        conn.close()
        self._last_hash: dict[str, str] = {}  # per session: each session is its own chain
        self._start_writer("conteur-writer")

    # -- connections ---------------------------------------------------------------

    def _connect(self) -> sqlite3.Connection:
        conn = sqlite3.connect(self.path, isolation_level=None, check_same_thread=False)
        _check_pragmas(conn, self.path)
        return conn

    @property
    def _reader(self) -> sqlite3.Connection:
        conn = getattr(self._local, "conn", None)
        if conn is None:
            conn = self._local.conn = self._connect()
        return conn

    # -- appends ---------------------------------------------------------------------

    def _commit(self, conn: sqlite3.Connection, batch: list) -> None:
        """One transaction for the whole batch, with as few SQLite calls as possible.

        Each sqlite3 call releases the GIL and may wait up to a switch interval to get it
        back while the event loop is busy, so the work is done in Python first (encode,
        idempotency, seqs, hashes) and written with one executemany per table. A command
        whose events cannot be encoded fails alone, before anything touches the file.
        """
        results: list[tuple[concurrent.futures.Future, Outcome | BaseException]] = []
        # the outcomes stored earlier, and this batch's, by (session, device, id)
        known = stored_outcomes(conn, list({(p.session, p.device, p.command_id): None
                                            for p, _ in batch if p.command_id}))
        head = self._head
        tips = dict(self._last_hash)  # committed only with the transaction
        event_rows: list[tuple] = []
        command_rows: list[tuple] = []
        at = utc_now()
        for pending, future in batch:
            key = (pending.device, pending.command_id)
            if pending.command_id:
                # stored earlier, or a retry of a command earlier in this same batch
                previous = known.get((pending.session, *key))
                if previous is not None:
                    results.append((future, msgspec.structs.replace(previous, replayed=True)))
                    continue
            try:
                datas = [(event_type(e), encode_event(e)) for e in pending.events]
            except Exception as exc:  # this command alone fails; nothing of it is written
                results.append((future, exc))
                continue
            last_hash = self._chain_tip(conn, pending.session, tips)
            seqs = []
            for tag, data in datas:
                head += 1
                digest = row_hash(last_hash, head, pending.session, tag, data, pending.actor,
                                  pending.device, pending.command_id, at)
                event_rows.append((head, pending.session, tag, data, pending.actor, pending.device,
                                   pending.command_id, at, last_hash, digest))
                last_hash = digest
                seqs.append(head)
            tips[pending.session] = last_hash
            outcome = Outcome(seqs=tuple(seqs), code=pending.code, message=pending.message)
            if pending.command_id:
                command_rows.append((pending.device, pending.command_id, pending.session,
                                     _seqs_encoder.encode(seqs).decode(), pending.code, pending.message))
                known[(pending.session, *key)] = outcome
            results.append((future, outcome))
        try:
            conn.execute("BEGIN IMMEDIATE")
            if event_rows:
                conn.executemany("INSERT INTO events VALUES (?,?,?,?,?,?,?,?,?,?)", event_rows)
                spans: dict[str, list[int]] = {}
                for row in event_rows:
                    span = spans.setdefault(row[1], [row[0], row[0]])
                    span[1] = row[0]
                conn.executemany(
                    "INSERT INTO heads VALUES (?,?,?) ON CONFLICT(session) DO UPDATE SET last=excluded.last",
                    [(sid, first, last) for sid, (first, last) in spans.items()])
            if command_rows:
                conn.executemany("INSERT INTO commands VALUES (?,?,?,?,?,?)", command_rows)
            conn.execute("COMMIT")
        except Exception as exc:  # the whole transaction failed (disk full, I/O error)
            try:
                conn.execute("ROLLBACK")
            except sqlite3.Error:
                pass
            self._last_hash = {}  # re-read the tips from the file next time
            error = StoreError(f"append failed, nothing was written: {exc}")
            resolve([(future, error) for _, future in batch])
            return
        self._head, self._last_hash = head, tips
        resolve(results)

    def _chain_tip(self, conn, session: str, tips: dict[str, str]) -> str:
        tip = tips.get(session)
        if tip is None:
            # through heads: a backwards scan for a session quiet since early in a big
            # chronicle would read most of the file
            row = conn.execute(
                "SELECT hash FROM events WHERE seq = (SELECT last FROM heads WHERE session=?)", (session,)
            ).fetchone()
            tip = tips[session] = row[0] if row else GENESIS
        return tip

    # -- reads -----------------------------------------------------------------------

    def outcome_of(self, device: str, command_id: str, session: str | None = None) -> Outcome | None:
        if session is not None:
            return stored_outcomes(self._reader, [(session, device, command_id)]).get((session, device, command_id))
        row = self._reader.execute(  # without the session: a scan, for tools and tests
            "SELECT seqs, code, message FROM commands WHERE device=? AND command_id=?",
            (device, command_id),
        ).fetchone()
        if row is None:
            return None
        return Outcome(seqs=tuple(_seqs_decoder.decode(row[0])), code=row[1], message=row[2], replayed=True)

    def head(self) -> int:
        row = self._reader.execute("SELECT max(seq) FROM events").fetchone()
        return row[0] or 0

    def session_span(self, session: str) -> tuple[int, int] | None:
        span = self._reader.execute("SELECT first, last FROM heads WHERE session=?", (session,)).fetchone()
        return (span[0], span[1]) if span is not None else None

    def session_head(self, session: str, upto: int | None = None) -> int:
        span = self.session_span(session)
        if span is None or (upto is not None and upto < span[0]):
            return 0
        if upto is None or span[1] <= upto:
            return span[1]
        row = self._reader.execute(
            "SELECT max(seq) FROM events WHERE seq >= ? AND seq <= ? AND session = ?", (span[0], upto, session)
        ).fetchone()
        return row[0] or 0

    def read_after(self, session: str, after: int = 0, limit: int | None = None,
                   upto: int | None = None) -> list[Row]:
        # No (session, seq) index: the primary-key range, narrowed to the session's span
        # by heads, does the work; an index would cost about a third of append speed
        # (DESIGN, numbers).
        span = self.session_span(session)
        if span is None:
            return []
        last = span[1] if upto is None else min(upto, span[1])
        sql = "SELECT * FROM events WHERE seq > ? AND seq <= ? AND session = ? ORDER BY seq"
        args: tuple = (max(after, span[0] - 1), last, session)
        if limit is not None:
            sql += " LIMIT ?"
            args += (limit,)
        return [Row(*r) for r in self._reader.execute(sql, args)]

    def read_entries(self, session: str, after: int = 0, limit: int | None = None) -> list[Entry]:
        span = self.session_span(session)
        if span is None:
            return []
        sql = "SELECT seq, type, data, actor, at FROM events WHERE seq > ? AND seq <= ? AND session = ? ORDER BY seq"
        args: tuple = (max(after, span[0] - 1), span[1], session)
        if limit is not None:
            sql += " LIMIT ?"
            args += (limit,)
        return [Entry(*r) for r in self._reader.execute(sql, args)]

    def rows(self, after: int = 0, upto: int | None = None) -> Iterator[Row]:
        sql, args = "SELECT * FROM events WHERE seq > ?", (after,)
        if upto is not None:
            sql, args = sql + " AND seq <= ?", (after, upto)
        for r in self._reader.execute(sql + " ORDER BY seq", args):
            yield Row(*r)

    def sessions(self) -> list[str]:
        return [r[0] for r in self._reader.execute("SELECT session FROM heads ORDER BY first")]

    def iter_events(self, session: str, after: int = 0, upto: int | None = None,
                    chunk: int = 20000) -> Iterator[tuple[int, list[Event]]]:
        return session_events(self._reader, session, after, upto, chunk)

    # -- state -----------------------------------------------------------------------

    def latest_snapshot(self, session: str, at: int | None = None) -> tuple[int, GameState | None]:
        return latest_snapshot(self._reader, session, at)

    def snapshot_head(self, session: str) -> int:
        row = self._reader.execute(f"SELECT max(seq) FROM snapshots WHERE session=? AND {_SNAPSHOT_ROWS}",
                                   (session,)).fetchone()
        return row[0] or 0

    def load_state(self, session: str, at: int | None = None, *, use_snapshots: bool = True,
                   progress: Progress | None = None) -> GameState:
        state, folded = fold_session(self._reader, session, at, use_snapshots=use_snapshots,
                                     progress=progress)
        if use_snapshots and at is None and folded >= self.snapshot_every:
            self.save_snapshot(session, state.head, state)
        return state

    def load_states(self, sessions: Sequence[str] | None = None, *,
                    use_snapshots: bool = True, workers: int | None = None) -> dict[str, GameState]:
        """Folded over worker processes when there is much to fold (``replay.py``)."""
        from conteur.server.store import replay  # it imports this module

        return replay.load_states(self, sessions, use_snapshots=use_snapshots, workers=workers)

    def save_snapshot(self, session: str, seq: int, state: GameState, *, keep: int | None = None) -> None:
        """Saves the state at ``seq``; with ``keep``, only the newest ``keep`` snapshots of
        the session stay (periodic snapshots of a long night would fill a Pi's card). A
        seq with no row of the session is saved at nothing: no snapshot could open there."""
        conn = self._connect()
        try:
            at = tip(conn, session, seq)
            if at is None:
                return
            conn.execute(
                "INSERT OR REPLACE INTO snapshots VALUES (?,?,?,?)",
                (session, seq, snapshot.VERSION, snapshot.encode(seq, at, state)),
            )
            if keep is not None:
                conn.execute(
                    "DELETE FROM snapshots WHERE session=? AND seq NOT IN "
                    "(SELECT seq FROM snapshots WHERE session=? ORDER BY seq DESC LIMIT ?)",
                    (session, session, keep),
                )
        finally:
            conn.close()

    def save_views(self, session: str, seq: int, views: dict[str, bytes]) -> None:
        conn = self._connect()
        try:
            with conn:
                conn.execute("BEGIN")
                conn.executemany("INSERT OR REPLACE INTO views VALUES (?,?,?,?)",
                                 [(session, view, seq, data) for view, data in views.items()])
        finally:
            conn.close()

    def load_view(self, session: str, view: str) -> tuple[int, bytes] | None:
        row = self._reader.execute("SELECT seq, data FROM views WHERE session=? AND view=?",
                                   (session, view)).fetchone()
        return (row[0], bytes(row[1])) if row is not None else None

    # -- tokens ----------------------------------------------------------------------

    def _write(self, sql: str, args: tuple = ()) -> list[tuple]:
        """One statement on its own connection (autocommit), off the writer thread: these
        tables are small and seldom written, and never in a group commit's way."""
        conn = self._connect()
        try:
            return conn.execute(sql, args).fetchall()
        finally:
            conn.close()

    def add_tokens(self, records: Sequence[TokenRecord]) -> None:
        now = utc_now()
        conn = self._connect()
        try:
            with conn:
                conn.execute("BEGIN")
                conn.executemany(
                    "INSERT INTO tokens (hash, role, character, session, name, created, parent) "
                    "VALUES (?,?,?,?,?,?,?)",
                    [(r.hash, r.role, r.character, r.session, r.name, now, r.parent) for r in records])
        except sqlite3.IntegrityError as exc:
            raise StoreError(f"no token was added: a digest is already stored ({exc})") from None
        finally:
            conn.close()

    def token(self, digest: str) -> TokenRecord | None:
        row = self._reader.execute(
            "SELECT role, character, session, name, parent FROM tokens WHERE hash=? AND revoked IS NULL",
            (digest,),
        ).fetchone()
        if row is None:
            return None
        return TokenRecord(hash=digest, role=row[0], character=row[1], session=row[2], name=row[3],
                           parent=row[4])

    def revoke_tokens(self, *, session: str, character: str) -> list[str]:
        return [row[0] for row in self._write(
            "UPDATE tokens SET revoked=? WHERE role='player' AND character=? "
            "AND (session=? OR session IS NULL) AND revoked IS NULL RETURNING hash",
            (utc_now(), character, session))]

    def revoked_tokens(self) -> list[str]:
        return [row[0] for row in self._reader.execute("SELECT hash FROM tokens WHERE revoked IS NOT NULL")]

    def live_tokens(self, session: str | None = None) -> list[TokenRecord]:
        sql = "SELECT hash, role, character, session, name, parent FROM tokens WHERE revoked IS NULL"
        args: tuple = ()
        if session is not None:
            sql += " AND (session=? OR session IS NULL)"
            args = (session,)
        return [TokenRecord(hash=r[0], role=r[1], character=r[2], session=r[3], name=r[4], parent=r[5])
                for r in self._reader.execute(sql + " ORDER BY rowid", args)]

    def revoke_digests(self, digests: Sequence[str]) -> list[str]:
        digests = list(dict.fromkeys(digests))
        if not digests:
            return []
        marks = ",".join("?" * len(digests))
        return [row[0] for row in self._write(
            f"UPDATE tokens SET revoked=? WHERE hash IN ({marks}) AND revoked IS NULL RETURNING hash",
            (utc_now(), *digests))]

    def count_tokens(self, role: str | None = None) -> int:
        sql = "SELECT count(*) FROM tokens WHERE revoked IS NULL"
        args: tuple = ()
        if role is not None:
            sql += " AND role=?"
            args = (role,)
        return self._reader.execute(sql, args).fetchone()[0]

    # -- session secrets ---------------------------------------------------------------

    def secret(self, session: str) -> bytes | None:
        row = self._reader.execute("SELECT seed FROM secrets WHERE session=?", (session,)).fetchone()
        return row[0] if row is not None else None

    def create_secret(self, session: str, seed: bytes) -> bytes:
        self._write("INSERT OR IGNORE INTO secrets VALUES (?, ?)", (session, seed))
        return self.secret(session)

    # -- life --------------------------------------------------------------------------

    # a write waits this long for another connection's lock (``busy_timeout``)
    deadline = 30.0  # a file on this machine: only a very busy disk comes near it

    def trouble(self) -> str | None:
        return None  # a file on this machine: a failure is the command's own error

    def close(self) -> None:
        if not self._stop_writer():
            return
        conn = getattr(self._local, "conn", None)
        if conn is not None:
            conn.close()
            self._local.conn = None

    def __enter__(self) -> SQLiteStore:
        return self

    def __exit__(self, *exc) -> None:
        self.close()

