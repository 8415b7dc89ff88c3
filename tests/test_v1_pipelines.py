"""Pipelines saved with `spacy_auc_ner.TokenScorer.v1` (the head that held every loss's
parameters) still load with `spacy.load` and predict what they predicted when saved
(tests/data/make_v1_pipelines.py made them)."""
import json
from pathlib import Path

import numpy
import pytest
import spacy

DATA = Path(__file__).parent / "data" / "v1_pipelines"
EXPECTED = json.loads((DATA / "expected.json").read_text())
NAMES = ["ova_auc", "crf", "two_task"]
SCHEMES = {"ova_auc": "ova", "crf": "crf", "two_task": "two_task"}


def predictions(nlp):
    return [
        {"ents": [[e.start, e.end, e.label_] for e in doc.ents], "scores": doc.spans["auc_ner"].attrs["scores"].tolist()}
        for doc in nlp.pipe(EXPECTED["texts"])
    ]


@pytest.mark.parametrize("name", NAMES)
def test_v1_pipeline_predicts_what_it_did_when_saved(name):
    nlp = spacy.load(DATA / name)
    assert nlp.config["components"]["auc_ner"]["model"]["@architectures"] == "spacy_auc_ner.TokenScorer.v1"
    got = predictions(nlp)
    assert any(p["ents"] for p in got)
    for g, e in zip(got, EXPECTED[name]):
        assert g["ents"] == e["ents"]
        numpy.testing.assert_allclose(g["scores"], e["scores"], rtol=1e-5)


@pytest.mark.parametrize("name", NAMES)
def test_v1_pipeline_trains_on_and_round_trips(tmp_path, name):
    import sys

    sys.path.insert(0, str(Path(__file__).parent))
    from toy_data import TOY, make_examples

    nlp = spacy.load(DATA / name)
    head = nlp.get_pipe("auc_ner").model.get_ref("output")
    if name == "two_task":
        # v1 kept a, b, alpha per output column (5 here); the loss scores the first two
        assert head.get_dim("nO") == 5 and head.get_param("dam_alpha").shape == (2,)
    optimizer = nlp.resume_training()
    examples = make_examples(nlp, TOY)
    for _ in range(2):
        assert numpy.isfinite(nlp.update(examples, sgd=optimizer)["auc_ner"])
    nlp.to_disk(tmp_path / "pipe")
    # the scheme stays written as its name (a string), with the component's settings of then
    block = spacy.load(tmp_path / "pipe").config["components"]["auc_ner"]
    assert (block["scheme"], block["two_task_lambda"], block["threshold"]) == (SCHEMES[name], 100.0, 0.5)
    texts = EXPECTED["texts"]
    assert [[(e.start, e.end, e.label_) for e in d.ents] for d in spacy.load(tmp_path / "pipe").pipe(texts)] == [
        [(e.start, e.end, e.label_) for e in d.ents] for d in nlp.pipe(texts)
    ]
