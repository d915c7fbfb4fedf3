"""The metric groups of a task's operators and Flink's operator metrics strom keeps (``currentInputWatermark``,
``currentOutputWatermark``, ``numLateRecordsDropped``).

None of them costs the record path: the watermark gauges read what the operators keep anyway
(``current_watermark``, ``output_watermark()``), ``numLateRecordsDropped`` the count a window operator keeps
of the late records it drops; they are read when reported.
"""

from __future__ import annotations

import functools
import socket
from collections.abc import Sequence
from typing import TYPE_CHECKING

from strom.runtime.metrics.metric_group import GenericMetricGroup
from strom.runtime.metrics.metrics import AttributeCounter, GaugeView
from strom.runtime.metrics.scope import (
    OPERATOR_SCOPE,
    TASK_SCOPE,
    operator_scope,
    operator_variables,
    task_scope,
    task_variables,
)

if TYPE_CHECKING:
    from strom.runtime.deployment import TaskDeploymentDescriptor
    from strom.runtime.metrics.task_io_metric_group import TaskIOMetricGroup
    from strom.runtime.operators.base import StreamOperator

__all__ = ["host_name", "register_task_metrics"]


@functools.cache
def host_name() -> str:
    """Flink's ``<host>``: the name of the machine the TaskManager runs on."""
    return socket.gethostname()


def register_task_metrics(
    group: TaskIOMetricGroup, tdd: TaskDeploymentDescriptor, tm_id: str, operators: Sequence[StreamOperator]
) -> None:
    """Give every operator of the chain its metric group (before they open) and register the system metrics."""
    variables = task_variables(
        host=host_name(),
        tm_id=tm_id,
        job_id=tdd.job_id,
        job_name=tdd.job_name,
        task_id=tdd.vertex_id,
        task_attempt_id=tdd.execution_attempt_id,
        task_name=tdd.task_name,
        subtask_index=tdd.subtask_index,
        task_attempt_num=tdd.attempt_number,
    )
    group.variables = variables
    registry = group.registry
    task = GenericMetricGroup(registry, scope=task_scope(variables), logical_scope=TASK_SCOPE, variables=variables)
    head = operators[0]
    task.register_metric("currentInputWatermark", GaugeView(lambda: head.current_watermark))
    for op in operators:
        op_vars = operator_variables(variables, operator_id=op.operator_id, operator_name=op.name)
        op_group = GenericMetricGroup(
            registry,
            scope=operator_scope(op_vars),
            logical_scope=OPERATOR_SCOPE,
            variables=op_vars,
            query_prefix=f"{op.name}.",
        )
        op_group.register_metric("currentInputWatermark", GaugeView(functools.partial(_input_watermark, op)))
        op_group.register_metric("currentOutputWatermark", GaugeView(op.output_watermark))
        if hasattr(op, "num_late_records_dropped"):
            op_group.register_metric("numLateRecordsDropped", AttributeCounter(op, "num_late_records_dropped"))
        if op.runtime_context is not None:
            op.runtime_context.metric_group = op_group


def _input_watermark(op: StreamOperator) -> int:
    return op.current_watermark
