"""The Redis Streams connector's pieces on a real redis-server, without a cluster: a bounded source reads each
stream up to its last entry and restores from its last-read ids; the exactly-once sink stages a checkpoint's
records, appends them once however often the commit is repeated, and a restored writer deletes exactly the
staging lists no completed checkpoint covers; bad records and options are clear errors."""

from __future__ import annotations

from typing import Any

import pytest
from redis_server import RedisServer

from strom.api.sink import CommitRequest, SinkWriterContext
from strom.connectors.redis import (
    DeliveryGuarantee,
    RedisConnectionOptions,
    RedisStreamCommittable,
    RedisStreamSink,
    RedisStreamSource,
)
from strom.exceptions import ConnectorError, InvalidProgramError


class _Ctx:
    batch_size = 3

    def get_index_of_subtask(self) -> int:
        return 0


def _entries(reader: Any) -> list[Any]:
    out: list[Any] = []
    while (batch := reader.poll_batch()) is not None:
        out += batch
    return out


@pytest.mark.timeout(60)
def test_a_bounded_source_reads_up_to_the_last_entry_at_start_and_restores_from_its_ids(
    redis_server: RedisServer,
) -> None:
    client = redis_server.client()
    for i in range(7):
        client.xadd("a", {"i": str(i)})
    client.xadd("b", {"i": "b0"})
    source = (
        RedisStreamSource.builder().set_connection(redis_server.options()).set_streams(["a", "b"]).set_bounded().build()
    )
    splits = source.create_splits(1)
    client.xadd("a", {"i": "after the start"})  # not part of a bounded read
    reader = source.create_reader(_Ctx())  # type: ignore[arg-type]
    reader.add_splits(splits)
    first = reader.poll_batch()
    assert first is not None and len(first) == 4  # 3 of "a" and 1 of "b" (batch size per stream)
    state = reader.snapshot_state(1)
    rest = _entries(reader)
    reader.close()
    assert sorted(e.fields["i"] for e in first + rest) == ["0", "1", "2", "3", "4", "5", "6", "b0"]
    again = source.create_reader(_Ctx())  # type: ignore[arg-type]
    again.add_splits(state)
    assert [e.fields["i"] for e in _entries(again)] == [e.fields["i"] for e in rest]
    again.close()
    assert first[0].stream == "a" and first[0].timestamp > 0


def _context(subtask: int, parallelism: int, restored: int | None) -> SinkWriterContext:
    return SinkWriterContext(
        subtask_index=subtask, parallelism=parallelism, attempt_number=0, restored_checkpoint_id=restored
    )


@pytest.mark.timeout(60)
def test_staged_records_appear_once_however_often_the_commit_repeats(redis_server: RedisServer) -> None:
    sink = (
        RedisStreamSink.builder()
        .set_connection(redis_server.options())
        .set_stream("out")
        .set_delivery_guarantee(DeliveryGuarantee.EXACTLY_ONCE)
        .set_transaction_prefix("unit")
        .build()
    )
    writer = sink.create_writer(_context(0, 1, None))
    writer.write_batch([{"n": 1}, {"n": 2, "who": "x"}])
    [committable] = writer.prepare_commit()
    writer.snapshot_state(1)
    client = redis_server.client()
    assert client.xlen("out") == 0 and committable.staging_key.startswith("unit:stage:0:0:")
    committer = sink.create_committer()
    committer.commit([CommitRequest(committable)])
    again = CommitRequest(committable)
    committer.commit([again])  # after a restore the checkpoint's committables are committed again
    assert [fields for _, fields in client.xrange("out")] == [{"n": "1"}, {"n": "2", "who": "x"}]
    assert writer.prepare_commit() == []
    committer.close()
    writer.close()


@pytest.mark.timeout(60)
def test_a_restored_writer_deletes_the_staging_lists_no_completed_checkpoint_covers(redis_server: RedisServer) -> None:
    client = redis_server.client()
    for key in ["unit:stage:1:4:dead:0", "unit:stage:1:5:dead:1", "unit:stage:3:7:dead:0", "unit:stage:2:9:dead:0"]:
        client.rpush(key, '["n", "1"]')
    client.rpush("other:stage:1:9:dead:0", '["n", "1"]')
    sink = RedisStreamSink(redis_server.options(), "out", DeliveryGuarantee.EXACTLY_ONCE, "unit")
    sink.create_writer(_context(1, 2, 5)).close()
    assert sorted(client.keys("*")) == ["other:stage:1:9:dead:0", "unit:stage:1:4:dead:0", "unit:stage:2:9:dead:0"]


@pytest.mark.timeout(60)
def test_bad_records_and_options_are_clear_errors(redis_server: RedisServer) -> None:
    sink = RedisStreamSink(redis_server.options(), "out")
    writer = sink.create_writer(_context(0, 1, None))
    with pytest.raises(ConnectorError, match=r"mapping of field names.*got \(1, 2\).*hint"):
        writer.write_batch([(1, 2)])
    with pytest.raises(ConnectorError, match=r"got \[1\] for the field 'n'"):
        writer.write_batch([{"n": [1]}])
    writer.close()
    with pytest.raises(InvalidProgramError, match="Redis URL"):
        RedisConnectionOptions.from_url("http://x")
    with pytest.raises(InvalidProgramError, match="list of stream names"):
        RedisStreamSource(redis_server.options(), "clicks")
    nowhere = RedisStreamSink(RedisConnectionOptions(port=1), "out").create_writer(_context(0, 1, None))
    nowhere.write_batch([{"n": 1}])
    with pytest.raises(ConnectorError, match=r"expected to reach Redis at redis://127\.0\.0\.1:1/0"):
        nowhere.flush(False)
    assert isinstance(RedisStreamCommittable("k"), RedisStreamCommittable)
