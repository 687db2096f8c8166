"""Folding a session's stored events into its state: the same loop for every store."""

from __future__ import annotations

import gc
from typing import Iterable

from conteur.events import game
from conteur.events.game import GameState
from conteur.events.model import Event
from conteur.server.store.interface import Progress


def fold_chunks(start: int, state: GameState | None, chunks: Iterable[tuple[int, list[Event]]],
                progress: Progress | None = None) -> tuple[GameState, int]:
    """(the state after the chunks, ``head`` set to their last seq or ``start``; how many
    events were folded), from a snapshot ``(start, state)`` or from nothing."""
    replay = game.Replay(state)
    folded = 0
    head = start
    # the fold makes millions of short-lived containers and no cycles: the cyclic GC
    # would only walk the growing state over and over
    paused = gc.isenabled()
    gc.disable()
    try:
        for head, events in chunks:
            replay.feed(events)
            folded += len(events)
            if progress:
                progress(len(events))
    finally:
        if paused:
            gc.enable()
    return replay.state(head=head), folded
