"""The Python client's durable side: an outbox of commands and the last seq seen.

A command is written here, with its UUID, before anything is sent: a process killed while
offline finds it again on restart and sends it with the same id, so the server's
``(device, command_id)`` idempotency turns any resend into the first outcome, never into
a second throw. The last seq is persisted too, so a restarted client resumes with
``hello {after}`` instead of downloading the whole session again.

Stdlib ``sqlite3`` in WAL mode with ``synchronous=FULL``: this runs on storytellers'
laptops and in scripts, so a small file next to the script is enough.
"""

from __future__ import annotations

import json
import sqlite3
import time
import uuid
from pathlib import Path
from typing import Any

import msgspec

from conteur.server.store.dbfile import NewerDatabase

# PRAGMA user_version of the state file; bumped when its tables change in a way an older
# client would misread (files from before the stamp read 0: the same layout as 1).
OUTBOX_VERSION = 1

_SCHEMA = """
CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS outbox (
    id TEXT PRIMARY KEY,
    n INTEGER NOT NULL,            -- creation order: commands go out in the order made
    session TEXT NOT NULL,
    command TEXT NOT NULL,         -- the command as wire JSON
    entropy TEXT NOT NULL DEFAULT '',
    made_at REAL NOT NULL,
    made_after INTEGER NOT NULL,   -- the seq the command was made against (DESIGN, offline)
    status TEXT NOT NULL DEFAULT 'queued',   -- queued | acked | rejected
    seqs TEXT,                     -- JSON list, once acknowledged
    code TEXT,
    message TEXT
);
CREATE TABLE IF NOT EXISTS cursor (session TEXT PRIMARY KEY, last_seq INTEGER NOT NULL);
CREATE TABLE IF NOT EXISTS log (   -- what this viewer received, to rebuild its view offline
    session TEXT NOT NULL, seq INTEGER NOT NULL, event TEXT NOT NULL,
    PRIMARY KEY (session, seq)
);
"""


class Entry(msgspec.Struct, frozen=True, kw_only=True):
    """One outbox row."""

    id: str
    session: str
    command: dict[str, Any]
    entropy: str = ""
    made_after: int = 0
    status: str = "queued"
    seqs: tuple[int, ...] = ()
    code: str | None = None
    message: str | None = None


class Outbox:
    """Commands not yet acknowledged, the device id, and the last seq per session."""

    def __init__(self, path: str | Path = ":memory:"):
        self.path = str(path)
        self._db = sqlite3.connect(self.path, isolation_level=None, check_same_thread=False)
        try:
            version = self._db.execute("PRAGMA user_version").fetchone()[0]
            if version > OUTBOX_VERSION:  # a newer client's file: never rewritten by this one
                raise NewerDatabase(
                    f"{self.path} was written by a newer conteur client (version {version}); "
                    f"this one reads version {OUTBOX_VERSION} and older: upgrade conteur")
            if self.path != ":memory:":
                self._db.execute("PRAGMA journal_mode=WAL")
            self._db.execute("PRAGMA synchronous=FULL")
            self._db.executescript(_SCHEMA)
            if version < OUTBOX_VERSION:
                self._db.execute(f"PRAGMA user_version={OUTBOX_VERSION}")
        except BaseException:
            self._db.close()
            raise

    def close(self) -> None:
        self._db.close()

    # -- device identity -------------------------------------------------------------

    def device(self, default: str | None = None) -> str:
        """This outbox's device id: made once, kept, because idempotency keys on it."""
        row = self._db.execute("SELECT value FROM meta WHERE key='device'").fetchone()
        if row:
            return row[0]
        device = default or f"py-{uuid.uuid4().hex[:12]}"
        self._db.execute("INSERT OR IGNORE INTO meta VALUES ('device', ?)", (device,))
        return self.device()

    def get_meta(self, key: str) -> str | None:
        row = self._db.execute("SELECT value FROM meta WHERE key=?", (key,)).fetchone()
        return row[0] if row else None

    def set_meta(self, key: str, value: str) -> None:
        self._db.execute("INSERT OR REPLACE INTO meta VALUES (?, ?)", (key, value))

    # -- cursor ----------------------------------------------------------------------

    def last_seq(self, session: str) -> int:
        row = self._db.execute("SELECT last_seq FROM cursor WHERE session=?", (session,)).fetchone()
        return row[0] if row else 0

    def set_last_seq(self, session: str, seq: int) -> None:
        # max(): a late frame never moves the cursor backwards.
        self._db.execute(
            "INSERT INTO cursor VALUES (?, ?) ON CONFLICT(session) DO UPDATE "
            "SET last_seq=max(last_seq, excluded.last_seq)",
            (session, seq),
        )

    # -- received events -----------------------------------------------------------------

    def record(self, session: str, items: list[tuple[int, dict]]) -> None:
        """Keep received events and move the cursor in one transaction (one fsync per batch)."""
        if not items:
            return
        with self._tx():
            self._db.executemany(
                "INSERT OR IGNORE INTO log VALUES (?, ?, ?)",
                [(session, seq, json.dumps(event)) for seq, event in items],
            )
            self.set_last_seq(session, max(seq for seq, _ in items))

    def forget_log(self, session: str) -> None:
        """Drop what this viewer held of a session (the server has another database)."""
        with self._tx():
            self._db.execute("DELETE FROM log WHERE session=?", (session,))
            self._db.execute("DELETE FROM cursor WHERE session=?", (session,))

    def last_logged(self, session: str) -> tuple[int, dict] | None:
        """The last event held, as received: sent in ``hello.last`` so a server restored
        from an older backup can say the histories diverged (docs/protocol.md)."""
        row = self._db.execute("SELECT seq, event FROM log WHERE session=? ORDER BY seq DESC LIMIT 1",
                               (session,)).fetchone()
        return (row[0], json.loads(row[1])) if row else None

    def log(self, session: str) -> list[tuple[int, dict]]:
        cur = self._db.execute("SELECT seq, event FROM log WHERE session=? ORDER BY seq", (session,))
        return [(seq, json.loads(event)) for seq, event in cur.fetchall()]

    def _tx(self):
        db = self._db

        class _Tx:
            def __enter__(self):
                db.execute("BEGIN IMMEDIATE")

            def __exit__(self, exc_type, exc, tb):
                db.execute("ROLLBACK" if exc_type else "COMMIT")

        return _Tx()

    # -- commands --------------------------------------------------------------------

    def put(self, session: str, command: dict[str, Any], *, entropy: str = "",
            made_after: int = 0, command_id: str | None = None) -> str:
        command_id = command_id or str(uuid.uuid4())
        n = self._db.execute("SELECT coalesce(max(n), 0) + 1 FROM outbox").fetchone()[0]
        self._db.execute(
            "INSERT OR IGNORE INTO outbox (id, n, session, command, entropy, made_at, made_after)"
            " VALUES (?, ?, ?, ?, ?, ?, ?)",
            (command_id, n, session, json.dumps(command), entropy, time.time(), made_after),
        )
        return command_id

    def queued(self, session: str | None = None) -> list[Entry]:
        sql = "SELECT * FROM outbox WHERE status='queued'"
        args: tuple = ()
        if session is not None:
            sql += " AND session=?"
            args = (session,)
        return [self._entry(r) for r in self._rows(sql + " ORDER BY n", args)]

    def get(self, command_id: str) -> Entry | None:
        rows = self._rows("SELECT * FROM outbox WHERE id=?", (command_id,))
        return self._entry(rows[0]) if rows else None

    def all(self) -> list[Entry]:
        return [self._entry(r) for r in self._rows("SELECT * FROM outbox ORDER BY n", ())]

    def acked(self, command_id: str, seqs: list[int] | tuple[int, ...]) -> None:
        self._db.execute(
            "UPDATE outbox SET status='acked', seqs=? WHERE id=?",
            (json.dumps(list(seqs)), command_id),
        )

    def rejected(self, command_id: str, code: str, message: str) -> None:
        self._db.execute(
            "UPDATE outbox SET status='rejected', code=?, message=? WHERE id=?",
            (code, message, command_id),
        )

    def prune(self, older_than: float = 86400.0, now: float | None = None) -> int:
        """Forget answered commands made more than ``older_than`` seconds ago; returns how
        many. Queued ones always stay (they still have to go out), and the cursor and the
        received events are another table: the next resync and the fold are untouched.
        An outcome asked for after this is no longer known here; a day is far beyond any
        retry (the server keeps its own answer for the idempotency key anyway)."""
        cutoff = (time.time() if now is None else now) - older_than
        cur = self._db.execute("DELETE FROM outbox WHERE status != 'queued' AND made_at < ?", (cutoff,))
        return cur.rowcount

    def _rows(self, sql: str, args: tuple) -> list[sqlite3.Row]:
        cur = self._db.execute(sql, args)
        names = [d[0] for d in cur.description]
        return [dict(zip(names, r)) for r in cur.fetchall()]

    @staticmethod
    def _entry(row: dict) -> Entry:
        return Entry(
            id=row["id"], session=row["session"], command=json.loads(row["command"]),
            entropy=row["entropy"], made_after=row["made_after"], status=row["status"],
            seqs=tuple(json.loads(row["seqs"])) if row["seqs"] else (),
            code=row["code"], message=row["message"],
        )
