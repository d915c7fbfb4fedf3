"""PyFlink's ``pyflink.common`` module path: the classes a PyFlink program imports from it, re-exported from
their strom modules (one definition each), so ``from strom.common import Types, WatermarkStrategy`` works as
``from pyflink.common import ...`` does. See docs/pyflink.md."""

from strom.api.eventtime import WatermarkStrategy
from strom.api.execution_config import ExecutionConfig
from strom.api.row import Row, RowKind
from strom.api.serialization_schema import (
    ByteArraySchema,
    DeserializationSchema,
    SerializationSchema,
    SimpleStringSchema,
)
from strom.api.time import Duration, Instant, Time
from strom.api.type_serializer import TypeSerializer
from strom.api.typeinfo import TypeInformation, Types
from strom.client.job_client import JobClient, JobExecutionResult
from strom.config import ConfigOption, Configuration
from strom.connectors.file_system.bulk_writer import BulkWriterFactory
from strom.connectors.file_system.encoders import Encoder
from strom.runtime.execution_state import JobStatus

__all__ = [
    "BulkWriterFactory",
    "ByteArraySchema",
    "ConfigOption",
    "Configuration",
    "DeserializationSchema",
    "Duration",
    "Encoder",
    "ExecutionConfig",
    "Instant",
    "JobClient",
    "JobExecutionResult",
    "JobStatus",
    "Row",
    "RowKind",
    "SerializationSchema",
    "SimpleStringSchema",
    "Time",
    "TypeInformation",
    "TypeSerializer",
    "Types",
    "WatermarkStrategy",
]
