"""DDL (Flink's ``SqlCreateTableConverter`` and friends): CREATE TABLE / VIEW / DATABASE, DROP → catalog objects,
and the scan plan of a catalog table (its connector source, computed columns and watermark)."""

from __future__ import annotations

from sqlglot import exp

from strom.table.catalog.catalog_manager import CatalogColumn, CatalogTable
from strom.table.connectors import create_source
from strom.table.errors import TableException, ValidationException
from strom.table.planner.expression_converter import ExpressionConverter
from strom.table.planner.logical import Calc, RelNode, RowType, TableScan, WatermarkAssigner
from strom.table.planner.metadata_columns import apply_readable_metadata
from strom.table.planner.rex import RexInputRef, RexNode
from strom.table.planner.scope import Scope
from strom.table.sql.flink_dialect import FlinkDialect, FlinkType, MetadataColumn
from strom.table.sql.parser import at, parse_expression
from strom.table.types import DataType, TimestampKind, parse_type

__all__ = ["catalog_table_of", "plan_scan"]


def catalog_table_of(create: exp.Create) -> CatalogTable:
    """The catalog table a ``CREATE TABLE`` statement declares."""
    schema = create.this
    if not isinstance(schema, exp.Schema):
        raise TableException(f"Unsupported SQL construct{at(create)}: CREATE TABLE without a column list")
    columns: list[CatalogColumn] = []
    watermark: tuple[str, str] | None = None
    primary_key: tuple[str, ...] = ()
    for item in schema.expressions:
        if isinstance(item, exp.ColumnDef):
            columns.append(_column(item))
        elif isinstance(item, exp.WatermarkColumnConstraint):
            watermark = (item.this.name, item.args["expression"].sql(dialect=FlinkDialect))
        elif isinstance(item, exp.PrimaryKey):
            primary_key = tuple(e.name for e in item.expressions)
        else:
            raise TableException(
                f"Unsupported SQL construct{at(item)}: {item.sql(dialect=FlinkDialect)[:60]} in CREATE TABLE"
            )
    options: dict[str, str] = {}
    partition_keys: tuple[str, ...] = ()
    comment = ""
    properties = create.args.get("properties")
    for prop in properties.expressions if properties is not None else []:
        if isinstance(prop, exp.PartitionedByProperty):  # a Property too: PARTITIONED BY (dt, hr)
            partition_keys = tuple(e.name for e in prop.this.expressions)
        elif isinstance(prop, exp.SchemaCommentProperty):  # COMMENT 'text' of the table
            comment = prop.this.name
        elif isinstance(prop, exp.TemporaryProperty):  # CREATE TEMPORARY TABLE: not an option
            continue
        elif isinstance(prop, exp.Property):
            value = prop.args.get("value")
            options[prop.name] = (
                value.name if isinstance(value, exp.Literal) else str(value.sql(dialect=FlinkDialect) if value else "")
            )
        elif isinstance(prop, exp.PartitionedByProperty):
            continue
        else:
            raise TableException(
                f"Unsupported SQL construct{at(prop)}: {prop.sql(dialect=FlinkDialect)[:60]} in CREATE TABLE"
            )
    pk_inline = [c.name for c, d in zip(columns, _defs(schema), strict=True) if d.find(exp.PrimaryKeyColumnConstraint)]
    return CatalogTable(
        tuple(columns),
        options,
        watermark,
        primary_key or tuple(pk_inline),
        partition_keys=partition_keys,
        comment=comment,
    )


def _defs(schema: exp.Schema) -> list[exp.ColumnDef]:
    return [e for e in schema.expressions if isinstance(e, exp.ColumnDef)]


def _column(item: exp.ColumnDef) -> CatalogColumn:
    kind = item.args.get("kind")
    computed = item.find(exp.ComputedColumnConstraint)
    described = item.find(exp.CommentColumnConstraint)
    comment = described.this.name if described is not None else ""
    if computed is not None:
        return CatalogColumn(item.name, None, expression=computed.this.sql(dialect=FlinkDialect), comment=comment)
    if not isinstance(kind, FlinkType):
        raise ValidationException(f"SQL validation failed{at(item)}: expected a data type for column '{item.name}'")
    data_type = parse_type(str(kind.this))
    if item.find(exp.NotNullColumnConstraint) is not None or item.find(exp.PrimaryKeyColumnConstraint) is not None:
        data_type = data_type.not_null()
    metadata = item.find(MetadataColumn)
    key = None
    if metadata is not None:
        key = metadata.this.name if metadata.this is not None else item.name
    virtual = bool(metadata is not None and metadata.args.get("virtual"))
    return CatalogColumn(item.name, data_type, metadata=key, virtual=virtual, comment=comment)


def plan_scan(name: str, table: CatalogTable) -> RelNode:
    """The plan reading ``table``: its source's physical columns, then computed columns, then the watermark."""
    physical = [c for c in table.columns if c.expression is None and c.metadata is None]
    types: list[DataType] = [c.type for c in physical if c.type is not None]
    physical_type = RowType(tuple(c.name for c in physical), tuple(types))
    source = create_source(name, table, physical_type)
    produced_type, metadata_refs = apply_readable_metadata(name, table, source, physical_type)
    rel: RelNode = TableScan(produced_type, name, source)
    if len(physical) != len(table.columns):
        scope = Scope.of(produced_type)
        converter = ExpressionConverter(scope)
        projection: list[RexNode] = []
        for column in table.columns:
            if column.name in metadata_refs:
                projection.append(metadata_refs[column.name])
            elif column.expression is None:
                index = physical_type.names.index(column.name)
                projection.append(RexInputRef(index, physical_type.types[index], column.name))
            else:
                projection.append(converter.convert(parse_expression(column.expression)))
        row_type = RowType(tuple(c.name for c in table.columns), tuple(p.type for p in projection))
        rel = Calc(row_type, rel, tuple(projection), None)
    if table.watermark is not None:
        rel = _watermark(name, rel, table.watermark)
    return rel


def _watermark(name: str, rel: RelNode, watermark: tuple[str, str]) -> RelNode:
    column, expression = watermark
    index = rel.row_type.index_of(column)
    if index is None:
        raise ValidationException(
            f"The rowtime attribute field '{column}' is not defined in the table schema of '{name}'; "
            f"expected one of: {', '.join(rel.row_type.names)}"
        )
    rowtime_type = rel.row_type.types[index]
    if rowtime_type.type_root.name not in ("TIMESTAMP_WITHOUT_TIME_ZONE", "TIMESTAMP_WITH_LOCAL_TIME_ZONE"):
        raise ValidationException(
            f"Invalid data type of time field for watermark definition. The field must be of type TIMESTAMP(p) or "
            f"TIMESTAMP_LTZ(p), the supported precision 'p' is from 0 to 3, but the time field type is {rowtime_type}"
        )
    wm = ExpressionConverter(Scope.of(rel.row_type)).convert(parse_expression(expression))
    with_kind = getattr(rowtime_type, "with_kind", None)
    marked = with_kind(TimestampKind.ROWTIME) if callable(with_kind) else rowtime_type
    types = list(rel.row_type.types)
    types[index] = marked
    return WatermarkAssigner(RowType(rel.row_type.names, tuple(types)), rel, index, wm)
