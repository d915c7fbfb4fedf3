"""Flink's ``KafkaConnectorOptions`` and ``KafkaConnectorOptionsUtil``: the ``WITH`` options of the ``kafka`` and
``upsert-kafka`` tables, checked as Flink checks them, turned into the DataStream connector's settings.

``topic`` (one or ``;``-separated) or ``topic-pattern``; ``properties.<key>`` (``bootstrap.servers`` required,
``group.id``, any librdkafka/Java client key); ``format`` or ``value.format``, ``key.format`` with ``key.fields``
(``a;b``) and ``key.fields-prefix``, ``value.fields-include`` (``ALL`` / ``EXCEPT_KEY``); ``scan.startup.mode``
(``group-offsets`` — Flink's default —, ``earliest-offset``, ``latest-offset``, ``timestamp`` with
``scan.startup.timestamp-millis``, ``specific-offsets`` with ``scan.startup.specific-offsets`` =
``partition:0,offset:42;partition:1,offset:300``), ``scan.bounded.mode`` (``unbounded`` or the same modes, with
``scan.bounded.*``), ``scan.topic-partition-discovery.interval``, ``sink.partitioner`` (``default``, ``fixed``,
``round-robin``), ``sink.delivery-guarantee`` (``at-least-once``, ``exactly-once`` with
``sink.transactional-id-prefix``, ``none``), ``sink.parallelism``, ``scan.parallelism``.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING

from strom.config_units import parse_duration
from strom.connectors.kafka.offsets import KafkaOffsetResetStrategy, KafkaOffsetsInitializer
from strom.table.connectors.base import check_options
from strom.table.errors import ValidationException
from strom.table.formats.format_factory import FORMATS, create_format, format_option_keys
from strom.table.formats.row_data_format import RowDataFormat

if TYPE_CHECKING:
    from strom.table.catalog.catalog_manager import CatalogTable
    from strom.table.planner.logical import RowType

__all__ = ["KafkaFormats", "formats_of", "startup_offsets", "stopping_offsets", "validate_kafka_options"]

_COMMON = {
    "topic",
    "key.format",
    "key.fields",
    "key.fields-prefix",
    "value.format",
    "value.fields-include",
    "sink.parallelism",
    "sink.delivery-guarantee",
    "sink.transactional-id-prefix",
    "scan.parallelism",
    "scan.topic-partition-discovery.interval",
}
KAFKA_OPTIONS = _COMMON | {
    "topic-pattern",
    "format",
    "scan.startup.mode",
    "scan.startup.specific-offsets",
    "scan.startup.timestamp-millis",
    "scan.bounded.mode",
    "scan.bounded.specific-offsets",
    "scan.bounded.timestamp-millis",
    "sink.partitioner",
    "sink.semantic",
}
UPSERT_KAFKA_OPTIONS = _COMMON | {
    "sink.buffer-flush.max-rows",
    "sink.buffer-flush.interval",
    "scan.bounded.mode",
    "scan.bounded.specific-offsets",
    "scan.bounded.timestamp-millis",
}
_MODES = ("earliest-offset", "latest-offset", "group-offsets", "timestamp", "specific-offsets")


def validate_kafka_options(name: str, connector: str, table: CatalogTable, allowed: set[str]) -> None:
    options = table.options
    formats = {options.get(k) for k in ("format", "key.format", "value.format")} - {None}
    allowed = set(allowed)
    for fmt in formats:
        allowed |= (
            format_option_keys(str(fmt)) | format_option_keys(str(fmt), "key.") | format_option_keys(str(fmt), "value.")
        )
    check_options(name, connector, options, allowed, ("properties.",))
    if "properties.bootstrap.servers" not in options:
        raise ValidationException(
            f"One or more required options are missing for table '{name}'.\n\nMissing required options are:\n\n"
            "properties.bootstrap.servers"
        )
    if "topic" in options and "topic-pattern" in options:
        raise ValidationException(
            f"Option 'topic' and 'topic-pattern' shouldn't be set together (table '{name}'); expected one of them"
        )


def _offsets_spec(name: str, key: str, text: str, topic: str) -> dict[tuple[str, int], int]:
    """``partition:0,offset:42;partition:1,offset:300`` (Flink's ``parseSpecificOffsets``)."""
    found: dict[tuple[str, int], int] = {}
    for pair in text.strip().rstrip(";").split(";"):
        parts = dict(p.split(":", 1) for p in pair.split(",") if ":" in p)
        if set(parts) != {"partition", "offset"}:
            raise ValidationException(
                f"Invalid properties '{key}' should follow the format 'partition:0,offset:42;partition:1,offset:300', "
                f"but is '{text}' (table '{name}')."
            )
        found[(topic, int(parts["partition"]))] = int(parts["offset"])
    return found


def _initializer(name: str, table: CatalogTable, prefix: str, mode: str) -> KafkaOffsetsInitializer:
    options = table.options
    if mode not in _MODES:
        raise ValidationException(
            f"Invalid value for option '{prefix}.mode' of table '{name}'; expected one of: "
            f"{', '.join(_MODES)}; got '{mode}'"
        )
    if mode == "earliest-offset":
        return KafkaOffsetsInitializer.earliest()
    if mode == "latest-offset":
        return KafkaOffsetsInitializer.latest()
    if mode == "group-offsets":
        reset = options.get("properties.auto.offset.reset", "none").upper()
        strategy = {s.name: s for s in KafkaOffsetResetStrategy}.get(reset, KafkaOffsetResetStrategy.NONE)
        return KafkaOffsetsInitializer.committed_offsets(strategy)
    if mode == "timestamp":
        key = f"{prefix}.timestamp-millis"
        if key not in options:
            raise ValidationException(f"'{key}' is required in 'timestamp' {prefix} mode but missing (table '{name}')")
        return KafkaOffsetsInitializer.timestamp(int(options[key]))
    key = f"{prefix}.specific-offsets"
    topics = options.get("topic", "").split(";")
    if key not in options or len(topics) != 1 or not topics[0]:
        raise ValidationException(
            f"'{key}' is required in 'specific-offsets' {prefix} mode, with a single 'topic' (table '{name}')"
        )
    return KafkaOffsetsInitializer.offsets(_offsets_spec(name, key, options[key], topics[0]))


def startup_offsets(name: str, table: CatalogTable, *, upsert: bool) -> KafkaOffsetsInitializer:
    if upsert:  # upsert-kafka reads the whole topic to rebuild every key's latest value
        return KafkaOffsetsInitializer.earliest()
    return _initializer(name, table, "scan.startup", table.options.get("scan.startup.mode", "group-offsets"))


def stopping_offsets(name: str, table: CatalogTable) -> KafkaOffsetsInitializer | None:
    mode = table.options.get("scan.bounded.mode", "unbounded")
    return None if mode == "unbounded" else _initializer(name, table, "scan.bounded", mode)


def discovery_interval_ms(table: CatalogTable) -> str | None:
    text = table.options.get("scan.topic-partition-discovery.interval")
    return None if text is None else str(int(parse_duration(text).total_seconds() * 1000))


@dataclass(frozen=True, slots=True)
class KafkaFormats:
    """The key and value formats of a table and where their fields are among the physical columns."""

    key_format: RowDataFormat | None
    key_positions: tuple[int, ...]
    value_format: RowDataFormat
    value_positions: tuple[int, ...]


def _key_positions(name: str, table: CatalogTable, physical: RowType, *, upsert: bool) -> tuple[int, ...]:
    options = table.options
    if upsert:
        if not table.primary_key:
            raise ValidationException(
                f"'upsert-kafka' tables require to define a PRIMARY KEY constraint. The PRIMARY KEY specifies which "
                "columns should be read from or write to the Kafka message key. The PRIMARY KEY also defines records "
                f"in the 'upsert-kafka' table should update or delete on which keys (table '{name}')."
            )
        return tuple(physical.names.index(k) for k in table.primary_key)
    fields = [f for f in options.get("key.fields", "").split(";") if f]
    if "key.format" in options and not fields:
        raise ValidationException(
            f"A key format 'key.format' requires the declaration of one or more of key fields using 'key.fields' "
            f"(table '{name}')."
        )
    if fields and "key.format" not in options:
        raise ValidationException(
            f"The option 'key.fields' can only be declared if a key format is defined using 'key.format' "
            f"(table '{name}')."
        )
    positions = []
    for field in fields:
        if field not in physical.names:
            raise ValidationException(
                f"Could not find the field '{field}' in the table schema for usage in the key format. A key field "
                f"must be a regular, physical column. The following columns can be selected in the 'key.fields' "
                f"option:\n[{', '.join(physical.names)}] (table '{name}')"
            )
        positions.append(physical.names.index(field))
    return tuple(positions)


def _format_id(name: str, table: CatalogTable, key: str, *, required: bool) -> str | None:
    options = table.options
    fmt = options.get(key) if key != "value.format" else options.get("value.format", options.get("format"))
    if fmt is None:
        if required:
            raise ValidationException(
                f"Could not find required scan format 'value.format' for table '{name}'; expected 'format' or "
                f"'value.format' = one of {', '.join(sorted(FORMATS))}"
            )
        return None
    return fmt


def formats_of(name: str, table: CatalogTable, physical: RowType, *, upsert: bool) -> KafkaFormats:
    """Flink's ``createKeyFormatProjection`` / ``createValueFormatProjection`` with the formats made."""
    options = table.options
    key_positions = _key_positions(name, table, physical, upsert=upsert)
    prefix = options.get("key.fields-prefix", "")
    include = options.get("value.fields-include", "ALL").upper()
    if include not in ("ALL", "EXCEPT_KEY"):
        raise ValidationException(f"expected 'value.fields-include' ALL or EXCEPT_KEY; got '{include}' ('{name}')")
    if prefix and include == "ALL":
        raise ValidationException(
            "A key prefix is not allowed when option 'value.fields-include' is set to 'ALL'. Set it to 'EXCEPT_KEY' "
            f"instead to avoid field overlaps (table '{name}')."
        )
    for position in key_positions:
        if not physical.names[position].startswith(prefix):
            raise ValidationException(
                f"All fields in 'key.fields' must be prefixed with '{prefix}' when option 'key.fields-prefix' is set "
                f"but field '{physical.names[position]}' is not prefixed (table '{name}')."
            )
    key_id = _format_id(name, table, "key.format", required=upsert)
    value_id = _format_id(name, table, "value.format", required=True)
    assert value_id is not None
    key_format = None
    if key_id is not None and key_positions:
        names = [physical.names[p][len(prefix) :] for p in key_positions]
        types = [physical.types[p] for p in key_positions]
        key_format = create_format(key_id, names, types, options, prefix="key.", table=name)
    value_positions = tuple(i for i in range(len(physical)) if include == "ALL" or i not in key_positions)
    value_options = {("value." + k if k.startswith(f"{value_id}.") else k): v for k, v in options.items()}
    value_format = create_format(
        value_id,
        [physical.names[p] for p in value_positions],
        [physical.types[p] for p in value_positions],
        value_options,
        prefix="value.",
        table=name,
    )
    return KafkaFormats(key_format, key_positions, value_format, value_positions)


def topics_of(name: str, table: CatalogTable) -> tuple[list[str] | None, str | None]:
    options = table.options
    if "topic-pattern" in options:
        return None, options["topic-pattern"]
    topics = [t for t in options.get("topic", "").split(";") if t]
    if not topics:
        raise ValidationException(
            f"Either 'topic' or 'topic-pattern' must be set for table '{name}'; hint: 'topic' = 'my-topic'"
        )
    return topics, None


def properties_of(table: CatalogTable) -> dict[str, str]:
    return {k[len("properties.") :]: v for k, v in table.options.items() if k.startswith("properties.")}


def single_topic(name: str, table: CatalogTable) -> str:
    topics, pattern = topics_of(name, table)
    if pattern is not None or topics is None or len(topics) != 1:
        raise ValidationException(
            f"Flink Kafka sink currently only supports single topic, but got {'topic-pattern' if pattern else topics} "
            f"(table '{name}'); expected one 'topic'"
        )
    return topics[0]


def parallelism_of(options: Mapping[str, str], key: str) -> int | None:
    return int(options[key]) if key in options else None
