"""``INSERT OVERWRITE`` and ``INSERT … PARTITION (k = 'v')``: Flink's ``SinkModifyOperation`` with its
``overwrite`` flag and static partition, and the ``SupportsOverwrite`` / ``SupportsPartitioning`` checks.

A static partition's values become literal columns of the query in the table's column order (Flink's
``PreValidateReWriter``), so the query lists only the other columns. Overwriting needs a sink implementing
:class:`~strom.table.connectors.abilities.SupportsOverwrite` (only ``filesystem``), and BATCH mode, refused
otherwise with Flink 2.3's messages (facts ``tests/data/flink_sql/feat_ow_*.txt``).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from sqlglot import exp

from strom.table.catalog.catalog_manager import CatalogTable
from strom.table.errors import TableException, ValidationException
from strom.table.planner.logical import Calc, RelNode, RowType
from strom.table.planner.metadata_columns import consumed_columns
from strom.table.planner.rex import RexInputRef, RexNode
from strom.table.sql.parser import at

if TYPE_CHECKING:
    from strom.table.table_environment import TableEnvironment

__all__ = ["SinkTarget", "apply_overwrite", "insert_target"]


class SinkTarget(str):
    """The path of an INSERT's target table, carrying Flink's ``overwrite`` flag and static partition."""

    overwrite: bool
    static_partition: dict[str, str]
    position: str  # `` at line L, column C`` of the INSERT statement (empty for the Table API)

    def __new__(cls, path: str, overwrite: bool, static_partition: dict[str, str], position: str = "") -> SinkTarget:
        target = super().__new__(cls, path)
        target.overwrite = overwrite
        target.static_partition = static_partition
        target.position = position
        return target


def insert_target(t_env: TableEnvironment, statement: exp.Insert) -> tuple[str, RelNode]:
    """The target and the plan of ``INSERT [OVERWRITE] t [PARTITION (k = 'v', …)] query``."""
    target = statement.this
    path = ".".join(p.name for p in target.parts)
    plan = t_env._sql_to_rel().convert_query(statement.expression)
    partition = target.args.get("partition")
    static: dict[str, str] = {}
    if partition is not None:
        table = t_env._catalog.get_table(t_env._catalog.qualify(path.split(".")))
        if not isinstance(table, CatalogTable):
            raise ValidationException(f"Table '{path}' not found as a sink; expected a table for PARTITION (…)")
        plan = _with_static_partition(table, plan, partition, static)
    return SinkTarget(path, bool(statement.args.get("overwrite")), static, at(statement)), plan


def _with_static_partition(
    table: CatalogTable, plan: RelNode, partition: exp.Partition, static: dict[str, str]
) -> RelNode:
    from strom.table.planner.expression_converter import ExpressionConverter
    from strom.table.planner.scope import Scope

    columns = [c.name for c in consumed_columns(table)]
    values: dict[str, RexNode] = {}
    converter = ExpressionConverter(Scope.of(RowType((), ())))
    for item in partition.expressions:
        if not isinstance(item, exp.EQ) or not isinstance(item.this, exp.Column):
            raise TableException(f"Unsupported SQL construct{at(item)}: expected PARTITION (column = 'value', …)")
        name = item.this.name
        if name not in columns:
            raise ValidationException(f"SQL validation failed{at(item.this)}: Unknown target column '{name}'")
        if name not in table.partition_keys:
            raise ValidationException(
                f"SQL validation failed{at(item.this)}: expected a partition column of the table "
                f"({', '.join(table.partition_keys) or 'none'}); got '{name}'"
            )
        values[name] = converter.convert(item.expression)
        static[name] = item.expression.name
    dynamic = [c for c in columns if c not in values]
    if len(dynamic) != len(plan.row_type.names):
        return plan  # conform_to_sink reports the column count with Flink's message
    projection: list[RexNode] = []
    for name in columns:
        if name in values:
            projection.append(values[name])
        else:
            index = dynamic.index(name)
            projection.append(RexInputRef(index, plan.row_type.types[index], plan.row_type.names[index]))
    return Calc(RowType(tuple(columns), tuple(p.type for p in projection)), plan, tuple(projection), None)


def apply_overwrite(sink: Any, path: str, ident: str, *, streaming: bool) -> None:
    """Tell ``sink`` to overwrite (Flink's ``SupportsOverwrite.applyOverwrite``) when ``path`` asks for it."""
    from strom.table.connectors.abilities import SupportsOverwrite

    if not isinstance(path, SinkTarget) or not path.overwrite:
        return
    if not isinstance(sink, SupportsOverwrite):
        raise ValidationException(
            f"INSERT OVERWRITE requires that the underlying DynamicTableSink of table '{ident}' implements the "
            f"SupportsOverwrite interface. Refused{path.position}: INSERT OVERWRITE; the sink cannot replace its "
            "data; hint: INSERT INTO appends; a filesystem table overwrites in BATCH mode"
        )
    if streaming:
        raise TableException("Streaming mode not support overwrite.; hint: INSERT OVERWRITE runs in BATCH mode")
    sink.apply_overwrite(True)
