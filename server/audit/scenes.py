"""The review's scene slider: a scene as it stood at each of its events (where each
character was, the challenges under way), and the whole state at a seq."""

from __future__ import annotations

import msgspec

from conteur.events import game
from conteur.events.game import GameState
from conteur.server.audit.timeline import Item, Review, matches


class SceneView(msgspec.Struct, kw_only=True):
    seq: int
    at: str
    text: str
    name: str
    open: bool
    frozen: bool  # the scene's own Time Out, or the whole session's
    turn: int
    game_seconds: int
    characters: list[dict]
    challenges: list[dict]


RECENT = 8  # challenges shown with each step of the slider


def _scene_view(state: GameState, scene_id: str, item: Item, names: dict[str, str],
                recent: list[str]) -> SceneView:
    s = state.session
    scene = s.scenes.get(scene_id)
    present = [c for c in s.characters.values() if c.scene == scene_id]
    challenges = []
    for ch in (state.met.get(cid) for cid in recent):
        if ch is not None:
            challenges.append({
                "id": ch.id, "kind": ch.kind, "initiator": names.get(ch.initiator, ch.initiator),
                "defender": names.get(ch.defender, ch.defender), "attribute": ch.attribute, "status": ch.status,
                "round": ch.round, "throws": {names.get(k, k): v for k, v in ch.throws.items()},
                "bids": {names.get(k, k): v for k, v in ch.bids.items()},
                "winner": names.get(ch.winner, ch.winner) if ch.winner else None, "reason": ch.reason,
            })
    return SceneView(
        seq=item.seq, at=item.at, text=item.text, name=scene.name if scene else scene_id,
        open=bool(scene and scene.open), frozen=bool(s.frozen or s.venue_frozen or (scene and scene.frozen)), turn=s.turn,
        game_seconds=s.game_seconds,
        characters=[{"id": c.id, "name": c.name, "out_of_game": c.out_of_game, "no_sheet": c.no_sheet}
                    for c in present],
        challenges=challenges,
    )


def _walk_scene(review: Review, scene_id: str, upto: int | None = None):
    """Yields (item, state, recent challenge ids) after each event of the scene."""
    state = game.initial()
    recent: list[str] = []  # the scene's latest challenges: a long evening stays linear
    for item in review.items:
        if upto is not None and item.seq > upto:
            return
        state = game.evolve(state, item.event)
        if matches(item, scene=scene_id):
            if item.challenge and item.challenge.startswith("c"):
                if item.challenge in recent:
                    recent.remove(item.challenge)
                recent = (recent + [item.challenge])[-RECENT:]
            yield item, state, recent


def scene_steps(review: Review, scene_id: str) -> list[SceneView]:
    """The scene's state after each event that concerns it, in order: the slider.

    Folded from the viewer's own events, so a player's slider holds no sealed throw."""
    return [_scene_view(state, scene_id, item, review.names, recent)
            for item, state, recent in _walk_scene(review, scene_id)]


class StepRef(msgspec.Struct, frozen=True, kw_only=True):
    seq: int
    at: str
    text: str


def scene_index(review: Review, scene_id: str) -> list[StepRef]:
    """The slider's stops without their states (a long evening has thousands)."""
    return [StepRef(seq=i.seq, at=i.at, text=i.text) for i in review.items if matches(i, scene=scene_id)]


def scene_at(review: Review, scene_id: str, seq: int) -> SceneView | None:
    """The scene's state at its last step at or before ``seq``; None before its first."""
    last = None
    for item, state, recent in _walk_scene(review, scene_id, upto=seq):
        last = (item, state, list(recent))
    if last is None:
        return None
    item, state, recent = last  # states are immutable: the one yielded is still that step's
    return _scene_view(state, scene_id, item, review.names, recent)


def state_at(review: Review, seq: int) -> GameState:
    """The state folded from the viewer's events up to ``seq`` (inclusive)."""
    state = game.fold(i.event for i in review.items if i.seq <= seq)
    return msgspec.structs.replace(state, head=max((i.seq for i in review.items if i.seq <= seq), default=0))
