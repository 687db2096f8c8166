"""A certificate for `conteur serve --tls` on a LAN with no internet.

Why TLS at all on a private hotspot: phones grant service workers (the offline app) and
the screen wake lock only to a secure context, and a page served over http:// from
10.42.0.1 is not one. Clicking through a certificate warning does not help either:
browsers refuse to register a service worker from a page with a certificate error.
The phone has to trust the certificate.

So this makes a small venue CA (`ca.crt`, installed once on each phone) and a server
certificate signed by it for the machine's LAN addresses and names. When the addresses
change (another venue, another hotspot) only the server certificate is reissued; the
phones keep trusting the CA. The CA is name-constrained to private addresses and local
names, so its key, if it leaked from the laptop, could not impersonate a real website
to a phone that trusts it.
"""

from __future__ import annotations

import datetime as dt
import fcntl
import ipaddress
import os
import socket
import struct
from pathlib import Path

__all__ = [
    "HOTSPOT_ADDRESS", "ca_certificate_path", "certificate_hosts", "default_hosts",
    "ensure_certificate",
]

# NetworkManager's shared-mode address, which deploy/hotspot.sh sets explicitly: listing
# it lets a certificate made before the hotspot is up still match once it is.
HOTSPOT_ADDRESS = "10.42.0.1"

CA_DAYS = 5 * 365
# Apple refuses server certificates valid for more than 825 days, even from a CA the
# user installed; 397 is the limit for public CAs and keeps every phone happy.
SERVER_DAYS = 397
RENEW_BEFORE = dt.timedelta(days=30)

_PRIVATE_NETWORKS = [ipaddress.ip_network(n) for n in (
    "10.0.0.0/8", "172.16.0.0/12", "192.168.0.0/16", "169.254.0.0/16", "127.0.0.0/8",
    "100.64.0.0/10", "fc00::/7", "fe80::/10", "::1/128")]
_LOCAL_DOMAINS = ["localhost", "local", "lan", "home.arpa", "internal"]


def _crypto():
    try:
        from cryptography import x509
        from cryptography.hazmat.primitives import hashes, serialization
        from cryptography.hazmat.primitives.asymmetric import ec
        from cryptography.x509.oid import ExtendedKeyUsageOID, NameOID
    except ImportError as exc:  # pragma: no cover - depends on the install
        raise RuntimeError(
            "conteur serve --tls needs the 'cryptography' package: "
            "pip install cryptography (or pass --cert and --key)") from exc
    return x509, hashes, serialization, ec, ExtendedKeyUsageOID, NameOID


def ca_certificate_path(cert_dir: str | os.PathLike) -> Path:
    """The certificate phones install to trust this server (PEM, `.crt` for Android)."""
    return Path(cert_dir) / "ca.crt"


def ensure_certificate(cert_dir: str | os.PathLike, hosts: list[str]) -> tuple[Path, Path]:
    """Return (cert_path, key_path) for a server certificate covering `hosts`.

    `hosts` are IP addresses and DNS names. The existing files are reused when they
    cover every host and are not about to expire; otherwise the server certificate is
    reissued from the venue CA, which is itself created (or, if it cannot vouch for a
    new name, replaced) as needed. cert_path holds the server certificate followed by
    the CA, so clients get the whole chain.
    """
    if not hosts:
        raise ValueError("a certificate needs at least one host name or address")
    directory = Path(cert_dir)
    directory.mkdir(parents=True, exist_ok=True)
    cert_path, key_path = directory / "server.crt", directory / "server.key"
    ca_path, ca_key_path = ca_certificate_path(directory), directory / "ca.key"
    wanted = {_normalise(h) for h in hosts}

    ca = _load_cert(ca_path) if ca_key_path.exists() else None
    if ca is None or _expiring(ca) or not all(_ca_permits(ca, h) for h in wanted):
        ca = _make_ca(ca_path, ca_key_path, wanted)
        current = None
    else:
        current = _load_cert(cert_path) if key_path.exists() else None
    if (current is None or _expiring(current) or not _issued_by(current, ca)
            or not wanted <= set(certificate_hosts(cert_path))):
        _make_server_cert(cert_path, key_path, ca, ca_key_path, sorted(wanted))
    return cert_path, key_path


def certificate_hosts(cert_path: str | os.PathLike) -> list[str]:
    """The subjectAltNames of the first certificate in a PEM file, as strings."""
    x509 = _crypto()[0]
    cert = _load_cert(Path(cert_path))
    if cert is None:
        return []
    try:
        san = cert.extensions.get_extension_for_class(x509.SubjectAlternativeName).value
    except x509.ExtensionNotFound:
        return []
    return ([str(ip) for ip in san.get_values_for_type(x509.IPAddress)]
            + san.get_values_for_type(x509.DNSName))


def default_hosts() -> list[str]:
    """What phones may type or scan to reach this machine: its names and IPv4 addresses."""
    name = socket.gethostname().split(".")[0]
    hosts = ["localhost", "127.0.0.1", HOTSPOT_ADDRESS, name, f"{name}.local"]
    for _, ifname in socket.if_nameindex():
        address = _ipv4_of(ifname)
        if address and address not in hosts:
            hosts.append(address)
    return hosts


def _ipv4_of(ifname: str) -> str | None:
    SIOCGIFADDR = 0x8915  # Linux: no third-party package needed to list addresses
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as sock:
        try:
            packed = fcntl.ioctl(sock.fileno(), SIOCGIFADDR,
                                 struct.pack("256s", ifname[:15].encode()))
        except OSError:  # down, or no IPv4 address
            return None
    return socket.inet_ntoa(packed[20:24])


def _normalise(host: str) -> str:
    try:
        return str(ipaddress.ip_address(host))
    except ValueError:
        return host.strip().lower().rstrip(".")


def _is_ip(host: str) -> bool:
    try:
        ipaddress.ip_address(host)
    except ValueError:
        return False
    return True


def _ca_permits(ca, host: str) -> bool:
    x509 = _crypto()[0]
    try:
        nc = ca.extensions.get_extension_for_class(x509.NameConstraints).value
    except x509.ExtensionNotFound:
        return True
    permitted = nc.permitted_subtrees or []
    if _is_ip(host):
        address = ipaddress.ip_address(host)
        return any(isinstance(s, x509.IPAddress) and address in s.value for s in permitted)
    return any(isinstance(s, x509.DNSName)
               and (host == s.value or host.endswith("." + s.value)) for s in permitted)


def _issued_by(cert, ca) -> bool:
    # The signature, not the issuer's name: a CA copied in from another machine (the
    # spare laptop) has the same kind of name and another key.
    try:
        cert.verify_directly_issued_by(ca)
    except Exception:  # ValueError, TypeError, InvalidSignature: not this CA's
        return False
    return True


def _expiring(cert) -> bool:
    return cert.not_valid_after_utc - RENEW_BEFORE < dt.datetime.now(dt.UTC)


def _load_cert(path: Path):
    x509 = _crypto()[0]
    try:
        return x509.load_pem_x509_certificate(path.read_bytes())
    except (OSError, ValueError):
        return None


def _write(path: Path, data: bytes, mode: int) -> None:
    partial = path.with_name(path.name + ".partial")
    fd = os.open(partial, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, mode)
    with os.fdopen(fd, "wb") as f:
        f.write(data)
    os.chmod(partial, mode)
    os.replace(partial, path)


def _new_key(path: Path):
    _, _, serialization, ec, _, _ = _crypto()
    # P-256: fast on a Raspberry Pi and accepted by every phone browser.
    key = ec.generate_private_key(ec.SECP256R1())
    _write(path, key.private_bytes(serialization.Encoding.PEM,
                                   serialization.PrivateFormat.PKCS8,
                                   serialization.NoEncryption()), 0o600)
    return key


def _make_ca(ca_path: Path, ca_key_path: Path, hosts: set[str]):
    x509, hashes, serialization, _, _, NameOID = _crypto()
    key = _new_key(ca_key_path)
    name = x509.Name([
        x509.NameAttribute(NameOID.ORGANIZATION_NAME, "conteur"),
        x509.NameAttribute(NameOID.COMMON_NAME,
                           f"conteur venue CA ({socket.gethostname()})"[:64]),
    ])
    networks = list(_PRIVATE_NETWORKS)
    for host in hosts:
        if _is_ip(host) and not any(ipaddress.ip_address(host) in n for n in networks):
            networks.append(ipaddress.ip_network(host))
    dns = sorted(set(_LOCAL_DOMAINS) | {h for h in hosts if not _is_ip(h)})
    now = dt.datetime.now(dt.UTC)
    cert = (
        x509.CertificateBuilder()
        .subject_name(name).issuer_name(name)
        .public_key(key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - dt.timedelta(days=1))
        .not_valid_after(now + dt.timedelta(days=CA_DAYS))
        .add_extension(x509.BasicConstraints(ca=True, path_length=0), critical=True)
        .add_extension(x509.KeyUsage(
            digital_signature=False, content_commitment=False, key_encipherment=False,
            data_encipherment=False, key_agreement=False, key_cert_sign=True,
            crl_sign=True, encipher_only=False, decipher_only=False), critical=True)
        # Not critical: a phone whose verifier ignores name constraints still accepts
        # the CA; every current browser applies them.
        .add_extension(x509.NameConstraints(
            permitted_subtrees=[x509.IPAddress(n) for n in networks]
            + [x509.DNSName(d) for d in dns],
            excluded_subtrees=None), critical=False)
        .add_extension(x509.SubjectKeyIdentifier.from_public_key(key.public_key()),
                       critical=False)
        .sign(key, hashes.SHA256())
    )
    _write(ca_path, cert.public_bytes(serialization.Encoding.PEM), 0o644)
    return cert


def _make_server_cert(cert_path: Path, key_path: Path, ca, ca_key_path: Path,
                      hosts: list[str]) -> None:
    x509, hashes, serialization, _, ExtendedKeyUsageOID, NameOID = _crypto()
    ca_key = serialization.load_pem_private_key(ca_key_path.read_bytes(), password=None)
    key = _new_key(key_path)
    names = [x509.IPAddress(ipaddress.ip_address(h)) if _is_ip(h) else x509.DNSName(h)
             for h in hosts]
    now = dt.datetime.now(dt.UTC)
    cert = (
        x509.CertificateBuilder()
        # Not a host name: OpenSSL checks a host-like common name against the CA's DNS
        # name constraints when no DNS name is in the SANs, and "127.0.0.1" fails them.
        .subject_name(x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "conteur server")]))
        .issuer_name(ca.subject)
        .public_key(key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - dt.timedelta(days=1))
        .not_valid_after(now + dt.timedelta(days=SERVER_DAYS))
        .add_extension(x509.SubjectAlternativeName(names), critical=False)
        .add_extension(x509.BasicConstraints(ca=False, path_length=None), critical=True)
        .add_extension(x509.KeyUsage(
            digital_signature=True, content_commitment=False, key_encipherment=False,
            data_encipherment=False, key_agreement=False, key_cert_sign=False,
            crl_sign=False, encipher_only=False, decipher_only=False), critical=True)
        .add_extension(x509.ExtendedKeyUsage([ExtendedKeyUsageOID.SERVER_AUTH]),
                       critical=False)
        .add_extension(x509.AuthorityKeyIdentifier.from_issuer_public_key(ca.public_key()),
                       critical=False)
        .sign(ca_key, hashes.SHA256())
    )
    chain = cert.public_bytes(serialization.Encoding.PEM) + ca.public_bytes(
        serialization.Encoding.PEM)
    _write(cert_path, chain, 0o644)
