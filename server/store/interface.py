"""The event store's interface, and the values that cross it.

Everything outside ``conteur.server.store`` talks to a store through ``EventStore`` and
these types only: no SQL, no connection, no private member. ``SQLiteStore``
(``sqlite.py``, one file per chronicle at a venue) implements it; a PostgreSQL store for
hosting many games implements the same methods and passes the same contract suite
(``tests/store/test_store_contract.py``, parametrized over every store).

What every implementation guarantees:

- **One log, gapless.** Every event gets a global ``seq``: 1, 2, 3... in commit order,
  with no gap and no reuse, across all sessions. A command's events get consecutive
  seqs (they are written together or not at all).
- **A hash chain per session** (``chain.row_hash``): each row's ``prev_hash`` is the hash
  of the previous row *of the same session* (``GENESIS`` for its first), so one session's
  rows verify without the others (``chain.verify_rows``). Stored rows never change:
  updates and deletes are refused by the store itself, not only by its callers.
- **Acknowledged means durable.** ``append``, ``submit`` and ``submit_on`` resolve only
  after the transaction holding the events is committed (and flushed to stable storage,
  as the backend defines it). Concurrent appends may share one transaction (group
  commit); one append that fails (an event that cannot be encoded) fails alone and takes
  no seq; a transaction that fails resolves every append of it with ``StoreError`` and
  writes nothing.
- **Idempotency by (device, command id).** An append with a ``command_id`` that its
  device already stored is not written again: it resolves with the first ``Outcome``
  (same seqs, same rejection), ``replayed=True``. The same id from another device is
  another command. Appends without a ``command_id`` are never deduplicated.
- **FIFO appends.** Appends submitted from one thread are committed in submission order,
  so the seqs follow the order in which the caller folded its states.
- **Snapshots are a cache.** A snapshot is a folded ``GameState`` at a seq, in the one
  snapshot format (``snapshot.py``); reading one never changes what a fold returns, a
  snapshot of a version this conteur does not read, of another log (its tip is not the
  row at its seq) or one that does not decode is ignored, and replaying from zero is
  always the truth.
- **View snapshots** (``save_views``, ``load_view``) are bytes a caller keeps per
  (session, view), in the same format: the newest replaces the last; the caller opens
  them with ``snapshot.open_body``, which checks them before use.
- **Tokens** are stored only as the SHA-256 of the secret (``TokenRecord.hash``); the
  store never sees a token itself. Revocation is a timestamp, never a deletion.
- **Session secrets** (FAIR-2 seeds) live outside the append-only log; the first seed
  stored for a session is the only one it ever has.
- Every read sees every append acknowledged before it began, from any thread.
- **Several deciding processes** (a store that allows them: PostgreSQL): an append with
  a ``Pending.basis`` is written only if its session's last seq is still the basis's,
  checked in the append's transaction; else its outcome is ``stale`` and nothing is
  written. A store with one writer (SQLite) may ignore the basis.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
from typing import Callable, Iterable, Iterator, Protocol, Sequence, runtime_checkable

import msgspec

from conteur.events.game import GameState
from conteur.events.model import Event, Role
from conteur.server.store.chain import GENESIS, Entry, Row

__all__ = [
    "GENESIS", "Basis", "EventStore", "Outcome", "Pending", "Progress", "Row", "StoreError", "TokenRecord",
    "append_events",
]

class Basis:
    """Where a decision stands in its session's log, for a store shared by several
    deciding processes (optimistic concurrency): ``seq`` is the session's last seq the
    deciding state had folded, ``None`` while it is the result of another append of this
    process not yet committed (the store fills it in at COMMIT), ``BROKEN`` when that
    append was not written as decided (stale, replayed, failed). Mutable, shared between
    an append (``Pending.then``) and the next one decided on it (``Pending.basis``)."""

    __slots__ = ("seq",)
    BROKEN = -1

    def __init__(self, seq: int | None = None):
        self.seq = seq

    def __repr__(self) -> str:
        return f"Basis({self.seq})"


class Pending(msgspec.Struct, kw_only=True):
    """One command's worth of events to append atomically, or its rejection to record."""

    session: str
    events: Sequence[Event]
    actor: str = ""
    device: str = ""
    command_id: str = ""  # with ``device``, the idempotency key; "" for none
    code: str | None = None  # set for a rejected command: its events are the evidence
    message: str | None = None
    # Optimistic concurrency (a store that several processes decide on): the append is
    # written only if the session's last seq is still ``basis.seq``; else its outcome is
    # ``stale`` and nothing is written. ``then`` gets the session's last seq after it at
    # COMMIT. A store with one deciding process may ignore both.
    basis: Basis | None = None
    then: Basis | None = None


class Outcome(msgspec.Struct, frozen=True, kw_only=True):
    """What a command came to: its seqs, or a rejection; ``replayed`` for a retry."""

    seqs: tuple[int, ...] = ()
    code: str | None = None
    message: str | None = None
    replayed: bool = False
    stale: bool = False  # not written: the session moved since ``Pending.basis`` (decide again)

    @property
    def rejected(self) -> bool:
        return self.code is not None


class TokenRecord(msgspec.Struct, frozen=True, kw_only=True):
    """One row of the tokens table: what a token allows, keyed by its digest."""

    hash: str  # SHA-256 hex of the token; the token itself is never stored
    role: Role
    character: str | None = None
    session: str | None = None  # None: every session of the chronicle
    name: str = ""
    # the digest of the join link this device credential was minted from, at the link's
    # first opening on a device (server/core/auth.py, ``Tokens.spend``); None for a link
    parent: str | None = None


class StoreError(Exception):
    """The store could not do what was asked (disk full, closed, bad file)."""


Progress = Callable[[int], object]  # called with the number of events just folded


@runtime_checkable
class EventStore(Protocol):
    """What the server, the audit and the CLI need of a store."""

    #: a fold of more events than this after the newest snapshot saves a new one
    snapshot_every: int
    #: seconds the serving path waits for the store before answering ``unavailable``
    #: (PostgreSQL's statement timeout; server/core/offload.py)
    deadline: float

    # -- appends -----------------------------------------------------------------------

    def submit(self, pending: Pending) -> concurrent.futures.Future[Outcome]:
        """Queues an append; the future resolves with its ``Outcome`` after COMMIT, or
        with ``StoreError``. Raises ``StoreError`` at once if the store is closed."""
        ...

    def submit_on(self, loop: asyncio.AbstractEventLoop, pending: Pending) -> asyncio.Future[Outcome]:
        """``submit`` for a caller on ``loop``: the future is resolved on that loop
        (every append of one commit in one wake-up of the loop)."""
        ...

    def append_sync(self, pending: Pending) -> Outcome:
        """``submit`` and wait for the commit."""
        ...

    async def append(self, pending: Pending) -> Outcome:
        """``submit_on`` the running loop and await the commit."""
        ...

    # -- idempotency -------------------------------------------------------------------

    def outcome_of(self, device: str, command_id: str, session: str | None = None) -> Outcome | None:
        """The stored outcome of the device's command (``replayed=True``), or None if it
        was never committed. With ``session`` the lookup is cheap (the command path);
        without it, any session (tools and tests)."""
        ...

    # -- the log -----------------------------------------------------------------------

    def head(self) -> int:
        """The last committed global seq; 0 for an empty log."""
        ...

    def sessions(self) -> list[str]:
        """Every session with at least one event, in the order of their first event."""
        ...

    def session_span(self, session: str) -> tuple[int, int] | None:
        """(first seq, last seq) of the session's events, or None if it has none."""
        ...

    def session_head(self, session: str, upto: int | None = None) -> int:
        """The session's last seq (at or before ``upto``, if given); 0 if none."""
        ...

    def read_after(self, session: str, after: int = 0, limit: int | None = None,
                   upto: int | None = None) -> list[Row]:
        """The session's rows with ``after < seq <= upto`` (``upto`` None: to its end),
        in seq order, at most ``limit`` of them."""
        ...

    def read_entries(self, session: str, after: int = 0, limit: int | None = None) -> list[Entry]:
        """``read_after`` without the chain's columns (``chain.Entry``): what the review
        reads, when it keeps no rows to verify."""
        ...

    def rows(self, after: int = 0, upto: int | None = None) -> Iterator[Row]:
        """Every row of every session with ``after < seq <= upto``, in seq order, hash
        columns included (what ``verify`` walks, and the hub fills holes from)."""
        ...

    def iter_events(self, session: str, after: int = 0, upto: int | None = None,
                    chunk: int = 20000) -> Iterator[tuple[int, list[Event]]]:
        """The session's decoded events with ``after < seq <= upto``, in chunks of at
        most ``chunk``: (the last seq of the chunk, its events)."""
        ...

    # -- state and snapshots -----------------------------------------------------------

    def latest_snapshot(self, session: str, at: int | None = None) -> tuple[int, GameState | None]:
        """(seq, state) of the session's newest readable snapshot at or before ``at``
        (None: any), or (0, None) when there is none."""
        ...

    def snapshot_head(self, session: str) -> int:
        """The seq of the session's newest snapshot of a version this conteur reads, 0 if
        none, without decoding it (to estimate what a fold will cost)."""
        ...

    def save_snapshot(self, session: str, seq: int, state: GameState, *, keep: int | None = None) -> None:
        """Stores ``state`` as the session's state at ``seq`` (replacing one at the same
        seq); with ``keep``, only the session's newest ``keep`` snapshots stay."""
        ...

    def save_views(self, session: str, seq: int, views: dict[str, bytes]) -> None:
        """Stores each of ``views`` (name -> bytes of the caller's: ``server/core/keep.py``)
        as the only one of ``(session, name)``, folded up to ``seq``, in one transaction.
        A cache like the state's snapshots: never part of the log, lost without harm. A
        store that cannot keep them (a role without the table) does nothing."""
        ...

    def load_view(self, session: str, view: str) -> tuple[int, bytes] | None:
        """(seq, data) of the view's stored snapshot, or None."""
        ...

    def load_state(self, session: str, at: int | None = None, *, use_snapshots: bool = True,
                   progress: Progress | None = None) -> GameState:
        """The session's folded state at ``at`` (None: its end), ``head`` set to the last
        seq folded: the newest snapshot at or before it plus the events after (without
        ``use_snapshots``: every event from the first). Folding to the end with snapshots,
        it saves one when it folded ``snapshot_every`` events or more. ``progress`` is
        called with the number of events of each chunk folded."""
        ...

    def load_states(self, sessions: Sequence[str] | None = None, *,
                    use_snapshots: bool = True, workers: int | None = None) -> dict[str, GameState]:
        """``load_state`` for many sessions (None: all) at once, as the server's start-up
        needs them; an implementation may fold in ``workers`` processes."""
        ...

    # -- tokens --------------------------------------------------------------------------

    def add_tokens(self, records: Sequence[TokenRecord]) -> None:
        """Stores the records in one transaction, stamped with the time: all or none;
        ``StoreError`` if a digest is already stored (nothing of the call is kept)."""
        ...

    def token(self, digest: str) -> TokenRecord | None:
        """The record of this digest if it exists and is not revoked. Read from storage
        each time: another process on the same store may have revoked it."""
        ...

    def revoke_tokens(self, *, session: str, character: str) -> list[str]:
        """Revokes (stamps, never deletes) every unrevoked player token of ``character``
        valid in ``session`` (bound to it, or to every session); returns their digests."""
        ...

    def revoked_tokens(self) -> list[str]:
        """The digests of every revoked token, whoever revoked them."""
        ...

    def live_tokens(self, session: str | None = None) -> list[TokenRecord]:
        """Every unrevoked token (valid in ``session``: bound to it or to every session),
        any role, in the order they were added: the storyteller's list of devices."""
        ...

    def revoke_digests(self, digests: Sequence[str]) -> list[str]:
        """Revokes (stamps, never deletes) these tokens whatever their role; returns the
        digests of those that were live (each is revoked once)."""
        ...

    def count_tokens(self, role: Role | None = None) -> int:
        """How many unrevoked tokens there are (of ``role``, if given)."""
        ...

    # -- session secrets -----------------------------------------------------------------

    def secret(self, session: str) -> bytes | None:
        """The session's secret seed, or None if it has none yet."""
        ...

    def create_secret(self, session: str, seed: bytes) -> bytes:
        """Stores ``seed`` as the session's secret unless it has one already; returns the
        one it has now (the first stored always wins, even between processes)."""
        ...

    # -- life ----------------------------------------------------------------------------

    def trouble(self) -> str | None:
        """Why the store cannot write now (its database not answering, unreachable, its
        hold lost), or None; from what the store last saw, never waiting for it."""
        ...

    def close(self) -> None:
        """Waits for the appends already queued, then releases everything; idempotent.
        Appends after ``close`` raise ``StoreError``."""
        ...

    def __enter__(self) -> EventStore: ...

    def __exit__(self, *exc: object) -> None: ...


def append_events(store: EventStore, session: str, events: Iterable[Event], **kwargs) -> Outcome:
    """Appends one command's worth of events and waits for the commit (tools and tests)."""
    return store.append_sync(Pending(session=session, events=list(events), **kwargs))
