"""Folding a session's stored events into its state: the same loop for every store."""

from __future__ import annotations

import gc
from typing import Iterable

from conteur.events import game
from conteur.events.game import GameState
from conteur.server.store.interface import Progress


def fold_chunks(start: int, state: GameState | None, chunks: Iterable[tuple],
                progress: Progress | None = None) -> tuple[GameState, int]:
    """(the state after the chunks, ``head`` set to their last seq or ``start``; how many
    events were folded), from a snapshot ``(start, state)`` or from nothing. A chunk is
    ``(last seq, events)``, or ``(last seq, events, draw summaries or None)``."""
    replay = game.Replay(state)
    folded = 0
    head = start
    # the fold makes millions of short-lived containers and no cycles: the cyclic GC
    # would only walk the growing state over and over
    paused = gc.isenabled()
    gc.disable()
    try:
        for head, events, *summaries in chunks:
            # a store's chunk may come with its events' draw summaries (sqlite._fold_chunks)
            replay.feed(events, *summaries)
            folded += len(events)
            if progress:
                progress(len(events))
    finally:
        if paused:
            gc.enable()
    return replay.state(head=head), folded
