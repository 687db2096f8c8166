"""Bounds on every integer a client sends (issue 13, Deliver 8; docs/protocol.md, "Bounds").

A 400-digit integer decodes as a Python int and then overflows a float, sizes a loop or
travels back to a JavaScript client that cannot hold it. Every integer field of a command
(and of the sheets commands carry) is one of these types, so the wire decoder answers
``invalid`` naming the field before any rule runs. The ranges are wide on purpose: inside
them the rules refuse what they refuse with their own message (a pool of 0 names V5-1).
"""

from __future__ import annotations

from typing import Annotated

from msgspec import Meta

MAX_COUNT = 1000  # dice, traits, bids, difficulties, bonuses, turns, rounds: far above play
MAX_SECONDS = 10**9  # game seconds (about 31 years), exact in a JavaScript number

Count = Annotated[int, Meta(ge=-MAX_COUNT, le=MAX_COUNT)]
# traits by name: the bound is on each value; Litestar's OpenAPI drops the Meta of a dict's
# values, so the schema says it here ("extra" is what its msgspec plugin copies), and a
# schema-valid sheet is never refused as out of bounds
CountMap = Annotated[dict[str, Count], Meta(extra_json_schema={"extra": {"additional_properties": {
    "type": "integer", "minimum": -MAX_COUNT, "maximum": MAX_COUNT}}})]
Seconds = Annotated[int, Meta(ge=-MAX_SECONDS, le=MAX_SECONDS)]
# dice by index: the same for a tuple's items, which Litestar's OpenAPI also drops
# (schemathesis sent -64464464 as a schema-valid index and got a 400)
CountTuple = Annotated[tuple[Count, ...], Meta(extra_json_schema={"extra": {"items": {
    "type": "integer", "minimum": -MAX_COUNT, "maximum": MAX_COUNT}}})]
# a number or a level's name (ACT-4 difficulty): Litestar keeps a union's bounds when it
# has two members and drops them with three, so the schema says them here
CountOrName = Annotated[Count | str | None, Meta(extra_json_schema={"extra": {
    "minimum": -MAX_COUNT, "maximum": MAX_COUNT}})]
