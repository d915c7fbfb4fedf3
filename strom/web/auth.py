"""The REST token: what a call that changes a job (PATCH, POST) must show as ``Authorization: Bearer <token>``.

It is derived from the cluster secret (an HMAC of a fixed label), so whoever holds the secret — the client that
started a MiniCluster, a process given a standalone cluster's secret — can compute it, and it reveals nothing
of the secret itself. Tokens are compared in constant time.
"""

from __future__ import annotations

import hashlib
import hmac

__all__ = ["bearer_token_matches", "rest_token"]

_LABEL = b"strom rest token v1"


def rest_token(secret: bytes) -> str:
    """The REST token of the cluster whose secret is ``secret`` (64 hex characters)."""
    return hmac.new(secret, _LABEL, hashlib.sha256).hexdigest()


def bearer_token_matches(authorization: str | None, token: str) -> bool:
    """Whether an ``Authorization`` header carries ``Bearer <token>`` (constant time in the token)."""
    if not authorization:
        return False
    scheme, _, given = authorization.strip().partition(" ")
    if scheme.lower() != "bearer":
        return False
    return hmac.compare_digest(given.strip().encode(), token.encode())
