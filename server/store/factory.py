"""The one place a store is opened from what a user typed: a file path or a PostgreSQL URL.

``--db chronicle.db`` and ``--store chronicle.db`` open a SQLite file (checked first by
``dbfile.check_database``: a mistyped path is an error, never a new empty chronicle);
``--store postgresql://user:password@host/db`` opens a PostgreSQL database. A SQLite file
has one writer (``WriterLock``); a PostgreSQL database takes many server processes at
once, its appends ordered and checked by the database itself.
"""

from __future__ import annotations

import contextlib
from pathlib import Path
from typing import Iterator

from conteur.server.store.interface import EventStore
from conteur.server.store.postgres import is_postgres_url, redact

__all__ = ["describe", "is_postgres_url", "open_store", "writing"]


def describe(target: str | Path) -> str:
    """How messages name the store: a path, or the URL without its password."""
    return redact(str(target)) if is_postgres_url(str(target)) else str(target)


def open_store(target: str | Path, *, create: bool = False, **kwargs) -> EventStore:
    """The store at ``target``; with ``create``, an empty chronicle is made if there is
    none (a server, ``init``, a migration's destination), else its absence is an error."""
    if is_postgres_url(str(target)):
        from conteur.server.store.postgres import PostgresStore

        return PostgresStore(str(target), create=create, **kwargs)
    from conteur.server.store.dbfile import check_database
    from conteur.server.store.sqlite import SQLiteStore

    check_database(target, create=create)
    return SQLiteStore(target, **kwargs)


@contextlib.contextmanager
def writing(target: str | Path, *, create: bool = True, shared: bool = False,
            **kwargs) -> Iterator[EventStore]:
    """The store opened to decide and append. A SQLite file is held alone (a second
    writer would append with stale seqs). A PostgreSQL database is held alone, or with
    ``shared`` beside other shared holders: server processes, whose appends the database
    checks against each other's (``Pending.basis``). Closed at the end."""
    if is_postgres_url(str(target)):
        with open_store(target, create=create, **kwargs) as store:
            held = store.hold(shared=shared)
            try:
                yield store
            finally:
                held.close()
        return
    from conteur.server.store.dbfile import WriterLock, check_database
    from conteur.server.store.sqlite import SQLiteStore

    check_database(target, create=create)
    with WriterLock(target):  # it makes the file it locks: checked before, not after
        with SQLiteStore(target, **kwargs) as store:
            yield store
