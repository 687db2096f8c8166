"""Folding a session's stored events into its state: the same loop for every store."""

from __future__ import annotations

from typing import Iterable

from msgspec.structs import replace

from conteur.events import game
from conteur.events.game import GameState
from conteur.server.store.interface import Progress


def fold_chunks(start: int, state: GameState | None, chunks: Iterable[tuple[int, list]],
                progress: Progress | None = None) -> tuple[GameState, int]:
    """(the state after the chunks, ``head`` set to their last seq or ``start``; how many
    events were folded), from a snapshot ``(start, state)`` or from nothing. A chunk is
    ``(last seq, events)``, folded by ``game.fold``."""
    folded = 0
    head = start
    state = game.initial() if state is None else state
    for head, events in chunks:
        state = game.fold(events, state)
        folded += len(events)
        if progress:
            progress(len(events))
    return replace(state, head=head), folded

