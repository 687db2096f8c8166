"""Typed helpers for the commands a script or a storyteller's terminal sends most.

Each helper builds the rules engine's own command Struct (so a wrong field fails here,
at once), queues it durably and returns its id; ``await client.outcome(id)`` waits for
the ``ack`` or ``reject``. ``character`` defaults to the viewer's own character, and
``round`` to the challenge's current round in this viewer's folded state.
Every other command: ``client.command("tag", **fields)``.
"""

from __future__ import annotations

from typing import Any, Literal

import msgspec

from conteur.events import game, met, session, v5, action
from conteur.events.sheets import AnySheet

Choice = Literal["rock", "paper", "scissors", "bomb"]
Attribute = Literal["physical", "social", "mental"]
Scope = Literal["scene", "session"]


class Commands:
    """Mixed into ``Client``: needs ``send``, ``viewer`` and ``state``."""

    def send(self, command: Any, **kwargs: Any) -> str:  # pragma: no cover - Client's
        raise NotImplementedError

    # -- defaults ----------------------------------------------------------------------

    @property
    def character(self) -> str | None:
        viewer = getattr(self, "viewer", None)  # events.wire.Viewer, from the welcome frame
        return viewer.character if viewer is not None else None

    def _me(self, character: str | None) -> str:
        who = character or self.character
        if not who:
            raise ValueError("name the character: this viewer plays none")
        return who

    def _round(self, challenge: str, round: int | None) -> int:
        if round is not None:
            return round
        state = getattr(self, "state", None)
        found = state.met.challenges.get(challenge) if state is not None else None
        if found is None:
            raise ValueError(f"challenge {challenge!r} is not known here yet: give its round")
        if found.defenders:  # a group has no round of its own: its pairs' still throwing
            rounds = [p.round for pid in found.pairs if (p := state.met.challenges.get(pid)) is not None
                      and p.status == "throwing"]
            return min(rounds, default=found.round)
        return found.round

    def command(self, tag: str, **fields: Any) -> str:
        cls = game.COMMAND_BY_TAG.get(tag)
        if cls is None:
            raise ValueError(f"unknown command {tag!r}")
        return self.send(msgspec.convert({"type": tag, **fields}, cls))

    # -- Mind's Eye Theatre (MET) --------------------------------------------------------

    def challenge(self, defender: str | None, attribute: Attribute | None = None, *,
                  kind: str = "classic", character: str | None = None, **fields: Any) -> str:
        """``defenders=("bruno", "clara")`` instead of ``defender``: a group challenge (MET-1)."""
        return self.send(met.IssueChallenge(character=self._me(character), defender=defender,
                                            attribute=attribute, kind=kind, **fields))

    def throw(self, challenge: str, choice: Choice | None, *, round: int | None = None,
              character: str | None = None) -> str:
        """``choice=None`` lets the server draw (storytellers, for an antagonist)."""
        return self.send(met.Throw(character=self._me(character), challenge=challenge,
                                   round=self._round(challenge, round), choice=choice))

    def bid(self, challenge: str, value: int, *, round: int | None = None,
            character: str | None = None, abilities: tuple[str, ...] = ()) -> str:
        """``abilities``: this side's own that apply (MET-3), checked against its sheet."""
        return self.send(met.DeclareBid(character=self._me(character), challenge=challenge,
                                        round=self._round(challenge, round), value=value,
                                        abilities=tuple(abilities)))

    def retest(self, challenge: str, source: str, *, cancels: bool = False,
               character: str | None = None) -> str:
        return self.send(met.Retest(character=self._me(character), challenge=challenge,
                                    source=source, cancels=cancels))

    def overbid(self, challenge: str, value: int, *, character: str | None = None,
                abilities: tuple[str, ...] = ()) -> str:
        return self.send(met.Overbid(character=self._me(character), challenge=challenge, value=value,
                                     abilities=tuple(abilities)))

    def concede(self, challenge: str, *, character: str | None = None) -> str:
        return self.send(met.Concede(character=self._me(character), challenge=challenge))

    def accept(self, challenge: str, *, character: str | None = None) -> str:
        return self.send(met.Accept(character=self._me(character), challenge=challenge))

    def cancel_challenge(self, challenge: str, reason: str = "") -> str:
        return self.send(met.CancelChallenge(challenge=challenge, reason=reason))

    def overrule(self, challenge: str, winner: str, reason: str = "") -> str:
        return self.send(met.Overrule(challenge=challenge, winner=winner, reason=reason))

    # -- the session (TIME) --------------------------------------------------------------

    def freeze(self, scene: str | None = None) -> str:
        scope: Scope = "scene" if scene else "session"
        return self.send(session.Freeze(scope=scope, scene=scene))

    def resume(self, scene: str | None = None) -> str:
        scope: Scope = "scene" if scene else "session"
        return self.send(session.Resume(scope=scope, scene=scene))

    def open_scene(self, scene: str, name: str = "") -> str:
        return self.send(session.OpenScene(scene=scene, name=name))

    def join_scene(self, scene: str, *, character: str | None = None) -> str:
        return self.send(session.JoinScene(character=self._me(character), scene=scene))

    def next_turn(self, scene: str | None = None) -> str:
        return self.send(session.NextTurn(scene=scene))

    def skip_time(self, seconds: int, note: str = "") -> str:
        return self.send(session.SkipTime(seconds=seconds, note=note))

    def out_of_game(self, reason: str = "", *, character: str | None = None) -> str:
        return self.send(session.OutOfGame(character=self._me(character), reason=reason))

    def back_in_game(self, *, character: str | None = None) -> str:
        return self.send(session.BackInGame(character=self._me(character)))

    def amend_sheet(self, character: str, sheet: AnySheet | dict[str, Any], reason: str = "") -> str:
        """Storytellers: ``sheet`` is the whole new sheet (a Struct, or its JSON form with
        ``kind``), of the character's current kind; ``reason`` is for the review."""
        if isinstance(sheet, dict):
            sheet = msgspec.convert(sheet, AnySheet)  # a wrong field fails here, at once
        return self.send(session.AmendSheet(character=character, sheet=sheet, reason=reason))

    # -- dice (V5, ACT) ------------------------------------------------------------------

    def roll_pool(self, pool: int | None = None, *, difficulty: int = 1,
                  character: str | None = None, **fields: Any) -> str:
        return self.send(v5.RollPool(character=character or self.character, pool=pool,
                                     difficulty=difficulty, **fields))

    def rouse(self, *, character: str | None = None) -> str:
        return self.send(v5.RouseCheck(character=self._me(character)))

    def willpower_reroll(self, roll: str, *, strategy: str | None = "reroll_failures",
                         dice: tuple[int, ...] = (), character: str | None = None) -> str:
        return self.send(v5.WillpowerReroll(roll=roll, character=character or self.character,
                                            strategy=strategy, dice=dice))

    def set_hunger(self, character: str, hunger: int, reason: str = "") -> str:
        return self.send(v5.SetHunger(character=character, hunger=hunger, reason=reason))

    def roll_action(self, characteristic: str | None = None, difficulty: int | str | None = None, *,
                    character: str | None = None, **fields: Any) -> str:
        return self.send(action.RollAction(character=self._me(character), characteristic=characteristic,
                                           difficulty=difficulty, **fields))

    def apply_modifier(self, character: str, value: int, duration: int, unit: str = "turns",
                       reason: str = "") -> str:
        return self.send(action.ApplyModifier(character=character, value=value, duration=duration,
                                              unit=unit, reason=reason))
