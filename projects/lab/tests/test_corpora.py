"""Known corpora: local lookup, and the download path with a stubbed fetch (no network)."""
import dataclasses
import hashlib
from pathlib import Path

import pytest
from typer.testing import CliRunner

from auc_ner_lab import corpora
from auc_ner_lab.cli import app
from auc_ner_lab.corpora import CORPORA, SPLITS, get_corpus, git_blob_id, locate, read_local, read_sentences
from lab_data import SHARED_DATA as DATA  # noqa: E402
from spacy_auc_ner.api import DataError, write_sentences

ENV_VAR = "SPACY_AUC_NER_DATA"  # README's variable
needs_data = pytest.mark.skipif(not (DATA / "s800" / "train.tsv").exists(), reason=f"real corpora not found in {DATA} (spacy project run corpora projects/lab)")



@pytest.fixture(autouse=True)
def no_checkout_data(monkeypatch):
    """The search as for an installed package: a shared/data beside this checkout is not read
    (tests/test_corpus_search.py tests that one)."""
    monkeypatch.setattr("spacy_auc_ner.data.corpora.CHECKOUT_DATA", None)

def test_git_blob_id():
    # `printf 'hello\n' | git hash-object --stdin`
    assert git_blob_id(b"hello\n") == "ce013625030ba8dba906f756967f9e9ca394464a"
    assert git_blob_id(b"") == "e69de29bb2d1d6434b8b29ae775ad8c2e48c5391"


@pytest.fixture(autouse=True)
def isolated_search_path(tmp_path, monkeypatch):
    """No local copy is found by accident: no $SPACY_AUC_NER_DATA, and a working folder without
    ../shared/data (so the download paths really download)."""
    monkeypatch.delenv(ENV_VAR, raising=False)
    monkeypatch.chdir(tmp_path)


def _fake_copy(root: Path, name: str, sentences: int = 2) -> Path:
    folder = root / name
    folder.mkdir(parents=True)
    for split in SPLITS:
        (folder / f"{split}.tsv").write_text("Aspirin\tB-Disease\nworks\tO\n\n" * sentences)
    return folder


def test_locate_order(tmp_path, monkeypatch):
    """README's folders, in its order: the --data-dir option, $SPACY_AUC_NER_DATA, assets/,
    data/ and ../shared/data of the working folder; nothing else."""
    work = tmp_path / "project" / "sub"
    work.mkdir(parents=True)
    monkeypatch.delenv(ENV_VAR, raising=False)
    assert locate("ncbi_disease", cwd=work) is None
    shared = _fake_copy(tmp_path / "project" / "shared" / "data", "ncbi_disease")  # ../shared/data
    assert locate("ncbi_disease", cwd=work) == shared
    data = _fake_copy(work / "data", "ncbi_disease")
    assert locate("ncbi_disease", cwd=work) == data
    assets = _fake_copy(work / "assets", "ncbi_disease")
    assert locate("ncbi_disease", cwd=work) == assets
    other = _fake_copy(tmp_path / "elsewhere", "ncbi_disease")
    monkeypatch.setenv(ENV_VAR, str(tmp_path / "elsewhere"))
    assert locate("ncbi_disease", cwd=work) == other
    given = _fake_copy(tmp_path / "x", "ncbi_disease")  # the --data-dir option comes first
    assert locate("ncbi_disease", tmp_path / "x", cwd=work) == given


def test_a_shared_data_folder_above_the_working_folders_parent_is_not_used(tmp_path, monkeypatch):
    """A shared/data in an ancestor of the working folder (other than README's ../shared/data),
    or in the working folder itself, is not a place README names: `corpus get` downloads
    instead of reading it, and a test or a user gets the same corpus wherever the folder sits."""
    work = tmp_path / "a" / "b" / "project"
    work.mkdir(parents=True)
    for above in (tmp_path, tmp_path / "a", work):
        _fake_copy(above / "shared" / "data", "s800")
    monkeypatch.chdir(work)
    assert locate("s800") is None and locate("s800", cwd=work) is None
    s800 = CORPORA["s800"]
    fetch, calls = _serve({s800.url(s): b"tampered\tO\n\n" for s in SPLITS})
    with pytest.raises(DataError, match="checksum mismatch"):  # it went to the download: no local copy read
        get_corpus("s800", tmp_path / "out", fetch=fetch)
    assert calls == [s800.url("train")]


def test_get_from_local_copy(tmp_path, capsys):
    _fake_copy(tmp_path / "data", "ncbi_disease", sentences=3)

    def no_network(url):
        raise AssertionError("must not download when a local copy exists")

    summary = get_corpus("ncbi_disease", tmp_path / "out", data_dir=tmp_path / "data", fetch=no_network)
    assert summary["origin"] == str(tmp_path / "data" / "ncbi_disease")
    assert [len(read_sentences(tmp_path / "out" / f"{s}.spacy")) for s in SPLITS] == [3, 3, 3]
    # not the reference copy: said so on stderr, still written
    assert len(summary["warnings"]) == 3 and "differs from the reference copy" in capsys.readouterr().err


def _serve(files):
    calls = []

    def fetch(url):
        calls.append(url)
        return files[url]

    return fetch, calls


def test_download_conll_style_with_stubbed_fetch(tmp_path, monkeypatch):
    originals = {
        "train": b"-DOCSTART- -X- -X- O\n\nEU NNP B-NP B-ORG\nrejects VBZ B-VP O\n\nPeter NNP B-NP B-PER\nBlackburn NNP I-NP I-PER\n\n",
        "dev": b"-DOCSTART- -X- -X- O\n\nCRICKET NN B-NP O\n\n",
        "test": b"-DOCSTART- -X- -X- O\n\nSOCCER NN B-NP O\nJAPAN NNP B-NP B-LOC\n\n",
    }
    conll = CORPORA["conll2003"]
    fake = dataclasses.replace(
        conll, files={s: (conll.files[s][0], git_blob_id(originals[s])) for s in SPLITS}
    )
    monkeypatch.setitem(CORPORA, "conll2003", fake)
    monkeypatch.setattr(corpora, "fetch_url", _serve({fake.url(s): originals[s] for s in SPLITS})[0])
    empty = tmp_path / "empty"
    empty.mkdir()
    summary = get_corpus("conll2003", tmp_path / "out", data_dir=empty, fmt="tsv")
    assert summary["origin"].startswith("https://github.com/kyzhouhzau/BERT-NER @ 0f77e4788724")
    assert (tmp_path / "out" / "train.tsv").read_text() == "EU\tB-ORG\nrejects\tO\n\nPeter\tB-PER\nBlackburn\tI-PER\n\n"
    assert (tmp_path / "out" / "test.tsv").read_text() == "SOCCER\tO\nJAPAN\tB-LOC\n\n"
    assert fake.url("train") == (
        "https://raw.githubusercontent.com/kyzhouhzau/BERT-NER/0f77e478872453df51cd3c65d1a39b12d9617f9d/old_version/NERdata/train.txt"
    )


def test_checksum_mismatch_writes_nothing(tmp_path):
    s800 = CORPORA["s800"]
    fetch, _ = _serve({s800.url(s): b"tampered\tO\n\n" for s in SPLITS})
    empty = tmp_path / "empty"
    empty.mkdir()
    with pytest.raises(DataError, match=r"s800/train\.tsv: checksum mismatch: git blob id [0-9a-f]{40}, expected a3abafa0"):
        get_corpus("s800", tmp_path / "out", data_dir=empty, fetch=fetch)
    assert not (tmp_path / "out").exists()


@needs_data
@pytest.mark.parametrize("name", ["s800", "ncbi_disease"])
def test_download_reproduces_the_reference_files(tmp_path, name):
    """Rebuild the original files from the local copies (S800: untyped B/I tags; NCBI: as is),
    serve them through a stubbed fetch, and check blob ids and the converted files' sha256."""
    source = CORPORA[name]
    files = {}
    for split in SPLITS:
        write_sentences(tmp_path / "copy.tsv", read_local(DATA / name / f"{split}.tsv", None))  # as token<TAB>BIO text
        text = (tmp_path / "copy.tsv").read_text(encoding="utf-8")
        if name == "s800":
            text = text.replace("\tB-Species\n", "\tB\n").replace("\tI-Species\n", "\tI\n")
        files[source.url(split)] = text.encode("utf-8")
    fetch, calls = _serve(files)
    empty = tmp_path / "empty"
    empty.mkdir()
    summary = get_corpus(name, tmp_path / "out", data_dir=empty, fetch=fetch, fmt="tsv")
    assert calls == [source.url(s) for s in SPLITS] and summary["warnings"] == []
    for split in SPLITS:
        digest = hashlib.sha256((tmp_path / "out" / f"{split}.tsv").read_bytes()).hexdigest()
        assert digest == source.sha256[split]


@needs_data
def test_cli_corpus_get_local(tmp_path, monkeypatch):
    monkeypatch.setenv(ENV_VAR, str(DATA))
    result = CliRunner().invoke(app, ["corpus", "get", "s800", str(tmp_path / "s800")])
    assert result.exit_code == 0, result.stderr
    assert "s800 from" in result.stderr and "train 5733" in result.stderr
    assert len(read_sentences(tmp_path / "s800" / "dev.spacy")) == 830


def test_cli_corpus_get_errors(tmp_path, monkeypatch):
    result = CliRunner().invoke(app, ["corpus", "get", "ontonotes", str(tmp_path)])
    assert result.exit_code == 1 and "unknown corpus 'ontonotes'" in result.stderr
    monkeypatch.setattr(corpora, "fetch_url", lambda url: b"not it")
    result = CliRunner().invoke(app, ["corpus", "get", "s800", str(tmp_path / "o"), "--data-dir", str(tmp_path)])
    assert result.exit_code == 1 and "checksum mismatch" in result.stderr
    assert len(result.stderr.strip().splitlines()) == 1
