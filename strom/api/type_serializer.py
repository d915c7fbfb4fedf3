"""``TypeSerializer`` (PyFlink's ``pyflink.common.serializer``): writes and reads values of one type on a byte stream.

strom moves and snapshots Python objects with pickle (or a job's :class:`~strom.api.serialization.BatchSerializer`),
so no operator asks for a ``TypeSerializer``; programs written for PyFlink declare them (a custom
``WindowAssigner.get_window_serializer()``, for example) and may call them themselves, and both work as in PyFlink.

    >>> from io import BytesIO
    >>> s = VoidNamespaceSerializer()
    >>> buf = BytesIO(); s.serialize(b"", buf); s.deserialize(BytesIO(buf.getvalue()))
    b''
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from io import BytesIO
from typing import Generic, TypeVar

__all__ = ["TypeSerializer", "VoidNamespaceSerializer"]

T = TypeVar("T")


class TypeSerializer(ABC, Generic[T]):
    """Serializes values of one type to a stream and back (Flink's ``TypeSerializer``). Serializers of the same
    class are equal, as PyFlink's."""

    def __eq__(self, other: object) -> bool:
        return isinstance(other, self.__class__)

    def __ne__(self, other: object) -> bool:
        return not self == other

    def __repr__(self) -> str:
        return f"{self.__class__.__name__}()"

    def __hash__(self) -> int:
        return hash(self.__class__.__name__)

    @abstractmethod
    def serialize(self, element: T, stream: BytesIO) -> None:
        """Write ``element`` to ``stream``."""

    @abstractmethod
    def deserialize(self, stream: BytesIO) -> T:
        """Read one value from ``stream``."""


class VoidNamespaceSerializer(TypeSerializer[bytes]):
    """The namespace of state that has none: nothing is written."""

    def serialize(self, element: bytes, stream: BytesIO) -> None:
        pass

    def deserialize(self, stream: BytesIO) -> bytes:
        return b""
