"""What the revocation tests share: a session with Anna and Bruno, a reprint of the join
sheet, and how a revoked socket closed."""

from __future__ import annotations

import re

import httpx
import pytest

from conteur.server.testing import Device, Venue


CHARACTERS = [{"type": "open_session", "name": "Night"}] + [
    {"type": "add_character", "character": c, "name": c.title(),
     "sheet": {"kind": "met", "physical": 6, "social": 3, "mental": 4}} for c in ("anna", "bruno")]
# a command whose event anna sees whole and bruno only sealed: her own throw
CHALLENGE = {"type": "challenge", "character": "bruno", "kind": "classic", "attribute": "physical",
             "defender": "anna"}
THROW = {"type": "throw", "character": "anna", "challenge": "c1", "round": 1, "choice": "rock"}


async def characters(venue: Venue) -> str:
    """Session s1 with Anna and Bruno; returns the storyteller's token."""
    storyteller = venue.token()
    async with Device(venue.ws_url, storyteller, "s1") as st:
        for command in CHARACTERS:
            assert (await st.command(command))["type"] == "ack"
    return storyteller


def reprint(url: str, storyteller: str, session: str, *characters: str) -> list[str]:
    """POSTs the join sheet with ``revoke_previous``; returns the new tokens it printed."""
    page = httpx.post(f"{url}/sessions/{session}/join-sheet",
                      headers={"Authorization": f"Bearer {storyteller}"},
                      json={"revoke_previous": True, "characters": list(characters)})
    assert page.status_code == 200, page.text
    return re.findall(r"#join=([A-Za-z0-9_-]+)", page.text)


async def closed_with(device: Device) -> tuple[int | None, str]:
    with pytest.raises(ConnectionError):
        await device.wait_for(lambda f: False)
    return device.close_code, device.ws.close_reason
