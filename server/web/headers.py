"""The headers every HTTP answer carries: what a browser may load and run on this origin.

The origin's localStorage holds the tokens, so its pages run only this server's scripts
(``script-src 'self'``: no inline script, no CDN; the schema page's Redoc is vendored),
are framed by no other page (``frame-ancestors 'none'``), send no Referer (a join link's
path and query stay here), and are never sniffed into another type. Inline styles stay
allowed: the exports and the join sheet carry their print sheet inline, and Redoc injects
its own. An answer to a request that carries a token, and every POST (fresh tokens: the
join sheet, a roster import, a new device's token), is ``no-store``: no cache keeps it.
Under ``--tls`` browsers are told to come back in https only (HSTS).
"""

from __future__ import annotations

from typing import Any, Callable

CSP = "; ".join([
    "default-src 'self'",
    "script-src 'self'",
    "style-src 'self' 'unsafe-inline'",
    "img-src 'self' data: blob:",
    "font-src 'self' data:",
    "connect-src 'self'",
    "worker-src 'self' blob:",
    "manifest-src 'self'",
    "object-src 'none'",
    "base-uri 'none'",
    "form-action 'self'",
    "frame-ancestors 'none'",
])
HSTS = "max-age=31536000"


def with_scripts(*scripts: str) -> str:
    """The policy with these inline scripts allowed by their hashes (CSP Level 2)."""
    import base64
    import hashlib

    hashes = " ".join(f"'sha256-{base64.b64encode(hashlib.sha256(s.encode()).digest()).decode()}'"
                      for s in scripts)
    return CSP.replace("script-src 'self'", f"script-src 'self' {hashes}")
_COMMON = [
    (b"content-security-policy", CSP.encode()),
    (b"x-content-type-options", b"nosniff"),
    (b"referrer-policy", b"no-referrer"),
    (b"x-frame-options", b"DENY"),
]
_NO_STORE = (b"cache-control", b"no-store")


def private(scope: dict[str, Any]) -> bool:
    """Whether the answer to this request may carry a token or what one opens."""
    if scope.get("method") == "POST" or scope.get("path", "").endswith("/join-sheet"):
        return True
    return any(name == b"authorization" for name, _ in scope.get("headers", ()))


def security_headers(https: bool = False) -> Callable:
    """The middleware factory Litestar takes: the headers above on every HTTP answer."""
    extra = [(b"strict-transport-security", HSTS.encode())] if https else []

    def middleware(app: Callable) -> Callable:
        async def headed(scope: dict, receive: Callable, send: Callable) -> None:
            if scope["type"] != "http":
                await app(scope, receive, send)
                return
            no_store = private(scope)

            async def send_headed(message: dict) -> None:
                if message["type"] == "http.response.start":
                    headers = [h for h in message.get("headers", ())
                               if not (no_store and h[0].lower() == b"cache-control")]
                    own = {h[0].lower() for h in headers}  # a page's own policy (a hashed script) wins
                    headers += [h for h in _COMMON if h[0] not in own]
                    headers += extra + ([_NO_STORE] if no_store else [])
                    message = {**message, "headers": headers}
                await send(message)

            await app(scope, receive, send_headed)

        return headed

    return middleware
