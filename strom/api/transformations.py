"""Transformations: what a DataStream program records before ``execute()`` compiles it.

Each ``DataStream`` method appends one :class:`Transformation`; ``StreamGraphGenerator`` later turns the
transformations reachable from the sinks into a StreamGraph. Partitioning and union are *virtual*: they
create no operator, only change how edges are drawn.
"""

from __future__ import annotations

import itertools
from typing import TYPE_CHECKING, Any

from strom.api.serialization import BatchSerializer
from strom.exceptions import InvalidProgramError
from strom.runtime.network.partitioner import StreamPartitioner
from strom.runtime.operators.base import ChainingStrategy, StreamOperator

if TYPE_CHECKING:
    from strom.api.typeinfo import TypeInformation

__all__ = [
    "OneInputTransformation",
    "PartitionTransformation",
    "SideOutputTransformation",
    "SinkTransformation",
    "SourceTransformation",
    "Transformation",
    "TwoInputTransformation",
    "UnionTransformation",
]

_ids = itertools.count(1)


class Transformation:
    def __init__(self, name: str, inputs: list[Transformation]) -> None:
        self.id = next(_ids)
        self.name = name
        self.inputs = inputs
        self.uid: str | None = None
        self.parallelism: int | None = None
        self.max_parallelism: int | None = None
        self.slot_sharing_group: str | None = None
        self.chaining_strategy: ChainingStrategy | None = None
        self.serializer: BatchSerializer | None = None  # how this stream's batches cross the network
        self.non_parallel = False  # an operator that must run as one instance (window_all)
        #: the declared type of the records (``None``: pickled Python objects)
        self.output_type: TypeInformation | None = None
        self.description = ""

    @property
    def is_virtual(self) -> bool:
        return False

    def set_parallelism(self, parallelism: int) -> None:
        if not isinstance(parallelism, int) or isinstance(parallelism, bool) or parallelism < 1:
            raise InvalidProgramError(
                f"parallelism of '{self.name}' must be a positive int; got {parallelism!r}; hint: set_parallelism(2)"
            )
        if self.non_parallel and parallelism != 1:
            raise InvalidProgramError(
                f"operator '{self.name}' is non-parallel: its parallelism must be 1; got {parallelism}; "
                "hint: a window_all() sees the whole stream in one instance — key_by(...).window(...) scales"
            )
        self.parallelism = parallelism

    def __repr__(self) -> str:
        return f"{type(self).__name__}(id={self.id}, name={self.name!r})"


class SourceTransformation(Transformation):
    def __init__(self, name: str, operator: StreamOperator, *, parallel: bool) -> None:
        super().__init__(name, [])
        self.operator = operator
        self.parallel = parallel

    def set_parallelism(self, parallelism: int) -> None:
        if not self.parallel and parallelism != 1:
            raise InvalidProgramError(
                f"source '{self.name}' is non-parallel: its parallelism must be 1; got {parallelism}; "
                "hint: use from_sequence(...) or a parallel Source, or rebalance() after the source"
            )
        super().set_parallelism(parallelism)


class OneInputTransformation(Transformation):
    def __init__(self, name: str, input: Transformation, operator: StreamOperator) -> None:
        super().__init__(name, [input])
        self.operator = operator


class TwoInputTransformation(Transformation):
    """An operator with two inputs (``connect``, broadcast, interval join): records of ``input1`` reach its
    ``process_batch1``, of ``input2`` its ``process_batch2``; the edges carry type numbers 1 and 2."""

    def __init__(self, name: str, input1: Transformation, input2: Transformation, operator: StreamOperator) -> None:
        super().__init__(name, [input1, input2])
        self.operator = operator


class SinkTransformation(OneInputTransformation):
    """A transformation with no output; the graph starts from these."""


class PartitionTransformation(Transformation):
    def __init__(self, input: Transformation, partitioner: StreamPartitioner) -> None:
        super().__init__(f"Partition({partitioner.ship_strategy})", [input])
        self.partitioner = partitioner
        self.output_type = input.output_type

    @property
    def is_virtual(self) -> bool:
        return True


class SideOutputTransformation(Transformation):
    """The records its input emitted to side output ``tag_id`` (virtual: an edge property, as Flink's)."""

    def __init__(self, input: Transformation, tag_id: str) -> None:
        super().__init__(f"SideOutput({tag_id})", [input])
        self.tag_id = tag_id

    @property
    def is_virtual(self) -> bool:
        return True


class UnionTransformation(Transformation):
    def __init__(self, inputs: list[Transformation]) -> None:
        super().__init__("Union", inputs)
        self.output_type = inputs[0].output_type

    @property
    def is_virtual(self) -> bool:
        return True


def operator_of(t: Transformation) -> Any:
    return getattr(t, "operator", None)
