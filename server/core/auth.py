"""Tokens: who a device is, and what it may do.

A token is a random string shown once (at ``conteur init``, in the demo, on a join sheet)
and stored only as its SHA-256, in the store beside the chronicle's events
(``EventStore.add_tokens``): a stolen database or backup gives no working token. A token maps to a ``Grant``: a role
(storyteller, player of one character, observer), optionally bound to one session. The
token travels only in the websocket ``hello`` frame or an ``Authorization: Bearer``
header, never in a URL the server logs (a join link carries it in the ``#fragment``).

Revoking tells ``Tokens.listeners`` (the hub) which grants died, so their live sockets
are closed at once; a revocation made by another process on the same file is found by
``revoked_among``, which the hub asks on a timer.
"""

from __future__ import annotations

import hashlib
import secrets
from typing import Callable, Iterable

import msgspec

from conteur.events.model import Actor, Role
from conteur.server.store.interface import EventStore, TokenRecord

TOKEN_BYTES = 15  # 120 bits, 20 URL-safe characters: short enough for a small QR code


class Grant(msgspec.Struct, frozen=True, kw_only=True):
    """What a token allows. ``id`` is a prefix of the hash: it names the token in logs
    and keys the device's idempotency records without revealing the token."""

    id: str
    role: Role
    character: str | None = None
    session: str | None = None  # None: every session of the chronicle
    name: str = ""
    device: bool = False  # a device's own credential, minted from a join link (``spend``)

    @property
    def actor(self) -> Actor:
        default = self.character or self.role
        return Actor(role=self.role, character=self.character, name=self.name or default)

    def allows(self, session: str) -> bool:
        return self.session is None or self.session == session


def digest(token: str) -> str:
    return hashlib.sha256(token.encode("utf-8")).hexdigest()


def grant_id(key: str) -> str:
    """The id of the grant of the token whose digest is ``key``."""
    return key[:12]


def new_token() -> str:
    """A url-safe secret that never begins with "-", so `conteur export --as TOKEN` and
    every other command line take it as a value, not as an option."""
    while True:
        token = secrets.token_urlsafe(TOKEN_BYTES)
        if not token.startswith("-"):
            return token


class Tokens:
    """The chronicle's tokens, shared by every process that opens its store."""

    def __init__(self, store: EventStore):
        self._store = store
        # called with the ids of the grants just revoked, from the revoking thread
        self.listeners: list[Callable[[frozenset[str]], None]] = []
        # grant ids revoked because their link opened another device (their sockets are
        # told so, not "revoked"); ids are 48 bits of a digest: never reused
        self.replaced: set[str] = set()

    def issue(self, role: Role, *, character: str | None = None, session: str | None = None,
              name: str = "") -> str:
        """A new token, returned once; only its hash is kept."""
        return self.issue_many([(role, character, session, name)])[0]

    def issue_many(self, grants: list[tuple[Role, str | None, str | None, str]]) -> list[str]:
        """Tokens for (role, character, session, name) each, in one transaction."""
        records, tokens = [], []
        for role, character, session, name in grants:
            if role == "player" and not character:
                raise ValueError("a player token is for one character")
            token = new_token()
            tokens.append(token)
            records.append(TokenRecord(hash=digest(token), role=role, character=character,
                                       session=session, name=name))
        self._store.add_tokens(records)
        return tokens

    def check(self, token: str | None) -> Grant | None:
        """The token's grant, or None if unknown or revoked.

        Read from the store every time, never from memory: another process on the same
        file (``conteur init``, a second server, a script) may have revoked it, and a
        lost phone must stop working at its next hello or request, not at the next
        restart. It is one primary-key lookup, and only ``hello`` and HTTP requests ask
        (a socket's commands ride on the grant its hello got, until the hub drops the
        socket of a revoked grant)."""
        if not token or len(token) > 256:
            return None
        key = digest(token)
        record = self._store.token(key)
        if record is None:
            return None
        return Grant(id=grant_id(key), role=record.role, character=record.character,
                     session=record.session, name=record.name, device=record.parent is not None)

    def spend(self, link: str, grant: Grant) -> tuple[str, Grant]:
        """What a player's join link turns into when a device opens it to keep it: a new
        token for this device alone (same role, character, session and name), returned
        once; the devices the same link opened before are revoked (``replaced``), so a
        link opens one phone at a time and the phone it leaves is told. ``link`` is the
        link's digest."""
        token = new_token()
        record = TokenRecord(hash=digest(token), role=grant.role, character=grant.character,
                             session=grant.session, name=grant.name, parent=link)
        self._store.add_tokens([record])
        before = [r.hash for r in self._store.live_tokens() if r.parent == link and r.hash != record.hash]
        if before:
            self.replaced.update(grant_id(key) for key in before)
            self._revoked(self._store.revoke_digests(before))
        return token, Grant(id=grant_id(record.hash), role=grant.role, character=grant.character,
                            session=grant.session, name=grant.name, device=True)

    def by_id(self, gid: str) -> tuple[bytes, Grant] | None:
        """The channel's pre-shared key (the token's digest) and grant of the live token
        whose grant id is ``gid`` (events/channel.py): how a device proves its token
        without sending it. Read from the store at each socket, as ``check`` is."""
        if not gid or len(gid) > 64:
            return None
        for r in self._store.live_tokens():
            if grant_id(r.hash) == gid:
                return bytes.fromhex(r.hash), Grant(id=gid, role=r.role, character=r.character,
                                                    session=r.session, name=r.name,
                                                    device=r.parent is not None)
        return None

    def revoked_key(self, gid: str) -> bytes | None:
        """The digest of the revoked token whose grant id is ``gid``: its channel can still
        be keyed, so its device is told "revoked" through it, not merely refused."""
        for key in self._store.revoked_tokens():
            if grant_id(key) == gid:
                return bytes.fromhex(key)
        return None

    def revoke(self, *, session: str, character: str) -> int:
        """Revokes every player token of one character (a lost phone, a reprinted sheet);
        the sockets they opened are closed by the listeners. Returns how many."""
        return self._revoked(self._store.revoke_tokens(session=session, character=character))

    def devices(self, session: str | None = None) -> list[Grant]:
        """Every live grant (valid in ``session``, if given): each token a device holds,
        storytellers' and observers' included, in the order they were issued."""
        return [Grant(id=grant_id(r.hash), role=r.role, character=r.character, session=r.session,
                      name=r.name) for r in self._store.live_tokens(session)]

    def revoke_grants(self, grants: Iterable[str], *, session: str | None = None) -> int:
        """Revokes the live tokens of these grant ids (any role; only those valid in
        ``session``, if given); their sockets are closed by the listeners. Returns how many."""
        wanted = set(grants)
        keys = [r.hash for r in self._store.live_tokens(session) if grant_id(r.hash) in wanted]
        return self._revoked(self._store.revoke_digests(keys))

    def revoke_role(self, role: Role, *, session: str | None = None) -> int:
        """Revokes every live token of ``role`` (valid in ``session``, if given)."""
        keys = [r.hash for r in self._store.live_tokens(session) if r.role == role]
        return self._revoked(self._store.revoke_digests(keys))

    def _revoked(self, keys: list[str]) -> int:
        if keys:
            revoked = frozenset(grant_id(key) for key in keys)
            for listener in tuple(self.listeners):
                listener(revoked)
        return len(keys)

    def revoked_among(self, grants: Iterable[str]) -> frozenset[str]:
        """Which of these grant ids are revoked now, whoever revoked them (another
        process on the same file tells no listener). One read of the revoked rows:
        a venue revokes a handful of tokens an evening."""
        wanted = set(grants)
        if not wanted:
            return frozenset()
        return frozenset(gid for key in self._store.revoked_tokens() if (gid := grant_id(key)) in wanted)

    def count(self, role: Role | None = None) -> int:
        return self._store.count_tokens(role)
