"""strom's error tree.

Every error strom raises on purpose derives from :class:`StromError`::

    StromError
    ├── InvalidProgramError        build-time misuse of the DataStream API (also a ValueError)
    ├── ConfigurationError         an unknown option or a value of the wrong type (also a ValueError)
    ├── JobExecutionError          the job ended FAILED; carries the root cause as text and object
    │   └── JobCancelledError      the job was cancelled before it finished
    ├── UserFunctionError          a user function raised; names job, operator, subtask, attempt, input
    ├── SerializationError         a record, function or message could not be (de)serialized
    ├── CheckpointStorageError     checkpoint/savepoint files missing, malformed or not writable
    │   └── CorruptStateError      a state, channel-state or _metadata file fails its checksum
    ├── CheckpointError            a checkpoint or savepoint could not be taken or restored
    ├── ClusterError               the runtime itself could not do its work
    │   ├── AuthenticationError    a peer failed the HMAC challenge
    │   ├── FrameError             a frame was too large, truncated or of an unknown version
    │   ├── RpcError               a remote call failed or its connection was lost
    │   └── ResourceError          not enough slots / TaskManagers for the job
    │       └── TaskManagerStartError  TaskManagers keep ending before they register (no restart helps)
    └── TaskCancelledError         internal: raised inside a task thread to unwind it on cancellation

Messages follow *expected → got → hint*.
"""

from __future__ import annotations

__all__ = [
    "AuthenticationError",
    "CheckpointError",
    "CheckpointStorageError",
    "ClusterError",
    "ConfigurationError",
    "ConnectorError",
    "CorruptStateError",
    "FrameError",
    "InvalidProgramError",
    "JobCancelledError",
    "JobExecutionError",
    "ResourceError",
    "RpcError",
    "SerializationError",
    "StromError",
    "TaskCancelledError",
    "TaskManagerStartError",
    "UserFunctionError",
]


class StromError(Exception):
    """Root of every error strom raises on purpose."""


class InvalidProgramError(StromError, ValueError):
    """The DataStream program cannot be compiled (misuse found at build time)."""


class ConfigurationError(StromError, ValueError):
    """An option is unknown or has a value of the wrong type."""


class JobExecutionError(StromError):
    """The job failed. ``cause_text`` holds the remote root cause with its Python traceback."""

    def __init__(self, message: str, *, job_id: str = "", cause_text: str = "") -> None:
        super().__init__(message)
        self.job_id = job_id
        self.cause_text = cause_text


class JobCancelledError(JobExecutionError):
    """The job was cancelled before it finished."""


class UserFunctionError(StromError):
    """A user function raised while processing a record.

    Raised on the task thread, shipped to the JobMaster as text (the original exception may not be
    picklable), and shown by ``execute()`` inside :class:`JobExecutionError`.
    """

    def __init__(
        self,
        message: str,
        *,
        operator: str = "",
        subtask_index: int = 0,
        parallelism: int = 1,
        attempt: int = 0,
        user_traceback: str = "",
    ) -> None:
        super().__init__(message)
        self.operator = operator
        self.subtask_index = subtask_index
        self.parallelism = parallelism
        self.attempt = attempt
        self.user_traceback = user_traceback

    def __reduce__(self) -> tuple[object, ...]:
        return (
            _rebuild_user_function_error,
            (
                str(self),
                self.operator,
                self.subtask_index,
                self.parallelism,
                self.attempt,
                self.user_traceback,
            ),
        )


def _rebuild_user_function_error(
    message: str, operator: str, subtask_index: int, parallelism: int, attempt: int, user_traceback: str
) -> UserFunctionError:
    return UserFunctionError(
        message,
        operator=operator,
        subtask_index=subtask_index,
        parallelism=parallelism,
        attempt=attempt,
        user_traceback=user_traceback,
    )


class SerializationError(StromError):
    """A record, a user function or a message could not be (de)serialized."""


class ConnectorError(StromError):
    """A connector cannot reach or understand its external system: a path that does not exist, a URL scheme
    without its package, a record that does not fit its format (names the file, line or row, and column)."""


class CheckpointError(StromError):
    """A checkpoint or savepoint was not triggered, was aborted, or its state does not fit the job."""


class CheckpointStorageError(StromError):
    """Checkpoint or savepoint storage failed: a ``_metadata`` file is missing or malformed, a state file
    cannot be read or written, or a storage URI is unusable."""


class CorruptStateError(CheckpointStorageError):
    """A file of a checkpoint or savepoint (keyed, operator or channel state, or ``_metadata``) does not match
    the checksum recorded when it was written: it was damaged since. Restoring it again reads the same bytes, so
    the job fails instead of restarting. ``file``, ``operator_id`` (empty for ``_metadata``) and
    ``checkpoint_id`` (-1 when unknown) say which."""

    def __init__(self, message: str, *, file: str = "", operator_id: str = "", checkpoint_id: int = -1) -> None:
        super().__init__(message)
        self.file = file
        self.operator_id = operator_id
        self.checkpoint_id = checkpoint_id

    def __reduce__(self) -> tuple[object, ...]:
        return (_rebuild_corrupt_state_error, (str(self), self.file, self.operator_id, self.checkpoint_id))


def _rebuild_corrupt_state_error(message: str, file: str, operator_id: str, checkpoint_id: int) -> CorruptStateError:
    return CorruptStateError(message, file=file, operator_id=operator_id, checkpoint_id=checkpoint_id)


class ClusterError(StromError):
    """The runtime could not do its work (process, network or resource trouble)."""


class AuthenticationError(ClusterError):
    """A peer did not prove knowledge of the cluster secret."""


class FrameError(ClusterError):
    """A frame on the wire was too large, truncated or of an unknown version."""


class RpcError(ClusterError):
    """A remote call failed, timed out or lost its connection."""


class ResourceError(ClusterError):
    """The cluster cannot offer the slots the job needs."""


class TaskManagerStartError(ResourceError):
    """TaskManagers the cluster started ended before registering, ``resourcemanager.start-worker.max-failure-rate``
    times within a minute: the job waiting for their slots fails instead of restarting (a restart would wait for
    TaskManagers that do not start either)."""


class TaskCancelledError(StromError):
    """Internal: unwinds a task thread once its task is cancelled."""
