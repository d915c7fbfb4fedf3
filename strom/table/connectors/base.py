"""The table connector interfaces (Flink's ``DynamicTableSource`` / ``DynamicTableSink``) and option checks."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from strom.table.errors import ValidationException

if TYPE_CHECKING:
    from strom.api.datastream import DataStream
    from strom.api.environment import StreamExecutionEnvironment
    from strom.table.planner.logical import RowType

__all__ = ["DynamicTableSink", "DynamicTableSource", "check_options"]


class DynamicTableSource:
    """Reads a table as a DataStream of :class:`~strom.api.row.Row` (positional, the physical columns)."""

    insert_only = True
    bounded = True

    def create_stream(self, env: StreamExecutionEnvironment, row_type: RowType) -> DataStream[Any]:
        raise NotImplementedError


class DynamicTableSink:
    """Writes a DataStream of rows; ``accepts_updates`` False refuses an updating query (Flink's ChangelogMode)."""

    accepts_updates = False
    #: an upsert sink drops UPDATE_BEFORE rows unless the plan needs them (Flink's ONLY_UPDATE_AFTER request)
    keeps_update_before = True

    def consume(self, stream: DataStream[Any], row_type: RowType) -> None:
        raise NotImplementedError


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
