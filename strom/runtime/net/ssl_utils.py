"""``SSLUtils``: the TLS contexts of the REST endpoint and of its clients from ``security.ssl.rest.*``.

    server = create_rest_server_ssl_context(config)   # None unless security.ssl.rest.enabled
    client = create_rest_client_ssl_context(config)   # None unless security.ssl.rest.enabled

Flink reads Java keystores; strom reads what Python's ``ssl`` and ``cryptography`` can: a PKCS#12 file
(``.p12`` / ``.pfx``, opened with the store's password) or a PEM file (certificates and, in a keystore, the private
key — in the same file or not encrypted, or encrypted with ``security.ssl.rest.key-password``), told apart by
content. A keystore's chain is put in order (the certificate of the private key first). A JKS store is refused with
the ``keytool`` line that converts it. Every failure to read a store is a :class:`ConfigurationError` naming the
option and the file.

``ssl.SSLContext.load_cert_chain`` only reads files: the key is handed to it through a private temporary file,
encrypted with a random one-time password, that is removed before the function returns.
"""

from __future__ import annotations

import os
import re
import secrets
import ssl
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from strom.config import Configuration, SecurityOptions
from strom.exceptions import ConfigurationError

if TYPE_CHECKING:
    from cryptography.x509 import Certificate

__all__ = [
    "KeyStore",
    "create_rest_client_ssl_context",
    "create_rest_server_ssl_context",
    "is_rest_ssl_authentication_enabled",
    "is_rest_ssl_enabled",
    "load_key_store",
    "load_trust_store",
    "pem_bundle",
    "protocol_version",
    "use_key_store",
]

_PROTOCOLS = {"TLSv1.2": ssl.TLSVersion.TLSv1_2, "TLSv1.3": ssl.TLSVersion.TLSv1_3}
_PEM_KEY = re.compile(rb"-----BEGIN ([A-Z ]*)PRIVATE KEY-----.*?-----END \1PRIVATE KEY-----", re.DOTALL)
_JAVA_STORES = {b"\xfe\xed\xfe\xed": "JKS", b"\xce\xce\xce\xce": "JCEKS"}
_CONVERT = "keytool -importkeystore -srckeystore {path} -destkeystore {stem}.p12 -deststoretype PKCS12"


@dataclass(frozen=True, slots=True, kw_only=True)
class KeyStore:
    """A private key and its certificate chain, the key's own certificate first."""

    key: Any  # a cryptography private key (PrivateKeyTypes)
    chain: tuple[Certificate, ...]


def is_rest_ssl_enabled(config: Configuration) -> bool:
    return config.get(SecurityOptions.SSL_REST_ENABLED)


def is_rest_ssl_authentication_enabled(config: Configuration) -> bool:
    """Mutual TLS on the REST endpoint (needs ``security.ssl.rest.enabled`` too, as in Flink)."""
    return is_rest_ssl_enabled(config) and config.get(SecurityOptions.SSL_REST_AUTHENTICATION_ENABLED)


# -- the contexts ---------------------------------------------------------------------------------------------
def create_rest_server_ssl_context(config: Configuration) -> ssl.SSLContext | None:
    """The REST server's context: its keystore, and with authentication its truststore for clients' certificates."""
    if not is_rest_ssl_enabled(config):
        return None
    ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    ctx.minimum_version = protocol_version(config)
    use_key_store(ctx, _configured_key_store(config, "the REST server's certificate"))
    if is_rest_ssl_authentication_enabled(config):
        ctx.verify_mode = ssl.CERT_REQUIRED
        ctx.load_verify_locations(cadata=_configured_trust(config, "the CAs of the clients' certificates"))
    return ctx


def create_rest_client_ssl_context(config: Configuration) -> ssl.SSLContext | None:
    """A REST client's context: the truststore (else the system's CAs), and with authentication its keystore as
    client certificate. Host names are checked."""
    if not is_rest_ssl_enabled(config):
        return None
    ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT)
    ctx.minimum_version = protocol_version(config)
    if config.get(SecurityOptions.SSL_REST_TRUSTSTORE):
        ctx.load_verify_locations(cadata=_configured_trust(config, "the CAs of the server's certificate"))
    else:
        ctx.load_default_certs()
    if is_rest_ssl_authentication_enabled(config):
        use_key_store(ctx, _configured_key_store(config, "the client certificate mutual TLS needs"))
    return ctx


def protocol_version(config: Configuration) -> ssl.TLSVersion:
    raw = config.get(SecurityOptions.SSL_PROTOCOL).strip()
    if raw not in _PROTOCOLS:
        raise ConfigurationError(
            f"option '{SecurityOptions.SSL_PROTOCOL.key}' expects one of {', '.join(_PROTOCOLS)}; got {raw!r}; "
            "hint: older versions are not offered"
        )
    return _PROTOCOLS[raw]


def _configured_key_store(config: Configuration, what: str) -> KeyStore:
    option = SecurityOptions.SSL_REST_KEYSTORE
    path = config.get(option)
    if not path:
        raise ConfigurationError(
            f"expected '{option.key}' ({what}: a PKCS#12 or PEM file) with {SecurityOptions.SSL_REST_ENABLED.key}: "
            "true; got none; hint: docs/operations.md, TLS, makes one with openssl"
        )
    return load_key_store(
        path,
        password=config.get(SecurityOptions.SSL_REST_KEYSTORE_PASSWORD),
        key_password=config.get(SecurityOptions.SSL_REST_KEY_PASSWORD),
        option=option.key,
    )


def _configured_trust(config: Configuration, what: str) -> str:
    option = SecurityOptions.SSL_REST_TRUSTSTORE
    path = config.get(option)
    if not path:
        raise ConfigurationError(
            f"expected '{option.key}' ({what}: a PKCS#12 or PEM file) with "
            f"{SecurityOptions.SSL_REST_AUTHENTICATION_ENABLED.key}: true; got none"
        )
    certs = load_trust_store(path, password=config.get(SecurityOptions.SSL_REST_TRUSTSTORE_PASSWORD), option=option.key)
    return "".join(_pem(c).decode() for c in certs)


def use_key_store(ctx: ssl.SSLContext, store: KeyStore) -> None:
    from cryptography.hazmat.primitives import serialization

    one_time = secrets.token_hex(16)
    key = store.key.private_bytes(
        serialization.Encoding.PEM,
        serialization.PrivateFormat.PKCS8,
        serialization.BestAvailableEncryption(one_time.encode()),
    )
    with tempfile.TemporaryDirectory(prefix="strom-tls-") as tmp:  # mode 0700
        chain_file, key_file = Path(tmp) / "chain.pem", Path(tmp) / "key.pem"
        for path, data in ((chain_file, b"".join(_pem(c) for c in store.chain)), (key_file, key)):
            fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
            with os.fdopen(fd, "wb") as f:
                f.write(data)
        ctx.load_cert_chain(chain_file, key_file, password=one_time)


def pem_bundle(certs: list[Certificate]) -> str:
    """Certificates as one PEM text (what ``SSLContext.load_verify_locations(cadata=...)`` reads)."""
    return "".join(_pem(c).decode() for c in certs)


def _pem(cert: Certificate) -> bytes:
    from cryptography.hazmat.primitives import serialization

    return cert.public_bytes(serialization.Encoding.PEM)


# -- reading stores -------------------------------------------------------------------------------------------
def _read(path: str, option: str) -> bytes:
    try:
        return Path(path).expanduser().read_bytes()
    except OSError as exc:
        raise ConfigurationError(
            f"expected '{option}' to name a readable PKCS#12 or PEM file; got {path!r}: {exc.strerror or exc}; "
            "hint: check the path and that this process's user may read it"
        ) from None


def _refuse_java_store(data: bytes, path: str, option: str) -> None:
    kind = _JAVA_STORES.get(data[:4])
    if kind is not None:
        stem = Path(path).with_suffix("")
        raise ConfigurationError(
            f"expected '{option}' to be a PKCS#12 or PEM file; got a Java {kind} keystore {path!r}; hint: strom "
            f"cannot read {kind}: convert it with `{_CONVERT.format(path=path, stem=stem)}`"
        )


def load_key_store(
    path: str,
    *,
    password: str,
    key_password: str,
    option: str,
    key_password_option: str = SecurityOptions.SSL_REST_KEY_PASSWORD.key,
) -> KeyStore:
    """A private key and its chain from a PKCS#12 or PEM file (``option`` and ``key_password_option`` name the
    settings in errors)."""
    data = _read(path, option)
    _refuse_java_store(data, path, option)
    if b"-----BEGIN " in data:
        certs = _pem_certificates(data, path, option)
        key = _pem_private_key(data, path, option, key_password or password, key_password_option)
    else:
        key, certs = _pkcs12(data, path, option, [password, key_password])
        if key is None:
            raise ConfigurationError(
                f"expected '{option}' {path!r} to hold a private key; got certificates only; hint: a keystore holds "
                "the key and its certificate (a truststore only certificates)"
            )
    return KeyStore(key=key, chain=_order_chain(key, certs, path, option))


def load_trust_store(path: str, *, password: str, option: str) -> list[Certificate]:
    """The certificates of a PKCS#12 or PEM file (a private key in it is ignored)."""
    data = _read(path, option)
    _refuse_java_store(data, path, option)
    if b"-----BEGIN " in data:
        return _pem_certificates(data, path, option)
    _, certs = _pkcs12(data, path, option, [password])
    if not certs:
        raise ConfigurationError(f"expected '{option}' {path!r} to hold CA certificates; got none")
    return certs


def _pem_certificates(data: bytes, path: str, option: str) -> list[Certificate]:
    from cryptography import x509

    try:
        return list(x509.load_pem_x509_certificates(data))
    except ValueError as exc:
        raise ConfigurationError(
            f"expected '{option}' {path!r} to hold PEM certificates (-----BEGIN CERTIFICATE-----); got {exc}"
        ) from None


def _pem_private_key(data: bytes, path: str, option: str, password: str, password_option: str) -> Any:
    from cryptography.hazmat.primitives import serialization

    found = _PEM_KEY.search(data)
    if found is None:
        raise ConfigurationError(
            f"expected '{option}' {path!r} to hold a private key (-----BEGIN PRIVATE KEY-----) with its certificate; "
            "got certificates only; hint: concatenate the key and the certificate chain into one PEM file"
        )
    block = found.group(0)
    encrypted = b"ENCRYPTED" in block
    if encrypted and not password:
        raise ConfigurationError(
            f"expected '{password_option}' for the encrypted private key in '{option}' {path!r}; got none"
        )
    try:
        return serialization.load_pem_private_key(block, password.encode() if encrypted else None)
    except (ValueError, TypeError) as exc:
        raise ConfigurationError(
            f"expected '{password_option}' to decrypt the private key in '{option}' "
            f"{path!r}; got {exc}; hint: check the password (an unencrypted key needs none)"
        ) from None


def _pkcs12(data: bytes, path: str, option: str, passwords: list[str]) -> tuple[Any, list[Certificate]]:
    from cryptography.hazmat.primitives.serialization import pkcs12

    if not data.startswith(b"\x30"):  # a DER SEQUENCE
        raise ConfigurationError(
            f"expected '{option}' {path!r} to be a PKCS#12 (.p12/.pfx) or PEM file; got neither; hint: "
            "docs/operations.md, TLS, shows how to make one"
        )
    for password in dict.fromkeys(passwords):  # in order, without repeats
        try:
            loaded = pkcs12.load_pkcs12(data, password.encode() if password else None)
        except ValueError:
            continue
        certs = ([loaded.cert.certificate] if loaded.cert is not None else []) + [
            c.certificate for c in loaded.additional_certs
        ]
        return loaded.key, certs
    setting = f"{option}-password"
    raise ConfigurationError(
        f"expected '{setting}' to open the PKCS#12 file {path!r} ('{option}'); got "
        f"{'a wrong password' if any(passwords) else 'no password'} (or a damaged file); hint: check '{setting}'"
    )


def _order_chain(key: Any, certs: list[Certificate], path: str, option: str) -> tuple[Certificate, ...]:
    from cryptography.hazmat.primitives import serialization

    def spki(public_key: Any) -> bytes:
        der: bytes = public_key.public_bytes(
            serialization.Encoding.DER, serialization.PublicFormat.SubjectPublicKeyInfo
        )
        return der

    own = spki(key.public_key())
    leaf = [c for c in certs if spki(c.public_key()) == own]
    if not leaf:
        raise ConfigurationError(
            f"expected '{option}' {path!r} to hold the certificate of its private key; got {len(certs)} "
            "certificate(s), none for that key; hint: put the key's certificate (and its chain) in the file"
        )
    return (leaf[0], *[c for c in certs if c is not leaf[0]])
