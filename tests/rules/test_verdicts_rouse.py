"""A Rouse check's verdict derived again (V5-5, V5-9): the Hunger it
started from is the character's, from its sheet when no roll has moved it yet, and the
Hunger after is the face's. This path went untested until a moved helper broke it
silently (the sheet lookup after the rulesets' redesign)."""

from __future__ import annotations

import msgspec
import pytest

from conteur.events import game
from conteur.events.session import CharacterAdded, SessionOpened
from conteur.events.sheets import V5Sheet
from conteur.events.testing import decide_after
from conteur.events.v5 import RouseCheck
from conteur.events.verdicts import Verdicts

GIVEN = [SessionOpened(name="night"),
         CharacterAdded(character="iris", name="Iris", sheet=V5Sheet(attributes={}, skills={}, hunger=2))]


@pytest.mark.parametrize("face", [3, 8])
def test_v5_9_a_rouse_check_from_the_sheets_hunger_verifies(face):
    (checked,) = decide_after(GIVEN, RouseCheck(character="iris"), draws=[face])
    assert checked.hunger_before == 2
    assert Verdicts().check(game.fold(GIVEN), checked) is None


def test_v5_5_a_forged_hunger_before_is_named():
    (checked,) = decide_after(GIVEN, RouseCheck(character="iris"), draws=[3])
    forged = msgspec.structs.replace(checked, hunger_before=1, hunger_after=2)
    message = Verdicts().check(game.fold(GIVEN), forged)
    assert message is not None and "hunger_before is 1" in message and "V5-5" in message


def test_v5_9_a_forged_hunger_after_is_named():
    (checked,) = decide_after(GIVEN, RouseCheck(character="iris"), draws=[3])
    forged = msgspec.structs.replace(checked, hunger_after=checked.hunger_before)
    message = Verdicts().check(game.fold(GIVEN), forged)
    assert message is not None and "hunger_after" in message and "V5-9" in message
