"""Spark tables and DataFrames as strom sources (and, by the sink's module, as sinks).

    >>> from strom.connectors.spark import SparkSource
    >>> source = SparkSource.from_table(spark, "sales")
    >>> env.from_source(source, None, "sales", source.get_produced_type())

:mod:`strom.connectors.spark.catalog` describes a table as Spark's catalog sees it and converts types between
Spark and pyarrow. Importing this package does not import pyspark: the functions that talk to Spark import it
when called, so TaskManagers without pyspark can read what a source built in the client hands them.
"""

from __future__ import annotations

from strom.connectors.spark.catalog import (
    SparkColumn,
    SparkTable,
    TableFile,
    arrow_schema_to_spark,
    arrow_to_spark_type,
    describe_table,
    spark_schema_to_arrow,
    spark_to_arrow_type,
    spark_to_type_info,
    table_files,
)
from strom.connectors.spark.source import SparkSource

__all__ = [
    "SparkColumn",
    "SparkSource",
    "SparkTable",
    "TableFile",
    "arrow_schema_to_spark",
    "arrow_to_spark_type",
    "describe_table",
    "spark_schema_to_arrow",
    "spark_to_arrow_type",
    "spark_to_type_info",
    "table_files",
]
