"""Records ↔ ``pyarrow.Table``, the notebook side of the state processor API.

Reading: the outputs of a reader function become the rows of a table — dicts and named ``Row``\\ s by their
field names, tuples as columns ``f0``, ``f1``, ..., any other value as one column ``value`` (``.to_pandas()``
gives a pandas frame). Writing: a table, a pandas frame or any iterable becomes the records a bootstrap
function sees — a table's and a frame's rows as dicts of column name → value.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

import pyarrow as pa

from strom.api.row import Row
from strom.exceptions import InvalidProgramError

__all__ = ["records_of", "records_to_table"]


def _row_of(record: Any) -> dict[str, Any]:
    if isinstance(record, dict):
        return record
    if isinstance(record, Row) and record.get_field_names() is not None:
        return record.as_dict()
    if isinstance(record, tuple | Row):
        return {f"f{i}": v for i, v in enumerate(record)}
    return {"value": record}


def records_to_table(records: list[Any], *, what: str) -> pa.Table:
    """``records`` as a table (see the module docstring); ``what`` names them in errors."""
    if not records:
        return pa.table({})
    try:
        return pa.Table.from_pylist([_row_of(r) for r in records])
    except (pa.ArrowInvalid, pa.ArrowTypeError, pa.ArrowNotImplementedError) as exc:
        raise InvalidProgramError(
            f"expected the records of {what} to convert to a pyarrow table; got {type(records[0]).__name__} "
            f"records pyarrow cannot hold ({exc}); hint: return dicts of numbers, strings, lists or dicts from the "
            "reader function (or read the stream with read_keyed_state(...) instead)"
        ) from exc


def records_of(data: Any) -> list[Any]:
    """The records of bootstrap ``data``: a ``pyarrow.Table`` / ``RecordBatch``, a pandas frame, or an iterable."""
    if isinstance(data, pa.Table | pa.RecordBatch):
        return list(data.to_pylist())
    to_dict = getattr(data, "to_dict", None)
    if callable(to_dict) and hasattr(data, "columns") and hasattr(data, "iloc"):  # a pandas DataFrame
        return list(to_dict("records"))
    if isinstance(data, str | bytes) or not isinstance(data, Iterable):
        raise InvalidProgramError(
            f"expected bootstrap data as a DataStream, a pyarrow.Table, a pandas DataFrame or an iterable of "
            f"records; got a {type(data).__name__}; hint: wrap single records in a list"
        )
    return list(data)
