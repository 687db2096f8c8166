"""The schema page (``/schema``): Redoc from the package, not from a CDN.

Litestar's own page loads Redoc, its fonts and its favicon from CDNs and starts it with an
inline script holding the whole schema; here the bundle is the web app's vendored copy
(client/web/vendor/redoc) and ``schema.js`` starts it on ``/schema/openapi.json``, so the
page passes the Content-Security-Policy (server/web/headers.py) with no inline script.
"""

from __future__ import annotations

import html
from typing import Any

from litestar import Request
from litestar.openapi.plugins import RedocRenderPlugin


class VendoredRedoc(RedocRenderPlugin):
    def __init__(self) -> None:
        super().__init__(path="/", js_url="/vendor/redoc/redoc.standalone.js", google_fonts=False)

    def render(self, request: Request, openapi_schema: dict[str, Any]) -> bytes:
        title = html.escape(str(openapi_schema.get("info", {}).get("title", "API")))
        spec = html.escape((request.app.openapi_config.path or "/schema").rstrip("/") + "/openapi.json")
        return (
            '<!doctype html><html lang="en"><head><meta charset="utf-8">'
            f'<title>{title}</title><meta name="viewport" content="width=device-width, initial-scale=1">'
            f'<script src="{self.js_url}"></script></head>'
            f'<body><div id="redoc-container" data-spec="{spec}"></div>'
            '<script src="/schema.js"></script></body></html>'
        ).encode()
