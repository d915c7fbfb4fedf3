"""PyFlink's ``pyflink.common.job_status`` module path (re-exports)."""

from strom.runtime.execution_state import JobStatus

__all__ = ["JobStatus"]
