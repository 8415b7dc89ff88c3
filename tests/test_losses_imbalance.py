"""Focal, dice and weighted cross entropy: hand-computed values, finite differences, no NaN."""
import math

import numpy
import pytest

from _loss_checks import assert_finite, check_scheme, check_score_grad, degenerate_cases, make_truth
from spacy_auc_ner.losses import BinaryCE, Dice, Focal, SoftmaxCE, WeightedCE
from spacy_auc_ner.losses.weighted import class_weights

SCORES = numpy.asarray([[0.5, -1.0, 0.2], [-0.3, 1.5, -2.0], [1.0, 0.0, 0.7], [-1.2, -0.4, 0.9]])
GOLD = [0, 1, 0, 2]
MASK = [1.0, 1.0, 0.5, 1.0]
COLUMNS = [1.0, 2.0, 0.5]


def sig(x):
    return 1.0 / (1.0 + math.exp(-x))


def softmax_row(row):
    z = sum(math.exp(s) for s in row)
    return [math.exp(s) / z for s in row]


# ---- focal -----------------------------------------------------------------------------
def test_focal_sigmoid_value_by_hand():
    truth = make_truth(GOLD, 3, mask=MASK, columns=COLUMNS)
    out = Focal(gamma=2.0)(SCORES, truth)
    expected = 0.0
    for i, w in enumerate(MASK):
        for k, c in enumerate(COLUMNS):
            p = sig(SCORES[i, k])
            p_t = p if GOLD[i] == k else 1 - p
            expected += w * c * -((1 - p_t) ** 2) * math.log(p_t)
    assert out.loss == pytest.approx(expected / sum(MASK), rel=1e-10)


def test_focal_softmax_value_by_hand():
    truth = make_truth(GOLD, 3, mask=MASK, multilabel=False)
    out = Focal(gamma=1.5)(SCORES, truth)
    expected = sum(
        w * -((1 - softmax_row(SCORES[i])[GOLD[i]]) ** 1.5) * math.log(softmax_row(SCORES[i])[GOLD[i]])
        for i, w in enumerate(MASK)
    )
    assert out.loss == pytest.approx(expected / sum(MASK), rel=1e-10)


@pytest.mark.parametrize("multilabel", [True, False])
def test_focal_gamma_zero_is_cross_entropy(multilabel):
    truth = make_truth(GOLD, 3, mask=MASK, columns=COLUMNS if multilabel else None, multilabel=multilabel)
    base = BinaryCE() if multilabel else SoftmaxCE()
    ours, theirs = Focal(gamma=0.0)(SCORES, truth), base(SCORES, truth)
    assert ours.loss == pytest.approx(theirs.loss, rel=1e-12)
    numpy.testing.assert_allclose(ours.d_scores, theirs.d_scores, rtol=1e-12, atol=1e-15)


@pytest.mark.parametrize("gamma", [0.0, 0.5, 2.0, 3.0])
@pytest.mark.parametrize("multilabel", [True, False])
def test_focal_gradient_finite_differences(gamma, multilabel):
    truth = make_truth(GOLD, 3, mask=MASK, columns=COLUMNS if multilabel else None, multilabel=multilabel)
    check_score_grad(Focal(gamma=gamma), SCORES, truth)


def test_focal_downweights_easy_tokens():
    # a well-classified token loses far more of its loss than a badly classified one
    easy, hard = numpy.asarray([[3.0]]), numpy.asarray([[-1.0]])
    truth = make_truth([0], 1)
    ratio_easy = Focal(2.0)(easy, truth).loss / BinaryCE()(easy, truth).loss
    ratio_hard = Focal(2.0)(hard, truth).loss / BinaryCE()(hard, truth).loss
    assert ratio_easy < 0.01 < 0.5 < ratio_hard


# ---- dice ------------------------------------------------------------------------------
def dice_token_by_hand(probs, gold, alpha, delta, mask, columns):
    total = 0.0
    for i, w in enumerate(mask):
        for k, c in enumerate(columns):
            p = probs[i][k]
            q = (1 - p) ** alpha * p
            y = 1.0 if gold[i] == k else 0.0
            total += w * c * (1 - (2 * q * y + delta) / (q + y + delta))
    return total / sum(mask)


@pytest.mark.parametrize("multilabel", [True, False])
def test_dice_token_value_by_hand(multilabel):
    columns = COLUMNS if multilabel else [1.0, 1.0, 1.0]
    truth = make_truth(GOLD, 3, mask=MASK, columns=columns, multilabel=multilabel)
    probs = [[sig(s) for s in row] if multilabel else softmax_row(row) for row in SCORES]
    out = Dice(alpha=1.0, delta=0.3, level="token")(SCORES, truth)
    assert out.loss == pytest.approx(dice_token_by_hand(probs, GOLD, 1.0, 0.3, MASK, columns), rel=1e-10)


def test_dice_batch_value_by_hand():
    truth = make_truth(GOLD, 3, mask=MASK, columns=COLUMNS)
    out = Dice(alpha=2.0, delta=0.1, level="batch")(SCORES, truth)
    expected = 0.0
    for k, c in enumerate(COLUMNS):
        q = [(1 - sig(SCORES[i, k])) ** 2 * sig(SCORES[i, k]) for i in range(4)]
        y = [1.0 if g == k else 0.0 for g in GOLD]
        num = 2 * sum(w * qi * yi for w, qi, yi in zip(MASK, q, y)) + 0.1
        den = sum(w * qi for w, qi in zip(MASK, q)) + sum(w * yi for w, yi in zip(MASK, y)) + 0.1
        expected += c * (1 - num / den)
    assert out.loss == pytest.approx(expected, rel=1e-10)


def test_dice_batch_softmax_value_by_hand():
    # the set form over softmax probabilities: per column k, 1 - (2 sum_i w q y + d) / (sum_i w q
    # + sum_i w y + d), q = (1 - p)^alpha p, summed over the columns
    truth = make_truth(GOLD, 3, mask=MASK, multilabel=False)
    out = Dice(alpha=0.5, delta=0.2, level="batch")(SCORES, truth)
    probs = [softmax_row(row) for row in SCORES]
    expected = 0.0
    for k in range(3):
        q = [(1 - probs[i][k]) ** 0.5 * probs[i][k] for i in range(4)]
        y = [1.0 if g == k else 0.0 for g in GOLD]
        num = 2 * sum(w * qi * yi for w, qi, yi in zip(MASK, q, y)) + 0.2
        den = sum(w * qi for w, qi in zip(MASK, q)) + sum(w * yi for w, yi in zip(MASK, y)) + 0.2
        expected += 1 - num / den
    assert out.loss == pytest.approx(expected, rel=1e-10)


@pytest.mark.parametrize("alpha", [0.0, 1.0, 2.5])
@pytest.mark.parametrize("level", ["token", "batch"])
@pytest.mark.parametrize("multilabel", [True, False])
def test_dice_gradient_finite_differences(alpha, level, multilabel):
    truth = make_truth(GOLD, 3, mask=MASK, columns=COLUMNS if multilabel else None, multilabel=multilabel)
    check_score_grad(Dice(alpha=alpha, delta=0.05, level=level), SCORES, truth)


# ---- weighted CE -----------------------------------------------------------------------
def test_class_weights_by_hand():
    counts = numpy.asarray([8.0, 2.0, 0.0], dtype="f8")  # the absent class counts as 1
    inverse = class_weights(counts, "inverse")
    numpy.testing.assert_allclose(inverse, [11 / 24, 11 / 6, 11 / 3])
    log = class_weights(counts, "log", beta=2.0)
    numpy.testing.assert_allclose(log, [math.log10(3 / 8 + 2), math.log10(9 / 2 + 2), math.log10(10 + 2)])


@pytest.mark.parametrize("form", ["inverse", "log"])
@pytest.mark.parametrize("multilabel", [True, False])
def test_weighted_ce_value_by_hand(form, multilabel):
    counts = numpy.asarray([10.0, 3.0, 1.0])
    loss = WeightedCE(form=form, beta=1.5)
    loss.initialize(counts)
    weights = [14 / (3 * c) for c in counts] if form == "inverse" else [math.log10((14 - c) / c + 1.5) for c in counts]
    truth = make_truth(GOLD, 3, mask=MASK, multilabel=multilabel)
    out = check_score_grad(loss, SCORES, truth)
    total, norm = 0.0, 0.0
    for i, m in enumerate(MASK):
        w = m * weights[GOLD[i]]
        if multilabel:
            per = sum(-math.log(sig(s) if GOLD[i] == k else 1 - sig(s)) for k, s in enumerate(SCORES[i]))
        else:
            per = -math.log(softmax_row(SCORES[i])[GOLD[i]])
        total += w * per
        norm += w
    assert out.loss == pytest.approx(total / norm, rel=1e-10)


def test_weighted_ce_before_initialize_is_plain_ce():
    truth = make_truth(GOLD, 3, multilabel=False)
    assert WeightedCE()(SCORES, truth).loss == pytest.approx(SoftmaxCE()(SCORES, truth).loss)


def test_weighted_ce_rejects_wrong_number_of_counts():
    loss = WeightedCE()
    loss.initialize(numpy.asarray([3.0, 1.0]))
    with pytest.raises(ValueError, match="2 class counts"):
        loss(SCORES, make_truth(GOLD, 3))


def test_config_errors():
    key = "components.ner.loss"
    for loss, setting in [
        (Focal(gamma=-1), "gamma"),
        (Dice(alpha=-1), "alpha"),
        (Dice(delta=0), "delta"),
        (Dice(level="sentence"), "level"),
        (WeightedCE(form="sqrt"), "form"),
        (WeightedCE(form="log", beta=0.5), "beta"),
    ]:
        with pytest.raises(ValueError, match=rf"^\[{key}.{setting}\] must "):
            loss.validate(key)
    for loss in (Focal(), Dice(), WeightedCE()):
        loss.validate(key)
    with pytest.raises(ValueError, match=r"\[components.ner.loss\].*two_task"):
        check_scheme(WeightedCE(), "two_task", "components.ner.loss")


def _one_class_weighted(counts_len):
    loss = WeightedCE(form="log")  # one class only: weight log10(0 + 1) = 0 for everything
    loss.initialize(numpy.full(counts_len, 5.0))
    return loss


@pytest.mark.parametrize(
    "make",
    [lambda: Focal(0.5), lambda: Dice(alpha=1.0, level="token"), lambda: Dice(alpha=0.5, level="batch"), lambda: WeightedCE(form="log")],
    ids=["focal_0.5", "dice_token", "dice_batch", "wce_log"],
)  # the defaults: tests/test_loss_contract.py
@pytest.mark.parametrize("multilabel", [True, False])
def test_no_nan_on_degenerate_batches(make, multilabel):
    for name, scores, truth in degenerate_cases(multilabel):
        loss = make()
        loss.initialize(numpy.ones(scores.shape[1]) * 3)
        assert_finite(loss(scores, truth), scores.shape)
    scores = numpy.random.default_rng(1).normal(size=(3, 1))
    assert_finite(_one_class_weighted(1)(scores, make_truth([0, 0, 0], 1, multilabel=multilabel)), (3, 1))
