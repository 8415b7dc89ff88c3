"""The AUC schemes on the BiLSTM encoder: BiLSTMTokenScorer.v2 with the ova and two_task
schemes, their AUC losses and every update strategy, learns the toy corpus, holds the loss's
parameters on its head, and round-trips through to_disk / from_bytes; the bilstm_* AUC
method files assemble onto both bases."""
from pathlib import Path

import numpy
import pytest
import spacy

from spacy_auc_ner.methods import method_config
from toy_data import fit_toy

CONFIGS = Path(__file__).resolve().parents[1] / "configs"
AUC = {"@losses": "spacy_auc_ner.AUCMargin.v1"}
COMAUC = {"@losses": "spacy_auc_ner.Compositional.v1"}
BILSTM = {
    "@architectures": "spacy_auc_ner.BiLSTMTokenScorer.v2",
    "hidden_width": 16,
    "tok2vec": {
        "@architectures": "spacy.HashEmbedCNN.v2", "width": 32, "depth": 1, "embed_size": 500,
        "window_size": 1, "maxout_pieces": 2, "subword_features": True, "pretrained_vectors": None,
    },
}
CASES = {
    "ova_all": {"scheme": "ova", "loss": AUC},
    "ova_grouped": {"scheme": "ova", "loss": AUC, "strategy": {"@misc": "spacy_auc_ner.GroupedByPrefix.v1"}},
    "ova_sampled": {"scheme": "ova", "loss": AUC, "strategy": {"@misc": "spacy_auc_ner.SampledClassifiers.v1", "m": 2}},
    "ova_pesg": {"scheme": "ova", "loss": dict(AUC, alpha_update="pesg")},
    "ova_batch": {"scheme": "ova", "loss": dict(AUC, mode="batch")},
    "ova_comauc": {"scheme": "ova", "loss": COMAUC},
    # lambda 1: with the default 100 the beginning task's gradient swamps the shared BiLSTM
    # and the entity task learns slowly here (on the toy corpus, 0.62-0.88 F1 after 50-300
    # updates; lambda 1: 1.0 after 50); these tests check the plumbing
    "two_task": {"scheme": {"@misc": "spacy_auc_ner.TwoTask.v1", "lam": 1.0}, "loss": AUC},
    "two_task_comauc": {"scheme": {"@misc": "spacy_auc_ner.TwoTask.v1", "lam": 1.0}, "loss": COMAUC},
}
TEXTS = ["Aspirin treats breast cancer in Paris .", "", "Mary met Anna in Rome .", "Colon cancer is rare"]


def annotations(nlp):
    return [
        ([(e.start, e.end, e.label_) for e in d.ents], d.spans["auc_ner"].attrs["scores"].tolist())
        for d in nlp.pipe(TEXTS)
    ]


@pytest.mark.parametrize("case", sorted(CASES))
def test_bilstm_trains_the_auc_schemes_and_round_trips(tmp_path, case):
    config = CASES[case]
    nlp, examples, losses = fit_toy(dict(config, model=BILSTM), n_iter=100)
    assert numpy.isfinite(losses[-1])
    assert nlp.evaluate(examples)["ents_f"] > 0.9, case
    ner = nlp.get_pipe("auc_ner")
    head = ner.model.get_ref("output")
    n_loss = ner.scheme.loss_columns(ner.label_set)  # 7 BIO labels for ova, 2 tasks for two_task
    expected = set() if config["loss"].get("mode") == "batch" else {"dam_a", "dam_b", "dam_alpha"}
    assert set(head.param_names) == {"W", "b"} | expected
    for name in expected:
        assert head.get_param(name).shape == (n_loss,)
    if expected:
        assert (head.get_param("dam_alpha") >= 0).all()
    before = annotations(nlp)
    nlp.to_disk(tmp_path / "pipe")
    nlp2 = spacy.load(tmp_path / "pipe")
    assert annotations(nlp2) == before
    head2 = nlp2.get_pipe("auc_ner").model.get_ref("output")
    for name in head.param_names:
        assert numpy.array_equal(head.get_param(name), head2.get_param(name)), name
    lstm, lstm2 = ner.model.get_ref("lstm"), nlp2.get_pipe("auc_ner").model.get_ref("lstm")
    for node, node2 in zip(lstm.walk(), lstm2.walk()):
        for name in node.param_names:
            assert numpy.array_equal(node.get_param(name), node2.get_param(name))
    assert nlp2.get_pipe("auc_ner").cfg["n_updates"] == ner.cfg["n_updates"]
    settings = {k: v for k, v in nlp.config["components"]["auc_ner"].items() if k != "factory"}
    copy = spacy.blank("en")
    copy.add_pipe("auc_ner", config=settings).from_bytes(ner.to_bytes())
    assert annotations(copy) == before


@pytest.mark.parametrize("encoder", ["cpu", "trf"])
@pytest.mark.parametrize("name, scheme, strategy", [
    ("bilstm_ova_auc", "ova", "spacy_auc_ner.GroupedByPrefix.v1"),
    ("bilstm_two_task_auc", "two_task", None),
])
def test_bilstm_auc_methods_keep_the_base_encoder(name, scheme, strategy, encoder):
    cfg = method_config(name, encoder, CONFIGS)
    pipe = cfg["components"]["auc_ner"]
    assert pipe["model"]["@architectures"] == "spacy_auc_ner.BiLSTMTokenScorer.v2"
    assert pipe.get("scheme", "ova") == scheme and pipe["loss"]["@losses"] == AUC["@losses"]
    assert pipe.get("strategy", {}).get("@misc") == strategy
    # the same method without the BiLSTM: only the architecture differs
    plain = method_config(name.replace("bilstm_", ""), encoder, CONFIGS)["components"]["auc_ner"]
    assert {k: v for k, v in pipe.items() if k != "model"} == {k: v for k, v in plain.items() if k != "model"}
    assert pipe["model"]["tok2vec"] == plain["model"]["tok2vec"]
