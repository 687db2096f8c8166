"""The venue channel: every frame sealed with a key only the device and the server hold.

The join link (the QR code) carries a token to the phone optically; the server keeps its
SHA-256. That digest is the pre-shared key of a channel opened on each socket:

1. the device sends ``open`` in the clear: its token's id (the grant id, a prefix of the
   digest the storyteller's device list shows anyway) and 32 random bytes;
2. the server answers ``opened`` with 32 random bytes of its own;
3. both derive, with HKDF-SHA256 (RFC 5869) keyed by the digest and salted with both
   nonces, one key per direction; every later message is a ``sealed`` frame: the inner
   frame, padded, under ChaCha20-Poly1305 (RFC 8439) whose nonce is the message's
   counter in that direction (as in Noise's ``ChaChaPoly``).

The hello that follows is the proof of the secret: only a holder of the digest can seal
a frame the server opens, and only the server can seal a ``welcome`` the device opens.
Fresh nonces from both sides make every socket's keys new, so a captured frame replayed
on another socket does not open, and the counter refuses it on its own socket.

Why not XChaCha20-Poly1305: its 24-byte random nonces exist for long-lived keys whose
messages cannot be counted; here each key lives one socket and counts its messages, the
case RFC 8439's 96-bit nonce is made for, and it is the AEAD the Python ``cryptography``
package and the browser's vendored ``@noble/ciphers`` both have. docs/protocol.md
("The channel") is the authority; client/web/channel.js is the browser's side.
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import os
import struct
from typing import Annotated

import msgspec
from cryptography.exceptions import InvalidTag
from cryptography.hazmat.primitives import hashes
from cryptography.hazmat.primitives.ciphers.aead import ChaCha20Poly1305
from cryptography.hazmat.primitives.kdf.hkdf import HKDF
from msgspec import Meta

__all__ = ["ChannelError", "Channel", "Open", "Opened", "Sealed", "NONCE_BYTES", "PAD",
           "psk_of_token", "key_id_of_token", "derive", "client_side", "server_side", "new_nonce"]

NONCE_BYTES = 32
INFO = b"conteur channel 1"
# plaintexts are padded with spaces (JSON's own whitespace) to a multiple of this, so a
# sealed frame's size says little of what it holds (a bid of 3 or of 10)
PAD = 128
KEY_ID_CHARS = 12

_Nonce = Annotated[str, Meta(min_length=43, max_length=43, pattern="^[A-Za-z0-9_-]+$")]  # 32 bytes, base64url


class Open(msgspec.Struct, frozen=True, kw_only=True, tag_field="type", tag="open", omit_defaults=True):
    """A device opens the channel: which token's key (its id, never the token), and its nonce."""

    id: Annotated[str, Meta(min_length=1, max_length=64, pattern="^[0-9a-f]+$")]
    nonce: _Nonce


class Opened(msgspec.Struct, frozen=True, kw_only=True, tag_field="type", tag="opened", omit_defaults=True):
    """The server's nonce: from here on, every message is ``sealed`` both ways."""

    nonce: _Nonce


class Sealed(msgspec.Struct, frozen=True, kw_only=True, tag_field="type", tag="sealed", omit_defaults=True):
    """One frame (hello, command, ping; or any server frame), padded and encrypted:
    base64 of ChaCha20-Poly1305's ciphertext and tag."""

    box: Annotated[str, Meta(min_length=24, pattern="^[A-Za-z0-9+/]+={0,2}$")]


class ChannelError(Exception):
    """A message that does not open: another key, a replay, a reordering, a forgery."""


def psk_of_token(token: str) -> bytes:
    """The pre-shared key: the token's SHA-256, which the server stores as its digest."""
    return hashlib.sha256(token.encode("utf-8")).digest()


def key_id_of_token(token: str) -> str:
    """The id ``open`` names: the grant id (server/core/auth.py), a prefix of the digest."""
    return hashlib.sha256(token.encode("utf-8")).hexdigest()[:KEY_ID_CHARS]


def new_nonce() -> str:
    return base64.urlsafe_b64encode(os.urandom(NONCE_BYTES)).rstrip(b"=").decode()


def _nonce_bytes(text: str) -> bytes:
    try:
        raw = base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))
    except (binascii.Error, ValueError):
        raise ChannelError("a nonce is 32 bytes in base64url") from None
    if len(raw) != NONCE_BYTES:
        raise ChannelError("a nonce is 32 bytes in base64url")
    return raw


def derive(psk: bytes, key_id: str, client_nonce: str, server_nonce: str) -> tuple[bytes, bytes]:
    """(device-to-server key, server-to-device key) for one socket."""
    salt = _nonce_bytes(client_nonce) + _nonce_bytes(server_nonce)
    okm = HKDF(algorithm=hashes.SHA256(), length=64, salt=salt,
               info=INFO + b"\x00" + key_id.encode("ascii")).derive(psk)
    return okm[:32], okm[32:]


_NONCE = struct.Struct("<4xQ")  # 4 zero bytes, then the counter: Noise's ChaChaPoly nonce
_sealed = msgspec.json.Decoder(Sealed)


class Channel:
    """One socket's two directions: ``seal`` what is sent, ``open`` what is received, each
    with its own key and counter. Messages are opened in the order they were sealed (a
    websocket's order); a message that does not open breaks the channel for good."""

    __slots__ = ("_out", "_in", "sent", "received", "broken")

    def __init__(self, send_key: bytes, receive_key: bytes):
        self._out = ChaCha20Poly1305(send_key)
        self._in = ChaCha20Poly1305(receive_key)
        self.sent = 0
        self.received = 0
        self.broken = False

    def seal(self, text: str | bytes) -> str:
        data = text.encode("utf-8") if isinstance(text, str) else text
        short = -len(data) % PAD
        if short:
            data += b" " * short
        box = self._out.encrypt(_NONCE.pack(self.sent), data, None)
        self.sent += 1
        return '{"type":"sealed","box":"' + base64.b64encode(box).decode("ascii") + '"}'

    def skip(self) -> None:
        """A message received but not opened (too large to be worth it): its counter is used."""
        self.received += 1

    def open(self, message: str | bytes) -> str:
        if self.broken:
            raise ChannelError("the channel is broken")
        try:
            box = base64.b64decode(_sealed.decode(message).box, validate=True)
            data = self._in.decrypt(_NONCE.pack(self.received), box, None)
        except (msgspec.DecodeError, binascii.Error, ValueError, InvalidTag):
            self.broken = True
            raise ChannelError("a message that is not sealed with this channel's key, in order") from None
        self.received += 1
        try:
            return data.decode("utf-8").rstrip(" ")
        except UnicodeDecodeError:
            self.broken = True
            raise ChannelError("a sealed frame is UTF-8 JSON") from None


def client_side(psk: bytes, key_id: str, client_nonce: str, server_nonce: str) -> Channel:
    up, down = derive(psk, key_id, client_nonce, server_nonce)
    return Channel(up, down)


def server_side(psk: bytes, key_id: str, client_nonce: str, server_nonce: str) -> Channel:
    up, down = derive(psk, key_id, client_nonce, server_nonce)
    return Channel(down, up)
