"""MoM learning and compositional AUC: values from their inner losses, gradients, schemes,
parameter pass-through."""
import math
from dataclasses import replace

import numpy
import pytest

from _loss_checks import assert_finite, check_scheme, check_score_grad, degenerate_cases, make_truth, numeric_grad, schemes_of
from spacy_auc_ner.losses import AUCMargin, BinaryCE, Compositional, Dice, Focal, LossOutput, MoM, SoftmaxCE, WeightedCE
from spacy_auc_ner.losses.base import TokenLoss

SCORES = numpy.asarray([[0.5, -1.0, 0.2], [-0.3, 1.5, -2.0], [1.0, 0.0, 0.7], [-1.2, -0.4, 0.9], [0.1, 0.3, -0.5]])
GOLD = [0, 1, 0, 2, 0]


def softmax_row(row):
    z = sum(math.exp(s) for s in row)
    return [math.exp(s) / z for s in row]


def params():
    return {"dam_a": numpy.asarray([0.9, 0.8, 0.7]), "dam_b": numpy.asarray([0.1, 0.2, 0.3]), "dam_alpha": numpy.asarray([0.5, 0.1, 1.5])}


# ---- MoM -------------------------------------------------------------------------------
def test_mom_softmax_value_by_hand():
    # 5 tokens, 3 of them gold O: the O-term is their NLL sum over the 5 tokens (the paper's
    # common denominator), i.e. their mean times the O share 3/5; "mean" is their plain mean
    truth = make_truth(GOLD, 3, multilabel=False)
    nll = [-math.log(softmax_row(SCORES[i])[GOLD[i]]) for i in range(5)]
    all_tokens = sum(nll) / 5
    o_sum = nll[0] + nll[2] + nll[4]
    out = MoM(SoftmaxCE(), lam=0.3)(SCORES, truth)
    assert out.loss == pytest.approx(0.3 * all_tokens + 0.7 * o_sum / 5, rel=1e-10)
    assert out.loss == pytest.approx(0.3 * all_tokens + 0.7 * (3 / 5) * (o_sum / 3), rel=1e-10)
    mean = MoM(SoftmaxCE(), lam=0.3, o_term="mean")(SCORES, truth)
    assert mean.loss == pytest.approx(0.3 * all_tokens + 0.7 * o_sum / 3, rel=1e-10)


def test_mom_is_the_papers_equations_up_to_a_common_scale():
    # eqs. 1-3 as printed: per sentence lambda/M sum_i l_i + (1 - lambda)/M sum_{y_i = O} l_i,
    # M the longest sentence of the data (a constant), averaged over the N sentences. Ours is
    # the same balance of token sums over Z tokens, so ours * Z / (N M) is the paper's value,
    # for whatever split of the tokens into sentences; the o_term "mean" form is not.
    lam, lengths = 0.175, [2, 3]  # lambda of BERT on CoNLL 2003 (Table 2)
    M, N, Z = max(lengths), len(lengths), sum(lengths)
    nll = [-math.log(softmax_row(SCORES[i])[GOLD[i]]) for i in range(5)]
    paper = 0.0
    for sentence in ([0, 1], [2, 3, 4]):
        L = sum(nll[i] for i in sentence) / M
        L_mom = sum(nll[i] for i in sentence if GOLD[i] == 0) / M
        paper += (lam * L + (1 - lam) * L_mom) / N
    truth = make_truth(GOLD, 3, lengths=lengths, multilabel=False)
    ours = MoM(SoftmaxCE(), lam=lam)(SCORES, truth).loss
    assert ours * Z / (N * M) == pytest.approx(paper, rel=1e-12)
    mean = MoM(SoftmaxCE(), lam=lam, o_term="mean")(SCORES, truth).loss
    assert mean * Z / (N * M) != pytest.approx(paper, rel=1e-3)


@pytest.mark.parametrize("o_term", ["share", "mean"])
@pytest.mark.parametrize(
    "inner, multilabel",
    [(SoftmaxCE(), False), (Focal(2.0), False), (BinaryCE(), True), (Dice(), True), (Focal(1.0), True)],
)
def test_mom_gradient_finite_differences(inner, multilabel, o_term):
    # mask weights 1, 1, .5, 1, 0: the O share (1 + .5) / 3.5 is a weighted share
    truth = make_truth(GOLD, 3, mask=[1, 1, 0.5, 1, 0], multilabel=multilabel)
    out = check_score_grad(MoM(inner, lam=0.25, o_term=o_term), SCORES, truth)
    share = 1.5 / 3.5 if o_term == "share" else 1.0
    o_only = inner(SCORES, truth.with_mask(numpy.asarray([1, 0, 0.5, 0, 0.0])))
    assert out.loss == pytest.approx(0.25 * inner(SCORES, truth).loss + 0.75 * share * o_only.loss, rel=1e-12)


def test_mom_lambda_one_is_the_inner_loss():
    truth = make_truth(GOLD, 3, multilabel=False)
    assert MoM(SoftmaxCE(), lam=1.0)(SCORES, truth).loss == pytest.approx(SoftmaxCE()(SCORES, truth).loss)


def test_mom_combines_auc_parameter_gradients():
    p = params()
    truth = make_truth(GOLD, 3, params=p)
    auc = AUCMargin()
    out = MoM(auc, lam=0.4)(SCORES, truth)
    full = auc(SCORES, truth)
    o_only = auc(SCORES, truth.with_mask(truth.mask * truth.targets[:, 0]))
    for k in ("dam_a", "dam_b", "dam_alpha"):  # O share 3/5
        numpy.testing.assert_allclose(out.d_params[k], 0.4 * full.d_params[k] + 0.6 * 0.6 * o_only.d_params[k])
    # and they are the true gradients of the MoM value
    fd = numeric_grad(lambda a: MoM(auc, lam=0.4)(SCORES, make_truth(GOLD, 3, params=dict(p, dam_a=a))).loss, p["dam_a"])
    numpy.testing.assert_allclose(out.d_params["dam_a"], fd, rtol=1e-6, atol=1e-9)
    assert MoM(auc).param_names == ("dam_a", "dam_b", "dam_alpha")


def test_mom_pesg_new_alpha_is_the_weighted_average():
    auc = AUCMargin(alpha_update="pesg")
    truth = make_truth(GOLD, 3, params=params())
    full = auc(SCORES, truth).new_params["dam_alpha"]
    o_only = auc(SCORES, truth.with_mask(truth.mask * truth.targets[:, 0])).new_params["dam_alpha"]
    out = MoM(auc, lam=0.4, o_term="mean")(SCORES, truth)
    numpy.testing.assert_allclose(out.new_params["dam_alpha"], 0.4 * full + 0.6 * o_only)
    # with the O share 3/5 in the O-term's weight: weights .4 and .36, renormalised
    out = MoM(auc, lam=0.4)(SCORES, truth)
    numpy.testing.assert_allclose(out.new_params["dam_alpha"], (0.4 * full + 0.36 * o_only) / 0.76)
    assert (out.new_params["dam_alpha"] >= 0).all()


def test_mom_schemes_and_errors():
    assert schemes_of(MoM(SoftmaxCE())) == {"softmax"}
    assert schemes_of(MoM(BinaryCE())) == {"ova"}
    assert schemes_of(MoM(Focal())) == {"softmax", "ova"}
    with pytest.raises(ValueError, match=r"\[components.ner.loss\] spacy_auc_ner.MoM.v1 cannot train scheme 'two_task': it needs o_column"):
        check_scheme(MoM(BinaryCE()), "two_task", "components.ner.loss")
    with pytest.raises(ValueError, match=r"^\[components.ner.loss.loss\] spacy_auc_ner.SoftmaxCE.v1 cannot train scheme 'ova'"):
        check_scheme(MoM(SoftmaxCE()), "ova", "components.ner.loss")
    with pytest.raises(ValueError, match=r"^\[components.ner.loss.lam\] must be in \[0, 1\], not 1.5$"):
        MoM(SoftmaxCE(), lam=1.5).validate("components.ner.loss")
    with pytest.raises(ValueError, match=r"^\[components.ner.loss.o_term\] must be 'share' or 'mean', not 'sentence'$"):
        MoM(SoftmaxCE(), o_term="sentence").validate("components.ner.loss")
    with pytest.raises(ValueError, match=r"^\[components.ner.loss.loss.gamma\] must be >= 0"):
        MoM(Focal(gamma=-1.0)).validate("components.ner.loss")


def test_wrappers_pass_initialize_on():
    inner = WeightedCE()
    MoM(inner).initialize(numpy.asarray([4.0, 1.0, 1.0]))
    numpy.testing.assert_allclose(inner.weights, [6 / 12, 2.0, 2.0])


# ---- compositional ---------------------------------------------------------------------
class Tag(TokenLoss):
    """A loss that returns a constant, to see which one ran."""

    def __init__(self, value):
        self.value = value

    def __call__(self, scores, truth):
        return LossOutput(numpy.zeros_like(scores), self.value)


@pytest.mark.parametrize("k, expected", [(1, "CACACA"), (2, "CCAACC"), (3, "CCCAAA")])
def test_compositional_alternates_every_k_steps(k, expected):
    loss = Compositional(Tag(1.0), Tag(2.0), k=k)
    ran = "".join("C" if loss(SCORES, make_truth(GOLD, 3, step=s)).loss == 1.0 else "A" for s in range(6))
    assert ran == expected


def test_compositional_uses_bce_and_auc_by_hand():
    p = params()
    loss = Compositional(BinaryCE(), AUCMargin(), k=2)
    for step, inner in ((1, BinaryCE()), (2, AUCMargin())):
        truth = make_truth(GOLD, 3, params=p, step=step)
        out = check_score_grad(loss, SCORES, truth)
        assert out.loss == pytest.approx(inner(SCORES, truth).loss, rel=1e-12)
    assert make_truth(GOLD, 3, step=1).step == 1
    assert loss.param_names == ("dam_a", "dam_b", "dam_alpha")
    assert loss(SCORES, make_truth(GOLD, 3, params=p, step=0)).d_params is None
    assert set(loss(SCORES, make_truth(GOLD, 3, params=p, step=2)).d_params) == {"dam_a", "dam_b", "dam_alpha"}


def test_compositional_values_by_hand():
    # k = 2: steps 0, 1 are binary CE, steps 2, 3 the AUC margin loss, step 4 CE again; each
    # value from its formula (OVA-AUC eq. 1 with a, b, alpha given), not from the inner losses
    p = params()
    sig = [[1 / (1 + math.exp(-s)) for s in row] for row in SCORES]
    bce = -sum(math.log(sig[i][k] if GOLD[i] == k else 1 - sig[i][k]) for i in range(5) for k in range(3)) / 5
    auc = 0.0
    for k in range(3):
        pos = [sig[i][k] for i in range(5) if GOLD[i] == k]
        neg = [sig[i][k] for i in range(5) if GOLD[i] != k]
        a, b, alpha = p["dam_a"][k], p["dam_b"][k], p["dam_alpha"][k]
        auc += sum((h - a) ** 2 for h in pos) / len(pos) + sum((h - b) ** 2 for h in neg) / len(neg)
        auc += 2 * alpha * (1.0 - sum(pos) / len(pos) + sum(neg) / len(neg)) - alpha**2
    loss = Compositional(BinaryCE(), AUCMargin(), k=2)
    got = [loss(SCORES, make_truth(GOLD, 3, params=p, step=s)).loss for s in range(5)]
    assert got == pytest.approx([bce, bce, auc, auc, bce], rel=1e-10)
    assert abs(bce - auc) > 0.1  # the two phases are told apart


def test_compositional_schemes():
    assert schemes_of(Compositional(BinaryCE(), AUCMargin())) == {"ova", "two_task"}
    with pytest.raises(ValueError, match="cannot train scheme 'softmax'"):
        check_scheme(Compositional(BinaryCE(), AUCMargin()), "softmax")
    with pytest.raises(ValueError, match=r"^\[loss.k\] must be >= 1, not 0$"):
        Compositional(BinaryCE(), AUCMargin(), k=0).validate()
    with pytest.raises(ValueError, match=r"^\[components.ner.loss.auc.margin\] must be > 0"):
        Compositional(BinaryCE(), AUCMargin(margin=0.0), k=1).validate("components.ner.loss")


@pytest.mark.parametrize(
    "make, multilabel",
    [
        (lambda: MoM(SoftmaxCE(), o_term="mean"), False),
        (lambda: MoM(Focal()), True),
        (lambda: MoM(AUCMargin(mode="batch")), True),
        (lambda: Compositional(BinaryCE(), AUCMargin(mode="batch")), True),
    ],
    ids=["mom_ce_mean", "mom_focal_ova", "mom_auc", "comauc"],
)  # the defaults: tests/test_loss_contract.py
def test_no_nan_on_degenerate_batches(make, multilabel):
    for step in (0, 1):
        for name, scores, truth in degenerate_cases(multilabel):
            assert_finite(make()(scores, replace(truth, step=step)), scores.shape)
