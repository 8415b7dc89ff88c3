"""Negative sampling: exact sample sizes, entity tokens kept, reproducible, the weighted
distribution favours uncertain tokens, gradients through the sampled loss."""
import math

import numpy
import pytest
from _loss_checks import assert_finite, check_score_grad, degenerate_cases, make_truth
from hypothesis import given, settings
from hypothesis import strategies as st

from spacy_auc_ner.losses import BinaryCE, Focal, MoM, NegativeSampling, SoftmaxCE
from spacy_auc_ner.losses.negative_sampling import make_negative_sampling


def batch(lengths, gold, K=3, multilabel=False, seed=0, step=0, scores=None):
    rng = numpy.random.default_rng(seed)
    scores = rng.normal(size=(len(gold), K)) if scores is None else scores
    return scores, make_truth(gold, K, lengths=lengths, multilabel=multilabel, step=step)


@st.composite
def batches(draw):
    lengths = draw(st.lists(st.integers(0, 12), min_size=1, max_size=6))
    gold = draw(st.lists(st.sampled_from([0, 0, 0, 1, 2, -1]), min_size=sum(lengths), max_size=sum(lengths)))
    return lengths, gold


@settings(max_examples=60, deadline=None)
@given(batches(), st.sampled_from([0.1, 0.35, 0.5, 1.0]), st.sampled_from(["uniform", "weighted"]), st.integers(0, 50))
def test_sample_sizes_are_exact_and_entities_kept(data, rate, distribution, step):
    lengths, gold = data
    scores, truth = batch(lengths, gold, step=step)
    loss = NegativeSampling(SoftmaxCE(), rate=rate, distribution=distribution)
    mask = loss.sampled_mask(scores, truth)
    assert_finite(loss(scores, truth), scores.shape)
    gold = numpy.asarray(gold)
    start = 0
    for n in lengths:
        g, m = gold[start : start + n], mask[start : start + n]
        n_o = int((g == 0).sum())
        assert int(m[g == 0].sum()) == min(math.ceil(rate * n), n_o)
        assert (m[g > 0] == 1).all()  # entity tokens never dropped
        assert (m[g < 0] == 0).all()  # no gold, no loss
        start += n


def test_sample_size_by_hand():
    # sentence of 10 tokens, 2 entity tokens: ceil(0.35 * 10) = 4 of the 8 O tokens
    gold = [0, 1, 2, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1]
    scores, truth = batch([10, 3], gold)
    mask = NegativeSampling(SoftmaxCE()).sampled_mask(scores, truth)
    assert mask[:10].sum() == 2 + 4
    assert mask[10:].sum() == 1 + 2  # ceil(1.05) = 2, and both O tokens of the second are taken
    assert mask[[1, 2, 12]].tolist() == [1, 1, 1]


@pytest.mark.parametrize("distribution", ["uniform", "weighted"])
def test_same_seed_and_step_same_sample(distribution):
    gold = [0] * 30 + [1, 2] + [0] * 20
    scores, truth = batch([32, 20], gold, step=7)
    loss = NegativeSampling(SoftmaxCE(), distribution=distribution, seed=3)
    first = loss.sampled_mask(scores, truth)
    numpy.testing.assert_array_equal(first, NegativeSampling(SoftmaxCE(), distribution=distribution, seed=3).sampled_mask(scores, truth))
    _, later = batch([32, 20], gold, step=8)
    other_seed = NegativeSampling(SoftmaxCE(), distribution=distribution, seed=4).sampled_mask(scores, truth)
    assert (loss.sampled_mask(scores, later) != first).any()
    assert (other_seed != first).any()


def test_uniform_is_uniform():
    gold = [0] * 8
    scores, _ = batch([8], gold)
    counts = numpy.zeros(8)
    loss = NegativeSampling(SoftmaxCE(), rate=0.25)  # 2 of 8 each time
    for step in range(2000):
        counts += loss.sampled_mask(scores, make_truth(gold, 3, multilabel=False, step=step))
    # each token taken with probability 1/4: 500 expected, sd ~19
    assert numpy.abs(counts - 500).max() < 90


def test_weighted_logits_by_hand():
    # token 0: uniform over 3 labels (u = log 3, v = 0); token 1: confident O (u ~ 0, v ~ 1)
    scores = numpy.asarray([[0.0, 0.0, 0.0], [9.0, 0.0, 0.0]])
    truth = make_truth([0, 0], 3, multilabel=False, step=0)
    loss = NegativeSampling(SoftmaxCE(), distribution="weighted", mu=8.0, epochs=4, total_steps=100)
    r = loss.sampling_logits(scores, truth)
    assert r[0] == pytest.approx(math.log(3) / 2.0)  # T = sqrt(4 - 0)
    p = [math.exp(9) / (math.exp(9) + 2), 1 / (math.exp(9) + 2), 1 / (math.exp(9) + 2)]
    u = -sum(x * math.log(x) for x in p)
    assert r[1] == pytest.approx(u * (1 + p[0] - p[1]) ** 8 / 2.0)


def test_temperature_schedule():
    loss = NegativeSampling(SoftmaxCE(), epochs=4, total_steps=100)
    assert [loss.temperature_at(s) for s in (0, 24, 25, 50, 75, 99, 500)] == [2.0, 2.0, math.sqrt(3), math.sqrt(2), 1.0, 1.0, 1.0]
    assert NegativeSampling(SoftmaxCE(), temperature=1.5).temperature_at(10**6) == 1.5


def scores_for(probs, multilabel):
    """Scores whose label distribution (softmax, or normalised sigmoids) is `probs`."""
    p = numpy.asarray(probs, dtype="f8")
    return numpy.log(p / (1 - p)) if multilabel else numpy.log(p)


def sample_counts(loss, scores, n_steps=600):
    gold = [0] * scores.shape[0]
    counts = numpy.zeros(scores.shape[0])
    for step in range(n_steps):
        counts += loss.sampled_mask(scores, make_truth(gold, 3, multilabel=loss.loss is not SOFTMAX, step=step))
    return counts


SOFTMAX = SoftmaxCE()


@pytest.mark.parametrize("multilabel", [False, True])
def test_weighted_puts_more_mass_on_uncertain_tokens(multilabel):
    # Three O-looking tokens with the same margin v = p(O) - max p(entity) = 0.25, so the same
    # missampling risk; the uncertain ones (p = .5/.25/.25, entropy 1.04) against the
    # confident ones (.6/.35/.05, entropy 0.82). One of six is drawn per step.
    uncertain, confident = [0.5, 0.25, 0.25], [0.6, 0.35, 0.05]
    scores = scores_for([uncertain, confident] * 3, multilabel)
    inner = BinaryCE() if multilabel else SOFTMAX
    weighted = NegativeSampling(inner, rate=1 / 6, distribution="weighted", temperature=1.0)
    counts = sample_counts(weighted, scores)
    logits = weighted.sampling_logits(scores, make_truth([0] * 6, 3, multilabel=multilabel))
    share = 1 / (1 + math.exp(logits[1] - logits[0]))  # P(uncertain) of one draw
    assert share > 0.75
    assert abs(counts[[0, 2, 4]].sum() / 600 - share) < 0.06
    uniform = sample_counts(NegativeSampling(inner, rate=1 / 6), scores)
    assert abs(uniform[[0, 2, 4]].sum() / 600 - 0.5) < 0.08


@pytest.mark.parametrize("multilabel", [False, True])
def test_weighted_avoids_tokens_that_look_like_entities(multilabel):
    # an unannotated entity (the model says B with .9) is almost never taken as a negative;
    # mu = 0 drops that term and leaves only the uncertainty
    scores = scores_for([[0.9, 0.05, 0.05], [0.05, 0.9, 0.05]], multilabel)
    inner = BinaryCE() if multilabel else SOFTMAX
    truth = make_truth([0, 0], 3, multilabel=multilabel)
    r = NegativeSampling(inner, distribution="weighted", temperature=1.0).sampling_logits(scores, truth)
    assert r[0] > 5 and r[1] < 1e-6
    r0 = NegativeSampling(inner, distribution="weighted", temperature=1.0, mu=0.0).sampling_logits(scores, truth)
    assert r0[0] == pytest.approx(r0[1])


@pytest.mark.parametrize("distribution", ["uniform", "weighted"])
@pytest.mark.parametrize("inner, multilabel", [(SoftmaxCE(), False), (BinaryCE(), True), (Focal(), False)])
def test_loss_is_the_inner_loss_on_the_sample(distribution, inner, multilabel):
    gold = [0, 0, 1, 2, 0, 0, 0, 0, 1, 0]
    scores, truth = batch([6, 4], gold, multilabel=multilabel, step=3)
    loss = NegativeSampling(inner, distribution=distribution)
    out = check_score_grad(loss, scores, truth)
    mask = loss.sampled_mask(scores, truth)
    assert out.loss == pytest.approx(inner(scores, truth.with_mask(mask)).loss, rel=1e-12)
    assert (out.d_scores[mask == 0] == 0).all()


def test_schemes_and_config_errors():
    assert NegativeSampling(SoftmaxCE()).schemes == ("softmax",)
    assert NegativeSampling(Focal()).schemes == ("softmax", "ova")
    assert MoM(NegativeSampling(Focal())).schemes == ("softmax", "ova")
    with pytest.raises(ValueError, match="cannot train scheme 'two_task'"):
        NegativeSampling(BinaryCE()).check_scheme("two_task")
    for bad in (dict(rate=0.0), dict(distribution="topk"), dict(mu=-1.0), dict(epochs=0), dict(total_steps=0), dict(temperature=0.0)):
        with pytest.raises(ValueError, match=rf"^\[components.ner.loss.{next(iter(bad))}\] must "):
            make_negative_sampling(**bad).validate("components.ner.loss")
    make_negative_sampling(temperature=None).validate("components.ner.loss")


@pytest.mark.parametrize("distribution", ["uniform", "weighted"])
@pytest.mark.parametrize("multilabel", [False, True])
def test_no_nan_on_degenerate_batches(distribution, multilabel):
    inner = BinaryCE() if multilabel else SoftmaxCE()
    for name, scores, truth in degenerate_cases(multilabel):
        assert_finite(NegativeSampling(inner, distribution=distribution)(scores, truth), scores.shape)
