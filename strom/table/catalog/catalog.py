"""Flink's ``Catalog`` interface (``org.apache.flink.table.catalog.Catalog``), the part strom's catalog manager
asks of a catalog registered beside its in-memory one (``t_env.register_catalog(name, catalog)`` or ``CREATE
CATALOG name WITH ('type' = …)``): its databases and the tables in them, as :class:`CatalogTable` objects whose
options name the connector that reads and writes them."""

from __future__ import annotations

from abc import ABC, abstractmethod
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from strom.table.catalog.catalog_manager import CatalogTable

__all__ = ["Catalog"]


class Catalog(ABC):
    @abstractmethod
    def get_default_database(self) -> str:
        """The database ``USE CATALOG`` starts in."""

    @abstractmethod
    def list_databases(self) -> list[str]:
        """The names of the catalog's databases."""

    @abstractmethod
    def database_exists(self, database: str) -> bool:
        """Whether ``database`` exists."""

    @abstractmethod
    def list_tables(self, database: str) -> list[str]:
        """The names of the tables (and views) of ``database``."""

    @abstractmethod
    def get_table(self, database: str, name: str) -> CatalogTable | None:
        """The table ``database.name``, or None."""

    def close(self) -> None:
        """Releases what the catalog holds (nothing by default)."""
        return None
