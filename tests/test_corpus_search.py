"""Where a corpus is looked for (`spacy_auc_ner.data.corpora`, for the root project's corpus
step and the lab's `corpus get` alike): README's folders in README's order, and no ancestor of
the working folder; and the reference copies' checksums."""
from pathlib import Path

import pytest

from shared_data import shared_corpus
from spacy_auc_ner.data import corpora
from spacy_auc_ner.data.columns import Sentence, read_columns
from spacy_auc_ner.data.corpora import CORPORA, ENV_VAR, SPLITS, data_dirs, locate_corpus


def _copy(root: Path, name: str = "ncbi_disease") -> Path:
    (root / name).mkdir(parents=True)
    for split in SPLITS:
        (root / name / f"{split}.tsv").write_text("Aspirin\tB-Disease\n\n")
    return root / name


@pytest.fixture(autouse=True)
def no_checkout_data(monkeypatch):
    """The search as for an installed package: a shared/data beside this checkout is not read."""
    monkeypatch.setattr(corpora, "CHECKOUT_DATA", None)


def test_the_folders_are_readmes_in_its_order(tmp_path, monkeypatch):
    work = tmp_path / "project"
    monkeypatch.setenv(ENV_VAR, str(tmp_path / "env"))
    assert data_dirs("assets", cwd=work) == [work / "assets", tmp_path / "env", work / "data", tmp_path / "shared" / "data"]
    monkeypatch.delenv(ENV_VAR)
    assert data_dirs(tmp_path / "mine", cwd=work)[0] == tmp_path / "mine" and len(data_dirs(cwd=work)) == 3


def test_a_shared_data_in_an_ancestor_of_the_working_folder_is_not_used(tmp_path, monkeypatch):
    """Only ../shared/data: a shared/ folder higher up (in the temp folder's parents, say) or in
    the working folder itself changes nothing."""
    monkeypatch.delenv(ENV_VAR, raising=False)
    work = tmp_path / "a" / "b" / "project"
    work.mkdir(parents=True)
    for above in (tmp_path, tmp_path / "a", work):
        _copy(above / "shared" / "data")
    monkeypatch.chdir(work)
    assert locate_corpus("ncbi_disease") is None
    readme = _copy(tmp_path / "a" / "b" / "shared" / "data")  # ../shared/data
    assert locate_corpus("ncbi_disease") == readme


def test_a_copy_that_is_not_the_reference_is_named_per_split():
    toy = [Sentence(("Aspirin",), ("B-Disease",))]
    found = CORPORA["ncbi_disease"].differences({split: toy for split in SPLITS})
    assert [d.split(":")[0] for d in found] == [f"ncbi_disease/{split}" for split in SPLITS]
    assert all("content differs from the reference copy (sha256 " in d for d in found)


@pytest.mark.parametrize("name", sorted(CORPORA))
def test_a_reference_copy_matches_its_checksums(name):
    folder = shared_corpus(name)
    source = CORPORA[name]
    splits = {split: read_columns(folder / f"{split}.tsv", scheme="bio", untyped_type=source.untyped_type) for split in SPLITS}
    assert source.differences(splits) == []


def test_a_source_checkout_also_reads_the_shared_data_beside_it(tmp_path, monkeypatch):
    """From a project two levels below the checkout (the lab's projects/lab), ../shared/data is
    not beside the checkout: the checkout's own sibling is searched last."""
    monkeypatch.delenv(ENV_VAR, raising=False)
    beside = _copy(tmp_path / "shared" / "data")
    monkeypatch.setattr(corpora, "CHECKOUT_DATA", tmp_path / "shared" / "data")
    lab = tmp_path / "checkout" / "projects" / "lab"
    lab.mkdir(parents=True)
    assert data_dirs(cwd=lab)[-1] == tmp_path / "shared" / "data"
    monkeypatch.chdir(lab)
    assert locate_corpus("ncbi_disease") == beside
    assert corpora._checkout_data() == Path(corpora.__file__).resolve().parents[3] / "shared" / "data"  # this checkout's
    monkeypatch.setenv(ENV_VAR, "")  # a given $SPACY_AUC_NER_DATA, even empty, replaces it
    assert locate_corpus("ncbi_disease") is None
