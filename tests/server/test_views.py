"""Who sees what (DESIGN): storytellers everything, a player its own secrets and the
public forms of others', an observer public forms only; redaction once per event."""

from __future__ import annotations

from typing import ClassVar

from msgspec.structs import replace

from conteur.events import met, session, v5, views
from conteur.events.game import CommandRejected
from conteur.events.model import Actor, DrawRecord, Event
from conteur.events.sheets import MetSheet

STORYTELLER = Actor(role="storyteller", name="st")
ANNA = Actor(role="player", character="anna", name="anna")
BRUNO = Actor(role="player", character="bruno", name="bruno")
WALL = Actor(role="observer", name="wall")

ADDED = session.CharacterAdded(character="anna", name="Anna", sheet=MetSheet(physical=6))
THROW = met.ThrowCommitted(character="anna", challenge="c1", round=1, choice="rock",
                           draws=(DrawRecord(counter=0, sides=3, face=1),))
BID = met.BidDeclared(character="anna", challenge="c1", round=1, value=6)
OPENED = session.SceneOpened(scene="hall", name="Hall")


def test_storytellers_see_every_event_whole():
    for event in (ADDED, THROW, BID, OPENED):
        assert views.view(event, STORYTELLER) is event


def test_a_player_sees_its_own_secrets_whole_and_others_sealed():
    assert views.view(THROW, ANNA) is THROW
    sealed = views.view(THROW, BRUNO)
    assert sealed.choice is None and sealed.draws == ()
    assert views.view(BID, BRUNO).value is None
    assert views.view(ADDED, BRUNO).sheet is None and views.view(ADDED, BRUNO).name == "Anna"


def test_an_observer_sees_only_public_forms():
    assert views.view(OPENED, WALL) is OPENED
    assert views.view(THROW, WALL).choice is None
    assert views.view(ADDED, WALL).sheet is None


def test_a_blind_roll_leaves_no_trace_for_players_and_a_secret_one_only_for_its_roller():
    event = _roll("blind")
    assert views.view(event, STORYTELLER) is event
    assert views.view(event, ANNA) is None and views.view(event, WALL) is None
    secret = _roll("secret")
    assert views.view(secret, ANNA) is secret
    assert views.view(secret, BRUNO) is None and views.view(secret, WALL) is None


def _roll(visibility: str) -> Event:
    """A real V5 roll event, built from its own decider so its fields stay current."""
    from conteur.events import game
    from conteur.events.model import ScriptedDraws
    from conteur.events.sheets import V5Sheet

    state = game.fold([
        session.SessionOpened(name="n"),
        session.CharacterAdded(character="anna", name="Anna",
                               sheet=V5Sheet(attributes={"wits": 2}, skills={"occult": 1}, hunger=0)),
    ])
    events = game.decide(state, v5.RollPool(character="anna", attribute="wits", skill="occult",
                                            visibility=visibility),
                         ScriptedDraws([6, 7, 8]), actor=STORYTELLER)
    (rolled,) = [e for e in events if isinstance(e, v5.PoolRolled)]
    return rolled


def test_a_rejected_command_is_for_its_sender_and_the_storytellers():
    rejected = CommandRejected(command_type="bid", code="rule", message="too high", character="anna")
    assert views.view(rejected, ANNA) is rejected
    assert views.view(rejected, STORYTELLER) is rejected
    assert views.view(rejected, BRUNO) is None and views.view(rejected, WALL) is None


class Counted(Event, frozen=True, kw_only=True, tag="test.counted"):
    calls: ClassVar[list[str]] = []
    character: str

    def owners(self):
        Counted.calls.append("owners")
        return frozenset((self.character,))

    def redacted(self):
        Counted.calls.append("redacted")
        return replace(self, character="?")


def test_forms_redact_once_and_pick_chooses_per_viewer_without_redacting_again():
    Counted.calls.clear()
    f = views.forms(Counted(character="anna"))
    picked = [views.pick(f, v) for v in (STORYTELLER, ANNA, BRUNO, WALL) * 25]
    assert Counted.calls == ["owners", "redacted"]
    assert [p.character for p in picked[:4]] == ["anna", "anna", "?", "?"]


def test_a_player_fold_holds_its_own_sheet_and_not_the_others():
    events = [session.SessionOpened(name="n"), ADDED,
              session.CharacterAdded(character="bruno", name="Bruno", sheet=MetSheet(physical=4))]
    mine = views.fold_view(events, ANNA).session.characters
    assert mine["anna"].sheet == MetSheet(physical=6) and mine["bruno"].sheet is None
    everything = views.fold_view(events, STORYTELLER).session.characters
    assert everything["bruno"].sheet == MetSheet(physical=4)
