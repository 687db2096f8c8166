"""The venue's clock. Events are stamped in UTC, and the log and its JSON Lines export
keep UTC (they are compared and verified); people read the time of the place where the
night is played: the server's own zone (the laptop at the venue), or ``CONTEUR_TZ`` (an
IANA name, e.g. ``Europe/Paris``) when the laptop's clock is set to another zone."""

from __future__ import annotations

import os
from datetime import datetime, timedelta, timezone, tzinfo
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError


def zone() -> tzinfo | None:
    """``CONTEUR_TZ`` when set and known, else None: the system's local zone."""
    name = os.environ.get("CONTEUR_TZ", "").strip()
    if not name:
        return None
    try:
        return ZoneInfo(name)
    except (ZoneInfoNotFoundError, ValueError):
        return None


def local(at: str) -> datetime | None:
    """The venue's wall-clock time of a stored UTC stamp; None for one that does not parse."""
    try:
        moment = datetime.fromisoformat(at.replace("Z", "+00:00"))
    except (ValueError, AttributeError):
        return None
    if moment.tzinfo is None:
        moment = moment.replace(tzinfo=timezone.utc)
    return moment.astimezone(zone())


def hhmm(at: str) -> str:
    moment = local(at)
    return moment.strftime("%H:%M") if moment else at


def stamp(at: str) -> str:
    """Date and time to the second, with the offset: for a spreadsheet's column."""
    moment = local(at)
    return moment.isoformat(timespec="seconds") if moment else at


def offset_label(at: str) -> str:
    """``UTC+02:00``: said beside local times, so a reader elsewhere can convert them."""
    moment = local(at)
    if moment is None:
        return "UTC"
    offset = moment.utcoffset() or timedelta(0)
    minutes = int(offset.total_seconds() // 60)
    sign = "+" if minutes >= 0 else "-"
    return f"UTC{sign}{abs(minutes) // 60:02d}:{abs(minutes) % 60:02d}"


def offset_minutes(at: str) -> int:
    moment = local(at)
    offset = moment.utcoffset() if moment else None
    return int(offset.total_seconds() // 60) if offset else 0
