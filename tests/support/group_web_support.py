"""The four phones' group venue the browser tests of group challenges share: Anna,
Bruno, Clara and Dora in one MET session (tests/support/group_support.py), a storyteller
and a wall, on a real server."""

from __future__ import annotations

import pytest

from conteur.server.core.auth import Tokens
from conteur.server.core.service import Chronicle
from conteur.server.store.sqlite import SQLiteStore
from tests.support.client_support import events_of_type, served
from tests.support.group_support import DEFENDERS, open_group_session
from tests.support.web_support import Device

SID = "brawl"


@pytest.fixture
def brawl(tmp_path):
    db = str(tmp_path / "brawl.db")
    with SQLiteStore(db) as store:
        open_group_session(Chronicle(store), SID)
        tokens = Tokens(store)
        links = {who: tokens.issue("player", character=who, session=SID) for who in ("anna",) + DEFENDERS}
        links["storyteller"] = tokens.issue("storyteller", session=SID, name="Morgane")
        links["wall"] = tokens.issue("observer", session=SID, name="Wall")
    with served(db) as server:
        yield server, db, links


def wait_events(device: Device, db: str, kind: str, n: int) -> list[dict]:
    """The first ``n`` events ``kind`` in the log, once the device has folded them."""
    device.page.wait_for_function(
        "([kind, n]) => (window.conteur.vm.log || []).filter((l) => l.event && l.event.type === kind).length >= n",
        arg=[kind, n])
    return events_of_type(db, kind)[:n]
