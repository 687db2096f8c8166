"""The printable join sheet: one QR code per character, for check-in.

Tokens are stored hashed, so a sheet cannot show old tokens: printing one mints a fresh
player token per character (the storyteller may revoke the previous ones at the same
time, for a reprint after a lost sheet: a phone still connected with an old token is
disconnected at once, as the hub listens to every revocation). The QR codes are inline SVG, so the page prints
as it is, without network. The join link carries the token in its ``#fragment``.
"""

from __future__ import annotations

import html
from urllib.parse import urlsplit

import msgspec
import qrcode
import qrcode.image.svg
from litestar import Controller, MediaType, Request, Response, post
from litestar.params import JSONBody
from typing import Literal

from conteur.events.catalogue import LANGS, fill, section
from conteur.server.web.door import ca_note
from conteur.server.web.http_common import (DEPENDENCIES, SECURITY, SESSION_RAISES, GrantDep, answered_as,
                                            runtime, storyteller_only, SessionPath, strict_body)
from conteur.server.web.http_sessions import base_url
from conteur.server.web.lan import is_loopback
from conteur.server.core.roster import join_link


def qr_svg(data: str) -> str:
    image = qrcode.make(data, image_factory=qrcode.image.svg.SvgPathImage, box_size=10, border=2)
    return image.to_string(encoding="unicode")


PAGE = """<!doctype html>
<html lang="{lang}"><head><meta charset="utf-8"><title>{title}</title>
<style>
body {{ font-family: sans-serif; margin: 1cm; }}
.cards {{ display: grid; grid-template-columns: repeat(3, 1fr); gap: 8mm; }}
.card {{ border: 1px dashed #888; padding: 4mm; text-align: center; break-inside: avoid; }}
.card svg {{ width: 45mm; height: 45mm; }}
.name {{ font-size: 14pt; font-weight: bold; }}
.link {{ font-family: monospace; font-size: 7pt; word-break: break-all; }}
.wifi, .address {{ font-size: 10pt; }}
.address {{ font-family: monospace; font-weight: bold; }}
.warning {{ border: 2px solid #b00; padding: 2mm; color: #b00; }}
.plain {{ border: 1px solid #888; padding: 2mm; font-size: 10pt; }}
@media print {{ h1 .hint {{ display: none; }} }}
</style></head>
<body><h1>{title} <small class="hint">{hint}</small></h1>
{warning}<div class="cards">
{cards}
</div></body></html>
"""

CARD = """<div class="card"><div class="name">{name}</div><div>{player}</div>
{svg}{wifi}<div class="address" data-address>{address}</div><div class="link">{link}</div></div>"""

WIFI = """<div class="wifi" data-wifi>Wi-Fi: <b>{wifi}</b></div>"""

# the sheet's words in the tablet's language (every string in both languages):
# events/messages/<lang>.json, section "join"; "unreachable": the sheet was asked through
# this machine's loopback and no LAN address was found
TEXT = {lang: section("join", lang) for lang in LANGS}


class JoinSheetOptions(msgspec.Struct, frozen=True, kw_only=True):
    revoke_previous: bool = False  # a reprint: the old sheet's tokens stop working
    characters: list[str] | None = None  # only these (default: every character)
    lang: Literal["en", "fr"] = "en"  # the sheet's words: the tablet sends its own language


def render(title: str, entries: list[tuple[str, str, str]], *, base: str = "", wifi: str = "",
           lang: str = "en") -> str:
    """One card per (name, player, link): the QR code, then for a phone whose camera will
    not scan the Wi-Fi to join and the address to type, then the whole link."""
    wifi_line = WIFI.format(wifi=html.escape(wifi)) if wifi else ""
    address = html.escape(base + "/") if base else ""
    cards = "\n".join(
        CARD.format(name=html.escape(name), player=html.escape(player), svg=qr_svg(link),
                    wifi=wifi_line, address=address, link=html.escape(link))
        for name, player, link in entries
    )
    text = TEXT[lang]
    host = urlsplit(base).hostname or ""
    warning = text["unreachable"] if base and is_loopback(host) else ""
    # over plain HTTP no service worker keeps the app shell: say what a reload offline does
    if base.startswith("http://") and not is_loopback(host):
        warning += text["plain_http"]
    return PAGE.format(title=html.escape(title), cards=cards, warning=warning, lang=lang,
                       hint=html.escape(text["hint"], quote=False))


class JoinSheetController(Controller):
    path = "/sessions/{session:str}/join-sheet"
    tags = ["sessions"]
    dependencies = DEPENDENCIES
    security = SECURITY

    # the body is required (``{}``: every character, in English), as the web app sends it:
    # a request without one is refused, not taken for the defaults
    @post("/", guards=[storyteller_only], status_code=200,
          operation_class=answered_as(MediaType.HTML, body_required=True),
          raises=SESSION_RAISES, summary="A printable page with one join QR code per character (mints fresh tokens)")
    async def sheet(self, request: Request, grant: GrantDep, session: SessionPath,
                    data: JSONBody[JoinSheetOptions | None] = None) -> Response[str]:
        data = await strict_body(request, JoinSheetOptions)
        rt = runtime(request)
        state = await rt.chronicle.state_now(session)
        base = base_url(request)
        wanted = [(cid, character) for cid, character in state.session.characters.items()
                  if data.characters is None or cid in data.characters]

        def mint() -> list[str]:  # on the store's thread (server/core/offload.py)
            if data.revoke_previous:
                for cid, _character in wanted:
                    rt.tokens.revoke(session=session, character=cid)
            return rt.tokens.issue_many([("player", cid, session, character.name) for cid, character in wanted])

        tokens = await rt.chronicle.work.run(mint)
        entries = [(character.name, cid, join_link(base, token, session))
                   for (cid, character), token in zip(wanted, tokens)]
        title = fill(TEXT[data.lang]["title"], {"session": state.session.name or session})
        page = render(title, entries, base=base, wifi=rt.settings.wifi, lang=data.lang)
        if rt.settings.ca_file:  # with --tls: where phones get the certificate to trust
            page = page.replace("</body>", f'<p class="ca">{ca_note(base, data.lang)}</p></body>')
        return Response(page, media_type=MediaType.HTML)
