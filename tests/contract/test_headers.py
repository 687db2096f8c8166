"""The headers of every HTTP answer, and the pages passing their Content-Security-Policy
in real Chromium: the phone app, the review page, an HTML export, the join sheet and the
schema page (Redoc, served from the package) raise no ``securitypolicyviolation`` and no
console error, and still work.

Before: no policy at all, and /schema loaded Redoc from a CDN on the origin whose
localStorage holds the tokens.
"""

from __future__ import annotations

import re

import httpx
import pytest

from conteur.server.web.door import redirect_host
from conteur.server.web.headers import CSP
from tests.support.browser_support import CHROMIUM, NO_CHROMIUM, TIMEOUT
from tests.support.client_support import served
from tests.support.review_support import evening

LISTEN = """
window.__violations = [];
document.addEventListener("securitypolicyviolation", (e) =>
  window.__violations.push(`${e.violatedDirective} ${e.blockedURI} ${e.sourceFile}:${e.lineNumber}`));
"""


@pytest.fixture(scope="module")
def setup(tmp_path_factory):
    return evening(tmp_path_factory.mktemp("headers") / "chronicle.db")


@pytest.fixture(scope="module")
def server(setup):
    with served(setup.db) as server:
        yield server


def test_every_answer_carries_the_policy_and_nosniff(server, setup):
    auth = {"Authorization": f"Bearer {setup.storyteller}"}
    for path, headers in [("/", {}), ("/review.html", {}), ("/app.js", {}), ("/schema", {}),
                          ("/schema/openapi.json", {}), ("/health", {}), ("/join-sheet", {}),
                          (f"/sessions/{setup.session}/export?format=html", auth), ("/nope", {})]:
        reply = httpx.get(server.url + path, headers=headers)
        assert reply.status_code in (200, 404), (path, reply.status_code)
        policy = reply.headers.get("content-security-policy", "")
        assert "frame-ancestors 'none'" in policy and "script-src 'self'" in policy, (path, policy)
        assert "'unsafe-inline'" not in policy.split("script-src", 1)[1].split(";")[0], path
        assert reply.headers["x-content-type-options"] == "nosniff", path
        assert reply.headers["referrer-policy"] == "no-referrer", path
        assert "strict-transport-security" not in reply.headers  # plain http: no HSTS


def test_answers_that_carry_tokens_are_never_stored(server, setup):
    auth = {"Authorization": f"Bearer {setup.storyteller}"}
    minted = httpx.post(f"{server.url}/sessions/{setup.session}/tokens", headers=auth,
                        json={"role": "observer"})
    assert minted.status_code == 200 and minted.json()["token"]
    assert minted.headers["cache-control"] == "no-store"
    sheet = httpx.post(f"{server.url}/sessions/{setup.session}/join-sheet", headers=auth, json={})
    assert sheet.headers["cache-control"] == "no-store"
    for path in ("/me", f"/sessions/{setup.session}/state"):
        assert httpx.get(server.url + path, headers=auth).headers["cache-control"] == "no-store"
    assert httpx.post(server.url + "/sessions", json={"x": "y" * 70_000}).headers["cache-control"] == "no-store"
    assert "no-store" not in httpx.get(server.url + "/app.js").headers.get("cache-control", "")


def test_the_schema_page_loads_nothing_from_elsewhere(server):
    page = httpx.get(server.url + "/schema").text
    sources = re.findall(r'(?:src|href)="([^"]+)"', page)
    assert sources and all(s.startswith("/") for s in sources), sources
    assert "<script>" not in page.replace('<script src=', '')  # no inline script
    bundle = httpx.get(server.url + "/vendor/redoc/redoc.standalone.js")
    assert bundle.status_code == 200 and len(bundle.content) > 500_000
    assert httpx.get(server.url + "/vendor/redoc/LICENSE").status_code == 200


@pytest.mark.parametrize("header, expected", [
    ("10.42.0.1:8443", "10.42.0.1:8443"),
    ("CONTEUR.local:8443", "conteur.local:8443"),
    ("evil.example:8443", "conteur.local:8443"),  # a forged Host: the configured name
    ("evil.example", "conteur.local:8443"),
    ("", "conteur.local:8443"),
    ("10.42.0.1:1", "10.42.0.1:8443"),  # the server's port, not the header's
])
def test_a_plain_http_redirect_goes_to_a_configured_name_only(header, expected):
    assert redirect_host(header, ["conteur.local", "10.42.0.1"], 8443, ("0.0.0.0", 8443)) == expected


# -- in Chromium ------------------------------------------------------------------------


def violations(page) -> list[str]:
    return page.evaluate("window.__violations")


@pytest.mark.browser
@pytest.mark.skipif(CHROMIUM is None, reason=NO_CHROMIUM)
def test_every_page_passes_the_policy_in_chromium(browser, server, setup):
    from playwright.sync_api import expect

    context = browser.new_context(viewport={"width": 1280, "height": 900}, locale="en-US")
    context.add_init_script(LISTEN)
    console: list[str] = []
    pages = []
    try:
        def open_page(url: str, headers: dict | None = None):
            page = context.new_page()
            page.set_default_timeout(TIMEOUT)
            page.on("console", lambda m: console.append(f"{url}: {m.text}") if m.type == "error" else None)
            page.on("pageerror", lambda e: console.append(f"{url}: {e}"))
            if headers:
                page.set_extra_http_headers(headers)
            page.goto(url)
            pages.append(page)
            return page

        app = open_page(f"{server.url}/#join={setup.storyteller}&session={setup.session}")
        expect(app.locator("#app")).not_to_be_empty()
        review = open_page(f"{server.url}/review.html#join={setup.storyteller}&session={setup.session}")
        expect(review.get_by_test_id("verify")).to_have_attribute("data-ok", "true")
        record = open_page(f"{server.url}/sessions/{setup.session}/export?format=html",
                           {"Authorization": f"Bearer {setup.storyteller}"})
        expect(record.locator("li.ruling")).to_have_count(2)
        schema = open_page(f"{server.url}/schema")
        expect(schema.locator("h1").first).to_contain_text("conteur")
        # the join sheet, printed from a tablet holding the storyteller's token: its one
        # inline script runs by its hash, and the sheet it writes passes the policy too
        sheet = open_page(f"{server.url}/join-sheet?session={setup.session}")
        expect(sheet.locator("svg").first).to_be_visible()
        for page in pages:
            assert violations(page) == [], (page.url, violations(page))
        assert not [c for c in console if "Content Security Policy" in c or "Refused" in c], console
    finally:
        context.close()


def test_the_policy_allows_no_inline_script_and_no_other_origin():
    directives = dict(d.strip().split(" ", 1) for d in CSP.split(";"))
    assert directives["script-src"] == "'self'"
    assert directives["frame-ancestors"] == "'none'" and directives["object-src"] == "'none'"
    assert all("http" not in v and "*" not in v for v in directives.values())
