"""One tiny real cell end to end: a spec, the default runner, spaCy training, seqeval scores."""
from pathlib import Path

import pytest
from spacy.training import Corpus
from spacy.util import registry

from auc_ner_lab.runner import run_cell, run_study
from auc_ner_lab.spec import parse_spec

ROOT = Path(__file__).parents[1]
from lab_helpers import rows as read_results
from study_toy_corpus import write_toy_corpus

LOW_RESOURCE = "spacy_auc_ner.LowResource.v1"


def _ensure_low_resource_reader():
    """Until the readers land, a stand-in with the same name and parameters (first n docs
    after a seeded shuffle); once they exist, the real one is used."""
    try:
        registry.readers.get(LOW_RESOURCE)
        return
    except Exception:
        pass
    import random

    def low_resource(path, n, seed):
        def read(nlp):
            examples = list(Corpus(path)(nlp))
            random.Random(seed).shuffle(examples)
            return iter(examples[:n])

        return read

    registry.readers.register(LOW_RESOURCE, func=low_resource)


@pytest.mark.slow
def test_tiny_real_cell_end_to_end(tmp_path):
    _ensure_low_resource_reader()
    corpora = write_toy_corpus(tmp_path / "corpus")
    spec = parse_spec(
        {"name": "tiny", "corpora": ["toy"], "methods": ["ce"], "sizes": [5], "partitions": 1,
         "overrides": {"training.max_steps": 10, "training.eval_frequency": 5}},
        corpora_dir=corpora, configs_dir=ROOT / "configs",
    )
    spec.check_files()
    (cell,) = spec.cells()
    out = tmp_path / "r"
    outcome = run_study([cell], out, workers=0, progress=False, log=lambda m: None)
    (row,) = read_results(out)
    assert outcome.ok == 1, row.get("traceback")
    scores = row["scores"]
    for key in ("ents_f", "ents_p", "ents_r", "ents_untyped_f", "ents_seqeval_micro_f", "ents_seqeval_macro_f", "train_seconds"):
        assert isinstance(scores[key], float), key
    assert 0.0 <= scores["ents_seqeval_micro_f"] <= 1.0
    assert scores["ents_untyped_f"] >= scores["ents_f"]
    assert set(scores["ents_per_type"]) <= {"Disease", "LOC", "PER"}
    assert scores["test_words"] == sum(len(t.split()) for t, _ in __import__("study_toy_corpus").SENTENCES)
    assert row["config"] == "ce.cfg" and row["encoder"] == "cpu" and row["overrides"]["corpora.train"]["n"] == 5
    assert callable(run_cell)
