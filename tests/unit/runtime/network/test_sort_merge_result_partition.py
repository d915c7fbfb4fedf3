"""The blocking partition's file (:mod:`strom.runtime.network.partitioned_file`) and the sort-merge partition that
writes it: regions and index, subpartitions read back in order, spilling at the sort buffer's size, compression, events
in their place, readers that wait for the partition's end in the partition manager, and release deleting the files."""

from __future__ import annotations

import itertools
import os
import pickle
from pathlib import Path
from typing import Any

import pytest

from strom.exceptions import ConfigurationError, TaskCancelledError
from strom.runtime.network import partitioned_file
from strom.runtime.network.buffer_compressor import CODECS, check_codec
from strom.runtime.network.events import END_OF_PARTITION, EndOfPartitionEvent, WatermarkEvent
from strom.runtime.network.partition_manager import ResultPartitionManager
from strom.runtime.network.partitioned_file import (
    DATA_BUFFER,
    EVENT_BUFFER,
    PartitionedFile,
    PartitionedFileError,
    PartitionedFileWriter,
)
from strom.runtime.network.result_partition import PartitionReleasedError, ResultPartitionID, SerializedBatch
from strom.runtime.network.sort_merge_result_partition import SortMergeResultPartition

PID = ResultPartitionID("r1", 0, "a" * 32)


def _read_all(file: PartitionedFile, subpartition: int) -> list[tuple[int, bytes]]:
    reader = file.reader(subpartition)
    out = []
    while (buf := reader.next_buffer()) is not None:
        out.append(buf)
    return out


def test_the_file_keeps_each_subpartitions_buffers_in_order_across_regions(tmp_path: Path) -> None:
    writer = PartitionedFileWriter(str(tmp_path / "p"), 3, compress=False)
    writer.write_region([[(DATA_BUFFER, b"a0"), (DATA_BUFFER, b"a1")], [], [(DATA_BUFFER, b"c0")]])
    writer.write_region([[(DATA_BUFFER, b"a2")], [(DATA_BUFFER, b"b0")], [(EVENT_BUFFER, b"e")]])
    written = writer.finish()
    file = PartitionedFile.open(str(tmp_path / "p"))
    assert file == written
    assert len(file.regions) == 2
    assert [file.num_buffers(s) for s in range(3)] == [3, 1, 2]
    assert _read_all(file, 0) == [(DATA_BUFFER, b"a0"), (DATA_BUFFER, b"a1"), (DATA_BUFFER, b"a2")]
    assert _read_all(file, 1) == [(DATA_BUFFER, b"b0")]
    assert _read_all(file, 2) == [(DATA_BUFFER, b"c0"), (EVENT_BUFFER, b"e")]
    # the index: per region, per subpartition, offset and length are contiguous, subpartition 0 first
    offsets = [(e.offset, e.length) for region in file.regions for e in region]
    assert offsets[0][0] == 0
    for (o1, l1), (o2, _) in itertools.pairwise(offsets):
        assert o1 + l1 == o2
    assert offsets[-1][0] + offsets[-1][1] == os.path.getsize(file.data_path)


def test_compression_shrinks_the_file_and_reads_back_the_same_bytes(tmp_path: Path) -> None:
    payload = pickle.dumps([("word", i % 7) for i in range(2000)])
    sizes = {}
    for compress in (False, True):
        writer = PartitionedFileWriter(str(tmp_path / f"p{compress}"), 1, compress=compress)
        writer.write_region([[(DATA_BUFFER, payload), (EVENT_BUFFER, b"tiny")]])
        file = writer.finish()
        assert _read_all(file, 0) == [(DATA_BUFFER, payload), (EVENT_BUFFER, b"tiny")]
        sizes[compress] = os.path.getsize(file.data_path)
    assert sizes[True] < sizes[False] / 2


@pytest.mark.parametrize("codec", ["LZ4", "ZSTD", "ZLIB", "lz4"])
def test_every_codec_reads_back_the_same_bytes_and_names_itself_in_the_header(tmp_path: Path, codec: str) -> None:
    payload = pickle.dumps([("word", i % 7) for i in range(2000)])
    writer = PartitionedFileWriter(str(tmp_path / "p"), 2, compress=True, codec=codec)
    writer.write_region([[(DATA_BUFFER, payload)], [(DATA_BUFFER, b"short"), (EVENT_BUFFER, b"e" * 200)]])
    file = writer.finish()
    assert _read_all(file, 0) == [(DATA_BUFFER, payload)]
    assert _read_all(file, 1) == [(DATA_BUFFER, b"short"), (EVENT_BUFFER, b"e" * 200)]
    with open(file.data_path, "rb") as f:
        header = f.read(6)
    assert header[1] == CODECS[codec.upper()]  # the reader needs no configuration: the header says the codec
    assert os.path.getsize(file.data_path) < len(payload) / 2


def test_an_unknown_codec_is_refused_with_the_choices() -> None:
    with pytest.raises(ConfigurationError, match="one of ZLIB, LZ4, ZSTD; got 'LZO'"):
        check_codec("LZO")


def test_a_truncated_index_or_data_file_is_an_error_not_garbage(tmp_path: Path) -> None:
    writer = PartitionedFileWriter(str(tmp_path / "p"), 1, compress=False)
    writer.write_region([[(DATA_BUFFER, b"x" * 100)]])
    file = writer.finish()
    with open(file.data_path, "r+b") as f:
        f.truncate(50)
    with pytest.raises(PartitionedFileError, match="expected 100 bytes"):
        _read_all(file, 0)
    with open(file.index_path, "r+b") as f:
        f.truncate(10)
    with pytest.raises(PartitionedFileError, match="expected a partition index"):
        PartitionedFile.open(str(tmp_path / "p"))


def _partition(tmp_path: Path, n: int, sort_buffer_bytes: int, manager: ResultPartitionManager | None = None) -> Any:
    return SortMergeResultPartition(
        PID,
        n,
        directory=str(tmp_path / "shuffle"),
        sort_buffer_bytes=sort_buffer_bytes,
        compress=True,
        on_finished=manager.partition_finished if manager is not None else None,
    )


def _drain(view: Any, partition: SortMergeResultPartition) -> list[Any]:
    out: list[Any] = []
    while True:
        buf = view.poll()
        if isinstance(buf, SerializedBatch):
            out.append(partition.serializer.deserialize(buf.data))
        elif isinstance(buf, EndOfPartitionEvent):
            out.append("END")
            assert view.poll() is None
            return out
        else:
            out.append(buf)


def test_the_sort_buffer_spills_when_full_and_every_subpartition_reads_back_its_batches(tmp_path: Path) -> None:
    p = _partition(tmp_path, 3, sort_buffer_bytes=400)
    expected: dict[int, list[Any]] = {0: [], 1: [], 2: []}
    for i in range(60):
        batch = [(i, j) for j in range(10)]
        p.emit(i % 3, batch)
        expected[i % 3].append(batch)
    p.broadcast_event(WatermarkEvent(99))
    p.finish()
    assert p.num_spills > 3  # bounded memory: many regions, not one
    assert 0 < p.bytes_on_disk == os.path.getsize(p.base_path + ".data")
    assert p.num_bytes_out > 0  # the serialized bytes the task produced (its numBytesOut)
    assert p.is_consumable()
    file = PartitionedFile.open(p.base_path)
    assert len(file.regions) == p.num_spills
    for s in range(3):
        view = p.create_subpartition_view(s)
        assert view.backlog() == 21
        assert _drain(view, p) == [*expected[s], WatermarkEvent(99), "END"]
    # a blocking partition is read as often as needed: a restarted consumer reads it again
    assert _drain(p.create_subpartition_view(1), p) == [*expected[1], WatermarkEvent(99), "END"]


def test_the_end_of_partition_is_an_event_for_the_credit_protocol(tmp_path: Path) -> None:
    p = _partition(tmp_path, 1, sort_buffer_bytes=1 << 20)
    p.emit(0, [1, 2])
    p.finish()
    view = p.create_subpartition_view(0)
    assert not view.head_is_event() and view.backlog() == 1
    assert isinstance(view.poll(), SerializedBatch)
    assert view.head_is_event()  # the end of the partition goes without credit
    assert view.poll() is END_OF_PARTITION


def test_requests_wait_until_the_partition_is_finished_and_release_deletes_its_files(tmp_path: Path) -> None:
    manager = ResultPartitionManager()
    p = _partition(tmp_path, 2, sort_buffer_bytes=100, manager=manager)
    answers: list[tuple[Any, BaseException | None]] = []
    manager.request_local(PID, 1, lambda view, err: answers.append((view, err)))
    manager.register_result_partition(p)
    p.emit(1, list(range(50)))
    assert answers == []  # written in part, not consumable yet
    p.finish()
    assert len(answers) == 1 and answers[0][1] is None
    assert _drain(answers[0][0], p) == [list(range(50)), "END"]
    manager.request_local(PID, 0, lambda view, err: answers.append((view, err)))
    view = answers[1][0]
    assert manager.has_partition(PID)
    manager.release_partition(PID, "job ended")
    assert not os.path.exists(p.base_path + ".data") and not os.path.exists(p.base_path + ".index")
    with pytest.raises(PartitionReleasedError):
        view.poll()
    manager.request_local(PID, 0, lambda view, err: answers.append((view, err)))
    assert answers[2][0] is None and "released" in str(answers[2][1])


def test_a_partition_released_while_written_stops_its_writer_and_leaves_no_file(tmp_path: Path) -> None:
    p = _partition(tmp_path, 1, sort_buffer_bytes=10)
    p.emit(0, list(range(10)))  # spilled: the data file exists
    assert os.path.exists(p.base_path + ".data")
    p.release("task cancelled")
    assert not os.path.exists(p.base_path + ".data")
    with pytest.raises(TaskCancelledError, match="released: task cancelled"):
        p.emit(0, [1])


def test_the_reader_crosses_chunk_boundaries_and_reads_a_buffer_larger_than_a_chunk(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(partitioned_file, "READ_CHUNK_BYTES", 50)
    buffers = [(DATA_BUFFER, bytes([i]) * (i * 7 % 40 + 1)) for i in range(30)] + [(DATA_BUFFER, b"L" * 500)]
    writer = PartitionedFileWriter(str(tmp_path / "p"), 2, compress=False)
    writer.write_region([buffers[:20], [(EVENT_BUFFER, b"e")]])
    writer.write_region([buffers[20:], []])
    assert _read_all(writer.finish(), 0) == buffers
