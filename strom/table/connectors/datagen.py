"""The ``datagen`` table connector (Flink's ``DataGenTableSourceFactory``) over strom's ``DataGeneratorSource``.

Options as Flink's: ``rows-per-second`` (default 10000), ``number-of-rows`` (unbounded when absent), and per field
``fields.<f>.kind`` = ``random`` (default; ``min``/``max`` for numbers, ``length`` for strings, default 100) or
``sequence`` (``start``/``end``: the table is bounded by the shortest sequence). Row ``i`` is a pure function of
``i`` (random values seeded by the row index), so a restored job regenerates exactly the rows after its checkpoint.
"""

from __future__ import annotations

import datetime
import decimal
import random
import string
import sys
from typing import TYPE_CHECKING, Any

from strom.api.row import _create_row
from strom.connectors.datagen import DataGeneratorSource
from strom.table.connectors.base import DynamicTableSource, check_options
from strom.table.errors import ValidationException

if TYPE_CHECKING:
    from strom.api.datastream import DataStream
    from strom.api.environment import StreamExecutionEnvironment
    from strom.table.catalog.catalog_manager import CatalogTable
    from strom.table.planner.logical import RowType
    from strom.table.types import DataType

__all__ = ["DataGenTableSource"]

_INT_RANGES = {
    "TINYINT": (-(2**7), 2**7 - 1),
    "SMALLINT": (-(2**15), 2**15 - 1),
    "INTEGER": (-(2**31), 2**31 - 1),
    "BIGINT": (-(2**63), 2**63 - 1),
}
_FIELD_OPTIONS = ("kind", "min", "max", "length", "start", "end", "null-rate", "var-len", "max-past")


class _FieldGenerator:
    """One column's values as a function of the row index."""

    def __init__(self, name: str, data_type: DataType, options: dict[str, str]) -> None:
        self.root = data_type.type_root.name
        self.kind = options.get(f"fields.{name}.kind", "random")
        self.name = name
        get = options.get
        if self.kind == "sequence":
            if f"fields.{name}.start" not in options or f"fields.{name}.end" not in options:
                raise ValidationException(
                    f"datagen: a sequence field needs 'fields.{name}.start' and 'fields.{name}.end'; got neither"
                )
            self.start = int(options[f"fields.{name}.start"])
            self.end = int(options[f"fields.{name}.end"])
        elif self.kind == "random":
            low, high = _INT_RANGES.get(self.root, (0, 2**31 - 1))
            self.low = (
                float(get(f"fields.{name}.min", low))
                if self.root in ("FLOAT", "DOUBLE")
                else int(get(f"fields.{name}.min", low))
            )
            self.high = (
                float(get(f"fields.{name}.max", high))
                if self.root in ("FLOAT", "DOUBLE")
                else int(get(f"fields.{name}.max", high))
            )
            self.length = int(get(f"fields.{name}.length", 100))
            self.scale = getattr(data_type, "scale", 0)
        else:
            raise ValidationException(f"datagen: expected 'fields.{name}.kind' random or sequence; got '{self.kind}'")

    def rows(self) -> int | None:
        return self.end - self.start + 1 if self.kind == "sequence" else None

    def value(self, i: int, rng: random.Random) -> Any:
        if self.kind == "sequence":
            value = self.start + i
            return str(value) if self.root in ("CHAR", "VARCHAR") else value
        root = self.root
        if root in _INT_RANGES:
            return rng.randint(int(self.low), int(self.high))
        if root in ("FLOAT", "DOUBLE"):
            return rng.uniform(self.low, self.high)
        if root == "DECIMAL":
            return decimal.Decimal(rng.uniform(0, 10**6)).quantize(decimal.Decimal(1).scaleb(-self.scale))
        if root in ("CHAR", "VARCHAR"):
            return "".join(rng.choices(string.hexdigits[:16], k=self.length))
        if root == "BOOLEAN":
            return rng.random() < 0.5
        if root.startswith("TIMESTAMP"):
            return datetime.datetime.now().replace(microsecond=0)
        if root == "DATE":
            return datetime.date.today()
        raise ValidationException(f"datagen: random values of type {root} are not supported (field '{self.name}')")


class _RowGenerator:
    def __init__(self, fields: list[_FieldGenerator], seed: int) -> None:
        self.fields = fields
        self.seed = seed
        self.sequences = tuple(
            f.start if f.kind == "sequence" and f.root not in ("CHAR", "VARCHAR") else None for f in fields
        )
        self.random = any(f.kind == "random" for f in fields)
        starts = [s for s in self.sequences if s is not None]
        self.numeric = tuple(starts) if len(starts) == len(fields) else None

    def __call__(self, i: int) -> Any:
        if self.numeric is not None:  # numeric sequences only: one list, no zip
            return _create_row(None, [i + s for s in self.numeric])
        if not self.random:  # sequences only: no generator to seed (seeding one costs more than the row)
            values = [
                i + s if s is not None else f.value(i, _NO_RANDOM)
                for s, f in zip(self.sequences, self.fields, strict=True)
            ]
            return _create_row(None, values)
        rng = random.Random(self.seed * 1_000_003 + i)
        return _create_row(None, [f.value(i, rng) for f in self.fields])


_NO_RANDOM = random.Random(0)


class DataGenTableSource(DynamicTableSource):
    def __init__(self, name: str, generators: list[_FieldGenerator], rows: int | None, rows_per_second: float) -> None:
        self.name = name
        self.generators = generators
        self.rows = rows
        self.rows_per_second = rows_per_second
        self.bounded = rows is not None

    @classmethod
    def create(cls, name: str, table: CatalogTable, row_type: RowType) -> DataGenTableSource:
        options = table.options
        field_keys = {f"fields.{n}.{o}" for n in row_type.names for o in _FIELD_OPTIONS}
        check_options(name, "datagen", options, {"rows-per-second", "number-of-rows", "scan.parallelism", *field_keys})
        generators = [_FieldGenerator(n, t, options) for n, t in zip(row_type.names, row_type.types, strict=True)]
        limits = [n for n in (g.rows() for g in generators) if n is not None]
        if "number-of-rows" in options:
            limits.append(int(options["number-of-rows"]))
        rows = min(limits) if limits else None
        return cls(name, generators, rows, float(options.get("rows-per-second", "10000")))

    def create_stream(self, env: StreamExecutionEnvironment, row_type: RowType) -> DataStream[Any]:
        count = self.rows if self.rows is not None else sys.maxsize
        source = DataGeneratorSource(_RowGenerator(self.generators, 0), count, records_per_second=self.rows_per_second)
        from strom.api.eventtime import WatermarkStrategy

        return env.from_source(source, WatermarkStrategy.no_watermarks(), f"datagen: {self.name}")
