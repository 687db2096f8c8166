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


class DrawRecord(msgspec.Struct, frozen=True, kw_only=True, gc=False, array_like=True):
    """One random draw as recorded in its event (FAIR-1): replay folds it, never redraws.

    ``counter`` is the session's draw counter, ``entropy`` what the roller's client sent;
    with the seed revealed at session close, ``events.fair`` recomputes ``face``.
    """

    counter: int
    sides: int
    face: int
    entropy: str = ""


class Draws(Protocol):
    """A source of random faces handed to ``decide``; the domain has no randomness."""

    def roll(self, sides: int) -> DrawRecord:
        """Draw one face in 1..sides and return its record."""
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

    @property
    def left(self) -> int:
        return len(self._faces)


NO_DRAWS = ScriptedDraws()
