"""strom's REST API: Flink's paths and JSON shapes, served on the JobManager's event loop.

:func:`start_rest_endpoint` is what a cluster calls once its Dispatcher runs (the MiniCluster does, and so will the
standalone JobManager); the endpoint reaches the runtime only through :class:`DispatcherGateway`.
"""

from __future__ import annotations

import ssl
from typing import TYPE_CHECKING

from strom.exceptions import ClusterError
from strom.version import __version__
from strom.web.accessor import DispatcherGateway, RestHandlerError
from strom.web.auth import rest_token
from strom.web.server import DispatcherRestEndpoint

if TYPE_CHECKING:
    from strom.config import Configuration
    from strom.runtime.dispatcher.dispatcher import Dispatcher

__all__ = ["DispatcherGateway", "DispatcherRestEndpoint", "RestHandlerError", "rest_token", "start_rest_endpoint"]


async def start_rest_endpoint(
    dispatcher: Dispatcher,
    *,
    secret: bytes,
    bind_address: str,
    port: int,
    advertised_address: str = "",
    configuration: Configuration | None = None,
    ssl_context: ssl.SSLContext | None = None,
) -> DispatcherRestEndpoint:
    """Start the REST API of ``dispatcher`` (on the running loop, the JobManager's); ``port`` 0 takes a free one.
    Mutating calls need :func:`rest_token` of ``secret``; with ``ssl_context`` it serves HTTPS."""
    endpoint = DispatcherRestEndpoint(
        DispatcherGateway(dispatcher, configuration=configuration),  # GET /jobmanager/config shows it
        token=rest_token(secret),
        version=__version__,
        bind_address=bind_address,
        port=port,
        advertised_address=advertised_address,
        ssl_context=ssl_context,
    )
    try:
        await endpoint.start()
    except OSError as exc:
        raise ClusterError(
            f"expected to bind the REST API to {bind_address}:{port}; got {exc}; hint: set rest.port to a free port "
            "(or leave it unset: the MiniCluster then takes a free one) and rest.bind-address to a local address"
        ) from exc
    return endpoint
