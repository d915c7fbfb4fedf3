"""Internal TLS (``security.ssl.internal.*``): the settings and their travel to a TaskManager process (paths on the
command line, passwords apart), and real handshakes on loopback — an RPC call and a data connection over mutual
TLS; a peer without a certificate the truststore signed, or speaking plain TCP, gets no call through."""

from __future__ import annotations

import asyncio
import ssl
from pathlib import Path

import pytest
from tls_certificates import KEY_PASSWORD, STORE_PASSWORD, TRUST_PASSWORD, Pki, make_pki

from strom.config import Configuration, SecurityOptions
from strom.exceptions import AuthenticationError, ConfigurationError, RpcError
from strom.runtime.net.internal_ssl import InternalSslSettings
from strom.runtime.network.connection_manager import NettyConnectionManager
from strom.runtime.network.partition_manager import ResultPartitionManager
from strom.runtime.rpc import RpcClient, RpcServer, rpc_method
from strom.runtime.rpc.auth import new_secret
from strom.runtime.taskexecutor.task_manager_configuration import TaskManagerConfiguration

SECRET = new_secret()


@pytest.fixture(scope="module")
def pki(tmp_path_factory: pytest.TempPathFactory) -> Pki:
    return make_pki(tmp_path_factory.mktemp("pki"))


def _config(pki: Pki, **extra: str) -> Configuration:
    return Configuration(
        {
            "security.ssl.internal.enabled": "true",
            "security.ssl.internal.keystore": str(pki.server_p12),
            "security.ssl.internal.keystore-password": STORE_PASSWORD,
            "security.ssl.internal.truststore": str(pki.ca_p12),
            "security.ssl.internal.truststore-password": TRUST_PASSWORD,
            **extra,
        }
    )


class Echo:
    @rpc_method
    def echo(self, value: str) -> str:
        return value


def test_off_by_default_and_both_stores_required(pki: Pki) -> None:
    assert InternalSslSettings.from_configuration(Configuration()) is None
    with pytest.raises(ConfigurationError, match=r"expected 'security.ssl.internal.truststore'.*got none"):
        InternalSslSettings.from_configuration(
            Configuration({"security.ssl.internal.enabled": "true", "security.ssl.internal.keystore": "k.p12"})
        )
    with pytest.raises(ConfigurationError, match=r"TLSv1\.2, TLSv1\.3"):
        InternalSslSettings.from_configuration(_config(pki, **{"security.ssl.protocol": "SSLv3"}))
    # Flink's deprecated switch turns it on too
    old = Configuration({"security.ssl.enabled": "true"})
    assert old.get(SecurityOptions.SSL_INTERNAL_ENABLED)


def test_passwords_travel_apart_from_the_command_line(pki: Pki) -> None:
    settings = TaskManagerConfiguration.from_configuration(_config(pki))
    assert settings.internal_ssl is not None
    properties = settings.dynamic_properties()
    assert "security.ssl.internal.enabled=true" in properties
    assert not any(STORE_PASSWORD in p or TRUST_PASSWORD in p for p in properties)
    assert STORE_PASSWORD not in repr(settings) and TRUST_PASSWORD not in repr(settings.internal_ssl)
    sensitive = settings.sensitive_properties()
    assert sensitive == {
        "security.ssl.internal.keystore-password": STORE_PASSWORD,
        "security.ssl.internal.truststore-password": TRUST_PASSWORD,
    }
    assert TaskManagerConfiguration.from_dynamic_properties(properties, sensitive) == settings


def test_a_store_that_cannot_be_read_is_named(pki: Pki, tmp_path: Path) -> None:
    settings = InternalSslSettings.from_configuration(
        _config(pki, **{"security.ssl.internal.keystore": str(pki.server_encrypted_pem)})
    )
    assert settings is not None
    with pytest.raises(ConfigurationError, match=r"expected 'security\.ssl\.internal\.key-password' to decrypt"):
        settings.contexts()
    assert InternalSslSettings.from_configuration(
        _config(
            pki,
            **{
                "security.ssl.internal.keystore": str(pki.server_encrypted_pem),
                "security.ssl.internal.key-password": KEY_PASSWORD,
            },
        )
    ), "a key password opens it"


@pytest.mark.timeout(60)
def test_rpc_over_mutual_tls_and_peers_that_are_refused(pki: Pki) -> None:
    asyncio.run(_rpc_over_mutual_tls_and_peers_that_are_refused(pki))


async def _rpc_over_mutual_tls_and_peers_that_are_refused(pki: Pki) -> None:
    settings = InternalSslSettings.from_configuration(_config(pki))
    assert settings is not None
    contexts = settings.contexts()
    server = RpcServer(Echo(), secret=SECRET, ssl_context=contexts.server, name="tls-server")
    await server.start()
    host, port = server.address
    try:
        client = await RpcClient.connect(host, port, secret=SECRET, ssl_context=contexts.client)
        try:
            assert await client.call("echo", "over TLS", timeout=10) == "over TLS"
        finally:
            await client.close()
        # a client that trusts the server but presents no certificate: the server ends the connection (TLS 1.3
        # verifies the client's certificate after the client's side of the handshake: before the challenge)
        no_cert = ssl.create_default_context(cafile=str(pki.ca_pem))
        with pytest.raises((RpcError, AuthenticationError, ConnectionError, ssl.SSLError)):
            c = await RpcClient.connect(host, port, secret=SECRET, ssl_context=no_cert, timeout=5)
            await c.call("echo", "x", timeout=5)
        # a plain TCP peer (the cluster secret alone): no handshake, no call
        with pytest.raises((RpcError, AuthenticationError, ConnectionError)):
            c = await RpcClient.connect(host, port, secret=SECRET, timeout=5)
            await c.call("echo", "x", timeout=5)
        assert server.statistics().calls_served == 1
    finally:
        await server.close()


@pytest.mark.timeout(60)
def test_a_client_refuses_a_server_whose_certificate_another_ca_signed(pki: Pki) -> None:
    asyncio.run(_a_client_refuses_a_server_whose_certificate_another_ca_signed(pki))


async def _a_client_refuses_a_server_whose_certificate_another_ca_signed(pki: Pki) -> None:
    stranger = InternalSslSettings.from_configuration(
        _config(pki, **{"security.ssl.internal.keystore": str(pki.stranger_p12)})
    )
    ours = InternalSslSettings.from_configuration(_config(pki))
    assert stranger is not None and ours is not None
    server = RpcServer(Echo(), secret=SECRET, ssl_context=stranger.contexts().server, name="stranger")
    await server.start()
    try:
        with pytest.raises(RpcError, match="expected a TLS handshake"):
            await RpcClient.connect(*server.address, secret=SECRET, ssl_context=ours.contexts().client, timeout=5)
    finally:
        await server.close()


@pytest.mark.timeout(60)
def test_data_connections_use_the_contexts(pki: Pki) -> None:
    asyncio.run(_data_connections_use_the_contexts(pki))


async def _data_connections_use_the_contexts(pki: Pki) -> None:
    settings = InternalSslSettings.from_configuration(_config(pki))
    assert settings is not None
    contexts = settings.contexts()
    manager = NettyConnectionManager(
        ResultPartitionManager(), secret=SECRET, host="127.0.0.1", max_frame_bytes=1 << 20, ssl_contexts=contexts
    )
    await manager.start()
    try:
        host, port = manager.address
        _, writer = await asyncio.open_connection(host, port, ssl=contexts.client, server_hostname=host)
        ssl_object = writer.get_extra_info("ssl_object")
        assert ssl_object is not None and ssl_object.version() in ("TLSv1.2", "TLSv1.3")
        assert ssl_object.getpeercert()["subject"] == ((("commonName", "strom jobmanager"),),)
        writer.close()
        reader2, writer2 = await asyncio.open_connection(host, port)  # plain TCP: the server sends no handshake
        writer2.write(b"\x00" * 64)
        await writer2.drain()
        assert await asyncio.wait_for(reader2.read(), 10) in (b"", b"\x15\x03\x01\x00\x02\x02\x16")  # closed / alert
        writer2.close()
    finally:
        await manager.close()
