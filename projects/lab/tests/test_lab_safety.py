"""Issue 32: the lab writes over nothing (its commands refuse to write over an input or into a
results store, and ask for --overwrite before replacing a file), its results store trusts no
row blindly (a row is read only when it is what its folder says and its scores are finite
numbers in [0, 1]; anything else is skipped with a warning naming the file, counted by
`study status`, and its cell rerun), no test returns a p-value for NaN, and a killed study
leaves no temporary folder."""
import json
import math
import os
import shutil
import signal
import subprocess
import tempfile
import time
from pathlib import Path
from typing import Optional

import pytest
import yaml

from auc_ner_lab.cli import app
from auc_ner_lab.runner import run_study
from auc_ner_lab.spec import load_spec
from auc_ner_lab.stats import holm, paired_t_test, summarize, trend_test
from auc_ner_lab.store import ResultsStore
from lab_data import write_toy_corpus
from lab_helpers import QUIET, instant_cell, invoke, one_error_line, study_command, study_env

MARKER = ".results-store"  # what makes a folder a results store (auc_ner_lab.store.MARKER)


def row_problem(*args):
    from auc_ner_lab.row_checks import row_problem

    return row_problem(*args)


def _spec(tmp_path: Path, **changes) -> Path:
    corpora = write_toy_corpus(tmp_path / "corpus")
    spec = {"name": "t", "corpora": ["toy"], "corpora_dir": str(corpora), "methods": ["ce", "ova_auc"],
            "sizes": [2], "partitions": 3, "runner": "lab_helpers:instant_cell", **changes}
    path = tmp_path / "spec.yaml"
    path.write_text(yaml.safe_dump(spec))
    return path


@pytest.fixture
def study(tmp_path):
    """A spec of 2 methods x 3 partitions and its store, every cell done by `instant_cell`
    (ce: 0.402, 0.412, 0.422; ova_auc: 0.502, 0.512, 0.522)."""
    spec = _spec(tmp_path)
    store = tmp_path / "r"
    cells = load_spec(spec).cells()
    assert run_study(cells, store, workers=0, runner=instant_cell, **QUIET).ok == 6
    return spec, store, cells


def _row_file(store: Path, cell) -> Path:
    (path,) = (store / cell.key).glob("*.json")
    return path


def _edit(path: Path, **changes) -> None:
    row = json.loads(path.read_text())
    row.update(changes)
    path.write_text(json.dumps(row, sort_keys=True) + "\n")


def _edit_scores(path: Path, **changes) -> None:
    row = json.loads(path.read_text())
    row["scores"].update(changes)
    path.write_text(json.dumps(row, sort_keys=True) + "\n")


def _status(spec, store):
    result = invoke(app, "study", "status", spec, "--results", store)
    assert result.exit_code == 0, result.output
    return result


# -- 2. the lab's commands write over nothing ----------------------------------------------------


def test_verdicts_never_writes_over_its_claims_file_nor_an_existing_file(study, tmp_path):
    spec, store, _ = study
    claims = tmp_path / "claims.yaml"
    claims.write_text(yaml.safe_dump({"claims": [{"id": "a", "claim": "ova_auc beats ce", "results": "r",
                                                  "a": {"method": "ova_auc"}, "b": {"method": "ce"}}]}))
    before = claims.read_text()
    line = one_error_line(invoke(app, "study", "verdicts", claims, "--out", claims))
    assert line == f"Error: {claims}: is an input of this command ({claims}); write the output to another file"
    assert claims.read_text() == before
    line = one_error_line(invoke(app, "study", "verdicts", claims, "--out", store / "verdicts.md"))
    assert "is an input of this command" in line and not (store / "verdicts.md").exists()
    table = tmp_path / "verdicts.md"
    table.write_text("the user's")
    line = one_error_line(invoke(app, "study", "verdicts", claims, "--out", table))
    assert line == f"Error: {table}: already exists; choose another file, or pass --overwrite to replace it"
    assert table.read_text() == "the user's"
    assert invoke(app, "study", "verdicts", claims, "--out", table, "--overwrite").exit_code == 0
    assert "confirmed" in table.read_text()


def test_verdicts_never_writes_over_the_spec_that_names_a_stores_rows(study, tmp_path):
    """Issue 45 R2: `verdicts --out studies/<name>.yaml --overwrite` replaced the spec that
    verdicts reads to name the rows of results/<name>/: an input like the claims file."""
    spec, store, _ = study
    lab = tmp_path / "lab"
    (lab / "studies").mkdir(parents=True)
    shutil.copytree(store, lab / "results" / "t")
    named = lab / "studies" / "t.yaml"  # the spec of results/t (store.spec_of)
    shutil.copytree(Path(__file__).parents[1] / "configs", lab / "configs")  # its configs: a copy, to risk nothing
    named.write_text(yaml.safe_dump({**yaml.safe_load(spec.read_text()), "configs_dir": str(lab / "configs")}))
    claims = lab / "studies" / "claims.yaml"
    claims.write_text(yaml.safe_dump({"claims": [{"id": "a", "claim": "ova_auc beats ce", "results": "../results/t",
                                                  "a": {"method": "ova_auc"}, "b": {"method": "ce"}}]}))
    before = named.read_text()
    line = one_error_line(invoke(app, "study", "verdicts", claims, "--out", named, "--overwrite"))
    assert line.startswith(f"Error: {named}: is an input of this command (") and line.endswith("t.yaml); write the output to another file")
    assert named.read_text() == before
    config = lab / "configs" / "methods" / "ova_auc.cfg"  # a config its cells' keys hash
    before = config.read_text()
    line = one_error_line(invoke(app, "study", "verdicts", claims, "--out", config, "--overwrite"))
    assert line == f"Error: {config}: is an input of this command ({config}); write the output to another file"
    assert config.read_text() == before


def test_report_never_writes_into_a_store_nor_over_an_existing_report(study, tmp_path):
    spec, store, _ = study
    # the store as the run left it (its rows, and the diff of the tree when it was not committed)
    contents = sorted(str(p.relative_to(store)) for p in store.rglob("*"))
    assert {c.key for c in load_spec(spec).cells()} | {MARKER} <= {p.name for p in store.iterdir()}
    line = one_error_line(invoke(app, "study", "report", store, "--out", store, "--no-plots"))
    assert line == f"Error: {store}: is a results store, which holds rows only; write it to another folder"
    line = one_error_line(invoke(app, "study", "report", store, "--out", store / "rep", "--no-plots"))
    assert line == f"Error: {store / 'rep'}: lies in {store}, which is a results store, which holds rows only; write it to another folder"
    for command in (["partition", _tsv(tmp_path / "train.tsv"), store / "parts", "--sizes", "2", "--partitions", "1"],
                    ["study", "run", spec, "--results", store / "inner", "--no-progress"]):
        assert f"lies in {store}" in one_error_line(invoke(app, *command))
    other = tmp_path / "other"
    run_study(load_spec(spec).cells()[:1], other, workers=0, runner=instant_cell, **QUIET)
    line = one_error_line(invoke(app, "study", "report", store, "--out", other, "--no-plots"))
    assert line == f"Error: {other}: is a results store, which holds rows only; write it to another folder"
    assert sorted(str(p.relative_to(store)) for p in store.rglob("*")) == contents
    assert "reported cells: 6 ok" in _status(spec, store).stdout  # the store as it was
    out = tmp_path / "rep"
    assert invoke(app, "study", "report", store, "--out", out, "--no-plots").exit_code == 0
    (out / "report.md").write_text("edited by hand")
    line = one_error_line(invoke(app, "study", "report", store, "--out", out, "--no-plots"))
    assert line == f"Error: {out / 'report.md'}: already exists; choose another file, or pass --overwrite to replace it"
    assert (out / "report.md").read_text() == "edited by hand"
    assert invoke(app, "study", "report", store, "--out", out, "--no-plots", "--overwrite").exit_code == 0
    assert (out / "report.md").read_text().startswith("# Study report")


def _tsv(path: Path, sentences: int = 10) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("".join(f"Aspirin\tB-Disease\nworks{i}\tO\n\n" for i in range(sentences)))
    return path


@pytest.mark.parametrize("fmt", ["spacy", "tsv"])
def test_partition_never_writes_over_its_input(tmp_path, monkeypatch, fmt):
    """The issue's case: an input named like an output, in the output folder."""
    data = tmp_path / "work"
    named = data / f"n2-p0.{fmt}"
    if fmt == "spacy":
        data.mkdir()
        named.write_bytes((write_toy_corpus(tmp_path / "corpus") / "toy" / "train.spacy").read_bytes())
    else:
        _tsv(named)
    monkeypatch.chdir(data)
    before = named.read_bytes()
    line = one_error_line(invoke(app, "partition", named.name, ".", "--sizes", "2", "--partitions", "1", "--format", fmt))
    assert line == f"Error: n2-p0.{fmt}: is an input of this command (n2-p0.{fmt}); write the output to another file"
    assert named.read_bytes() == before and not (data / "manifest.json").exists()


def test_partition_asks_before_replacing_a_file(tmp_path):
    train = _tsv(tmp_path / "train.tsv")
    out = tmp_path / "parts"
    assert invoke(app, "partition", train, out, "--sizes", "2", "--partitions", "1").exit_code == 0
    (out / "manifest.json").write_text("the user's")
    line = one_error_line(invoke(app, "partition", train, out, "--sizes", "2", "--partitions", "1"))
    assert line == f"Error: {out / 'n2-p0.spacy'}: already exists; choose another file, or pass --overwrite to replace it"
    assert (out / "manifest.json").read_text() == "the user's"
    assert invoke(app, "partition", train, out, "--sizes", "2", "--partitions", "1", "--overwrite").exit_code == 0
    assert json.loads((out / "manifest.json").read_text())["sizes"] == [2]


def test_no_output_goes_into_a_store_through_a_link_to_one_of_its_folders(study, tmp_path):
    """Issue 45 R12: `partition` and `verdicts --out` wrote into a results store through a
    symbolic link to one of its cell folders."""
    spec, store, cells = study
    claims = tmp_path / "claims.yaml"
    claims.write_text(yaml.safe_dump({"claims": [{"id": "a", "claim": "ova_auc beats ce", "results": "r",
                                                  "a": {"method": "ova_auc"}, "b": {"method": "ce"}}]}))
    other = tmp_path / "other"  # a store the claims do not read
    run_study(cells[:1], other, workers=0, runner=instant_cell, **QUIET)
    for target, into in ((store, store / cells[0].key), (other, other / cells[0].key)):
        link = tmp_path / f"link_{target.name}"
        link.symlink_to(into)
        before = sorted(p.name for p in into.iterdir())
        for command in (["partition", _tsv(tmp_path / "train.tsv"), link / "parts", "--sizes", "2", "--partitions", "1"],
                        ["partition", _tsv(tmp_path / "train.tsv"), link, "--sizes", "2", "--partitions", "1"],
                        ["study", "verdicts", claims, "--out", link / "verdicts.md"]):
            line = one_error_line(invoke(app, *command))
            assert "results store" in line or "is an input of this command" in line, line
        assert sorted(p.name for p in into.iterdir()) == before


def test_a_dry_run_refuses_a_missing_config_as_the_run_does(tmp_path):
    """Issue 45 R13: `study run --dry-run` listed the cells of a method whose config file does
    not exist, which the run itself refuses."""
    missing = tmp_path / "missing.cfg"
    spec = _spec(tmp_path, methods=["ce", {"name": "gone", "config": str(missing)}], runner=None)
    run = one_error_line(invoke(app, "study", "run", spec, "--results", tmp_path / "r", "--no-progress"))
    assert f"method 'gone': config {missing} not found" in run
    dry = invoke(app, "study", "run", spec, "--results", tmp_path / "r", "--no-progress", "--dry-run")
    assert one_error_line(dry) == run
    assert not (tmp_path / "r").exists()



@pytest.mark.parametrize("case", ["misspelled", "missing_file"])
def test_a_dry_run_refuses_missing_corpus_files_as_the_run_does(tmp_path, case):
    """Issue 66 S8: `study run --dry-run` listed the cells of a misspelled corpus (or of one
    whose files are missing under corpora_dir), which the run itself refuses."""
    spec = _spec(tmp_path, corpora=["toyy"] if case == "misspelled" else ["toy"], runner=None)
    if case == "missing_file":
        (tmp_path / "corpus" / "toy" / "dev.spacy").unlink()
    run = one_error_line(invoke(app, "study", "run", spec, "--results", tmp_path / "r", "--no-progress"))
    assert (f"corpus 'toyy': train file {tmp_path / 'corpus' / 'toyy' / 'train.spacy'} not found" if case == "misspelled"
            else f"corpus 'toy': dev file {tmp_path / 'corpus' / 'toy' / 'dev.spacy'} not found") in run
    dry = invoke(app, "study", "run", spec, "--results", tmp_path / "r", "--no-progress", "--dry-run")
    assert one_error_line(dry) == run and dry.stdout == ""
    assert not (tmp_path / "r").exists()

def test_corpus_get_never_writes_over_the_local_copy_it_reads(tmp_path, monkeypatch):
    """The issue's case: DIR/conll2003 is the local copy (4 columns) and the output folder."""
    monkeypatch.delenv("SPACY_AUC_NER_DATA", raising=False)
    monkeypatch.chdir(tmp_path)
    local = tmp_path / "data" / "conll2003"
    local.mkdir(parents=True)
    for split in ("train", "dev", "test"):
        (local / f"{split}.tsv").write_text("EU\tNNP\tB-NP\tB-ORG\nrejects\tVBZ\tB-VP\tO\n\n")
    before = {p.name: p.read_bytes() for p in local.iterdir()}
    line = one_error_line(invoke(app, "corpus", "get", "conll2003", local, "--data-dir", tmp_path / "data", "--format", "tsv"))
    assert line == f"Error: {local / 'train.tsv'}: is an input of this command ({local / 'train.tsv'}); write the output to another file"
    assert {p.name: p.read_bytes() for p in local.iterdir()} == before
    out = tmp_path / "out"
    out.mkdir()
    (out / "dev.spacy").write_text("the user's")
    line = one_error_line(invoke(app, "corpus", "get", "conll2003", out, "--data-dir", tmp_path / "data"))
    assert line == f"Error: {out / 'train.spacy'}: already exists; choose another file, or pass --overwrite to replace it" or \
        line == f"Error: {out / 'dev.spacy'}: already exists; choose another file, or pass --overwrite to replace it"
    assert (out / "dev.spacy").read_text() == "the user's" and not (out / "train.spacy").exists()
    assert invoke(app, "corpus", "get", "conll2003", out, "--data-dir", tmp_path / "data", "--overwrite").exit_code == 0


# -- 3. a row is read only when it is what its folder says ---------------------------------------


def test_a_row_copied_into_another_cells_folder_is_skipped_and_said(study, tmp_path):
    """The issue's case: an ova_auc row copied into a ce cell's folder moved ce's mean."""
    spec, store, cells = study
    ce0 = next(c for c in cells if c.method == "ce" and c.partition == 0)
    ova0 = next(c for c in cells if c.method == "ova_auc" and c.partition == 0)
    source = _row_file(store, ova0)
    copied = store / ce0.key / "0000000000000000.json"
    row = json.loads(source.read_text())
    copied.write_text(json.dumps({**row, "finished": "2099-01-01T00:00:00+00:00"}, sort_keys=True) + "\n")
    result = invoke(app, "study", "report", store, "--spec", spec, "--out", tmp_path / "rep", "--no-plots")
    assert result.exit_code == 0, result.output
    warning = f"{copied}: skipping a file that is not a readable results row: its key \"{ova0.key}\" is not its folder's ({ce0.key})"
    assert warning in result.stderr
    assert "| ce | 41.2 ± 2.5 |" in result.stdout  # ce's own three rows, not ova_auc's
    status = _status(spec, store)
    assert warning in status.stderr
    assert status.stdout.splitlines()[-1] == f"rows: 7 in {store}, 1 not read by this spec (0 of them unmatched rows of the old format, 1 unreadable)"
    # its key and its cell_id's key edited too: read through the spec, its draw is not that of the cell of its key
    _edit(copied, key=ce0.key, partition=1, cell_id=ova0.id.replace("/p0", "/p1").split("#")[0] + "#" + ce0.key[:10])
    result = invoke(app, "study", "report", store, "--spec", spec, "--out", tmp_path / "rep", "--no-plots", "--overwrite")
    assert f"{copied}: skipping a file that is not a readable results row: its partition (1) is not that of the cell of its key (0" in result.stderr
    assert "| ce | 41.2 ± 2.5 |" in result.stdout


def test_a_row_whose_cell_id_names_another_cell_is_skipped(study):
    spec, store, cells = study
    path = _row_file(store, cells[0])
    _edit(path, method="ova_auc")
    warnings = []
    assert len(ResultsStore(store).rows(warn=warnings.append)) == 5
    assert warnings == [f"{path}: skipping a file that is not a readable results row: its cell_id {cells[0].id!r} "
                        f"names another corpus or method than its fields (toy, ova_auc)"]


def test_a_row_copied_with_its_key_edited_to_its_new_folder_is_skipped(study, tmp_path):
    """Issue 45 R3: a ce row copied into an ova_auc cell's folder, its `key` edited to match,
    was read as ova_auc's (a mean moved, without a word): its cell_id names the key it was
    written for, which is not its folder's."""
    spec, store, cells = study
    ce0 = next(c for c in cells if c.method == "ce" and c.partition == 0)
    ova0 = next(c for c in cells if c.method == "ova_auc" and c.partition == 0)
    copied = store / ova0.key / "0000000000000000.json"
    row = json.loads(_row_file(store, ce0).read_text())
    copied.write_text(json.dumps({**row, "key": ova0.key, "finished": "2099-01-01T00:00:00+00:00"}, sort_keys=True) + "\n")
    warning = (f"{copied}: skipping a file that is not a readable results row: its cell_id {ce0.id!r} was written "
               f"for another key than its folder's ({ova0.key})")
    for args in (["--spec", spec], []):  # read through the spec or not
        result = invoke(app, "study", "report", store, *args, "--out", tmp_path / "rep", "--no-plots", "--overwrite")
        assert result.exit_code == 0, result.output
        assert warning in result.stderr
        assert "| ova_auc | 51.2 ± 2.5" in result.stdout  # ova_auc's own three rows, not ce's (47.9)
    status = _status(spec, store)
    assert warning in status.stderr and "reported cells: 6 ok" in status.stdout
    assert status.stdout.splitlines()[-1].endswith("1 unreadable)")


@pytest.mark.parametrize("changes, why", [
    # a row of the old format (its cell_id hashes names, not a key): its method is another of the spec's
    ({"method": "ce", "cell_id": "toy/ce/n=2/p0#0123456789", "imported": {"from": "old.jsonl", "line": 1}},
     "its method (\"ce\") is not that of the cell of its key (\"ova_auc\""),
    ({"seed": 7}, "its seed (7) is not that of the cell of its key (0"),
])
def test_a_row_is_read_only_as_the_cell_its_folders_key_stands_for(study, changes, why):
    """Issue 45 R3: every field that says which cell a row is (what the key hashes: the draw
    and its seed; the method, where no cell_id vouches for the key) is that cell's."""
    _, store, cells = study
    ova0 = next(c for c in cells if c.method == "ova_auc" and c.partition == 0)
    path = _row_file(store, ova0)
    _edit(path, **changes)
    warnings = []
    assert len(ResultsStore(store).rows_for(cells, warn=warnings.append)) == 5
    assert len(warnings) == 1 and warnings[0].startswith(f"{path}: skipping a file that is not a readable results row: {why}"), warnings


def test_a_store_is_known_by_its_marker_not_by_folder_names(tmp_path):
    """The issue's case: a user's folder whose subfolder has a hex-letter name was taken for a
    store; `study run` into a new folder marks it."""
    spec = _spec(tmp_path)
    user = tmp_path / "mine"
    (user / "deadbeefdeadbeef").mkdir(parents=True)
    (user / "deadbeefdeadbeef" / "photo.json").write_text("{}")
    line = one_error_line(invoke(app, "study", "run", spec, "--results", user, "--no-progress"))
    assert line.startswith(f"Error: {user}: not a results store (it has no {MARKER}")
    assert [p.name for p in user.rglob("*")] == ["deadbeefdeadbeef", "photo.json"]
    new = tmp_path / "new"
    assert invoke(app, "study", "run", spec, "--results", new, "--no-progress").exit_code == 0
    assert (new / MARKER).is_file() and len(ResultsStore(new).rows()) == 6


# -- 4. scores are finite numbers in [0, 1] -------------------------------------------------------


@pytest.mark.parametrize("value, why", [
    (float("nan"), "'scores.ents_seqeval_micro_f' is nan, not a finite number"),
    (float("inf"), "'scores.ents_seqeval_micro_f' is inf, not a finite number"),
    (True, "'scores.ents_seqeval_micro_f' is true, not a number"),
    (57.0, "'scores.ents_seqeval_micro_f' is 57, not a score in [0, 1]"),
    (-0.1, "'scores.ents_seqeval_micro_f' is -0.1, not a score in [0, 1]"),
    # issue 45 R4: report said "rerun them", status said ok and study run planned nothing
    ("0.5", "'scores.ents_seqeval_micro_f' is \"0.5\", not a number"),
    (None, "'scores.ents_seqeval_micro_f' is null, not a number"),
])
def test_a_score_that_is_not_a_number_in_0_1_makes_the_row_unreadable_and_its_cell_rerun(study, tmp_path, value, why):
    spec, store, cells = study
    path = _row_file(store, cells[0])
    _edit_scores(path, ents_seqeval_micro_f=value)
    result = invoke(app, "study", "report", store, "--spec", spec, "--out", tmp_path / "rep", "--no-plots")
    assert result.exit_code == 0, result.output
    assert f"{path}: skipping a file that is not a readable results row: {why}" in result.stderr
    # the row is left out: ce has two partitions, and its pairs with ova_auc are two
    assert "| ce | 41.7 ± 6.4 (n=2" in result.stdout or "| ce | 40.7 ± 6.4" in result.stdout or "n=2)" in result.stdout
    assert "2851" not in result.stdout and "nan" not in result.stdout.lower()
    status = _status(spec, store)
    lines = status.stdout.splitlines()  # between these two: each method's mean seconds
    assert (lines[0], lines[-1]) == ("reported cells: 5 ok, 0 failed, 1 to run, of 6",
                                     f"rows: 6 in {store}, 1 not read by this spec (0 of them unmatched rows of the old format, 1 unreadable)")
    done = invoke(app, "study", "run", spec, "--results", store, "--no-progress")
    assert done.exit_code == 0 and "1 ok, 0 failed, 5 already done of 6 cells" in done.stderr
    assert "reported cells: 6 ok" in _status(spec, store).stdout


def test_a_dev_score_and_a_per_type_score_are_checked_too(study):
    _, store, cells = study
    path = _row_file(store, cells[0])
    _edit_scores(path, dev_scores={"ents_f": float("nan")})
    assert "'scores.dev_scores.ents_f' is nan" in row_problem(json.loads(path.read_text()), cells[0].key)
    _edit_scores(path, dev_scores={}, ents_per_type={"Disease": {"p": 0.5, "r": 2.0, "f": 0.5}})
    assert "'scores.ents_per_type.Disease.r' is 2" in row_problem(json.loads(path.read_text()), cells[0].key)
    _edit_scores(path, ents_per_type={}, train_seconds=-1.0)
    assert "'scores.train_seconds' is -1, below 0" in row_problem(json.loads(path.read_text()), cells[0].key)
    _edit_scores(path, train_seconds=12.5, test_words=2851)  # timings and counts are not fractions
    assert row_problem(json.loads(path.read_text()), cells[0].key) is None


@pytest.mark.parametrize("changes, why", [
    ({"method": None}, "no 'method'"),
    ({"scores": [0.5]}, "'scores' is a list, not a mapping"),
    ({"partition": "one"}, "'partition' is \"one\", not a whole number"),
    ({"size": True}, "'size' is true, not a whole number"),
    ({"status": "done"}, "'status' is \"done\", not one of ok, failed"),
])
def test_malformed_fields_give_one_line_naming_the_file(study, tmp_path, changes, why):
    spec, store, cells = study
    path = _row_file(store, cells[0])
    row = {**json.loads(path.read_text()), **changes}
    if changes.get("method", "") is None:
        del row["method"]
    path.write_text(json.dumps(row))
    for args in (["report", store, "--out", tmp_path / "rep", "--no-plots"], ["status", spec, "--results", store]):
        result = invoke(app, "study", *args)
        assert result.exit_code == 0, result.output
        said = [line for line in result.stderr.splitlines() if not line.startswith("wrote ")]
        assert said == [f"{path}: skipping a file that is not a readable results row: {why}"]
        assert result.exception is None or isinstance(result.exception, SystemExit)


@pytest.mark.parametrize("value, why", [(float("nan"), "is nan, not a finite number"),
                                        ("0.5", "is \"0.5\", not a number"), (None, "is null, not a number")])
def test_verdicts_warns_about_the_rows_it_skips(study, tmp_path, value, why):
    """The issue's case: n=2 became n=1 without a word (issue 45 R4: a score stored as a string
    or null too)."""
    spec, store, cells = study
    claims = tmp_path / "claims.yaml"
    claims.write_text(yaml.safe_dump({"claims": [{"id": "a", "claim": "ova_auc beats ce", "results": "r",
                                                  "a": {"method": "ova_auc"}, "b": {"method": "ce"}}]}))
    path = _row_file(store, cells[0])
    _edit_scores(path, ents_seqeval_micro_f=value)
    result = invoke(app, "study", "verdicts", claims)
    assert result.exit_code == 0, result.output
    assert result.stderr.splitlines() == [f"{path}: skipping a file that is not a readable results row: "
                                          f"'scores.ents_seqeval_micro_f' {why}"]
    assert "(n=2 draws; 2 cells)" in result.stdout


def test_no_test_returns_a_p_value_for_nan():
    nan = float("nan")
    for call in (lambda: paired_t_test([0.5, nan, 0.4], [0.4, 0.4, 0.4]),
                 lambda: paired_t_test([nan, nan], [0.1, 0.1]),
                 lambda: paired_t_test([0.5, 0.6], [0.4, math.inf]),
                 lambda: paired_t_test([True, 0.6], [0.4, 0.5]),
                 lambda: summarize([0.5, nan]),
                 lambda: holm([0.01, nan]),
                 lambda: trend_test({0: {1.0: 0.1, 2.0: nan}, 1: {1.0: 0.1, 2.0: 0.2}})):
        with pytest.raises(ValueError, match="is not a finite number"):
            call()
    assert paired_t_test([0.5, 0.6], [0.4, 0.5]).p_value == 0.0  # constant differences: still certain


# -- 5. a killed study leaves no temporary folder -------------------------------------------------


def _sleepy_study(tmp_path: Path, workers: int, tmp: Optional[Path] = None):
    spec = _spec(tmp_path, methods=["ce"], partitions=1, runner="lab_helpers:temp_folder_cell")
    tmp = tmp or tmp_path / "tmpdir"
    tmp.mkdir(exist_ok=True)
    log = tmp_path / "cell.log"
    env = study_env(TMPDIR=str(tmp), STUDY_FAKE_LOG=str(log), STUDY_FAKE_SLEEP="60")
    proc = subprocess.Popen(study_command(spec, tmp_path / "r", "--workers", str(workers)), env=env,
                            start_new_session=True, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    deadline = time.time() + 60
    while time.time() < deadline and not (log.exists() and log.read_text().count("\n")):
        assert proc.poll() is None, proc.stderr.read().decode()
        time.sleep(0.1)
    folder, pid = log.read_text().split()
    assert Path(folder).is_dir() and Path(folder).is_relative_to(tmp) and (Path(folder) / "model.bin").exists()
    return proc, tmp, Path(folder), int(pid)


def _gone(tmp: Path, proc) -> None:
    try:
        proc.wait(timeout=60)
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
    deadline = time.time() + 10  # a worker may still be unwinding after its study exited
    while time.time() < deadline and list(tmp.iterdir()):
        time.sleep(0.1)
    assert list(tmp.iterdir()) == []


@pytest.mark.parametrize("workers", [0, 1])
def test_a_study_stopped_with_sigterm_removes_its_cells_temporary_folders(tmp_path, workers):
    proc, tmp, folder, _ = _sleepy_study(tmp_path, workers)
    os.kill(proc.pid, signal.SIGTERM)  # the study only: it stops its workers
    _gone(tmp, proc)
    assert proc.returncode != 0


def test_a_study_killed_outright_still_removes_its_cells_temporary_folders(tmp_path):
    """SIGKILL of the study: its worker is told (SIGTERM at its parent's death), unwinds its
    cell and removes the study's scratch folder, the last worker out."""
    proc, tmp, folder, _ = _sleepy_study(tmp_path, 1)
    os.kill(proc.pid, signal.SIGKILL)
    _gone(tmp, proc)


def test_a_worker_killed_outright_leaves_nothing_once_the_study_ends(tmp_path):
    proc, tmp, folder, worker = _sleepy_study(tmp_path, 1)
    os.kill(worker, signal.SIGKILL)  # the cell is recorded as lost; the study ends
    _gone(tmp, proc)


def test_the_next_study_removes_what_a_study_killed_outright_left_but_not_a_live_studys(tmp_path, monkeypatch):
    """Issue 45 R9: SIGKILL of a study and its cell (here its process group) left the cell's
    training folder in $TMPDIR; the next study removes the scratch folders whose study is
    gone, never that of a study still running."""
    killed, tmp, left, _ = _sleepy_study(tmp_path / "killed", 0)
    os.killpg(killed.pid, signal.SIGKILL)
    killed.wait()
    assert (left / "model.bin").exists()  # what SIGKILL leaves
    live, _, running, _ = _sleepy_study(tmp_path / "live", 0, tmp=tmp)
    try:
        monkeypatch.setattr(tempfile, "tempdir", str(tmp))
        cells = load_spec(_spec(tmp_path / "next")).cells()
        assert run_study(cells, tmp_path / "next" / "r", workers=0, runner=instant_cell, **QUIET).ok == 6
        assert not left.parent.exists()
        assert list(tmp.iterdir()) == [running.parent] and (running / "model.bin").exists()
    finally:
        os.kill(live.pid, signal.SIGTERM)
        _gone(tmp, live)


def test_workers_deaf_to_sigterm_share_one_grace_period_then_get_sigkill():
    """A study that stops waits `grace` seconds in all for workers that ignore SIGTERM (one stuck
    in a GPU call, say), then kills them: not `grace` once per worker."""
    from auc_ner_lab.workers import stop_workers

    class Deaf:  # a worker process that ignores SIGTERM
        def __init__(self):
            self.alive, self.waits, self.terminated = True, [], False

        def is_alive(self):
            return self.alive

        def terminate(self):
            self.terminated = True

        def join(self, timeout=None):
            self.waits.append(timeout)
            if timeout:
                time.sleep(timeout)

        def kill(self):
            self.alive = False

    class Pool:
        def __init__(self, processes):
            self._processes = dict(enumerate(processes))

        def shutdown(self, wait=True, cancel_futures=False):
            self._processes = None

    workers = [Deaf() for _ in range(4)]
    stop_workers(Pool(workers), grace=0.2)
    assert all(w.terminated and not w.alive for w in workers)
    assert sum(w.waits[0] for w in workers) <= 0.2 + 1e-6  # one grace period shared, not 4 x 0.2
