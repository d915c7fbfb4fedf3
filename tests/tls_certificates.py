"""A throw-away PKI for the REST TLS tests: a CA, a server certificate for ``127.0.0.1`` and ``localhost``, a client
certificate, and a second CA nobody trusts — written as the PEM and PKCS#12 stores ``security.ssl.rest.*`` reads.
Importable from every test directory (``pythonpath`` in pyproject.toml). EC P-256 keys: generated in milliseconds.
"""

from __future__ import annotations

import datetime
import ipaddress
from dataclasses import dataclass
from pathlib import Path

from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.hazmat.primitives.serialization import pkcs12
from cryptography.x509.oid import ExtendedKeyUsageOID, NameOID

__all__ = ["KEY_PASSWORD", "STORE_PASSWORD", "TRUST_PASSWORD", "Pki", "make_pki"]

STORE_PASSWORD = "store-secret"
KEY_PASSWORD = "key-secret"
TRUST_PASSWORD = "trust-secret"


@dataclass(frozen=True, slots=True, kw_only=True)
class Pki:
    ca_pem: Path  #: the CA's certificate (a PEM truststore)
    ca_p12: Path  #: the CA's certificate in PKCS#12, TRUST_PASSWORD
    server_pem: Path  #: the server's key, then its certificate and the CA's, in one PEM file
    server_encrypted_pem: Path  #: the same with the key encrypted with KEY_PASSWORD
    server_p12: Path  #: the server's key and chain in PKCS#12, STORE_PASSWORD
    client_pem: Path  #: the client's key and certificate (PEM)
    client_p12: Path  #: the client's key and chain in PKCS#12, STORE_PASSWORD
    stranger_p12: Path  #: a client certificate of a CA nobody trusts (PKCS#12, STORE_PASSWORD)


def _name(common_name: str) -> x509.Name:
    return x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, common_name)])


def _certificate(
    subject: str,
    key: ec.EllipticCurvePrivateKey,
    issuer: tuple[x509.Certificate, ec.EllipticCurvePrivateKey] | None,
    *,
    server: bool = False,
) -> x509.Certificate:
    now = datetime.datetime.now(datetime.UTC)
    builder = (
        x509.CertificateBuilder()
        .subject_name(_name(subject))
        .issuer_name(issuer[0].subject if issuer else _name(subject))
        .public_key(key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - datetime.timedelta(minutes=5))
        .not_valid_after(now + datetime.timedelta(days=2))
        .add_extension(x509.BasicConstraints(ca=issuer is None, path_length=None), critical=True)
    )
    if issuer is None:
        builder = builder.add_extension(
            x509.KeyUsage(False, False, False, False, False, True, True, False, False), critical=True
        ).add_extension(x509.SubjectKeyIdentifier.from_public_key(key.public_key()), critical=False)
    else:
        builder = builder.add_extension(
            x509.AuthorityKeyIdentifier.from_issuer_public_key(issuer[1].public_key()), critical=False
        ).add_extension(
            # the server's keystore also serves as the CLI's client certificate (as in Flink: one keystore)
            x509.ExtendedKeyUsage(
                [ExtendedKeyUsageOID.SERVER_AUTH, ExtendedKeyUsageOID.CLIENT_AUTH]
                if server
                else [ExtendedKeyUsageOID.CLIENT_AUTH]
            ),
            critical=False,
        )
    if server:
        names: list[x509.GeneralName] = [
            x509.DNSName("localhost"),
            x509.IPAddress(ipaddress.ip_address("127.0.0.1")),
        ]
        builder = builder.add_extension(x509.SubjectAlternativeName(names), critical=False)
    return builder.sign(issuer[1] if issuer else key, hashes.SHA256())


def _pem(*certs: x509.Certificate) -> bytes:
    return b"".join(c.public_bytes(serialization.Encoding.PEM) for c in certs)


def _key_pem(key: ec.EllipticCurvePrivateKey, password: str = "") -> bytes:
    encryption: serialization.KeySerializationEncryption = (
        serialization.BestAvailableEncryption(password.encode()) if password else serialization.NoEncryption()
    )
    return key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, encryption)


def _p12(key: ec.EllipticCurvePrivateKey | None, cert: x509.Certificate | None, cas: list[x509.Certificate]) -> bytes:
    password = TRUST_PASSWORD if key is None else STORE_PASSWORD
    encryption = serialization.BestAvailableEncryption(password.encode())
    return pkcs12.serialize_key_and_certificates(b"strom", key, cert, cas, encryption)


def make_pki(directory: Path) -> Pki:
    directory.mkdir(parents=True, exist_ok=True)
    ca_key, stranger_ca_key = ec.generate_private_key(ec.SECP256R1()), ec.generate_private_key(ec.SECP256R1())
    ca = _certificate("strom test CA", ca_key, None)
    stranger_ca = _certificate("nobody's CA", stranger_ca_key, None)
    server_key, client_key, stranger_key = (ec.generate_private_key(ec.SECP256R1()) for _ in range(3))
    server = _certificate("strom jobmanager", server_key, (ca, ca_key), server=True)
    client = _certificate("strom client", client_key, (ca, ca_key))
    stranger = _certificate("stranger", stranger_key, (stranger_ca, stranger_ca_key))
    files = {
        "ca_pem": _pem(ca),
        "ca_p12": _p12(None, None, [ca]),
        "server_pem": _key_pem(server_key) + _pem(server, ca),
        "server_encrypted_pem": _pem(ca, server) + _key_pem(server_key, KEY_PASSWORD),  # any order
        "server_p12": _p12(server_key, server, [ca]),
        "client_pem": _pem(client) + _key_pem(client_key),
        "client_p12": _p12(client_key, client, [ca]),
        "stranger_p12": _p12(stranger_key, stranger, [stranger_ca]),
    }
    paths: dict[str, Path] = {}
    for name, data in files.items():
        path = directory / (name.rsplit("_", 1)[0] + "." + name.rsplit("_", 1)[1])
        path.write_bytes(data)
        paths[name] = path
    return Pki(**paths)
