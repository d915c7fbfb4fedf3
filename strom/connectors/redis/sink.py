"""``RedisStreamSink``: records (mappings of field → value) appended to a Redis stream with ``XADD``.

    entries.sink_to(RedisStreamSink.builder()
                    .set_connection(RedisConnectionOptions.from_url("redis://127.0.0.1:6379/0"))
                    .set_stream("alerts")
                    .set_delivery_guarantee(DeliveryGuarantee.EXACTLY_ONCE)
                    .build())

**At-least-once** (the default): each subtask sends its records in pipelined ``XADD``\\ s, at the latest at every
checkpoint; after a failover the records since the checkpoint are appended again.

**Exactly-once**: a subtask stages its records in a Redis list of its own per checkpoint
(``<prefix>:stage:<subtask>:<last checkpoint>:<writer>:<n>``) and hands the list's name to the checkpoint; when
the checkpoint completes, one Lua script appends the staged records to the stream, deletes the list and sets a
marker ``<list>:applied`` (kept a week) — atomically, and only once: a commit repeated after a restore finds the
marker and does nothing. A restored subtask deletes the staging lists a failed attempt began after the restored
checkpoint (the same rule as the exactly-once JDBC sink). Stream entry ids are Redis's own (``*``): they are new
ids at commit time.
"""

from __future__ import annotations

import enum
import json
import logging
import time
import uuid
from abc import ABC, abstractmethod
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from strom.api.sink import (
    CommitRequest,
    Committer,
    PrecommittingSinkWriter,
    SinkWriter,
    SinkWriterContext,
    StatefulSinkWriter,
    TwoPhaseCommittingSink,
)
from strom.connectors.redis.connection import RedisConnectionOptions, connect, redis_module
from strom.exceptions import ConnectorError, InvalidProgramError
from strom.runtime.streamrecord import short_repr

__all__ = ["DeliveryGuarantee", "RedisStreamCommittable", "RedisStreamSink"]

log = logging.getLogger(__name__)

_APPLY = """
if redis.call('EXISTS', KEYS[3]) == 1 then return -1 end
local items = redis.call('LRANGE', KEYS[1], 0, -1)
for _, item in ipairs(items) do
  redis.call('XADD', KEYS[2], '*', unpack(cjson.decode(item)))
end
redis.call('SET', KEYS[3], '1', 'EX', 604800)
redis.call('DEL', KEYS[1])
return #items
"""


class DeliveryGuarantee(enum.Enum):
    """Flink's ``DeliveryGuarantee``."""

    AT_LEAST_ONCE = "at-least-once"
    EXACTLY_ONCE = "exactly-once"
    NONE = "none"


def _fields(record: Any) -> list[str]:
    """A record's fields as the flat ``[field, value, ...]`` list of ``XADD``."""
    if not isinstance(record, Mapping) or not record:
        raise ConnectorError(
            f"expected a non-empty mapping of field names to values for XADD; got {short_repr(record)}; "
            "hint: map the stream to dicts, e.g. .map(lambda e: {'user': e.user, 'amount': e.amount})"
        )
    flat: list[str] = []
    for key, value in record.items():
        if not isinstance(value, str | int | float | bytes) or isinstance(value, bool):
            raise ConnectorError(
                f"expected str, int, float or bytes values for XADD; got {short_repr(value)} for the field "
                f"{key!r} of {short_repr(record)}; hint: convert the value to a string"
            )
        flat += [str(key), value.decode() if isinstance(value, bytes) else str(value)]
    return flat


class RedisStreamSink(TwoPhaseCommittingSink[Mapping[str, Any], "RedisStreamCommittable"]):
    def __init__(
        self,
        connection: RedisConnectionOptions,
        stream: str,
        delivery_guarantee: DeliveryGuarantee = DeliveryGuarantee.AT_LEAST_ONCE,
        transaction_prefix: str | None = None,
        batch_size: int = 1000,
    ) -> None:
        if not isinstance(connection, RedisConnectionOptions):
            raise InvalidProgramError(
                f"expected RedisConnectionOptions; got {connection!r:.60}; "
                "hint: RedisConnectionOptions.from_url('redis://127.0.0.1:6379/0')"
            )
        if not isinstance(stream, str) or not stream:
            raise InvalidProgramError(f"expected a stream name; got {stream!r}; hint: set_stream('alerts')")
        if not isinstance(delivery_guarantee, DeliveryGuarantee):
            raise InvalidProgramError(
                f"expected a DeliveryGuarantee; got {delivery_guarantee!r}; hint: DeliveryGuarantee.EXACTLY_ONCE"
            )
        prefix = transaction_prefix or f"strom:{stream}"
        self.connection = connection
        self.stream = stream
        self.delivery_guarantee = delivery_guarantee
        self.prefix = prefix
        self.batch_size = batch_size

    @staticmethod
    def builder() -> RedisStreamSink.Builder:
        return RedisStreamSink.Builder()

    @property
    def exactly_once(self) -> bool:
        return self.delivery_guarantee is DeliveryGuarantee.EXACTLY_ONCE

    def validate(self) -> None:
        redis_module()

    def create_writer(self, context: SinkWriterContext) -> PrecommittingSinkWriter[Any, RedisStreamCommittable]:
        return _StagingWriter(self, context) if self.exactly_once else _AppendingWriter(self, context)  # type: ignore[return-value]

    def restore_writer(
        self, context: SinkWriterContext, recovered_state: list[Any]
    ) -> PrecommittingSinkWriter[Any, RedisStreamCommittable]:
        return self.create_writer(context)

    def create_committer(self) -> Committer[RedisStreamCommittable]:
        return _StagedCommitter(self)

    class Builder:
        def __init__(self) -> None:
            self._fields: dict[str, Any] = {}

        def set_connection(self, connection: RedisConnectionOptions) -> RedisStreamSink.Builder:
            self._fields["connection"] = connection
            return self

        def set_stream(self, stream: str) -> RedisStreamSink.Builder:
            self._fields["stream"] = stream
            return self

        def set_delivery_guarantee(self, guarantee: DeliveryGuarantee) -> RedisStreamSink.Builder:
            self._fields["delivery_guarantee"] = guarantee
            return self

        def set_transaction_prefix(self, prefix: str) -> RedisStreamSink.Builder:
            """The prefix of the exactly-once sink's staging lists: unique per job writing to one server."""
            self._fields["transaction_prefix"] = prefix
            return self

        def build(self) -> RedisStreamSink:
            missing = [k for k in ("connection", "stream") if k not in self._fields]
            if missing:
                raise InvalidProgramError(
                    f"expected RedisStreamSink.builder() to be given {', '.join(missing)}; got none; "
                    "hint: set_connection(...), set_stream('name')"
                )
            return RedisStreamSink(**self._fields)


@dataclass(frozen=True)
class RedisStreamCommittable:
    """A staging list of the exactly-once sink, appended to the stream when its checkpoint completes."""

    staging_key: str


class _Writer(ABC):
    def __init__(self, sink: RedisStreamSink, context: SinkWriterContext, role: str) -> None:
        self.sink = sink
        self.context = context
        self.buffer: list[list[str]] = []
        self.client: Any = None
        self.what = f"{role} subtask {context.subtask_index + 1}/{context.parallelism}, stream {sink.stream!r}"

    def write(self, element: Any) -> None:
        self.write_batch([element])

    def write_batch(self, elements: list[Any]) -> None:
        self.buffer.extend(_fields(e) for e in elements)
        if len(self.buffer) >= self.sink.batch_size:
            self._send()

    def flush(self, end_of_input: bool) -> None:
        self._send()

    def _client(self) -> Any:
        if self.client is None:
            self.client = connect(self.sink.connection, what=self.what)
        return self.client

    def _fail(self, exc: Exception, doing: str) -> ConnectorError:
        self.client = None
        return ConnectorError(
            f"expected to {doing} on Redis at {self.sink.connection.describe()} ({self.what}); got "
            f"{type(exc).__name__}: {exc}; hint: the job's restart strategy restores the last checkpoint"
        )

    @abstractmethod
    def _send(self) -> None:
        """Send the buffered entries (appended to the stream, or staged for the commit)."""

    def prepare_commit(self) -> list[RedisStreamCommittable]:
        return []

    def close(self) -> None:
        if self.client is not None:
            self.client.close()
            self.client = None


class _AppendingWriter(_Writer, SinkWriter[Any]):
    def __init__(self, sink: RedisStreamSink, context: SinkWriterContext) -> None:
        super().__init__(sink, context, "RedisStreamSink (at-least-once)")

    def _send(self) -> None:
        if not self.buffer:
            return
        redis = redis_module()
        try:
            pipe = self._client().pipeline(transaction=False)
            for fields in self.buffer:
                pipe.execute_command("XADD", self.sink.stream, "*", *fields)
            pipe.execute()
        except redis.RedisError as exc:
            raise self._fail(exc, f"append {len(self.buffer)} entries") from exc
        self.buffer = []


class _StagingWriter(_Writer, PrecommittingSinkWriter[Any, RedisStreamCommittable], StatefulSinkWriter[Any, Any]):
    def __init__(self, sink: RedisStreamSink, context: SinkWriterContext) -> None:
        super().__init__(sink, context, "RedisStreamSink (exactly-once)")
        self.last_checkpoint = context.restored_checkpoint_id or 0
        self.token = uuid.uuid4().hex[:12]
        self.n = 0
        self.staged = False
        self._delete_leftovers()

    def _key(self) -> str:
        return f"{self.sink.prefix}:stage:{self.context.subtask_index}:{self.last_checkpoint}:{self.token}:{self.n}"

    def _send(self) -> None:
        if not self.buffer:
            return
        redis = redis_module()
        try:
            self._client().rpush(self._key(), *[json.dumps(f) for f in self.buffer])
        except redis.RedisError as exc:
            raise self._fail(exc, f"stage {len(self.buffer)} entries") from exc
        self.buffer = []
        self.staged = True

    def prepare_commit(self) -> list[RedisStreamCommittable]:
        self._send()
        if not self.staged:
            return []
        committable = RedisStreamCommittable(self._key())
        self.n += 1
        self.staged = False
        return [committable]

    def snapshot_state(self, checkpoint_id: int) -> list[Any]:
        self.last_checkpoint = checkpoint_id
        return []

    def _delete_leftovers(self) -> None:
        """Delete the staging lists of old subtasks mapping onto this one that began after the restored
        checkpoint: no completed checkpoint holds them."""
        prefix = f"{self.sink.prefix}:stage:"
        client = self._client()
        for key in client.scan_iter(match=prefix + "*", count=1000):
            parts = key[len(prefix) :].split(":")
            if len(parts) != 4 or not (parts[0].isdigit() and parts[1].isdigit()):
                continue
            if int(parts[0]) % self.context.parallelism != self.context.subtask_index:
                continue
            if int(parts[1]) >= self.last_checkpoint and parts[2] != self.token:
                client.delete(key)
                log.info("%s: deleted the staging list %s of a failed attempt", self.what, key)


class _StagedCommitter(Committer[RedisStreamCommittable]):
    def __init__(self, sink: RedisStreamSink) -> None:
        self.sink = sink
        self.client: Any = None
        self.script: Any = None

    def commit(self, requests: list[CommitRequest[RedisStreamCommittable]]) -> None:
        redis = redis_module()
        for request in requests:
            key = request.get_committable().staging_key
            for attempt in range(1, 4):
                try:
                    if self.client is None:
                        self.client = connect(self.sink.connection, what="the exactly-once Redis committer")
                        self.script = self.client.register_script(_APPLY)
                    applied = self.script(keys=[key, self.sink.stream, key + ":applied"])
                    if applied == -1:
                        request.signal_already_committed()
                    break
                except (redis.ConnectionError, redis.TimeoutError, ConnectorError) as exc:
                    self.close()
                    if attempt == 3:
                        raise ConnectorError(
                            f"expected to append the staged entries {key} to the stream {self.sink.stream!r} on "
                            f"{self.sink.connection.describe()}; got {exc}; hint: the job restarts and commits "
                            "them from its checkpoint"
                        ) from exc
                    time.sleep(attempt)

    def close(self) -> None:
        if self.client is not None:
            self.client.close()
            self.client = None
            self.script = None
