"""The results of non-query statements: Flink's ``TableResultImpl.TABLE_RESULT_OK`` (printed ``OK``) and one-column
listings (SHOW …), and a statement's object name resolved against the current catalog and database."""

from __future__ import annotations

from typing import TYPE_CHECKING

from strom.api.row import Row
from strom.table.catalog.catalog_manager import ObjectIdentifier
from strom.table.planner.logical import RowType
from strom.table.table_result import TableResult
from strom.table.types import parse_type

if TYPE_CHECKING:
    from strom.table.table_environment import TableEnvironment

__all__ = ["identifier_of", "listing_result", "ok_result"]

_STRING = parse_type("STRING")


def ok_result() -> TableResult:
    return TableResult(RowType(("result",), (_STRING,)), static_rows=[Row("OK")], streaming=False, raw=True)


def listing_result(title: str, names: list[str]) -> TableResult:
    return TableResult(RowType((title,), (_STRING,)), static_rows=[Row(n) for n in names], streaming=False)


def identifier_of(t_env: TableEnvironment, name: str) -> ObjectIdentifier:
    """``t``, ``db.t`` or ``cat.db.t`` (parts in backquotes or not) as a full identifier."""
    return t_env._catalog.qualify([p.strip().strip("`") for p in name.split(".")])
