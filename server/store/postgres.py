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

import logging
import os
import re
import threading
import time
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
# 2: appends checked by the database (``LEAST_PRIVILEGE``)
PG_SCHEMA_VERSION = 2

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

# The server's role may only append, so its password, stolen, rewrites nothing: the
# database itself checks each append (the next seqs, each row linked to its session's
# chain tip) and moves ``log_head`` and ``heads`` with it, as the tables' owner
# (SECURITY DEFINER); the role may not write those two itself, nor lock ``log_head``
# but through ``conteur_lock_log``. It may not make a storyteller's token (but the
# device credential a live storyteller's link turns into at its first hello), nor replace
# or delete a snapshot another role wrote (row-level security; the owner bypasses it).
LEAST_PRIVILEGE = """
CREATE OR REPLACE FUNCTION conteur_lock_log() RETURNS bigint LANGUAGE sql SECURITY DEFINER
    SET search_path FROM CURRENT AS $$ SELECT seq FROM log_head WHERE id = 1 FOR UPDATE $$;
REVOKE ALL ON FUNCTION conteur_lock_log() FROM PUBLIC;
CREATE OR REPLACE FUNCTION conteur_appended() RETURNS trigger LANGUAGE plpgsql SECURITY DEFINER
    SET search_path FROM CURRENT AS $$
DECLARE
    head bigint;
    n bigint;
    lo bigint;
    hi bigint;
BEGIN
    SELECT seq INTO head FROM log_head WHERE id = 1 FOR UPDATE;
    SELECT count(*), min(seq), max(seq) INTO n, lo, hi FROM appended;
    IF n = 0 THEN
        RETURN NULL;
    END IF;
    IF lo <> head + 1 OR hi <> head + n THEN
        RAISE EXCEPTION 'events are appended with the next seqs only: % to % after %', lo, hi, head;
    END IF;
    IF EXISTS (SELECT 1 FROM (
            SELECT a.prev_hash, coalesce(lag(a.hash) OVER (PARTITION BY a.session ORDER BY a.seq),
                                         h.hash, repeat('0', 64)) AS tip
            FROM appended a LEFT JOIN heads h ON h.session = a.session) linked
            WHERE linked.prev_hash <> linked.tip) THEN
        RAISE EXCEPTION 'events are appended to their session''s chain tip only';
    END IF;
    UPDATE log_head SET seq = hi WHERE id = 1;
    INSERT INTO heads SELECT session, min(seq), max(seq), (array_agg(hash ORDER BY seq DESC))[1]
        FROM appended GROUP BY session
        ON CONFLICT (session) DO UPDATE SET last = excluded.last, hash = excluded.hash;
    RETURN NULL;
END $$;
DROP TRIGGER IF EXISTS events_appended ON events;
CREATE TRIGGER events_appended AFTER INSERT ON events REFERENCING NEW TABLE AS appended
    FOR EACH STATEMENT EXECUTE FUNCTION conteur_appended();
ALTER TABLE snapshots ADD COLUMN IF NOT EXISTS writer text NOT NULL DEFAULT current_user;
ALTER TABLE snapshots ENABLE ROW LEVEL SECURITY;
DROP POLICY IF EXISTS snapshots_read ON snapshots;
DROP POLICY IF EXISTS snapshots_add ON snapshots;
DROP POLICY IF EXISTS snapshots_own ON snapshots;
DROP POLICY IF EXISTS snapshots_drop ON snapshots;
CREATE POLICY snapshots_read ON snapshots FOR SELECT USING (true);
CREATE POLICY snapshots_add ON snapshots FOR INSERT WITH CHECK (writer = current_user);
CREATE POLICY snapshots_own ON snapshots FOR UPDATE USING (writer = current_user)
    WITH CHECK (writer = current_user);
CREATE POLICY snapshots_drop ON snapshots FOR DELETE USING (writer = current_user);
ALTER TABLE tokens ENABLE ROW LEVEL SECURITY;
DROP POLICY IF EXISTS tokens_read ON tokens;
DROP POLICY IF EXISTS tokens_add ON tokens;
DROP POLICY IF EXISTS tokens_revoke ON tokens;
CREATE POLICY tokens_read ON tokens FOR SELECT USING (true);
CREATE POLICY tokens_add ON tokens FOR INSERT WITH CHECK (role <> 'storyteller' OR EXISTS (
    SELECT 1 FROM tokens link WHERE link.hash = tokens.parent AND link.role = 'storyteller'
    AND link.revoked IS NULL));
CREATE POLICY tokens_revoke ON tokens FOR UPDATE USING (true);
"""

# What the server's role may do, table by table (docs: deploy/postgresql.md lists them).
GRANTS = {
    "conteur_meta": "SELECT",
    "events": "SELECT, INSERT",  # checked by events_appended
    "commands": "SELECT, INSERT",
    "log_head": "SELECT",
    "heads": "SELECT",
    "snapshots": "SELECT, INSERT, UPDATE, DELETE",  # its own rows only
    "views": "SELECT, INSERT, UPDATE",
    "tokens": "SELECT, INSERT, UPDATE (revoked)",  # no storyteller's but a live link's device
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
        conn.execute(LEAST_PRIVILEGE)
        conn.execute("INSERT INTO conteur_meta VALUES ('schema_version', %s)", (str(PG_SCHEMA_VERSION),))


def _upgrade(conn, version: int) -> int:
    """A chronicle of an older schema brought to this one by its owner (``pg-setup``, or any
    opening by the owner); another role keeps it as it is (then the server writes the
    chain tips itself, as that schema's grants let it). Returns the version now."""
    if version >= PG_SCHEMA_VERSION:
        return version
    try:
        with conn.transaction():
            conn.execute(LEAST_PRIVILEGE)
            conn.execute("UPDATE conteur_meta SET value = %s WHERE key = 'schema_version'",
                         (str(PG_SCHEMA_VERSION),))
    except psycopg.errors.InsufficientPrivilege:
        return version
    return PG_SCHEMA_VERSION


def grant_server_role(url: str, role: str) -> None:
    """Lets ``role`` (the one ``conteur serve --store`` logs in as) append and read, and
    nothing more: no UPDATE or DELETE on the log, no schema change."""
    with psycopg.connect(url, autocommit=True) as conn:
        ident = _ident(role)
        for table, privileges in GRANTS.items():
            conn.execute(f"REVOKE ALL ON {table} FROM {ident}")
            conn.execute(f"GRANT {privileges} ON {table} TO {ident}")
        conn.execute(f"GRANT EXECUTE ON FUNCTION conteur_lock_log() TO {ident}")


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


log = logging.getLogger("conteur.store")


def _seconds(name: str, default: float) -> float:
    value = os.environ.get(name, "")
    try:
        return float(value) if value else default
    except ValueError:
        raise StoreError(f"{name}={value!r} is not a number of seconds") from None


# How long the database may take before a caller is told it is unavailable: each
# statement (the server cancels it), each wait for a row lock, and, on the client's
# side, every wait of the serving path for the database (``deadline``). Settings:
# CONTEUR_PG_STATEMENT_TIMEOUT and CONTEUR_PG_LOCK_TIMEOUT, in seconds (docs/guide.md).
STATEMENT_TIMEOUT = 5.0
LOCK_TIMEOUT = 2.0
# libpq's own parameters, used unless the URL names them: a host that vanishes (a
# partition, a power cut) is found dead in about half a minute instead of the kernel's
# two hours, and a connection attempt gives up after a few seconds
CONNECTION_DEFAULTS = {"connect_timeout": "5", "keepalives": "1", "keepalives_idle": "10",
                       "keepalives_interval": "5", "keepalives_count": "3",
                       "tcp_user_timeout": "30000"}
# a connection idle this long is checked (one round trip) before it carries a statement:
# PostgreSQL restarted meanwhile would otherwise fail the first command after it
IDLE_CHECK = 1.0
PROBE_EVERY = 1.0  # seconds between the watcher's looks at the database (``trouble``)

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
                 create: bool = True, statement_timeout: float | None = None,
                 lock_timeout: float | None = None):
        if psycopg is None:
            raise StoreError("the PostgreSQL store needs psycopg: pip install 'conteur[postgresql]'")
        self.url = url
        self.deadline = (statement_timeout if statement_timeout is not None
                         else _seconds("CONTEUR_PG_STATEMENT_TIMEOUT", STATEMENT_TIMEOUT))
        self.lock_timeout = (lock_timeout if lock_timeout is not None
                             else _seconds("CONTEUR_PG_LOCK_TIMEOUT", LOCK_TIMEOUT))
        self._params = _parameters(url, self.deadline, self.lock_timeout)
        # bumped when the watcher finds the database restarted: every connection made
        # before is replaced before its next use
        self._generation = 0
        self._hold: _Hold | None = None
        self._hold_lock = threading.Lock()
        self._probing: float | None = None  # when the watcher's probe in flight began
        self._problem: str | None = None  # what the watcher's last probe met
        self._watch_stop = threading.Event()
        self._watcher: threading.Thread | None = None
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
            # the database moves the chain tips with each append (schema 2), or the writer does
            self._parents = _parent_column(conn)  # first: the upgrade's policies name it
            self._tracked = (PG_SCHEMA_VERSION if version is None else _upgrade(conn, version)) >= 2
            self._views = _views_table(conn)
        finally:
            conn.close()
        self._start_writer("conteur-pg-writer")

    # -- connections ---------------------------------------------------------------

    def _connect(self):
        try:
            conn = psycopg.connect(autocommit=True, **self._params)
            # acknowledged means flushed: never let a server default of `off` weaken it
            if conn.execute("SHOW synchronous_commit").fetchone()[0] == "off":
                conn.execute("SET synchronous_commit = on")
        except psycopg.OperationalError as exc:
            raise StoreError(f"PostgreSQL at {self.path} is unavailable: {_first_line(exc)}") from None
        return conn

    def _usable(self, conn, generation: int, used: float) -> bool:
        """Whether ``conn`` may carry the next statement: not broken, made since the
        database last restarted, and, idle a while, still answering."""
        if conn is None or conn.closed or conn.broken or generation != self._generation:
            return False
        if time.monotonic() - used < IDLE_CHECK:
            return True
        try:
            conn.execute("SELECT 1")
            return True
        except psycopg.Error:
            return False

    @property
    def _reader(self):
        local = self._local
        conn = getattr(local, "conn", None)
        if not self._usable(conn, getattr(local, "generation", -1), getattr(local, "used", 0.0)):
            if conn is not None:
                conn.close()
            local.generation = self._generation
            conn = local.conn = self._connect()
            with self._readers_lock:
                self._readers.append(conn)
        local.used = time.monotonic()
        return conn

    def _query(self, sql: str, args: tuple | list = ()) -> list[tuple]:
        if self._closed:
            raise StoreError("the store is closed")
        for attempt in (1, 2):
            conn = None
            try:
                conn = self._reader
                return conn.execute(sql, args).fetchall()
            except psycopg.OperationalError as exc:
                self._local.conn = None  # reconnect next time (PostgreSQL restarted)
                if attempt == 1 and conn is not None and conn.broken:
                    continue  # a read on a connection found dead: once more on a new one
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
        # a connection PostgreSQL dropped (a restart) is replaced before the batch, and
        # the hold taken again on a new connection before anything is written
        if self._usable(conn, getattr(self, "_writer_generation", -1), getattr(self, "_writer_used", 0.0)):
            self._keep_hold()
            self._writer_used = time.monotonic()
            return conn
        if conn is not None:
            conn.close()
        self._writer_generation = self._generation
        conn = self._connect()
        try:
            self._keep_hold(probe=True)
        except StoreError:
            conn.close()
            raise
        self._writer_used = time.monotonic()
        return conn

    def _commit(self, conn, batch: list, retry: bool = True) -> None:
        """One transaction for the batch, under the lock of ``log_head``. A connection
        found dead before COMMIT was sent (PostgreSQL restarted while it was idle) is
        replaced and the batch tried once more: nothing of it was written."""
        committing = False
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
                head = conn.execute("SELECT conteur_lock_log()" if self._tracked else
                                    "SELECT seq FROM log_head WHERE id = 1 FOR UPDATE").fetchone()[0]
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
                    if not self._tracked:  # an older schema's: no trigger moves the tips
                        # one statement each, whatever the batch: a round trip per row would
                        # cost more than the commit's flush
                        cur.execute(
                            "INSERT INTO heads SELECT * FROM unnest(%s::text[], %s::bigint[], "
                            "%s::bigint[], %s::text[]) ON CONFLICT (session) DO UPDATE SET "
                            "last = excluded.last, hash = excluded.hash",
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
                committing = True
        except Exception as exc:  # the whole transaction failed: nothing of it was written
            if retry and not committing and conn.broken:
                conn.close()  # the write loop makes another for its next batch
                try:
                    fresh = self._writer_connection(None)
                except StoreError as down:
                    error = StoreError(f"append failed, nothing was written: {down}")
                    resolve([(future, error) for _, future in batch])
                    return
                try:
                    return self._commit(fresh, batch, retry=False)
                finally:
                    fresh.close()
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
        try:
            if self._parents:
                self._write("INSERT INTO tokens (hash, role, character, session, name, created, parent) "
                            "VALUES (%s, %s, %s, %s, %s, %s, %s)",
                            [(r.hash, r.role, r.character, r.session, r.name, now, r.parent) for r in records],
                            many=True)
            else:
                self._write("INSERT INTO tokens (hash, role, character, session, name, created) "
                            "VALUES (%s, %s, %s, %s, %s, %s)",
                            [(r.hash, r.role, r.character, r.session, r.name, now) for r in records], many=True)
        except StoreError as exc:
            if "row-level security" in str(exc) and any(r.role == "storyteller" for r in records):
                raise StoreError("nothing was written: the server's role may not make a storyteller's "
                                 "token; run `conteur init` with the database owner's URL "
                                 "(deploy/postgresql.md)") from None
            raise

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
        reproducible run is refused beside a server, and a server beside it.

        The lock lives on one connection: when PostgreSQL restarts or the connection
        drops, it is taken again before the next write (``_keep_hold``), and a batch
        that finds it taken by another is refused, nothing written."""
        hold = _Hold(self, shared)
        hold.take()
        self._hold = hold
        self._watching()
        return hold

    def _keep_hold(self, probe: bool = False) -> None:
        """The hold, if this store took one, is held now: taken again if its connection
        died (``probe``: asked of the database, else only if known lost); a
        ``StoreError`` when another holds the lock meanwhile or the database is down."""
        from conteur.server.store.dbfile import DatabaseInUse

        hold = self._hold
        if hold is None:
            return
        with self._hold_lock:
            if hold.closed or (hold.lost is None and (not probe or hold.alive())):
                return
            try:
                hold.take()
            except DatabaseInUse as exc:
                hold.lost = f"the hold on {self.path} was lost and is taken by another: {exc}"
                raise StoreError(hold.lost) from None
            except StoreError as exc:
                hold.lost = f"the hold on {self.path} was lost: {exc}"
                raise StoreError(hold.lost) from None
            log.warning("the hold on %s was lost with its connection: taken again", self.path)

    def _watching(self) -> None:
        if self._watcher is None and not self._closed:
            self._watcher = threading.Thread(target=self._watch, name="conteur-pg-watch", daemon=True)
            self._watcher.start()

    def _watch(self) -> None:
        """Looks at the database every ``PROBE_EVERY`` seconds on a connection of its own:
        what ``trouble`` says, the hold kept, and a restart noticed (every connection
        made before it is replaced before its next use)."""
        conn = None
        # looked at more often while it fails: /health says ok again soon after it is back
        while not self._watch_stop.wait(PROBE_EVERY if self._problem is None else PROBE_EVERY / 4):
            self._probing = time.monotonic()
            try:
                try:
                    if conn is None or conn.closed or conn.broken:
                        conn = self._connect()
                    conn.execute("SELECT 1")
                except psycopg.OperationalError:
                    if conn is None or not conn.broken:
                        raise
                    # its connection dropped (PostgreSQL restarted): so did the others,
                    # replaced before their next use; this one at once
                    self._generation += 1
                    conn.close()
                    conn = self._connect()
                    conn.execute("SELECT 1")
                self._keep_hold(probe=True)
                if self._problem is not None:
                    log.warning("PostgreSQL at %s answers again", self.path)
                self._problem = None
            except (psycopg.Error, StoreError) as exc:
                if self._problem is None:
                    log.warning("PostgreSQL at %s cannot be written to: %s", self.path, _first_line(exc))
                self._problem = _first_line(exc)
                self._generation += 1
                if conn is not None:
                    conn.close()
                conn = None
            finally:
                self._probing = None
        if conn is not None:
            conn.close()

    def trouble(self) -> str | None:
        """Why this store cannot write now, or None: the database not answering, refusing
        connections, or the hold lost to another. Never waits for the database."""
        self._watching()
        started = self._probing
        if started is not None and time.monotonic() - started > min(self.deadline, 2 * PROBE_EVERY):
            return (f"PostgreSQL at {self.path} has not answered for "
                    f"{time.monotonic() - started:.0f} s")
        if self._problem is not None:
            return f"PostgreSQL at {self.path} is unavailable: {self._problem}"
        hold = self._hold
        if hold is not None and hold.lost:
            return hold.lost
        return None

    def follow(self, after: int, deliver, *, poll: float = 1.0) -> Follower:
        """Every row committed after ``after``, by any process, handed to ``deliver`` (a
        list of rows in seq order, called on the follower's thread) as soon as its
        transaction's NOTIFY arrives, and at least every ``poll`` seconds (a NOTIFY is
        lost while the listening connection is down). ``close()`` the follower."""
        return Follower(self, after, deliver, poll)

    def close(self) -> None:
        if not self._stop_writer():
            return
        self._watch_stop.set()
        if self._watcher is not None:
            self._watcher.join(PROBE_EVERY + self.deadline + 5)
        with self._readers_lock:
            for conn in self._readers:
                conn.close()
            self._readers = []
        self._local = threading.local()

    def __enter__(self) -> PostgresStore:
        return self

    def __exit__(self, *exc) -> None:
        self.close()


class _Hold:
    """The advisory lock on its connection; ``close()`` lets it go."""

    def __init__(self, store: PostgresStore, shared: bool):
        self.store, self.shared = store, shared
        self.conn = None
        self.lost: str | None = None
        self.closed = False

    def take(self) -> None:
        from conteur.server.store.dbfile import DatabaseInUse

        if self.conn is not None:
            self.conn.close()
            self.conn = None
        conn = self.store._connect()
        take = "pg_try_advisory_lock_shared" if self.shared else "pg_try_advisory_lock"
        try:
            taken = conn.execute(f"SELECT {take}(%s)", (WRITER_LOCK,)).fetchone()[0]
        except psycopg.Error as exc:
            conn.close()
            raise StoreError(f"PostgreSQL at {self.store.path} is unavailable: {_first_line(exc)}") from None
        if not taken:
            conn.close()
            who = "a simulation" if self.shared else "another conteur (a server, init or simulate)"
            raise DatabaseInUse(f"{self.store.path} is in use by {who}: stop it first, or use "
                                f"another database")
        self.conn = conn
        self.lost = None

    def alive(self) -> bool:
        conn = self.conn
        if conn is None or conn.closed or conn.broken:
            return False
        try:
            conn.execute("SELECT 1")
            return True
        except psycopg.Error:
            return False

    def close(self) -> None:
        with self.store._hold_lock:
            self.closed = True
            if self.store._hold is self:
                self.store._hold = None
            if self.conn is not None:
                self.conn.close()
                self.conn = None


def _parameters(url: str, statement_timeout: float, lock_timeout: float) -> dict:
    """libpq's parameters for the store's connections: the URL's, the defaults it leaves
    out, and the timeouts as session settings."""
    from psycopg.conninfo import conninfo_to_dict

    params = conninfo_to_dict(url)
    for key, value in CONNECTION_DEFAULTS.items():
        params.setdefault(key, value)
    settings = (f"-c statement_timeout={int(statement_timeout * 1000)} "
                f"-c lock_timeout={int(lock_timeout * 1000)}")
    params["options"] = f"{params.get('options', '')} {settings}".strip()
    return params


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
                    conn = self.store._connect()
                    conn.execute(f"LISTEN {CHANNEL}")
                self._read(conn)
                for _ in conn.notifies(timeout=self._poll, stop_after=1):
                    pass
            except (psycopg.Error, StoreError):  # PostgreSQL restarting: try again shortly
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

