"""Flink's ``AlterSchemaConverter`` and ``SqlAlterTable``/``SqlAlterView`` conversions on the in-memory catalog.

``ALTER TABLE [IF EXISTS] t RENAME TO u | SET ('k' = 'v', …) | RESET ('k', …) | ADD … | MODIFY … | DROP …`` (columns
with ``FIRST`` / ``AFTER c``, ``WATERMARK``, ``PRIMARY KEY``) and ``ALTER VIEW v RENAME TO w | AS query``, as
Flink 2.3 runs them (facts ``tests/data/flink_sql/feat_alter_*.txt``): a temporary table or view is refused as
Flink refuses it, a changed schema is validated by planning its scan.
"""

from __future__ import annotations

import dataclasses
import re
from typing import TYPE_CHECKING

from strom.table.catalog.catalog_manager import CatalogColumn, CatalogTable, CatalogView, ObjectIdentifier
from strom.table.errors import TableException, ValidationException
from strom.table.planner.statement_results import identifier_of, ok_result
from strom.table.sql.flink_dialect import FlinkDialect
from strom.table.sql.parser import parse_expression, parse_statement

if TYPE_CHECKING:
    from strom.table.table_environment import TableEnvironment
    from strom.table.table_result import TableResult

__all__ = ["execute_alter"]

_FLAGS = re.IGNORECASE | re.DOTALL
_NAME = r"((?:`[^`]+`|[\w$]+)(?:\s*\.\s*(?:`[^`]+`|[\w$]+)){0,2})"
_ALTER = re.compile(rf"^\s*ALTER\s+(TABLE|VIEW)\s+(IF\s+EXISTS\s+)?{_NAME}\s+(.*?)\s*;?\s*$", _FLAGS)
_RENAME = re.compile(rf"^RENAME\s+TO\s+{_NAME}$", _FLAGS)
_OPTIONS = re.compile(r"^(SET|RESET)\s*\((.*)\)$", _FLAGS)
_CHANGE = re.compile(r"^(ADD|MODIFY|DROP)\s+(.*)$", _FLAGS)
_POSITION = re.compile(r"\s+(FIRST|AFTER\s+(`[^`]+`|[\w$]+))$", _FLAGS)
_WATERMARK = re.compile(r"^WATERMARK\s+FOR\s+(`[^`]+`|[\w$]+)\s+AS\s+(.+)$", _FLAGS)
_PRIMARY_KEY = re.compile(r"^(?:CONSTRAINT\s+\S+\s+)?PRIMARY\s+KEY\s*\((.*)\)\s*(?:NOT\s+ENFORCED)?$", _FLAGS)


def execute_alter(t_env: TableEnvironment, text: str) -> TableResult:
    m = _ALTER.match(text)
    if m is None:
        raise ValidationException(f"SQL parse failed. expected ALTER TABLE t … or ALTER VIEW v …; got {text[:80]}")
    kind, if_exists, ident, action = m[1].upper(), bool(m[2]), identifier_of(t_env, m[3]), m[4]
    catalog = t_env._catalog
    found = catalog.get_table(ident)
    if found is None and if_exists:
        return ok_result()
    if kind == "VIEW":
        _alter_view(t_env, ident, found, action)
        return ok_result()
    if isinstance(found, CatalogView):
        raise ValidationException("ALTER TABLE for a view is not allowed")
    if found is None or ident in catalog._temporary:
        raise ValidationException(f"Table {ident.as_serializable_string()} doesn't exist or is a temporary table.")
    if (renamed := _RENAME.match(action)) is not None:
        _rename(t_env, ident, found, renamed[1])
    elif (options := _OPTIONS.match(action)) is not None:
        _replace(t_env, ident, _alter_options(found, options[1].upper(), options[2]))
    elif (change := _CHANGE.match(action)) is not None:
        altered = _alter_schema(found, change[1].upper(), change[2].strip())
        _validate(ident, altered)
        _replace(t_env, ident, altered)
    else:
        raise ValidationException(
            f"SQL parse failed. expected RENAME TO, SET (…), RESET (…), ADD, MODIFY or DROP after ALTER TABLE "
            f"{ident.name}; got {action[:60]}"
        )
    return ok_result()


def _alter_view(t_env: TableEnvironment, ident: ObjectIdentifier, found: object, action: str) -> None:
    catalog = t_env._catalog
    if isinstance(found, CatalogTable):
        raise ValidationException("ALTER VIEW for a table is not allowed")
    if found is None or ident in catalog._temporary:
        raise ValidationException(f"View {ident.as_serializable_string()} doesn't exist or is a temporary view.")
    assert isinstance(found, CatalogView)
    if (renamed := _RENAME.match(action)) is not None:
        _rename(t_env, ident, found, renamed[1])
        return
    query = re.match(r"^AS\s+(.*)$", action, _FLAGS)
    if query is None:
        raise ValidationException(f"SQL parse failed. expected RENAME TO or AS query after ALTER VIEW; got {action}")
    statement = parse_statement(query[1])
    plan = t_env._sql_to_rel().convert_query(statement)
    _replace(t_env, ident, CatalogView(plan, statement.sql(dialect=FlinkDialect)))


def _rename(t_env: TableEnvironment, ident: ObjectIdentifier, found: CatalogTable | CatalogView, new: str) -> None:
    target = identifier_of(t_env, new)
    catalog = t_env._catalog
    catalog.create_table(target, found, temporary=False, ignore_if_exists=False)
    catalog.drop_table(ident, temporary=False, if_exists=False)


def _replace(t_env: TableEnvironment, ident: ObjectIdentifier, table: CatalogTable | CatalogView) -> None:
    catalog = t_env._catalog
    catalog.drop_table(ident, temporary=False, if_exists=False)
    catalog.create_table(ident, table, temporary=False, ignore_if_exists=False)


def _items(text: str) -> list[str]:
    """The comma-separated items of ``(a, b)`` (or the one item ``a``), split at top-level commas only."""
    text = text.strip()
    if not (text.startswith("(") and text.endswith(")")):
        return [text]
    items, depth, quote, start = [], 0, False, 1
    for i, c in enumerate(text[1:-1], start=1):
        if c == "'":
            quote = not quote
        elif not quote and c in "(<":
            depth += 1
        elif not quote and c in ")>":
            depth -= 1
        elif not quote and depth == 0 and c == ",":
            items.append(text[start:i].strip())
            start = i + 1
    items.append(text[start:-1].strip())
    return [i for i in items if i]


def _alter_options(table: CatalogTable, action: str, body: str) -> CatalogTable:
    options = dict(table.options)
    if action == "SET":
        for item in _items(f"({body})"):
            kv = re.match(r"^'((?:[^']|'')*)'\s*=\s*'((?:[^']|'')*)'$", item, _FLAGS)
            if kv is None:
                raise ValidationException(f"SQL parse failed. expected 'key' = 'value' in ALTER TABLE SET; got {item}")
            options[kv[1].replace("''", "'")] = kv[2].replace("''", "'")
        return dataclasses.replace(table, options=options)
    for item in _items(f"({body})"):
        key = item.strip().strip("'").replace("''", "'")
        if key.lower() == "connector":
            raise ValidationException("ALTER TABLE RESET does not support changing 'connector'")
        options.pop(key, None)
    return dataclasses.replace(table, options=options)


def _failed(reason: str) -> ValidationException:
    return ValidationException(f"Failed to execute ALTER TABLE statement.\n{reason}")


def _alter_schema(table: CatalogTable, action: str, body: str) -> CatalogTable:
    if action == "DROP":
        return _drop(table, body)
    columns = list(table.columns)
    for item in _items(body):
        if (wm := _WATERMARK.match(item)) is not None:
            if action == "ADD" and table.watermark is not None:
                raise _failed("The base table has already defined the watermark strategy.")
            if action == "MODIFY" and table.watermark is None:
                raise _failed("The base table does not define any watermark strategy.")
            expression = parse_expression(wm[2]).sql(dialect=FlinkDialect)
            table = dataclasses.replace(table, watermark=(wm[1].strip("`"), expression))
            continue
        if (pk := _PRIMARY_KEY.match(item)) is not None:
            if action == "ADD" and table.primary_key:
                raise _failed("The base table has already defined the primary key constraint.")
            keys = tuple(k.strip().strip("`") for k in pk[1].split(","))
            table = dataclasses.replace(table, primary_key=keys)
            continue
        position = _POSITION.search(item)
        definition = item[: position.start()] if position else item
        column = _column_of(definition)
        names = [c.name for c in columns]
        if action == "ADD" and column.name in names:
            raise _failed(f"Column `{column.name}` already exists in the table.")
        if action == "MODIFY":
            if column.name not in names:
                raise _failed(f"Column `{column.name}` does not exist in the table.")
            old = columns.pop(names.index(column.name))
            if not column.comment and old.comment:
                column = dataclasses.replace(column, comment=old.comment)
            at = names.index(column.name) if position is None else None
        else:
            at = None
        _insert(columns, column, position[1] if position else None, at)
    return dataclasses.replace(table, columns=tuple(columns))


def _insert(columns: list[CatalogColumn], column: CatalogColumn, position: str | None, at: int | None) -> None:
    if position is None:
        columns.insert(len(columns) if at is None else at, column)
    elif position.upper() == "FIRST":
        columns.insert(0, column)
    else:
        after = position.split(None, 1)[1].strip("`")
        names = [c.name for c in columns]
        if after not in names:
            raise _failed(f"Referenced column `{after}` by 'AFTER' does not exist in the table.")
        columns.insert(names.index(after) + 1, column)


def _column_of(definition: str) -> CatalogColumn:
    from sqlglot import exp

    from strom.table.planner.ddl import catalog_table_of

    statement = parse_statement(f"CREATE TABLE __alter ({definition}) WITH ('connector' = '__alter')")
    assert isinstance(statement, exp.Create)
    return catalog_table_of(statement).columns[0]


def _drop(table: CatalogTable, body: str) -> CatalogTable:
    word = body.upper().split()
    if word[:1] == ["WATERMARK"]:
        if table.watermark is None:
            raise _failed("The base table does not define any watermark strategy.")
        return dataclasses.replace(table, watermark=None)
    if word[:2] == ["PRIMARY", "KEY"] or word[:1] == ["CONSTRAINT"]:
        if not table.primary_key:
            raise _failed("The base table does not define any primary key.")
        return dataclasses.replace(table, primary_key=())
    dropped = [n.strip().strip("`") for n in _items(body)]
    names = [c.name for c in table.columns]
    for name in dropped:
        if name not in names:
            raise _failed(f"The column `{name}` does not exist in the base table.")
        if name in table.partition_keys:
            raise _failed(f"The column `{name}` is used as the partition keys.")
        for other in table.columns:
            if other.expression is not None and other.name not in dropped and _references(other.expression, name):
                raise _failed(f"The column `{name}` is referenced by computed column `{other.name}`.")
        if name in table.primary_key:
            raise _failed(f"The column `{name}` is used as the primary key.")
        if table.watermark is not None and name == table.watermark[0]:
            raise _failed(f"The column `{name}` is referenced by watermark expression.")
    return dataclasses.replace(table, columns=tuple(c for c in table.columns if c.name not in dropped))


def _references(expression: str, name: str) -> bool:
    from sqlglot import exp

    return any(c.name == name for c in parse_expression(expression).find_all(exp.Column))


def _validate(ident: ObjectIdentifier, table: CatalogTable) -> None:
    from strom.table.planner.ddl import plan_scan

    try:
        plan_scan(ident.name, table)
    except (ValidationException, TableException) as err:
        raise _failed(str(err)) from None
