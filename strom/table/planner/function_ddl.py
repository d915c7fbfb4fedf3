"""Flink's ``FunctionCatalog`` DDL: ``CREATE/DROP [TEMPORARY [SYSTEM]] FUNCTION`` and ``SHOW [USER] FUNCTIONS``.

A function is a Python ``@udf``/``@udtf``/``@udaf`` object (or an ``AggregateFunction`` instance) named by its
dotted path, as PyFlink's ``CREATE FUNCTION f AS 'module.name' LANGUAGE PYTHON``; Java classes (the default
language) are refused with Flink's message and a hint. Three namespaces as Flink's: temporary system functions,
temporary catalog functions and catalog functions (the in-memory catalog's), checked with Flink 2.3's messages
(facts ``tests/data/flink_sql/feat_fn_*.txt``). A created function is callable by its simple name in SQL and the
Table API (``call('f', …)``), through the same registry as ``create_temporary_function``.
"""

from __future__ import annotations

import importlib
import re
import weakref
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from strom.table.catalog.catalog_manager import ObjectIdentifier
from strom.table.errors import TableException, ValidationException
from strom.table.planner.statement_results import identifier_of, listing_result, ok_result

if TYPE_CHECKING:
    from strom.table.table_environment import TableEnvironment
    from strom.table.table_result import TableResult

__all__ = ["FunctionCatalog", "execute_function_statement", "function_catalog", "load_python_function"]

_NAME = r"((?:`[^`]+`|[\w$]+)(?:\s*\.\s*(?:`[^`]+`|[\w$]+)){0,2})"
_CREATE = re.compile(
    rf"^\s*CREATE\s+(?:(TEMPORARY)\s+(?:(SYSTEM)\s+)?)?FUNCTION\s+(IF\s+NOT\s+EXISTS\s+)?{_NAME}\s+AS\s+"
    r"'((?:[^']|'')*)'(?:\s+LANGUAGE\s+(\w+))?(?:\s+USING\s+.*)?\s*;?\s*$",
    re.IGNORECASE | re.DOTALL,
)
_DROP = re.compile(
    rf"^\s*DROP\s+(?:(TEMPORARY)\s+(?:(SYSTEM)\s+)?)?FUNCTION\s+(IF\s+EXISTS\s+)?{_NAME}\s*;?\s*$",
    re.IGNORECASE | re.DOTALL,
)
_SHOW = re.compile(
    rf"^\s*SHOW\s+(USER\s+)?FUNCTIONS(?:\s+(?:FROM|IN)\s+{_NAME})?(?:\s+(NOT\s+)?(I?LIKE)\s+'((?:[^']|'')*)')?"
    r"\s*;?\s*$",
    re.IGNORECASE | re.DOTALL,
)
_DESCRIBE = re.compile(rf"^\s*(?:DESCRIBE|DESC)\s+FUNCTION\s+(EXTENDED\s+)?{_NAME}\s*;?\s*$", re.IGNORECASE | re.DOTALL)
_STATEMENT = re.compile(r"^\s*(CREATE|DROP)\s+(?:TEMPORARY\s+(?:SYSTEM\s+)?)?FUNCTION\b", re.IGNORECASE)
_SHOW_STATEMENT = re.compile(r"^\s*SHOW\s+(?:USER\s+)?FUNCTIONS\b", re.IGNORECASE)


@dataclass(frozen=True, slots=True)
class CatalogFunction:
    """Flink's ``CatalogFunctionImpl``: the function's dotted path and language."""

    class_name: str
    language: str = "PYTHON"


@dataclass
class FunctionCatalog:
    """The user functions of one ``TableEnvironment`` (Flink's ``FunctionCatalog``)."""

    temporary_system: dict[str, CatalogFunction] = field(default_factory=dict)  # by lower-case name
    temporary: dict[ObjectIdentifier, CatalogFunction] = field(default_factory=dict)
    catalog: dict[ObjectIdentifier, CatalogFunction] = field(default_factory=dict)

    def user_function_names(self, catalog: str, database: str) -> list[str]:
        names = set(self.temporary_system)
        for store in (self.temporary, self.catalog):
            names.update(i.name for i in store if (i.catalog, i.database) == (catalog, database))
        return sorted(names)


_CATALOGS: weakref.WeakKeyDictionary[Any, FunctionCatalog] = weakref.WeakKeyDictionary()


def function_catalog(t_env: TableEnvironment) -> FunctionCatalog:
    catalog = _CATALOGS.get(t_env)
    if catalog is None:
        catalog = _CATALOGS[t_env] = FunctionCatalog()
    return catalog


def load_python_function(class_name: str, name: str) -> Any:
    """The object at the dotted path ``class_name`` as a registrable function (PyFlink's ``load_python_function``)."""
    from strom.table.udf import UserDefinedFunctionWrapper, udaf
    from strom.table.user_defined_function import ImperativeAggregateFunction

    module_name, _, attribute = class_name.rpartition(".")
    cause: Exception | None = None
    try:
        found: Any = getattr(importlib.import_module(module_name), attribute) if module_name else None
    except (ImportError, AttributeError) as err:
        found, cause = None, err
    if isinstance(found, type) and issubclass(found, ImperativeAggregateFunction):
        found = found()
    if isinstance(found, ImperativeAggregateFunction):
        found = udaf(found)
    if not isinstance(found, UserDefinedFunctionWrapper):
        got = f"{type(cause).__name__}: {cause}" if cause is not None else f"a {type(found).__name__}"
        raise ValidationException(
            f"Cannot instantiate user-defined function '{name}'. expected '{class_name}' to name a module's "
            f"@udf/@udtf/@udaf object or AggregateFunction; got {got}; hint: the module must be importable "
            "(on sys.path) in the client and the TaskManagers"
        )
    return found


def execute_function_statement(t_env: TableEnvironment, text: str) -> TableResult | None:
    """Runs ``text`` when it is a function statement; ``None`` for any other statement."""
    if _STATEMENT.match(text):
        created = _CREATE.match(text)
        if created is not None:
            return _create(t_env, created)
        dropped = _DROP.match(text)
        if dropped is not None:
            return _drop(t_env, dropped)
        raise ValidationException(
            f"SQL parse failed. expected CREATE [TEMPORARY [SYSTEM]] FUNCTION [IF NOT EXISTS] f AS 'module.name' "
            f"[LANGUAGE PYTHON] or DROP [TEMPORARY [SYSTEM]] FUNCTION [IF EXISTS] f; got {text.strip()[:80]}"
        )
    described = _DESCRIBE.match(text)
    if described is not None:
        return _describe(t_env, bool(described[1]), described[2])
    if _SHOW_STATEMENT.match(text):
        shown = _SHOW.match(text)
        if shown is None:
            raise ValidationException(
                "SQL parse failed. expected SHOW [USER] FUNCTIONS [FROM|IN db] [[NOT] LIKE|ILIKE 'pattern']; "
                f"got {text.strip()[:80]}"
            )
        return _show(t_env, shown)
    return None


def _create(t_env: TableEnvironment, m: re.Match[str]) -> TableResult:
    temporary, system, if_not_exists, name, class_name = bool(m[1]), bool(m[2]), bool(m[3]), m[4], m[5]
    language = (m[6] or "JAVA").upper()
    functions = function_catalog(t_env)
    function = CatalogFunction(class_name.replace("''", "'"), language)
    if system:
        simple = name.strip("`").lower()
        if simple in functions.temporary_system:
            if if_not_exists:
                return ok_result()
            raise TableException(
                f"Could not execute CREATE TEMPORARY SYSTEM FUNCTION: (functionName: [{name}], ...): Could not "
                f"register temporary system function. A function named '{name}' does already exist."
            )
        _register(simple, function, f"'{simple}'", language, "temporary system")
        functions.temporary_system[simple] = function
        return ok_result()
    ident = identifier_of(t_env, name)
    store = functions.temporary if temporary else functions.catalog
    if ident in store:
        if if_not_exists:
            return ok_result()
        if temporary:
            raise ValidationException(
                f"Could not register temporary catalog function. A function '{ident}' does already exist."
            )
        raise ValidationException(f"Function {ident.database}.{ident.name} already exists in Catalog {ident.catalog}.")
    kind = "temporary catalog" if temporary else "catalog"
    _register(ident.name, function, f"'{ident}'", language, kind)
    store[ident] = function
    return ok_result()


def _register(name: str, function: CatalogFunction, shown: str, language: str, kind: str) -> None:
    from strom.table.udf import register

    if language != "PYTHON":
        raise ValidationException(
            f"Could not register {kind} function {shown} due to implementation errors. expected LANGUAGE PYTHON; "
            f"got LANGUAGE {language} ('{function.class_name}' would be a Java class); hint: strom runs Python "
            "functions only: CREATE FUNCTION f AS 'module.name' LANGUAGE PYTHON"
        )
    register(name, load_python_function(function.class_name, name))


def _drop(t_env: TableEnvironment, m: re.Match[str]) -> TableResult:
    from strom.table.udf import unregister

    temporary, system, if_exists, name = bool(m[1]), bool(m[2]), bool(m[3]), m[4]
    functions = function_catalog(t_env)
    if system:
        simple = name.strip("`").lower()
        if functions.temporary_system.pop(simple, None) is None:
            if if_exists:
                return ok_result()
            raise ValidationException(
                f"Could not drop temporary system function. A function named '{name}' doesn't exist."
            )
        unregister(simple)
        return ok_result()
    ident = identifier_of(t_env, name)
    store = functions.temporary if temporary else functions.catalog
    if store.pop(ident, None) is None:
        if if_exists:
            return ok_result()
        if temporary:
            raise ValidationException(f"Temporary catalog function {ident.as_serializable_string()} doesn't exist")
        raise ValidationException(f"Function {ident.database}.{ident.name} does not exist in Catalog {ident.catalog}.")
    if ident.name.lower() not in functions.temporary_system:
        unregister(ident.name)
    return ok_result()


def _show(t_env: TableEnvironment, m: re.Match[str]) -> TableResult:

    user, database, negate, like, pattern = bool(m[1]), m[2], bool(m[3]), m[4], m[5]
    catalog = t_env._catalog
    if database is not None:
        parts = [p.strip().strip("`") for p in database.split(".")]
        catalog_name, database_name = (parts[0], parts[1]) if len(parts) == 2 else (catalog.current_catalog, parts[0])
    else:
        catalog_name, database_name = catalog.current_catalog, catalog.current_database
    names = function_catalog(t_env).user_function_names(catalog_name, database_name)
    if not user:
        names = sorted({*names, *builtin_function_names()})
    if pattern is not None:
        names = [n for n in names if like_matches(n, pattern.replace("''", "'"), like.upper() == "ILIKE") != negate]
    return listing_result("function name", names)


def builtin_function_names() -> list[str]:
    """The names of strom's built-in functions (Flink lists its own: ``SHOW FUNCTIONS`` differs there)."""
    from strom.table.functions import builtin_functions
    from strom.table.functions.aggregate_functions import AGGREGATE_FUNCTIONS

    return sorted({*builtin_functions.FUNCTIONS, *AGGREGATE_FUNCTIONS})


def like_matches(value: str, pattern: str, case_insensitive: bool) -> bool:
    """SQL ``LIKE`` (``%`` any run, ``_`` one character) as Flink's ``SHOW … LIKE`` filters names."""
    regex = "".join(".*" if c == "%" else "." if c == "_" else re.escape(c) for c in pattern)
    return re.fullmatch(regex, value, re.IGNORECASE | re.DOTALL if case_insensitive else re.DOTALL) is not None


def _describe(t_env: TableEnvironment, extended: bool, name: str) -> TableResult:
    """``DESCRIBE FUNCTION [EXTENDED] f`` of a user function: Flink's info rows."""
    from strom.api.row import Row
    from strom.table.planner.logical import RowType
    from strom.table.table_result import TableResult
    from strom.table.types import parse_type
    from strom.table.udf import lookup

    functions = function_catalog(t_env)
    simple = name.strip("`").lower()
    system = functions.temporary_system.get(simple)
    ident = identifier_of(t_env, name)
    temporary = functions.temporary.get(ident)
    function = system or temporary or functions.catalog.get(ident)
    if function is None:
        raise ValidationException(
            f"Function with the identifier '{ident}' doesn't exist; expected a function created with CREATE FUNCTION "
            "(built-in functions: docs/sql/functions.md)"
        )
    rows = [
        ("is system function", str(system is not None).lower()),
        ("is temporary", str(system is not None or temporary is not None).lower()),
        ("class name", function.class_name),
        ("function language", function.language),
        ("resource uris", "[]"),
    ]
    if extended:
        wrapper = lookup(ident.name)
        kind = "SCALAR"
        if wrapper is not None and wrapper.table_function:
            kind = "TABLE"
        elif wrapper is not None and wrapper.aggregate is not None:
            kind = "TABLE_AGGREGATE" if wrapper.table_aggregate else "AGGREGATE"
        signature = f"{simple}(*)" if system is not None else f"{ident}(*)"
        rows += [
            ("kind", kind),
            ("requirements", "[]"),
            ("is deterministic", "true"),
            ("supports constant folding", "true"),
            ("signature", signature),
        ]
    string = parse_type("STRING")
    return TableResult(
        RowType(("info name", "info value"), (string, string)), static_rows=[Row(*r) for r in rows], streaming=False
    )
