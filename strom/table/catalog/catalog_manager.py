"""Flink's ``CatalogManager`` with one ``GenericInMemoryCatalog``: ``default_catalog.default_database``.

Tables are :class:`CatalogTable` (columns, computed columns, watermark, primary key, connector options) and views
are :class:`CatalogView` (a planned query). Temporary objects shadow permanent ones of the same path, as in Flink.
Names resolve as Flink's: ``t``, ``db.t`` or ``cat.db.t`` against the current catalog and database.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from strom.table.catalog.catalog import Catalog
from strom.table.errors import ValidationException
from strom.table.types import DataType

__all__ = ["CatalogColumn", "CatalogManager", "CatalogTable", "CatalogView", "ObjectIdentifier"]

DEFAULT_CATALOG = "default_catalog"
DEFAULT_DATABASE = "default_database"


@dataclass(frozen=True, slots=True)
class ObjectIdentifier:
    catalog: str
    database: str
    name: str

    def __str__(self) -> str:
        return f"{self.catalog}.{self.database}.{self.name}"

    def as_summary_string(self) -> str:
        return str(self)

    def as_serializable_string(self) -> str:
        """Flink's quoted form: ```cat`.`db`.`name```."""
        return f"`{self.catalog}`.`{self.database}`.`{self.name}`"


@dataclass(frozen=True, slots=True)
class CatalogColumn:
    """A physical column (``type`` set) or a computed one (``expression``: SQL text over the physical columns)."""

    name: str
    type: DataType | None
    expression: str | None = None
    metadata: str | None = None  # the metadata key of a METADATA column
    virtual: bool = False  # a METADATA ... VIRTUAL column: read, never written
    comment: str = ""


@dataclass(frozen=True, slots=True)
class CatalogTable:
    """A table backed by a connector (``options['connector']``)."""

    columns: tuple[CatalogColumn, ...]
    options: dict[str, str]
    watermark: tuple[str, str] | None = None  # (rowtime column, watermark expression as SQL)
    primary_key: tuple[str, ...] = ()
    partition_keys: tuple[str, ...] = ()
    comment: str = ""

    def physical_columns(self) -> tuple[CatalogColumn, ...]:
        return tuple(c for c in self.columns if c.expression is None)


@dataclass(frozen=True, slots=True)
class CatalogView:
    """A view: the logical plan of its query (a :data:`~strom.table.planner.logical.RelNode`)."""

    plan: Any = field(repr=False)
    query: str = ""


@dataclass
class _Database:
    tables: dict[str, CatalogTable | CatalogView] = field(default_factory=dict)


class CatalogManager:
    """The catalogs of one ``TableEnvironment``."""

    def __init__(self) -> None:
        self._catalogs: dict[str, dict[str, _Database]] = {DEFAULT_CATALOG: {DEFAULT_DATABASE: _Database()}}
        self._temporary: dict[ObjectIdentifier, CatalogTable | CatalogView] = {}
        self._external: dict[str, Catalog] = {}  # registered catalogs (Flink's Catalog): SparkCatalog, …
        self.current_catalog = DEFAULT_CATALOG
        self.current_database = DEFAULT_DATABASE

    def qualify(self, path: Sequence[str]) -> ObjectIdentifier:
        parts = list(path)
        if not 1 <= len(parts) <= 3:
            raise ValidationException(f"expected a table path of 1 to 3 parts (cat.db.name); got {'.'.join(parts)}")
        name = parts[-1]
        database = parts[-2] if len(parts) >= 2 else self.current_database
        catalog = parts[-3] if len(parts) == 3 else self.current_catalog
        return ObjectIdentifier(catalog, database, name)

    def register_catalog(self, name: str, catalog: Catalog) -> None:
        if name in self._catalogs or name in self._external:
            raise ValidationException(f"Catalog {name} already exists; expected a new name")
        self._external[name] = catalog

    def _database(self, ident: ObjectIdentifier) -> _Database:
        if ident.catalog in self._external:
            raise ValidationException(
                f"Catalog '{ident.catalog}' does not support creating or dropping tables here; expected "
                f"{DEFAULT_CATALOG}; hint: USE CATALOG {DEFAULT_CATALOG}, or create the table in its own system"
            )
        try:
            return self._catalogs[ident.catalog][ident.database]
        except KeyError:
            raise ValidationException(
                f"expected an existing catalog and database; got {ident.catalog}.{ident.database}; "
                f"hint: the default is {DEFAULT_CATALOG}.{DEFAULT_DATABASE}"
            ) from None

    def create_table(
        self, ident: ObjectIdentifier, table: CatalogTable | CatalogView, *, temporary: bool, ignore_if_exists: bool
    ) -> None:
        if temporary:
            if ident in self._temporary:
                if ignore_if_exists:
                    return
                raise ValidationException(f"Temporary table '{ident}' already exists")
            if ident.catalog not in self._external:
                self._database(ident)
            self._temporary[ident] = table
            return
        tables = self._database(ident).tables
        if ident.name in tables:
            if ignore_if_exists:
                return
            raise ValidationException(f"Table or view '{ident}' already exists; hint: CREATE TABLE IF NOT EXISTS")
        tables[ident.name] = table

    def get_table(self, ident: ObjectIdentifier) -> CatalogTable | CatalogView | None:
        if ident in self._temporary:
            return self._temporary[ident]
        if ident.catalog in self._external:
            return self._external[ident.catalog].get_table(ident.database, ident.name)
        return self._database(ident).tables.get(ident.name)

    def drop_table(self, ident: ObjectIdentifier, *, temporary: bool, if_exists: bool) -> bool:
        store: dict[Any, Any] = self._temporary if temporary else self._database(ident).tables
        key: Any = ident if temporary else ident.name
        if key in store:
            del store[key]
            return True
        if not if_exists:
            raise ValidationException(f"Table or view '{ident}' does not exist; hint: DROP TABLE IF EXISTS")
        return False

    def list_tables(self) -> list[str]:
        ident = ObjectIdentifier(self.current_catalog, self.current_database, "")
        external = self._external.get(self.current_catalog)
        names = set(external.list_tables(self.current_database) if external else self._database(ident).tables)
        names.update(
            t.name for t in self._temporary if (t.catalog, t.database) == (self.current_catalog, self.current_database)
        )
        return sorted(names)

    def list_views(self) -> list[str]:
        found = [t.name for t, v in self._temporary.items() if isinstance(v, CatalogView)]
        ident = ObjectIdentifier(self.current_catalog, self.current_database, "")
        if self.current_catalog not in self._external:
            found += [n for n, v in self._database(ident).tables.items() if isinstance(v, CatalogView)]
        return sorted(found)

    def list_catalogs(self) -> list[str]:
        return sorted([*self._catalogs, *self._external])

    def list_databases(self) -> list[str]:
        if self.current_catalog in self._external:
            return sorted(self._external[self.current_catalog].list_databases())
        return sorted(self._catalogs[self.current_catalog])

    def create_database(self, name: str, *, ignore_if_exists: bool) -> None:
        databases = self._catalogs[self.current_catalog]
        if name in databases and not ignore_if_exists:
            raise ValidationException(f"Database {name} already exists")
        databases.setdefault(name, _Database())

    def use_catalog(self, name: str) -> None:
        if name in self._external:
            self.current_catalog = name
            self.current_database = self._external[name].get_default_database()
            return
        if name not in self._catalogs:
            raise ValidationException(f"A catalog with name [{name}] does not exist.")
        self.current_catalog = name
        if self.current_database not in self._catalogs[name]:  # back from a registered catalog's database
            self.current_database = DEFAULT_DATABASE

    def use_database(self, name: str) -> None:
        external = self._external.get(self.current_catalog)
        if external is not None and external.database_exists(name):
            self.current_database = name
            return
        if external is not None or name not in self._catalogs[self.current_catalog]:
            raise ValidationException(f"A database with name [{name}] does not exist in the catalog.")
        self.current_database = name
