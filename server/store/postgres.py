"""The event store on PostgreSQL: one database per chronicle, shared by many processes.

For a convention (several server processes, one chronicle) or an organisation's archive
of every venue's nights. Same interface, same guarantees, same bytes as ``SQLiteStore``:
a chronicle moves between the two (``conteur migrate``) and verifies the same.

Order across processes: every append transaction first locks the one row of
``log_head`` (``SELECT ... FOR UPDATE``), so transactions that write events follow each
other, seqs are gapless in commit order, and any reader sees a prefix of the log. Under
that lock the writer reads the chain tips of its sessions (``heads.hash``) and the
idempotency keys already stored (``commands``): another process's appends are seen, never
a stale in-memory copy, so a command id sent to two processes is written once.

Group commit as in SQLite: one writer thread per process takes every append waiting in
its queue into one transaction and resolves the futures after COMMIT (with
``synchronous_commit`` on: flushed to the WAL).

Append-only, enforced by the database: triggers refuse UPDATE, DELETE and TRUNCATE on
``events`` and ``commands`` for everyone, and ``grant_server_role`` gives the role the
server logs in as only SELECT and INSERT on them (a superuser or the tables' owner could
still drop a trigger: the hash chain then names the edit, as with a hand-edited file).
"""

from __future__ import annotations

import re
import threading
from typing import Iterator, Sequence

import msgspec

from conteur.events.game import IGNORED, GameState
from conteur.events.model import Event
from conteur.server.store.chain import GENESIS, Entry, Row, row_hash
from conteur.server.store import snapshot
from conteur.server.store.codec import decode_events, encode_event, event_type
from conteur.server.store.fold import fold_chunks
from conteur.server.store.interface import Basis, Outcome, Progress, StoreError, TokenRecord
from conteur.server.store.group import GroupCommit, resolve, utc_now

try:
    import psycopg
except ImportError:  # pragma: no cover - the `postgresql` extra is not installed
    psycopg = None

__all__ = ["PG_SCHEMA_VERSION", "PostgresStore", "database_name", "grant_server_role", "is_postgres_url",
           "postgres_error", "redact"]

# In conteur_meta, like SQLite's user_version: an older conteur refuses a newer schema.
PG_SCHEMA_VERSION = 1

_URL = re.compile(r"^postgres(ql)?://")


def is_postgres_url(target: str) -> bool:
    return bool(_URL.match(str(target)))


def database_name(url: str) -> str:
    return url.rsplit("/", 1)[-1].split("?", 1)[0] or "postgres"


def postgres_error(exc: BaseException) -> tuple[int, str] | None:
    """(exit status, one line) for an error PostgreSQL gave a command, or None."""
    if psycopg is None or not isinstance(exc, psycopg.Error):
        return None
    from conteur.server.store.dbfile import EXIT_BAD_INPUT

    return EXIT_BAD_INPUT, f"PostgreSQL refused: {_first_line(exc)}"


def redact(url: str) -> str:
    """The URL without its password, for messages and logs."""
    return re.sub(r"(://[^:/@]+):[^@]*@", r"\1:***@", url)


SCHEMA = """
CREATE TABLE conteur_meta (key text PRIMARY KEY, value text NOT NULL);
CREATE TABLE events (
    seq bigint PRIMARY KEY,
    session text NOT NULL, type text NOT NULL, data bytea NOT NULL, actor text NOT NULL,
    device text NOT NULL, command_id text NOT NULL, at text NOT NULL,
    prev_hash text NOT NULL, hash text NOT NULL);
-- a session's rows by seq: resync, replay and read_after, without scanning other sessions
CREATE INDEX events_session_seq ON events (session, seq);
-- the last seq: locked by every append transaction, which orders them across processes
CREATE TABLE log_head (id int PRIMARY KEY CHECK (id = 1), seq bigint NOT NULL);
INSERT INTO log_head VALUES (1, 0);
-- each session's span and chain tip, written in the append's transaction
CREATE TABLE heads (session text PRIMARY KEY, first bigint NOT NULL, last bigint NOT NULL,
                    hash text NOT NULL);
CREATE TABLE commands (device text NOT NULL, command_id text NOT NULL, session text NOT NULL,
                       seqs bigint[] NOT NULL, code text, message text,
                       PRIMARY KEY (device, command_id));
CREATE TABLE snapshots (session text NOT NULL, seq bigint NOT NULL, version int NOT NULL,
                        state bytea NOT NULL, PRIMARY KEY (session, seq));
CREATE TABLE views (session text NOT NULL, view text NOT NULL, seq bigint NOT NULL,
                    data bytea NOT NULL, PRIMARY KEY (session, view));
CREATE TABLE tokens (hash text PRIMARY KEY, role text NOT NULL, character text, session text,
                     name text NOT NULL DEFAULT '', created text NOT NULL, revoked text, parent text);
CREATE TABLE secrets (session text PRIMARY KEY, seed bytea NOT NULL);
CREATE FUNCTION conteur_append_only() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    RAISE EXCEPTION '% is append-only: % refused', TG_TABLE_NAME, TG_OP;
END $$;
CREATE TRIGGER events_append_only BEFORE UPDATE OR DELETE ON events
    FOR EACH ROW EXECUTE FUNCTION conteur_append_only();
CREATE TRIGGER events_no_truncate BEFORE TRUNCATE ON events
    FOR EACH STATEMENT EXECUTE FUNCTION conteur_append_only();
CREATE TRIGGER commands_append_only BEFORE UPDATE OR DELETE ON commands
    FOR EACH ROW EXECUTE FUNCTION conteur_append_only();
CREATE TRIGGER commands_no_truncate BEFORE TRUNCATE ON commands
    FOR EACH STATEMENT EXECUTE FUNCTION conteur_append_only();
CREATE TRIGGER secrets_append_only BEFORE UPDATE OR DELETE ON secrets
    FOR EACH ROW EXECUTE FUNCTION conteur_append_only();
"""

# What the server's role may do, table by table: never UPDATE or DELETE the log.
GRANTS = {
    "conteur_meta": "SELECT",
    "events": "SELECT, INSERT",
    "commands": "SELECT, INSERT",
    "log_head": "SELECT, UPDATE",
    "heads": "SELECT, INSERT, UPDATE",
    "snapshots": "SELECT, INSERT, UPDATE, DELETE",
    "views": "SELECT, INSERT, UPDATE",
    "tokens": "SELECT, INSERT, UPDATE (revoked)",
    "secrets": "SELECT, INSERT",
}


def _ident(name: str) -> str:
    if not re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]{0,62}", name):
        raise ValueError(f"{name!r} is not a plain role name (letters, digits, underscores)")
    return '"' + name + '"'


def create_schema(conn) -> None:
    """Creates the tables in an empty database (run by their owner, not the server's role)."""
    with conn.transaction():
        conn.execute(SCHEMA)
        conn.execute("INSERT INTO conteur_meta VALUES ('schema_version', %s)", (str(PG_SCHEMA_VERSION),))


def grant_server_role(url: str, role: str) -> None:
    """Lets ``role`` (the one ``conteur serve --store`` logs in as) append and read, and
    nothing more: no UPDATE or DELETE on the log, no schema change."""
    with psycopg.connect(url, autocommit=True) as conn:
        ident = _ident(role)
        for table, privileges in GRANTS.items():
            conn.execute(f"REVOKE ALL ON {table} FROM {ident}")
            conn.execute(f"GRANT {privileges} ON {table} TO {ident}")


def _schema_version(conn) -> int | None:
    exists = conn.execute("SELECT to_regclass('conteur_meta') IS NOT NULL").fetchone()[0]
    if not exists:
        if conn.execute("SELECT to_regclass('events') IS NOT NULL").fetchone()[0]:
            raise StoreError("this PostgreSQL database has an events table but is not a conteur "
                             "chronicle (no conteur_meta table)")
        return None
    row = conn.execute("SELECT value FROM conteur_meta WHERE key='schema_version'").fetchone()
    return int(row[0]) if row else 0


VIEWS = ("CREATE TABLE IF NOT EXISTS views (session text NOT NULL, view text NOT NULL, "
         "seq bigint NOT NULL, data bytea NOT NULL, PRIMARY KEY (session, view))")


def _parent_column(conn) -> bool:
    """Whether tokens has its ``parent`` column (device credentials), added if this role
    may: a chronicle created before it gets it at its next opening by its owner; one whose
    role may not add it keeps every token a link (no device replaces another)."""
    found = conn.execute("SELECT 1 FROM information_schema.columns WHERE table_name = 'tokens' "
                         "AND column_name = 'parent'").fetchone()
    if found:
        return True
    try:
        conn.execute("ALTER TABLE tokens ADD COLUMN parent text")
        return True
    except psycopg.Error:
        return False


def _views_table(conn) -> bool:
    """Whether the views table (view snapshots, a cache) is there, created if this role
    may: a chronicle created before it gets it at its next opening by its owner; one
    whose role may not create it keeps no view snapshots (``conteur pg-setup`` adds it)."""
    if conn.execute("SELECT to_regclass('views') IS NOT NULL").fetchone()[0]:
        return True
    try:
        conn.execute(VIEWS)
        return True
    except psycopg.Error:
        return False


WRITER_LOCK = 0x636F6E74  # "cont": the advisory lock key of the one deciding process
CHANNEL = "conteur_log"  # NOTIFY'd with the new head by every append transaction


def _still(basis: Basis, last: int, provisional: dict[int, int]) -> bool:
    """Whether a decision folded on ``basis`` still stands on the session's ``last`` seq.
    A basis left by an append of this same batch is read from ``provisional`` (its
    ``seq`` is set only after COMMIT)."""
    seq = provisional.get(id(basis), basis.seq)
    return seq is not None and seq != Basis.BROKEN and seq == last


class PostgresStore(GroupCommit):
    """``EventStore`` on a PostgreSQL database, with a group-committing writer thread."""

    def __init__(self, url: str, *, snapshot_every: int = 1000, max_batch: int = 512,
                 create: bool = True):
        if psycopg is None:
            raise StoreError("the PostgreSQL store needs psycopg: pip install 'conteur[postgresql]'")
        self.url = url
        self.path = redact(url)  # what messages name, like a SQLite store's path
        self.snapshot_every = snapshot_every
        self.max_batch = max_batch
        self._local = threading.local()
        self._readers: list = []
        self._readers_lock = threading.Lock()
        # (session, outcome) by (device, command id): stored outcomes never change
        self._outcomes: dict[tuple[str, str], tuple[str, Outcome]] = {}
        conn = self._connect()
        try:
            version = _schema_version(conn)
            if version is None:
                if not create:
                    raise StoreError(f"no conteur chronicle in {self.path} (nothing was created)")
                try:
                    create_schema(conn)
                except psycopg.errors.InsufficientPrivilege as exc:
                    raise StoreError(f"{self.path} has no conteur tables and this role may not "
                                     f"create them ({exc.diag.message_primary}): run "
                                     f"`conteur pg-setup` as the database's owner") from None
            elif version > PG_SCHEMA_VERSION:
                raise StoreError(f"{self.path} was written by a newer conteur (schema version "
                                 f"{version}); this conteur reads version {PG_SCHEMA_VERSION} "
                                 f"and older: upgrade conteur on this machine")
            self._views = _views_table(conn)
            self._parents = _parent_column(conn)
        finally:
            conn.close()
        self._start_writer("conteur-pg-writer")

    # -- connections ---------------------------------------------------------------

    def _connect(self):
        try:
            conn = psycopg.connect(self.url, autocommit=True, connect_timeout=10)
        except psycopg.OperationalError as exc:
            raise StoreError(f"PostgreSQL at {self.path} is unavailable: {_first_line(exc)}") from None
        # acknowledged means flushed: never let a server default of `off` weaken it
        if conn.execute("SHOW synchronous_commit").fetchone()[0] == "off":
            conn.execute("SET synchronous_commit = on")
        return conn

    @property
    def _reader(self):
        conn = getattr(self._local, "conn", None)
        if conn is None or conn.closed or conn.broken:
            conn = self._local.conn = self._connect()
            with self._readers_lock:
                self._readers.append(conn)
        return conn

    def _query(self, sql: str, args: tuple | list = ()) -> list[tuple]:
        if self._closed:
            raise StoreError("the store is closed")
        try:
            return self._reader.execute(sql, args).fetchall()
        except psycopg.OperationalError as exc:
            self._local.conn = None  # reconnect next time (PostgreSQL restarted)
            raise StoreError(f"PostgreSQL at {self.path} is unavailable: {_first_line(exc)}") from None

    def _write(self, sql: str, args: tuple | list = (), many: bool = False) -> list[tuple]:
        """A statement outside the log (tokens, secrets, snapshots), in its own transaction."""
        if self._closed:
            raise StoreError("the store is closed")
        try:
            with self._reader.transaction():
                cur = self._reader.cursor()
                if many:
                    cur.executemany(sql, args)
                    return []
                cur.execute(sql, args)
                return cur.fetchall() if cur.description else []
        except psycopg.OperationalError as exc:
            self._local.conn = None
            raise StoreError(f"PostgreSQL at {self.path} is unavailable: {_first_line(exc)}") from None
        except psycopg.Error as exc:  # rolled back whole: a duplicate digest, a refused right
            raise StoreError(f"nothing was written: {_first_line(exc)}") from None

    # -- appends ---------------------------------------------------------------------

    def _writer_connection(self, conn):
        # a connection PostgreSQL dropped (a restart) failed its batch: the next reconnects
        return conn if conn is not None and not conn.closed and not conn.broken else self._connect()

    def _commit(self, conn, batch: list) -> None:
        """One transaction for the batch, under the lock of ``log_head``."""
        results: list = []
        encoded: list = []
        for pending, future in batch:
            try:
                encoded.append((pending, future, [(event_type(e), encode_event(e)) for e in pending.events]))
            except Exception as exc:  # this command alone fails; nothing of it is written
                results.append((future, exc))
        at = utc_now()
        added: list[tuple[tuple[str, str], tuple[str, Outcome]]] = []
        thens: list[tuple] = []  # (Basis, seq) set once committed
        provisional: dict[int, int] = {}  # the thens of this batch, for the next in it
        try:
            with conn.transaction():
                head = conn.execute("SELECT seq FROM log_head WHERE id = 1 FOR UPDATE").fetchone()[0]
                keyed = [(p.device, p.command_id) for p, _, _ in encoded if p.command_id]
                stored: dict[tuple[str, str], Outcome] = {}
                if keyed:
                    for device, command_id, seqs, code, message in conn.execute(
                        "SELECT c.device, c.command_id, c.seqs, c.code, c.message FROM commands c "
                        "JOIN unnest(%s::text[], %s::text[]) AS k(device, command_id) "
                        "ON c.device = k.device AND c.command_id = k.command_id",
                        ([d for d, _ in keyed], [c for _, c in keyed]),
                    ):
                        stored[(device, command_id)] = Outcome(seqs=tuple(seqs), code=code,
                                                               message=message, replayed=True)
                sessions = sorted({p.session for p, _, _ in encoded})
                tips: dict[str, str] = {}
                lasts: dict[str, int] = {}
                for session, last, tip in conn.execute(
                        "SELECT session, last, hash FROM heads WHERE session = ANY(%s)", (sessions,)):
                    tips[session], lasts[session] = tip, last
                event_rows: list[tuple] = []
                command_rows: list[tuple] = []
                spans: dict[str, list] = {}
                for pending, future, datas in encoded:
                    key = (pending.device, pending.command_id)
                    if pending.command_id and key in stored:
                        # decided by another process (or earlier): this decision is void
                        thens.append((pending.then, Basis.BROKEN))
                        results.append((future, stored[key]))
                        continue
                    if pending.basis is not None and not _still(pending.basis, lasts.get(pending.session, 0),
                                                                 provisional):
                        thens.append((pending.then, Basis.BROKEN))
                        results.append((future, Outcome(stale=True)))
                        continue
                    last_hash = tips.get(pending.session, GENESIS)
                    seqs = []
                    for tag, data in datas:
                        head += 1
                        digest = row_hash(last_hash, head, pending.session, tag, data, pending.actor,
                                          pending.device, pending.command_id, at)
                        event_rows.append((head, pending.session, tag, data, pending.actor,
                                           pending.device, pending.command_id, at, last_hash, digest))
                        last_hash = digest
                        seqs.append(head)
                    if seqs:
                        tips[pending.session] = last_hash
                        lasts[pending.session] = seqs[-1]
                        span = spans.setdefault(pending.session, [seqs[0], seqs[-1], last_hash])
                        span[1], span[2] = seqs[-1], last_hash
                    if pending.then is not None:
                        provisional[id(pending.then)] = lasts.get(pending.session, 0)
                        thens.append((pending.then, lasts.get(pending.session, 0)))
                    outcome = Outcome(seqs=tuple(seqs), code=pending.code, message=pending.message)
                    if pending.command_id:
                        command_rows.append((pending.device, pending.command_id, pending.session,
                                             seqs, pending.code, pending.message))
                        replayed = msgspec.structs.replace(outcome, replayed=True)
                        stored[key] = replayed  # a retry later in this same batch
                        added.append((key, (pending.session, replayed)))
                    results.append((future, outcome))
                cur = conn.cursor()
                if event_rows:
                    with cur.copy("COPY events (seq, session, type, data, actor, device, command_id, "
                                  "at, prev_hash, hash) FROM STDIN") as copy:
                        for row in event_rows:
                            copy.write_row(row)
                    # one statement each, whatever the batch: a round trip per row would
                    # cost more than the commit's flush
                    cur.execute(
                        "INSERT INTO heads SELECT * FROM unnest(%s::text[], %s::bigint[], %s::bigint[], "
                        "%s::text[]) ON CONFLICT (session) DO UPDATE SET last = excluded.last, "
                        "hash = excluded.hash",
                        [list(spans), [v[0] for v in spans.values()], [v[1] for v in spans.values()],
                         [v[2] for v in spans.values()]])
                    cur.execute("UPDATE log_head SET seq = %s WHERE id = 1", (head,))
                    # delivered at COMMIT to every process's tail (``follow``)
                    cur.execute("SELECT pg_notify(%s, %s)", (CHANNEL, str(head)))
                if command_rows:
                    with cur.copy("COPY commands (device, command_id, session, seqs, code, message) "
                                  "FROM STDIN") as copy:
                        for row in command_rows:
                            copy.write_row(row)
        except Exception as exc:  # the whole transaction failed: nothing of it was written
            reason = _first_line(exc)
            if isinstance(exc, psycopg.OperationalError):
                reason = f"PostgreSQL is unavailable ({reason})"
            error = StoreError(f"append failed, nothing was written: {reason}")
            for pending, _ in batch:
                if pending.then is not None:
                    pending.then.seq = Basis.BROKEN
            resolve([(future, error) for _, future in batch])
            return
        for key, outcome in added:
            self._outcomes[key] = outcome
        for then, seq in thens:
            if then is not None:
                then.seq = seq
        resolve(results)

    # -- reads -----------------------------------------------------------------------

    def outcome_of(self, device: str, command_id: str, session: str | None = None) -> Outcome | None:
        known = self._outcomes.get((device, command_id))
        if known is None:
            rows = self._query("SELECT session, seqs, code, message FROM commands "
                               "WHERE device = %s AND command_id = %s", (device, command_id))
            if not rows:
                return None
            stored_in, seqs, code, message = rows[0]
            known = self._outcomes[(device, command_id)] = (
                stored_in, Outcome(seqs=tuple(seqs), code=code, message=message, replayed=True))
        stored_in, outcome = known
        return outcome if session is None or session == stored_in else None

    def head(self) -> int:
        return self._query("SELECT seq FROM log_head WHERE id = 1")[0][0]

    def sessions(self) -> list[str]:
        return [r[0] for r in self._query("SELECT session FROM heads ORDER BY first")]

    def session_span(self, session: str) -> tuple[int, int] | None:
        rows = self._query("SELECT first, last FROM heads WHERE session = %s", (session,))
        return (rows[0][0], rows[0][1]) if rows else None

    def session_head(self, session: str, upto: int | None = None) -> int:
        if upto is None:
            span = self.session_span(session)
            return span[1] if span else 0
        rows = self._query("SELECT max(seq) FROM events WHERE session = %s AND seq <= %s", (session, upto))
        return rows[0][0] or 0

    def read_after(self, session: str, after: int = 0, limit: int | None = None,
                   upto: int | None = None) -> list[Row]:
        sql = "SELECT * FROM events WHERE session = %s AND seq > %s"
        args: list = [session, after]
        if upto is not None:
            sql += " AND seq <= %s"
            args.append(upto)
        sql += " ORDER BY seq"
        if limit is not None:
            sql += " LIMIT %s"
            args.append(limit)
        return [Row(*r) for r in self._query(sql, args)]

    def read_entries(self, session: str, after: int = 0, limit: int | None = None) -> list[Entry]:
        sql = "SELECT seq, type, data, actor, at FROM events WHERE session = %s AND seq > %s ORDER BY seq"
        args: list = [session, after]
        if limit is not None:
            sql += " LIMIT %s"
            args.append(limit)
        return [Entry(*r) for r in self._query(sql, args)]

    def rows(self, after: int = 0, upto: int | None = None, chunk: int = 5000) -> Iterator[Row]:
        # in pages by seq: no transaction held open while the caller works, and the log
        # being append-only in seq order, the pages join into one consistent prefix
        last = self.head() if upto is None else upto
        while after < last:
            page = self._query("SELECT * FROM events WHERE seq > %s AND seq <= %s ORDER BY seq LIMIT %s",
                               (after, last, chunk))
            if not page:
                return
            for r in page:
                yield Row(*r)
            after = page[-1][0]

    def iter_events(self, session: str, after: int = 0, upto: int | None = None,
                    chunk: int = 20000) -> Iterator[tuple[int, list[Event]]]:
        for page in self._event_pages(session, after, upto, chunk):
            yield page[-1][0], decode_events([d for _, d in page])

    def _folded_chunks(self, session: str, after: int, upto: int | None, progress: Progress | None,
                       chunk: int = 20000) -> Iterator[tuple[int, list[Event]]]:
        """``iter_events`` for a replay: the rows no part folds (``game.IGNORED``) stay in
        the database, neither sent nor decoded, yet counted (progress, and the chunk's
        last seq stays the session's last row), as SQLite's ``fold_session`` does."""
        for page in self._event_pages(session, after, upto, chunk, skip=sorted(IGNORED)):
            events = decode_events([d for _, d in page if d is not None])
            yield page[-1][0], events
            if progress and len(page) > len(events):
                progress(len(page) - len(events))

    def _event_pages(self, session: str, after: int, upto: int | None, chunk: int,
                     skip: list[str] | None = None) -> Iterator[list[tuple[int, bytes | None]]]:
        """(seq, data) pages of a session's rows; data is NULL for a type in ``skip``."""
        data = "CASE WHEN type = ANY(%s) THEN NULL ELSE data END" if skip else "data"
        while True:
            sql = f"SELECT seq, {data} FROM events WHERE session = %s AND seq > %s"
            args: list = ([skip] if skip else []) + [session, after]
            if upto is not None:
                sql += " AND seq <= %s"
                args.append(upto)
            page = self._query(sql + " ORDER BY seq LIMIT %s", args + [chunk])
            if not page:
                return
            after = page[-1][0]
            yield page

    # -- state and snapshots -----------------------------------------------------------

    def latest_snapshot(self, session: str, at: int | None = None) -> tuple[int, GameState | None]:
        sql = "SELECT seq, version, state FROM snapshots WHERE session = %s AND version = ANY(%s)"
        args: list = [session, list(snapshot.STATE_ROWS)]
        if at is not None:
            sql += " AND seq <= %s"
            args.append(at)
        rows = self._query(sql + " ORDER BY seq DESC LIMIT 1", args)
        state = None if not rows else snapshot.open_state(rows[0][1], bytes(rows[0][2]), rows[0][0],
                                                          lambda seq: self._tip(session, seq))
        if state is None:
            return 0, None  # an unusable snapshot is skipped: replay from zero is the truth
        return rows[0][0], state

    def snapshot_head(self, session: str) -> int:
        rows = self._query("SELECT max(seq) FROM snapshots WHERE session = %s AND version = ANY(%s)",
                           (session, list(snapshot.STATE_ROWS)))
        return rows[0][0] or 0

    def _tip(self, session: str, seq: int) -> str | None:
        """The hash of ``session``'s row at ``seq`` (what a snapshot is checked against)."""
        rows = self._query("SELECT hash FROM events WHERE seq = %s AND session = %s", (seq, session))
        return rows[0][0] if rows else None

    def save_snapshot(self, session: str, seq: int, state: GameState, *, keep: int | None = None) -> None:
        conn = self._connect()  # its own connection: snapshots are saved from another thread
        try:
            with conn.transaction():
                rows = conn.execute("SELECT hash FROM events WHERE seq = %s AND session = %s",
                                    (seq, session)).fetchall()
                if not rows:
                    return  # no row of the session there: no snapshot could open at it
                conn.execute(
                    "INSERT INTO snapshots VALUES (%s, %s, %s, %s) ON CONFLICT (session, seq) "
                    "DO UPDATE SET version = excluded.version, state = excluded.state",
                    (session, seq, snapshot.VERSION, snapshot.encode(seq, rows[0][0], state)))
                if keep is not None:
                    conn.execute(
                        "DELETE FROM snapshots WHERE session = %s AND seq NOT IN "
                        "(SELECT seq FROM snapshots WHERE session = %s ORDER BY seq DESC LIMIT %s)",
                        (session, session, keep))
        finally:
            conn.close()

    def save_views(self, session: str, seq: int, views: dict[str, bytes]) -> None:
        if self._views:
            self._write("INSERT INTO views VALUES (%s, %s, %s, %s) ON CONFLICT (session, view) "
                        "DO UPDATE SET seq = excluded.seq, data = excluded.data",
                        [(session, view, seq, data) for view, data in views.items()], many=True)

    def load_view(self, session: str, view: str) -> tuple[int, bytes] | None:
        if not self._views:
            return None
        rows = self._query("SELECT seq, data FROM views WHERE session = %s AND view = %s", (session, view))
        return (rows[0][0], bytes(rows[0][1])) if rows else None

    def load_state(self, session: str, at: int | None = None, *, use_snapshots: bool = True,
                   progress: Progress | None = None) -> GameState:
        start, state = self.latest_snapshot(session, at) if use_snapshots else (0, None)
        state, folded = fold_chunks(start, state, self._folded_chunks(session, start, at, progress), progress)
        if use_snapshots and at is None and folded >= self.snapshot_every:
            self.save_snapshot(session, state.head, state)
        return state

    def load_states(self, sessions: Sequence[str] | None = None, *,
                    use_snapshots: bool = True, workers: int | None = None) -> dict[str, GameState]:
        # folded here, one after another: PostgreSQL serves the rows; snapshots keep it short
        return {sid: self.load_state(sid, use_snapshots=use_snapshots)
                for sid in (self.sessions() if sessions is None else sessions)}

    # -- tokens --------------------------------------------------------------------------

    def add_tokens(self, records: Sequence[TokenRecord]) -> None:
        now = utc_now()
        if self._parents:
            self._write("INSERT INTO tokens (hash, role, character, session, name, created, parent) "
                        "VALUES (%s, %s, %s, %s, %s, %s, %s)",
                        [(r.hash, r.role, r.character, r.session, r.name, now, r.parent) for r in records],
                        many=True)
            return
        self._write("INSERT INTO tokens (hash, role, character, session, name, created) "
                    "VALUES (%s, %s, %s, %s, %s, %s)",
                    [(r.hash, r.role, r.character, r.session, r.name, now) for r in records], many=True)

    def token(self, digest: str) -> TokenRecord | None:
        parent = "parent" if self._parents else "NULL"
        rows = self._query(f"SELECT role, character, session, name, {parent} FROM tokens "
                           "WHERE hash = %s AND revoked IS NULL", (digest,))
        if not rows:
            return None
        role, character, session, name, link = rows[0]
        return TokenRecord(hash=digest, role=role, character=character, session=session, name=name,
                           parent=link)

    def revoke_tokens(self, *, session: str, character: str) -> list[str]:
        return [r[0] for r in self._write(
            "UPDATE tokens SET revoked = %s WHERE role = 'player' AND character = %s "
            "AND (session = %s OR session IS NULL) AND revoked IS NULL RETURNING hash",
            (utc_now(), character, session))]

    def revoked_tokens(self) -> list[str]:
        return [r[0] for r in self._query("SELECT hash FROM tokens WHERE revoked IS NOT NULL")]

    def live_tokens(self, session: str | None = None) -> list[TokenRecord]:
        parent = "parent" if self._parents else "NULL"
        sql = f"SELECT hash, role, character, session, name, {parent} FROM tokens WHERE revoked IS NULL"
        args: tuple = ()
        if session is not None:
            sql += " AND (session = %s OR session IS NULL)"
            args = (session,)
        return [TokenRecord(hash=r[0], role=r[1], character=r[2], session=r[3], name=r[4], parent=r[5])
                for r in self._query(sql + " ORDER BY created, hash", args)]

    def revoke_digests(self, digests: Sequence[str]) -> list[str]:
        digests = list(dict.fromkeys(digests))
        if not digests:
            return []
        return [r[0] for r in self._write(
            "UPDATE tokens SET revoked = %s WHERE hash = ANY(%s) AND revoked IS NULL RETURNING hash",
            (utc_now(), digests))]

    def count_tokens(self, role: str | None = None) -> int:
        if role is None:
            return self._query("SELECT count(*) FROM tokens WHERE revoked IS NULL")[0][0]
        return self._query("SELECT count(*) FROM tokens WHERE revoked IS NULL AND role = %s", (role,))[0][0]

    # -- session secrets -----------------------------------------------------------------

    def secret(self, session: str) -> bytes | None:
        rows = self._query("SELECT seed FROM secrets WHERE session = %s", (session,))
        return bytes(rows[0][0]) if rows else None

    def create_secret(self, session: str, seed: bytes) -> bytes:
        self._write("INSERT INTO secrets VALUES (%s, %s) ON CONFLICT (session) DO NOTHING", (session, seed))
        return self.secret(session)

    # -- life ----------------------------------------------------------------------------

    def hold(self, *, shared: bool = False) -> object:
        """The right to append to this chronicle, held until the returned handle's
        ``close()`` (or the process's death). Server processes (``serve``, ``init``) hold
        it ``shared``: any number of them decide together, each append checked against
        what the others wrote (``Pending.basis``). ``simulate`` holds it alone, so a
        reproducible run is refused beside a server, and a server beside it."""
        from conteur.server.store.dbfile import DatabaseInUse

        conn = self._connect()
        take = "pg_try_advisory_lock_shared" if shared else "pg_try_advisory_lock"
        if not conn.execute(f"SELECT {take}(%s)", (WRITER_LOCK,)).fetchone()[0]:
            conn.close()
            who = "a simulation" if shared else "another conteur (a server, init or simulate)"
            raise DatabaseInUse(f"{self.path} is in use by {who}: stop it first, or use "
                                f"another database")
        return conn

    def follow(self, after: int, deliver, *, poll: float = 1.0) -> Follower:
        """Every row committed after ``after``, by any process, handed to ``deliver`` (a
        list of rows in seq order, called on the follower's thread) as soon as its
        transaction's NOTIFY arrives, and at least every ``poll`` seconds (a NOTIFY is
        lost while the listening connection is down). ``close()`` the follower."""
        return Follower(self, after, deliver, poll)

    def close(self) -> None:
        if not self._stop_writer():
            return
        with self._readers_lock:
            for conn in self._readers:
                conn.close()
            self._readers = []
        self._local = threading.local()

    def __enter__(self) -> PostgresStore:
        return self

    def __exit__(self, *exc) -> None:
        self.close()


class Follower:
    """The tail of the log on its own thread and connection: LISTEN, then read the rows
    after the last delivered whenever a NOTIFY (or ``poll`` seconds) says there may be
    more. Rows come in seq order without gap or repeat, because the log is gapless and
    any snapshot of it is a prefix."""

    def __init__(self, store: PostgresStore, after: int, deliver, poll: float):
        self.store = store
        self.after = after
        self._deliver = deliver
        self._poll = poll
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, name="conteur-pg-follower", daemon=True)
        self._thread.start()

    def _run(self) -> None:
        conn = None
        while not self._stop.is_set():
            try:
                if conn is None or conn.closed or conn.broken:
                    conn = psycopg.connect(self.store.url, autocommit=True, connect_timeout=10)
                    conn.execute(f"LISTEN {CHANNEL}")
                self._read(conn)
                for _ in conn.notifies(timeout=self._poll, stop_after=1):
                    pass
            except psycopg.Error:  # PostgreSQL restarting: try again shortly
                if conn is not None:
                    conn.close()
                conn = None
                self._stop.wait(0.2)
            except Exception:  # noqa: BLE001 - a delivery failed: keep tailing
                import logging

                logging.getLogger("conteur.store").exception("delivering the log's tail failed")
                self._stop.wait(0.2)
        if conn is not None:
            conn.close()

    def _read(self, conn) -> None:
        while not self._stop.is_set():
            page = conn.execute("SELECT * FROM events WHERE seq > %s ORDER BY seq LIMIT 2000",
                                (self.after,)).fetchall()
            if not page:
                return
            rows = [Row(*r) for r in page]
            self._deliver(rows)
            self.after = rows[-1].seq
            if len(page) < 2000:
                return

    def close(self) -> None:
        self._stop.set()
        self._thread.join(self._poll + 5)


def _first_line(exc: BaseException) -> str:
    return (str(exc).strip().splitlines() or [type(exc).__name__])[0]

