"""Base types of the domain: events, commands, actors, draws, rule violations.

Schema evolution (stored rows live for years in a chronicle's database):

1. Every event and command class carries an explicit ``tag`` (``tag="met.bid_declared"``).
   The tag is what is stored in the ``type`` column and in the encoded data; renaming a
   class never orphans a stored row. A tag is never reused for another meaning.
2. A field added to an existing event gets a default, so rows written before it decode.
3. A stored field's type never changes; a different meaning is a new field or a new event.
4. Fields are never removed from a stored event; an unused one keeps its default.
5. Events are facts, in the past tense (``BidDeclared``); commands are imperatives
   (``DeclareBid``) with short wire tags (``bid``).

Events use ``gc=False``: a chronicle folds hundreds of thousands of them, and the cyclic
GC halves typed decoding speed otherwise (DESIGN, numbers). They hold no cycles.
"""

from __future__ import annotations

from typing import ClassVar, Literal, Protocol
from urllib.parse import quote

import msgspec


class Event(msgspec.Struct, frozen=True, kw_only=True, tag_field="type", gc=False):
    """A fact recorded in the log. Subclasses set ``tag=...`` explicitly.

    Visibility (DESIGN "Who sees what"): storytellers see every event whole. ``owners()``
    returns ``None`` for a public event, or the character ids that may see it whole; every
    other viewer (players of other characters, observers) gets ``redacted()``, which is a
    public form with the secret removed, or ``None`` to see nothing at all. Both are
    computed once per event, never once per socket.
    """

    def owners(self) -> frozenset[str] | None:
        return None

    def redacted(self) -> Event | None:
        return None


class Command(msgspec.Struct, frozen=True, kw_only=True, tag_field="type"):
    """An intention sent by a device. Subclasses set a short wire ``tag`` ("bid").

    ``storyteller_only`` commands are refused for players; ``play`` commands are refused
    for a player whose scene or session is frozen (TIME-5) or who is out of game (TIME-6).
    """

    storyteller_only: ClassVar[bool] = False
    play: ClassVar[bool] = True


Role = Literal["storyteller", "player", "observer"]


class Actor(msgspec.Struct, frozen=True, kw_only=True):
    """Who issues a command: the server fills it from the authenticated token."""

    role: Role
    character: str | None = None  # set for players: the only character they act for
    name: str = ""

    @property
    def is_storyteller(self) -> bool:
        return self.role == "storyteller"


STORYTELLER = Actor(role="storyteller", name="storyteller")


class RuleViolation(Exception):
    """A refused command. ``message`` is for the player to read, naming the rule."""

    def __init__(self, message: str, *, code: str = "rule", rule: str | None = None):
        super().__init__(message)
        self.message = message
        self.code = code  # rule | frozen | forbidden | not_found | invalid | out_of_game
        self.rule = rule


def refuse(message: str, rule: str, code: str = "rule") -> RuleViolation:
    """The one way a decider refuses a command: ``raise refuse(...)``. ``message`` is for
    the player, written whole (it cites the rule in parentheses where a player would look
    it up); ``rule`` lands in ``CommandRejected.rule``: the RULES.md number it applies
    (``MET-4``), or, for a refusal no game rule covers, what it guards: ``roles`` (who may
    send what), ``command`` (an unknown command), ``sheet`` (a sheet's shape), ``offline``
    (DESIGN "Offline devices"), ``max_player_bonus`` (the session option). ``code`` sorts
    refusals for clients: rule | frozen | forbidden | not_found | invalid | out_of_game."""
    return RuleViolation(message, code=code, rule=rule)


def unchanged(own, event, state):
    """The evolver of an event its ruleset records but whose part it leaves as it was (a
    comparison, a concession: what the next event settles)."""
    return own


class DrawRecord(msgspec.Struct, frozen=True, kw_only=True, gc=False, array_like=True):
    """One random draw as recorded in its event (FAIR-1): replay folds it, never redraws.

    ``stream`` names the draw's counter stream (``stream_name``) and ``counter`` its
    position in that stream; records from before streams have ``stream == ""`` and count in
    the one session-wide counter. ``entropy`` is what the roller's client sent (or, for a
    hidden roll sent without any, a nonce the server drew). With the seed revealed at
    session close, ``events.fair`` recomputes ``face``.
    """

    counter: int
    sides: int
    face: int
    entropy: str = ""
    stream: str = ""


def _part(name: str) -> str:
    return quote(name, safe="")


def stream_name(actor: Actor, owners: frozenset[str] | None) -> str:
    """The draw stream of a roll made by ``actor`` for an event seen whole by ``owners``
    (``Event.owners()``: None for everyone, a set of characters, empty for storytellers
    only). One stream per drawer and audience, so that whoever sees one draw of a stream
    sees all its draws: no viewer meets a counter gap that counts draws hidden from it,
    and no other device (the operator's included) can move a player's place in its own
    streams. ``<drawer>/<audience>``: the drawer is the player's character, or ``*`` for
    the storyteller side; the audience ``open``, ``blind`` (storytellers only), or
    ``secret=`` and the characters who see it, sorted, comma-separated. Names are
    percent-escaped, so no two streams share a name."""
    drawer = "*" if actor.is_storyteller or not actor.character else _part(actor.character)
    if owners is None:
        audience = "open"
    elif not owners:
        audience = "blind"
    else:
        audience = "secret=" + ",".join(_part(o) for o in sorted(owners))
    return f"{drawer}/{audience}"


def sealed_stream_name(actor: Actor, roll: str) -> str:
    """The draw stream of one sealed roll (an ACT-12 initiator's, ``roll`` its id): a stream
    of its own, counters from 0. Drawn from the drawer's audience stream, its dice would
    move the counters of the drawer's next rolls there before the reveal (telling its
    bonus and malus); drawn from the roller's own secret stream, its counters, once
    revealed, would count the drawer's earlier secret draws. ``<drawer>/sealed=<roll>``."""
    drawer = "*" if actor.is_storyteller or not actor.character else _part(actor.character)
    return f"{drawer}/sealed={_part(roll)}"


def audience_key(owners: frozenset[str] | None) -> str:
    """A short name for who sees an event whole, for id spaces that must not count what
    a viewer cannot see: ``""`` for everyone, ``*`` for storytellers only, else the
    characters (percent-escaped, sorted, ``+``-joined)."""
    if owners is None:
        return ""
    if not owners:
        return "*"
    return "+".join(_part(o) for o in sorted(owners))


class Draws(Protocol):
    """A source of random faces handed to ``decide``; the domain has no randomness."""

    def roll(self, sides: int) -> DrawRecord:
        """Draw one face in 1..sides and return its record."""
        ...

    def stream(self, actor: Actor, owners: frozenset[str] | None, *, sealed: str = "") -> Draws:
        """The source for draws ``actor`` makes into an event seen whole by ``owners``
        (``stream_name``); with ``sealed`` (a roll id), the stream of that sealed roll
        alone (``sealed_stream_name``), drawn as hidden. Every decider that draws asks
        for its stream first."""
        ...


class ScriptedDraws:
    """Draws from a fixed list of faces, for tests and for storyteller-chosen results.

    Raises ``RuleViolation`` when the script runs out, so a test that under-specifies
    its draws fails loudly instead of drawing something made up.
    """

    def __init__(self, faces: list[int] | tuple[int, ...] = (), *, start: int = 0):
        self._faces = list(faces)
        self._counter = start

    def roll(self, sides: int) -> DrawRecord:
        if not self._faces:
            raise RuleViolation("no scripted draw left", code="invalid")
        face = self._faces.pop(0)
        if not 1 <= face <= sides:
            raise RuleViolation(f"scripted face {face} is not on a d{sides}", code="invalid")
        record = DrawRecord(counter=self._counter, sides=sides, face=face)
        self._counter += 1
        return record

    def stream(self, actor: Actor, owners: frozenset[str] | None, *, sealed: str = "") -> ScriptedDraws:
        return self  # scripted faces are no FAIR-2 draws: one counter, no stream names

    @property
    def left(self) -> int:
        return len(self._faces)


# ---------------------------------------------------------------- ids by audience


def sees(actor: Actor, owners: frozenset[str] | None) -> bool:
    """Whether ``actor`` sees whole an event whose ``owners()`` are ``owners``."""
    return owners is None or actor.is_storyteller or (actor.character is not None and actor.character in owners)


def scoped_id(prefix: str, owners: frozenset[str] | None, public_next: int,
              counters: dict[str, int]) -> str:
    """An id that counts only events with the same audience: ``r4`` for the
    fourth roll everyone sees, ``r2.jack`` for the second seen by Jack alone (and
    storytellers), ``r1.iris+jack``, ``r3.*`` (storytellers only). So no id tells a viewer
    how many events it cannot see happened. ``public_next`` is the next public number;
    ``counters`` the next number of each other audience (``audience_key``)."""
    key = audience_key(owners)
    if not key:
        return f"{prefix}{public_next}"
    return f"{prefix}{counters.get(key, 1)}.{key}"


def id_scope(value: str) -> tuple[int, str] | None:
    """(number, audience key) of a ``scoped_id``, None when ``value`` is none."""
    number, _, key = value[1:].partition(".")
    if not number.isdigit() or number.startswith("0"):
        return None
    return int(number), key


def id_counted(value: str, public_next: int, counters: dict[str, int]) -> tuple[int, dict[str, int]]:
    """(public_next, counters) once the event with id ``value`` is folded."""
    # ``id_scope`` written out: nearly every roll of a replay comes here
    digits, _, key = value[1:].partition(".")
    if not digits.isdigit() or digits.startswith("0"):
        return public_next, counters
    number = int(digits)
    if not key:
        return max(public_next, number + 1), counters
    if counters.get(key, 1) > number:
        return public_next, counters
    return public_next, {**counters, key: number + 1}


def id_known(actor: Actor, value: str, public_next: int, counters: dict[str, int]) -> bool:
    """Whether ``value`` names an event already handed out in an audience ``actor`` is
    part of: what a refusal may tell it about an id it names."""
    scope = id_scope(value)
    if scope is None:
        return False
    number, key = scope
    if key and not actor.is_storyteller and (actor.character is None or _part(actor.character) not in key.split("+")):
        return False
    return number < (public_next if not key else counters.get(key, 1))
