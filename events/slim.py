"""Replay-only decoding types: the hot kinds' events with only the fields their evolvers read.

A stored ``action.rolled`` is about 750 bytes (the dice, the D+/- faces, the notation, the
draw records) and its evolver reads a dozen of its fields; a ``v5.pool_rolled`` about 540.
Decoding events whole was a third of a replay. A store's replay decodes these kinds into the
types below instead: same tag, same field types and defaults, in the stored order (msgspec
finds each key at its first look), the other fields skipped unread by msgspec (the stored
bytes are untouched); the MET round's kinds too (a reveal's dict of throws left unread).
Each comes twice: with its draw records (``COUNTED``: 10-30% less decode than whole) and
without them (``SUMMED``: most of a roll's decode is its draw records), the replay then fed
the event's stored draw summary instead (``server/store/drawn.py``). ``game`` folds them
through the same evolvers and replay steps as the whole events (``game._STEPS``);
``tests/test_replay_fold.py`` proves the states equal on random nights and on every kind.

Only a replay of the stored log may use them: nothing else should ever see a slim event.
An evolver that keeps its event whole in the state cannot have one: ``action.begun`` (kept
in ``pending``) is not slimmed, and a sealed opposed ``action.rolled`` (kept in
``waiting``) is decoded slim, found (``kept``) and decoded again whole, alone, by its reader
(``codec.FoldDecoder``).
"""

from __future__ import annotations

import msgspec

from conteur.events import action, met, v5
from conteur.events.model import Event


def _slim(full: type[Event], names: tuple[str, ...], suffix: str = "Read") -> type:
    """``full`` with only ``names``: each with ``full``'s own type and default."""
    fields = {f.name: f for f in msgspec.structs.fields(full)}
    missing = set(names) - fields.keys()
    if missing:
        raise KeyError(f"{full.__name__} has no field {sorted(missing)}")
    spec = []
    # in the order the store writes them (``full``'s): msgspec looks a key up among the
    # fields from the one after the last found, so each is found at its first look
    for name, f in fields.items():
        if name not in names:
            continue
        if f.default is not msgspec.NODEFAULT:
            spec.append((name, f.type, f.default))
        elif f.default_factory is not msgspec.NODEFAULT:
            spec.append((name, f.type, msgspec.field(default_factory=f.default_factory)))
        else:
            spec.append((name, f.type))
    config = full.__struct_config__
    return msgspec.defstruct(f"{full.__name__}{suffix}", spec, module=__name__,
                             tag=config.tag, tag_field=config.tag_field, frozen=True, kw_only=True,
                             gc=False)


# event type -> the fields its evolvers (game.HANDLERS), its replay step
# (``replay_steps.STEPS``) and game.count_draws read
READ: dict[type[Event], tuple[str, ...]] = {
    action.ActionRolled: ("roll", "character", "ps", "opponent", "against", "visibility", "sealed",
                          "cooperation", "cooperation_success", "simultaneous", "together", "turn",
                          "option", "draws"),
    v5.PoolRolled: ("roll", "character", "normal", "hunger", "difficulty", "visibility", "draws"),
    v5.RouseChecked: ("roll", "character", "hunger_after", "draws"),
    v5.WillpowerRerolled: ("roll", "character", "normal", "visibility", "draws"),
    met.ThrowCommitted: ("challenge", "character", "choice", "draws"),
    # the MET kinds of every round: a dict of throws, a reason, abilities left unread
    met.ThrowsRevealed: ("challenge", "winner"),
    met.BidDeclared: ("challenge", "character", "value"),
    met.RoundWon: ("challenge", "winner", "loser", "by"),
    met.RoundStarted: ("challenge", "round", "test"),
    met.RetestTaken: ("challenge", "character", "round"),
    met.ChallengeResolved: ("challenge", "winner", "loser", "reason"),
}

# whole type -> its slim type with the draw records, which ``game.count_draws`` counts: the
# replay of a chunk whose stored draw summaries do not match its rows (``server/store/drawn.py``)
COUNTED: dict[type[Event], type] = {full: _slim(full, names) for full, names in READ.items()}
# whole type -> its slim type without the draw records (the most part of a roll's decode):
# the replay of a chunk whose stored draw summaries match its rows, fed beside it
SUMMED: dict[type[Event], type] = {
    full: _slim(full, tuple(n for n in names if n != "draws"), suffix="Summed")
    for full, names in READ.items()}

# slim type -> the whole type it stands for
SLIM: dict[type, type[Event]] = {slim: full for kinds in (COUNTED, SUMMED) for full, slim in kinds.items()}


def kept_kind(summed: bool) -> type:
    """The slim type of the one kind an evolver may keep whole in the state: a sealed
    opposed ``action.rolled`` (ACT-12: ``evolve_action_rolled`` keeps it in
    ``Rolled.rolled``), which a replay's reader decodes again whole (``codec.FoldDecoder``)."""
    return (SUMMED if summed else COUNTED)[action.ActionRolled]


def kept(event) -> bool:
    """Whether this slim ``action.rolled`` (``kept_kind``) stands for an event its evolver
    keeps whole."""
    return event.sealed and event.opponent is not None
