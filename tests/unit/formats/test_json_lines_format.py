"""JsonLinesReaderFormat: one object per line as a dict (or a typed Row with a schema), blank lines skipped,
exact positions, bad lines naming file and line or going to the side output."""

from __future__ import annotations

import bz2
import json
from pathlib import Path

import pytest
from file_reading import Reading, read_all, read_with_restore, splits_of

from strom.api.output_tag import OutputTag
from strom.api.row import Row
from strom.connectors.file_system import FileSource
from strom.connectors.file_system import reader as reader_module
from strom.exceptions import ConnectorError
from strom.formats import JsonLinesReaderFormat

OBJECTS = [{"id": i, "name": f"n\n{i}", "score": i / 2, "tags": [i, "x"]} for i in range(120)]


def json_source(fmt: JsonLinesReaderFormat, *paths: Path) -> FileSource[dict[str, object]]:
    return FileSource.for_record_stream_format(fmt, *map(str, paths)).build()


def write_lines(path: Path, objects: list[dict[str, object]]) -> None:
    data = "".join(json.dumps(o) + "\n" for o in objects).encode()
    path.write_bytes(bz2.compress(data) if path.suffix == ".bz2" else data)


def test_objects_as_dicts_blank_lines_skipped(tmp_path: Path) -> None:
    write_lines(tmp_path / "a.jsonl", OBJECTS[:3])
    with open(tmp_path / "a.jsonl", "a") as f:
        f.write("\n  \n" + json.dumps(OBJECTS[3]))  # blank lines, no final newline
    assert read_all(json_source(JsonLinesReaderFormat(), tmp_path)) == OBJECTS[:4]


def test_schema_gives_typed_rows(tmp_path: Path) -> None:
    (tmp_path / "a.jsonl").write_text('{"id": 1, "score": 2, "extra": true}\n{"name": "b", "id": 2, "score": 0.5}\n')
    fmt = JsonLinesReaderFormat([("id", int), ("name", "STRING"), ("score", "DOUBLE")])
    got = read_all(json_source(fmt, tmp_path))
    assert got == [Row(id=1, name=None, score=2.0), Row(id=2, name="b", score=0.5)]
    assert type(got[0].score) is float and got[0].get_field_names() == ["id", "name", "score"]


@pytest.mark.parametrize("name", ["a.jsonl", "a.jsonl.bz2"])
@pytest.mark.parametrize("k", [0, 1, 5, 64, 119, 120])
def test_restored_reader_reads_exactly_the_rest(
    tmp_path: Path, name: str, k: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(reader_module, "BLOCK_SIZE", 100)
    write_lines(tmp_path / name, OBJECTS)
    head, tail = read_with_restore(json_source(JsonLinesReaderFormat(), tmp_path), k, batch_size=6)
    assert head == OBJECTS[:k]
    assert head + tail == OBJECTS


def test_invalid_json_names_file_and_line(tmp_path: Path) -> None:
    (tmp_path / "a.jsonl").write_text('{"id": 1}\n{"id": 2\n')
    with pytest.raises(ConnectorError, match=r"expected a JSON object; got .* at .*a\.jsonl:2; hint"):
        read_all(json_source(JsonLinesReaderFormat(), tmp_path))


def test_non_object_line_is_rejected(tmp_path: Path) -> None:
    (tmp_path / "a.jsonl").write_text('{"id": 1}\n[1, 2]\n')
    with pytest.raises(ConnectorError, match=r"got a JSON list at .*a\.jsonl:2"):
        read_all(json_source(JsonLinesReaderFormat(), tmp_path))


def test_field_of_wrong_type_names_the_field(tmp_path: Path) -> None:
    (tmp_path / "a.jsonl").write_text('{"id": 1}\n{"id": "two"}\n')
    with pytest.raises(ConnectorError, match=r"BIGINT value in field 'id'; got 'two' at .*a\.jsonl:2"):
        read_all(json_source(JsonLinesReaderFormat({"id": int}), tmp_path))


def test_invalid_lines_to_side_output(tmp_path: Path) -> None:
    (tmp_path / "a.jsonl").write_text('{"id": 1}\nnot json\n{"id": 2}\n{"id": "x"}\n{"id": 3}\n')
    tag = OutputTag("bad-json")
    source = json_source(JsonLinesReaderFormat({"id": int}).with_invalid_records_to(tag), tmp_path)
    first = Reading(source, list(splits_of(source)), batch_size=1)
    head = first.read(2)
    second = Reading(source, first.reader.snapshot_state(1), batch_size=1)
    tail = second.read()
    assert [r.id for r in head + tail] == [1, 2, 3]
    rejected = [r for _, r in first.side + second.side]
    assert [(r.line, r.raw) for r in rejected] == [(2, "not json"), (4, '{"id": "x"}')]
