"""askkit.metrics.queries: ``{query_id: text}`` from a mapping, a frame or a TSV file."""

from __future__ import annotations

from pathlib import Path

import pytest

from askkit.errors import SchemaError
from askkit.metrics.queries import read_queries


@pytest.mark.parametrize("content", ["", "\n\n", "query_id\tquestion\n"])
def test_an_empty_queries_file_is_a_schema_error_naming_the_file(
    tmp_path: Path, content: str
) -> None:
    path = tmp_path / "queries.tsv"
    path.write_text(content, encoding="utf-8")
    with pytest.raises(SchemaError, match="no queries") as info:
        read_queries(path)
    assert info.value.file == str(path)


def test_read_queries_reads_the_bundled_file(data_dir: Path) -> None:
    queries = read_queries(data_dir / "queries.tsv")
    assert len(queries) == 37
    assert queries["q01"].startswith("What ratio do I feed")
