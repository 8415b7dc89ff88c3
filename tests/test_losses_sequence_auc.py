"""CRFWithAUC: the CRF likelihood plus mu times the AUC margin loss of the emissions read as
one-vs-all classifiers. Hand-computed values (every valid BIO path enumerated), finite
differences for the emissions and every learned parameter, mu = 0 is the CRF loss, schemes,
settings under their full config keys, the component trains, and the saved pipeline
round-trips."""
import itertools
import math
from pathlib import Path

import numpy
import pytest
import spacy
from spacy.util import registry
from thinc.api import Model

from _loss_checks import assert_finite, check_scheme, check_score_grad, numeric_grad, schemes_of
from spacy_auc_ner.losses import AUCMargin, BinaryCE, CRFLoss, CRFWithAUC, LossParam, SoftmaxCE, Truth
from toy_data import fit_toy

# labels of one type: O, B-X, I-X
O, B, I = range(3)
K = 3
CRF_KEYS = ("crf_trans", "crf_start", "crf_end")
AUC_KEYS = ("dam_a", "dam_b", "dam_alpha")
# two sentences of 3 and 2 tokens; the third token's gold is unknown
SCORES = numpy.asarray([[0.4, 1.2, -0.3], [-0.2, 0.1, 0.9], [0.8, -0.5, 0.3], [1.1, 0.2, -0.7], [-0.6, 1.4, 0.2]])
GOLD = [B, I, -1, O, B]
LENGTHS = [3, 2]


def params():
    return {
        "crf_trans": numpy.asarray([[0.2, -0.1, 0.3], [0.5, 0.1, -0.4], [0.0, 0.3, 0.6]]),
        "crf_start": numpy.asarray([0.1, -0.2, 0.4]),
        "crf_end": numpy.asarray([-0.3, 0.2, 0.1]),
        "dam_a": numpy.asarray([0.9, 0.8, 0.7]),
        "dam_b": numpy.asarray([0.1, 0.2, 0.3]),
        "dam_alpha": numpy.asarray([0.5, 0.2, 1.5]),
    }


def truth(gold=GOLD, lengths=LENGTHS, p=None, columns=None):
    """The crf scheme's Truth: one-hot BIO targets, exclusive classes (multilabel False)."""
    gold = numpy.asarray(gold, dtype="i")
    targets = (gold[:, None] == numpy.arange(K)[None, :]).astype("f8")
    columns = numpy.ones(K) if columns is None else numpy.asarray(columns, dtype="f8")
    return Truth(targets, (gold >= 0).astype("f8"), columns, numpy.asarray(lengths, "i"), False, p, 0)


def sig(x):
    return 1.0 / (1.0 + math.exp(-x))


def valid(path):
    """BIO of one type: I-X never first, never after O."""
    return path[0] != I and all(not (a == O and b == I) for a, b in zip(path, path[1:]))


def sentence_nll(E, gold, p):
    """-log p(gold | E) by enumerating every valid path; gold -1 = any label there."""
    def score(path):
        s = p["crf_start"][path[0]] + p["crf_end"][path[-1]] + sum(E[t][y] for t, y in enumerate(path))
        return s + sum(p["crf_trans"][a][b] for a, b in zip(path, path[1:]))

    paths = [q for q in itertools.product(range(K), repeat=len(E)) if valid(q)]
    agree = [q for q in paths if all(g < 0 or g == y for g, y in zip(gold, q))]
    log_z = math.log(sum(math.exp(score(q)) for q in paths))
    return log_z - math.log(sum(math.exp(score(q)) for q in agree))


def auc_by_hand(scores, gold, p, m=1.0):
    """sum_k of eq. 1c with class-wise means over the tokens with known gold."""
    total = 0.0
    for k in range(K):
        known = [(sig(s[k]), g) for s, g in zip(scores, gold) if g >= 0]
        pos = [h for h, g in known if g == k]
        neg = [h for h, g in known if g != k]
        a, b, alpha = p["dam_a"][k], p["dam_b"][k], p["dam_alpha"][k]
        term = sum((h - a) ** 2 for h in pos) / len(pos) + sum((h - b) ** 2 for h in neg) / len(neg)
        term += 2 * alpha * (m - sum(pos) / len(pos) + sum(neg) / len(neg)) - alpha**2
        total += term
    return total


def test_value_by_hand():
    p = params()
    s = SCORES.tolist()
    nll = (sentence_nll(s[:3], GOLD[:3], p) + sentence_nll(s[3:], GOLD[3:], p)) / 2  # mean over sentences
    auc = auc_by_hand(s, GOLD, p)
    for mu in (0.0, 0.1, 2.5):
        out = CRFWithAUC(CRFLoss(), AUCMargin(), mu=mu)(SCORES, truth(p=p))
        assert out.loss == pytest.approx(nll + mu * auc, rel=1e-10)
    assert CRFLoss()(SCORES, truth(p=p)).loss == pytest.approx(nll, rel=1e-10)


@pytest.mark.parametrize("mu", [0.0, 0.1, 1.7])
@pytest.mark.parametrize("alpha_update", ["ascent", "pesg"])
def test_gradients_finite_differences(mu, alpha_update):
    loss = CRFWithAUC(CRFLoss(), AUCMargin(alpha_update=alpha_update), mu=mu)
    p = params()
    out = check_score_grad(loss, SCORES, truth(p=p))
    assert_finite(out, SCORES.shape)
    for name in CRF_KEYS + ("dam_a", "dam_b"):
        fd = numeric_grad(lambda v, name=name: loss(SCORES, truth(p=dict(p, **{name: v}))).loss, p[name])
        numpy.testing.assert_allclose(out.d_params.get(name, 0.0 * fd), fd, rtol=1e-6, atol=1e-8, err_msg=name)
    # alpha is maximised: the loss hands the optimizer the negated ascent direction
    fd = numeric_grad(lambda v: loss(SCORES, truth(p=dict(p, dam_alpha=v))).loss, p["dam_alpha"])
    expected = -fd if alpha_update == "ascent" else 0.0 * fd  # PESG sets alpha in closed form
    numpy.testing.assert_allclose(out.d_params.get("dam_alpha", 0.0 * fd), expected, rtol=1e-6, atol=1e-8)
    assert numpy.abs(fd).sum() > 0 or mu == 0.0  # the check can fail


def test_mu_zero_is_the_crf_loss_exactly():
    p = params()
    crf = CRFLoss()(SCORES, truth(p=p))
    out = CRFWithAUC(CRFLoss(), AUCMargin(alpha_update="pesg"), mu=0.0)(SCORES, truth(p=p))
    assert out.loss == crf.loss
    assert numpy.array_equal(out.d_scores, crf.d_scores)
    assert set(out.d_params) == set(CRF_KEYS) and out.new_params is None  # alpha is not stepped either
    for name in CRF_KEYS:
        assert numpy.array_equal(out.d_params[name], crf.d_params[name])


def test_terms_add_up_with_their_parameter_gradients():
    p = params()
    mu = 0.3
    t = truth(p=p)
    out = CRFWithAUC(CRFLoss(), AUCMargin(), mu=mu)(SCORES, t)
    crf = CRFLoss()(SCORES, t)
    auc = AUCMargin()(SCORES, t)
    numpy.testing.assert_allclose(out.d_scores, crf.d_scores + mu * auc.d_scores, rtol=1e-12)
    for name in CRF_KEYS:
        numpy.testing.assert_allclose(out.d_params[name], crf.d_params[name], rtol=1e-12)
    for name in AUC_KEYS:
        numpy.testing.assert_allclose(out.d_params[name], mu * auc.d_params[name], rtol=1e-12)
    # the AUC term leaves the unknown token alone (the CRF sums over its labels)
    assert (auc.d_scores[2] == 0).all() and (auc.d_scores != 0).sum() == 4 * K
    # PESG: the closed-form alpha is the AUC loss's own (no other term sets it)
    pesg = AUCMargin(alpha_update="pesg")
    new = CRFWithAUC(CRFLoss(), pesg, mu=mu)(SCORES, t).new_params["dam_alpha"]
    numpy.testing.assert_allclose(new, pesg(SCORES, t).new_params["dam_alpha"])


def test_auc_term_may_be_any_ova_loss():
    # NLL + mu * BCE of the emissions: the control for "an auxiliary per-token loss"
    p = params()
    loss = CRFWithAUC(CRFLoss(), BinaryCE(), mu=0.5)
    out = check_score_grad(loss, SCORES, truth(p=p))
    known = [0, 1, 3, 4]
    Y = numpy.eye(K)[[GOLD[i] for i in known]]
    h = 1 / (1 + numpy.exp(-SCORES[known]))
    bce = -(Y * numpy.log(h) + (1 - Y) * numpy.log(1 - h)).sum() / len(known)  # summed over labels, mean over tokens
    assert out.loss == pytest.approx(CRFLoss()(SCORES, truth(p=p)).loss + 0.5 * bce, rel=1e-10)
    assert loss.param_names == CRF_KEYS
    assert CRFWithAUC(CRFLoss(), AUCMargin(mode="batch")).param_names == CRF_KEYS


def test_degenerate_batches_give_no_nan():
    rng = numpy.random.default_rng(0)
    p = {k: numpy.full((K, K) if k == "crf_trans" else K, 0.5) for k in CRF_KEYS + AUC_KEYS}
    loss = CRFWithAUC(CRFLoss(), AUCMargin(), mu=1.0)
    cases = [
        (numpy.zeros((0, K)), [], [0]),  # empty batch
        (rng.normal(size=(5, K)), [O] * 5, [2, 3]),  # no entities: one class per column
        (rng.normal(size=(3, K)), [-1, -1, -1], [3]),  # everything masked
        (rng.normal(size=(4, K)), [O, B, I, O], [3, 0, 1]),  # an empty doc among others
        (numpy.asarray([[60.0, -60.0, 0.0], [-60.0, 60.0, 0.0]]), [O, B], [2]),  # extreme scores
    ]
    for scores, gold, lengths in cases:
        out = loss(scores, truth(gold, lengths, p))
        assert_finite(out, scores.shape)


def test_declares_both_losses_parameters():
    loss = CRFWithAUC(CRFLoss(), AUCMargin())
    assert loss.params == CRFLoss().params + AUCMargin().params
    assert [p.shape(3) for p in loss.params] == [(3, 3), (3,), (3,), (3,), (3,), (3,)]
    assert LossParam("dam_a", 1, 1.0) in loss.params
    # the AUC term's update rule is kept: alpha projected onto alpha >= 0 after a step
    store = Model("store", lambda model, X, is_train: (X, None))
    for p in loss.params:
        store.set_param(p.name, numpy.full(p.shape(3), p.init, dtype="f"))
    store.set_param("dam_alpha", numpy.asarray([-0.5, 0.2, -0.1], dtype="f"))
    loss.finish_update(store)
    assert store.get_param("dam_alpha").tolist() == pytest.approx([0.0, 0.2, 0.0])


def test_schemes_and_settings_errors_name_the_key():
    assert schemes_of(CRFWithAUC(CRFLoss(), AUCMargin())) == {"crf"}
    assert schemes_of(CRFWithAUC(CRFLoss(), SoftmaxCE())) == set()
    check_scheme(CRFWithAUC(CRFLoss(), AUCMargin()), "crf", "components.ner.loss")
    with pytest.raises(ValueError, match=r"^\[components.ner.loss\] spacy_auc_ner.CRFWithAUC.v1 cannot train scheme 'ova': it needs crf columns, and \[scheme\] offers bio, o_column, one_class, sigmoid$"):
        check_scheme(CRFWithAUC(CRFLoss(), AUCMargin()), "ova", "components.ner.loss")
    # the AUC term reads the emissions as sigmoid classifiers: a softmax loss cannot
    with pytest.raises(ValueError, match=r"^\[components.ner.loss.auc\] spacy_auc_ner.SoftmaxCE.v1 cannot train scheme 'crf': it needs softmax columns"):
        check_scheme(CRFWithAUC(CRFLoss(), SoftmaxCE()), "crf", "components.ner.loss")
    with pytest.raises(ValueError, match=r"^\[components.ner.loss.crf\] spacy_auc_ner.AUCMargin.v1 cannot train scheme 'crf'"):
        check_scheme(CRFWithAUC(AUCMargin(), AUCMargin()), "crf", "components.ner.loss")
    for mu in (-0.1, float("nan"), float("inf")):
        with pytest.raises(ValueError, match=rf"^\[components.ner.loss.mu\] must be a finite number >= 0, not {mu}$"):
            CRFWithAUC(CRFLoss(), AUCMargin(), mu=mu).validate("components.ner.loss")
    with pytest.raises(ValueError, match=r"^\[components.ner.loss.auc.margin\] must be > 0"):
        CRFWithAUC(CRFLoss(), AUCMargin(margin=0.0)).validate("components.ner.loss")


def test_registered_with_defaults():
    loss = registry.resolve({"loss": {"@losses": "spacy_auc_ner.CRFWithAUC.v1"}})["loss"]
    assert isinstance(loss.crf, CRFLoss) and isinstance(loss.auc, AUCMargin) and loss.auc.mode == "learned"
    assert loss.mu == 0.1
    nested = registry.resolve({"loss": {
        "@losses": "spacy_auc_ner.CRFWithAUC.v1", "mu": 0.5,
        "auc": {"@losses": "spacy_auc_ner.AUCMargin.v1", "alpha_update": "pesg"},
    }})["loss"]
    assert nested.mu == 0.5 and nested.auc.alpha_update == "pesg"


# ---- in the component -----------------------------------------------------------------
CRF_AUC = {"@losses": "spacy_auc_ner.CRFWithAUC.v1"}
SMALL_TOK2VEC = {
    "@architectures": "spacy.HashEmbedCNN.v2", "width": 32, "depth": 1, "embed_size": 500,
    "window_size": 1, "maxout_pieces": 2, "subword_features": True, "pretrained_vectors": None,
}
BILSTM = {"@architectures": "spacy_auc_ner.BiLSTMTokenScorer.v2", "hidden_width": 16, "tok2vec": SMALL_TOK2VEC}


BAD = [
    ({"scheme": "crf", "loss": dict(CRF_AUC, mu=-1.0)}, "loss.mu", "must be a finite number >= 0, not -1.0"),
    ({"scheme": "crf", "loss": dict(CRF_AUC, auc={"@losses": "spacy_auc_ner.SoftmaxCE.v1"})}, "loss.auc", "SoftmaxCE.v1 cannot train scheme 'crf'"),
    ({"scheme": "crf", "loss": dict(CRF_AUC, auc={"@losses": "spacy_auc_ner.AUCMargin.v1", "margin": 0.0})}, "loss.auc.margin", "must be > 0"),
    ({"scheme": "ova", "loss": CRF_AUC}, "loss", "CRFWithAUC.v1 cannot train scheme 'ova'"),
    ({"scheme": "crf", "loss": dict(CRF_AUC, crf={"@losses": "spacy_auc_ner.SoftmaxCE.v1"})}, "loss.crf", "SoftmaxCE.v1 cannot train scheme 'crf'"),
]


@pytest.mark.parametrize("config, key, message", BAD, ids=[k for _, k, _ in BAD])
def test_bad_settings_are_refused_naming_the_full_config_key(config, key, message):
    with pytest.raises(ValueError) as err:
        spacy.blank("en").add_pipe("auc_ner", name="ner", config=config)
    text = str(err.value)
    assert text.startswith(f"[components.ner.{key}] ") and message in text and "\n" not in text, text


@pytest.mark.parametrize("model", [None, BILSTM], ids=["token_scorer", "bilstm"])
def test_component_learns_and_round_trips(tmp_path, model):
    config = {"scheme": "crf", "loss": dict(CRF_AUC, mu=0.5)}
    if model is not None:
        config["model"] = model
    nlp, examples, losses = fit_toy(config, n_iter=40 if model is None else 60)
    assert numpy.isfinite(losses[-1])
    assert nlp.evaluate(examples)["ents_f"] > 0.9
    ner = nlp.get_pipe("auc_ner")
    head = ner.model.get_ref("output")
    n_bio = len(ner.columns)
    shapes = {n: head.get_param(n).shape for n in head.param_names}
    assert shapes == {
        "W": shapes["W"], "b": (n_bio,), "crf_trans": (n_bio, n_bio), "crf_start": (n_bio,), "crf_end": (n_bio,),
        "dam_a": (n_bio,), "dam_b": (n_bio,), "dam_alpha": (n_bio,),
    }
    # both parameter sets trained from their initial values; alpha kept >= 0
    assert abs(head.get_param("crf_trans")).sum() > 0
    assert (head.get_param("dam_a") != 1).any() and (head.get_param("dam_alpha") >= 0).all()
    assert (head.get_param("dam_alpha") > 0).any()
    texts = ["Aspirin treats breast cancer in Paris .", "Mary met Anna in Rome .", ""]
    before = [([(e.start, e.end, e.label_) for e in d.ents], d.spans["auc_ner"].attrs["scores"].tolist()) for d in nlp.pipe(texts)]
    nlp.to_disk(tmp_path / "pipe")
    nlp2 = spacy.load(tmp_path / "pipe")
    after = [([(e.start, e.end, e.label_) for e in d.ents], d.spans["auc_ner"].attrs["scores"].tolist()) for d in nlp2.pipe(texts)]
    assert after == before
    head2 = nlp2.get_pipe("auc_ner").model.get_ref("output")
    for name in head.param_names:
        assert numpy.array_equal(head.get_param(name), head2.get_param(name)), name
    assert nlp2.config["components"]["auc_ner"]["loss"]["@losses"] == "spacy_auc_ner.CRFWithAUC.v1"
    assert nlp2.config["components"]["auc_ner"]["loss"]["mu"] == 0.5


def test_a_crf_pipeline_loaded_with_the_auc_term_is_a_clear_error(tmp_path):
    nlp, _, _ = fit_toy({"scheme": "crf"}, n_iter=1)
    nlp.to_disk(tmp_path / "pipe")
    with pytest.raises(ValueError, match=r"\[components.auc_ner.loss\] spacy_auc_ner.CRFWithAUC.v1 learns dam_a .* trained with another loss"):
        spacy.load(tmp_path / "pipe", config={"components": {"auc_ner": {"loss": CRF_AUC}}})


# ---- the method files -----------------------------------------------------------------
@pytest.mark.parametrize("encoder", ["cpu", "trf"])
@pytest.mark.parametrize("name", ["crf_auc", "bilstm_crf_auc"])
def test_methods_are_their_crf_method_with_the_auc_term(name, encoder):
    from spacy_auc_ner.methods import method_config

    configs = Path(__file__).resolve().parents[1] / "configs"
    cfg = method_config(name, encoder, configs)
    plain = method_config(name.replace("_auc", ""), encoder, configs)
    pipe, plain_pipe = cfg["components"]["auc_ner"], plain["components"]["auc_ner"]
    assert pipe["loss"] == {"@losses": "spacy_auc_ner.CRFWithAUC.v1"}  # mu: the loss's default
    assert {k: v for k, v in pipe.items() if k != "loss"} == {k: v for k, v in plain_pipe.items() if k != "loss"}
    loss = registry.resolve({"loss": pipe["loss"]})["loss"]
    assert loss.mu == 0.1 and isinstance(loss.auc, AUCMargin)


@pytest.mark.slow
def test_spacy_train_runs_crf_auc_and_round_trips(tmp_path, toy_corpus):
    from spacy.cli.train import train as spacy_train

    from spacy_auc_ner.methods import method_config

    config = tmp_path / "crf_auc.cfg"
    method_config("crf_auc", "cpu", Path(__file__).resolve().parents[1] / "configs").to_disk(config, interpolate=False)
    overrides = {
        "paths.train": str(toy_corpus / "train.spacy"), "paths.dev": str(toy_corpus / "dev.spacy"),
        "training.max_steps": 20, "training.eval_frequency": 10,
        "components.auc_ner.model.tok2vec.embed.width": 32, "components.auc_ner.model.tok2vec.encode.width": 32,
        "components.auc_ner.model.tok2vec.encode.depth": 1,
    }
    spacy_train(config, tmp_path / "model", overrides=overrides)
    nlp = spacy.load(tmp_path / "model" / "model-last")
    head = nlp.get_pipe("auc_ner").model.get_ref("output")
    assert {"crf_trans", "dam_a", "dam_b", "dam_alpha"} <= set(head.param_names)
    assert abs(head.get_param("crf_trans")).sum() > 0 and (head.get_param("dam_a") != 1).any()
    texts = ["Aspirin treats breast cancer in Paris .", "Mary met Anna in Rome ."]
    before = [[(e.start, e.end, e.label_) for e in d.ents] for d in nlp.pipe(texts)]
    nlp.to_disk(tmp_path / "copy")
    assert [[(e.start, e.end, e.label_) for e in d.ents] for d in spacy.load(tmp_path / "copy").pipe(texts)] == before
