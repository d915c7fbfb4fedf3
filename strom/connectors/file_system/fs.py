"""fsspec URLs for the file connector: one place that turns a path or URL into a filesystem, with strom's errors.

``resolve(url, storage_options)`` gives the fsspec filesystem and the path within it; a scheme whose package is
missing (``s3://`` without s3fs) or that fsspec does not know is a :class:`~strom.exceptions.ConnectorError`
naming the URL and the package to install. Options for a filesystem (an S3 endpoint, keys) come from
``storage_options`` — fsspec's convention — and otherwise from the filesystem's own environment variables
(``AWS_ENDPOINT_URL``, ``AWS_ACCESS_KEY_ID``, ...), which TaskManager processes inherit.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from typing import Any

from strom.exceptions import ConnectorError

__all__ = ["is_local", "protocol_of", "resolve", "unstrip"]


def protocol_of(url: str | os.PathLike[str]) -> str:
    """``"s3"`` for ``s3://bucket/key``, ``"file"`` for a plain path or ``file://``."""
    text = os.fspath(url)
    if "://" not in text:
        return "file"
    return text.split("://", 1)[0].split("::")[-1] or "file"


def is_local(url: str | os.PathLike[str]) -> bool:
    return protocol_of(url) in ("file", "local")


def resolve(
    url: str | os.PathLike[str], storage_options: Mapping[str, Any] | None = None, *, role: str = "path"
) -> tuple[Any, str]:
    """The fsspec filesystem of ``url`` and the path within it (``role`` names the URL in errors: "source path")."""
    text = os.fspath(url)
    if not text:
        raise ConnectorError(f"expected a {role} (a local path or an fsspec URL); got an empty string")
    import fsspec.core  # on first use: a cluster's clean-up reads local paths only (is_local, owner markers)

    try:
        fs, path = fsspec.core.url_to_fs(text, **dict(storage_options or {}))
    except ImportError as exc:
        raise ConnectorError(
            f"expected a {role} whose URL scheme has its fsspec package installed; got {text!r}, and {exc}; "
            f"hint: pip install the package for '{protocol_of(text)}://' (s3fs for s3://, gcsfs for gs://)"
        ) from None
    except ValueError as exc:
        raise ConnectorError(
            f"expected a {role} with a URL scheme fsspec knows; got {text!r} ({exc}); "
            "hint: use a local path, file://, s3://, or another scheme of fsspec's registry"
        ) from None
    return fs, path


def unstrip(fs: Any, path: str) -> str:
    """The full URL of ``path`` on ``fs`` (fsspec strips the scheme): ``s3://bucket/key``; local paths stay plain."""
    protocol = fs.protocol if isinstance(fs.protocol, str) else fs.protocol[0]
    if protocol in ("file", "local"):
        return path
    return str(fs.unstrip_protocol(path))
