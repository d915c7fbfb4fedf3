"""Spark tables and DataFrames as strom sources, and Spark tables as exactly-once sinks.

    >>> from strom.connectors.spark import SparkSource, SparkTableSink
    >>> sales = env.from_source(SparkSource.from_table(spark, "sales"), None, "sales")   # named Rows
    >>> totals.sink_to(SparkTableSink("sales_per_day", partition_by=["day"]))

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
from strom.connectors.spark.sink import SparkTableCommitter, SparkTableSink, StagedFile
from strom.connectors.spark.source import SparkSource

__all__ = [
    "SparkColumn",
    "SparkSource",
    "SparkTable",
    "SparkTableCommitter",
    "SparkTableSink",
    "StagedFile",
    "TableFile",
    "arrow_schema_to_spark",
    "arrow_to_spark_type",
    "describe_table",
    "spark_schema_to_arrow",
    "spark_to_arrow_type",
    "spark_to_type_info",
    "table_files",
]
