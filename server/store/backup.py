"""Consistent copies of a live chronicle database, and putting one back.

`backup` uses SQLite's online backup API in a single step: the copy is one read
snapshot of the source, so it holds exactly the events committed before the step
began, while the server keeps appending (WAL lets writers go on during a read).
Copying the file with `cp` instead could catch the database halfway through a
checkpoint, or miss everything still in the -wal file.

The copy is written beside its target and renamed into place only once it is
complete and synced, so a USB stick pulled mid-copy never loses the previous backup.
It is switched to the rollback journal, so it is one standalone file: nothing else
(-wal, -shm) has to travel with it.

`restore` refuses to touch a database some other connection has open (the server),
because the server keeps its folded state and head seq in memory and would carry on
from a log that is no longer on disk. The database it replaces is never deleted: it
is moved aside, with its -wal, as `<db>.before-restore-<UTC time>`; it may hold events
newer than the backup.
"""

from __future__ import annotations

import os
import sqlite3
from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path

from conteur.server.store.dbfile import (
    EXIT_BAD_INPUT, EXIT_CHECK_FAILED, EXIT_IN_USE, DatabaseFileError, Verify, WriterLock,
    check_database, open_readonly, table_names)

__all__ = ["BackupError", "DatabaseInUse", "backup", "count_events", "restore"]

Progress = Callable[[int, int, int], object]


class BackupError(Exception):
    """The copy does not open cleanly, or the source is not a chronicle database."""

    exit_code = EXIT_CHECK_FAILED


class DatabaseInUse(BackupError):
    """Another connection (the server) has the database open."""

    exit_code = EXIT_IN_USE


def backup(db_path: str | os.PathLike, to_path: str | os.PathLike, *,
           progress: Progress | None = None) -> int:
    """Copy the live database `db_path` to `to_path`; return the number of events in the copy.

    `progress(status, remaining, total)` is sqlite3's backup callback (pages); it is
    called once, since the copy is taken in one step so that it is one snapshot.
    """
    src_path, dest = Path(db_path), Path(to_path)
    # a mistyped --db is an error, never a new empty file; a newer conteur's database is
    # copied all the same (pages, not events): the spare machine may be the older one
    _usable(src_path, allow_newer=True)
    if dest.resolve() == src_path.resolve():
        raise BackupError(f"{dest} is the live database itself: back up to another file")
    if not dest.parent.is_dir():
        # never made here: a stick that is not mounted would be a folder on this disk
        raise BackupError(f"no folder {dest.parent}: is the stick plugged in and mounted?")
    partial = dest.with_name(dest.name + ".partial")
    _remove_db_files(partial)
    # Read-write, though it only reads: a read-only connection cannot remove the -wal
    # and -shm files it had to create when the server is not running.
    src = sqlite3.connect(src_path, timeout=30)
    try:
        _copy(src, partial, progress)
    finally:
        src.close()
    try:
        count = _check(partial)
    except BackupError:
        _remove_db_files(partial)
        raise
    _fsync(partial)
    os.replace(partial, dest)
    _fsync(dest.parent)
    return count


def restore(backup_path: str | os.PathLike, db_path: str | os.PathLike, *,
            verify: Verify, force: bool = False) -> int:
    """Make `db_path` a copy of `backup_path`; return the number of events restored.

    `verify` checks the backup's chain, draws and verdicts first
    (``conteur.server.audit.verify.verify_path``): one that does not verify is never put back.

    Refuses (DatabaseInUse) while any other connection has `db_path` open: stop the
    server first. `force=True` skips that check; a server still running then keeps
    writing to the moved-aside file, not the restored one, until it is restarted.
    """
    source, target = Path(backup_path), Path(db_path)
    if not source.is_file():
        missing = BackupError(f"no backup at {source} (check --from; nothing was changed)")
        missing.exit_code = EXIT_BAD_INPUT
        raise missing
    if target.resolve() == source.resolve():
        raise BackupError(f"{source} is the database to restore to: nothing to do")
    _usable(source)
    count = _check(source)
    _check_chain(source, verify)
    if not target.parent.is_dir():
        missing = BackupError(f"no folder {target.parent} for {target.name} (check --db)")
        missing.exit_code = EXIT_BAD_INPUT
        raise missing
    lock = WriterLock(target, "restore") if target.exists() and not force else None
    if lock is not None:
        lock.acquire()  # DatabaseInUse while a server holds it
    try:
        if target.exists():
            if not force:
                _refuse_if_in_use(target)
            held = _events_held(target)
            if held is not None and held > count and not force:
                raise BackupError(
                    f"{target} holds {held} events and the backup only {count}: restoring "
                    f"would set the chronicle back {held - count} events. Add --force to "
                    f"restore it anyway (the current database is kept beside it)")
            _move_aside(target)
    finally:
        if lock is not None:
            lock.release()
    partial = target.with_name(target.name + ".partial")
    _remove_db_files(partial)
    src = sqlite3.connect(f"{source.resolve().as_uri()}?mode=ro", uri=True)
    try:
        _copy(src, partial, None, journal_mode="wal")
    finally:
        src.close()
    _give_to_folder_owner(partial)
    _fsync(partial)
    os.replace(partial, target)
    _fsync(target.parent)
    return count


def count_events(conn: sqlite3.Connection) -> int:
    """Events in an open database; 0 for a database the store has not initialised yet."""
    return conn.execute("SELECT count(*) FROM events").fetchone()[0] if "events" in table_names(conn) else 0


def _copy(src: sqlite3.Connection, dest_path: Path, progress: Progress | None,
          journal_mode: str = "delete") -> None:
    dest = sqlite3.connect(dest_path)
    try:
        # pages=-1: one step, one snapshot. Stepping in chunks would restart from zero
        # every time the server commits, and might never finish at a busy venue.
        src.backup(dest, pages=-1, progress=progress)
        # The pages carry the source's WAL flag; rewrite it so the file stands alone.
        dest.execute(f"PRAGMA journal_mode={journal_mode}")
        dest.commit()
    except sqlite3.DatabaseError as exc:
        dest.close()
        _remove_db_files(dest_path)
        raise BackupError(f"cannot copy the database: {exc}") from exc
    finally:
        dest.close()


def _check(path: Path) -> int:
    conn = sqlite3.connect(f"{path.resolve().as_uri()}?mode=ro", uri=True)
    try:
        result = conn.execute("PRAGMA integrity_check").fetchall()
        if result != [("ok",)]:
            raise BackupError(f"{path} fails integrity_check: {result[:5]}")
        return count_events(conn)
    except sqlite3.DatabaseError as exc:
        raise BackupError(f"{path} is not a usable SQLite database: {exc}") from exc
    finally:
        conn.close()


def _usable(path: Path, **options) -> None:
    """conteur.server.store.dbfile's refusals, as this module's errors (their exit status kept)."""
    try:
        check_database(path, **options)
    except DatabaseFileError as exc:
        error = (DatabaseInUse if exc.exit_code == EXIT_IN_USE else BackupError)(str(exc))
        error.exit_code = exc.exit_code
        raise error from None


def _check_chain(path: Path, verify: Verify) -> None:
    """A backup that does not verify (a broken chain, a bad draw) is never put back."""
    report = verify(path)
    if not report.ok:
        raise BackupError(f"{path} does not verify, nothing was restored: {report.text()}")


def _events_held(path: Path) -> int | None:
    """Events in the database about to be replaced; None when it is not readable as one."""
    try:
        conn = open_readonly(path)
        try:
            return count_events(conn)
        finally:
            conn.close()
    except sqlite3.DatabaseError:
        return None


def _refuse_if_in_use(path: Path) -> None:
    # Leaving WAL mode needs the only connection to the file; the server holds one for
    # as long as it runs, so this fails exactly when the database is in use. When it
    # succeeds it has merged the -wal into the file, which is about to be moved aside.
    conn = sqlite3.connect(path, timeout=1)
    try:
        mode = conn.execute("PRAGMA journal_mode").fetchone()[0]
        if mode == "wal":
            conn.execute("PRAGMA journal_mode=delete")
        else:
            conn.execute("BEGIN EXCLUSIVE")
            conn.rollback()
    except sqlite3.OperationalError as exc:
        raise DatabaseInUse(
            f"{path} is open in another process (is the server running? "
            f"`systemctl stop conteur` first, or force): {exc}") from exc
    finally:
        conn.close()


def _move_aside(path: Path) -> Path:
    stamp = datetime.now(UTC).strftime("%Y%m%dT%H%M%SZ")
    aside = path.with_name(f"{path.name}.before-restore-{stamp}")
    # -wal and -shm keep their suffix so the moved database still finds its own log.
    for suffix in ("", "-wal", "-shm"):
        old = path.with_name(path.name + suffix)
        if old.exists():
            os.replace(old, aside.with_name(aside.name + suffix))
    return aside


def _give_to_folder_owner(path: Path) -> None:
    # `sudo conteur restore` would leave a root-owned file the service cannot write; the
    # data folder's owner (the `conteur` user) is who the database belongs to.
    if os.geteuid() == 0:
        folder = path.parent.stat()
        os.chown(path, folder.st_uid, folder.st_gid)


def _remove_db_files(path: Path) -> None:
    for suffix in ("", "-journal", "-wal", "-shm"):
        path.with_name(path.name + suffix).unlink(missing_ok=True)


def _fsync(path: Path) -> None:
    fd = os.open(path, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)
