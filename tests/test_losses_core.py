"""The AUC margin loss and the cross-entropy baselines: hand-computed values, finite
differences, the PESG step, LibAUC's p-weighted form, degenerate batches."""
import math

import numpy
import pytest

from _loss_checks import assert_finite, check_score_grad, degenerate_cases, make_truth, numeric_grad
from spacy_auc_ner.losses import AUCMargin, BinaryCE, SoftmaxCE


def sig(x):
    return 1.0 / (1.0 + math.exp(-x))


SCORES = numpy.asarray([[0.5, -1.0, 0.2], [-0.3, 1.5, -2.0], [1.0, 0.0, 0.7], [-1.2, -0.4, 0.9]])
GOLD = [0, 1, 0, 2]


def params(a=(0.9, 0.8, 0.7), b=(0.1, 0.2, 0.3), alpha=(0.5, 0.0, 1.5)):
    return {k: numpy.asarray(v, dtype="f8") for k, v in (("dam_a", a), ("dam_b", b), ("dam_alpha", alpha))}


def auc_by_hand(scores, gold, a, b, alpha, m=1.0, columns=(1, 1, 1)):
    total = 0.0
    for k in range(len(a)):
        h = [sig(s[k]) for s in scores]
        pos = [hi for hi, g in zip(h, gold) if g == k]
        neg = [hi for hi, g in zip(h, gold) if g != k]
        term = 0.0
        if pos:
            term += sum((x - a[k]) ** 2 for x in pos) / len(pos)
        if neg:
            term += sum((x - b[k]) ** 2 for x in neg) / len(neg)
        if pos and neg:
            gap = m - sum(pos) / len(pos) + sum(neg) / len(neg)
            term += 2 * alpha[k] * gap - alpha[k] ** 2
        total += columns[k] * term
    return total


def test_auc_learned_value_by_hand():
    p = params()
    truth = make_truth(GOLD, 3, params=p, columns=[1.0, 0.5, 2.0])
    out = AUCMargin(margin=1.0)(SCORES, truth)
    expected = auc_by_hand(SCORES.tolist(), GOLD, p["dam_a"], p["dam_b"], p["dam_alpha"], columns=(1.0, 0.5, 2.0))
    assert out.loss == pytest.approx(expected, rel=1e-10)


def test_auc_batch_value_by_hand():
    truth = make_truth(GOLD, 3)
    out = AUCMargin(margin=0.8, mode="batch")(SCORES, truth)
    expected = 0.0
    for k in range(3):
        h = [sig(s[k]) for s in SCORES]
        pos = [x for x, g in zip(h, GOLD) if g == k]
        neg = [x for x, g in zip(h, GOLD) if g != k]
        mp, mn = sum(pos) / len(pos), sum(neg) / len(neg)
        alpha = max(0.0, 0.8 - mp + mn)
        expected += (
            sum((x - mp) ** 2 for x in pos) / len(pos)
            + sum((x - mn) ** 2 for x in neg) / len(neg)
            + 2 * alpha * (0.8 - mp + mn)
            - alpha**2
        )
    assert out.loss == pytest.approx(expected, rel=1e-10)


@pytest.mark.parametrize("mode", ["learned", "batch"])
def test_auc_no_positives_keeps_variance_only(mode):
    # column 2 has no positive: only its negatives' variance term counts, alpha gets nothing
    gold = [0, 1, 0, 1]
    p = params()
    truth = make_truth(gold, 3, params=p if mode == "learned" else None)
    out = AUCMargin(mode=mode)(SCORES, truth)
    h2 = [sig(s[2]) for s in SCORES]
    b2 = p["dam_b"][2] if mode == "learned" else sum(h2) / 4
    column2 = sum((x - b2) ** 2 for x in h2) / 4
    others = AUCMargin(mode=mode)(SCORES, make_truth(gold, 3, params=truth.params, columns=[1, 1, 0])).loss
    assert out.loss == pytest.approx(others + column2, rel=1e-10)
    if mode == "learned":
        assert out.d_params["dam_alpha"][2] == 0.0
        assert out.d_params["dam_a"][2] == 0.0


@pytest.mark.parametrize("mode", ["learned", "batch"])
def test_auc_score_gradient_finite_differences(mode):
    # batch mode: a, b and alpha sit at their optima, so the envelope theorem makes the
    # fixed-parameter gradient the total one
    truth = make_truth(GOLD, 3, mask=[1, 1, 0.5, 1], columns=[1.0, 0.5, 2.0], params=params() if mode == "learned" else None)
    check_score_grad(AUCMargin(mode=mode, margin=0.7), SCORES, truth, rtol=1e-5)


def test_auc_parameter_gradients_finite_differences():
    p = params()
    truth = make_truth(GOLD, 3, columns=[1.0, 0.5, 2.0], params=p)
    loss = AUCMargin()
    out = loss(SCORES, truth)
    for name in ("dam_a", "dam_b", "dam_alpha"):
        def f(value, name=name):
            q = dict(p, **{name: value})
            return loss(SCORES, make_truth(GOLD, 3, columns=[1.0, 0.5, 2.0], params=q)).loss
        fd = numeric_grad(f, p[name])
        # alpha is maximised: its entry is the negated ascent direction
        expected = -fd if name == "dam_alpha" else fd
        numpy.testing.assert_allclose(out.d_params[name], expected, rtol=1e-6, atol=1e-9)


def test_auc_pesg_closed_form_step():
    p = params()
    truth = make_truth(GOLD, 3, columns=[1.0, 0.0, 1.0], params=p)
    out = AUCMargin(margin=1.0, alpha_update="pesg", alpha_lr=0.1)(SCORES, truth)
    a, b, alpha = p["dam_a"], p["dam_b"], p["dam_alpha"]
    expected = [max(0.0, alpha[k] + 0.1 * (2 * (1.0 + b[k] - a[k]) - 2 * alpha[k])) for k in range(3)]
    expected[1] = alpha[1]  # column weight 0: untouched
    numpy.testing.assert_allclose(out.new_params["dam_alpha"], expected, rtol=1e-12)
    assert not out.d_params["dam_alpha"].any()


def test_auc_learned_without_params_is_a_clear_error():
    with pytest.raises(ValueError, match="mode='batch'"):
        AUCMargin()(SCORES, make_truth(GOLD, 3))


# ---- weighting = "libauc" (LibAUC's AUCMLoss v1: p-weighted terms) ---------------------
def libauc_v1_by_hand(scores, gold, a, b, alpha, m=1.0, columns=(1, 1, 1), mask=None):
    """LibAUC's AUCMLoss (version 'v1', auto p) per column as its code writes it: torch.mean
    over all (here: mask-weighted) tokens, p the positive share of the batch."""
    w = [1.0] * len(gold) if mask is None else list(mask)
    n = sum(w)
    total = 0.0
    for k in range(len(a)):
        h = [sig(s[k]) for s in scores]
        y = [1.0 if g == k else 0.0 for g in gold]
        p = sum(wi * yi for wi, yi in zip(w, y)) / n

        def mean(values):
            return sum(wi * v for wi, v in zip(w, values)) / n

        F = (
            (1 - p) * mean([(x - a[k]) ** 2 * yi for x, yi in zip(h, y)])
            + p * mean([(x - b[k]) ** 2 * (1 - yi) for x, yi in zip(h, y)])
            + 2 * alpha[k] * (p * (1 - p) * m + mean([p * x * (1 - yi) - (1 - p) * x * yi for x, yi in zip(h, y)]))
            - p * (1 - p) * alpha[k] ** 2
        )
        total += columns[k] * F
    return total


def test_auc_libauc_value_by_hand():
    # one column, h = .8 (positive), .4, .2; a = .7, b = .3, alpha = .5, m = 1; p = 1/3:
    # ours: .01 + .01 + 2 (.5)(1 - .8 + .3) - .25 = .27; LibAUC: (2/3)(.01/3) + (1/3)(.02/3)
    #   + 2 (.5)(2/9 + ((1/3)(.6) - (2/3)(.8)) / 3) - (2/9)(.25) = .06 = (2/9) .27
    h = numpy.asarray([[0.8], [0.4], [0.2]])
    scores = numpy.log(h / (1 - h))
    p = {"dam_a": numpy.asarray([0.7]), "dam_b": numpy.asarray([0.3]), "dam_alpha": numpy.asarray([0.5])}
    truth = make_truth([0, 1, 1], 1, params=p)  # gold 1: not the column's class, a negative
    assert AUCMargin()(scores, truth).loss == pytest.approx(0.27, rel=1e-12)
    assert AUCMargin(weighting="libauc")(scores, truth).loss == pytest.approx(0.06, rel=1e-12)


@pytest.mark.parametrize("mask", [None, [1, 0.5, 1, 0]])
def test_auc_libauc_is_libauc_v1(mask):
    p = params()
    truth = make_truth(GOLD, 3, params=p, columns=[1.0, 0.5, 2.0], mask=mask)
    out = AUCMargin(weighting="libauc")(SCORES, truth)
    expected = libauc_v1_by_hand(SCORES.tolist(), GOLD, p["dam_a"], p["dam_b"], p["dam_alpha"], columns=(1.0, 0.5, 2.0), mask=mask)
    assert out.loss == pytest.approx(expected, rel=1e-10)


@pytest.mark.parametrize("mode, alpha_update", [("learned", "ascent"), ("learned", "pesg"), ("batch", "ascent")])
def test_auc_libauc_is_p_one_minus_p_times_mean(mode, alpha_update):
    # column by column: value, score gradient and parameter gradients all scale by
    # p_k (1 - p_k); column 2 has no positive (p = 0): nothing under "libauc", while "mean"
    # keeps its variance term; PESG's closed-form alpha is LibAUC's, the same in both
    gold, mask = [0, 1, 0, 1], [1, 1, 0.5, 1]
    p_k = numpy.asarray([1.5 / 3.5, 2 / 3.5, 0.0])
    factor = p_k * (1 - p_k)
    params_ = params() if mode == "learned" else None
    for k in range(3):
        columns = numpy.eye(3)[k]
        truth = make_truth(gold, 3, mask=mask, columns=columns, params=params_)
        ours = AUCMargin(mode=mode, alpha_update=alpha_update)(SCORES, truth)
        libauc = AUCMargin(mode=mode, alpha_update=alpha_update, weighting="libauc")(SCORES, truth)
        assert libauc.loss == pytest.approx(factor[k] * ours.loss, rel=1e-12, abs=1e-15)
        numpy.testing.assert_allclose(libauc.d_scores, factor[k] * ours.d_scores, rtol=1e-12, atol=1e-15)
        for name in (ours.d_params or {}):
            numpy.testing.assert_allclose(libauc.d_params[name], factor[k] * ours.d_params[name], rtol=1e-12, atol=1e-15)
        if alpha_update == "pesg":
            numpy.testing.assert_allclose(libauc.new_params["dam_alpha"], ours.new_params["dam_alpha"], rtol=1e-12)
    assert AUCMargin(mode=mode).prior_weights(numpy.asarray([1.0]), numpy.asarray([3.0]))[0] == 1.0
    assert AUCMargin(weighting="libauc").prior_weights(numpy.asarray([1.0]), numpy.asarray([3.0]))[0] == 0.1875
    assert ours.loss > 0  # column 2 under "mean": its negatives' variance


@pytest.mark.parametrize("mode", ["learned", "batch"])
def test_auc_libauc_gradients_finite_differences(mode):
    p = params()
    learned = mode == "learned"
    truth = make_truth(GOLD, 3, mask=[1, 1, 0.5, 1], columns=[1.0, 0.5, 2.0], params=p if learned else None)
    loss = AUCMargin(mode=mode, margin=0.7, weighting="libauc")
    out = check_score_grad(loss, SCORES, truth, rtol=1e-5)
    if not learned:
        return
    for name in ("dam_a", "dam_b", "dam_alpha"):
        def f(value, name=name):
            q = dict(p, **{name: value})
            return loss(SCORES, make_truth(GOLD, 3, mask=[1, 1, 0.5, 1], columns=[1.0, 0.5, 2.0], params=q)).loss
        fd = numeric_grad(f, p[name])
        expected = -fd if name == "dam_alpha" else fd
        numpy.testing.assert_allclose(out.d_params[name], expected, rtol=1e-6, atol=1e-9)


def test_auc_weighting_is_validated():
    with pytest.raises(ValueError, match=r"^\[components.auc_ner.loss.weighting\] must be 'mean' or 'libauc', not 'prior'$"):
        AUCMargin(weighting="prior").validate("components.auc_ner.loss")
    assert AUCMargin(weighting="libauc").weighting == "libauc"
    assert AUCMargin().weighting == "mean"


def test_binary_ce_value_and_gradient():
    truth = make_truth(GOLD, 3, mask=[1, 1, 0, 1], columns=[1.0, 2.0, 0.5])
    out = check_score_grad(BinaryCE(), SCORES, truth)
    expected = 0.0
    for i in (0, 1, 3):
        for k, c in enumerate((1.0, 2.0, 0.5)):
            p = sig(SCORES[i, k])
            expected += -c * (math.log(p) if GOLD[i] == k else math.log(1 - p)) / 3
    assert out.loss == pytest.approx(expected, rel=1e-10)


def test_softmax_ce_value_and_gradient():
    truth = make_truth(GOLD, 3, mask=[1, 0.5, 1, 1], multilabel=False)
    out = check_score_grad(SoftmaxCE(), SCORES, truth)
    expected = 0.0
    for i, w in enumerate((1, 0.5, 1, 1)):
        z = sum(math.exp(s) for s in SCORES[i])
        expected += -w * math.log(math.exp(SCORES[i, GOLD[i]]) / z) / 3.5
    assert out.loss == pytest.approx(expected, rel=1e-10)


@pytest.mark.parametrize(
    "loss",
    [AUCMargin(mode="batch"), AUCMargin(weighting="libauc"), AUCMargin(mode="batch", weighting="libauc"), AUCMargin(alpha_update="pesg")],
    ids=["auc_batch", "auc_libauc", "auc_batch_libauc", "auc_pesg"],
)  # the defaults: tests/test_loss_contract.py
def test_no_nan_on_degenerate_batches(loss):
    multilabel = not isinstance(loss, SoftmaxCE)
    for name, scores, truth in degenerate_cases(multilabel, loss.param_names):
        assert_finite(loss(scores, truth), scores.shape)


def test_auc_declares_its_parameters_and_owns_their_update_rules():
    from thinc.api import Model

    from spacy_auc_ner.losses import CRFLoss, LossParam, MoM

    learned = AUCMargin()
    assert learned.params == (LossParam("dam_a", 1, 1.0), LossParam("dam_b", 1, 0.0), LossParam("dam_alpha", 1, 0.0))
    assert AUCMargin(mode="batch").params == () and BinaryCE().params == ()
    assert [p.shape(4) for p in CRFLoss().params] == [(4, 4), (4,), (4,)]
    assert MoM(AUCMargin()).params == learned.params  # wrappers declare their inner losses'
    store = Model("store", lambda model, X, is_train: (X, None))
    for p in learned.params:
        store.set_param(p.name, numpy.full(p.shape(3), p.init, dtype="f"))
    out = learned(SCORES, make_truth(GOLD, 3, params=learned.read_params(store)))
    learned.apply_update(store, out)
    for name, grad in out.d_params.items():
        numpy.testing.assert_allclose(store.get_grad(name), grad)
    # after an optimizer step alpha goes back to >= 0
    store.set_param("dam_alpha", numpy.asarray([-0.5, 0.2, -0.1], dtype="f"))
    learned.finish_update(store)
    assert store.get_param("dam_alpha").tolist() == pytest.approx([0.0, 0.2, 0.0])
    pesg = AUCMargin(alpha_update="pesg")
    out = pesg(SCORES, make_truth(GOLD, 3, params=pesg.read_params(store)))
    pesg.apply_update(store, out)
    numpy.testing.assert_allclose(store.get_param("dam_alpha"), out.new_params["dam_alpha"])


@pytest.mark.parametrize(
    "kwargs, setting",
    [({"margin": 0.0}, "margin"), ({"margin": float("nan")}, "margin"), ({"mode": "online"}, "mode"), ({"alpha_update": "sgd"}, "alpha_update"), ({"alpha_lr": 0.0}, "alpha_lr")],
)
def test_auc_settings_are_checked_under_the_given_key(kwargs, setting):
    with pytest.raises(ValueError, match=rf"^\[components.ner.loss.{setting}\] must "):
        AUCMargin(**kwargs).validate("components.ner.loss")
    AUCMargin().validate("components.ner.loss")


def test_auc_batch_alpha_is_clamped_at_zero_when_the_margin_is_met():
    # one column, h = .9, .8 (positives) and .1, .2 (negatives), m = .5: the gap
    # m - mean_pos + mean_neg = .5 - .85 + .15 = -.2 < 0, so alpha = max(0, gap) = 0 and only the
    # two variances remain: (.05^2 + .05^2) / 2 = .0025 each, .005 in all (alpha = gap would add
    # 2 (-.2)(-.2) - .04 = .04). Its gradient: 2 (h - class mean) / 2 h (1 - h) per token.
    h = numpy.asarray([[0.9], [0.8], [0.1], [0.2]])
    scores = numpy.log(h / (1 - h))
    truth = make_truth([0, 0, 1, 1], 1)
    out = check_score_grad(AUCMargin(mode="batch", margin=0.5), scores, truth)
    assert out.loss == pytest.approx(0.005, rel=1e-12)
    means = numpy.asarray([0.85, 0.85, 0.15, 0.15])
    expected = (2 * (h[:, 0] - means) / 2 * h[:, 0] * (1 - h[:, 0]))[:, None]
    numpy.testing.assert_allclose(out.d_scores, expected, rtol=1e-12, atol=1e-15)
    # with m = 1 the gap is .3 > 0: alpha = .3 adds 2 (.3)(.3) - .09 = .09
    assert AUCMargin(mode="batch", margin=1.0)(scores, truth).loss == pytest.approx(0.095, rel=1e-12)


def test_auc_pesg_step_is_projected_onto_alpha_at_least_zero():
    # alpha_lr = 1: alpha + (2 (m + b - a) - 2 alpha) by hand, per column
    #   k = 0: .5 + (2 (1 + .1 - .9) - 1)  = .5 - .6  = -.1 -> 0
    #   k = 1: 0  + (2 (1 + .2 - .8) - 0)  = .8
    #   k = 2: 1.5 + (2 (1 + .3 - .7) - 3) = 1.5 - 1.8 = -.3 -> 0
    truth = make_truth(GOLD, 3, params=params())
    out = AUCMargin(alpha_update="pesg", alpha_lr=1.0)(SCORES, truth)
    numpy.testing.assert_allclose(out.new_params["dam_alpha"], [0.0, 0.8, 0.0], rtol=1e-12, atol=1e-15)


def test_auc_is_the_papers_eq_1_at_the_saddle_point():
    """OVA-AUC eq. 1 / AUC-2T eq. 3 from the papers' definitions, on one column of 2 positives
    and 3 negatives. (1a) is the mean over the 6 pairs of (m - h(x) + h(x'))^2; (1c) with the
    printed A_1 = E[h^2 | y = 1] - a^2, A_2 = E[h^2 | y = -1] - b^2 at the minimisers a, b (the
    class means) and alpha at its maximiser max(0, m - a + b). The batch mode is that value; the
    learned form E[(h - a)^2] (Yuan et al., the module docstring) agrees with the printed A_1 at
    those a, b, and not away from them."""
    h = numpy.asarray([0.9, 0.6, 0.3, 0.5, 0.1])
    scores = numpy.log(h / (1 - h))[:, None]
    gold = [0, 0, 1, 1, 1]  # column 0: the first two tokens are its positives
    truth = make_truth(gold, 1)
    pos, neg = h[:2], h[2:]
    for m in (1.0, 0.2):  # gap = m - .75 + .3: .55 >= 0, then -.25 < 0
        a, b = pos.mean(), neg.mean()
        gap = m - a + b
        alpha = max(0.0, gap)
        eq_1c = (numpy.mean(pos**2) - a**2) + (numpy.mean(neg**2) - b**2) + 2 * alpha * gap - alpha**2
        assert AUCMargin(mode="batch", margin=m)(scores, truth).loss == pytest.approx(eq_1c, rel=1e-12)
        p = {"dam_a": numpy.asarray([a]), "dam_b": numpy.asarray([b]), "dam_alpha": numpy.asarray([alpha])}
        learned = AUCMargin(margin=m)(scores, make_truth(gold, 1, params=p)).loss
        assert learned == pytest.approx(eq_1c, rel=1e-12)
        eq_1a = numpy.mean([(m - x + y) ** 2 for x in pos for y in neg])
        if gap >= 0:
            assert eq_1c == pytest.approx(eq_1a, rel=1e-12)
        else:  # the max over alpha >= 0 is the squared hinge: (1a) keeps gap^2
            assert eq_1c == pytest.approx(eq_1a - gap**2, rel=1e-12)
    # away from the class means they differ: E[(h - a)^2] - (E[h^2] - a^2) = 2 a (a - E[h]),
    # here a = .5 against E[h | y = 1] = .75 (b = .3 is the negatives' mean): -.25
    p = {"dam_a": numpy.asarray([0.5]), "dam_b": numpy.asarray([0.3]), "dam_alpha": numpy.asarray([0.0])}
    learned = AUCMargin()(scores, make_truth(gold, 1, params=p)).loss
    printed = (numpy.mean(pos**2) - 0.5**2) + (numpy.mean(neg**2) - 0.3**2)
    assert learned == pytest.approx(printed - 0.25, rel=1e-12)
