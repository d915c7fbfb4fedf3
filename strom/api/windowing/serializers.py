"""The window serializers of PyFlink's ``pyflink.datastream.window`` (``TimeWindowSerializer``, ...): PyFlink's byte
layouts (big-endian longs). A custom ``WindowAssigner.get_window_serializer()`` may return them; strom keeps windows
in state as Python objects, so they are only called by programs that call them.

    >>> from io import BytesIO
    >>> buf = BytesIO(); TimeWindowSerializer().serialize(TimeWindow(0, 5000), buf); buf.getvalue().hex()
    '00000000000000000000000000001388'
    >>> TimeWindowSerializer().deserialize(BytesIO(buf.getvalue()))
    TimeWindow(start=0, end=5000)
"""

from __future__ import annotations

import struct
from io import BytesIO

from strom.api.type_serializer import TypeSerializer
from strom.api.windowing.windows import GlobalWindow, TimeWindow

__all__ = ["CountWindowSerializer", "GlobalWindowSerializer", "TimeWindowSerializer"]

_TWO_LONGS = struct.Struct(">qq")
_LONG = struct.Struct(">q")


class TimeWindowSerializer(TypeSerializer[TimeWindow]):
    """A :class:`TimeWindow` as its start and end (16 bytes)."""

    def serialize(self, element: TimeWindow, stream: BytesIO) -> None:
        stream.write(_TWO_LONGS.pack(element.start, element.end))

    def deserialize(self, stream: BytesIO) -> TimeWindow:
        return TimeWindow(*_TWO_LONGS.unpack(stream.read(16)))


class CountWindowSerializer(TypeSerializer[GlobalWindow]):
    """A count window as its id (8 bytes). strom's count windows are its one :class:`GlobalWindow` per key
    (``CountWindow`` is an alias), written as id 0."""

    def serialize(self, element: GlobalWindow, stream: BytesIO) -> None:
        stream.write(_LONG.pack(int(getattr(element, "id", 0))))

    def deserialize(self, stream: BytesIO) -> GlobalWindow:
        stream.read(8)
        return GlobalWindow.get()


class GlobalWindowSerializer(TypeSerializer[GlobalWindow]):
    """The :class:`GlobalWindow`: one zero byte."""

    def serialize(self, element: GlobalWindow, stream: BytesIO) -> None:
        stream.write(b"\x00")

    def deserialize(self, stream: BytesIO) -> GlobalWindow:
        stream.read(1)
        return GlobalWindow.get()
