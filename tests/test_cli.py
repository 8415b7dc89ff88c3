"""The command line: convert, stats, partition; errors are one line with a non-zero exit."""
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
import spacy
from typer.testing import CliRunner

from spacy_auc_ner.cli.app import app
from spacy_auc_ner.data.columns import read_docs, read_sentences
from spacy_auc_ner.training.readers import create_low_resource

DATA = Path(os.environ.get("SPACY_AUC_NER_DATA", Path(__file__).parents[1] / ".." / "shared" / "data"))
runner = CliRunner()


def _run(*args):
    return runner.invoke(app, [str(a) for a in args])


def _error_line(result):
    assert result.exit_code != 0
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1, result.stderr
    return lines[0]


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


def test_help():
    result = _run("--help")
    assert result.exit_code == 0
    for command in ("convert", "stats", "partition", "corpus"):
        assert command in result.stdout
    assert _run("corpus", "--help").exit_code == 0


def test_python_m_entry():
    out = subprocess.run([sys.executable, "-m", "spacy_auc_ner", "--help"], capture_output=True, text=True, env={**os.environ, "OMP_NUM_THREADS": "1"})
    assert out.returncode == 0 and "partition" in out.stdout


# -- convert ----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "text,options",
    [
        ("Peter\tB-PER\nBlackburn\tI-PER\nin\tO\nBonn\tB-LOC\n\n", []),
        ("-DOCSTART- -X- -X- O\n\nPeter NNP B-NP B-PER\nBlackburn NNP I-NP I-PER\nin IN B-PP O\nBonn NNP B-NP B-LOC\n\n", []),
        ("Peter I-PER\nBlackburn I-PER\nin O\nBonn I-LOC\n\n", ["--scheme", "iob1"]),
        ("Peter\tB-PER\nBlackburn\tE-PER\nin\tO\nBonn\tS-LOC\n\n", []),
        ("Peter\tB-PER\nBlackburn\tL-PER\nin\tO\nBonn\tU-LOC\n\n", ["--scheme", "bilou"]),
        ("Peter\tB\nBlackburn\tI\nin\tO\nBonn\tB\n\n", ["--untyped-type", "PER"]),
    ],
)
def test_convert_each_format(tmp_path, text, options):
    src = tmp_path / "in.txt"
    src.write_text(text)
    result = _run("convert", src, tmp_path / "out.spacy", *options)
    assert result.exit_code == 0, result.stderr
    (doc,) = read_docs(tmp_path / "out.spacy", spacy.blank("en").vocab)
    expected = [("Peter Blackburn", "PER"), ("Bonn", "PER" if "--untyped-type" in options else "LOC")]
    assert [(e.text, e.label_) for e in doc.ents] == expected
    assert _run("convert", src, tmp_path / "out.tsv", *options).exit_code == 0
    assert read_sentences(tmp_path / "out.tsv")[0].labels[:2] == ("B-PER", "I-PER")


def test_convert_into_a_folder(tmp_path, corpus):
    assert _run("convert", corpus / "train.tsv", tmp_path).exit_code == 0
    assert len(read_sentences(tmp_path / "train.spacy")) == 4


@pytest.mark.parametrize(
    "text,options,message",
    [
        ("a\tB-PER\nb\tZ-PER\n\n", [], r"in.tsv:2: label 'Z-PER' fits no known scheme"),
        ("a\tB-ORG\nb\tI-PER\n\n", [], r"in.tsv:2: I-PER follows B-ORG"),
        ("\n\n", [], r"in.tsv: no sentences found"),
        ("a\tO\n\n", ["--scheme", "iob3"], r"unknown label scheme 'iob3'"),
        ("a\tB-X\nb c d\n\n", [], r"in.tsv:2: found 3 columns, but line 1 has 2"),
    ],
)
def test_convert_errors_write_nothing(tmp_path, text, options, message):
    src = tmp_path / "in.tsv"
    src.write_text(text)
    line = _error_line(_run("convert", src, tmp_path / "out.spacy", *options))
    assert line.startswith("Error: ") and message in line
    assert not (tmp_path / "out.spacy").exists()


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


@pytest.mark.skipif(not (DATA / "s800").is_dir(), reason=f"real corpora not found in {DATA}")
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
        reader = create_low_resource(str(corpus / "train.tsv"), n=entry["size"], seed=entry["seed"])
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
