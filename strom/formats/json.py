"""JSON lines: one JSON object per line, read as a ``dict`` — or, with a schema, as a named
:class:`~strom.api.row.Row` of typed fields.

    >>> fmt = JsonLinesReaderFormat()                                     # records are dicts
    >>> fmt = JsonLinesReaderFormat([("id", int), ("name", "STRING")])     # records are Row(id=..., name=...)

Blank lines are skipped. A line that is not a JSON object, or (with a schema) a field whose value is not of
its column's type, raises :class:`~strom.exceptions.ConnectorError` naming file, line and field, or goes to
the side output of ``with_invalid_records_to(tag)``. A field missing from an object is ``None``.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from typing import Any

from strom.api.row import row_factory
from strom.connectors.file_system.stream_format import (
    BlockInfo,
    InvalidRecord,
    LineFormat,
    ParsedBlock,
    _newline_compatible,
)
from strom.formats.column_types import ColumnType, column_type

__all__ = ["JsonLinesReaderFormat"]


class JsonLinesReaderFormat(LineFormat):
    """The ``StreamFormat`` of JSON lines files."""

    def __init__(
        self, schema: Mapping[str, Any] | Iterable[tuple[str, Any]] | None = None, charset_name: str = "UTF-8"
    ) -> None:
        self.charset = _newline_compatible(charset_name)
        self.columns: list[tuple[str, ColumnType]] | None = None
        if schema is not None:
            pairs = list(schema.items()) if isinstance(schema, Mapping) else list(schema)
            self.columns = [(name, column_type(spec, column=name)) for name, spec in pairs]
            self._make = row_factory([name for name, _ in self.columns])
        self._decode = json.JSONDecoder().decode

    def __getstate__(self) -> dict[str, Any]:
        """Shipped to TaskManagers by cloudpickle: the decoder (a C scanner) is made again there."""
        state = dict(self.__dict__)
        state.pop("_decode", None)
        return state

    def __setstate__(self, state: dict[str, Any]) -> None:
        self.__dict__.update(state)
        self._decode = json.JSONDecoder().decode

    @staticmethod
    def for_schema(schema: Mapping[str, Any] | Iterable[tuple[str, Any]]) -> JsonLinesReaderFormat:
        return JsonLinesReaderFormat(schema)

    def parse_block(self, text: str, info: BlockInfo) -> ParsedBlock:
        lines = text.split("\n")
        if lines[-1] == "":
            lines.pop()
        try:
            objects = list(map(self._decode, lines))
        except ValueError:
            return self._parse_slowly(lines, info)
        if not all(type(o) is dict for o in objects):
            return self._parse_slowly(lines, info)
        if self.columns is None:
            return objects, []
        columns = []
        for name, ctype in self.columns:
            values = [o.get(name) for o in objects]
            if not self._fits(values, ctype):
                return self._parse_slowly(lines, info)
            columns.append(values if ctype.python_type is not float else [_float(v) for v in values])
        return list(map(self._make, zip(*columns, strict=False))), []

    @staticmethod
    def _fits(values: list[Any], ctype: ColumnType) -> bool:
        types = set(map(type, values))
        types.discard(type(None))
        if ctype.python_type is float:
            types.discard(int)
        return types <= {ctype.python_type}

    def _parse_slowly(self, lines: list[str], info: BlockInfo) -> ParsedBlock:
        records: list[Any] = []
        invalid: list[tuple[int, InvalidRecord]] = []
        hint = "each line must hold one JSON object"
        for i, line in enumerate(lines):
            if not line.strip():
                continue
            number = info.first_line + i
            raw = line.rstrip("\r")
            try:
                obj = self._decode(line)
            except ValueError as exc:
                self.reject(invalid, len(records), info, number, raw, f"expected a JSON object; got {exc}", hint)
                continue
            if type(obj) is not dict:
                got = f"a JSON {type(obj).__name__}"
                self.reject(invalid, len(records), info, number, raw, f"expected a JSON object; got {got}", hint)
                continue
            if self.columns is None:
                records.append(obj)
                continue
            values = []
            for name, ctype in self.columns:
                value = obj.get(name)
                if value is not None and not self._fits([value], ctype):
                    self.reject(
                        invalid,
                        len(records),
                        info,
                        number,
                        raw,
                        f"expected a {ctype.name} value in field '{name}'; got {value!r}",
                        "fix the value or the field's type in the schema",
                    )
                    break
                values.append(_float(value) if ctype.python_type is float else value)
            else:
                records.append(self._make(values))
        return records, invalid


def _float(value: Any) -> Any:
    return float(value) if type(value) is int else value
