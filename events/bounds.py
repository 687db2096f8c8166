"""Bounds on every number and every text a client sends (docs/protocol.md, "Bounds").

A 400-digit integer decodes as a Python int and then overflows a float, sizes a loop or
travels back to a JavaScript client that cannot hold it. Every integer field of a command
(and of the sheets commands carry) is one of these types, so the wire decoder answers
``invalid`` naming the field before any rule runs. The ranges are wide on purpose: inside
them the rules refuse what they refuse with their own message (a pool of 0 names V5-1).

Every free-text field is one of the string types below for the same reason: a
9,900,000-character description is stored, folded and sent to every phone otherwise. The
decoder's refusal names the field and its limit (``Expected `str` of length <= 2000 - at
`$.command.description```). Events keep plain ``str``: old logs must still decode.
"""

from __future__ import annotations

from typing import Annotated

from msgspec import Meta

MAX_COUNT = 1000  # dice, traits, bids, difficulties, bonuses, turns, rounds: far above play
MAX_SECONDS = 10**9  # game seconds (about 31 years), exact in a JavaScript number
MAX_ID = 128  # a character, scene, challenge, roll or record id
MAX_NAME = 128  # a name, label, trait, ability, power or scene name
MAX_TEXT = 2000  # a description, reason, note or account: a paragraph, not a file
MAX_ITEMS = 100  # the entries of a list or a map of names (a sheet's traits)

Key = Annotated[str, Meta(max_length=MAX_ID)]
Name = Annotated[str, Meta(max_length=MAX_NAME)]
Text = Annotated[str, Meta(max_length=MAX_TEXT)]

Count = Annotated[int, Meta(ge=-MAX_COUNT, le=MAX_COUNT)]
# traits by name: the bound is on each value; Litestar's OpenAPI drops the Meta of a dict's
# values, so the schema says it here ("extra" is what its msgspec plugin copies), and a
# schema-valid sheet is never refused as out of bounds
CountMap = Annotated[dict[Name, Count], Meta(max_length=MAX_ITEMS, extra_json_schema={"extra": {"additional_properties": {
    "type": "integer", "minimum": -MAX_COUNT, "maximum": MAX_COUNT}}})]
Seconds = Annotated[int, Meta(ge=-MAX_SECONDS, le=MAX_SECONDS)]
# dice by index: the same for a tuple's items, which Litestar's OpenAPI also drops
# (schemathesis sent -64464464 as a schema-valid index and got a 400)
CountTuple = Annotated[tuple[Count, ...], Meta(max_length=MAX_ITEMS, extra_json_schema={"extra": {"items": {
    "type": "integer", "minimum": -MAX_COUNT, "maximum": MAX_COUNT}}})]
# a number or a level's name (ACT-4 difficulty): Litestar keeps a union's bounds when it
# has two members and drops them with three, so the schema says them here
CountOrName = Annotated[Count | Name | None, Meta(extra_json_schema={"extra": {
    "minimum": -MAX_COUNT, "maximum": MAX_COUNT}})]

# Litestar's OpenAPI drops the Meta of a tuple's items and of a dict's keys: said here
Names = Annotated[tuple[Name, ...], Meta(max_length=MAX_ITEMS, extra_json_schema={"extra": {
    "items": {"type": "string", "maxLength": MAX_NAME}}})]
NameMap = Annotated[dict[Key, Name], Meta(max_length=MAX_ITEMS, extra_json_schema={"extra": {
    "additional_properties": {"type": "string", "maxLength": MAX_NAME}}})]
