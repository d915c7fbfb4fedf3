"""Planning the ``kafka`` / ``upsert-kafka`` tables without a broker: Flink's option checks and messages, METADATA
columns (Flink's ``SupportsReadingMetadata`` / ``SupportsWritingMetadata``) and the changelog the planner infers."""

from __future__ import annotations

from pathlib import Path

import pytest

from strom.table import EnvironmentSettings, TableEnvironment
from strom.table.errors import ValidationException
from strom.table.planner.changelog import is_insert_only

BROKER = "'properties.bootstrap.servers' = '127.0.0.1:1'"
FACTS = Path(__file__).resolve().parents[2] / "data" / "flink_sql"


def _env(ddl: str) -> TableEnvironment:
    t_env = TableEnvironment.create(EnvironmentSettings.in_streaming_mode())
    t_env.execute_sql(ddl)
    return t_env


def _plan(ddl: str, query: str = "SELECT * FROM k") -> object:
    return _env(ddl).sql_query(query)._plan


def test_metadata_columns_are_read_in_the_declared_order_with_their_types() -> None:
    plan = _plan(
        "CREATE TABLE k (ts TIMESTAMP_LTZ(3) METADATA FROM 'timestamp', id INT, p INT METADATA FROM 'partition' "
        "VIRTUAL, `offset` BIGINT METADATA VIRTUAL, h MAP<STRING, BYTES> METADATA FROM 'headers', "
        "t TIMESTAMP(3) METADATA FROM 'timestamp') "
        f"WITH ('connector' = 'kafka', 'topic' = 'x', {BROKER}, 'format' = 'json')"
    )
    row_type = plan.row_type  # type: ignore[attr-defined]
    assert row_type.names == ("ts", "id", "p", "offset", "h", "t")
    assert [str(t) for t in row_type.types] == [  # the declared types, as Flink's DESCRIBE shows them
        "TIMESTAMP_LTZ(3)",
        "INT",
        "INT",
        "BIGINT",
        "MAP<STRING, BYTES>",
        "TIMESTAMP(3)",
    ]
    scan = plan.input  # type: ignore[attr-defined]
    assert scan.source.metadata_keys == ["timestamp", "partition", "offset", "headers"]


def test_an_unknown_metadata_key_names_the_keys_the_connector_reads() -> None:
    match = "Invalid metadata key 'nope' in column 'x' of table 'default_catalog.default_database.k'. The "
    match += "DynamicTableSource class 'strom.table.connectors.kafka_table.KafkaDynamicSource' supports the following"
    with pytest.raises(ValidationException, match=match) as info:
        _plan(
            f"CREATE TABLE k (id INT, x INT METADATA FROM 'nope') WITH ('connector' = 'kafka', 'topic' = 'x', "
            f"{BROKER}, 'format' = 'json')"
        )
    assert "leader-epoch" in str(info.value)


def _flink_error(query: str) -> str:
    """Flink 2.3's message for ``query`` (tests/data/flink_sql/sqlconn_metadata_errors.py)."""
    lines = (FACTS / "sqlconn_metadata_errors.txt").read_text().splitlines()
    line = next(line for line in lines if line.startswith(query + "\t"))
    return line.split("\t")[1].removeprefix("org.apache.flink.table.api.ValidationException: ")


def test_metadata_a_connector_cannot_read_or_write_is_refused_with_flinks_messages() -> None:
    with pytest.raises(ValidationException) as info:
        _plan("CREATE TABLE g (id INT, ts TIMESTAMP_LTZ(3) METADATA FROM 'timestamp') WITH ('connector' = 'datagen')",
              "SELECT * FROM g")  # fmt: skip
    assert str(info.value) == _flink_error("SELECT * FROM g")
    t_env = _env("CREATE TABLE p (id INT, ts TIMESTAMP_LTZ(3) METADATA FROM 'timestamp') WITH ('connector' = 'print')")
    query = "INSERT INTO p SELECT 1, CAST(NULL AS TIMESTAMP_LTZ(3))"
    with pytest.raises(ValidationException) as info:
        t_env.execute_sql(query)
    assert str(info.value) == _flink_error(query)


def test_writing_a_read_only_metadata_column_is_refused_unless_virtual() -> None:
    t_env = _env(
        f"CREATE TABLE k (id INT, p INT METADATA FROM 'partition') WITH ('connector' = 'kafka', 'topic' = 'x', "
        f"{BROKER}, 'format' = 'json')"
    )
    with pytest.raises(ValidationException, match="Invalid metadata key 'partition' in column 'p'"):
        t_env.execute_sql("INSERT INTO k SELECT 1, 2")


@pytest.mark.parametrize(
    ("options", "message"),
    [
        ("'topic' = 'x', 'format' = 'json'", "Missing required options are:\n\nproperties.bootstrap.servers"),
        (f"'topic' = 'x', 'topic-pattern' = 'y', {BROKER}, 'format' = 'json'", "shouldn't be set together"),
        (f"'topic' = 'x', {BROKER}", "Could not find required scan format 'value.format'"),
        (f"'topic' = 'x', {BROKER}, 'format' = 'json', 'nope' = '1'", "unsupported options nope"),
        (f"'topic' = 'x', {BROKER}, 'format' = 'json', 'key.format' = 'json'", "requires the declaration of one"),
        (
            f"'topic' = 'x', {BROKER}, 'format' = 'json', 'key.format' = 'raw', 'key.fields' = 'zz'",
            "Could not find the field 'zz' in the table schema for usage in the key format",
        ),
        (
            f"'topic' = 'x', {BROKER}, 'format' = 'json', 'key.format' = 'raw', 'key.fields' = 'id', "
            "'key.fields-prefix' = 'k_'",
            "A key prefix is not allowed when option 'value.fields-include' is set to 'ALL'",
        ),
        (f"'topic' = 'x', {BROKER}, 'format' = 'json', 'scan.startup.mode' = 'x'", "'scan.startup.mode'"),
        (
            f"'topic' = 'x', {BROKER}, 'format' = 'json', 'scan.startup.mode' = 'timestamp'",
            "'scan.startup.timestamp-millis' is required in 'timestamp' scan.startup mode",
        ),
        (
            f"'topic' = 'x', {BROKER}, 'format' = 'json', 'scan.startup.mode' = 'specific-offsets', "
            "'scan.startup.specific-offsets' = 'partition:0'",
            "should follow the format 'partition:0,offset:42;partition:1,offset:300'",
        ),
    ],
)
def test_kafka_options_are_checked_as_flink_checks_them(options: str, message: str) -> None:
    with pytest.raises(ValidationException) as info:
        _plan(f"CREATE TABLE k (id INT, name STRING) WITH ('connector' = 'kafka', {options})")
    assert message in str(info.value)


def test_startup_and_bounded_modes_become_offsets_initializers() -> None:
    plan = _plan(
        f"CREATE TABLE k (id INT) WITH ('connector' = 'kafka', 'topic' = 'x', {BROKER}, 'format' = 'json', "
        "'scan.startup.mode' = 'specific-offsets', 'scan.startup.specific-offsets' = 'partition:0,offset:42;"
        "partition:1,offset:300', 'scan.bounded.mode' = 'timestamp', 'scan.bounded.timestamp-millis' = '1000')"
    )
    source = plan.input.source if hasattr(plan, "input") else plan.source  # type: ignore[attr-defined]
    assert dict(source.starting.specific) == {("x", 0): 42, ("x", 1): 300}
    assert (source.stopping.kind, source.stopping.timestamp_ms, source.bounded) == ("timestamp", 1000, True)
    default = _plan(f"CREATE TABLE k (id INT) WITH ('connector' = 'kafka', 'topic' = 'x', {BROKER}, 'format' = 'json')")
    assert default.source.starting.kind == "committed"  # type: ignore[attr-defined]  # Flink's group-offsets


def test_exactly_once_needs_a_transactional_id_prefix() -> None:
    t_env = _env(
        f"CREATE TABLE k (id INT) WITH ('connector' = 'kafka', 'topic' = 'x', {BROKER}, 'format' = 'json', "
        "'sink.delivery-guarantee' = 'exactly-once')"
    )
    with pytest.raises(ValidationException, match=r"sink\.transactional-id-prefix must be specified"):
        t_env.execute_sql("INSERT INTO k SELECT 1")


def test_an_upsert_kafka_table_needs_a_primary_key_and_reads_as_updating() -> None:
    options = f"'connector' = 'upsert-kafka', 'topic' = 'x', {BROKER}, 'key.format' = 'json', 'value.format' = 'json'"
    with pytest.raises(ValidationException, match="'upsert-kafka' tables require to define a PRIMARY KEY"):
        _plan(f"CREATE TABLE k (id INT, n INT) WITH ({options})")
    plan = _plan(f"CREATE TABLE k (id INT, n INT, PRIMARY KEY (id) NOT ENFORCED) WITH ({options})")
    assert not is_insert_only(plan)  # type: ignore[arg-type]
    assert plan.source.starting.kind == "earliest"  # type: ignore[attr-defined]


def test_a_plain_kafka_table_refuses_a_primary_key_and_updates() -> None:
    with pytest.raises(ValidationException, match="doesn't support defining PRIMARY KEY constraint"):
        _plan(
            f"CREATE TABLE k (id INT, PRIMARY KEY (id) NOT ENFORCED) WITH ('connector' = 'kafka', 'topic' = 'x', "
            f"{BROKER}, 'format' = 'json')"
        )
    t_env = _env(f"CREATE TABLE k (id BIGINT) WITH ('connector' = 'kafka', 'topic' = 'x', {BROKER}, 'format' = 'json')")
    with pytest.raises(Exception, match="doesn't support consuming update changes"):
        t_env.execute_sql("INSERT INTO k SELECT COUNT(*) FROM (VALUES (1), (2)) AS t(x)")


def test_the_watermark_and_computed_columns_are_pushed_into_the_kafka_source() -> None:
    from strom.api.environment import StreamExecutionEnvironment
    from strom.table.planner.translator import Translator

    plan = _plan(
        "CREATE TABLE k (v INT, ts TIMESTAMP_LTZ(3) METADATA FROM 'timestamp', v2 AS v * 2, "
        f"WATERMARK FOR ts AS ts - INTERVAL '1' SECOND) WITH ('connector' = 'kafka', 'topic' = 'x', {BROKER}, "
        "'format' = 'json')"
    )
    stream = Translator(StreamExecutionEnvironment()).translate(plan)  # type: ignore[arg-type]
    source = plan.input.input.source  # type: ignore[attr-defined]  # WatermarkAssigner <- Calc <- TableScan
    assert source.strategy is not None and source.projection is not None  # per partition, inside the source
    assert (
        stream.get_transformation().name == "Source: KafkaSource-default_catalog.default_database.k"
    )  # nothing between the source and the query: no separate assigner


def test_an_unbounded_table_is_refused_in_batch_mode_with_flinks_message() -> None:
    t_env = TableEnvironment.create(EnvironmentSettings.in_batch_mode())
    t_env.execute_sql(
        f"CREATE TABLE k (id INT) WITH ('connector' = 'kafka', 'topic' = 'x', {BROKER}, 'format' = 'json')"
    )
    t_env.execute_sql("CREATE TABLE g (id INT) WITH ('connector' = 'datagen')")
    flink = (FACTS / "sqlconn_batch_unbounded.txt").read_text().strip()  # Flink 2.3's, for the datagen table g
    with pytest.raises(ValidationException) as info:
        t_env.execute_sql("SELECT * FROM g")
    assert f"org.apache.flink.table.api.ValidationException: {info.value}" == flink
    with pytest.raises(
        ValidationException, match=r"Querying an unbounded table 'default_catalog\.default_database\.k'"
    ):
        t_env.execute_sql("SELECT * FROM k")
