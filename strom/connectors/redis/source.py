"""``RedisStreamSource``: the entries of one or more Redis streams, replayable and exactly-once.

    source = (
        RedisStreamSource.builder()
        .set_connection(RedisConnectionOptions.from_url("redis://127.0.0.1:6379/0"))
        .set_streams(["clicks", "orders"])
        .build()
    )
    entries = env.from_source(source, WatermarkStrategy.for_bounded_out_of_orderness(Duration.of_seconds(1))
                              .with_timestamp_assigner(...).with_idleness(Duration.of_seconds(5)), "redis")

Each stream is a split the readers take as they ask (FLIP-27). A reader ``XREAD``\\ s its streams from the id it
read last, without blocking (an idle poll backs off in the source task), and emits each entry as a
:class:`RedisStreamEntry` ``(stream, id, fields)``. The last-read id per stream is the split's state in every
checkpoint, so a restored job reads on from exactly the entry after its checkpoint. Unbounded by default (idle
streams do not hold event time back when the watermark strategy has ``with_idleness``); ``set_bounded()`` reads
each stream up to the last entry it had when the job started, then ends.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from strom.api.source import Boundedness, Source, SourceReader, SourceReaderContext, SourceSplit
from strom.connectors.redis.connection import RedisConnectionOptions, connect, redis_module
from strom.exceptions import ConnectorError, InvalidProgramError

__all__ = ["RedisStreamEntry", "RedisStreamSource"]


@dataclass(frozen=True, slots=True)
class RedisStreamEntry:
    """One entry of a Redis stream: its stream's name, its id (``<ms>-<seq>``) and its fields."""

    stream: str
    id: str
    fields: dict[str, str]

    @property
    def timestamp(self) -> int:
        """The entry's id time in milliseconds (when Redis added it, for an id Redis generated)."""
        return int(self.id.split("-", 1)[0])


def _id_key(entry_id: str) -> tuple[int, int]:
    ms, _, seq = entry_id.partition("-")
    return int(ms), int(seq or 0)


class RedisStreamSource(Source[RedisStreamEntry]):
    def __init__(
        self,
        connection: RedisConnectionOptions,
        streams: Sequence[str],
        start_id: str = "0",
        bounded: bool = False,
    ) -> None:
        if not isinstance(connection, RedisConnectionOptions):
            raise InvalidProgramError(
                f"expected RedisConnectionOptions; got {connection!r:.60}; "
                "hint: RedisConnectionOptions.from_url('redis://127.0.0.1:6379/0')"
            )
        if isinstance(streams, str) or not streams or not all(isinstance(s, str) and s for s in streams):
            raise InvalidProgramError(
                f"expected a list of stream names; got {streams!r:.80}; hint: set_streams(['clicks'])"
            )
        self.connection = connection
        self.streams = list(dict.fromkeys(streams))
        self.start_id = start_id
        self.bounded = bounded

    @staticmethod
    def builder() -> RedisStreamSource.Builder:
        return RedisStreamSource.Builder()

    @property
    def boundedness(self) -> str:
        return Boundedness.BOUNDED if self.bounded else Boundedness.CONTINUOUS_UNBOUNDED

    def validate(self) -> None:
        redis_module()

    def create_splits(self, parallelism: int) -> Sequence[SourceSplit]:
        """One split per stream: ``(stream, last read id, last id to read or None)``; a bounded source looks up
        each stream's last entry now, when the job starts."""
        ends: dict[str, str | None] = dict.fromkeys(self.streams)
        if self.bounded:
            client = connect(self.connection, what="RedisStreamSource, the streams' last entries")
            try:
                for stream in self.streams:
                    last = client.xrevrange(stream, count=1)
                    ends[stream] = last[0][0] if last else "0-0"
            finally:
                client.close()
        return [SourceSplit(split_id=f"redis-stream-{s}", payload=(s, self.start_id, ends[s])) for s in self.streams]

    def create_reader(self, context: SourceReaderContext) -> SourceReader[RedisStreamEntry]:
        return _RedisStreamReader(self, context)

    class Builder:
        def __init__(self) -> None:
            self._fields: dict[str, Any] = {}

        def set_connection(self, connection: RedisConnectionOptions) -> RedisStreamSource.Builder:
            self._fields["connection"] = connection
            return self

        def set_streams(self, streams: Sequence[str]) -> RedisStreamSource.Builder:
            self._fields["streams"] = streams
            return self

        def set_start_id(self, start_id: str) -> RedisStreamSource.Builder:
            """Read entries after this id: ``"0"`` (the default) from the beginning; with ``"$"`` only entries
            added after the job started."""
            self._fields["start_id"] = start_id
            return self

        def set_bounded(self) -> RedisStreamSource.Builder:
            self._fields["bounded"] = True
            return self

        def build(self) -> RedisStreamSource:
            missing = [k for k in ("connection", "streams") if k not in self._fields]
            if missing:
                raise InvalidProgramError(
                    f"expected RedisStreamSource.builder() to be given {', '.join(missing)}; got none; "
                    "hint: set_connection(...), set_streams([...])"
                )
            return RedisStreamSource(**self._fields)


class _RedisStreamReader(SourceReader[RedisStreamEntry]):
    def __init__(self, source: RedisStreamSource, context: SourceReaderContext) -> None:
        self.source = source
        self.context = context
        self.positions: dict[str, str] = {}  # stream -> last id read
        self.ends: dict[str, str | None] = {}
        self.client: Any = None
        self.what = f"RedisStreamSource subtask {context.get_index_of_subtask() + 1}"

    def add_splits(self, splits: Sequence[SourceSplit]) -> None:
        for split in splits:
            stream, position, end = split.payload
            if position == "$":  # only new entries: start from the stream's current last id
                position = self._client().xinfo_stream(stream)["last-generated-id"] if self._exists(stream) else "0"
            self.positions[stream] = position
            self.ends[stream] = end

    def _exists(self, stream: str) -> bool:
        return bool(self._client().exists(stream))

    def _client(self) -> Any:
        if self.client is None:
            self.client = connect(self.source.connection, what=self.what)
        return self.client

    def poll_batch(self) -> list[RedisStreamEntry] | None:
        if not self.positions:
            return None
        redis = redis_module()
        try:
            answer = self._client().xread(dict(self.positions), count=self.context.batch_size)
        except redis.RedisError as exc:
            self.client = None
            raise ConnectorError(
                f"expected {self.what} to read the streams {sorted(self.positions)} from "
                f"{self.source.connection.describe()}; got {type(exc).__name__}: {exc}; hint: the job's restart "
                "strategy retries from its checkpoint"
            ) from exc
        out: list[RedisStreamEntry] = []
        for stream, entries in answer or []:
            end = self.ends.get(stream)
            for entry_id, fields in entries:
                if end is not None and _id_key(entry_id) > _id_key(end):
                    break
                out.append(RedisStreamEntry(stream, entry_id, fields))
                self.positions[stream] = entry_id
        for stream, end in list(self.ends.items()):  # bounded: a stream read up to its end is done
            if end is not None and _id_key(self.positions[stream]) >= _id_key(end):
                del self.positions[stream]
                del self.ends[stream]
        if not out and not self.positions:
            return None
        return out

    def snapshot_state(self, checkpoint_id: int) -> list[SourceSplit]:
        return [
            SourceSplit(split_id=f"redis-stream-{s}", payload=(s, position, self.ends.get(s)))
            for s, position in self.positions.items()
        ]

    def close(self) -> None:
        if self.client is not None:
            self.client.close()
            self.client = None
