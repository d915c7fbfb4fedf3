"""METADATA columns (Flink's ``DynamicSourceUtils.pushMetadataProjection`` / ``DynamicSinkUtils``): which metadata
a scan asks its source for, which a sink is given, and the checks Flink makes on them.

A scan's source produces the physical columns then the metadata columns' keys (each distinct key once, in the order
the columns declare them); the scan's Calc puts every column in the declared order and casts a metadata value to the
declared type when the two differ (``ts TIMESTAMP(3) METADATA FROM 'timestamp'`` of a ``TIMESTAMP_LTZ(3)`` key). A
sink consumes the persisted columns — physical and non-VIRTUAL metadata — in the declared order.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from strom.table.connectors.abilities import SupportsReadingMetadata, SupportsWritingMetadata
from strom.table.errors import ValidationException
from strom.table.functions.cast import cast_function
from strom.table.planner.logical import Calc, RelNode, RowType
from strom.table.planner.rex import RexCall, RexInputRef, RexNode

if TYPE_CHECKING:
    from strom.table.catalog.catalog_manager import CatalogColumn, CatalogTable
    from strom.table.types import DataType

__all__ = ["apply_readable_metadata", "apply_writable_metadata", "consumed_columns"]


def _metadata_type(
    name: str, connector: Any, column: CatalogColumn, available: dict[str, DataType], verb: str
) -> DataType:
    key = column.metadata
    assert key is not None
    if key not in available:
        kind = "DynamicTableSource" if verb == "reading" else "DynamicTableSink"
        cls = f"{type(connector).__module__}.{type(connector).__name__}"
        raise ValidationException(
            f"Invalid metadata key '{key}' in column '{column.name}' of table '{name}'. The {kind} class '{cls}' "
            f"supports the following metadata keys for {verb}:\n" + "\n".join(available)
        )
    return available[key]


def apply_readable_metadata(
    name: str, table: CatalogTable, source: Any, physical_type: RowType
) -> tuple[RowType, dict[str, RexNode]]:
    """The scan's produced row type (physical then metadata) and each metadata column's expression over it."""
    columns = [c for c in table.columns if c.metadata is not None and c.expression is None]
    if not columns:
        return physical_type, {}
    if not isinstance(source, SupportsReadingMetadata):
        raise ValidationException(
            f"Table '{type(source).__name__}' declares metadata columns, but the underlying DynamicTableSource doesn't "
            "implement the SupportsReadingMetadata interface. Therefore, metadata cannot be read from the given source."
        )
    available = source.list_readable_metadata()
    keys: list[str] = []
    for column in columns:
        _metadata_type(name, source, column, available, "reading")
        if column.metadata not in keys:
            keys.append(column.metadata)  # type: ignore[arg-type]
    first_names: dict[str, str] = {}
    for column in columns:
        first_names.setdefault(str(column.metadata), column.name)
    produced = RowType(
        (*physical_type.names, *(first_names[k] for k in keys)),
        (*physical_type.types, *(available[k] for k in keys)),
    )
    source.apply_readable_metadata(keys, produced)
    refs: dict[str, RexNode] = {}
    for column in columns:
        index = len(physical_type) + keys.index(column.metadata)  # type: ignore[arg-type]
        meta_type = available[column.metadata]  # type: ignore[index]
        declared = column.type or meta_type
        ref: RexNode = RexInputRef(index, declared, column.name)
        if declared.nullable() != meta_type.nullable():  # a nullability difference needs no cast
            source = RexInputRef(index, meta_type, column.name)
            ref = RexCall("CAST", _cast(name, column, meta_type, declared), (source,), declared)
        refs[column.name] = ref
    return produced, refs


def _cast(name: str, column: CatalogColumn, meta_type: DataType, declared: DataType) -> Any:
    try:
        return cast_function(meta_type, declared)
    except ValidationException:
        raise ValidationException(
            f"Invalid data type for metadata column '{column.name}' of table '{name}'. The column cannot be declared "
            f"as '{declared}' because the type must be castable from metadata type '{meta_type}'."
        ) from None


def consumed_columns(table: CatalogTable) -> tuple[CatalogColumn, ...]:
    """The columns an INSERT into ``table`` provides: physical and persisted (non-VIRTUAL) metadata, as declared."""
    return tuple(c for c in table.columns if c.expression is None and not c.virtual)


def apply_writable_metadata(
    name: str, table: CatalogTable, sink: Any, plan: RelNode, sink_type: RowType
) -> tuple[RelNode, RowType]:
    """``plan`` (conformed to ``sink_type``: the persisted columns, as declared) reordered to what the sink
    consumes — physical columns then the metadata ones — and that row type (the sink's column names); refuses
    metadata the sink cannot write, as Flink's."""
    persisted = consumed_columns(table)
    columns = [c for c in persisted if c.metadata is not None]
    if not columns:
        return plan, sink_type
    if not isinstance(sink, SupportsWritingMetadata):
        raise ValidationException(
            f"Table '{name}' declares persistable metadata columns, but the underlying DynamicTableSink doesn't "
            "implement the SupportsWritingMetadata interface. If the column should not be persisted, it can be "
            "declared with the VIRTUAL keyword."
        )
    available = sink.list_writable_metadata()
    for column in columns:
        meta_type = _metadata_type(name, sink, column, available, "writing")
        if column.type is not None and column.type.nullable() != meta_type.nullable():
            _cast(name, column, column.type, meta_type)
    order = [i for i, c in enumerate(persisted) if c.metadata is None] + [
        i for i, c in enumerate(persisted) if c.metadata is not None
    ]
    types = plan.row_type.types
    names = sink_type.names
    consumed = RowType(tuple(names[i] for i in order), tuple(types[i] for i in order))
    projection = tuple(RexInputRef(i, types[i], names[i]) for i in order)
    sink.apply_writable_metadata([c.metadata for c in columns if c.metadata is not None], consumed)
    return Calc(consumed, plan, projection, None), consumed
