"""PyFlink's ``pyflink.datastream.connectors`` module path: the source and sink interfaces; the connectors are its
submodules (``file_system``, ``number_seq``)."""

from strom.api.sink import Sink
from strom.api.source import Source

__all__ = ["Sink", "Source"]
