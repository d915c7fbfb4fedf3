"""PyFlink's ``pyflink.datastream.data_stream`` module path: the stream classes (re-exports)."""

from strom.api.broadcast_stream import BroadcastConnectedStream, BroadcastStream
from strom.api.connected_streams import ConnectedStreams
from strom.api.datastream import DataStream, DataStreamSink, KeyedStream
from strom.api.windowed_stream import AllWindowedStream, WindowedStream
from strom.client.job_client import CloseableIterator

__all__ = [
    "AllWindowedStream",
    "BroadcastConnectedStream",
    "BroadcastStream",
    "CloseableIterator",
    "ConnectedStreams",
    "DataStream",
    "DataStreamSink",
    "KeyedStream",
    "WindowedStream",
]
