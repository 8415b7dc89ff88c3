"""Losses with settings other than their defaults train through the auc_ner component (every
registered loss with its defaults, on every scheme it declares, is tests/test_loss_contract.py),
a clear config error for a scheme a loss cannot train, and the compositional phase survives
saving the pipeline."""
import warnings

import numpy
import pytest
import spacy
from spacy.training import Example
from thinc.api import ConfigValidationError

from toy_data import TEXTS

SMALL_MODEL = {
    "@architectures": "spacy_auc_ner.TokenScorer.v2",
    "tok2vec": {
        "@architectures": "spacy.HashEmbedCNN.v2",
        "width": 16,
        "depth": 1,
        "embed_size": 300,
        "window_size": 1,
        "maxout_pieces": 2,
        "subword_features": True,
        "pretrained_vectors": None,
    },
}

# settings other than the defaults (the defaults are the contract's)
CASES = {
    "focal_softmax_gamma_half": ("softmax", {"@losses": "spacy_auc_ner.Focal.v1", "gamma": 0.5}),
    "dice_softmax_token": ("softmax", {"@losses": "spacy_auc_ner.Dice.v1", "level": "token", "alpha": 1.0}),
    "wce_log_ova": ("ova", {"@losses": "spacy_auc_ner.WeightedCE.v1", "form": "log", "beta": 2.0}),
    "mom_softmax_mean": ("softmax", {"@losses": "spacy_auc_ner.MoM.v1", "o_term": "mean"}),
    "auc_libauc_two_task": ("two_task", {"@losses": "spacy_auc_ner.AUCMargin.v1", "weighting": "libauc"}),
    "auc_libauc_ova_pesg": ("ova", {"@losses": "spacy_auc_ner.AUCMargin.v1", "weighting": "libauc", "alpha_update": "pesg"}),
    "mom_ova_bce_lam": ("ova", {"@losses": "spacy_auc_ner.MoM.v1", "lam": 0.5, "loss": {"@losses": "spacy_auc_ner.BinaryCE.v1"}}),
    "ns_weighted_ova": ("ova", {"@losses": "spacy_auc_ner.NegativeSampling.v1", "distribution": "weighted",
                                "loss": {"@losses": "spacy_auc_ner.BinaryCE.v1"}}),
    "comauc_ova": ("ova", {"@losses": "spacy_auc_ner.Compositional.v1", "k": 2}),
}


def make_nlp(scheme, loss):
    nlp = spacy.blank("en")
    nlp.add_pipe("auc_ner", config={"scheme": scheme, "loss": loss, "model": SMALL_MODEL})
    return nlp


def examples(nlp):
    return [Example.from_dict(nlp.make_doc(text), {"entities": ents}) for text, ents in TEXTS]


@pytest.mark.parametrize("case", sorted(CASES))
def test_trains_without_nan(case):
    scheme, loss = CASES[case]
    nlp = make_nlp(scheme, loss)
    egs = examples(nlp)
    optimizer = nlp.initialize(lambda: egs)
    seen = []
    for _ in range(6):
        losses = nlp.update(egs, sgd=optimizer)
        seen.append(losses["auc_ner"])
    assert numpy.isfinite(seen).all()
    head = nlp.get_pipe("auc_ner").model.get_ref("output")
    assert numpy.isfinite(head.get_param("W")).all()
    assert nlp.get_pipe("auc_ner").cfg["n_updates"] == 6
    nlp("Aspirin treats migraine .")


@pytest.mark.parametrize(
    "scheme, loss, message",
    [
        ("two_task", {"@losses": "spacy_auc_ner.MoM.v1", "loss": {"@losses": "spacy_auc_ner.BinaryCE.v1"}}, "MoM.v1 cannot train scheme 'two_task'"),
        ("two_task", {"@losses": "spacy_auc_ner.NegativeSampling.v1", "loss": {"@losses": "spacy_auc_ner.Focal.v1"}}, "cannot train scheme 'two_task'"),
        ("softmax", {"@losses": "spacy_auc_ner.Compositional.v1"}, "Compositional.v1 cannot train scheme 'softmax'"),
        ("two_task", {"@losses": "spacy_auc_ner.WeightedCE.v1"}, "WeightedCE.v1 cannot train scheme 'two_task'"),
        ("ova", {"@losses": "spacy_auc_ner.MoM.v1"}, "SoftmaxCE.v1 cannot train scheme 'ova'"),
    ],
)
def test_refused_schemes_name_the_config_key(scheme, loss, message):
    with pytest.raises(ValueError, match=r"^\[components.auc_ner.loss(\.loss)?\] ") as err:
        make_nlp(scheme, loss)
    assert message in str(err.value)


@pytest.mark.parametrize(
    "loss, key",
    [
        ({"@losses": "spacy_auc_ner.AUCMargin.v1", "weighting": "prior"}, "weighting"),
        ({"@losses": "spacy_auc_ner.MoM.v1", "o_term": "sentence"}, "o_term"),
        ({"@losses": "spacy_auc_ner.NegativeSampling.v1", "distribution": "topk"}, "distribution"),
    ],
)
def test_bad_setting_names_the_config_key(loss, key):
    with pytest.raises(ConfigValidationError) as err:
        make_nlp("ova", loss)
    assert f"auc_ner.loss -> {key}" in str(err.value)


AUC = "spacy_auc_ner.AUCMargin.v1"
CRF_AUC = "spacy_auc_ner.CRFWithAUC.v1"
PESG_AT_THE_BOUND = {"@losses": AUC, "alpha_update": "pesg", "alpha_lr": 0.999, "margin": 2**24}
# settings the losses compute with in float32 that overflowed it: training started and stopped as
# "[auc_ner] NaN or inf in the model's scores (it diverged); lower [training.optimizer.learn_rate]"
OVERFLOWING = [
    # finite in float32 (below 3.4e38), but the weighted gradient (or margin**2) is not
    ({"scheme": "crf", "loss": {"@losses": CRF_AUC, "mu": 1e38}}, "loss.mu", 1e38),
    ({"scheme": "crf", "loss": {"@losses": CRF_AUC, "auc": {"@losses": AUC, "mode": "batch", "margin": 1e38}}}, "loss.auc.margin", 1e38),
    ({"scheme": {"@misc": "spacy_auc_ner.TwoTask.v1", "lam": 1e38}}, "scheme.lam", 1e38),
    ({"scheme": "ova", "loss": {"@losses": AUC, "mode": "batch", "margin": 1e38}}, "loss.margin", 1e38),
    ({"scheme": "ova", "loss": {"@losses": AUC, "mode": "batch", "margin": 1e19}}, "loss.margin", 1e19),  # the loss was inf, then NaN
    ({"scheme": "softmax", "loss": {"@losses": "spacy_auc_ner.Dice.v1", "delta": 3e38}}, "loss.delta", 3e38),
    # inf in float32: inf * 0 = NaN
    ({"scheme": "softmax", "loss": {"@losses": "spacy_auc_ner.Focal.v1", "gamma": 1e39}}, "loss.gamma", 1e39),
    ({"scheme": "ova", "loss": {"@losses": "spacy_auc_ner.Dice.v1", "alpha": 1e39}}, "loss.alpha", 1e39),
]
# PESG's step size: from 1 on alpha never settles; at 1e38 it overflowed float32 (as above), at
# 4096 the squared norm of the gradient did (a weight and the margin at 2**24)
ALPHA_LR = "must be below 1 for alpha_update 'pesg' (PESG's step settles alpha at its optimum only below 1), not "
AT_THE_BOUNDS = {
    # the largest products the bounds allow: a weight times alpha**2, alpha up to 2 alpha_lr (margin + 1)
    "two_task_pesg": {"scheme": {"@misc": "spacy_auc_ner.TwoTask.v1", "lam": 2**24}, "loss": PESG_AT_THE_BOUND},
    "two_task_batch": {"scheme": {"@misc": "spacy_auc_ner.TwoTask.v1", "lam": 2**24}, "loss": {"@losses": AUC, "mode": "batch", "margin": 2**24}},
    "crf_auc_pesg": {"scheme": "crf", "loss": {"@losses": CRF_AUC, "mu": 2**24, "auc": PESG_AT_THE_BOUND}},
    "dice_delta": {"scheme": "softmax", "loss": {"@losses": "spacy_auc_ner.Dice.v1", "delta": 2**24}},
    "focal_gamma": {"scheme": "softmax", "loss": {"@losses": "spacy_auc_ner.Focal.v1", "gamma": 3.4e38}},
    "dice_alpha": {"scheme": "ova", "loss": {"@losses": "spacy_auc_ner.Dice.v1", "alpha": 3.4e38}},
}


@pytest.mark.parametrize("config, key, value", OVERFLOWING, ids=[f"{k}={v:g}" for _, k, v in OVERFLOWING])
def test_a_setting_that_overflows_float32_is_refused_naming_its_key(config, key, value):
    with pytest.raises(ValueError) as err:
        spacy.blank("en").add_pipe("auc_ner", name="ner", config=config)
    text = str(err.value)
    bound = "2**24 = 16777216, float32's precision" if value < 1e39 else "3.4028234663852886e+38, float32's largest number"
    assert text.startswith(f"[components.ner.{key}] must be at most {bound} ("), text
    assert text.endswith(f"), not {value}") and "\n" not in text, text


@pytest.mark.parametrize("alpha_lr", [1.0, 1.5, 4096.0, 1e38])
def test_a_pesg_step_from_1_on_is_refused_naming_its_key(alpha_lr):
    config = {"scheme": "two_task", "loss": dict(PESG_AT_THE_BOUND, alpha_lr=alpha_lr)}
    with pytest.raises(ValueError) as err:
        spacy.blank("en").add_pipe("auc_ner", name="ner", config=config)
    assert str(err.value) == f"[components.ner.loss.alpha_lr] {ALPHA_LR}{alpha_lr}"
    # ascent (the default) never reads alpha_lr: any finite step is its business alone
    ascent = {"scheme": "two_task", "loss": {"@losses": AUC, "alpha_update": "ascent", "alpha_lr": alpha_lr}}
    spacy.blank("en").add_pipe("auc_ner", name="ner", config=ascent)


@pytest.mark.parametrize("case", sorted(AT_THE_BOUNDS))
def test_at_the_bounds_training_stays_finite(case):
    nlp = spacy.blank("en")
    nlp.add_pipe("auc_ner", config={**AT_THE_BOUNDS[case], "model": SMALL_MODEL})
    egs = examples(nlp)
    optimizer = nlp.initialize(lambda: egs)
    with warnings.catch_warnings():
        warnings.simplefilter("error", RuntimeWarning)  # no overflow on the way (the gradient's norm)
        seen = [nlp.update(egs, sgd=optimizer)["auc_ner"] for _ in range(20)]
    assert numpy.isfinite(seen).all()
    nlp("Aspirin treats migraine .")


def test_compositional_phase_survives_to_disk(tmp_path):
    nlp = make_nlp("two_task", {"@losses": "spacy_auc_ner.Compositional.v1", "k": 2})
    egs = examples(nlp)
    optimizer = nlp.initialize(lambda: egs)
    for _ in range(3):
        nlp.update(egs, sgd=optimizer)
    nlp.to_disk(tmp_path / "pipe")
    loaded = spacy.load(tmp_path / "pipe")
    pipe = loaded.get_pipe("auc_ner")
    assert pipe.cfg["n_updates"] == 3
    assert pipe.loss.phase(pipe.cfg["n_updates"]) == "auc"  # steps 2, 3 are AUC steps with k = 2


def test_weighted_ce_weights_come_back_after_loading(tmp_path):
    nlp = make_nlp("softmax", {"@losses": "spacy_auc_ner.WeightedCE.v1"})
    egs = examples(nlp)
    nlp.initialize(lambda: egs)
    weights = nlp.get_pipe("auc_ner").loss.weights
    # 23 tokens: 16 O, 3 B-DISEASE, 1 I-DISEASE, 3 B-DRUG, 0 I-DRUG (counted as 1): s = 24
    numpy.testing.assert_allclose(weights, [24 / (5 * c) for c in (16, 3, 1, 3, 1)], rtol=1e-6)
    nlp.to_disk(tmp_path / "pipe")
    numpy.testing.assert_allclose(spacy.load(tmp_path / "pipe").get_pipe("auc_ner").loss.weights, weights)


LOSS_CONFIGS = ["two_task_comauc", "ova_comauc", "dice", "focal", "mom", "negative_sampling_uniform", "weighted_ce"]


@pytest.mark.parametrize("name", LOSS_CONFIGS)
def test_example_configs_load(name):
    from pathlib import Path

    from spacy.util import load_model_from_config

    from spacy_auc_ner.methods import method_config

    config = method_config(name, "cpu", Path(__file__).parents[1] / "configs").interpolate()
    nlp = load_model_from_config(config, auto_fill=True)
    pipe = nlp.get_pipe("auc_ner")
    assert pipe.loss.name.split(".")[1] in {"Compositional", "Dice", "Focal", "MoM", "NegativeSampling", "WeightedCE"}
