"""strom on Apache Spark: the JobManager in the driver, TaskManagers hosted in Spark tasks (docs/deploy-spark.md)."""

from strom.deploy.spark.spark_cluster import SparkCluster

__all__ = ["SparkCluster"]
