"""TLS for the cluster's internal connections (Flink's ``SSLUtils.createInternalServerSSLEngineFactory`` and
``createInternalClientSSLEngineFactory``, ``security.ssl.internal.*``): RPC between the JobManager and the
TaskManagers and the data connections between TaskManagers.

    settings = InternalSslSettings.from_configuration(config)   # None unless security.ssl.internal.enabled
    contexts = settings.contexts()                               # a server and a client SSLContext, built once

As in Flink, internal TLS is always mutual: every process presents the internal keystore's certificate, as server
and as client, and accepts only peers whose certificate the internal truststore signed; the client checks the
server's host name unless ``security.ssl.verify-hostname`` is off. The cluster secret's HMAC handshake still runs
inside the TLS channel. The settings are a picklable value that travels to a TaskManager process with the cluster
secret: :meth:`~InternalSslSettings.dynamic_properties` gives the paths for its command line,
:meth:`~InternalSslSettings.passwords` the passwords for its standard input — never argv.
"""

from __future__ import annotations

import ssl
from collections.abc import Mapping
from dataclasses import dataclass

from strom.config import Configuration, SecurityOptions
from strom.exceptions import ConfigurationError
from strom.runtime.net.ssl_utils import load_key_store, load_trust_store, pem_bundle, protocol_version, use_key_store

__all__ = ["InternalSslContexts", "InternalSslSettings", "internal_ssl_contexts"]

_O = SecurityOptions
_PASSWORD_OPTIONS = (
    _O.SSL_INTERNAL_KEYSTORE_PASSWORD,
    _O.SSL_INTERNAL_KEY_PASSWORD,
    _O.SSL_INTERNAL_TRUSTSTORE_PASSWORD,
)


@dataclass(frozen=True, slots=True)
class InternalSslContexts:
    """The contexts of one process: ``server`` for what it serves (RPC, data), ``client`` for what it connects to."""

    server: ssl.SSLContext
    client: ssl.SSLContext


@dataclass(frozen=True, slots=True, kw_only=True)
class InternalSslSettings:
    """``security.ssl.internal.*`` (with ``security.ssl.protocol`` and ``security.ssl.verify-hostname``)."""

    keystore: str
    truststore: str
    keystore_password: str = ""
    key_password: str = ""
    truststore_password: str = ""
    protocol: str = "TLSv1.2"
    verify_hostname: bool = True

    def __repr__(self) -> str:  # passwords never reach a log line or a traceback
        return (
            f"InternalSslSettings(keystore={self.keystore!r}, truststore={self.truststore!r}, "
            f"protocol={self.protocol!r}, verify_hostname={self.verify_hostname})"
        )

    @classmethod
    def from_configuration(cls, config: Configuration) -> InternalSslSettings | None:
        """The settings, checked (both stores named); ``None`` unless ``security.ssl.internal.enabled``."""
        if not config.get(_O.SSL_INTERNAL_ENABLED):
            return None
        for option in (_O.SSL_INTERNAL_KEYSTORE, _O.SSL_INTERNAL_TRUSTSTORE):
            if not config.get(option):
                raise ConfigurationError(
                    f"expected '{option.key}' (a PKCS#12 or PEM file) with {_O.SSL_INTERNAL_ENABLED.key}: true; got "
                    "none; hint: internal TLS is mutual — every cluster process needs the keystore it presents and "
                    "the truststore of its peers' CA (docs/operations.md, TLS)"
                )
        settings = cls(
            keystore=config.get(_O.SSL_INTERNAL_KEYSTORE),
            truststore=config.get(_O.SSL_INTERNAL_TRUSTSTORE),
            keystore_password=config.get(_O.SSL_INTERNAL_KEYSTORE_PASSWORD),
            key_password=config.get(_O.SSL_INTERNAL_KEY_PASSWORD),
            truststore_password=config.get(_O.SSL_INTERNAL_TRUSTSTORE_PASSWORD),
            protocol=config.get(_O.SSL_PROTOCOL),
            verify_hostname=config.get(_O.SSL_VERIFY_HOSTNAME),
        )
        protocol_version(settings._configuration())  # refuse an unknown protocol where the cluster starts
        return settings

    @classmethod
    def from_properties(cls, properties: Mapping[str, str], passwords: Mapping[str, str]) -> InternalSslSettings | None:
        """Back from :meth:`dynamic_properties` and :meth:`passwords` (a TaskManager process)."""
        return cls.from_configuration(Configuration({**properties, **passwords}))

    def dynamic_properties(self) -> dict[str, str]:
        """The settings without the passwords, as options (for a TaskManager's command line)."""
        return {
            _O.SSL_INTERNAL_ENABLED.key: "true",
            _O.SSL_INTERNAL_KEYSTORE.key: self.keystore,
            _O.SSL_INTERNAL_TRUSTSTORE.key: self.truststore,
            _O.SSL_PROTOCOL.key: self.protocol,
            _O.SSL_VERIFY_HOSTNAME.key: "true" if self.verify_hostname else "false",
        }

    def passwords(self) -> dict[str, str]:
        """The passwords, as options (for a TaskManager's standard input)."""
        values = (self.keystore_password, self.key_password, self.truststore_password)
        return {option.key: value for option, value in zip(_PASSWORD_OPTIONS, values, strict=True) if value}

    def contexts(self) -> InternalSslContexts:
        """Both contexts, from the stores (read now; a :class:`ConfigurationError` names a store it cannot read)."""
        store = load_key_store(
            self.keystore,
            password=self.keystore_password,
            key_password=self.key_password,
            option=_O.SSL_INTERNAL_KEYSTORE.key,
            key_password_option=_O.SSL_INTERNAL_KEY_PASSWORD.key,
        )
        trusted = pem_bundle(
            load_trust_store(self.truststore, password=self.truststore_password, option=_O.SSL_INTERNAL_TRUSTSTORE.key)
        )
        version = protocol_version(self._configuration())
        server = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
        client = ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT)
        for ctx in (server, client):
            ctx.minimum_version = version
            use_key_store(ctx, store)
            ctx.load_verify_locations(cadata=trusted)
            ctx.verify_mode = ssl.CERT_REQUIRED
        client.check_hostname = self.verify_hostname
        return InternalSslContexts(server=server, client=client)

    def _configuration(self) -> Configuration:
        return Configuration({_O.SSL_PROTOCOL.key: self.protocol})


def internal_ssl_contexts(config: Configuration) -> InternalSslContexts | None:
    """A JobManager's contexts from its configuration (None: internal TLS off)."""
    settings = InternalSslSettings.from_configuration(config)
    return settings.contexts() if settings is not None else None
