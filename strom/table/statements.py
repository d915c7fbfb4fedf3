"""The non-query statements of ``execute_sql``: CREATE/DROP TABLE, VIEW and DATABASE, USE, SHOW, DESCRIBE."""

from __future__ import annotations

from typing import TYPE_CHECKING

from sqlglot import exp

from strom.api.row import Row
from strom.table.catalog.catalog_manager import CatalogTable, CatalogView
from strom.table.errors import TableException, ValidationException
from strom.table.planner.ddl import catalog_table_of
from strom.table.planner.logical import RowType
from strom.table.planner.project import rename
from strom.table.planner.statement_results import listing_result, ok_result
from strom.table.sql.flink_dialect import FlinkDialect
from strom.table.sql.parser import at
from strom.table.table_result import TableResult
from strom.table.types import parse_type

if TYPE_CHECKING:
    from strom.table.table_environment import TableEnvironment

__all__ = ["execute_statement", "execute_text_statement"]

_STRING = parse_type("STRING")


def execute_text_statement(t_env: TableEnvironment, text: str) -> TableResult | None:
    """The statements sqlglot does not parse in Flink's form (function DDL, ALTER, SHOW …); ``None`` for others."""
    from strom.table.planner.catalog_statements import execute_catalog_statement
    from strom.table.planner.function_ddl import execute_function_statement

    result = execute_function_statement(t_env, text)
    return result if result is not None else execute_catalog_statement(t_env, text)


def execute_statement(t_env: TableEnvironment, statement: exp.Expr, text: str) -> TableResult:
    catalog = t_env._catalog
    if isinstance(statement, exp.Create):
        kind = str(statement.args.get("kind") or "").upper()
        temporary = any(isinstance(p, exp.TemporaryProperty) for p in _properties(statement))
        exists = bool(statement.args.get("exists"))
        if kind == "DATABASE":
            catalog.create_database(statement.this.name, ignore_if_exists=exists)
            return ok_result()
        target = statement.this.this if isinstance(statement.this, exp.Schema) else statement.this
        ident = catalog.qualify([p.name for p in target.parts])
        if kind == "TABLE":
            if statement.expression is not None:
                from strom.table.create_table_as import create_table_as

                return create_table_as(t_env, statement, temporary=temporary)
            table: CatalogTable | CatalogView = catalog_table_of(statement)
        elif kind == "VIEW":
            plan = t_env._sql_to_rel().convert_query(statement.expression)
            columns = [c.name for c in statement.this.expressions] if isinstance(statement.this, exp.Schema) else []
            if columns:
                plan = rename(plan, columns)
            table = CatalogView(plan, statement.expression.sql(dialect=FlinkDialect))
        else:
            raise TableException(f"Unsupported SQL construct{at(statement)}: CREATE {kind}")
        catalog.create_table(ident, table, temporary=temporary, ignore_if_exists=exists)
        return ok_result()
    if isinstance(statement, exp.Drop):
        kind = str(statement.args.get("kind") or "").upper()
        ident = catalog.qualify([p.name for p in statement.this.parts])
        temporary = bool(statement.args.get("temporary"))
        if kind not in ("TABLE", "VIEW"):
            raise TableException(f"Unsupported SQL construct{at(statement)}: DROP {kind}")
        found = (
            catalog.drop_table(ident, temporary=True, if_exists=True)
            if temporary or catalog.get_table(ident) in catalog._temporary.values()
            else False
        )
        if not found:
            catalog.drop_table(ident, temporary=False, if_exists=bool(statement.args.get("exists")))
        return ok_result()
    if isinstance(statement, exp.Use):
        kind = str(statement.args.get("kind") or "").upper()
        if kind == "CATALOG":
            catalog.use_catalog(statement.this.name)
        else:
            catalog.use_database(statement.this.name)
        return ok_result()
    return _show(t_env, statement, text)


def _properties(statement: exp.Create) -> list[exp.Expr]:
    properties = statement.args.get("properties")
    return list(properties.expressions) if properties is not None else []


def _show(t_env: TableEnvironment, statement: exp.Expr, text: str) -> TableResult:
    words = text.strip().rstrip(";").split()
    upper = [w.upper() for w in words]
    catalog = t_env._catalog
    if upper[:2] == ["CREATE", "CATALOG"]:
        from strom.table.catalog.spark_catalog import create_catalog_statement

        created = create_catalog_statement(text)
        if created is not None:
            catalog.register_catalog(*created)
            return ok_result()
    if upper[:2] == ["SHOW", "TABLES"]:
        return listing_result("table name", catalog.list_tables())
    if upper[:2] == ["SHOW", "VIEWS"]:
        return listing_result("view name", catalog.list_views())
    if upper[:2] == ["SHOW", "DATABASES"]:
        return listing_result("database name", catalog.list_databases())
    if upper[:2] == ["SHOW", "CATALOGS"]:
        return listing_result("catalog name", catalog.list_catalogs())
    if upper and upper[0] in ("DESCRIBE", "DESC") and len(words) == 2:
        table = t_env.from_path(words[1])
        row_type = table._plan.row_type
        rows = [
            Row(n, str(t).replace(" NOT NULL", ""), t.is_nullable)
            for n, t in zip(row_type.names, row_type.types, strict=True)
        ]
        columns = RowType(("name", "type", "null"), (_STRING, _STRING, parse_type("BOOLEAN")))
        return TableResult(columns, static_rows=rows, streaming=False)
    raise ValidationException(
        f"Unsupported statement{at(statement)}: {text.strip()[:60]}; expected CREATE, DROP, INSERT, SELECT, USE, "
        "SHOW or DESCRIBE (docs/sql.md)"
    )
