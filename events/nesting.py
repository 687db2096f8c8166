"""The nesting-depth limit, checked on the raw bytes before any JSON decoding.

msgspec decodes recursively: a 2 KB frame of ``[[[[...`` a thousand deep raises a
RecursionError out of the decoder (a websocket closed with 4500, an HTTP 500). No valid
frame or body is deeper than a handful of levels (a hello holding an event holding a sheet
is 6), so anything deeper than ``MAX_DEPTH`` is refused unread (docs/protocol.md, "Bounds").
"""

from __future__ import annotations

import re

MAX_DEPTH = 32

# a whole JSON string (its brackets do not count) or one bracket; a lone quote is an
# unterminated string: the rest is not JSON, and the decoder will say so
_STR = re.compile(r'"(?:[^"\\]|\\.)*"|[\[\]{}]|"', re.S)
_BYTES = re.compile(rb'"(?:[^"\\]|\\.)*"|[\[\]{}]|"', re.S)
_OPEN_STR, _CLOSE_STR = frozenset("[{"), frozenset("]}")
_OPEN_BYTES, _CLOSE_BYTES = frozenset(b"[{"), frozenset(b"]}")


def too_deep(data: str | bytes, limit: int = MAX_DEPTH) -> bool:
    """Whether ``data`` nests arrays and objects deeper than ``limit`` (strings skipped)."""
    text = isinstance(data, str)
    brackets = data.count("[") + data.count("{") if text else data.count(b"[") + data.count(b"{")
    if brackets <= limit:
        return False  # the common case, decided by two C-speed counts
    opening, closing = (_OPEN_STR, _CLOSE_STR) if text else (_OPEN_BYTES, _CLOSE_BYTES)
    depth = 0
    for match in (_STR if text else _BYTES).finditer(data):
        token = match.group()
        first = token[0]
        if first in opening:
            depth += 1
            if depth > limit:
                return True
        elif first in closing:
            depth -= 1
        elif len(token) == 1:  # a lone quote: an unterminated string
            return False
    return False


def message(limit: int = MAX_DEPTH) -> str:
    return f"JSON nested deeper than {limit} levels: refused before decoding"
