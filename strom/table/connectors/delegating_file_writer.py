"""The FileSink's writer inside a table sink's own commit protocol (partition commit, INSERT OVERWRITE).

Both wrap the FileSink's writer: records, flushes and the writer's state go to it unchanged; the wrapper records
the end of input and adds its own committables in ``prepare_commit`` (the subclass's).
"""

from __future__ import annotations

from typing import Any

from strom.api.sink import PrecommittingSinkWriter, StatefulSinkWriter

__all__ = ["DelegatingFileWriter"]


class DelegatingFileWriter(PrecommittingSinkWriter[Any, Any], StatefulSinkWriter[Any, Any]):
    """Delegates to ``inner`` (a FileSink writer); ``ended`` once the end of input was flushed."""

    def __init__(self, inner: Any, subtask: int) -> None:
        self.inner = inner
        self.subtask = subtask
        self.ended = False

    def write(self, element: Any) -> None:
        self.inner.write_batch([element])

    def write_batch(self, elements: list[Any]) -> None:
        self.inner.write_batch(elements)

    def flush(self, end_of_input: bool) -> None:
        self.ended = self.ended or end_of_input
        self.inner.flush(end_of_input)

    def snapshot_state(self, checkpoint_id: int) -> list[Any]:
        return list(self.inner.snapshot_state(checkpoint_id))

    def prepare_savepoint(self, checkpoint_id: int) -> None:
        self.inner.prepare_savepoint(checkpoint_id)

    def on_savepoint_snapshot(self, checkpoint_id: int) -> None:
        self.inner.on_savepoint_snapshot(checkpoint_id)

    def close(self) -> None:
        self.inner.close()
