"""``CREATE TABLE t WITH (…) AS SELECT …`` (Flink's CTAS, ``SqlCreateTableAs``): the table is declared with the
query's columns (names and types; a time attribute becomes a plain TIMESTAMP) and the options of its WITH clause,
registered in the catalog, and the query inserted into it by one job — the result is that INSERT's. A column list
(``CREATE TABLE t (…) WITH (…) AS SELECT``) is refused: Flink 2.3 merges it with the query's columns, not here."""

from __future__ import annotations

from typing import TYPE_CHECKING

from sqlglot import exp

from strom.table.catalog.catalog_manager import CatalogTable
from strom.table.errors import TableException
from strom.table.planner.ddl import catalog_table_of
from strom.table.sql.flink_dialect import FlinkDialect
from strom.table.sql.parser import at, parse_statement
from strom.table.table_result import TableResult

if TYPE_CHECKING:
    from strom.table.table_environment import TableEnvironment

__all__ = ["create_table_as"]


def create_table_as(t_env: TableEnvironment, statement: exp.Create, *, temporary: bool) -> TableResult:
    target = statement.this
    if isinstance(target, exp.Schema):
        raise TableException(
            f"Unsupported SQL construct{at(statement)}: CREATE TABLE with a column list AS SELECT; "
            "expected CREATE TABLE name WITH (…) AS SELECT (the columns are the query's)"
        )
    plan = t_env._sql_to_rel().convert_query(statement.expression)
    columns = ", ".join(
        f"`{name}` {str(data_type).replace(' *ROWTIME*', '').replace(' *PROCTIME*', '')}"
        for name, data_type in zip(plan.row_type.names, plan.row_type.types, strict=True)
    )
    declared = parse_statement(f"CREATE TABLE `x` ({columns})")
    assert isinstance(declared, exp.Create) and isinstance(declared.this, exp.Schema)
    schema = declared.this
    schema.set("this", target.copy())
    create = statement.copy()
    create.set("expression", None)
    create.set("this", schema)
    table: CatalogTable = catalog_table_of(create)
    catalog = t_env._catalog
    ident = catalog.qualify([p.name for p in target.parts])
    exists = bool(statement.args.get("exists"))
    if exists and catalog.get_table(ident) is not None:
        raise TableException(
            f"Unsupported SQL construct{at(statement)}: CREATE TABLE IF NOT EXISTS … AS SELECT of an existing table "
            f"{target.sql(dialect=FlinkDialect)}; hint: INSERT INTO it"
        )
    catalog.create_table(ident, table, temporary=temporary, ignore_if_exists=False)
    try:
        return t_env._execute_inserts([(str(ident), plan)])
    except Exception:  # the sink refused the query (e.g. updates into an append-only sink): no table is left
        catalog.drop_table(ident, temporary=temporary, if_exists=True)
        raise
