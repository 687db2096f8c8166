"""The self-signed set-up behind `conteur serve --tls`: a venue CA phones install
once, and a server certificate for the LAN addresses that real TLS clients accept."""

from __future__ import annotations

import datetime as dt
import ipaddress
import ssl
import stat

import pytest

x509 = pytest.importorskip("cryptography.x509", reason="cryptography is not installed")
from cryptography.hazmat.primitives import hashes, serialization  # noqa: E402
from cryptography.hazmat.primitives.asymmetric import ec  # noqa: E402

from conteur.server.web.tls import ca_certificate_path, default_hosts, ensure_certificate  # noqa: E402

HOSTS = ["10.42.0.1", "192.168.1.20", "conteur", "conteur.local", "localhost"]


def sans(cert_path) -> set[str]:
    cert = x509.load_pem_x509_certificate(cert_path.read_bytes())
    san = cert.extensions.get_extension_for_class(x509.SubjectAlternativeName).value
    return ({str(ip) for ip in san.get_values_for_type(x509.IPAddress)}
            | set(san.get_values_for_type(x509.DNSName)))


def handshake(cert_path, key_path, cafile, server_hostname: str) -> None:
    """A full TLS handshake in memory, the client verifying as a browser would."""
    server_ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    server_ctx.load_cert_chain(cert_path, key_path)
    client_ctx = ssl.create_default_context(cafile=str(cafile))
    to_server, to_client = ssl.MemoryBIO(), ssl.MemoryBIO()
    client = client_ctx.wrap_bio(to_client, to_server, server_hostname=server_hostname)
    server = server_ctx.wrap_bio(to_server, to_client, server_side=True)
    done = {"client": False, "server": False}
    for _ in range(20):
        for name, side in (("client", client), ("server", server)):
            if not done[name]:
                try:
                    side.do_handshake()
                    done[name] = True
                except ssl.SSLWantReadError:
                    pass
        if all(done.values()):
            return
    raise AssertionError("handshake did not complete")


def test_server_certificate_names_every_lan_address_and_host(tmp_path):
    cert, key = ensure_certificate(tmp_path, HOSTS)

    assert sans(cert) == set(HOSTS)
    leaf = x509.load_pem_x509_certificate(cert.read_bytes())
    eku = leaf.extensions.get_extension_for_class(x509.ExtendedKeyUsage).value
    assert x509.oid.ExtendedKeyUsageOID.SERVER_AUTH in eku
    # Apple's limit for certificates from a CA the user installed.
    assert leaf.not_valid_after_utc - leaf.not_valid_before_utc <= dt.timedelta(days=825)


@pytest.mark.parametrize("name", ["10.42.0.1", "192.168.1.20", "conteur.local"])
def test_a_phone_trusting_the_venue_ca_accepts_the_server(tmp_path, name):
    cert, key = ensure_certificate(tmp_path, HOSTS)
    handshake(cert, key, ca_certificate_path(tmp_path), server_hostname=name)


def test_the_certificate_does_not_pass_for_another_address(tmp_path):
    cert, key = ensure_certificate(tmp_path, HOSTS)
    with pytest.raises(ssl.SSLCertVerificationError):
        handshake(cert, key, ca_certificate_path(tmp_path), server_hostname="10.42.0.99")


def test_the_venue_ca_cannot_vouch_for_a_real_website(tmp_path):
    ensure_certificate(tmp_path, HOSTS)
    ca = x509.load_pem_x509_certificate(ca_certificate_path(tmp_path).read_bytes())
    ca_key = serialization.load_pem_private_key((tmp_path / "ca.key").read_bytes(), None)
    # What a thief holding the laptop's CA key could forge:
    key = ec.generate_private_key(ec.SECP256R1())
    now = dt.datetime.now(dt.UTC)
    forged = (
        x509.CertificateBuilder()
        .subject_name(x509.Name([x509.NameAttribute(x509.oid.NameOID.COMMON_NAME, "bank")]))
        .issuer_name(ca.subject).public_key(key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - dt.timedelta(days=1)).not_valid_after(now + dt.timedelta(days=30))
        .add_extension(x509.SubjectAlternativeName(
            [x509.DNSName("www.example-bank.com"), x509.IPAddress(ipaddress.ip_address("8.8.8.8"))]),
            critical=False)
        .sign(ca_key, hashes.SHA256()))
    (tmp_path / "forged.crt").write_bytes(forged.public_bytes(serialization.Encoding.PEM))
    (tmp_path / "forged.key").write_bytes(key.private_bytes(
        serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8,
        serialization.NoEncryption()))

    for name in ("www.example-bank.com", "8.8.8.8"):
        with pytest.raises(ssl.SSLCertVerificationError) as refused:
            handshake(tmp_path / "forged.crt", tmp_path / "forged.key",
                      ca_certificate_path(tmp_path), server_hostname=name)
        assert "permitted subtree" in refused.value.verify_message


def test_existing_certificate_is_reused(tmp_path):
    cert, key = ensure_certificate(tmp_path, HOSTS)
    before = (cert.read_bytes(), key.read_bytes(), ca_certificate_path(tmp_path).read_bytes())

    assert ensure_certificate(tmp_path, list(reversed(HOSTS[:3]))) == (cert, key)

    assert (cert.read_bytes(), key.read_bytes(),
            ca_certificate_path(tmp_path).read_bytes()) == before


def test_a_new_address_reissues_the_server_certificate_but_keeps_the_ca(tmp_path):
    ensure_certificate(tmp_path, HOSTS)
    ca_before = ca_certificate_path(tmp_path).read_bytes()

    cert, key = ensure_certificate(tmp_path, [*HOSTS, "172.20.10.2"])

    assert "172.20.10.2" in sans(cert)
    assert ca_certificate_path(tmp_path).read_bytes() == ca_before  # phones keep trusting it
    handshake(cert, key, ca_certificate_path(tmp_path), server_hostname="172.20.10.2")


def test_private_keys_are_readable_by_the_owner_only(tmp_path):
    cert, key = ensure_certificate(tmp_path, HOSTS)
    for path in (key, tmp_path / "ca.key"):
        assert stat.S_IMODE(path.stat().st_mode) == 0o600


def test_default_hosts_include_loopback_and_the_hotspot_address():
    hosts = default_hosts()
    assert {"localhost", "127.0.0.1", "10.42.0.1"} <= set(hosts)
    for host in hosts:
        if host[0].isdigit():
            ipaddress.ip_address(host)


def test_a_ca_copied_from_the_main_machine_reissues_the_spare_ones_certificate(tmp_path):
    main, spare = tmp_path / "main", tmp_path / "spare"
    ensure_certificate(main, HOSTS)
    ensure_certificate(spare, HOSTS)
    for name in ("ca.crt", "ca.key"):  # README: keep tls/ with the backups
        (spare / name).write_bytes((main / name).read_bytes())

    cert, key = ensure_certificate(spare, HOSTS)

    # Phones that trust the main machine's CA accept the spare at once.
    handshake(cert, key, ca_certificate_path(main), server_hostname="10.42.0.1")
