"""Walking msgspec types for the fields a client may send: what the bounds tests check."""

from __future__ import annotations

import msgspec


def leaves(kind, want: type, path=(), seen=frozenset(), keys: bool = False):
    """(path, info) for every leaf of type info ``want`` inside ``kind``: a dict's value is
    ``"*"`` in the path, a dict's key ``"*key"`` (with ``keys``), a tuple's item ``0``."""
    info = kind if isinstance(kind, msgspec.inspect.Type) else msgspec.inspect.type_info(kind)
    if isinstance(info, msgspec.inspect.Metadata):  # a dict of traits carries its schema note
        yield from leaves(info.type, want, path, seen, keys)
    elif isinstance(info, msgspec.inspect.StructType):
        if info.cls in seen:
            return
        for f in info.fields:
            yield from leaves(f.type, want, path + (f.encode_name,), seen | {info.cls}, keys)
    elif isinstance(info, want):
        yield path, info
    elif isinstance(info, msgspec.inspect.UnionType):
        for t in info.types:
            yield from leaves(t, want, path, seen, keys)
    elif isinstance(info, msgspec.inspect.DictType):
        if keys:
            yield from leaves(info.key_type, want, path + ("*key",), seen, keys)
        yield from leaves(info.value_type, want, path + ("*",), seen, keys)
    elif isinstance(info, (msgspec.inspect.VarTupleType, msgspec.inspect.ListType)):
        yield from leaves(info.item_type, want, path + (0,), seen, keys)
