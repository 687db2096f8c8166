"""deploy/README.md's TLS steps (section 4) followed for real: `conteur init`,
`conteur serve --tls` as its own process on 127.0.0.1, curl fetching the venue CA and the
pages the README names, plain http redirected, and Chromium trusting the CA reaching the
app by a LAN name as a secure context (the service worker registers), then printing the
join sheet from the storyteller's tablet."""

from __future__ import annotations

import base64
import hashlib
import os
import re
import shutil
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest

x509 = pytest.importorskip("cryptography.x509", reason="cryptography is not installed")
from cryptography.hazmat.primitives import serialization  # noqa: E402

from conteur.server.web.tls import ensure_certificate  # noqa: E402

ROOT = Path(__file__).resolve().parents[2]
CONTEUR = [sys.executable, "-m", "conteur.server.cli.main"]
CURL = shutil.which("curl")
CHROMIUM = os.environ.get("CHROMIUM", "/usr/bin/chromium")
LAN_NAME = "conteur.local"  # what a phone reaches the machine by (README: HOSTNAME.local)

pytestmark = pytest.mark.skipif(CURL is None, reason="curl is not installed (apt-get install curl; .ci/run does)")


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def curl(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([CURL, "-sS", "--max-time", "20", *args], capture_output=True, timeout=60)


class Venue:
    """deploy/README.md, sections 1 and 4: the chronicle made, then served with --tls."""

    def __init__(self, tmp_path: Path):
        self.data = tmp_path / "var-lib-conteur"
        self.data.mkdir()
        self.db = self.data / "conteur.db"
        self.cwd = tmp_path / "elsewhere"  # the service's working folder is not the data's
        self.cwd.mkdir()
        self.port = free_port()
        init = subprocess.run([*CONTEUR, "init", "--db", str(self.db), "--roster",
                               str(ROOT / "docs" / "roster-example.toml"),
                               "--url", f"https://{LAN_NAME}:{self.port}"],
                              capture_output=True, text=True, cwd=self.cwd, env=self.env())
        assert init.returncode == 0, init.stderr
        self.storyteller_link = re.search(r"https://\S+#join=\S+", init.stdout).group(0)
        # the machine's certificate also names its LAN name (default_hosts does, with
        # --host 0.0.0.0); serve reuses it, as it does at a venue
        ensure_certificate(self.data / "tls", ["127.0.0.1", LAN_NAME])
        self.out = tmp_path / "serve.out"
        self.proc = subprocess.Popen(
            [*CONTEUR, "serve", "--db", str(self.db), "--host", "127.0.0.1",
             "--port", str(self.port), "--tls"],
            stdout=open(self.out, "w"), stderr=subprocess.STDOUT, cwd=self.cwd, env=self.env())
        deadline = time.monotonic() + 60
        while "Application startup complete" not in self.out.read_text():
            if self.proc.poll() is not None or time.monotonic() > deadline:
                raise AssertionError(f"serve did not start:\n{self.out.read_text()}")
            time.sleep(0.1)

    @staticmethod
    def env() -> dict:
        return {**os.environ, "PYTHONPATH": str(ROOT), "PYTHONUNBUFFERED": "1"}

    @property
    def ca(self) -> Path:
        return self.data / "tls" / "ca.crt"

    def stop(self) -> None:
        self.proc.send_signal(signal.SIGINT)
        try:
            self.proc.wait(timeout=30)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()


@pytest.fixture(scope="module")
def venue(tmp_path_factory):
    v = Venue(tmp_path_factory.mktemp("venue"))
    try:
        yield v
    finally:
        v.stop()


def test_serve_tls_keeps_its_certificates_beside_the_database_and_says_where(venue):
    assert venue.ca.is_file() and (venue.data / "tls" / "server.key").is_file()
    assert not (venue.cwd / "conteur-tls").exists()
    printed = venue.out.read_text()
    assert str(venue.ca) in printed
    assert f"https://127.0.0.1:{venue.port}/ca.crt" in printed


def test_curl_follows_the_readme_tls_steps(venue, tmp_path):
    base = f"127.0.0.1:{venue.port}"
    # A phone that trusts nothing yet: the CA over plain http on the same port.
    got = curl("-D", "-", "-o", str(tmp_path / "ca.crt"), f"http://{base}/ca.crt")
    assert got.returncode == 0, got.stderr
    assert b"application/x-x509-ca-cert" in got.stdout
    assert (tmp_path / "ca.crt").read_bytes() == venue.ca.read_bytes()
    # Trusting it, https works with full verification; /ca.crt is there too.
    ca = str(tmp_path / "ca.crt")
    got = curl("--fail", "--cacert", ca, "-D", "-", "-o", os.devnull, f"https://{base}/ca.crt")
    assert got.returncode == 0, got.stderr
    assert re.search(rb"(?i)content-type: application/x-x509-ca-cert", got.stdout)
    got = curl("--fail", "--cacert", ca, f"https://{base}/health")
    assert got.returncode == 0 and b'"status":"ok"' in got.stdout, got.stderr
    # The join sheet page the README and install.sh name.
    got = curl("--fail", "--cacert", ca, f"https://{base}/join-sheet")
    assert got.returncode == 0 and b"Join sheet" in got.stdout, got.stderr
    # Plain http anywhere else: redirected to the same place in https.
    got = curl("-D", "-", "-o", os.devnull, f"http://{base}/join-sheet?x=1")
    assert got.stdout.startswith(b"HTTP/1.1 301")
    assert f"Location: https://{base}/join-sheet?x=1".encode() in got.stdout
    # a forged Host header is not where the redirect goes: the configured name is
    got = curl("-D", "-", "-o", os.devnull, "-H", "Host: evil.example:8000", f"http://{base}/x")
    assert f"Location: https://{base}/x".encode() in got.stdout, got.stdout
    # https answers tell the browser to come back in https only (HSTS)
    got = curl("--fail", "--cacert", ca, "-D", "-", "-o", os.devnull, f"https://{base}/health")
    assert re.search(rb"(?i)strict-transport-security: max-age=\d+", got.stdout), got.stdout
    got = curl("-L", "--fail", "--cacert", ca, f"http://{base}/health")
    assert got.returncode == 0 and b'"status":"ok"' in got.stdout
    # Without the CA, curl refuses: the test can fail.
    assert curl("--fail", f"https://{base}/health").returncode == 60


def spki_hash(ca: Path) -> str:
    cert = x509.load_pem_x509_certificate(ca.read_bytes())
    spki = cert.public_key().public_bytes(serialization.Encoding.DER,
                                          serialization.PublicFormat.SubjectPublicKeyInfo)
    return base64.b64encode(hashlib.sha256(spki).digest()).decode()


@pytest.fixture
def chromium():
    if not Path(CHROMIUM).exists():
        pytest.skip(f"chromium is absent at {CHROMIUM}")
    from playwright.sync_api import sync_playwright

    with sync_playwright() as p:
        yield p.chromium


def test_chromium_trusting_the_ca_gets_a_secure_context_and_prints_the_join_sheet(venue, chromium):
    base = f"https://{LAN_NAME}:{venue.port}"
    resolve = f"--host-resolver-rules=MAP {LAN_NAME} 127.0.0.1"
    # A phone that has not installed the CA: a certificate error, no app.
    untrusting = chromium.launch(executable_path=CHROMIUM, args=[resolve])
    try:
        page = untrusting.new_page()
        with pytest.raises(Exception, match="ERR_CERT"):
            page.goto(f"{base}/")
    finally:
        untrusting.close()

    # The CA installed (Chromium told to trust the CA's key, as a phone's store would).
    browser = chromium.launch(executable_path=CHROMIUM, args=[
        resolve, f"--ignore-certificate-errors-spki-list={spki_hash(venue.ca)}"])
    try:
        page = browser.new_page()
        assert page.goto(venue.storyteller_link).ok
        assert page.evaluate("window.isSecureContext") is True
        # The offline app: its service worker registers only in a secure context.
        assert page.evaluate("""() => Promise.race([
            navigator.serviceWorker.ready.then((r) => !!r.active),
            new Promise((resolve) => setTimeout(() => resolve(false), 30000))])""") is True
        # The tablet holds the storyteller's token now: /join-sheet prints the codes.
        page.wait_for_function("localStorage.getItem('conteur.token')", timeout=30_000)
        page.goto(f"{base}/join-sheet")
        page.wait_for_selector(".card svg", timeout=30_000)
        assert page.locator(".card").count() >= 2
        assert f"{base}/ca.crt" in page.locator("p.ca").inner_text()
    finally:
        browser.close()


def test_serve_with_a_certificate_given_by_cert_and_key(tmp_path):
    # deploy/README.md: "A certificate you already have can be given instead".
    own = tmp_path / "own"
    cert, key = ensure_certificate(own, ["127.0.0.1"])
    other_key = ensure_certificate(tmp_path / "other", ["127.0.0.1"])[1]
    db = tmp_path / "conteur.db"
    env = Venue.env()
    refused = subprocess.run([*CONTEUR, "serve", "--db", str(db), "--port", "0", "--cert",
                              str(cert), "--key", str(other_key)], capture_output=True, text=True,
                             env=env, timeout=60)
    assert refused.returncode == 2
    assert refused.stderr.startswith("conteur serve: the certificate or key cannot be used")
    assert "Traceback" not in refused.stderr and len(refused.stderr.splitlines()) == 1

    port = free_port()
    out = tmp_path / "serve.out"
    proc = subprocess.Popen([*CONTEUR, "serve", "--db", str(db), "--host", "127.0.0.1", "--port",
                             str(port), "--cert", str(cert), "--key", str(key)],
                            stdout=open(out, "w"), stderr=subprocess.STDOUT, env=env, cwd=tmp_path)
    try:
        deadline = time.monotonic() + 60
        while "Application startup complete" not in out.read_text():
            assert proc.poll() is None and time.monotonic() < deadline, out.read_text()
            time.sleep(0.1)
        got = curl("--fail", "--cacert", str(own / "ca.crt"), f"https://127.0.0.1:{port}/health")
        assert got.returncode == 0 and b'"status":"ok"' in got.stdout, got.stderr
        assert not (tmp_path / "tls").exists()  # the venue CA is not made when a cert is given
    finally:
        proc.send_signal(signal.SIGINT)
        proc.wait(timeout=30)
