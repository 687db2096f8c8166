"""Which address phones can reach: the machine's LAN addresses, and the base of join links.

A storyteller who opens the tablet through ``localhost`` (as the start-up text allows)
must still print join links a phone can open: the request's own host is used only when
it is not a loopback name; otherwise the first LAN address, with the request's scheme
and port. ``--public-url`` wins over both. Discovery is a plain function so that tests
(and ``conteur doctor``) can pass their own.
"""

from __future__ import annotations

import ipaddress
import socket
from typing import Callable
from urllib.parse import urlsplit

Discover = Callable[[], list[str]]


def lan_addresses() -> list[str]:
    """This machine's IPv4 addresses other devices may reach (no loopback; may be empty)."""
    found: list[str] = []
    probe = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    try:
        probe.connect(("10.255.255.255", 1))  # no packet is sent: this only picks a route
        found.append(probe.getsockname()[0])
    except OSError:
        pass
    finally:
        probe.close()
    try:
        for info in socket.getaddrinfo(socket.gethostname(), None, socket.AF_INET):
            found.append(info[4][0])
    except OSError:
        pass
    return [a for a in dict.fromkeys(found) if not is_loopback(a) and a != "0.0.0.0"]


def is_loopback(host: str) -> bool:
    host = host.strip("[]").lower()
    if host in ("localhost", "localhost.localdomain", "ip6-localhost") or host.endswith(".localhost"):
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def reachable_base(request_base: str, public_url: str = "", discover: Discover = lan_addresses) -> str:
    """The base URL of join links: ``public_url``, else the request's own base unless it
    names this machine's loopback, in which case the first LAN address (same scheme and
    port). Without any LAN address the request's base stays (only this machine can use it)."""
    if public_url:
        return public_url.rstrip("/")
    base = request_base.rstrip("/")
    parts = urlsplit(base)
    if not is_loopback(parts.hostname or ""):
        return base
    addresses = discover()
    if not addresses:
        return base
    host = addresses[0]
    if ":" in host:
        host = f"[{host}]"
    port = f":{parts.port}" if parts.port else ""
    return f"{parts.scheme}://{host}{port}{parts.path}"
