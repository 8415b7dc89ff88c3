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
        (["study", "run"], "Error: Missing argument 'spec'. (see: spacy-auc-ner study run --help)"),
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
    done = subprocess.run([sys.executable, "-m", "spacy_auc_ner", "study", "run"], capture_output=True, text=True)
    assert done.returncode == 2 and done.stderr.strip().startswith("Error: Missing argument 'spec'.")


# -- issue 25: study run under bad input -------------------------------------------------------


@pytest.mark.parametrize("content", [
    "".join(f"col{i}\tcol\tB-X\n" for i in range(50)),  # a TSV: not a results file
    '{"not": "a row"}\n',  # JSON, not a row of study run
])
def test_study_run_refuses_a_results_file_it_did_not_write(tmp_path, content):
    """Item 6: refused before anything is appended (it used to append two rows after 47
    warnings, exit 0)."""
    target = tmp_path / "data.tsv"
    target.write_text(content)
    line = _one_error_line(_invoke("study", "run", _spec(tmp_path), "--results", target, "--no-progress"))
    assert line == f"Error: {target}:1: not a results row of 'study run'; give a results JSONL it wrote, or a new file"
    assert target.read_text() == content


def test_study_run_refuses_a_binary_results_file_and_names_it(tmp_path):
    """Items 6 and 12: no byte appended to a binary file; the decode error names the file."""
    target = tmp_path / "blob.bin"
    target.write_bytes(b"\x89PNG\r\n\x1a\n\xff\xfe")
    line = _one_error_line(_invoke("study", "run", _spec(tmp_path), "--results", target, "--no-progress"))
    assert line.startswith(f"Error: {target}: not a results file (not UTF-8 text: invalid start byte")
    assert target.read_bytes() == b"\x89PNG\r\n\x1a\n\xff\xfe"
    line = _one_error_line(_invoke("study", "report", target, "--no-plots", "--out", tmp_path / "rep"))
    assert line.startswith(f"Error: {target}: not a results file (not UTF-8 text")


def test_study_run_accepts_a_row_cut_short_by_a_kill(tmp_path):
    out = tmp_path / "r.jsonl"
    out.write_text('{"cell_id": "x", "status": "ok"}\n{"cell_id": "toy/ce/n=2')
    result = _invoke("study", "run", _spec(tmp_path), "--results", out, "--no-progress")
    assert result.exit_code == 0, result.stderr
    assert len([line for line in out.read_text().splitlines() if line.strip()]) == 2 + 2


def test_a_binary_spec_is_named(tmp_path):
    spec = tmp_path / "spec.yaml"
    spec.write_bytes(b"name: t\n\xff\xfe\x00")
    line = _one_error_line(_invoke("study", "run", spec, "--no-progress"))
    assert line.startswith(f"Error: {spec}: not a study spec (not UTF-8 text")


@pytest.mark.parametrize("changes,message", [
    ({"overrides": {"training.max_step": 10}}, "overrides.training.max_step: names nothing in the config of method 'ce'"),
    ({"overrides": {"trainingx.max_steps": 10}}, "overrides.trainingx.max_steps: names nothing in the config of method 'ce'"),
    ({"methods": [{"name": "ce", "overrides": {"components.auc_ner.model.hidden_widht": 8}}]},
     "methods.ce.overrides.components.auc_ner.model.hidden_widht: names nothing in the config of method 'ce'"),
])
def test_study_run_refuses_an_override_key_that_names_nothing(tmp_path, changes, message):
    """Item 7: refused at load time, naming the spec and the key, before any cell runs."""
    line = _one_error_line(_invoke("study", "run", _spec(tmp_path, **changes), "--results", tmp_path / "r.jsonl", "--no-progress"))
    assert line.startswith(f"Error: {tmp_path / 'spec.yaml'}: {message} (")
    assert not (tmp_path / "r.jsonl").exists()


def test_an_override_of_a_default_the_config_leaves_out_is_accepted(tmp_path):
    spec = _spec(tmp_path, overrides={"training.max_steps": 3, "components.auc_ner.threshold": 0.4})
    result = _invoke("study", "run", spec, "--results", tmp_path / "r.jsonl", "--no-progress")
    assert result.exit_code == 0, result.stderr


def test_study_run_exits_1_when_cells_fail(tmp_path):
    """Item 7: failing cells used to end with exit 0; --no-strict keeps that."""
    spec = _spec(tmp_path, runner="study_fake_cells:exiting_cell", partitions=2, methods=["ce"])
    result = _invoke("study", "run", spec, "--results", tmp_path / "r.jsonl", "--no-progress", "--workers", "0")
    assert result.exit_code == 1 and isinstance(result.exception, SystemExit)
    line = result.stderr.strip().splitlines()[-1]  # after the cells' log (--no-progress)
    assert line == f"Error: 1 of 2 cells failed; their errors are in {tmp_path / 'r.jsonl'} (--no-strict: exit 0)"
    result = _invoke("study", "run", spec, "--results", tmp_path / "r2.jsonl", "--no-progress", "--workers", "0", "--no-strict")
    assert result.exit_code == 0, result.stderr


@pytest.mark.parametrize("threads", ["0", "-2"])
def test_threads_per_worker_must_be_positive(tmp_path, threads):
    """Item 9: every cell used to die with a libgomp error, exit 0."""
    line = _one_error_line(_invoke("study", "run", _spec(tmp_path), "--threads-per-worker", threads, "--no-progress"))
    assert line == f"Error: --threads-per-worker: expected 1 or more, got {threads}"


@pytest.mark.parametrize("value", ["nan"])
def test_a_threshold_that_is_no_number_names_the_full_key(tmp_path, full_configs, value):
    """Item 8: `--components.auc_ner.threshold nan` reaches the component as the string
    'nan' (spaCy's override parser); it used to end in a TypeError traceback."""
    import spacy
    from spacy.tokens import Doc, DocBin

    vocab = spacy.blank("en").vocab
    DocBin(docs=[Doc(vocab, words=["Aspirin", "works"], ents=["B-Chemical", "O"])]).to_disk(tmp_path / "c.spacy")
    (tmp_path / "pool.txt").write_text("a text\n")
    result = _invoke("self-train", full_configs["ova_auc_all"], tmp_path / "out", "--train", tmp_path / "c.spacy",
                     "--dev", tmp_path / "c.spacy", "--pool", tmp_path / "pool.txt", "--components.auc_ner.threshold", value)
    assert result.exit_code == 1 and isinstance(result.exception, SystemExit), result.exception
    line = result.stderr.strip().splitlines()[-1]  # after the round's log line
    assert line == f"Error: [components.auc_ner.threshold] must be in (0, 1), not '{value}'"


def test_a_binary_config_is_named_by_self_train_recipe_and_pretrain_config(tmp_path):
    """Item 12: UTF-8 decode errors used to print only the codec's message."""
    import spacy
    from spacy.tokens import Doc, DocBin

    vocab = spacy.blank("en").vocab
    DocBin(docs=[Doc(vocab, words=["Aspirin", "works"], ents=["B-Chemical", "O"])]).to_disk(tmp_path / "c.spacy")
    (tmp_path / "pool.txt").write_text("a text\n")
    binary = tmp_path / "binary.cfg"
    binary.write_bytes(b"[nlp]\nlang = \"en\"\n\xff\xfe\x00\x89")
    expected = f"Error: {binary}: not UTF-8 text (invalid start byte at byte 18)"
    data = ["--train", tmp_path / "c.spacy", "--dev", tmp_path / "c.spacy"]
    assert _one_error_line(_invoke("self-train", binary, tmp_path / "out", *data, "--pool", tmp_path / "pool.txt")) == expected
    assert _one_error_line(_invoke("recipe", tmp_path / "out", *data, "-c", binary, "--raw", tmp_path / "pool.txt")) == expected
    assert _one_error_line(_invoke("recipe", tmp_path / "out", *data, "-c", binary, "--no-pretrain")) == expected
    fragment = Path(__file__).parents[1] / "configs" / "pretrain" / "characters.cfg"
    assert _one_error_line(_invoke("pretrain-config", binary, fragment, tmp_path / "p.cfg")) == expected
    assert not (tmp_path / "out").exists() and not (tmp_path / "p.cfg").exists()
