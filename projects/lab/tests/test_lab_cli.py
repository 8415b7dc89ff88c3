"""The lab's command line (python -m auc_ner_lab): stats, partition, corpus and study; errors are
one line with a non-zero exit, as in the package's."""
import json
import subprocess
import sys
from pathlib import Path

import pytest
import spacy
import yaml
from spacy.util import registry
from typer.testing import CliRunner

from auc_ner_lab.cli import app, main
from auc_ner_lab.corpora import read_sentences
from lab_data import SHARED_DATA as DATA  # noqa: E402
from lab_data import write_toy_corpus
from lab_helpers import error_line as _error_line
from lab_helpers import invoke, rows, write_rows
from lab_helpers import one_error_line as _one_error_line
from spacy_auc_ner.api import read_docs

runner = CliRunner()


def _run(*args):
    return invoke(app, *args)


def _files(folder: Path):
    return sorted(str(p.relative_to(folder)) for p in folder.rglob("*"))


@pytest.fixture
def corpus(tmp_path):
    """A corpus folder. train: 4 sentences, 16 tokens: B 5, I 2, O 9; 3 sentences with an
    entity; PER 4 tokens (r = 2), LOC 2 (r = 3), ORG 1 (r = 4)."""
    folder = tmp_path / "toy"
    folder.mkdir()
    (folder / "train.tsv").write_text(
        "A\tB-PER\nB\tI-PER\nc\tO\nd\tO\n\n"
        "E\tB-LOC\nF\tI-LOC\nG\tB-PER\nh\tO\n\n"
        "i\tO\nj\tO\nk\tO\nl\tO\n\n"
        "M\tB-PER\nN\tO\nO\tB-ORG\np\tO\n\n"
    )
    (folder / "dev.tsv").write_text("A\tB-PER\nb\tO\n\n")
    return folder


@pytest.fixture
def blocker(tmp_path):
    """A plain file: no folder can be created under it (even for root)."""
    path = tmp_path / "blocker"
    path.write_text("not a folder\n")
    return path


@pytest.fixture
def bio_file(tmp_path):
    path = tmp_path / "in.tsv"
    path.write_text("Peter\tB-PER\nBlackburn\tI-PER\nin\tO\nBonn\tB-LOC\n\nhello\tO\n\n")
    return path


def test_help():
    result = _run("--help")
    assert result.exit_code == 0
    for command in ("stats", "partition", "corpus", "study"):
        assert command in result.stdout
    assert _run("corpus", "--help").exit_code == 0


# -- stats ------------------------------------------------------------------------------------


def test_stats_json_hand_counts(corpus):
    result = _run("stats", corpus, "--json")
    assert result.exit_code == 0, result.stderr
    (stats,) = json.loads(result.stdout)
    train = stats["splits"]["train"]
    assert (train["sentences"], train["tokens"], train["entities"]) == (4, 16, 5)
    assert (train["B%"], train["I%"], train["O%"]) == (31.25, 12.5, 56.25)
    assert train["sent_with_entity%"] == 75.0
    assert train["types"] == ["LOC", "ORG", "PER"]
    assert {t: v["r"] for t, v in train["per_type"].items()} == {"LOC": 3.0, "ORG": 4.0, "PER": 2.0}
    assert {t: v["token%"] for t, v in train["per_type"].items()} == {"LOC": 12.5, "ORG": 6.25, "PER": 25.0}
    assert stats["splits"]["dev"]["sentences"] == 1 and "test" not in stats["splits"]


def test_stats_markdown(corpus):
    result = _run("stats", corpus)
    assert result.exit_code == 0
    assert "| toy | train | 4 | 16 | 5 | 3 | 31.25 | 12.50 | 56.25 | 75.0 |" in result.stdout
    assert "| toy | train | ORG | 1 | 1 | 6.25 | 4.00 |" in result.stdout
    assert result.stdout.startswith("| corpus |")  # nothing else on stdout


def test_stats_errors(tmp_path):
    line = _error_line(_run("stats", tmp_path / "nothing"))
    assert "nothing: no such file or folder" in line
    (tmp_path / "bad.tsv").write_text("a\tB-X\nb\tI-Y\n\n")
    assert "bad.tsv:2: I-Y follows B-X" in _error_line(_run("stats", tmp_path / "bad.tsv"))


# Figures of shared/data/SOURCES.md: sentences per split, and B/I/O % of train.
SOURCES = {
    "conll2003": ((14041, 3250, 3453), (11.54, 5.18, 83.28)),
    "ncbi_disease": ((5424, 923, 940), (3.78, 4.51, 91.71)),
    "s800": ((5733, 830, 1630), (1.74, 2.25, 96.02)),
}


@pytest.mark.skipif(not (DATA / "s800").is_dir(), reason=f"real corpora not found in {DATA} (spacy project run corpora projects/lab)")
def test_stats_on_the_real_corpora_match_sources():
    result = _run("stats", *SOURCES, "--json", "--data-dir", DATA)
    assert result.exit_code == 0, result.stderr
    for stats in json.loads(result.stdout):
        sentences, bio = SOURCES[stats["corpus"]]
        splits = stats["splits"]
        assert tuple(splits[s]["sentences"] for s in ("train", "dev", "test")) == sentences
        assert (splits["train"]["B%"], splits["train"]["I%"], splits["train"]["O%"]) == bio


# -- partition --------------------------------------------------------------------------------


def test_partition_is_reproducible_and_matches_the_reader(tmp_path, corpus):
    args = ["--sizes", "2,3", "--partitions", "3", "--seed", "5"]
    assert _run("partition", corpus / "train.tsv", tmp_path / "a", *args).exit_code == 0
    assert _run("partition", corpus / "train.tsv", tmp_path / "b", *args).exit_code == 0
    manifest = json.loads((tmp_path / "a" / "manifest.json").read_text())
    assert manifest == json.loads((tmp_path / "b" / "manifest.json").read_text())
    assert len(manifest["files"]) == 6 and manifest["seed"] == 5
    nlp = spacy.blank("en")
    for entry in manifest["files"]:
        a, b = tmp_path / "a" / entry["path"], tmp_path / "b" / entry["path"]
        assert a.read_bytes() == b.read_bytes()
        texts = [d.text for d in read_docs(a, nlp.vocab)]
        assert len(texts) == entry["size"] == len(set(entry["sentence_ids"]))
        reader = registry.readers.get("spacy_auc_ner.LowResource.v1")(str(corpus / "train.tsv"), n=entry["size"], seed=entry["seed"])
        assert [eg.reference.text for eg in reader(nlp)] == texts
    other = _run("partition", corpus / "train.tsv", tmp_path / "c", "--sizes", "2,3", "--partitions", "3", "--seed", "6")
    assert other.exit_code == 0
    assert json.loads((tmp_path / "c" / "manifest.json").read_text())["files"] != manifest["files"]


def test_partition_with_entity_percent(tmp_path, corpus):
    # 2 sentences with 25% entity tokens: "A B c d" or "M N O p" (2 of 4 each) with
    # "i j k l" (0 of 4); "E F G h" has 3 of 4
    result = _run("partition", corpus / "train.tsv", tmp_path / "r", "--sizes", "2", "--partitions", "2", "--entity-percent", "25", "--format", "tsv")
    assert result.exit_code == 0, result.stderr
    manifest = json.loads((tmp_path / "r" / "manifest.json").read_text())
    for entry in manifest["files"]:
        assert entry["entity_percent"] == 25.0
        labels = [lab for s in read_sentences(tmp_path / "r" / entry["path"]) for lab in s.labels]
        assert sum(lab != "O" for lab in labels) / len(labels) == 0.25


def test_partition_errors(tmp_path, corpus):
    line = _error_line(_run("partition", corpus / "train.tsv", tmp_path / "p", "--sizes", "2,50"))
    assert "train.tsv: partition size 50 is larger than the corpus (4 sentences)" in line
    assert not (tmp_path / "p").exists()
    line = _error_line(_run("partition", corpus / "train.tsv", tmp_path / "p", "--sizes", "2", "--entity-percent", "90"))
    assert "cannot reach 90.0% entity tokens" in line
    assert "--sizes: expected comma-separated integers" in _error_line(_run("partition", corpus / "train.tsv", tmp_path / "p", "--sizes", "a,b"))


# -- one-line errors -------------------------------------------------------------------------


def test_stats_of_a_corrupt_spacy_file(tmp_path):
    (tmp_path / "train.spacy").write_bytes(b"\x00not a docbin")
    assert "train.spacy: not a readable .spacy" in _one_error_line(_run("stats", tmp_path))


def test_partition_into_a_folder_that_cannot_be_created(tmp_path, bio_file, blocker):
    line = _one_error_line(_run("partition", bio_file, blocker / "parts", "--sizes", "1", "--partitions", "2"))
    assert "blocker/parts/n1-p0.spacy: cannot write here" in line
    assert _files(tmp_path) == ["blocker", "in.tsv"]


def test_corpus_get_into_a_folder_that_cannot_be_created(tmp_path, blocker):
    src = tmp_path / "data" / "s800"
    src.mkdir(parents=True)
    for split in ("train", "dev", "test"):
        (src / f"{split}.tsv").write_text("Mice\tB-Species\nrun\tO\n\n")
    line = _one_error_line(_run("corpus", "get", "s800", blocker / "s800", "--data-dir", tmp_path / "data"))
    assert "blocker/s800/train.spacy: cannot write here" in line


def test_corpus_list_with_a_missing_data_dir(tmp_path):
    result = _run("corpus", "list", "--data-dir", tmp_path / "nowhere")
    assert result.exit_code == 0 and "conll2003" in result.stdout


# -- study commands -------------------------------------------------------------------------


def _spec(tmp_path, **changes):
    corpora = write_toy_corpus(tmp_path / "corpus")
    spec = {"name": "t", "corpora": ["toy"], "corpora_dir": str(corpora), "methods": ["ce", "ova_auc"],
            "sizes": [2], "partitions": 1, "runner": "lab_helpers:instant_cell", **changes}
    path = tmp_path / "spec.yaml"
    path.write_text(yaml.safe_dump(spec))
    return path


def test_study_run_errors(tmp_path, blocker):
    spec = _spec(tmp_path)
    line = _one_error_line(_run("study", "run", spec, "--results", blocker / "r", "--no-progress"))
    assert "blocker" in line
    line = _one_error_line(_run("study", "run", tmp_path, "--no-progress"))  # a folder, not a spec
    assert str(tmp_path) in line
    line = _one_error_line(_run("study", "run", _spec(tmp_path, metric="ents_typo_f"), "--no-progress"))
    assert "spec.yaml: metric: 'ents_typo_f' is not a score" in line
    assert not (tmp_path / "results").exists()


def test_study_report_errors(tmp_path, blocker):
    results = tmp_path / "r"
    line = _one_error_line(_run("study", "report", results))
    assert "r: no results rows" in line
    row = {"cell_id": "toy/ce/n=2/p0#x", "study": "t", "corpus": "toy", "method": "ce", "setting": "lowres",
           "size": 2, "value": None, "partition": 0, "seed": 0, "status": "ok", "scores": {"ents_seqeval_micro_f": 0.5}}
    write_rows(results, [row])
    written = _files(tmp_path)
    line = _one_error_line(_run("study", "report", results, "--out", blocker / "rep", "--no-plots"))
    assert "blocker/rep/report.md: cannot write here" in line
    line = _one_error_line(_run("study", "report", results, "--metric", "ents_typo_f", "--no-plots"))
    assert "r: no row has a score 'ents_typo_f'; scores found: ents_seqeval_micro_f" in line
    assert _files(tmp_path) == written


def test_study_figure1_errors(tmp_path):
    line = _one_error_line(_run("study", "figure1", "AUC=" + str(tmp_path / "no-model"), "--data", tmp_path / "d.spacy"))
    assert "d.spacy: no such file" in line
    write_toy_corpus(tmp_path)
    line = _one_error_line(_run("study", "figure1", "AUC=" + str(tmp_path / "no-model"), "--data", tmp_path / "toy" / "test.spacy"))
    assert "no-model" in line
    assert "is not TITLE=MODEL_PATH" in _one_error_line(_run("study", "figure1", "AUC", "--data", tmp_path / "toy" / "test.spacy"))


@pytest.mark.parametrize(
    "args, expected",
    [
        (["study", "run"], "Error: Missing argument 'spec'. (see: auc-ner-lab study run --help)"),
        (["study", "run", "x.yaml", "--workers", "abc"], "Error: Invalid value for '--workers' / '-w': "),
        (["partition", "a.tsv", "out", "--bogus"], "Error: No such option: --bogus"),
    ],
)
def test_usage_errors_are_one_line_through_the_entry_point(capsys, args, expected):
    assert main(args) == 2
    lines = capsys.readouterr().err.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith(expected), lines


def test_the_entry_point_returns_the_commands_status(capsys):
    assert main(["corpus", "get", "nope", "x"]) == 1
    assert capsys.readouterr().err.strip() == "Error: unknown corpus 'nope'; known corpora: conll2003, ncbi_disease, s800"
    done = subprocess.run([sys.executable, "-m", "auc_ner_lab", "study", "run"], capture_output=True, text=True)
    assert done.returncode == 2 and done.stderr.strip().startswith("Error: Missing argument 'spec'.")


def test_study_report_without_matplotlib_is_one_line(monkeypatch, tmp_path):
    from auc_ner_lab.study_cli import study_app

    store = write_rows(tmp_path / "r", [{"cell_id": "c/ce/n=10/p0#x", "status": "ok", "corpus": "c", "method": "ce", "setting": "lowres",
                                         "size": 10, "value": None, "partition": 0, "scores": {"ents_seqeval_micro_f": 0.5}}])
    monkeypatch.setitem(sys.modules, "matplotlib", None)
    result = runner.invoke(study_app, ["report", str(store), "--out", str(tmp_path / "rep")])
    assert result.exit_code == 1
    assert result.output.strip().splitlines()[-1].startswith("Error: plotting needs matplotlib")


# -- issue 25: study run under bad input -------------------------------------------------------


@pytest.mark.parametrize("content", [
    "".join(f"col{i}\tcol\tB-X\n" for i in range(50)),  # a TSV: not a results store
    '{"cell_id": "x", "status": "ok"}\n',  # a results file of the old format
])
def test_study_run_refuses_a_results_file_it_did_not_write(tmp_path, content):
    """Item 6: refused before anything is written (it used to append two rows after 47
    warnings, exit 0)."""
    target = tmp_path / "data.jsonl"
    target.write_text(content)
    line = _one_error_line(_run("study", "run", _spec(tmp_path), "--results", target, "--no-progress"))
    assert line == f"Error: {target}: not a results store (a folder 'study run' writes); give a folder it wrote, or a new one"
    assert target.read_text() == content


def test_study_run_refuses_a_binary_results_file_and_names_it(tmp_path):
    """Items 6 and 12: no byte written over a binary file; the error names the file."""
    target = tmp_path / "blob.bin"
    target.write_bytes(b"\x89PNG\r\n\x1a\n\xff\xfe")
    line = _one_error_line(_run("study", "run", _spec(tmp_path), "--results", target, "--no-progress"))
    assert line.startswith(f"Error: {target}: not a results store")
    assert target.read_bytes() == b"\x89PNG\r\n\x1a\n\xff\xfe"
    line = _one_error_line(_run("study", "report", target, "--no-plots", "--out", tmp_path / "rep"))
    assert line.startswith(f"Error: {target}: not a results store")


def test_study_run_ignores_a_row_a_kill_left_half_written(tmp_path):
    """A row is written to a hidden temporary file and renamed into place: a kill leaves at
    most such a file, which is not a row."""
    out = tmp_path / "r"
    (out / "0123456789abcdef").mkdir(parents=True)
    (out / "0123456789abcdef" / ".fedcba9876543210.json.77.tmp").write_text('{"cell_id": "toy/ce/n=2')
    (out / ".results-store").write_text("")  # a store (the marker the lab writes)
    result = _run("study", "run", _spec(tmp_path), "--results", out, "--no-progress")
    assert result.exit_code == 0, result.stderr
    assert len(rows(out)) == 2


def test_a_binary_spec_is_named(tmp_path):
    spec = tmp_path / "spec.yaml"
    spec.write_bytes(b"name: t\n\xff\xfe\x00")
    line = _one_error_line(_run("study", "run", spec, "--no-progress"))
    assert line.startswith(f"Error: {spec}: not a study spec (not UTF-8 text")


@pytest.mark.parametrize("changes,message", [
    ({"overrides": {"training.max_step": 10}}, "overrides.training.max_step: names nothing in the config of method 'ce'"),
    ({"overrides": {"trainingx.max_steps": 10}}, "overrides.trainingx.max_steps: names nothing in the config of method 'ce'"),
    ({"methods": [{"name": "ce", "overrides": {"components.auc_ner.model.hidden_widht": 8}}]},
     "methods.ce.overrides.components.auc_ner.model.hidden_widht: names nothing in the config of method 'ce'"),
])
def test_study_run_refuses_an_override_key_that_names_nothing(tmp_path, changes, message):
    """Item 7: refused at load time, naming the spec and the key, before any cell runs."""
    line = _one_error_line(_run("study", "run", _spec(tmp_path, **changes), "--results", tmp_path / "r", "--no-progress"))
    assert line.startswith(f"Error: {tmp_path / 'spec.yaml'}: {message} (")
    assert not (tmp_path / "r").exists()


def test_an_override_of_a_default_the_config_leaves_out_is_accepted(tmp_path):
    spec = _spec(tmp_path, overrides={"training.max_steps": 3, "components.auc_ner.entity_bias": 0.4})
    result = _run("study", "run", spec, "--results", tmp_path / "r", "--no-progress")
    assert result.exit_code == 0, result.stderr


SWAP = "components.auc_ner.model.tok2vec.embed"


@pytest.mark.parametrize("key,message", [
    ("word_dropout_rate", None),  # a setting of the swapped-in function only
    ("word_dropout_rat", "methods.bilstm_crf.overrides." + SWAP + ".word_dropout_rat: names nothing"),
])
def test_override_keys_under_a_swapped_function_are_checked_against_the_swap(tmp_path, key, message):
    """studies/heads_lowres.yaml swaps the embedding for spacy_auc_ner.MultiHashEmbed.v1 and sets
    its word_dropout_rate, which the method's own config does not have; a typo is still refused."""
    overrides = {SWAP + ".@architectures": "spacy_auc_ner.MultiHashEmbed.v1", f"{SWAP}.{key}": 0.3}
    spec = _spec(tmp_path, methods=[{"name": "bilstm_crf", "overrides": overrides}])
    result = _run("study", "run", spec, "--results", tmp_path / "r", "--no-progress", "--dry-run")
    if message is None:
        assert result.exit_code == 0, result.stderr
    else:
        assert _one_error_line(result).startswith(f"Error: {tmp_path / 'spec.yaml'}: {message}")


def test_study_run_exits_1_when_cells_fail(tmp_path):
    """Item 7: failing cells used to end with exit 0; --no-strict keeps that."""
    spec = _spec(tmp_path, runner="lab_helpers:exiting_cell", partitions=2, methods=["ce"])
    result = _run("study", "run", spec, "--results", tmp_path / "r", "--no-progress", "--workers", "0")
    assert result.exit_code == 1 and isinstance(result.exception, SystemExit)
    line = result.stderr.strip().splitlines()[-1]  # after the cells' log (--no-progress)
    assert line == f"Error: 1 of 2 cells failed; their errors are in {tmp_path / 'r'} (--no-strict: exit 0)"
    result = _run("study", "run", spec, "--results", tmp_path / "r2", "--no-progress", "--workers", "0", "--no-strict")
    assert result.exit_code == 0, result.stderr


@pytest.mark.parametrize("threads", ["0", "-2"])
def test_threads_per_worker_must_be_positive(tmp_path, threads):
    """Item 9: every cell used to die with a libgomp error, exit 0."""
    line = _one_error_line(_run("study", "run", _spec(tmp_path), "--threads-per-worker", threads, "--no-progress"))
    assert line == f"Error: --threads-per-worker: expected 1 or more, got {threads}"
