"""What an eavesdropper on the venue's air reads of a recorded connection: HTTP requests
and answers (de-chunked, gunzipped), and websocket messages (unmasked, reassembled), as
anyone holding the hotspot's passphrase can read another phone's traffic. Fed with the
bytes ``client_support.Proxy`` records."""

from __future__ import annotations

import base64
import gzip
import hashlib
import json
import zlib

from msgspec import Struct


class Heard(Struct, kw_only=True):
    """One thing read off the air: an HTTP request or answer, or a websocket message."""

    kind: str  # "request", "response", "ws-up", "ws-down"
    head: str = ""  # request or status line and headers (HTTP)
    body: bytes = b""

    def text(self) -> str:
        return self.head + "\n" + self.body.decode("utf-8", "replace")

    @property
    def path(self) -> str:
        parts = self.head.split(" ", 2)
        return parts[1].split("?", 1)[0] if self.kind == "request" and len(parts) > 1 else ""

    def header(self, name: str) -> str | None:
        for line in self.head.split("\r\n")[1:]:
            key, _, value = line.partition(":")
            if key.strip().lower() == name:
                return value.strip()
        return None

    def json(self):
        return json.loads(self.body)


def _dechunk(data: bytes, pos: int) -> tuple[bytes, int]:
    body = bytearray()
    while True:
        end = data.index(b"\r\n", pos)
        size = int(data[pos:end].split(b";")[0], 16)
        pos = end + 2
        if size == 0:
            return bytes(body), data.index(b"\r\n", pos) + 2
        body += data[pos:pos + size]
        pos += size + 2


def _http(data: bytes, kind: str) -> tuple[list[Heard], bytes | None]:
    """The HTTP messages of one direction, and what follows a websocket upgrade."""
    out, pos = [], 0
    while pos < len(data):
        end = data.find(b"\r\n\r\n", pos)
        if end < 0:
            break
        head = data[pos:end].decode("latin-1")
        pos = end + 4
        heard = Heard(kind=kind, head=head)
        length = heard.header("content-length")
        if (heard.header("transfer-encoding") or "").lower() == "chunked":
            body, pos = _dechunk(data, pos)
        elif length is not None:
            body, pos = data[pos:pos + int(length)], pos + int(length)
        elif kind == "response" and not head.startswith("HTTP/1.1 101"):
            body, pos = data[pos:], len(data)
        else:
            body = b""
        encoding = (heard.header("content-encoding") or "").lower()
        if encoding == "gzip" and body:
            body = gzip.decompress(body)
        elif encoding == "deflate" and body:
            body = zlib.decompress(body)
        heard.body = body
        out.append(heard)
        upgraded = (head.startswith("HTTP/1.1 101") if kind == "response"
                    else (heard.header("upgrade") or "").lower() == "websocket")
        if upgraded:
            return out, data[pos:]
    return out, None


def _ws(data: bytes, kind: str) -> list[Heard]:
    out, pos, parts = [], 0, bytearray()
    while pos + 2 <= len(data):
        first, second = data[pos], data[pos + 1]
        length, pos = second & 0x7F, pos + 2
        if length == 126:
            length, pos = int.from_bytes(data[pos:pos + 2], "big"), pos + 2
        elif length == 127:
            length, pos = int.from_bytes(data[pos:pos + 8], "big"), pos + 8
        mask = b""
        if second & 0x80:
            mask, pos = data[pos:pos + 4], pos + 4
        payload = bytearray(data[pos:pos + length])
        pos += length
        if mask:
            for i in range(len(payload)):
                payload[i] ^= mask[i % 4]
        opcode = first & 0x0F
        if opcode in (0, 1, 2):
            parts += payload
            if first & 0x80:
                out.append(Heard(kind=kind, body=bytes(parts)))
                parts = bytearray()
    return out


def overheard(flows: list[dict[str, bytearray]]) -> list[Heard]:
    """Everything readable in ``flows`` (``Proxy.flows``)."""
    out: list[Heard] = []
    for flow in flows:
        up, up_rest = _http(bytes(flow["up"]), "request")
        down, down_rest = _http(bytes(flow["down"]), "response")
        out += up + down
        if up_rest is not None:
            out += _ws(up_rest, "ws-up")
        if down_rest is not None:
            out += _ws(down_rest, "ws-down")
    return out


def secrets_of(setup, minted: list[str]) -> list[str]:
    tokens = [setup.storyteller, *setup.players.values(), *(t for _s, t in setup.dice.values()), *minted]
    return tokens + [hashlib.sha256(t.encode()).hexdigest() for t in tokens] + [
        base64.b64encode(hashlib.sha256(t.encode()).digest()).decode() for t in tokens]


def assert_nothing_readable(heard, secrets: list[str], *, api_paths=("/channel", "/sealed")) -> None:
    text = "\n".join(h.text() for h in heard)
    assert not [s for s in secrets if s in text], "a token or its digest crossed the air"
    for h in heard:
        if h.kind.startswith("ws"):
            assert json.loads(h.body)["type"] in ("open", "opened", "sealed"), h.body[:200]
        elif h.kind == "request":
            assert h.header("authorization") is None, h.head
            assert not h.path.startswith(("/sessions", "/ws?")), h.head
            if h.path in api_paths:
                body = h.json()
                assert set(body) <= {"type", "id", "nonce", "channel", "n", "box"}, body
        elif h.kind == "response" and h.header("content-type") == "application/json" and h.body:
            body = h.json()
            if isinstance(body, dict) and "box" in body:
                assert set(body) == {"box"}, body
