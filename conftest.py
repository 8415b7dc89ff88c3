import os
from pathlib import Path

import pytest
import spacy
from spacy.tokens import Doc, DocBin
from toy_data import TOY, make_examples

SHARED_DATA = Path(os.environ.get("SPACY_AUC_NER_DATA", Path(__file__).resolve().parents[1] / ".." / "shared" / "data"))

@pytest.fixture
def nlp():
    return spacy.blank("en")


@pytest.fixture
def toy_examples(nlp):
    return make_examples(nlp)


@pytest.fixture
def toy_corpus(tmp_path):
    """train/dev .spacy files of the toy corpus."""
    vocab = spacy.blank("en").vocab
    docs = [Doc(vocab, words=w, ents=t) for w, t in TOY]
    for name in ("train", "dev"):
        DocBin(docs=docs).to_disk(tmp_path / f"{name}.spacy")
    return tmp_path


def shared_corpus(name: str) -> Path:
    path = SHARED_DATA / name
    if not (path / "train.tsv").exists():
        pytest.skip(f"corpus {name} not found under {SHARED_DATA} (set SPACY_AUC_NER_DATA to a folder with <corpus>/train.tsv)")
    return path



@pytest.fixture(scope="module")
def full_configs(tmp_path_factory):
    """The full training configs of some CPU methods, as `spacy-auc-ner config NAME` writes them
    (for tests that hand a config file to a command)."""
    from spacy_auc_ner.study.methods import method_config

    configs = Path(__file__).resolve().parents[1] / "configs"
    folder = tmp_path_factory.mktemp("configs")
    paths = {}
    for name in ("spacy_ner", "ova_auc_all", "bilstm_crf"):
        paths[name] = folder / f"{name}.cfg"
        method_config(name, "cpu", configs).to_disk(paths[name])
    return paths
