"""A review's data: ``Item``, one event as the viewer may see it, and ``Review``, the
items of a session with the names, scenes and state they are read with; ``timeline``
filters the items (by character, challenge, scene, type).

Built by ``conteur.server.audit.review``; read by ``stories`` (challenges and disputes),
``scenes`` (the scene slider), ``checks`` (chain and fairness) and ``page`` (the page's
answers)."""

from __future__ import annotations

from typing import Any

import msgspec

from conteur.events import session
from conteur.events.game import GameState
from conteur.events.model import Actor
from conteur.events.narrate import Teller, sentence
from conteur.server.store.chain import Row


class Item(msgspec.Struct, kw_only=True, gc=False):
    """One event of the timeline, in the form the review's viewer may see."""

    seq: int
    at: str
    actor: str
    type: str
    event: Any  # the viewer's form of the event (an Event)
    characters: tuple[str, ...] = ()
    scene: str | None = None
    challenge: str | None = None  # a Mind's Eye Theatre challenge ("c3") or offline record ("o1")
    owners: frozenset[str] | None = None  # who saw it whole (None: everyone)
    # the others saw a sealed form (False: they saw nothing); None: not worked out, the
    # event is whole (a storyteller's review: ``forms`` of every event was a twentieth of
    # its build, for the few challenge pages that show who saw what)
    sealed: bool | None = False
    # The sentence is told when first read, not when the item is made: the first screen
    # shows 1,500 rows of a night's tens of thousands, and telling was a third of building
    # the review. ``teller`` holds the roster's names as they stood at this event.
    teller: Any = None
    told: str | None = None

    @property
    def text(self) -> str:
        told = self.told
        if told is None:
            told = self.told = sentence(self.event, self.teller)
        return told


class Review(msgspec.Struct, kw_only=True):
    session: str
    viewer: Actor
    lang: str
    items: list[Item]
    names: dict[str, str]  # character id -> name
    scenes: dict[str, str]  # scene id -> name, in order of opening
    state: GameState  # folded from the viewer's own events (the true state for storytellers)
    rows: list[Row]
    challenge_items: dict[str, list[Item]] = {}  # items by challenge id, in log order

    @property
    def teller(self) -> Teller:
        return Teller(self.names, self.lang, self.scenes)

    def by_challenge(self, challenge_id: str) -> list[Item]:
        return self.challenge_items.get(challenge_id, [])


_TIME_OUTS = (session.TimeOutCalled, session.TimeOutEnded)


_SESSION_WIDE = (session.TimeSkipped, session.SessionOpened, session.SessionClosed)


def session_wide(item: Item) -> bool:
    e = item.event
    return isinstance(e, _TIME_OUTS) and e.scope == "session" or isinstance(e, _SESSION_WIDE)


def matches(item: Item, *, character: str | None = None, challenge: str | None = None,
            scene: str | None = None, type: str | None = None) -> bool:
    if character and character not in item.characters:
        return False
    if challenge and item.challenge != challenge:
        return False
    if scene and item.scene != scene and not session_wide(item):
        return False  # a Time Out of the whole session stops every scene: it stays in
    if type and not (item.type == type or item.type.startswith(type.rstrip(".") + ".")):
        return False
    return True


def timeline(review: Review, **filters) -> list[Item]:
    """The items matching every filter given (character, challenge, scene, type; a type
    filter may be a module prefix such as ``met`` or ``offline``)."""
    return [i for i in review.items if matches(i, **filters)]
