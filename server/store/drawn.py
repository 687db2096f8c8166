"""The draw summaries a SQLite chronicle keeps beside its events, for its replay.

One row of ``drawn_pairs`` per event of a kind that carries draws (``game.DRAWN_TAGS``, even
with no record): the event's ``events.drawn.Summary`` in its stored form
(``events.drawn.pairs``), written in the same transaction as the event
(``SQLiteStore._commit``) and never changed. A replay reads a chunk's summaries in seq
order with one range query, joined by SQLite, decodes them in one call into one flat list
and merges them into one summary per run of events (``events.drawn.segments``), and decodes
the events without their draw records (issue 18 item 2: about a quarter of a replay's work).

Derived data, outside the hash chain: replay from the log stays the truth. The replay
trusts a chunk's summaries only when there is exactly one for each of its events that
carries draws, each read as ``pairs`` writes them (``segments``); otherwise (a file from before the table, rows written by
another tool or by hand, a summary deleted) it decodes and counts that chunk's records as
before: slower, never wrong. A missing summary alone is thus harmless; an edited one, or one
added where no such event is (which could stand in for a missing one), would change the
state: ``conteur verify`` reports both (``check``).

A file with events opened by a conteur that makes this table gets it filled in the same
step (``ensure``: one pass over the log); so does a session whose last event that carries
draws has no summary (rows appended by another tool: ``bench/load.py``'s merge,
``conteur migrate``). A copy of the file (backup, restore) carries the table; PostgreSQL
keeps none and decodes the records.

Session 11's conteur kept them in ``drawn``, one JSON ``Summary`` a row (``[{"ana/open":13},0]``),
decoded into a struct and a dict each and merged one by one in Python: a third of them went
in the containers. A file that has that table and not this one gets this one filled from
the log and that one dropped when a store opens it (``ensure``: the table is derived, the
log is the truth); ``conteur verify`` still checks that table in a file no store of
this conteur has opened.
"""

from __future__ import annotations

import logging
import sqlite3
from typing import Iterable, Iterator

import msgspec

from conteur.events import game
from conteur.events.drawn import Summary, decode_joined, encode, pairs, segments, summarize
from conteur.events.model import DrawRecord

log = logging.getLogger("conteur.store")

TABLE = "drawn_pairs"
OLD_TABLE = "drawn"  # session 11's form (``events.drawn.encode``)
SCHEMA = (f"CREATE TABLE IF NOT EXISTS {TABLE} (session TEXT NOT NULL, seq INTEGER NOT NULL, "
          "pairs BLOB NOT NULL, PRIMARY KEY (session, seq)) WITHOUT ROWID")
INSERT = f"INSERT INTO {TABLE} VALUES (?,?,?)"  # (session, seq, summary_of(event))


def _tags_sql() -> str:
    for tag in game.DRAWN_TAGS:
        if not tag.replace(".", "").replace("_", "").isalnum():
            raise ValueError(f"event tag {tag!r} cannot be written into SQL as a literal")
    return ",".join(f"'{tag}'" for tag in sorted(game.DRAWN_TAGS))


_TAGS = _tags_sql()
# a chunk's summaries, joined as stored (events.drawn.segments reads them so), in seq
# order: the table is its primary key's b-tree alone (WITHOUT ROWID, no other index), which
# the range walks in (session, seq) order; an ORDER BY in a subquery cost a fifth more
_CHUNK_SQL = (f"SELECT count(*), CAST(group_concat(pairs, '') AS BLOB) FROM {TABLE} "
              "WHERE session = ? AND seq > ? AND seq <= ?")
_BATCH = 5000


def summary_of(event) -> bytes | None:
    """The stored summary of an event about to be appended, or None for a kind without draws."""
    if type(event) not in game.DRAWN:
        return None
    return pairs(summarize(event.draws))


def exists(conn: sqlite3.Connection, table: str = TABLE) -> bool:
    return conn.execute("SELECT 1 FROM sqlite_master WHERE type='table' AND name=?", (table,)).fetchone() is not None


def chunk(conn: sqlite3.Connection, session: str, after: int, last: int) -> tuple[int, bytes]:
    """(how many, joined as stored) the summaries of ``session``'s rows with seqs in
    (``after``, ``last``]: ``runs`` makes them the replay's."""
    count, joined = conn.execute(_CHUNK_SQL, (session, after, last)).fetchone()
    return count, joined or b""


def runs(read: tuple[int, bytes], types: list[type]) -> list[Summary] | None:
    """A chunk's summaries (``chunk``) for ``game.Replay.feed``, the chunk's events having
    ``types`` (``codec.FoldDecoder.types``); None when they do not match its rows one for
    one (``events.drawn.segments``): a chunk's summaries are those of its own rows (its
    seqs), so with as many of them as its events that carry draws, none is missing (unless
    one was also added where none belongs: ``check``)."""
    return segments(read[1], read[0], types)


class _Draws(msgspec.Struct, gc=False):
    """An event's draw records alone (its other fields, its tag, skipped unread)."""

    draws: tuple[DrawRecord, ...] = ()


_draws_decoder = msgspec.json.Decoder(list[_Draws])


def _summaries(rows: list[tuple[str, int, bytes]]) -> list[tuple[str, int, bytes]]:
    """(session, seq, body) rows of events that carry draws -> (session, seq, summary)."""
    decoded = _draws_decoder.decode(b"[" + b",".join(bytes(r[2]) if not isinstance(r[2], str) else r[2].encode()
                                                     for r in rows) + b"]")
    return [(s, seq, pairs(summarize(d.draws))) for (s, seq, _), d in zip(rows, decoded)]


def _missing(conn: sqlite3.Connection, session: str | None) -> Iterator[list[tuple[str, int, bytes]]]:
    """The rows (session, seq, body) of events that carry draws and have no summary, by
    batches: of the whole file, or of one session (over its span, as a replay reads it).
    Each batch is a query of its own, after the seqs of the one before: the caller writes
    between two, and no cursor stays open over its writes."""
    anti = f"AND NOT EXISTS (SELECT 1 FROM {TABLE} d WHERE d.session = e.session AND d.seq = e.seq)"
    if session is None:
        where, args = "", ()
        first, last = 0, 1 << 62
    else:
        span = conn.execute("SELECT first, last FROM heads WHERE session=?", (session,)).fetchone()
        if span is None:
            return
        (first, last), where, args = span, "AND session = ?", (session,)
        first -= 1
    while rows := conn.execute(f"SELECT session, seq, data FROM events e WHERE seq > ? AND seq <= ? {where} "
                               f"AND type IN ({_TAGS}) {anti} ORDER BY seq LIMIT {_BATCH}",
                               (first, last, *args)).fetchall():
        yield rows
        first = rows[-1][1]


def _stale(conn: sqlite3.Connection) -> list[str]:
    """The sessions whose last event that carries draws has no summary: rows appended
    without them (by another tool); a cheap look at each session's tail."""
    stale = []
    for session, first, last in conn.execute("SELECT session, first, last FROM heads").fetchall():
        row = conn.execute(f"SELECT seq FROM events WHERE seq >= ? AND seq <= ? AND session = ? "
                           f"AND type IN ({_TAGS}) ORDER BY seq DESC LIMIT 1", (first, last, session)).fetchone()
        if row is not None and conn.execute(f"SELECT 1 FROM {TABLE} WHERE session = ? AND seq = ?",
                                            (session, row[0])).fetchone() is None:
            stale.append(session)
    return stale


def fill(conn: sqlite3.Connection, sessions: Iterable[str] | None = None) -> int:
    """Writes the missing summaries (of ``sessions``, default every one) in one
    transaction, creating the table if need be; how many were written. For a tool that
    inserts event rows with plain SQL (``bench/load.py``), after it has: a replay of rows
    without summaries decodes their records (``runs``), which is correct but slower."""
    own = not conn.in_transaction
    if own:
        conn.execute("BEGIN IMMEDIATE")
    try:
        conn.execute(SCHEMA)
        conn.execute(f"DROP TABLE IF EXISTS {OLD_TABLE}")  # derived, and read no more
        written = 0
        for session in ([None] if sessions is None else list(dict.fromkeys(sessions))):
            for rows in _missing(conn, session):
                summaries = _summaries(rows)
                conn.executemany(INSERT, summaries)
                written += len(summaries)
        if own:
            conn.execute("COMMIT")
    except BaseException:
        if own:
            conn.execute("ROLLBACK")
        raise
    return written


def ensure(conn: sqlite3.Connection) -> int:
    """At a store's opening: the table, filled for a file from before it (the migration:
    one pass over the log, session 11's table dropped), and for every session whose tail
    has no summaries."""
    if not exists(conn):
        if conn.execute("SELECT 1 FROM events LIMIT 1").fetchone() is not None:
            # a warning, shown without any logging set up: a big old file takes a while
            # (44 s for a million events on a loaded machine) before the server answers
            log.warning("storing the draw summaries of every event of this database, once (a file "
                        "from before them, or from before their present form): replays read them "
                        "instead of the draw records")
        return fill(conn)
    if exists(conn, OLD_TABLE):  # written by an older conteur since: its own, read by none here
        conn.execute(f"DROP TABLE {OLD_TABLE}")
    stale = _stale(conn)
    return fill(conn, stale) if stale else 0


class Mismatch(msgspec.Struct, frozen=True):
    session: str
    seq: int
    reason: str


def check(conn: sqlite3.Connection, rows: Iterable) -> tuple[Mismatch | None, int, int]:
    """(the first stored summary that is not what its event's records make, or that stands
    where no event that carries draws is; summaries checked; events without one) over the
    log's ``rows`` (``chain.Row``), in seq order: of this table, or of session 11's in a file
    that has only that one (no store of this conteur opened it). A file without either has
    none to check. This form is compared byte for byte (``pairs`` writes one form of a
    summary, and the replay cuts a chunk at the newlines); session 11's by value (the
    dict's order is part of the value). The table is walked in seq order beside the rows,
    one summary at a time: held in a dict, a million events' summaries were about 100 MB
    of ``conteur verify``."""
    table = TABLE if exists(conn) else OLD_TABLE if exists(conn, OLD_TABLE) else None
    if table is None:
        return None, 0, 0
    summaries = conn.execute(f"SELECT session, seq, {'pairs' if table == TABLE else 'summary'} FROM {table} "
                             "ORDER BY seq, session")
    here = next(summaries, None)
    extra: tuple[str, int] | None = None  # the first summary standing where no event carries draws
    checked = missing = 0
    for row in rows:
        if row.type not in game.DRAWN_TAGS:
            continue
        # the summaries before this event (or of its seq in another session) stand at no
        # event that carries draws
        while here is not None and (here[1] < row.seq or here[1] == row.seq and here[0] != row.session):
            extra = extra or (here[0], here[1])
            here = next(summaries, None)
        if here is None or here[1] != row.seq:
            missing += 1
            continue
        data = here[2].encode() if isinstance(here[2], str) else bytes(here[2])  # TEXT: edited by hand
        here = next(summaries, None)
        checked += 1
        try:
            (records,) = _draws_decoder.decode(b"[" + (row.data if isinstance(row.data, bytes) else row.data.encode())
                                               + b"]")
            want = summarize(records.draws)
            if table == TABLE:
                shown = pairs(want)
                wrong = data != shown
            else:
                have = decode_joined(data)
                wrong = len(have) != 1 or list(have[0].streams.items()) != list(want.streams.items()) \
                    or have[0].counter != want.counter
                shown = encode(want)
        except msgspec.DecodeError as exc:
            return Mismatch(row.session, row.seq, f"stored draw summary cannot be read: {exc}"), checked, missing
        if wrong:
            return Mismatch(row.session, row.seq, f"stored draw summary {data.decode(errors='replace')!r} is not "
                            f"its event's ({shown.decode()!r})"), checked, missing
    if extra is None and here is not None:
        extra = (here[0], here[1])
    if extra is not None:
        return Mismatch(extra[0], extra[1], "a stored draw summary stands where the log has no event of this "
                        "session that carries draws"), checked, missing
    return None, checked, missing
