"""Catalogs (Flink's ``CatalogManager`` over ``GenericInMemoryCatalog``): where tables and views are registered."""
