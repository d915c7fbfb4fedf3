"""pyarrow is optional (``strom[files]``): without it CSV and JSON lines still read — the csv module parses every
block — and asking for a Parquet format is a ConnectorError that names the package to install. Runs in a child
interpreter whose imports of pyarrow fail."""

from __future__ import annotations

import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

CHILD = textwrap.dedent(
    """
    import sys

    class NoPyarrow:
        def find_spec(self, name, path=None, target=None):
            if name.split(".")[0] == "pyarrow":
                raise ImportError(f"No module named {name!r}")

    sys.meta_path.insert(0, NoPyarrow())
    sys.path.insert(0, sys.argv[2])
    from file_reading import Reading, splits_of
    from strom.connectors.file_system import FileSource
    from strom.exceptions import ConnectorError
    from strom.formats import CsvReaderFormat, CsvSchema

    schema = CsvSchema.builder().add_number_column("id").add_string_column("name").set_use_header().build()
    source = FileSource.for_record_stream_format(CsvReaderFormat.for_schema(schema), sys.argv[1]).build()
    rows = Reading(source, list(splits_of(source))).read()
    print(sorted((r.id, r.name) for r in rows))
    try:
        from strom.formats import ParquetColumnarRowInputFormat
    except ConnectorError as exc:
        print(exc)
    assert "pyarrow" not in sys.modules
    """
)


@pytest.mark.timeout(60)
def test_csv_reads_without_pyarrow_and_parquet_says_what_to_install(tmp_path: Path) -> None:
    (tmp_path / "a.csv").write_text('id,name\n1,"x, y"\n2,z\n')
    helpers = Path(__file__).parent
    done = subprocess.run(
        [sys.executable, "-c", CHILD, str(tmp_path), str(helpers)], capture_output=True, text=True, timeout=50
    )
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    assert lines[0] == "[(1, 'x, y'), (2, 'z')]"
    assert "pip install 'strom[files]'" in lines[1]
