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

from spacy_auc_ner.methods import method_config

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


def config_of(method: str, tmp_path: Path, labels=None) -> Path:
    """The full CPU config of `method` (what `spacy-auc-ner config` writes), with
    [initialize.components.auc_ner] labels set."""
    cfg = method_config(method, "cpu", CONFIGS)
    cfg["initialize"]["components"]["auc_ner"] = {"labels": labels}
    path = tmp_path / f"{method}.cfg"
    cfg.to_disk(path, interpolate=False)
    return path


@pytest.mark.slow
@pytest.mark.parametrize("method", ["ova_auc", "two_task_auc", "ce", "crf"])  # ova, two_task, softmax, crf
def test_spacy_train_without_any_entity_warns_and_predicts_nothing(tmp_path, method):
    corpus = write_corpus(tmp_path / "empty.spacy", with_entities=False)
    overrides = {"paths.train": str(corpus), "paths.dev": str(corpus), **SMALL}
    with pytest.warns(UserWarning, match=r"\[auc_ner\] no entity labels"):
        train(config_of(method, tmp_path), tmp_path / "out", overrides=overrides)
    nlp = spacy.load(tmp_path / "out" / "model-last")
    assert nlp.get_pipe("auc_ner").labels == ()
    assert [d.ents for d in nlp.pipe(["Alice lives in Paris ."])] == [()]


@pytest.mark.slow
def test_labels_from_spacy_init_labels_train_on_data_without_entities(tmp_path):
    with_ents = write_corpus(tmp_path / "train.spacy", with_entities=True)
    empty = write_corpus(tmp_path / "empty.spacy", with_entities=False)
    config = config_of("ova_auc_all", tmp_path)
    # `spacy init labels` on annotated data writes auc_ner.json ...
    subprocess.run(
        [sys.executable, "-m", "spacy", "init", "labels", str(config), str(tmp_path / "labels"),
         "--paths.train", str(with_ents), "--paths.dev", str(with_ents)],
        check=True, capture_output=True,
    )
    labels_file = tmp_path / "labels" / "auc_ner.json"
    assert labels_file.read_text().strip().replace(" ", "").replace("\n", "") == '["LOC","PER"]'
    # ... which [initialize.components.auc_ner] labels reads when the data has no entities
    config = config_of("ova_auc_all", tmp_path, {"@readers": "spacy.read_labels.v1", "path": str(labels_file)})
    overrides = {"paths.train": str(empty), "paths.dev": str(empty), **SMALL}
    with warnings.catch_warnings():
        warnings.filterwarnings("error", message=r".*no entity labels")
        train(config, tmp_path / "out", overrides=overrides)
    nlp = spacy.load(tmp_path / "out" / "model-last")
    assert nlp.get_pipe("auc_ner").labels == ("LOC", "PER")
    assert nlp.get_pipe("auc_ner").columns == ["O", "B-LOC", "I-LOC", "B-PER", "I-PER"]
