"""A countdown's sentence says whom it is for, as an announcement's does: a scene (by its
name), the whole venue, or nothing more for the session; its pause, resumption and
cancellation say it too (events/narrate.py, told word for word by client/web/narrate.js:
tests/web/test_differential.py)."""

from __future__ import annotations

import msgspec

from conteur.events import desk
from conteur.events.narrate import Teller, sentence

SCENES = {"cellar": "the Cellar"}


def _told(event, lang):
    return sentence(event, Teller({}, lang, SCENES))


def test_a_scene_countdown_names_its_scene_through_every_step():
    events = [desk.CountdownStarted(clock="rats", label="Rats", unit="turns", length=4, ends_turn=4,
                                    scope="scene", scene="cellar"),
              desk.CountdownPaused(clock="rats", remaining=3, scope="scene", scene="cellar"),
              desk.CountdownResumed(clock="rats", ends_turn=6, scope="scene", scene="cellar"),
              desk.CountdownCancelled(clock="rats", scope="scene", scene="cellar")]
    assert [_told(e, "en") for e in events] == [
        "Countdown Rats for the Cellar: 4 turns.", "Countdown rats for the Cellar paused.",
        "Countdown rats for the Cellar resumed.", "Countdown rats for the Cellar cancelled."]
    assert [_told(e, "fr") for e in events] == [
        "Compte à rebours Rats pour the Cellar : 4 tours.", "Compte à rebours rats pour the Cellar en pause.",
        "Compte à rebours rats pour the Cellar relancé.", "Compte à rebours rats pour the Cellar annulé."]


def test_the_venues_countdown_says_the_whole_venue_through_every_step():
    events = [desk.CountdownStarted(clock="midnight", label="Midnight", length=30, ends_at=1800.0, scope="venue"),
              desk.CountdownPaused(clock="midnight", remaining=600, scope="venue"),
              desk.CountdownCancelled(clock="midnight", scope="venue")]
    assert [_told(e, "en") for e in events] == [
        "Countdown Midnight for the whole venue: 30 min.", "Countdown midnight for the whole venue paused.",
        "Countdown midnight for the whole venue cancelled."]
    assert [_told(e, "fr") for e in events] == [
        "Compte à rebours Midnight pour tout le lieu : 30 min.", "Compte à rebours midnight pour tout le lieu en pause.",
        "Compte à rebours midnight pour tout le lieu annulé."]


def test_a_sessions_countdown_and_an_older_logs_read_as_before():
    old = msgspec.json.decode(b'{"type": "desk.countdown_paused", "clock": "prince", "remaining": 60}',
                              type=desk.CountdownPaused)
    assert _told(old, "en") == "Countdown prince paused."
    started = desk.CountdownStarted(clock="prince", label="The Prince", length=10, ends_at=600.0)
    assert _told(started, "en") == "Countdown The Prince: 10 min."
    assert _told(started, "fr") == "Compte à rebours The Prince : 10 min."
