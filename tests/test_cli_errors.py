"""Every command ends an expected failure with one `Error:` line and exit status 1, and
leaves no partial output; writers write whole files or nothing (data/files.py)."""
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
import yaml
from typer.testing import CliRunner

from spacy_auc_ner.cli.app import app
from spacy_auc_ner.data.files import DataError, atomic_output, write_json

TESTS = Path(__file__).parent
sys.path.insert(0, str(TESTS))
from study_toy_corpus import write_toy_corpus  # noqa: E402

runner = CliRunner()
BIO = "Peter\tB-PER\nBlackburn\tI-PER\nin\tO\nBonn\tB-LOC\n\nhello\tO\n\n"


def _invoke(*args):
    return runner.invoke(app, [str(a) for a in args])


def _one_error_line(result) -> str:
    """The failure was expected: exit 1, no exception escaped, one line on stderr."""
    assert result.exit_code == 1, (result.exit_code, result.stderr, result.exception)
    assert isinstance(result.exception, SystemExit), result.exception
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("Error: "), result.stderr
    return lines[0]


def _files(folder: Path):
    return sorted(str(p.relative_to(folder)) for p in folder.rglob("*"))


@pytest.fixture
def blocker(tmp_path):
    """A plain file: no folder can be created under it (even for root)."""
    path = tmp_path / "blocker"
    path.write_text("not a folder\n")
    return path


@pytest.fixture
def bio_file(tmp_path):
    path = tmp_path / "in.tsv"
    path.write_text(BIO)
    return path


# -- the writer helper ----------------------------------------------------------------------


def test_atomic_output_replaces_whole_or_leaves_the_old_file(tmp_path):
    target = tmp_path / "out" / "data.json"
    write_json(target, {"a": 1, "nan": float("nan")})
    assert json.loads(target.read_text()) == {"a": 1, "nan": None}  # never NaN in JSON
    with pytest.raises(RuntimeError):
        with atomic_output(target) as tmp:
            tmp.write_text('{"half": ')  # a writer that dies half way
            raise RuntimeError("killed")
    assert json.loads(target.read_text()) == {"a": 1, "nan": None}
    assert _files(tmp_path / "out") == ["data.json"]  # no temporary file left behind
    assert oct(target.stat().st_mode & 0o777) == oct(0o666 & ~_umask())


def test_atomic_output_where_no_folder_can_be_made(blocker):
    with pytest.raises(DataError, match=r"blocker/x/out.spacy: cannot write here \(.*blocker/x: .*\)$"):
        with atomic_output(blocker / "x" / "out.spacy"):
            pass


def _umask():
    mask = os.umask(0)
    os.umask(mask)
    return mask


# -- data commands --------------------------------------------------------------------------


def test_convert_to_a_path_that_cannot_be_created(tmp_path, bio_file, blocker):
    """Issue 13.4: this printed a 41-line traceback."""
    line = _one_error_line(_invoke("convert", bio_file, blocker / "sub" / "out.spacy"))
    assert "blocker/sub/out.spacy: cannot write here" in line
    assert _files(tmp_path) == ["blocker", "in.tsv"]
    out = subprocess.run([sys.executable, "-m", "spacy_auc_ner", "convert", str(bio_file), str(blocker / "o.tsv" / "x.tsv")],
                         capture_output=True, text=True, env={**os.environ, "OMP_NUM_THREADS": "1"})
    assert out.returncode == 1 and len(out.stderr.strip().splitlines()) == 1, out.stderr


def test_convert_of_a_folder_or_a_bad_file(tmp_path):
    line = _one_error_line(_invoke("convert", tmp_path, tmp_path / "out.spacy"))
    assert str(tmp_path) in line
    (tmp_path / "bad.tsv").write_bytes(b"caf\xe9\tO\n")
    assert "bad.tsv: not UTF-8" in _one_error_line(_invoke("convert", tmp_path / "bad.tsv", tmp_path / "out.spacy"))
    assert not (tmp_path / "out.spacy").exists()


def test_stats_of_a_corrupt_spacy_file(tmp_path):
    (tmp_path / "train.spacy").write_bytes(b"\x00not a docbin")
    assert "train.spacy: not a readable .spacy" in _one_error_line(_invoke("stats", tmp_path))


def test_partition_into_a_folder_that_cannot_be_created(tmp_path, bio_file, blocker):
    line = _one_error_line(_invoke("partition", bio_file, blocker / "parts", "--sizes", "1", "--partitions", "2"))
    assert "blocker/parts/n1-p0.spacy: cannot write here" in line
    assert _files(tmp_path) == ["blocker", "in.tsv"]


def test_corpus_get_into_a_folder_that_cannot_be_created(tmp_path, blocker):
    src = tmp_path / "data" / "s800"
    src.mkdir(parents=True)
    for split in ("train", "dev", "test"):
        (src / f"{split}.tsv").write_text("Mice\tB-Species\nrun\tO\n\n")
    line = _one_error_line(_invoke("corpus", "get", "s800", blocker / "s800", "--data-dir", tmp_path / "data"))
    assert "blocker/s800/train.spacy: cannot write here" in line


def test_corpus_list_with_a_missing_data_dir(tmp_path):
    result = _invoke("corpus", "list", "--data-dir", tmp_path / "nowhere")
    assert result.exit_code == 0 and "conll2003" in result.stdout


# -- study commands -------------------------------------------------------------------------


def _spec(tmp_path, **changes):
    corpora = write_toy_corpus(tmp_path / "corpus")
    spec = {"name": "t", "corpora": ["toy"], "corpora_dir": str(corpora), "methods": ["ce", "ova_auc"],
            "sizes": [2], "partitions": 1, "runner": "study_fake_cells:instant_cell", **changes}
    path = tmp_path / "spec.yaml"
    path.write_text(yaml.safe_dump(spec))
    return path


def test_study_run_errors(tmp_path, blocker):
    spec = _spec(tmp_path)
    line = _one_error_line(_invoke("study", "run", spec, "--results", blocker / "r.jsonl", "--no-progress"))
    assert "blocker" in line
    line = _one_error_line(_invoke("study", "run", tmp_path, "--no-progress"))  # a folder, not a spec
    assert str(tmp_path) in line
    line = _one_error_line(_invoke("study", "run", _spec(tmp_path, metric="ents_typo_f"), "--no-progress"))
    assert "spec.yaml: metric: 'ents_typo_f' is not a score" in line
    assert not (tmp_path / "results").exists()


def test_study_report_errors(tmp_path, blocker):
    results = tmp_path / "r.jsonl"
    line = _one_error_line(_invoke("study", "report", results))
    assert "r.jsonl: no results rows" in line
    row = {"cell_id": "toy/ce/n=2/p0#x", "study": "t", "corpus": "toy", "method": "ce", "setting": "lowres",
           "size": 2, "value": None, "partition": 0, "seed": 0, "status": "ok", "scores": {"ents_seqeval_micro_f": 0.5}}
    results.write_text(json.dumps(row) + "\n")
    line = _one_error_line(_invoke("study", "report", results, "--out", blocker / "rep", "--no-plots"))
    assert "blocker/rep/report.md: cannot write here" in line
    line = _one_error_line(_invoke("study", "report", results, "--metric", "ents_typo_f", "--no-plots"))
    assert "r.jsonl: no row has a score 'ents_typo_f'; scores found: ents_seqeval_micro_f" in line
    assert _files(tmp_path) == ["blocker", "r.jsonl"]


def test_study_figure1_errors(tmp_path):
    line = _one_error_line(_invoke("study", "figure1", "AUC=" + str(tmp_path / "no-model"), "--data", tmp_path / "d.spacy"))
    assert "d.spacy: no such file" in line
    write_toy_corpus(tmp_path)
    line = _one_error_line(_invoke("study", "figure1", "AUC=" + str(tmp_path / "no-model"), "--data", tmp_path / "toy" / "test.spacy"))
    assert "no-model" in line
    assert "is not TITLE=MODEL_PATH" in _one_error_line(_invoke("study", "figure1", "AUC", "--data", tmp_path / "toy" / "test.spacy"))


def test_config_to_a_path_that_cannot_be_created(tmp_path, blocker):
    configs = Path(__file__).parents[1] / "configs"
    line = _one_error_line(_invoke("config", "ce", "--output", blocker / "ce.cfg", "--configs-dir", configs))
    assert "blocker/ce.cfg: cannot write here" in line


@pytest.mark.parametrize(
    "args, expected",
    [
        (["study", "run"], "Error: Missing argument 'spec'. (see: python -m auc_ner_lab study run --help)"),
        (["study", "run", "x.yaml", "--workers", "abc"], "Error: Invalid value for '--workers' / '-w': "),
        (["partition", "a.tsv", "out", "--bogus"], "Error: No such option: --bogus"),
        (["nothing-like-this"], "Error: No such command 'nothing-like-this'."),
    ],
)
def test_usage_errors_are_one_line_through_the_entry_point(capsys, args, expected):
    """Click's own usage errors (before any command runs) end as one line too, status 2."""
    from spacy_auc_ner.cli import main

    assert main(args) == 2
    lines = capsys.readouterr().err.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith(expected), lines


def test_the_entry_point_returns_the_commands_status(capsys, tmp_path):
    from spacy_auc_ner.cli import main

    assert main(["corpus", "get", "nope", str(tmp_path / "x")]) == 1
    assert capsys.readouterr().err.strip() == "Error: unknown corpus 'nope'; known corpora: conll2003, ncbi_disease, s800"
    assert main(["--help"]) == 0 and "Usage: spacy-auc-ner" in capsys.readouterr().out
    done = subprocess.run([sys.executable, "-m", "auc_ner_lab", "study", "run"], capture_output=True, text=True)
    assert done.returncode == 2 and done.stderr.strip().startswith("Error: Missing argument 'spec'.")
