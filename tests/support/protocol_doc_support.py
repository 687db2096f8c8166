"""docs/protocol.md read by sections: shared by the tests that hold the document to the code."""

from __future__ import annotations

import re
from pathlib import Path

import msgspec

DOC = Path(__file__).resolve().parents[2] / "docs" / "protocol.md"
TEXT = DOC.read_text(encoding="utf-8")


def sections(level: str) -> dict[str, str]:
    """Heading tag -> the text under it, for headings like ``### `hello` ``."""
    pattern = re.compile(rf"^{level} `([a-z0-9_]+)`\s*$", re.M)
    found = list(pattern.finditer(TEXT))
    out = {}
    for match, following in zip(found, found[1:] + [None]):
        end = following.start() if following else len(TEXT)
        out[match.group(1)] = TEXT[match.end():end]
    return out


def example(body: str) -> bytes:
    match = re.search(r"```json\n(.*?)\n```", body, re.S)
    assert match, "no ```json example"
    return match.group(1).encode()


COMMANDS = sections("####")
FRAMES = sections("###")


SCHEMA = re.compile(r"```json-schema\n(.*?)\n```", re.S)


def schema_of(kind) -> dict:
    made = msgspec.json.schema(kind)
    found = made["$defs"][next(iter(made["$defs"]))] if "$defs" in made else made
    return {k: v for k, v in found.items() if k not in ("title", "description")}
