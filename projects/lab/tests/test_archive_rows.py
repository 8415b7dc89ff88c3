"""scripts/archive_rows.py: the named methods' rows move to the archive, appended; the others stay."""
import json
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "scripts"))
from archive_rows import archive  # noqa: E402


def _rows(path):
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]


def test_rows_move_and_the_archive_grows(tmp_path):
    results = tmp_path / "results"
    results.mkdir()
    rows = [{"cell_id": f"c{i}", "method": m} for i, m in enumerate(["ce", "bilstm_crf", "crf", "bilstm_crf"])]
    (results / "study.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    (tmp_path / "old").mkdir()
    (tmp_path / "old" / "study.jsonl").write_text(json.dumps({"cell_id": "x", "method": "bilstm_crf"}) + "\n")
    message = archive("study", tmp_path / "old", {"bilstm_crf"}, root=tmp_path)
    assert "2 row(s) moved" in message and "2 kept" in message
    assert [r["cell_id"] for r in _rows(results / "study.jsonl")] == ["c0", "c2"]
    assert [r["cell_id"] for r in _rows(tmp_path / "old" / "study.jsonl")] == ["x", "c1", "c3"]


def test_nothing_to_move_or_a_bad_row_is_one_line_and_changes_nothing(tmp_path):
    results = tmp_path / "results"
    results.mkdir()
    (results / "study.jsonl").write_text(json.dumps({"cell_id": "c0", "method": "ce"}) + "\nnot json\n")

    with pytest.raises(SystemExit, match=r"study.jsonl:2: not a results row"):
        archive("study", tmp_path / "old", {"ce"}, root=tmp_path)
    (results / "study.jsonl").write_text(json.dumps({"cell_id": "c0", "method": "ce"}) + "\n")
    with pytest.raises(SystemExit, match="no row of crf; nothing moved"):
        archive("study", tmp_path / "old", {"crf"}, root=tmp_path)
    assert not (tmp_path / "old").exists()
    with pytest.raises(SystemExit, match="no such results file"):
        archive("other", tmp_path / "old", {"ce"}, root=tmp_path)
