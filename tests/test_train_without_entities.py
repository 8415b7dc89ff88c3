"""`spacy train` on data without entities trains the way spaCy's `ner` does (issue 13.1): labels
from [initialize.components.auc_ner] labels (a list, or the file `spacy init labels` writes)
or the data; with none at all, a warning and a pipeline that predicts nothing."""
import subprocess
import sys
import warnings
from pathlib import Path

import pytest
import spacy
from spacy.cli.train import train
from spacy.tokens import DocBin
from spacy.util import load_config

CONFIGS = Path(__file__).parents[1] / "configs"
TEXTS = ["Alice lives in Paris .", "Nothing happened here .", "Bob flew to Rome today ."]
ENTITIES = [[(0, 5, "PER"), (15, 20, "LOC")], [], [(0, 3, "PER"), (12, 16, "LOC")]]
# a few steps on a tiny encoder: this checks that training runs, not what it learns
SMALL = {
    "training.max_steps": 4,
    "training.eval_frequency": 2,
    "components.auc_ner.model.tok2vec.embed.width": 16,
    "components.auc_ner.model.tok2vec.encode.width": 16,
    "components.auc_ner.model.tok2vec.encode.depth": 1,
}


def write_corpus(path: Path, with_entities: bool) -> Path:
    nlp = spacy.blank("en")
    db = DocBin()
    for text, ents in zip(TEXTS, ENTITIES):
        doc = nlp.make_doc(text)
        doc.ents = [doc.char_span(s, e, label=lab) for s, e, lab in ents] if with_entities else []
        db.add(doc)
    db.to_disk(path)
    return path


def config_with_labels_block(name: str, tmp_path: Path, labels) -> Path:
    """The shipped config with [initialize.components.auc_ner] labels set."""
    cfg = load_config(CONFIGS / name, interpolate=False)
    cfg["initialize"]["components"]["auc_ner"] = {"labels": labels}
    path = tmp_path / name
    cfg.to_disk(path)
    return path


@pytest.mark.slow
@pytest.mark.parametrize("config", ["ova_auc.cfg", "two_task_auc.cfg", "softmax.cfg", "crf.cfg"])
def test_spacy_train_without_any_entity_warns_and_predicts_nothing(tmp_path, config):
    corpus = write_corpus(tmp_path / "empty.spacy", with_entities=False)
    overrides = {"paths.train": str(corpus), "paths.dev": str(corpus), **SMALL}
    with pytest.warns(UserWarning, match=r"\[auc_ner\] no entity labels"):
        train(CONFIGS / config, tmp_path / "out", overrides=overrides)
    nlp = spacy.load(tmp_path / "out" / "model-last")
    assert nlp.get_pipe("auc_ner").labels == ()
    assert [d.ents for d in nlp.pipe(["Alice lives in Paris ."])] == [()]


@pytest.mark.slow
def test_labels_from_spacy_init_labels_train_on_data_without_entities(tmp_path):
    with_ents = write_corpus(tmp_path / "train.spacy", with_entities=True)
    empty = write_corpus(tmp_path / "empty.spacy", with_entities=False)
    config = config_with_labels_block("ova_auc.cfg", tmp_path, None)
    # `spacy init labels` on annotated data writes auc_ner.json ...
    subprocess.run(
        [sys.executable, "-m", "spacy", "init", "labels", str(config), str(tmp_path / "labels"),
         "--paths.train", str(with_ents), "--paths.dev", str(with_ents)],
        check=True, capture_output=True,
    )
    labels_file = tmp_path / "labels" / "auc_ner.json"
    assert labels_file.read_text().strip().replace(" ", "").replace("\n", "") == '["LOC","PER"]'
    # ... which [initialize.components.auc_ner] labels reads when the data has no entities
    config = config_with_labels_block("ova_auc.cfg", tmp_path, {"@readers": "spacy.read_labels.v1", "path": str(labels_file)})
    overrides = {"paths.train": str(empty), "paths.dev": str(empty), **SMALL}
    with warnings.catch_warnings():
        warnings.filterwarnings("error", message=r".*no entity labels")
        train(config, tmp_path / "out", overrides=overrides)
    nlp = spacy.load(tmp_path / "out" / "model-last")
    assert nlp.get_pipe("auc_ner").labels == ("LOC", "PER")
    assert nlp.get_pipe("auc_ner").columns == ["O", "B-LOC", "I-LOC", "B-PER", "I-PER"]
