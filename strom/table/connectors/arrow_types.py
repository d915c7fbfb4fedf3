"""SQL types as Arrow types, the part every Arrow-backed table connector shares (``parquet``, ``spark``): the atomic
types whose Arrow form does not depend on the connector. Each connector adds its own choices for temporal types,
DECIMAL and collections (Parquet keeps a timestamp's precision; Spark stores microseconds)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import pyarrow as pa

__all__ = ["atomic_arrow_type"]


def atomic_arrow_type(data_type: Any) -> pa.DataType | None:
    """The Arrow type of a boolean, number, string, bytes or DATE column; None for any other type."""
    import pyarrow as pa

    return {
        "BOOLEAN": pa.bool_,
        "TINYINT": pa.int8,
        "SMALLINT": pa.int16,
        "INTEGER": pa.int32,
        "BIGINT": pa.int64,
        "FLOAT": pa.float32,
        "DOUBLE": pa.float64,
        "CHAR": pa.string,
        "VARCHAR": pa.string,
        "BINARY": pa.binary,
        "VARBINARY": pa.binary,
        "DATE": pa.date32,
    }.get(data_type.type_root.name, lambda: None)()
