"""PyFlink's ``Schema``, ``TableDescriptor`` and ``FormatDescriptor``: tables declared in Python."""

from __future__ import annotations

from dataclasses import dataclass, field

from strom.table.catalog.catalog_manager import CatalogColumn, CatalogTable
from strom.table.errors import ValidationException
from strom.table.types import DataType, parse_type

__all__ = ["FormatDescriptor", "Schema", "TableDescriptor"]


@dataclass(frozen=True)
class Schema:
    """Columns (physical, computed, metadata), a watermark and a primary key (``Schema.new_builder()...build()``)."""

    columns: tuple[CatalogColumn, ...] = ()
    watermark: tuple[str, str] | None = None
    primary_key: tuple[str, ...] = ()

    class Builder:
        def __init__(self) -> None:
            self._columns: list[CatalogColumn] = []
            self._watermark: tuple[str, str] | None = None
            self._primary_key: tuple[str, ...] = ()

        def column(self, column_name: str, data_type: DataType | str) -> Schema.Builder:
            self._columns.append(CatalogColumn(column_name, _type(data_type)))
            return self

        def column_by_expression(self, column_name: str, expr: object) -> Schema.Builder:
            self._columns.append(CatalogColumn(column_name, None, expression=_sql(expr)))
            return self

        def column_by_metadata(
            self, column_name: str, data_type: DataType | str, metadata_key: str | None = None, is_virtual: bool = False
        ) -> Schema.Builder:
            key = metadata_key or column_name
            self._columns.append(CatalogColumn(column_name, _type(data_type), metadata=key, virtual=is_virtual))
            return self

        def watermark(self, column_name: str, watermark_expr: object) -> Schema.Builder:
            self._watermark = (column_name, _sql(watermark_expr))
            return self

        def primary_key(self, *column_names: str) -> Schema.Builder:
            self._primary_key = tuple(column_names)
            return self

        def primary_key_named(self, constraint_name: str, *column_names: str) -> Schema.Builder:
            return self.primary_key(*column_names)

        def from_row_data_type(self, data_type: DataType) -> Schema.Builder:
            for row_field in getattr(data_type, "fields", ()):
                self.column(row_field.name, row_field.data_type)
            return self

        def build(self) -> Schema:
            return Schema(tuple(self._columns), self._watermark, self._primary_key)

    @staticmethod
    def new_builder() -> Schema.Builder:
        return Schema.Builder()


def _type(data_type: DataType | str) -> DataType:
    return parse_type(data_type) if isinstance(data_type, str) else data_type


def _sql(expr: object) -> str:
    to_sql = getattr(expr, "as_summary_string", None)
    return str(to_sql()) if callable(to_sql) else str(expr)


@dataclass(frozen=True)
class FormatDescriptor:
    format: str
    options: dict[str, str] = field(default_factory=dict)

    class Builder:
        def __init__(self, fmt: str) -> None:
            self._format = fmt
            self._options: dict[str, str] = {}

        def option(self, key: str, value: str) -> FormatDescriptor.Builder:
            self._options[key] = str(value)
            return self

        def build(self) -> FormatDescriptor:
            return FormatDescriptor(self._format, dict(self._options))

    @staticmethod
    def for_format(fmt: str) -> FormatDescriptor.Builder:
        return FormatDescriptor.Builder(fmt)


@dataclass(frozen=True)
class TableDescriptor:
    """A connector table: ``TableDescriptor.for_connector('datagen').schema(...).option(k, v).build()``."""

    connector: str
    schema: Schema | None
    options: dict[str, str]
    partition_keys: tuple[str, ...] = ()
    comment: str = ""

    class Builder:
        def __init__(self, connector: str) -> None:
            self._connector = connector
            self._schema: Schema | None = None
            self._options: dict[str, str] = {}
            self._partition_keys: tuple[str, ...] = ()
            self._comment = ""

        def schema(self, schema: Schema) -> TableDescriptor.Builder:
            self._schema = schema
            return self

        def option(self, key: str, value: object) -> TableDescriptor.Builder:
            self._options[key] = str(value).lower() if isinstance(value, bool) else str(value)
            return self

        def format(self, fmt: str | FormatDescriptor, format_option: object = None) -> TableDescriptor.Builder:
            descriptor = FormatDescriptor(fmt) if isinstance(fmt, str) else fmt
            self._options["format"] = descriptor.format
            for key, value in descriptor.options.items():
                self._options[f"{descriptor.format}.{key}"] = value
            return self

        def partitioned_by(self, *partition_keys: str) -> TableDescriptor.Builder:
            self._partition_keys = partition_keys
            return self

        def comment(self, comment: str) -> TableDescriptor.Builder:
            self._comment = comment
            return self

        def build(self) -> TableDescriptor:
            return TableDescriptor(
                self._connector, self._schema, dict(self._options), self._partition_keys, self._comment
            )

    @staticmethod
    def for_connector(connector: str) -> TableDescriptor.Builder:
        return TableDescriptor.Builder(connector)

    def to_catalog_table(self) -> CatalogTable:
        if self.schema is None:
            raise ValidationException(
                f"expected a schema in the TableDescriptor of connector '{self.connector}'; got none; "
                "hint: .schema(Schema.new_builder().column('a', DataTypes.INT()).build())"
            )
        options = {"connector": self.connector, **self.options}
        return CatalogTable(
            self.schema.columns,
            options,
            self.schema.watermark,
            self.schema.primary_key,
            self.partition_keys,
            self.comment,
        )
