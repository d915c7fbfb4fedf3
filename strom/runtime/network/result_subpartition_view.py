"""``ResultSubpartitionView`` (Flink's): what one reader of one subpartition sees, whatever the partition's type.

A :class:`~strom.runtime.network.result_partition.PipelinedSubpartition` is its own view (one reader, in memory); a
blocking partition hands each request a new
:class:`~strom.runtime.network.sort_merge_result_partition.SortMergeSubpartitionReader` over its file. The
``LocalInputChannel`` and the data server read both through this protocol.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any, Protocol

if TYPE_CHECKING:
    from strom.runtime.network.result_partition import ResultPartition

__all__ = ["ResultSubpartitionView"]


class ResultSubpartitionView(Protocol):
    listener: Callable[[], None] | None
    priority_listener: Callable[[], None] | None
    remote: bool

    @property
    def partition(self) -> ResultPartition: ...

    def poll(self) -> Any | None: ...

    def poll_priority(self) -> Any | None: ...

    def head_is_event(self) -> bool: ...

    def backlog(self) -> int: ...

    def is_available(self) -> bool: ...

    def take_converted(self, checkpoint_id: int) -> list[Any]: ...

    def convert_to_priority(self, checkpoint_id: int) -> None: ...
