"""What a chronicle file must be before any command touches it, and who may write it.

The checks run before SQLite opens the file, because SQLite itself never says no: it
turns a mistyped path into a new empty chronicle, writes its schema into a 0-byte file,
and opens a newer conteur's database only to fail later with a traceback. Each refusal
here is one sentence, with the exit status ``conteur --help`` documents (``EXIT_*``).

One writer per database: the store keeps its head seq and chain tips in memory, so a
second server (or an ``init`` while the server runs) on the same file would append with
stale seqs ("UNIQUE constraint failed: events.seq") on its first command. ``WriterLock``
holds an exclusive ``flock`` on the database file itself for the writer's whole life:
the kernel drops it when the process dies (kill -9, power cut), it leaves no file behind,
and it is independent of SQLite's own byte-range locks, so readers (``backup``,
``export``, ``verify``) go on while the server runs.
"""

from __future__ import annotations

import fcntl
import os
import sqlite3
from collections.abc import Callable
from pathlib import Path
from typing import Protocol

__all__ = [
    "EXIT_BAD_INPUT", "EXIT_CHECK_FAILED", "EXIT_CODES", "EXIT_IN_USE", "EXIT_NEWER",
    "EXIT_UNREACHABLE", "SCHEMA_VERSION", "DatabaseFileError", "DatabaseInUse",
    "NewerDatabase", "Verification", "Verify", "WriterLock", "check_database", "database_error",
    "newer_message", "open_readonly", "schema_version", "table_names",
]

# Stored in the file as PRAGMA user_version. Bump it when a change to the tables would
# make an older conteur misread the file; an older conteur then refuses it by name.
# Files from before the stamp read 0 and are the same layout as 1; 2 has no draw
# summaries beside the events and a UNIQUE index on the commands' idempotency key
# (``sqlite.migrate_schema``).
SCHEMA_VERSION = 2

EXIT_CHECK_FAILED = 1
EXIT_BAD_INPUT = 2
EXIT_UNREACHABLE = 3
EXIT_IN_USE = 4
EXIT_NEWER = 5

# conteur --help prints these; deploy/conteur.service's RestartPreventExitStatus= lists
# the ones a restart cannot cure.
EXIT_CODES = {
    0: "done",
    EXIT_CHECK_FAILED: "a check failed or was refused: verify found a break, a command was "
                       "rejected, restore or backup refused",
    EXIT_BAD_INPUT: "what was given cannot be used: a wrong option, a missing file or folder, "
                    "a file that is not a conteur database, an unknown session or token",
    EXIT_UNREACHABLE: "the server did not answer in time (conteur client)",
    EXIT_IN_USE: "the database is in use: another conteur server, init or restore has it",
    EXIT_NEWER: "the database was written by a newer conteur: upgrade this one",
}

_HEADER = b"SQLite format 3\x00"


class Verification(Protocol):
    """What checking a chronicle file answers (``conteur.server.audit.verify.Report``)."""

    @property
    def ok(self) -> bool: ...

    def text(self) -> str: ...


# The whole check of a chronicle file (chain, draws, verdicts), passed in by its caller
# (``conteur.server.audit.verify.verify_path``): it folds with the rules and the command
# path's compressed pages (server/core/pages.py), layers above the store, so the store takes it as an argument.
Verify = Callable[[Path], Verification]


class DatabaseFileError(Exception):
    """A database file a command cannot use; ``exit_code`` says why (``EXIT_*``)."""

    exit_code = EXIT_BAD_INPUT


class DatabaseInUse(DatabaseFileError):
    exit_code = EXIT_IN_USE


class NewerDatabase(DatabaseFileError):
    exit_code = EXIT_NEWER


def open_readonly(path: str | os.PathLike) -> sqlite3.Connection:
    """A connection that cannot write: not the data, and not even a -wal or -shm file.

    ``mode=ro`` alone still creates -wal and -shm beside a WAL database and cannot
    remove them. With no -wal beside a WAL database (no server running: a server always
    has one) the file alone is the whole database, so it is opened ``immutable``; with
    one, the server (or a crash) made it and it must be read.
    """
    resolved = Path(path).resolve()
    uri = f"{resolved.as_uri()}?mode=ro"
    if _is_wal(resolved) and not resolved.with_name(resolved.name + "-wal").exists():
        uri += "&immutable=1"
    return sqlite3.connect(uri, uri=True)


def _is_wal(path: Path) -> bool:
    # Header bytes 18-19 are 2 in WAL mode. A rollback-journal file (a backup copy) is
    # read plainly: that creates nothing, and honours the lock of a writer mid-change.
    try:
        with open(path, "rb") as f:
            header = f.read(20)
    except OSError:
        return False
    return len(header) == 20 and header[18] == 2 and header[19] == 2


def table_names(conn: sqlite3.Connection) -> set[str]:
    """The tables of an open chronicle file, by sqlite-utils' inspection. The connection is
    left as it was: no pragma set on it (``recursive_triggers``), no plugin run."""
    import sqlite_utils

    return set(sqlite_utils.Database(conn, recursive_triggers=False, execute_plugins=False).table_names())


def schema_version(conn: sqlite3.Connection) -> int:
    return conn.execute("PRAGMA user_version").fetchone()[0]


def newer_message(path: str | os.PathLike, version: int) -> str:
    return (f"{path} was written by a newer conteur (schema version {version}); this "
            f"conteur reads version {SCHEMA_VERSION} and older: upgrade conteur on this machine")


def check_database(path: str | os.PathLike, *, create: bool = False,
                   allow_newer: bool = False) -> bool:
    """Refuse, with one sentence, a file no command should open; True if it exists.

    With ``create`` a missing file is fine (``serve``, ``init``, ``simulate`` start a
    new chronicle) but its folder must exist; without it (every command that only
    reads) a missing file is an error and nothing is created. ``allow_newer`` is for
    copying pages without reading them (``backup``).
    """
    path = Path(path)
    if not path.exists():
        if not path.parent.is_dir():
            raise DatabaseFileError(f"no folder {path.parent} for the database {path.name} "
                                    f"(check --db; nothing was created)")
        if create:
            return False
        raise DatabaseFileError(f"no database at {path} (check --db; nothing was created)")
    if path.is_dir():
        raise DatabaseFileError(f"{path} is a folder, not a database file")
    try:
        with open(path, "rb") as f:
            header = f.read(len(_HEADER))
    except OSError as exc:
        raise DatabaseFileError(f"cannot read {path}: {exc.strerror}") from None
    if not header:
        raise DatabaseFileError(f"{path} is empty (0 bytes): not a chronicle database "
                                f"(a failed copy? restore a backup, or remove it to start anew)")
    if header != _HEADER:
        raise DatabaseFileError(f"{path} is not a SQLite database (a chronicle database is one)")
    try:
        conn = open_readonly(path)
        try:
            version = schema_version(conn)
            tables = table_names(conn)
        finally:
            conn.close()
    except sqlite3.OperationalError as exc:
        if "locked" in str(exc):
            raise DatabaseInUse(f"{path} is locked by another process: {exc}") from None
        raise DatabaseFileError(f"{path} cannot be read as a database: {exc}") from None
    except sqlite3.DatabaseError as exc:
        raise DatabaseFileError(f"{path} is a damaged SQLite file: {exc}") from None
    if version > SCHEMA_VERSION and not allow_newer:
        raise NewerDatabase(newer_message(path, version))
    if tables and "events" not in tables:
        raise DatabaseFileError(f"{path} is a SQLite database but not a conteur chronicle "
                                f"(it has no events table)")
    return True


def database_error(exc: BaseException) -> tuple[int, str] | None:
    """(exit status, one line) for an error SQLite raised on the file; None for another."""
    if isinstance(exc, sqlite3.OperationalError) and "locked" in str(exc):
        return EXIT_IN_USE, f"the database is locked by another process ({exc}): try again when it is done"
    if isinstance(exc, sqlite3.DatabaseError):
        return EXIT_BAD_INPUT, f"the database cannot be used: {exc}"
    return None


class WriterLock:
    """The exclusive right to write a chronicle, held from ``acquire`` to ``release``."""

    def __init__(self, path: str | os.PathLike, what: str = "conteur"):
        self.path = Path(path)
        self.what = what
        self._fd: int | None = None
        self._created = False

    def acquire(self) -> WriterLock:
        # Read-only is enough to flock; root's `conteur init` then never leaves a file
        # the service user cannot lock in turn.
        self._created = not self.path.exists()
        fd = os.open(self.path, os.O_RDONLY | os.O_CREAT | os.O_CLOEXEC, 0o644)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            os.close(fd)
            raise DatabaseInUse(
                f"{self.path} is in use by another conteur (a server, init or restore): "
                f"stop it first (systemctl stop conteur), or use another --db") from None
        self._fd = fd
        return self

    def release(self) -> None:
        if self._fd is not None:
            # a new chronicle that failed before its first write leaves no empty file,
            # which every command would then refuse
            if self._created and self.path.exists() and self.path.stat().st_size == 0:
                self.path.unlink()
            os.close(self._fd)
            self._fd = None

    def __enter__(self) -> WriterLock:
        return self.acquire()

    def __exit__(self, *exc) -> None:
        self.release()
