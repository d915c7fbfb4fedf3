"""Flink's catalog statements sqlglot does not parse in Flink's form: SHOW CREATE TABLE/VIEW, SHOW COLUMNS,
SHOW CURRENT CATALOG/DATABASE, DESCRIBE (Flink's seven columns), ALTER TABLE and ALTER VIEW.

Statements are recognised by their leading words and split with small regular expressions; column definitions
reuse the CREATE TABLE converter (:func:`~strom.table.planner.ddl.catalog_table_of`). The ALTER forms are in
:mod:`strom.table.planner.alter_table`; the texts are Flink 2.3's (facts ``tests/data/flink_sql/feat_alter_*.txt``).
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

from strom.api.row import Row
from strom.table.catalog.catalog_manager import CatalogTable, CatalogView, ObjectIdentifier
from strom.table.errors import TableException, ValidationException
from strom.table.planner.logical import RowType
from strom.table.planner.statement_results import identifier_of
from strom.table.sql.flink_dialect import FlinkDialect
from strom.table.sql.parser import parse_expression, parse_statement
from strom.table.table_result import TableResult
from strom.table.types import parse_type

if TYPE_CHECKING:
    from strom.table.table_environment import TableEnvironment

__all__ = ["execute_catalog_statement", "flink_expression", "show_create_table"]

_NAME = r"((?:`[^`]+`|[\w$]+)(?:\s*\.\s*(?:`[^`]+`|[\w$]+)){0,2})"
_END = r"\s*;?\s*$"
_FLAGS = re.IGNORECASE | re.DOTALL
_SHOW_CURRENT = re.compile(rf"^\s*SHOW\s+CURRENT\s+(CATALOG|DATABASE){_END}", _FLAGS)
_SHOW_CREATE = re.compile(rf"^\s*SHOW\s+CREATE\s+(TABLE|VIEW)\s+{_NAME}{_END}", _FLAGS)
_SHOW_COLUMNS = re.compile(
    rf"^\s*SHOW\s+COLUMNS\s+(?:FROM|IN)\s+{_NAME}(?:\s+(NOT\s+)?(LIKE)\s+'((?:[^']|'')*)')?{_END}", _FLAGS
)
_CATALOG_METADATA = re.compile(
    r"^\s*(?:(?:DESCRIBE|DESC)\s+CATALOG\s+(?:EXTENDED\s+)?|SHOW\s+CREATE\s+CATALOG\s+)(`[^`]+`|[\w$]+)\s*;?\s*$",
    _FLAGS,
)
_DESCRIBE = re.compile(rf"^\s*(?:DESCRIBE|DESC)\s+(?:EXTENDED\s+)?{_NAME}{_END}", _FLAGS)
_STRING = parse_type("STRING")


def execute_catalog_statement(t_env: TableEnvironment, text: str) -> TableResult | None:
    """Runs ``text`` when it is one of these statements; ``None`` for any other statement."""
    words = text.strip().split(None, 2)
    head = " ".join(w.upper() for w in words[:2])
    if head in ("ALTER TABLE", "ALTER VIEW"):
        from strom.table.planner.alter_table import execute_alter

        return execute_alter(t_env, text)
    if (m := _SHOW_CURRENT.match(text)) is not None:
        catalog = t_env._catalog
        value = catalog.current_catalog if m[1].upper() == "CATALOG" else catalog.current_database
        return _rows(f"current {m[1].lower()} name", [Row(value)])
    if (m := _SHOW_CREATE.match(text)) is not None:
        return _show_create(t_env, m[1].upper(), m[2])
    if (m := _CATALOG_METADATA.match(text)) is not None:  # the in-memory catalogs have no descriptor (Flink's)
        raise ValidationException(f"Cannot obtain metadata information from Catalog {m[1].strip('`')}.")
    if (m := _SHOW_COLUMNS.match(text)) is not None:
        return _describe(t_env, m[1], pattern=m[4], negate=bool(m[2]), statement="SHOW COLUMNS")
    if (m := _DESCRIBE.match(text)) is not None:
        return _describe(t_env, m[1], pattern=None, negate=False, statement="DESCRIBE")
    return None


def _rows(title: str, rows: list[Row]) -> TableResult:
    return TableResult(RowType((title,), (_STRING,)), static_rows=rows, streaming=False)


def flink_expression(sql: str) -> str:
    """An expression as Flink prints it in SHOW CREATE TABLE and DESCRIBE: identifiers in backquotes."""
    return parse_expression(sql).sql(dialect=FlinkDialect, identify=True)


def show_create_table(ident: ObjectIdentifier, table: CatalogTable, *, temporary: bool) -> str:
    """Flink's ``ShowCreateUtil.buildShowCreateTableRow`` text."""
    lines: list[str] = []
    for column in table.columns:
        if column.expression is not None:
            line = f"  `{column.name}` AS {flink_expression(column.expression)}"
        else:
            line = f"  `{column.name}` {_sql_type(str(column.type))}"
            if column.metadata is not None:
                line += " METADATA" + (f" FROM '{column.metadata}'" if column.metadata != column.name else "")
                line += " VIRTUAL" if column.virtual else ""
        comment = getattr(column, "comment", "")
        lines.append(line + (f" COMMENT '{_escape(comment)}'" if comment else ""))
    if table.watermark is not None:
        lines.append(f"  WATERMARK FOR `{table.watermark[0]}` AS {flink_expression(table.watermark[1])}")
    if table.primary_key:
        keys = ", ".join(f"`{k}`" for k in table.primary_key)
        lines.append(f"  CONSTRAINT `PK_{'_'.join(table.primary_key)}` PRIMARY KEY ({keys}) NOT ENFORCED")
    text = (
        f"CREATE {'TEMPORARY ' if temporary else ''}TABLE {ident.as_serializable_string()} (\n"
        + ",\n".join(lines)
        + "\n)\n"
    )
    if table.comment:
        text += f"COMMENT '{_escape(table.comment)}'\n"
    if table.partition_keys:
        text += "PARTITIONED BY (" + ", ".join(f"`{k}`" for k in table.partition_keys) + ")\n"
    options = ",\n".join(f"  '{_escape(k)}' = '{_escape(v)}'" for k, v in sorted(table.options.items()))
    return text + f"WITH (\n{options}\n)\n"


def _sql_type(text: str) -> str:
    """A type as Flink's ``asSerializableString`` (``STRING`` is ``VARCHAR(2147483647)``, ``BYTES``
    ``VARBINARY(2147483647)``, ``TIMESTAMP_LTZ(p)`` ``TIMESTAMP(p) WITH LOCAL TIME ZONE``)."""
    text = re.sub(r"\bSTRING\b", "VARCHAR(2147483647)", text)
    text = re.sub(r"\bBYTES\b", "VARBINARY(2147483647)", text)
    return re.sub(r"\bTIMESTAMP_LTZ\((\d+)\)", r"TIMESTAMP(\1) WITH LOCAL TIME ZONE", text)


def _escape(text: str) -> str:
    return text.replace("'", "''")


def _show_create(t_env: TableEnvironment, kind: str, name: str) -> TableResult:
    catalog = t_env._catalog
    ident = identifier_of(t_env, name)
    found = catalog.get_table(ident)
    if found is None:
        what = "Table" if kind == "TABLE" else "View"
        raise ValidationException(
            f"Could not execute SHOW CREATE {kind}. {what} with identifier {ident.as_serializable_string()} "
            "does not exist."
        )
    temporary = ident in catalog._temporary
    if kind == "TABLE":
        if isinstance(found, CatalogView):
            raise TableException(
                f"SHOW CREATE TABLE is only supported for tables, but {ident.as_serializable_string()} is a view. "
                "Please use SHOW CREATE VIEW instead."
            )
        return _rows("result", [Row(show_create_table(ident, found, temporary=temporary))])
    if not isinstance(found, CatalogView):
        raise TableException(
            f"SHOW CREATE VIEW is only supported for views, but {ident.as_serializable_string()} is a table. "
            "Please use SHOW CREATE TABLE instead."
        )
    columns = ",\n".join(f"  `{n}`" for n in found.plan.row_type.names)
    query = _expanded(t_env, found.query) if found.query else ""
    text = (
        f"CREATE {'TEMPORARY ' if temporary else ''}VIEW {ident.as_serializable_string()} (\n{columns}\n)\nAS {query}\n"
    )
    return _rows("result", [Row(text)])


def _describe(t_env: TableEnvironment, name: str, *, pattern: str | None, negate: bool, statement: str) -> TableResult:
    from strom.table.planner.function_ddl import like_matches

    ident = identifier_of(t_env, name)
    found = t_env._catalog.get_table(ident)
    if found is None:
        raise ValidationException(f"Tables or views with the identifier '{ident}' doesn't exist.")
    rows = _describe_rows(t_env, name, found)
    if pattern is not None:
        rows = [r for r in rows if like_matches(str(r[0]), pattern.replace("''", "'"), False) != negate]
    with_comment = isinstance(found, CatalogTable) and any(getattr(c, "comment", "") for c in found.columns)
    names: tuple[str, ...] = ("name", "type", "null", "key", "extras", "watermark")
    names += ("comment",) if with_comment else ()
    types = (_STRING, _STRING, parse_type("BOOLEAN"), _STRING, _STRING, _STRING, _STRING)
    return TableResult(
        RowType(names, types[: len(names)]),
        static_rows=[Row(*r[: len(names)]) for r in rows],
        streaming=False,
    )


def _describe_rows(t_env: TableEnvironment, name: str, found: CatalogTable | CatalogView) -> list[tuple[object, ...]]:
    row_type = t_env.from_path(name)._plan.row_type
    rows: list[tuple[object, ...]] = []
    for index, (column, data_type) in enumerate(zip(row_type.names, row_type.types, strict=True)):
        type_text = str(data_type).replace(" NOT NULL", "")
        key = extras = watermark = comment = ""
        if isinstance(found, CatalogTable):
            declared = found.columns[index]
            if found.primary_key and column in found.primary_key:
                key = f"PRI({', '.join(found.primary_key)})"
            if declared.expression is not None:
                extras = f"AS {flink_expression(declared.expression)}"
            elif declared.metadata is not None:
                extras = "METADATA" + (f" FROM '{declared.metadata}'" if declared.metadata != column else "")
                extras += " VIRTUAL" if declared.virtual else ""
            if found.watermark is not None and found.watermark[0] == column:
                watermark = flink_expression(found.watermark[1])
            comment = getattr(declared, "comment", "")
        rows.append((column, type_text, data_type.is_nullable, key, extras, watermark, comment))
    return rows


def _expanded(t_env: TableEnvironment, text: str) -> str:
    """A view's query as Calcite's expanded form Flink stores (``SELECT `t`.`a`\nFROM `cat`.`db`.`t` AS `t`\n
    WHERE …``) for a SELECT over one table without subqueries; other queries as written (quoted, pretty)."""
    from sqlglot import exp

    query = parse_statement(text)
    simple = (
        isinstance(query, exp.Select)
        and isinstance(query.args.get("from_"), exp.From)
        and isinstance(query.args["from_"].this, exp.Table)
        and not query.args.get("joins")
        and not any(
            isinstance(n, exp.Subquery | exp.Select) for n in query.find_all(exp.Subquery, exp.Select) if n is not query
        )
        and all(isinstance(e, exp.Column | exp.Star | exp.Alias) for e in query.expressions)
    )
    if not simple:
        return query.sql(dialect=FlinkDialect, identify=True, pretty=True)
    table = query.args["from_"].this
    alias = table.alias or table.name
    ident = identifier_of(t_env, ".".join(p.name for p in table.parts))
    names = t_env.from_path(str(ident))._plan.row_type.names

    def qualified(node: exp.Expr) -> exp.Expr:
        if isinstance(node, exp.Column) and not node.table and not isinstance(node.this, exp.Star):
            return exp.column(node.name, table=alias)
        return node

    items: list[str] = []
    for item in query.expressions:
        if isinstance(item, exp.Star):
            items.extend(f"`{alias}`.`{n}`" for n in names)
        else:
            items.append(item.transform(qualified).sql(dialect=FlinkDialect, identify=True))
    text = f"SELECT {', '.join(items)}\nFROM {ident.as_serializable_string()} AS `{alias}`"
    for key, word in (("where", "WHERE"), ("group", "GROUP BY"), ("having", "HAVING")):
        clause = query.args.get(key)
        if clause is not None:
            body = clause.transform(qualified).sql(dialect=FlinkDialect, identify=True)
            text += "\n" + (word + body[len(word) :] if body.upper().startswith(word) else f"{word} {body}")
    return text
