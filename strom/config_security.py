"""``SecurityOptions``: TLS of the REST endpoint under Flink's ``security.ssl.rest.*`` keys (re-exported by
:mod:`strom.config`; the contexts are built by :mod:`strom.runtime.net.ssl_utils`).

Flink's stores are Java keystores (JKS or PKCS12); strom reads PKCS#12 files (``.p12`` / ``.pfx``) and PEM files
(a certificate chain and, for a keystore, its private key, possibly in the same file), told apart by content. A
JKS store converts with ``keytool -importkeystore -srckeystore rest.jks -destkeystore rest.p12
-deststoretype PKCS12``.
"""

from __future__ import annotations

from strom.config_option import ConfigOption, _opt

__all__ = [
    "HIDDEN_CONTENT",
    "SENSITIVE_KEY_FRAGMENTS",
    "SecurityOptions",
    "hide_sensitive_arguments",
    "is_sensitive_key",
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
    SSL_PROTOCOL: ConfigOption[str] = _opt(
        "security.ssl.protocol",
        str,
        "TLSv1.2",
        "The lowest TLS version the REST server and clients accept: `TLSv1.2` or `TLSv1.3` (Flink pins exactly "
        "this version; strom also accepts newer ones).",
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


def _hide_define(define: str) -> str:
    key, sep, _ = define.partition("=")
    return f"{key}={HIDDEN_CONTENT}" if sep and is_sensitive_key(key) else define
