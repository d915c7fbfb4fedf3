"""The small texts of the catalog statements: Flink's serializable type strings (SHOW CREATE TABLE), SHOW … LIKE
patterns, ALTER TABLE's item lists, and the function DDL's statement forms."""

from __future__ import annotations

import pytest

from strom.table.planner.alter_table import _items
from strom.table.planner.catalog_statements import _sql_type
from strom.table.planner.function_ddl import _CREATE, _DROP, _SHOW, like_matches


@pytest.mark.parametrize(
    ("summary", "serializable"),
    [
        ("STRING", "VARCHAR(2147483647)"),
        ("MAP<STRING, BYTES>", "MAP<VARCHAR(2147483647), VARBINARY(2147483647)>"),
        ("TIMESTAMP_LTZ(3) NOT NULL", "TIMESTAMP(3) WITH LOCAL TIME ZONE NOT NULL"),
        ("ROW<`a` INT, `b` STRING>", "ROW<`a` INT, `b` VARCHAR(2147483647)>"),
        ("DECIMAL(10, 2)", "DECIMAL(10, 2)"),
    ],
)
def test_types_print_as_flink_serializes_them(summary: str, serializable: str) -> None:
    assert _sql_type(summary) == serializable


def test_like_patterns() -> None:
    assert like_matches("add_one", "a%", False)
    assert not like_matches("Add_one", "a%", False)
    assert like_matches("Add_one", "a%", True)
    assert like_matches("ts", "_s", False) and not like_matches("tss", "_s", False)
    assert like_matches("a.b", "a.b", False) and not like_matches("axb", "a.b", False)


def test_alter_items_split_at_top_level_commas_only() -> None:
    assert _items("(e INT FIRST, f AS CONCAT(a, 'x,y') AFTER b, g DECIMAL(10, 2))") == [
        "e INT FIRST",
        "f AS CONCAT(a, 'x,y') AFTER b",
        "g DECIMAL(10, 2)",
    ]
    assert _items("d DOUBLE COMMENT 'dd'") == ["d DOUBLE COMMENT 'dd'"]
    assert _items("(m MAP<STRING, INT>, n INT)") == ["m MAP<STRING, INT>", "n INT"]


def test_function_statement_forms() -> None:
    created = _CREATE.match("CREATE TEMPORARY SYSTEM FUNCTION IF NOT EXISTS f AS 'm.g' LANGUAGE PYTHON;")
    assert created is not None and created.groups() == ("TEMPORARY", "SYSTEM", "IF NOT EXISTS ", "f", "m.g", "PYTHON")
    plain = _CREATE.match("create function db.f as 'm.g'")
    assert plain is not None and (plain[1], plain[4], plain[6]) == (None, "db.f", None)
    dropped = _DROP.match("DROP TEMPORARY FUNCTION IF EXISTS `f`")
    assert dropped is not None and dropped[4] == "`f`"
    shown = _SHOW.match("SHOW USER FUNCTIONS IN db NOT ILIKE 'A%'")
    assert shown is not None and (shown[1], shown[2], shown[3], shown[4], shown[5]) == (
        "USER ",
        "db",
        "NOT ",
        "ILIKE",
        "A%",
    )
