from pathlib import Path

import pytest
import spacy
from spacy.tokens import Doc, DocBin

from shared_data import shared_corpus  # noqa: F401 (tests import it from here)
from toy_data import TOY, make_examples


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






@pytest.fixture(scope="module")
def full_configs(tmp_path_factory):
    """The full training configs of some CPU methods, as `spacy-auc-ner config NAME` writes them
    (for tests that hand a config file to a command)."""
    from spacy_auc_ner.methods import method_config

    configs = Path(__file__).resolve().parent / "configs"
    folder = tmp_path_factory.mktemp("configs")
    paths = {}
    for name in ("spacy_ner", "ova_auc_all", "bilstm_crf"):
        paths[name] = folder / f"{name}.cfg"
        method_config(name, "cpu", configs).to_disk(paths[name])
    return paths
