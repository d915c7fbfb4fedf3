"""ParquetColumnarRowInputFormat: one split per row group, rows equal to pyarrow's own read, projection,
exact positions (row group + rows), and files of another schema failing with file, row group and column."""

from __future__ import annotations

from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from file_reading import read_all, read_with_restore, splits_of

from strom.api.row import Row
from strom.connectors.file_system import FileSource
from strom.exceptions import ConnectorError
from strom.formats import ParquetColumnarRowInputFormat

TABLE = pa.table(
    {
        "id": pa.array(range(100), pa.int64()),
        "name": [f"n{i}" if i % 7 else None for i in range(100)],
        "score": [i / 4 for i in range(100)],
    }
)


def parquet_source(fmt: ParquetColumnarRowInputFormat, *paths: Path) -> FileSource[Row]:
    return FileSource.for_bulk_file_format(fmt, *map(str, paths)).build()


@pytest.fixture
def data_dir(tmp_path: Path) -> Path:
    pq.write_table(TABLE.slice(0, 60), tmp_path / "a.parquet", row_group_size=25)  # row groups of 25, 25, 10
    pq.write_table(TABLE.slice(60), tmp_path / "b.parquet", row_group_size=40)  # one row group
    return tmp_path


def test_one_split_per_row_group(data_dir: Path) -> None:
    splits = splits_of(parquet_source(ParquetColumnarRowInputFormat(), data_dir))
    assert [(Path(s.path).name, s.row_group, s.row_count) for s in splits] == [
        ("a.parquet", 0, 25),
        ("a.parquet", 1, 25),
        ("a.parquet", 2, 10),
        ("b.parquet", 0, 40),
    ]
    assert len({s.split_id for s in splits}) == 4


def test_rows_equal_pyarrow_read(data_dir: Path) -> None:
    got = read_all(parquet_source(ParquetColumnarRowInputFormat(batch_size=16), data_dir), batch_size=10)
    expected = pq.read_table(data_dir).to_pylist()
    assert [r.as_dict() for r in got] == expected
    assert got[0].get_field_names() == ["id", "name", "score"]


def test_projection(data_dir: Path) -> None:
    got = read_all(parquet_source(ParquetColumnarRowInputFormat(["score", "id"]), data_dir))
    assert [tuple(r) for r in got] == [(i / 4, i) for i in range(100)]
    assert got[0].get_field_names() == ["score", "id"]


@pytest.mark.parametrize("k", [0, 1, 24, 25, 26, 59, 61, 99, 100])
def test_restored_reader_reads_exactly_the_rest(data_dir: Path, k: int) -> None:
    source = parquet_source(ParquetColumnarRowInputFormat(batch_size=8), data_dir)
    head, tail = read_with_restore(source, k, batch_size=6)
    assert [r.id for r in head] == list(range(k))
    assert [r.id for r in head + tail] == list(range(100))


def test_missing_projected_column_names_file_row_group_and_column(data_dir: Path) -> None:
    pq.write_table(pa.table({"id": [1]}), data_dir / "c.parquet")
    with pytest.raises(ConnectorError, match=r"column 'name' in .*c\.parquet row group 0; got the columns \['id'\]"):
        read_all(parquet_source(ParquetColumnarRowInputFormat(["id", "name"]), data_dir))


def test_column_of_another_type(data_dir: Path) -> None:
    pq.write_table(pa.table({"id": ["one"], "name": ["x"], "score": [1.0]}), data_dir / "c.parquet")
    fmt = ParquetColumnarRowInputFormat(schema={"id": pa.int64(), "score": pa.float64()})
    with pytest.raises(ConnectorError, match=r"column 'id' of type int64 in .*c\.parquet row group 0; got string"):
        read_all(parquet_source(fmt, data_dir))


def test_not_a_parquet_file(data_dir: Path) -> None:
    (data_dir / "notes.txt").write_text("hello\n")
    with pytest.raises(ConnectorError, match=r"expected a Parquet file at .*notes\.txt"):
        splits_of(parquet_source(ParquetColumnarRowInputFormat(), data_dir))
