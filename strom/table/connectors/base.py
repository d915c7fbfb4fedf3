"""The table connector interfaces (Flink's ``DynamicTableSource`` / ``DynamicTableSink``) and option checks."""

from __future__ import annotations

from abc import ABC, abstractmethod
from typing import TYPE_CHECKING, Any

from strom.table.errors import ValidationException

if TYPE_CHECKING:
    from strom.api.datastream import DataStream
    from strom.api.environment import StreamExecutionEnvironment
    from strom.table.planner.logical import RowType

__all__ = ["DynamicTableSink", "DynamicTableSource", "check_options"]


class DynamicTableSource(ABC):
    """Reads a table as a DataStream of :class:`~strom.api.row.Row` (positional, the physical columns)."""

    insert_only = True
    bounded = True

    @abstractmethod
    def create_stream(self, env: StreamExecutionEnvironment, row_type: RowType) -> DataStream[Any]:
        """The source's rows as a DataStream (watermarks are the planner's)."""


class DynamicTableSink(ABC):
    """Writes a DataStream of rows; ``accepts_updates`` False refuses an updating query (Flink's ChangelogMode)."""

    accepts_updates = False
    #: an upsert sink drops UPDATE_BEFORE rows unless the plan needs them (Flink's ONLY_UPDATE_AFTER request)
    keeps_update_before = True

    @abstractmethod
    def consume(self, stream: DataStream[Any], row_type: RowType) -> None:
        """Attach the sink to ``stream``."""


def check_options(
    name: str, connector: str, options: dict[str, str], allowed: set[str], prefixes: tuple[str, ...] = ()
) -> None:
    """Flink's ``FactoryUtil.validateFactoryOptions``: an unsupported option is an error naming the table."""
    unknown = sorted(k for k in options if k not in allowed and k != "connector" and not k.startswith(prefixes))
    if unknown:
        raise ValidationException(
            f"Unable to create a table '{name}' with connector '{connector}': unsupported options "
            f"{', '.join(unknown)}; expected: {', '.join(sorted(allowed))}"
        )
