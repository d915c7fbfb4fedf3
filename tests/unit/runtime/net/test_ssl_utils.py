"""The REST endpoint's TLS contexts from ``security.ssl.rest.*``: PEM and PKCS#12 stores load (checked by a TLS
handshake in memory, no sockets), and every unreadable store is a ConfigurationError naming the key and the file."""

from __future__ import annotations

import ssl
from pathlib import Path

import pytest
from tls_certificates import KEY_PASSWORD, STORE_PASSWORD, TRUST_PASSWORD, Pki, make_pki

from strom.config import Configuration
from strom.exceptions import ConfigurationError
from strom.runtime.net.ssl_utils import create_rest_client_ssl_context, create_rest_server_ssl_context


@pytest.fixture(scope="module")
def pki(tmp_path_factory: pytest.TempPathFactory) -> Pki:
    return make_pki(tmp_path_factory.mktemp("pki"))


def _conf(**options: object) -> Configuration:
    conf = Configuration({"security.ssl.rest.enabled": True})
    for key, value in options.items():
        conf.set_string("security.ssl.rest." + key.replace("_", "-"), str(value) if isinstance(value, Path) else value)
    return conf


def _handshake(server: ssl.SSLContext, client: ssl.SSLContext, hostname: str = "127.0.0.1") -> str:
    """A TLS handshake between the two contexts over memory BIOs; the version agreed on."""
    c_in, c_out, s_in, s_out = ssl.MemoryBIO(), ssl.MemoryBIO(), ssl.MemoryBIO(), ssl.MemoryBIO()
    c = client.wrap_bio(c_in, c_out, server_hostname=hostname)
    s = server.wrap_bio(s_in, s_out, server_side=True)
    done = {"c": False, "s": False}
    for _ in range(20):
        for name, side in (("c", c), ("s", s)):
            if not done[name]:
                try:
                    side.do_handshake()
                    done[name] = True
                except ssl.SSLWantReadError:
                    pass
        s_in.write(c_out.read())
        c_in.write(s_out.read())
        if all(done.values()):
            c.write(b"ping")  # TLS 1.3: the server checks a client certificate after the client's handshake
            s_in.write(c_out.read())
            assert s.read(4) == b"ping"
            return str(c.version())
    raise AssertionError("the handshake did not finish")


@pytest.mark.timeout(30)
@pytest.mark.parametrize("store", ["server_pem", "server_p12", "server_encrypted_pem"])
def test_pem_and_pkcs12_keystores_serve_a_client_that_trusts_the_ca(pki: Pki, store: str) -> None:
    server = create_rest_server_ssl_context(
        _conf(keystore=getattr(pki, store), keystore_password=STORE_PASSWORD, key_password=KEY_PASSWORD)
    )
    for trust in (_conf(truststore=pki.ca_pem), _conf(truststore=pki.ca_p12, truststore_password=TRUST_PASSWORD)):
        client = create_rest_client_ssl_context(trust)
        assert server is not None and client is not None
        assert server.minimum_version == ssl.TLSVersion.TLSv1_2
        assert _handshake(server, client) in ("TLSv1.2", "TLSv1.3")
        assert _handshake(server, client, "localhost")


@pytest.mark.timeout(30)
def test_without_the_option_there_is_no_context_and_a_client_without_truststore_uses_the_system_cas(pki: Pki) -> None:
    assert create_rest_server_ssl_context(Configuration()) is None
    assert create_rest_client_ssl_context(Configuration()) is None
    server = create_rest_server_ssl_context(_conf(keystore=pki.server_pem))
    client = create_rest_client_ssl_context(_conf())
    assert server is not None and client is not None
    with pytest.raises(ssl.SSLCertVerificationError, match=r"unable to get local issuer|self.signed"):
        _handshake(server, client)


@pytest.mark.timeout(30)
def test_mutual_tls_needs_a_client_certificate_the_truststore_signed(pki: Pki) -> None:
    mutual = {"authentication_enabled": True, "truststore": pki.ca_pem}
    server = create_rest_server_ssl_context(_conf(keystore=pki.server_p12, keystore_password=STORE_PASSWORD, **mutual))
    assert server is not None and server.verify_mode == ssl.CERT_REQUIRED
    with_cert = create_rest_client_ssl_context(_conf(keystore=pki.client_pem, **mutual))
    without = create_rest_client_ssl_context(_conf(truststore=pki.ca_pem))
    stranger = create_rest_client_ssl_context(
        _conf(keystore=pki.stranger_p12, keystore_password=STORE_PASSWORD, **mutual)
    )
    assert with_cert is not None and without is not None and stranger is not None
    assert _handshake(server, with_cert)
    with pytest.raises(ssl.SSLError, match=r"(?i)certificate"):
        _handshake(server, without)
    with pytest.raises(ssl.SSLError, match=r"(?i)certificate"):
        _handshake(server, stranger)


@pytest.mark.timeout(30)
def test_unreadable_stores_are_configuration_errors_naming_the_key_and_the_file(pki: Pki, tmp_path: Path) -> None:
    def refused(conf: Configuration, *fragments: str) -> None:
        with pytest.raises(ConfigurationError) as caught:
            create_rest_server_ssl_context(conf)
        for fragment in fragments:
            assert fragment in str(caught.value), str(caught.value)

    p12 = str(pki.server_p12)
    refused(_conf(keystore=p12, keystore_password="wrong"), "'security.ssl.rest.keystore-password'", p12, "wrong")
    refused(_conf(keystore=p12), "'security.ssl.rest.keystore-password'", p12, "no password")
    missing = str(tmp_path / "nope.p12")
    refused(_conf(keystore=missing), "'security.ssl.rest.keystore'", missing, "No such file")
    jks = tmp_path / "rest.jks"
    jks.write_bytes(b"\xfe\xed\xfe\xed" + b"\x00" * 60)
    refused(_conf(keystore=jks), "'security.ssl.rest.keystore'", "JKS", "keytool -importkeystore", "PKCS12")
    garbage = tmp_path / "garbage.bin"
    garbage.write_bytes(b"not a store")
    refused(_conf(keystore=garbage), "'security.ssl.rest.keystore'", "PKCS#12", "PEM", str(garbage))
    enc = str(pki.server_encrypted_pem)
    refused(_conf(keystore=enc), "'security.ssl.rest.key-password'", enc)
    refused(_conf(keystore=enc, key_password="wrong"), "'security.ssl.rest.key-password'", enc)
    refused(_conf(keystore=pki.ca_pem), "'security.ssl.rest.keystore'", "private key", str(pki.ca_pem))
    refused(_conf(), "'security.ssl.rest.keystore'", "got none")
    refused(_conf(keystore=pki.server_pem, authentication_enabled=True), "'security.ssl.rest.truststore'", "got none")
    trust = str(pki.ca_p12)
    refused(
        _conf(keystore=pki.server_pem, authentication_enabled=True, truststore=trust, truststore_password="x"),
        "'security.ssl.rest.truststore-password'",
        trust,
    )
    bad_protocol = _conf(keystore=pki.server_pem)
    bad_protocol.set_string("security.ssl.protocol", "TLSv1")
    refused(bad_protocol, "'security.ssl.protocol'", "TLSv1.2")


@pytest.mark.timeout(30)
def test_a_client_failure_names_the_url_and_the_option_to_set(pki: Pki) -> None:
    from strom.deploy.standalone.rest_client import _tls_failure

    server = create_rest_server_ssl_context(_conf(keystore=pki.server_pem))
    client = create_rest_client_ssl_context(_conf(truststore=pki.ca_pem))
    assert server is not None and client is not None
    with pytest.raises(ssl.SSLCertVerificationError) as mismatch:
        _handshake(server, client, "jobmanager.example")
    message = _tls_failure(mismatch.value, "https://jobmanager.example:8081", str(pki.ca_pem), "")
    assert message is not None and "to name 'jobmanager.example'" in message and "subject alternative names" in message
    system = create_rest_client_ssl_context(_conf())
    assert system is not None
    with pytest.raises(ssl.SSLCertVerificationError) as untrusted:
        _handshake(server, system)
    message = _tls_failure(untrusted.value, "https://127.0.0.1:8081", "", "")
    assert message is not None and "https://127.0.0.1:8081" in message and "the system's CA certificates" in message
    assert "security.ssl.rest.truststore" in message
    assert _tls_failure(ConnectionRefusedError(111, "refused"), "https://127.0.0.1:1", "", "") is None
