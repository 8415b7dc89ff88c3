"""scripts/rename_methods.py: rows of a renamed method take the renamed cell's identity, nothing else changes."""
import importlib.util
import json
from pathlib import Path

import pytest

from auc_ner_lab.spec import parse_spec

ROOT = Path(__file__).parents[1]
_spec = importlib.util.spec_from_file_location("rename_methods", ROOT / "scripts" / "rename_methods.py")
rename_methods = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(rename_methods)

SPEC = """name: toy
corpora: [toy]
sizes: [5]
partitions: 2
methods:
  - ce
  - {name: ce_aug, base: ce, augment: {copies: 2}}
"""


def _cells(methods):
    data = {"name": "toy", "corpora": ["toy"], "sizes": [5], "partitions": 2, "methods": methods}
    return list(parse_spec(data, corpora_dir="corpus", configs_dir=ROOT / "configs").cells())


def _line(cell, f):
    row = {**cell.describe(), "status": "ok", "scores": {"ents_f": f}, "config": Path(cell.config).name, "overrides": cell.overrides}
    return json.dumps(row, sort_keys=True)


def test_rows_of_the_old_name_take_the_new_cells_identity_and_keep_their_scores():
    old_cells = _cells(["ce", {"name": "augmented", "base": "ce", "augment": {"copies": 2}}])
    new_cells = _cells(["ce", {"name": "ce_aug", "base": "ce", "augment": {"copies": 2}}])
    lines = [_line(c, 0.1 * i) for i, c in enumerate(old_cells)]
    out = rename_methods.rename(lines, new_cells, {"augmented": "ce_aug"}, "r.jsonl")
    for before, after, old, new in zip(lines, out, old_cells, new_cells):
        if old.method == "ce":
            assert after == before  # untouched, byte for byte
            continue
        row, was = json.loads(after), json.loads(before)
        assert row["cell_id"] == new.id != old.id and row["method"] == "ce_aug"
        assert row["scores"] == was["scores"] and row["partition"] == was["partition"]
        assert row["extras"] == ["augment"]


def test_a_chain_of_renames_is_applied_at_once():
    """a -> b while b -> c: each row is renamed once, from its own old name."""
    old_cells = _cells(["ce", {"name": "ce_aug", "base": "ce", "augment": {"copies": 2}}])
    new_cells = _cells([{"name": "ce_aug", "base": "ce"}, {"name": "aug2", "base": "ce", "augment": {"copies": 2}}])
    lines = [_line(c, 0.5) for c in old_cells]
    out = [json.loads(x) for x in rename_methods.rename(lines, new_cells, {"ce": "ce_aug", "ce_aug": "aug2"}, "r.jsonl")]
    assert sorted(r["cell_id"] for r in out) == sorted(c.id for c in new_cells)


@pytest.mark.parametrize("renames,lines_of,message", [
    ({"nothing": "ce_aug"}, "old", "no rows of method 'nothing'"),
    ({"augmented": "missing"}, "old", "the spec has no method 'missing'"),
    ({"augmented": "ce"}, "clash", "ids already in the file"),
])
def test_refusals_name_the_file(renames, lines_of, message):
    old_cells = _cells(["ce", {"name": "augmented", "base": "ce"}])
    new_cells = _cells(["ce", {"name": "ce_aug", "base": "ce", "augment": {"copies": 2}}])
    lines = [_line(c, 0.3) for c in old_cells]
    with pytest.raises(SystemExit, match=message) as err:
        rename_methods.rename(lines, new_cells, renames, "r.jsonl")
    assert str(err.value).startswith("Error: r.jsonl")


def test_a_row_without_a_renamed_cell_is_refused_with_its_line():
    old_cells = _cells(["ce", {"name": "augmented", "base": "ce"}])
    lines = [_line(c, 0.3) for c in old_cells]
    row = json.loads(lines[1])
    row["partition"] = 7
    lines[1] = json.dumps(row, sort_keys=True)
    new_cells = _cells(["ce", {"name": "ce_aug", "base": "ce"}])
    with pytest.raises(SystemExit, match=r"r.jsonl:2: the spec has no cell ce_aug"):
        rename_methods.rename(lines, new_cells, {"augmented": "ce_aug"}, "r.jsonl")


def test_the_file_is_replaced_only_when_all_rows_are_renamed_and_the_old_one_is_kept(tmp_path):
    spec = tmp_path / "toy.yaml"
    spec.write_text(SPEC + f"configs_dir: {ROOT / 'configs'}\n")
    old_cells = _cells(["ce", {"name": "augmented", "base": "ce", "augment": {"copies": 2}}])
    results = tmp_path / "r.jsonl"
    original = "".join(_line(c, 0.2) + "\n" for c in old_cells)
    results.write_text(original + '{"cut short')
    with pytest.raises(SystemExit, match=r"r.jsonl:5: not a JSON row"):
        rename_methods.main([str(results), str(spec), "augmented=ce_aug"])
    assert results.read_text() == original + '{"cut short'  # nothing changed
    results.write_text(original)
    assert rename_methods.main([str(results), str(spec), "augmented=ce_aug"]).endswith("2 of 4 rows renamed")
    assert (tmp_path / "r.jsonl.before-rename").read_text() == original
    assert {json.loads(x)["method"] for x in results.read_text().splitlines()} == {"ce", "ce_aug"}
