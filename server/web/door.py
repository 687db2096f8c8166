"""The door of `conteur serve --tls`: one port for https, http and the venue certificate.

A phone types or scans `10.42.0.1:8000`; before it trusts the venue CA it cannot open
the https page without a warning, and a browser given a bare address tries plain http
first. So the TLS port answers both: a connection whose first byte opens a TLS
handshake (0x16) is served as https, exactly as uvicorn's own TLS would (the same
asyncio SSL protocol, with uvicorn's HTTP protocol inside); a plain-http request gets
the venue CA itself at `/ca.crt` (so a phone can install it without a certificate
warning first) and a redirect to the same address in https for anything else.

Also here: `GET /ca.crt` over https and `GET /join-sheet`, the page deploy/README.md
sends the storyteller to. The sheet itself mints tokens, so it stays behind the
storyteller's token (`POST /sessions/{s}/join-sheet`): the page posts, through the
sealed channel, with the token this browser already holds from the storyteller's link, and says what to do otherwise.
"""

from __future__ import annotations

import asyncio
import html
import ssl
from asyncio import sslproto
from pathlib import Path
from typing import Sequence

from litestar import MediaType, Response, get
from litestar.datastructures import State
from litestar.exceptions import NotFoundException

from conteur.events.catalogue import fill, section
from conteur.server.web.http_common import answered_as
from conteur.server.web.headers import with_scripts

__all__ = ["CA_MEDIA_TYPE", "ca_certificate", "ca_note", "door_protocol", "join_sheet_page",
           "server_context"]

# What Android and iOS offer to install as a certificate authority when downloaded.
CA_MEDIA_TYPE = "application/x-x509-ca-cert"
_TLS_HANDSHAKE = 0x16
_MAX_HEAD = 8192
_FIRST_BYTES_TIMEOUT = 10.0


def server_context(cert: str | Path, key: str | Path) -> ssl.SSLContext:
    """The TLS context for a certificate chain and its key; ssl.SSLError names a bad pair."""
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    context.load_cert_chain(str(cert), str(key))
    context.set_alpn_protocols(["http/1.1"])
    return context


def _ca_response_bytes(ca_pem: bytes) -> bytes:
    return (b"HTTP/1.1 200 OK\r\nContent-Type: " + CA_MEDIA_TYPE.encode()
            + b"\r\nContent-Disposition: attachment; filename=\"ca.crt\""
            + b"\r\nContent-Length: " + str(len(ca_pem)).encode()
            + b"\r\nConnection: close\r\n\r\n" + ca_pem)


def _redirect_bytes(location: str) -> bytes:
    body = f"This server speaks https: {location}\n".encode()
    return (b"HTTP/1.1 301 Moved Permanently\r\nLocation: " + location.encode("latin-1", "replace")
            + b"\r\nStrict-Transport-Security: max-age=31536000"
            + b"\r\nContent-Type: text/plain; charset=utf-8\r\nContent-Length: "
            + str(len(body)).encode() + b"\r\nConnection: close\r\n\r\n" + body)


def redirect_host(header: str, hosts: Sequence[str], port: int, sockname: tuple) -> str:
    """Where a plain-http request is sent in https: the name it asked for when that is one
    of this server's configured names (its certificate's, or ``--url``'s), else the first
    of those; never a name only the ``Host`` header says (a forged one would send the
    phone, with its next request, to whatever host the header named)."""
    name = header.rsplit(":", 1)[0] if not header.endswith("]") else header
    name = name.strip("[]").lower()
    chosen = name if name in (h.lower() for h in hosts) else (hosts[0] if hosts else str(sockname[0]))
    port = port or sockname[1]
    return f"[{chosen}]:{port}" if ":" in chosen else f"{chosen}:{port}"


def door_protocol(context: ssl.SSLContext, ca_file: str | Path | None, inner: type, *,
                  hosts: Sequence[str] = (), port: int = 0) -> type:
    """A uvicorn ``http`` protocol class: TLS connections to ``inner`` (uvicorn's HTTP
    protocol), plain http to the redirect (and ``/ca.crt``) on one of ``hosts`` at ``port``
    (redirect_host)."""

    class Door(asyncio.Protocol):
        def __init__(self, config, server_state, app_state, _loop=None):
            self._args = (config, server_state, app_state, _loop)
            self._loop = _loop or asyncio.get_event_loop()
            self._transport: asyncio.Transport | None = None
            self._head = b""
            self._timer: asyncio.TimerHandle | None = None

        def connection_made(self, transport) -> None:
            self._transport = transport
            # a socket that never says anything does not stay open forever
            self._timer = self._loop.call_later(_FIRST_BYTES_TIMEOUT, transport.close)

        def data_received(self, data: bytes) -> None:
            if not self._head and data[:1] == bytes([_TLS_HANDSHAKE]):
                self._cancel_timer()
                self._to_tls(data)
                return
            self._head += data
            if b"\r\n\r\n" in self._head or len(self._head) > _MAX_HEAD:
                self._cancel_timer()
                self._answer_plain()

        def connection_lost(self, exc) -> None:
            self._cancel_timer()

        def _cancel_timer(self) -> None:
            if self._timer is not None:
                self._timer.cancel()
                self._timer = None

        def _to_tls(self, first: bytes) -> None:
            # What loop.create_server(ssl=...) builds for each connection, built late:
            # the ClientHello's first bytes are already read, so they are handed over.
            app = inner(*self._args[:3], _loop=self._args[3])
            tls = sslproto.SSLProtocol(self._loop, app, context, None, server_side=True,
                                       ssl_handshake_timeout=_FIRST_BYTES_TIMEOUT * 3)
            transport = self._transport
            transport.set_protocol(tls)
            tls.connection_made(transport)
            view = memoryview(first)
            while view:
                buffer = tls.get_buffer(len(view))
                n = min(len(buffer), len(view))
                buffer[:n] = view[:n]
                tls.buffer_updated(n)
                view = view[n:]

        def _answer_plain(self) -> None:
            request_line, _, rest = self._head.partition(b"\r\n")
            parts = request_line.split(b" ")
            path = parts[1].decode("latin-1") if len(parts) >= 2 else "/"
            host = ""
            for header in rest.split(b"\r\n"):
                name, _, value = header.partition(b":")
                if name.strip().lower() == b"host":
                    host = value.strip().decode("latin-1")
            sockname = self._transport.get_extra_info("sockname") or ("localhost", 0)
            host = redirect_host(host, hosts, port, sockname)
            if not path.startswith("/"):
                path = "/"
            if path.split("?")[0] == "/ca.crt" and ca_file is not None:
                self._transport.write(_ca_response_bytes(Path(ca_file).read_bytes()))
            else:
                self._transport.write(_redirect_bytes(f"https://{host}{path}"))
            self._transport.close()

    return Door


@get("/ca.crt", tags=["server"], raises=[NotFoundException], operation_class=answered_as(CA_MEDIA_TYPE),
     summary="The venue CA certificate phones install (with --tls)")
async def ca_certificate(state: State) -> Response[bytes]:
    """The venue CA phones install (deploy/README.md, section 4)."""
    ca_file = state.conteur.settings.ca_file
    if not ca_file or not Path(ca_file).is_file():
        raise NotFoundException("this server has no venue certificate to install: it runs "
                                "without --tls, or with a certificate given by --cert")
    return Response(Path(ca_file).read_bytes(), media_type=CA_MEDIA_TYPE,
                    headers={"Content-Disposition": 'attachment; filename="ca.crt"'})


JOIN_SHEET_PAGE = """<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>Join sheet</title>
<meta name="viewport" content="width=device-width, initial-scale=1">
<style>body {{ font-family: sans-serif; margin: 1cm; max-width: 40em; }}</style></head>
<body><h1>Join sheet</h1>
<p id="status">Printing the join sheet needs the storyteller's token on this device&hellip;</p>
<div id="help" hidden>
<p>The join sheet mints a fresh join link for every character, so only a storyteller may
print it. On this device, open the <b>storyteller link</b> that <code>conteur serve</code>
(or <code>conteur init</code>) printed &mdash; <code>journalctl -u conteur -b</code> shows it
&mdash; then come back to this page, or use <i>Check-in and review &rarr; Join sheet</i> in
the app.</p>
<p><a href="/">Open the app</a>{ca}</p>
</div>
<script type="module">
import {{ sealedFetch }} from "/channel.js";
(async () => {{
  const token = localStorage.getItem("conteur.token") || "";
  const session = new URLSearchParams(location.search).get("session")
    || localStorage.getItem("conteur.session") || "";
  const help = (text) => {{
    document.getElementById("status").textContent = text;
    document.getElementById("help").hidden = false;
  }};
  if (!token || !session) {{ help("This device holds no storyteller token yet."); return; }}
  // through the sealed channel: the token never crosses the network, nor do the
  // fresh join links the sheet holds (client/web/channel.js)
  const res = await sealedFetch(`/sessions/${{encodeURIComponent(session)}}/join-sheet`, {{
    method: "POST",
    headers: {{ "Content-Type": "application/json" }},
    body: JSON.stringify({{ lang: localStorage.getItem("conteur.lang") === "fr" ? "fr" : "en" }}),
  }}, token).catch(() => null);
  if (!res || !res.ok) {{
    help(res ? `The server refused (${{res.status}}): this device's token is not a storyteller's.`
             : "The server cannot be reached.");
    return;
  }}
  document.open(); document.write(await res.text()); document.close();
}})();
</script></body></html>
"""


@get("/join-sheet", tags=["server"], media_type=MediaType.HTML,
     summary="The printable join sheet, for a device holding the storyteller's token")
async def join_sheet_page(state: State) -> Response[str]:
    ca = ""
    if state.conteur.settings.ca_file:
        ca = (' &middot; <a href="/ca.crt">the venue certificate (ca.crt)</a> for phones '
              'to install once')
    page = JOIN_SHEET_PAGE.format(ca=ca)
    script = page.split('<script type="module">', 1)[1].split("</script>", 1)[0]
    return Response(page, media_type=MediaType.HTML,
                    headers={"Content-Security-Policy": with_scripts(script)})


def ca_note(url: str, lang: str = "en") -> str:
    """What the join sheet prints under the codes when the server has a venue CA."""
    return fill(section("join", lang)["ca_note"], {"url": html.escape(url)})
