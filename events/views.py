"""What each viewer may see of an event (DESIGN "Who sees what").

Three view classes, whatever the number of devices:

- a storyteller sees every event whole;
- the player of character X sees an event whole when the event is public
  (``owners() is None``) or X is one of its owners, and its ``redacted()`` public form
  otherwise (which may be ``None``: the event is hidden from that player);
- an observer (a wall display) sees public events whole and the public form of the rest.

``forms(event)`` computes the whole and public forms once per event; ``pick`` then chooses
between them per viewer without touching the event again, so the server redacts once per
view class per event, never once per socket. The same functions serve the websocket
fan-out, resync, and the HTTP event and state queries.
"""

from __future__ import annotations

from typing import Generic, Iterable, TypeVar

import msgspec

from conteur.events import desk, game
from conteur.events.game import GameState
from conteur.events.model import Actor, Event

Viewer = Actor  # a viewer is whoever a token maps to: role and, for players, a character

T = TypeVar("T")


class Forms(msgspec.Struct, Generic[T], frozen=True, gc=False):
    """The forms of one event: ``whole`` for its owners and storytellers, ``public`` for
    everyone else (``None``: hidden). ``owners`` is ``None`` for a public event."""

    whole: T
    public: T | None
    owners: frozenset[str] | None


def forms(event: Event) -> Forms[Event]:
    owners = event.owners()
    if owners is None:
        return Forms(event, event, None)
    return Forms(event, event.redacted(), frozenset(owners))


def sees_whole(viewer: Viewer, owners: frozenset[str] | None) -> bool:
    if viewer.role == "storyteller" or owners is None:
        return True
    return viewer.role == "player" and viewer.character is not None and viewer.character in owners


def pick(f: Forms[T], viewer: Viewer) -> T | None:
    """The form ``viewer`` receives; works on encoded forms as well as on events."""
    return f.whole if sees_whole(viewer, f.owners) else f.public


def view(event: Event, viewer: Viewer) -> Event | None:
    return pick(forms(event), viewer)


# A call for a storyteller (events/desk.py) and what became of it: its caller receives
# them (its phone shows its call's state), yet they are the storytellers' desk, not the
# night's story: no record a player can read holds one, its caller's included (a player's
# review and exports: server/audit/review.py). A safety call must not come back to a
# player in a file passed around after the night.
STORYTELLERS_RECORD: frozenset[type[Event]] = frozenset(desk.CALL_EVENTS)


def in_record(event: Event, viewer: Viewer) -> bool:
    """Whether ``event``, in the form ``viewer`` receives, goes into that viewer's record
    (the review and the exports)."""
    return viewer.role == "storyteller" or type(event) not in STORYTELLERS_RECORD


def view_events(pairs: Iterable[tuple[int, Event]], viewer: Viewer) -> list[tuple[int, Event]]:
    """The (seq, event) pairs ``viewer`` may see, each in its form for that viewer."""
    out = []
    for seq, event in pairs:
        seen = view(event, viewer)
        if seen is not None:
            out.append((seq, seen))
    return out


def fold_view(events: Iterable[Event], viewer: Viewer, state: GameState | None = None) -> GameState:
    """The state a viewer can rebuild from what it was sent: its events, folded.

    A storyteller's is the true state. A player's lacks what it may not see (other
    characters' sheets, sealed throws and bids): that is the point.
    """
    state = game.initial() if state is None else state
    for event in events:
        seen = view(event, viewer)
        if seen is not None:
            state = game.evolve(state, seen)
    return state
