"""No NaN or inf where a review found them (each failed on the code before its fix): the weighted
negative-sampling distribution at a small fixed temperature, the entity-share draw over a corpus
with empty sentences, and the CRF's gradient at very large emissions."""
import warnings
from dataclasses import replace

import numpy
import pytest

from _loss_checks import assert_finite, make_truth
from spacy_auc_ner.losses import CRFLoss, CRFWithAUC, NegativeSampling, SoftmaxCE
from spacy_auc_ner.losses.crf import bio_constraints_of
from spacy_auc_ner.ml.crf import posteriors
from spacy_auc_ner.training.readers import draw_entity_ratio


@pytest.mark.parametrize("temperature", [1.0, 1e-2, 1e-3, 1e-6])
@pytest.mark.parametrize("multilabel", [False, True])
def test_the_weighted_sampling_distribution_is_a_distribution_at_any_temperature(temperature, multilabel):
    # r / T reaches log K / T: exp overflowed for T below ~1/300 and q was inf / inf = NaN
    K = 9
    gold = [0, 0, 0, 1, 0, 0, -1, 0]
    scores = numpy.random.default_rng(0).normal(size=(len(gold), K)) * 3.0
    truth = make_truth(gold, K, lengths=[4, 0, 4], multilabel=multilabel)
    loss = NegativeSampling(SoftmaxCE(), distribution="weighted", temperature=temperature)
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # no overflow on the way either
        q = loss.sampling_distribution(scores, truth)
    assert numpy.isfinite(q).all()
    candidate = (numpy.asarray(gold) == 0)
    assert (q[~candidate] == 0).all()
    numpy.testing.assert_allclose([q[:4].sum(), q[4:].sum()], [1.0, 1.0])
    # the order of the tokens' weights is the order of their r / T
    r = loss.sampling_logits(scores, truth)
    first = numpy.flatnonzero(candidate[:4])
    assert numpy.argmax(q[first]) == numpy.argmax(r[first])


def test_the_weighted_sampling_distribution_is_unchanged_at_an_ordinary_temperature():
    K = 5
    gold = [0, 1, 0, 0, 2, 0, 0]
    scores = numpy.random.default_rng(1).normal(size=(len(gold), K))
    truth = make_truth(gold, K, lengths=[3, 4], multilabel=False)
    loss = NegativeSampling(SoftmaxCE(), distribution="weighted", temperature=2.0)
    w = numpy.where(numpy.asarray(gold) == 0, numpy.exp(loss.sampling_logits(scores, truth)), 0.0)
    expected = numpy.concatenate([w[:3] / w[:3].sum(), w[3:] / w[3:].sum()])
    numpy.testing.assert_allclose(loss.sampling_distribution(scores, truth), expected, rtol=1e-12)


@pytest.mark.parametrize(
    "lengths,ents,n,percent,expected",
    [
        ([0, 0, 3, 4], [0, 0, 1, 0], 2, 14.0, 100.0 / 7),  # the empty sentences were chosen, and the draw failed
        ([0, 3, 0, 7], [0, 1, 0, 0], 2, 10.0, 10.0),
    ],
)
def test_the_entity_share_draw_skips_empty_sentences_without_nan(lengths, ents, n, percent, expected):
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # 0/0 warned before it gave NaN
        ids, reached = draw_entity_ratio(numpy.asarray(lengths), numpy.asarray(ents), n, percent, seed=0)
    assert reached == pytest.approx(expected)
    assert sum(lengths[i] for i in ids) > 0


def test_an_unreachable_share_over_empty_sentences_is_an_error_not_nan():
    # it returned the empty sentence with the share NaN, which passed the tolerance check
    from spacy_auc_ner.data.columns import DataError

    with pytest.raises(DataError, match="cannot reach 30.0%"):
        draw_entity_ratio(numpy.asarray([0, 3]), numpy.asarray([0, 1]), 1, 30.0, seed=0)
    with pytest.raises(DataError, match="closest found is 0.00%"):
        draw_entity_ratio(numpy.asarray([0, 0]), numpy.asarray([0, 0]), 1, 5.0, seed=0)


@pytest.mark.parametrize("scale", [1e4, 1e8, 1e30])
@pytest.mark.parametrize("make", [CRFLoss, CRFWithAUC])
def test_the_crf_gradient_is_finite_at_very_large_emissions(scale, make):
    # float32 rounding of alpha + beta - log Z exceeds 88 at |E| ~ 1e7 over 40 tokens: exp overflowed
    K, T = 5, 40
    gold = numpy.zeros(T, dtype="i")
    gold[[3, 20]], gold[[4, 21]] = 1, 2
    for seed in range(6):
        scores = (numpy.random.default_rng(seed).normal(size=(T, K)) * scale).astype("f")
        loss = make()
        params = {p.name: numpy.full(p.shape(K), p.init, dtype="f") for p in loss.params}
        truth = make_truth(gold, K, multilabel=False, params=params)
        truth = replace(truth, targets=truth.targets.astype("f"), mask=truth.mask.astype("f"), columns=truth.columns.astype("f"))
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # float32 sums overflowing at 1e30 are not the point: the results are
            out = loss(scores, truth)
            probs = posteriors(scores, [T], params["crf_trans"], params["crf_start"], params["crf_end"], bio_constraints_of(K))
        assert_finite(out, scores.shape)
        assert numpy.isfinite(probs).all() and (probs <= 1.0).all()
