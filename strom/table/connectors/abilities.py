"""Flink's source and sink abilities (``org.apache.flink.table.connector.source.abilities`` / ``sink.abilities``)
that a table connector implements beside :class:`DynamicTableSource` / :class:`DynamicTableSink`.

- :class:`SupportsReadingMetadata`: METADATA columns of a source (``ts TIMESTAMP_LTZ(3) METADATA FROM
  'timestamp'``): the source lists the keys it can read with their types, and is told which to append, in order,
  after the physical columns of each row it produces.
- :class:`SupportsWritingMetadata`: persisted (non-VIRTUAL) METADATA columns of a sink: the sink lists the keys it
  can write and is told which follow the physical columns of each row it consumes.
- :class:`SupportsOverwrite`: ``INSERT OVERWRITE`` into the sink (``filesystem`` in BATCH mode).
- :class:`SupportsWatermarkPushDown`: the source generates the watermark itself (the Kafka source per partition),
  from rows after the table's computed columns (``projection``).
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from strom.api.eventtime import WatermarkStrategy
    from strom.table.planner.logical import RowType
    from strom.table.types import DataType

__all__ = ["SupportsOverwrite", "SupportsReadingMetadata", "SupportsWatermarkPushDown", "SupportsWritingMetadata"]


class SupportsReadingMetadata(ABC):
    @abstractmethod
    def list_readable_metadata(self) -> dict[str, DataType]:
        """The metadata keys this source can append to its rows, with their types, in Flink's order."""

    @abstractmethod
    def apply_readable_metadata(self, metadata_keys: list[str], produced_type: RowType) -> None:
        """Append the values of ``metadata_keys`` (in this order) to every row; ``produced_type`` is the result."""


class SupportsWritingMetadata(ABC):
    @abstractmethod
    def list_writable_metadata(self) -> dict[str, DataType]:
        """The metadata keys this sink can write, with their types."""

    @abstractmethod
    def apply_writable_metadata(self, metadata_keys: list[str], consumed_type: RowType) -> None:
        """Rows arrive as the physical columns then the values of ``metadata_keys`` (``consumed_type``)."""


class SupportsOverwrite(ABC):
    @abstractmethod
    def apply_overwrite(self, overwrite: bool) -> None:
        """``INSERT OVERWRITE``: the rows written replace the table's (or the written partitions') existing data."""


class SupportsWatermarkPushDown(ABC):
    @abstractmethod
    def apply_watermark(self, strategy: WatermarkStrategy[Any], projection: Callable[[Any], Any] | None) -> None:
        """Generate watermarks with ``strategy`` inside the source (per split), over rows mapped by ``projection``
        (the table's computed columns; None: the produced rows as they are)."""
