"""PyFlink's ``pyflink.datastream.connectors`` module path: the source and sink interfaces; the connectors are its
submodules (``file_system``, ``jdbc``, ``kafka``, ``number_seq``); ``DeliveryGuarantee`` is also in ``base``."""

from strom.api.sink import Sink
from strom.api.source import Source
from strom.connectors.redis.sink import DeliveryGuarantee

__all__ = ["DeliveryGuarantee", "Sink", "Source"]
