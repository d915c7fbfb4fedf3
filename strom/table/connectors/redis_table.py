"""The ``redis`` table connector over strom's Redis Streams connector (``RedisStreamSource`` / ``RedisStreamSink``):
a table is one or more Redis streams, a row one stream entry, a column one field of the entry.

Options (Flink's naming style; Flink has no Redis connector of its own):

- ``url`` = ``redis://[user:password@]host[:port][/db]`` — or ``host`` (``127.0.0.1``), ``port`` (6379),
  ``database`` (0), ``username``, ``password``;
- ``stream``: the stream (a source may read several: ``a;b``);
- ``scan.startup.mode``: ``earliest-offset`` (the default: every entry), ``latest-offset`` (entries added after the
  job started) or ``specific-offset`` with ``scan.startup.specific-offset`` = an entry id (entries after it);
- ``scan.bounded.mode``: ``unbounded`` (the default) or ``latest-offset`` (each stream up to its last entry when
  the job started);
- ``sink.delivery-guarantee``: ``at-least-once`` (the default) or ``exactly-once`` (staged per checkpoint, appended
  by one Lua script on completion), with ``sink.transactional-id-prefix`` naming the staging lists;
  ``sink.parallelism``.

Field values are text: a column's value is read from its field's text as the ``csv`` format reads a cell (a missing
field is NULL) and written as the ``csv`` format writes one (a NULL value writes no field). METADATA columns:
``stream`` (STRING), ``id`` (STRING) and ``timestamp`` (TIMESTAMP_LTZ(3), the id's time) for reading. The sink
takes inserts only (XADD appends).
"""

from __future__ import annotations

import datetime
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from strom.api.row import _create_row
from strom.table.connectors.abilities import SupportsReadingMetadata
from strom.table.connectors.base import DynamicTableSink, DynamicTableSource, check_options
from strom.table.errors import ValidationException
from strom.table.formats.row_data_converters import from_text, to_text
from strom.table.types import DataType, parse_type

if TYPE_CHECKING:
    from strom.api.datastream import DataStream
    from strom.api.environment import StreamExecutionEnvironment
    from strom.connectors.redis.connection import RedisConnectionOptions
    from strom.table.catalog.catalog_manager import CatalogTable
    from strom.table.planner.logical import RowType

__all__ = ["RedisDynamicSink", "RedisDynamicSource"]

_CONNECTION = {"url", "host", "port", "database", "username", "password"}
_SOURCE = _CONNECTION | {
    "stream",
    "scan.startup.mode",
    "scan.startup.specific-offset",
    "scan.bounded.mode",
    "scan.parallelism",
}
_SINK = _CONNECTION | {"stream", "sink.delivery-guarantee", "sink.transactional-id-prefix", "sink.parallelism"}
_EPOCH = datetime.datetime(1970, 1, 1)
_METADATA = {"stream": "STRING NOT NULL", "id": "STRING NOT NULL", "timestamp": "TIMESTAMP_LTZ(3) NOT NULL"}


def _connection(name: str, options: dict[str, str]) -> RedisConnectionOptions:
    from strom.connectors.redis.connection import RedisConnectionOptions

    if "url" in options:
        return RedisConnectionOptions.from_url(options["url"])
    if "host" not in options:
        raise ValidationException(
            f"One or more required options are missing for table '{name}'.\n\nMissing required options are:\n\n"
            "url (or host)"
        )
    return RedisConnectionOptions(
        host=options["host"],
        port=int(options.get("port", "6379")),
        db=int(options.get("database", "0")),
        username=options.get("username"),
        password=options.get("password"),
    )


def _streams(name: str, options: dict[str, str]) -> list[str]:
    streams = [s for s in options.get("stream", "").split(";") if s]
    if not streams:
        raise ValidationException(
            f"One or more required options are missing for table '{name}'.\n\nMissing required options are:\n\nstream"
        )
    return streams


class _EntryToRow:
    """A stream entry as a row: each column from its field's text, then the requested metadata."""

    def __init__(self, names: tuple[str, ...], types: tuple[DataType, ...], metadata: list[str]) -> None:
        self.columns = [
            (n, from_text(t), t.type_root.name in ("CHAR", "VARCHAR")) for n, t in zip(names, types, strict=True)
        ]
        self.metadata = metadata

    def __call__(self, entry: Any) -> Any:
        fields = entry.fields
        values: list[Any] = []
        for name, convert, is_string in self.columns:
            text = fields.get(name)
            values.append(None if text is None or (text == "" and not is_string) else convert(text))
        for key in self.metadata:
            if key == "stream":
                values.append(entry.stream)
            elif key == "id":
                values.append(entry.id)
            else:
                values.append(_EPOCH + datetime.timedelta(milliseconds=entry.timestamp))
        return _create_row(None, values)


class RedisDynamicSource(DynamicTableSource, SupportsReadingMetadata):
    def __init__(self, name: str, table: CatalogTable, physical: RowType) -> None:
        options = table.options
        self.name = name
        self.connection = _connection(name, options)
        self.streams = _streams(name, options)
        mode = options.get("scan.startup.mode", "earliest-offset")
        starts = {"earliest-offset": "0", "latest-offset": "$"}
        if mode == "specific-offset":
            if "scan.startup.specific-offset" not in options:
                raise ValidationException(
                    f"'scan.startup.specific-offset' is required in 'specific-offset' startup mode (table '{name}')"
                )
            self.start_id = options["scan.startup.specific-offset"]
        elif mode in starts:
            self.start_id = starts[mode]
        else:
            raise ValidationException(
                f"Invalid value for option 'scan.startup.mode' of table '{name}'; expected one of: earliest-offset, "
                f"latest-offset, specific-offset; got '{mode}'"
            )
        bounded = options.get("scan.bounded.mode", "unbounded")
        if bounded not in ("unbounded", "latest-offset"):
            raise ValidationException(
                f"Invalid value for option 'scan.bounded.mode' of table '{name}'; expected unbounded or "
                f"latest-offset; got '{bounded}'"
            )
        self.bounded = bounded == "latest-offset"
        self.parallelism = int(options["scan.parallelism"]) if "scan.parallelism" in options else None
        self.physical = physical
        self.metadata_keys: list[str] = []

    @classmethod
    def create(cls, name: str, table: CatalogTable, row_type: RowType) -> RedisDynamicSource:
        check_options(name, "redis", table.options, _SOURCE)
        return cls(name, table, row_type)

    def list_readable_metadata(self) -> dict[str, DataType]:
        return {k: parse_type(t) for k, t in _METADATA.items()}

    def apply_readable_metadata(self, metadata_keys: list[str], produced_type: RowType) -> None:
        self.metadata_keys = list(metadata_keys)

    def create_stream(self, env: StreamExecutionEnvironment, row_type: RowType) -> DataStream[Any]:
        from strom.api.eventtime import WatermarkStrategy
        from strom.connectors.redis.source import RedisStreamSource

        builder = RedisStreamSource.builder().set_connection(self.connection).set_streams(self.streams)
        builder.set_start_id(self.start_id)
        if self.bounded:
            builder.set_bounded()
        stream = env.from_source(builder.build(), WatermarkStrategy.no_watermarks(), f"RedisSource-{self.name}")
        if self.parallelism is not None:
            stream.set_parallelism(self.parallelism)
        to_row = _EntryToRow(self.physical.names, self.physical.types, self.metadata_keys)
        return stream.map(to_row).name(f"RedisEntryToRow-{self.name}")


class _RowToFields:
    """A row as the field → text mapping of an XADD (NULL values left out)."""

    def __init__(self, names: tuple[str, ...], types: tuple[DataType, ...]) -> None:
        self.columns: list[tuple[str, Callable[[Any], str]]] = [
            (n, to_text(t)) for n, t in zip(names, types, strict=True)
        ]

    def __call__(self, row: Any) -> dict[str, str]:
        return {n: w(v) for (n, w), v in zip(self.columns, row._values, strict=True) if v is not None}


class RedisDynamicSink(DynamicTableSink):
    accepts_updates = False

    def __init__(self, name: str, table: CatalogTable) -> None:
        options = table.options
        self.name = name
        self.connection = _connection(name, options)
        streams = _streams(name, options)
        if len(streams) != 1:
            raise ValidationException(f"expected one 'stream' for the Redis sink '{name}'; got {streams}")
        self.stream = streams[0]
        self.guarantee = options.get("sink.delivery-guarantee", "at-least-once")
        if self.guarantee not in ("at-least-once", "exactly-once"):
            raise ValidationException(
                f"expected 'sink.delivery-guarantee' at-least-once or exactly-once; got '{self.guarantee}' ('{name}')"
            )
        self.prefix = options.get("sink.transactional-id-prefix")
        self.parallelism = int(options["sink.parallelism"]) if "sink.parallelism" in options else None

    @classmethod
    def create(cls, name: str, table: CatalogTable, row_type: RowType) -> RedisDynamicSink:
        check_options(name, "redis", table.options, _SINK)
        return cls(name, table)

    def consume(self, stream: DataStream[Any], row_type: RowType) -> None:
        from strom.connectors.redis.sink import DeliveryGuarantee, RedisStreamSink

        builder = RedisStreamSink.builder().set_connection(self.connection).set_stream(self.stream)
        builder.set_delivery_guarantee(DeliveryGuarantee(self.guarantee))
        if self.prefix:
            builder.set_transaction_prefix(self.prefix)
        fields = stream.map(_RowToFields(row_type.names, row_type.types)).name(f"RowToRedisFields-{self.name}")
        sink = fields.sink_to(builder.build()).name(f"Sink: RedisSink-{self.name}")
        if self.parallelism is not None:
            sink.set_parallelism(self.parallelism)
