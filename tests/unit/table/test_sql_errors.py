"""Clear errors: a parse error, an unknown column or table, a type mismatch and an unsupported construct name
the position in the query (line, column) and what was expected."""

from __future__ import annotations

import pytest

from strom.table import (
    EnvironmentSettings,
    SqlParserException,
    TableEnvironment,
    TableException,
    ValidationException,
)


@pytest.fixture
def t_env() -> TableEnvironment:
    t_env = TableEnvironment.create(EnvironmentSettings.in_streaming_mode())
    t_env.execute_sql(
        "CREATE TEMPORARY VIEW orders AS SELECT * FROM (VALUES (1, 'alice', 12)) AS t(id, customer, amount)"
    )
    return t_env


def test_parse_error_names_line_and_column(t_env: TableEnvironment) -> None:
    with pytest.raises(SqlParserException, match=r"SQL parse failed\. .* at line 2, column 1"):
        t_env.sql_query("SELECT id,\nFROM orders")


def test_unknown_column_names_its_position_and_the_columns(t_env: TableEnvironment) -> None:
    with pytest.raises(ValidationException) as info:
        t_env.sql_query("SELECT nope FROM orders")
    message = str(info.value)
    assert "at line 1, column 8" in message and "Column 'nope' not found in any table" in message
    assert "id, customer, amount" in message


def test_unknown_table_names_its_position(t_env: TableEnvironment) -> None:
    with pytest.raises(ValidationException, match=r"at line 1, column 15: Object 'missing_table' not found"):
        t_env.sql_query("SELECT a FROM missing_table")


def test_type_mismatch_names_its_position(t_env: TableEnvironment) -> None:
    with pytest.raises(ValidationException, match=r"at line 1, column \d+: .*(INT|CHAR)"):
        t_env.sql_query("SELECT id FROM orders WHERE customer > 5")


def test_unsupported_construct_names_its_position(t_env: TableEnvironment) -> None:
    with pytest.raises(TableException, match=r"Unsupported SQL construct at line 1, column \d+: ORDER BY"):
        t_env.sql_query("SELECT id FROM orders ORDER BY id")


def test_ungrouped_column_is_refused(t_env: TableEnvironment) -> None:
    with pytest.raises(ValidationException, match="Expression 'amount' is not being grouped"):
        t_env.sql_query("SELECT customer, amount FROM orders GROUP BY customer")
