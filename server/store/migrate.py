"""Moving a chronicle between stores, and adding a venue's night to a central one.

``migrate`` copies a whole chronicle, SQLite file or PostgreSQL database, into an empty
one of either kind: every event with its seq, time and hashes verbatim (the same bytes,
so the chain verifies identically at both ends), the idempotency records (a phone's
retry after the move still gets its first outcome), the tokens (digests only, revoked
ones stay revoked) and the session secrets (seeds not yet revealed). Snapshots are a
cache and are not copied: the destination folds once and saves its own. The source is
read in one snapshot (the server may keep running on it); the destination is written in
one transaction, so a failed move leaves it empty; its chain is verified after the move.

``import_night`` adds the sessions of a verified JSON Lines export (``conteur export
--format jsonl``) to a central chronicle: the export's chain is checked first (a
tampered line is refused naming its seq); its events are appended after the central
log's head with their own time, actor, device and command id, in new seqs, chained
anew from each session's start, in one transaction. A session the central chronicle
already holds is refused: a night is imported once.
"""

from __future__ import annotations

import contextlib
import sqlite3
from pathlib import Path
from typing import Iterable, Iterator

import msgspec

from conteur.server.store.chain import GENESIS, Row, read_jsonl, row_hash, verify_rows
from conteur.server.store.dbfile import Verify
from conteur.server.store.postgres import is_postgres_url, redact

__all__ = ["MigrateError", "Moved", "backup_postgres", "import_night", "migrate"]

CHUNK = 5000


class MigrateError(Exception):
    """A move or an import refused before anything was written (or rolled back)."""


class Moved(msgspec.Struct, frozen=True, kw_only=True):
    events: int
    sessions: list[str]
    commands: int = 0
    tokens: int = 0
    secrets: int = 0

    def text(self, verb: str = "moved") -> str:
        return (f"{verb} {self.events} events of {len(self.sessions)} session(s) "
                f"({', '.join(self.sessions) or 'none'}), {self.commands} command records, "
                f"{self.tokens} tokens, {self.secrets} secrets; the chain verifies")


Command = tuple[str, str, str, list, str | None, str | None]  # device, id, session, seqs, code, message
# hash .. created, revoked, parent (the join link a device credential was made from)
Token = tuple[str, str, str | None, str | None, str, str, str | None, str | None]
Secret = tuple[str, bytes]


# -- reading a whole chronicle, in one snapshot ------------------------------------------


class _SQLiteSource:
    def __init__(self, path: str):
        from conteur.server.store.dbfile import check_database, open_readonly, table_names

        check_database(path)
        self.conn = open_readonly(path)
        self.conn.execute("BEGIN")  # one read snapshot for every table
        self.tables = table_names(self.conn)

    def rows(self) -> Iterator[Row]:
        for r in self.conn.execute("SELECT seq, session, type, data, actor, device, command_id, at, "
                                   "prev_hash, hash FROM events ORDER BY seq"):
            yield Row(*r)

    def commands(self) -> list[Command]:
        return [(d, c, s, msgspec.json.decode(seqs), code, message) for d, c, s, seqs, code, message
                in self.conn.execute("SELECT device, command_id, session, seqs, code, message FROM commands")]

    def tokens(self) -> list[Token]:
        if "tokens" not in self.tables:
            return []
        # a file older than device credentials has no parent column: none is a device's
        columns = {row[1] for row in self.conn.execute("PRAGMA table_info(tokens)")}
        parent = "parent" if "parent" in columns else "NULL"
        return list(self.conn.execute(
            f"SELECT hash, role, character, session, name, created, revoked, {parent} FROM tokens"))

    def secrets(self) -> list[Secret]:
        if "secrets" not in self.tables:
            return []
        return [(s, bytes(seed)) for s, seed in self.conn.execute("SELECT session, seed FROM secrets")]

    def close(self) -> None:
        self.conn.close()


class _PostgresSource:
    def __init__(self, url: str):
        import psycopg

        from conteur.server.store.postgres import PostgresStore

        PostgresStore(url, create=False).close()  # a chronicle of a version we read
        self.conn = psycopg.connect(url)
        self.conn.execute("SET TRANSACTION ISOLATION LEVEL REPEATABLE READ, READ ONLY")

    def rows(self) -> Iterator[Row]:
        with self.conn.cursor(name="conteur_migrate") as cur:  # streamed, not loaded whole
            cur.itersize = CHUNK
            cur.execute("SELECT seq, session, type, data, actor, device, command_id, at, prev_hash, "
                        "hash FROM events ORDER BY seq")
            for r in cur:
                yield Row(*r)

    def commands(self) -> list[Command]:
        return [(d, c, s, list(seqs), code, message) for d, c, s, seqs, code, message in self.conn.execute(
            "SELECT device, command_id, session, seqs, code, message FROM commands ORDER BY seqs[1]")]

    def tokens(self) -> list[Token]:
        # read as the source's own store reads it: a database older than device credentials
        # has no parent column (``PostgresStore`` adds it when it opens one it may change)
        parent = "parent" if self.conn.execute(
            "SELECT 1 FROM information_schema.columns WHERE table_schema = current_schema() "
            "AND table_name = 'tokens' AND column_name = 'parent'").fetchone() else "NULL"
        return self.conn.execute(f"SELECT hash, role, character, session, name, created, revoked, {parent} "
                                 "FROM tokens ORDER BY created").fetchall()

    def secrets(self) -> list[Secret]:
        return [(s, bytes(seed)) for s, seed in self.conn.execute("SELECT session, seed FROM secrets")]

    def close(self) -> None:
        self.conn.close()


def _source(target: str):
    return _PostgresSource(target) if is_postgres_url(target) else _SQLiteSource(target)


# -- writing, in one transaction ---------------------------------------------------------


class _SQLiteSink:
    """Appends to a chronicle file in one transaction, holding its writer lock."""

    def __init__(self, path: str, create: bool):
        from conteur.server.store.dbfile import WriterLock, check_database
        from conteur.server.store.sqlite import SQLiteStore

        check_database(path, create=create)
        self.lock = WriterLock(path).acquire()
        try:
            SQLiteStore(path).close()  # the schema, made as the store makes it
            self.conn = sqlite3.connect(path, isolation_level=None)
            self.conn.execute("PRAGMA synchronous=FULL")
            self.conn.execute("BEGIN IMMEDIATE")
        except BaseException:
            self.lock.release()
            raise

    def head(self) -> int:
        return self.conn.execute("SELECT coalesce(max(seq), 0) FROM events").fetchone()[0]

    def sessions(self) -> set[str]:
        return {r[0] for r in self.conn.execute("SELECT session FROM heads")}

    def tips(self, sessions: Iterable[str]) -> dict[str, str]:
        tips = {}
        for sid in sessions:
            row = self.conn.execute("SELECT hash FROM events WHERE seq = (SELECT last FROM heads "
                                    "WHERE session = ?)", (sid,)).fetchone()
            if row:
                tips[sid] = row[0]
        return tips

    def events(self, rows: list[Row]) -> None:
        self.conn.executemany("INSERT INTO events VALUES (?,?,?,?,?,?,?,?,?,?)",
                              [tuple(msgspec.structs.astuple(r)) for r in rows])

    def heads(self, spans: dict[str, list]) -> None:
        self.conn.executemany(
            "INSERT INTO heads VALUES (?,?,?) ON CONFLICT(session) DO UPDATE SET last=excluded.last",
            [(sid, first, last) for sid, (first, last, _) in spans.items()])

    def known_commands(self, keys: list[tuple[str, str]]) -> set[tuple[str, str]]:
        wanted = set(keys)
        return {(d, c) for d, c in self.conn.execute("SELECT device, command_id FROM commands")
                if (d, c) in wanted}

    def commands(self, commands: list[Command]) -> None:
        self.conn.executemany("INSERT INTO commands VALUES (?,?,?,?,?,?)",
                              [(d, c, s, msgspec.json.encode(seqs).decode(), code, message)
                               for d, c, s, seqs, code, message in commands])

    def tokens(self, tokens: list[Token]) -> None:
        self.conn.executemany("INSERT INTO tokens (hash, role, character, session, name, created, revoked, "
                              "parent) VALUES (?,?,?,?,?,?,?,?)", tokens)

    def secrets(self, secrets: list[Secret]) -> None:
        self.conn.executemany("INSERT INTO secrets VALUES (?,?)", secrets)

    def commit(self) -> None:
        self.conn.execute("COMMIT")

    def close(self) -> None:
        if self.conn.in_transaction:
            self.conn.execute("ROLLBACK")
        self.conn.close()
        self.lock.release()


class _PostgresSink:
    """Appends to a PostgreSQL chronicle in one transaction, holding ``log_head``'s lock
    (running servers wait for it, and then go on after the new rows)."""

    def __init__(self, url: str, create: bool):
        import psycopg

        from conteur.server.store.postgres import PostgresStore

        PostgresStore(url, create=create).close()
        self.conn = psycopg.connect(url)
        self._head = self.conn.execute("SELECT seq FROM log_head WHERE id = 1 FOR UPDATE").fetchone()[0]

    def head(self) -> int:
        return self._head

    def sessions(self) -> set[str]:
        return {r[0] for r in self.conn.execute("SELECT session FROM heads")}

    def tips(self, sessions: Iterable[str]) -> dict[str, str]:
        return dict(self.conn.execute("SELECT session, hash FROM heads WHERE session = ANY(%s)",
                                      (list(sessions),)).fetchall())

    def events(self, rows: list[Row]) -> None:
        with self.conn.cursor().copy("COPY events (seq, session, type, data, actor, device, command_id, "
                                     "at, prev_hash, hash) FROM STDIN") as copy:
            for r in rows:
                copy.write_row(msgspec.structs.astuple(r))
        self._head = max(self._head, rows[-1].seq) if rows else self._head

    def heads(self, spans: dict[str, list]) -> None:
        self.conn.cursor().executemany(
            "INSERT INTO heads VALUES (%s, %s, %s, %s) ON CONFLICT (session) "
            "DO UPDATE SET last = excluded.last, hash = excluded.hash",
            [(sid, first, last, tip) for sid, (first, last, tip) in spans.items()])
        self.conn.execute("UPDATE log_head SET seq = %s WHERE id = 1", (self._head,))

    def known_commands(self, keys: list[tuple[str, str]]) -> set[tuple[str, str]]:
        if not keys:
            return set()
        return set(self.conn.execute(
            "SELECT c.device, c.command_id FROM commands c JOIN unnest(%s::text[], %s::text[]) "
            "AS k(device, command_id) ON c.device = k.device AND c.command_id = k.command_id",
            ([d for d, _ in keys], [c for _, c in keys])).fetchall())

    def commands(self, commands: list[Command]) -> None:
        self.conn.cursor().executemany("INSERT INTO commands VALUES (%s, %s, %s, %s, %s, %s)", commands)

    def tokens(self, tokens: list[Token]) -> None:
        self.conn.cursor().executemany(
            "INSERT INTO tokens (hash, role, character, session, name, created, revoked, parent) "
            "VALUES (%s, %s, %s, %s, %s, %s, %s, %s)", tokens)

    def secrets(self, secrets: list[Secret]) -> None:
        self.conn.cursor().executemany("INSERT INTO secrets VALUES (%s, %s)", secrets)

    def commit(self) -> None:
        self.conn.commit()

    def close(self) -> None:
        self.conn.rollback()
        self.conn.close()


def _sink(target: str, create: bool):
    return _PostgresSink(target, create) if is_postgres_url(target) else _SQLiteSink(target, create)


@contextlib.contextmanager
def _opened(factory, *args):
    handle = factory(*args)
    try:
        yield handle
    finally:
        handle.close()


def _name(target: str) -> str:
    return redact(target) if is_postgres_url(target) else target


def _check_chain(rows: Iterable[Row], what: str, *, gapless: bool) -> int:
    count, broken = verify_rows(rows, gapless=gapless)
    if broken is not None:
        raise MigrateError(f"{what}: {broken}; nothing was written")
    return count


def _spans(rows: Iterable[Row], spans: dict[str, list]) -> None:
    for r in rows:
        span = spans.setdefault(r.session, [r.seq, r.seq, r.hash])
        span[1], span[2] = r.seq, r.hash


# -- migrate -----------------------------------------------------------------------------


def migrate(source: str, destination: str) -> Moved:
    """Copies the chronicle at ``source`` into the empty chronicle at ``destination``
    (created if missing), then verifies the destination's chain against the source's."""
    source, destination = str(source), str(destination)
    if not is_postgres_url(source) and not is_postgres_url(destination) \
            and Path(source).resolve() == Path(destination).resolve():
        raise MigrateError("--from and --to are the same chronicle")
    if not is_postgres_url(destination) and Path(destination).exists() and Path(destination).is_dir():
        raise MigrateError(f"{destination} is a folder, not a database file")
    with _opened(_source, source) as src:
        count = _check_chain(src.rows(), f"the chronicle at {_name(source)} is damaged", gapless=True)
        commands, tokens, secrets = src.commands(), src.tokens(), src.secrets()
        with _opened(_sink, destination, True) as dest:
            if dest.head():
                raise MigrateError(f"{_name(destination)} already holds {dest.head()} events: "
                                   f"a chronicle moves into an empty one only")
            spans: dict[str, list] = {}
            chunk: list[Row] = []
            for row in src.rows():
                chunk.append(row)
                if len(chunk) == CHUNK:
                    dest.events(chunk)
                    _spans(chunk, spans)
                    chunk = []
            if chunk:
                dest.events(chunk)
                _spans(chunk, spans)
            dest.heads(spans)
            dest.commands(commands)
            dest.tokens(tokens)
            dest.secrets(secrets)
            dest.commit()
    moved = Moved(events=count, sessions=list(spans), commands=len(commands), tokens=len(tokens),
                  secrets=len(secrets))
    _verify_moved(destination, spans)
    return moved


def _verify_moved(destination: str, spans: dict[str, list]) -> None:
    from conteur.server.store.factory import open_store

    with open_store(destination) as store:
        count, broken = verify_rows(store.rows(), gapless=True)
        if broken is not None:
            raise MigrateError(f"after the move, {_name(destination)}: {broken}")
        for sid, (_, last, tip) in spans.items():
            rows = store.read_after(sid, after=last - 1)
            if not rows or rows[-1].hash != tip:
                raise MigrateError(f"after the move, session {sid!r} does not end where it did")


# -- import a venue's night ---------------------------------------------------------------


def import_night(path: str | Path, destination: str, *, verify: Verify) -> Moved:
    """Adds the sessions of the export at ``path`` to the chronicle at ``destination``,
    once ``verify`` (``conteur.server.audit.verify.verify_path``) finds its draws and
    verdicts sound."""
    from conteur.server.store.chain import LogLineError

    path = Path(path)
    if not path.is_file():
        raise MigrateError(f"no exported log at {path}")
    try:
        rows = list(read_jsonl(path))
    except LogLineError as exc:
        raise MigrateError(f"{path}: {exc}; nothing was imported") from None
    if not rows:
        raise MigrateError(f"{path} holds no event: nothing was imported")
    _check_chain(rows, f"{path} does not verify (tampered or damaged)", gapless=False)
    _check_draws(path, verify)
    sessions = list(dict.fromkeys(r.session for r in rows))
    with _opened(_sink, str(destination), True) as dest:
        already = [s for s in sessions if s in dest.sessions()]
        if already:
            raise MigrateError(f"{_name(str(destination))} already holds session(s) "
                               f"{', '.join(already)}: a night is imported once")
        head = dest.head()
        tips: dict[str, str] = {}
        fresh: list[Row] = []
        seqs_of: dict[int, int] = {}
        for r in rows:
            head += 1
            prev = tips.get(r.session, GENESIS)
            digest = row_hash(prev, head, r.session, r.type, r.data, r.actor, r.device, r.command_id, r.at)
            fresh.append(Row(head, r.session, r.type, r.data, r.actor, r.device, r.command_id, r.at,
                             prev, digest))
            tips[r.session] = digest
            seqs_of[r.seq] = head
        commands = _commands_of(fresh)
        clash = dest.known_commands([(d, c) for d, c, *_ in commands])
        if clash:
            device, command_id = sorted(clash)[0]
            raise MigrateError(f"command {command_id!r} of device {device!r} is already in "
                               f"{_name(str(destination))}: nothing was imported")
        spans: dict[str, list] = {}
        for start in range(0, len(fresh), CHUNK):
            dest.events(fresh[start:start + CHUNK])
        _spans(fresh, spans)
        dest.heads(spans)
        dest.commands(commands)
        dest.commit()
    _verify_moved(str(destination), spans)
    return Moved(events=len(fresh), sessions=sessions, commands=len(commands))


def _commands_of(rows: list[Row]) -> list[Command]:
    """The idempotency records of imported rows: a command's events share its device and
    id (a rejection is one ``command_rejected`` row, recorded with its code)."""
    grouped: dict[tuple[str, str], list[Row]] = {}
    for r in rows:
        if r.command_id:
            grouped.setdefault((r.device, r.command_id), []).append(r)
    commands = []
    for (device, command_id), group in grouped.items():
        code = message = None
        if len(group) == 1 and group[0].type == "command_rejected":
            data = msgspec.json.decode(group[0].data)
            code, message = data.get("code"), data.get("message")
        commands.append((device, command_id, group[0].session, [r.seq for r in group], code, message))
    return commands


def _check_draws(path: Path, verify: Verify) -> None:
    """The export's fair draws and verdicts, as ``conteur verify`` checks them."""
    report = verify(path)
    if not report.ok:
        raise MigrateError(f"{path} does not verify: {report.text().splitlines()[0]}; nothing was imported")


def backup_postgres(url: str, target: str | Path) -> int:
    """``conteur backup`` of a PostgreSQL chronicle: one read snapshot of it, written as a
    chronicle file beside ``target`` and renamed into place once complete and verified
    (a stick pulled mid-copy never loses the previous backup). Returns its events."""
    import os

    target = Path(target)
    if not target.parent.is_dir():
        raise MigrateError(f"no folder {target.parent}: is the stick plugged in and mounted?")
    partial = target.with_name(target.name + ".partial")
    for leftover in (partial, partial.with_name(partial.name + "-wal"), partial.with_name(partial.name + "-shm")):
        leftover.unlink(missing_ok=True)
    try:
        moved = migrate(url, str(partial))
        conn = sqlite3.connect(partial)  # one standalone file: nothing else has to travel
        conn.execute("PRAGMA journal_mode=delete")
        conn.close()
    except BaseException:
        partial.unlink(missing_ok=True)
        raise
    os.replace(partial, target)
    return moved.events
