"""Flink's ``FactoryUtil.TableFactoryHelper.discoverDecodingFormat``: a table format by its identifier, with its
options (``<prefix><identifier>.<key>``) checked."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from strom.table.errors import ValidationException
from strom.table.formats.avro_format import AvroFormat
from strom.table.formats.csv_format import CsvFormat
from strom.table.formats.json_format import JsonFormat
from strom.table.formats.raw_format import RawFormat
from strom.table.formats.row_data_format import RowDataFormat
from strom.table.types import DataType

__all__ = ["FORMATS", "create_format", "format_option_keys"]

FORMATS: dict[str, type[RowDataFormat]] = {f.identifier: f for f in (JsonFormat, CsvFormat, RawFormat, AvroFormat)}


def format_option_keys(identifier: str, prefix: str = "") -> set[str]:
    """The table options a format takes, as written in ``WITH`` (``value.json.ignore-parse-errors``)."""
    fmt = FORMATS.get(identifier)
    return {f"{prefix}{identifier}.{k}" for k in fmt.option_keys} if fmt is not None else set()


def create_format(
    identifier: str,
    names: Sequence[str],
    types: Sequence[DataType],
    options: Mapping[str, str],
    *,
    prefix: str = "",
    table: str = "?",
) -> RowDataFormat:
    """The format ``identifier`` for a row of ``names``/``types``, given the table's options."""
    fmt = FORMATS.get(identifier)
    if fmt is None:
        raise ValidationException(
            f"Could not find any format factory for identifier '{identifier}' in table '{table}'; expected one of: "
            f"{', '.join(sorted(FORMATS))}"
        )
    start = f"{prefix}{identifier}."
    own = {k[len(start) :]: v for k, v in options.items() if k.startswith(start)}
    return fmt(names, types, own)
