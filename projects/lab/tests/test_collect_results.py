"""scripts/collect_results.py: results of a study running in another clone, copied without loss."""
import importlib.util
from pathlib import Path

import pytest

ROOT = Path(__file__).parents[1]
spec = importlib.util.spec_from_file_location("collect_results", ROOT / "scripts" / "collect_results.py")
collect_results = importlib.util.module_from_spec(spec)
spec.loader.exec_module(collect_results)


def _results(root: Path, text: str) -> Path:
    (root / "results").mkdir(parents=True, exist_ok=True)
    path = root / "results" / "study.jsonl"
    path.write_text(text)
    return path


def test_complete_lines_are_copied_and_a_line_being_written_is_not(tmp_path):
    source, here = tmp_path / "clone", tmp_path / "repo"
    _results(source, '{"a": 1}\n{"b": 2}\n{"c": 3')  # the third line is still being written
    target = _results(here, '{"a": 1}\n')
    assert collect_results.collect(source, "study", root=here) == "results/study.jsonl: 1 -> 2 rows"
    assert target.read_text() == '{"a": 1}\n{"b": 2}\n'


def test_rows_only_here_are_never_overwritten(tmp_path):
    source, here = tmp_path / "clone", tmp_path / "repo"
    _results(source, '{"a": 1}\n')
    target = _results(here, '{"a": 1}\n{"z": 9}\n')
    with pytest.raises(SystemExit, match=r"1 row\(s\) here are not in .*; not overwriting them"):
        collect_results.collect(source, "study", root=here)
    assert target.read_text() == '{"a": 1}\n{"z": 9}\n'
    with pytest.raises(SystemExit, match="no such results file"):
        collect_results.collect(source, "other", root=here)


def test_copies_add_the_cells_they_ran_once(tmp_path):
    # x_b and x_c were copied from x when it had row a; each process then ran its own cells
    source, here = tmp_path / "clone", tmp_path / "repo"
    (source / "results").mkdir(parents=True)
    (source / "results" / "study.jsonl").write_text('{"a": 1}\n{"a": 1}\n{"b": 2}\n')
    (source / "results" / "study_b.jsonl").write_text('{"a": 1}\n{"c": 3}\n{"d": 4')
    (source / "results" / "study_c.jsonl").write_text('{"a": 1}\n{"e": 5}\n')
    target = _results(here, '{"a": 1}\n{"a": 1}\n')
    message = collect_results.collect(source, "study+study_b+study_c", root=here)
    assert message == "results/study.jsonl: 2 -> 5 rows"
    # the main file's own repeated row stays; the copies' shared first row is not added again
    assert target.read_text() == '{"a": 1}\n{"a": 1}\n{"b": 2}\n{"c": 3}\n{"e": 5}\n'
    with pytest.raises(SystemExit, match="study_x.jsonl: no such results file"):
        collect_results.collect(source, "study+study_x", root=here)
