"""CsvReaderFormat: typed, named rows equal to what the csv module reads; header, separators, quoted fields
with separators, quotes and line breaks; nulls; exact positions; bad lines fail naming file, line and column,
or go to the side output."""

from __future__ import annotations

import csv
import gzip
import io
import random
from pathlib import Path

import pytest
from file_reading import Reading, read_all, read_with_restore, splits_of

from strom.api.output_tag import OutputTag
from strom.api.row import Row
from strom.connectors.file_system import FileSource, InvalidRecord
from strom.connectors.file_system import reader as reader_module
from strom.exceptions import ConnectorError
from strom.formats import CsvReaderFormat, CsvSchema


def schema(**options: object) -> CsvSchema:
    b = CsvSchema.builder().add_number_column("id").add_string_column("name").add_number_column("score", "DOUBLE")
    for setter, value in options.items():
        getattr(b, setter)(value)
    return b.build()


def csv_source(fmt: CsvReaderFormat, *paths: Path) -> FileSource[Row]:
    return FileSource.for_record_stream_format(fmt, *map(str, paths)).build()


def awkward_rows(n: int) -> list[tuple[int, str, float]]:
    """Names with separators, quotes, line breaks (also CRLF) and non-ASCII text."""
    rng = random.Random(17)
    pieces = ["plain", "with,comma", 'say "hi"', "two\nlines", "crlf\r\nline", "ünïcode", " spaced ", ""]
    return [(i, rng.choice(pieces) + str(i), rng.random() * 100) for i in range(n)]


def write_csv(path: Path, rows: list[tuple[int, str, float]], header: bool = True, delimiter: str = ",") -> None:
    buf = io.StringIO(newline="")
    w = csv.writer(buf, delimiter=delimiter, lineterminator="\n")
    if header:
        w.writerow(["id", "name", "score"])
    w.writerows(rows)
    data = buf.getvalue().encode()
    path.write_bytes(gzip.compress(data) if path.suffix == ".gz" else data)


@pytest.fixture
def small_blocks(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(reader_module, "BLOCK_SIZE", 50)


@pytest.mark.parametrize("block", ["small", "default"])
def test_rows_equal_a_plain_csv_read(tmp_path: Path, block: str, monkeypatch: pytest.MonkeyPatch) -> None:
    if block == "small":
        monkeypatch.setattr(reader_module, "BLOCK_SIZE", 50)  # quoted line breaks across block ends
    rows = awkward_rows(300)
    write_csv(tmp_path / "data.csv", rows)
    got = read_all(csv_source(CsvReaderFormat.for_schema(schema(set_use_header=True)), tmp_path))
    with open(tmp_path / "data.csv", newline="") as f:
        reader = csv.reader(f)
        next(reader)
        expected = [(int(a), b, float(c)) for a, b, c in reader]
    assert [tuple(r) for r in got] == expected == rows
    assert got[0].get_field_names() == ["id", "name", "score"]
    assert got[3].name == rows[3][1] and got[3]["score"] == rows[3][2]


def test_separator_quote_nulls_and_comments(tmp_path: Path) -> None:
    (tmp_path / "d.csv").write_text("# a comment\n1|'a|b'|1.5|true\n2|'it''s'|N/A|FALSE\n\n3||N/A|N/A\n")
    s = (
        CsvSchema.builder()
        .add_number_column("id", int)
        .add_string_column("name")
        .add_number_column("score", float)
        .add_boolean_column("ok")
        .set_column_separator("|")
        .set_quote_char("'")
        .set_null_value("N/A")
        .set_allow_comments()
        .build()
    )
    got = read_all(csv_source(CsvReaderFormat.for_schema(s), tmp_path))
    assert [tuple(r) for r in got] == [(1, "a|b", 1.5, True), (2, "it's", None, False), (3, "", None, None)]


def test_empty_number_field_is_null(tmp_path: Path) -> None:
    (tmp_path / "d.csv").write_text("1,a,\n,b,2.5\n")
    assert [tuple(r) for r in read_all(csv_source(CsvReaderFormat.for_schema(schema()), tmp_path))] == [
        (1, "a", None),
        (None, "b", 2.5),
    ]


def test_header_is_skipped_in_every_file_and_strict_headers_checked(tmp_path: Path) -> None:
    write_csv(tmp_path / "a.csv", [(1, "x", 1.0)])
    write_csv(tmp_path / "b.csv", [(2, "y", 2.0)])
    fmt = CsvReaderFormat.for_schema(schema(set_use_header=True, set_strict_headers=True))
    assert [r.id for r in read_all(csv_source(fmt, tmp_path))] == [1, 2]
    (tmp_path / "c.csv").write_text("id,score,name\n3,3.0,z\n")
    with pytest.raises(ConnectorError, match=r"c\.csv.*\['id', 'name', 'score'\]"):
        read_all(csv_source(fmt, tmp_path))


@pytest.mark.parametrize("name", ["data.csv", "data.csv.gz"])
@pytest.mark.parametrize("k", [0, 1, 2, 33, 99, 100])
def test_restored_reader_reads_exactly_the_rest(tmp_path: Path, name: str, k: int, small_blocks: None) -> None:
    rows = awkward_rows(100)
    write_csv(tmp_path / name, rows)
    fmt = CsvReaderFormat.for_schema(schema(set_use_header=True))
    head, tail = read_with_restore(csv_source(fmt, tmp_path), k, batch_size=4)
    assert [tuple(r) for r in head] == rows[:k]
    assert [tuple(r) for r in head + tail] == rows


def test_wrong_field_count_names_file_line_and_fields(tmp_path: Path) -> None:
    (tmp_path / "d.csv").write_text('id,name,score\n1,"two\nlines",1.0\n2,b\n')
    with pytest.raises(ConnectorError, match=r"expected 3 fields \(id, name, score\).*got 2 at .*d\.csv:4"):
        read_all(csv_source(CsvReaderFormat.for_schema(schema(set_use_header=True)), tmp_path))


def test_value_of_wrong_type_names_file_line_and_column(tmp_path: Path) -> None:
    (tmp_path / "d.csv").write_text("1,a,1.0\n2,b,lots\n")
    with pytest.raises(ConnectorError, match=r"DOUBLE value in column 'score' \(column 3\); got 'lots' at .*d\.csv:2"):
        read_all(csv_source(CsvReaderFormat.for_schema(schema()), tmp_path))


def test_invalid_lines_to_side_output_once_across_restore(tmp_path: Path) -> None:
    lines = [f"{i},n{i},{i}.5" if i % 10 != 3 else f"{i},broken" for i in range(40)]
    (tmp_path / "d.csv").write_text("\n".join(lines) + "\n")
    tag = OutputTag("invalid")
    fmt = CsvReaderFormat.for_schema(schema()).with_invalid_records_to(tag)
    source = csv_source(fmt, tmp_path)
    valid = [i for i in range(40) if i % 10 != 3]
    assert [r.id for r in read_all(source)] == valid
    for k in (0, 3, 4, 20, 36):
        first = Reading(source, list(splits_of(source)), batch_size=3)
        head = first.read(k)
        second = Reading(source, first.reader.snapshot_state(1), batch_size=3)
        tail = second.read()
        assert [r.id for r in head + tail] == valid
        rejected = [r for _, r in first.side + second.side]
        assert [r.line for r in rejected] == [4, 14, 24, 34]  # each once, in order
        assert {tag_id for tag_id, _ in first.side + second.side} == {"invalid"}
    assert rejected[0] == InvalidRecord(path=str(tmp_path / "d.csv"), line=4, raw="3,broken", reason=rejected[0].reason)
    assert "expected 3 fields" in rejected[0].reason


def test_schema_builder_errors() -> None:
    with pytest.raises(ValueError, match="single character"):
        CsvSchema.builder().set_column_separator("||")
    with pytest.raises(ValueError, match="type of column 'x'"):
        CsvSchema.builder().add_number_column("x", "MONEY")
    with pytest.raises(ValueError, match="at least one column"):
        CsvSchema.builder().build()
