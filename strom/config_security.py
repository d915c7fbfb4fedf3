"""``SecurityOptions``: TLS of the REST endpoint under Flink's ``security.ssl.rest.*`` keys and of the cluster's
internal connections (RPC and data) under ``security.ssl.internal.*`` (re-exported by :mod:`strom.config`; the
contexts are built by :mod:`strom.runtime.net.ssl_utils` and :mod:`strom.runtime.net.internal_ssl`).

Flink's stores are Java keystores (JKS or PKCS12); strom reads PKCS#12 files (``.p12`` / ``.pfx``) and PEM files
(a certificate chain and, for a keystore, its private key, possibly in the same file), told apart by content. A
JKS store converts with ``keytool -importkeystore -srckeystore rest.jks -destkeystore rest.p12
-deststoretype PKCS12``.
"""

from __future__ import annotations

from strom.config_option import ConfigOption, _opt

__all__ = [
    "HIDDEN_CONTENT",
    "SENSITIVE_DEFINES_ENV",
    "SENSITIVE_KEY_FRAGMENTS",
    "SecurityOptions",
    "hide_sensitive_arguments",
    "is_sensitive_key",
    "split_sensitive_defines",
]

_STORE = "A PKCS#12 file (.p12/.pfx) or a PEM file, told apart by content (no JKS: convert it to PKCS12 with keytool)"


class SecurityOptions:
    """TLS of the JobManager's REST API and of every client that calls it (Flink's ``SecurityOptions``)."""

    SSL_REST_ENABLED: ConfigOption[bool] = _opt(
        "security.ssl.rest.enabled",
        bool,
        False,
        "Serve the REST API and the dashboard over HTTPS (TLS >= 1.2), and have clients (the CLI, `strom run -m`, "
        "`execute()` on a remote target) call it over HTTPS. Set it on the JobManager and on the clients.",
    )
    SSL_REST_KEYSTORE: ConfigOption[str] = _opt(
        "security.ssl.rest.keystore",
        str,
        "",
        f"The server's certificate chain and private key (needed by the JobManager; by a client only with "
        f"`security.ssl.rest.authentication-enabled`, as its client certificate). {_STORE}.",
    )
    SSL_REST_KEYSTORE_PASSWORD: ConfigOption[str] = _opt(
        "security.ssl.rest.keystore-password",
        str,
        "",
        "Password of the keystore (a PKCS#12 file's; a PEM file has none, empty).",
    )
    SSL_REST_KEY_PASSWORD: ConfigOption[str] = _opt(
        "security.ssl.rest.key-password",
        str,
        "",
        "Password of the private key in the keystore (an encrypted PEM key; for PKCS#12, tried when the keystore "
        "password does not open it). Empty: the keystore password.",
    )
    SSL_REST_TRUSTSTORE: ConfigOption[str] = _opt(
        "security.ssl.rest.truststore",
        str,
        "",
        f"The CA certificates a client trusts for the server's certificate (and the JobManager, with "
        f"`security.ssl.rest.authentication-enabled`, for clients' certificates). {_STORE}. Empty on a client: "
        "the system's CA certificates.",
    )
    SSL_REST_TRUSTSTORE_PASSWORD: ConfigOption[str] = _opt(
        "security.ssl.rest.truststore-password",
        str,
        "",
        "Password of the truststore (a PKCS#12 file's; a PEM file has none, empty).",
    )
    SSL_REST_AUTHENTICATION_ENABLED: ConfigOption[bool] = _opt(
        "security.ssl.rest.authentication-enabled",
        bool,
        False,
        "Mutual TLS: the JobManager refuses a client without a certificate its truststore signed, and clients "
        "present their keystore's certificate.",
    )
    SSL_INTERNAL_ENABLED: ConfigOption[bool] = _opt(
        "security.ssl.internal.enabled",
        bool,
        False,
        "Encrypt and mutually authenticate every connection inside the cluster — RPC between the JobManager and the "
        "TaskManagers, and the data connections between TaskManagers — with TLS (>= 1.2), on top of the cluster "
        "secret's HMAC handshake. Every process presents the internal keystore's certificate and accepts only peers "
        "whose certificate the internal truststore signed. Set it for the whole cluster.",
        deprecated_keys=("security.ssl.enabled",),
    )
    SSL_INTERNAL_KEYSTORE: ConfigOption[str] = _opt(
        "security.ssl.internal.keystore",
        str,
        "",
        f"The certificate chain and private key every cluster process presents, as server and as client (its "
        f"certificate needs both uses, or none). {_STORE}.",
    )
    SSL_INTERNAL_KEYSTORE_PASSWORD: ConfigOption[str] = _opt(
        "security.ssl.internal.keystore-password",
        str,
        "",
        "Password of the internal keystore (a PKCS#12 file's; a PEM file has none, empty).",
    )
    SSL_INTERNAL_KEY_PASSWORD: ConfigOption[str] = _opt(
        "security.ssl.internal.key-password",
        str,
        "",
        "Password of the private key in the internal keystore (an encrypted PEM key; for PKCS#12, tried when the "
        "keystore password does not open it). Empty: the keystore password.",
    )
    SSL_INTERNAL_TRUSTSTORE: ConfigOption[str] = _opt(
        "security.ssl.internal.truststore",
        str,
        "",
        f"The CA certificates a cluster process accepts its peers' certificates from. {_STORE}.",
    )
    SSL_INTERNAL_TRUSTSTORE_PASSWORD: ConfigOption[str] = _opt(
        "security.ssl.internal.truststore-password",
        str,
        "",
        "Password of the internal truststore (a PKCS#12 file's; a PEM file has none, empty).",
    )
    SSL_VERIFY_HOSTNAME: ConfigOption[bool] = _opt(
        "security.ssl.verify-hostname",
        bool,
        True,
        "Internal connections check that the peer's certificate names the host they connect to (its subject "
        "alternative names). Off only for certificates that cannot name every host.",
    )
    SSL_PROTOCOL: ConfigOption[str] = _opt(
        "security.ssl.protocol",
        str,
        "TLSv1.2",
        "The lowest TLS version the REST server, its clients and internal connections accept: `TLSv1.2` or "
        "`TLSv1.3` (Flink pins exactly this version; strom also accepts newer ones).",
    )


#: Flink's ``GlobalConfiguration.HIDDEN_CONTENT``: what is shown instead of a sensitive value
HIDDEN_CONTENT = "******"
#: Flink's ``GlobalConfiguration.SENSITIVE_KEYS``: a key containing one of these (any case) holds a secret
SENSITIVE_KEY_FRAGMENTS = (
    "password",
    "secret",
    "fs.azure.account.key",
    "apikey",
    "api-key",
    "auth-params",
    "service-key",
    "token",
    "basic-auth",
    "jaas.config",
    "http-headers",
)


def is_sensitive_key(key: str) -> bool:
    """Whether the value of configuration key ``key`` is a secret (Flink's ``GlobalConfiguration.isSensitive``)."""
    low = key.lower()
    return any(fragment in low for fragment in SENSITIVE_KEY_FRAGMENTS)


def hide_sensitive_arguments(argv: list[str]) -> list[str]:
    """A command line as it may be shown: the values of ``-Dkey=value`` / ``-D key=value`` options with a sensitive
    key, and of ``--token``/``--secret``-like flags, replaced by :data:`HIDDEN_CONTENT`."""
    out: list[str] = []
    hide_next = False
    for arg in argv:
        if hide_next:
            out.append(HIDDEN_CONTENT if "=" not in arg else _hide_define(arg))
            hide_next = False
            continue
        if arg.startswith("-D") and len(arg) > 2:
            out.append("-D" + _hide_define(arg[2:]))
        elif arg == "-D":
            out.append(arg)
            hide_next = True
        elif arg.startswith("--") and "=" in arg and is_sensitive_key(arg[2:].split("=", 1)[0]):
            out.append(arg.split("=", 1)[0] + "=" + HIDDEN_CONTENT)
        elif arg.startswith("--") and is_sensitive_key(arg[2:]):
            out.append(arg)
            hide_next = True
        else:
            out.append(arg)
    return out


#: the environment variable that carries a spawned strom process's sensitive ``-D`` options (a JSON list of
#: ``key=value``), off its command line: ``/proc/<pid>/cmdline`` is world-readable, ``environ`` its owner's only
SENSITIVE_DEFINES_ENV = "STROM_SENSITIVE_DEFINES"


def split_sensitive_defines(args: list[str]) -> tuple[list[str], list[str]]:
    """``args`` without its ``-Dkey=value`` options whose key is sensitive, and those options (``key=value``)."""
    public: list[str] = []
    hidden: list[str] = []
    for arg in args:
        if arg.startswith("-D") and is_sensitive_key(arg[2:].split("=", 1)[0]):
            hidden.append(arg[2:])
        else:
            public.append(arg)
    return public, hidden


def _hide_define(define: str) -> str:
    key, sep, _ = define.partition("=")
    return f"{key}={HIDDEN_CONTENT}" if sep and is_sensitive_key(key) else define
