"""Negative sampling: exact sample sizes, entity tokens kept, reproducible; the weighted
distribution as the paper prints it (hand-computed), its entropy along the temperature
schedule, its preference for uncertain tokens; gradients through the sampled loss."""
import dataclasses
import math

import numpy
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from _loss_checks import assert_finite, check_scheme, check_score_grad, degenerate_cases, make_truth, schemes_of
from spacy_auc_ner.losses import BinaryCE, Focal, MoM, NegativeSampling, SoftmaxCE


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
    # Truth.seed (the pipe's seed) enters the draw too
    assert (loss.sampled_mask(scores, dataclasses.replace(truth, seed=1)) != first).any()
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


# Three candidates whose softmax distributions are, over (O, B, I):
#   A = (.5, .25, .25): O on top, v = 0,            u = 1.5 log 2,  r = 1.5 log 2
#   B = (.25, .5, .25): B on top, v = .25 - .5,     u = 1.5 log 2,  r = 1.5 log 2 * .75^8
#   C = (.9, .05, .05): O on top, v = 0,            u = -(.9 log .9 + .1 log .05)
HAND = [[0.5, 0.25, 0.25], [0.25, 0.5, 0.25], [0.9, 0.05, 0.05]]
U_AC = 1.5 * math.log(2)
U_C = -(0.9 * math.log(0.9) + 0.1 * math.log(0.05))


def test_weighted_logits_by_hand():
    scores = numpy.log(numpy.asarray(HAND))
    truth = make_truth([0, 0, 0], 3, multilabel=False, step=0)
    loss = NegativeSampling(SoftmaxCE(), distribution="weighted", mu=8.0, epochs=4, total_steps=100)
    r = loss.sampling_logits(scores, truth) * 2.0  # T = sqrt(4 - 0) at step 0
    numpy.testing.assert_allclose(r, [U_AC, U_AC * 0.75**8, U_C], rtol=1e-12)
    numpy.testing.assert_allclose(r, [1.0397207708399179, 0.10408947719544527, 0.39439769144744274], rtol=1e-12)


def test_weighted_logits_normalise_the_sigmoids_by_hand():
    # OVA: z is the sigmoids divided by their sum (the paper's z is a distribution), T = 1:
    #   h = (.8, .4, .4) -> z = (.5, .25, .25): v = 0, u = 1.5 log 2, r = 1.5 log 2
    #   h = (.2, .6, .2) -> z = (.2, .6, .2):   v = -.4, u = -(.4 log .2 + .6 log .6), r = u .6^8
    # (the raw sigmoids, which do not sum to 1, give other u and v)
    h = numpy.asarray([[0.8, 0.4, 0.4], [0.2, 0.6, 0.2]])
    scores = numpy.log(h / (1 - h))
    truth = make_truth([0, 0], 3, multilabel=True)
    r = NegativeSampling(BinaryCE(), distribution="weighted", temperature=1.0).sampling_logits(scores, truth)
    u_second = -(0.4 * math.log(0.2) + 0.6 * math.log(0.6))
    numpy.testing.assert_allclose(r, [1.5 * math.log(2), u_second * 0.6**8], rtol=1e-12)


def test_sampling_distribution_and_entropy_by_hand():
    # the three candidates of HAND plus an entity token and a gold-O token without gold (never
    # candidates), in one sentence; then a sentence of one candidate.
    probs = HAND + [[0.1, 0.8, 0.1], [0.98, 0.01, 0.01], [0.2, 0.2, 0.6]]
    scores = numpy.log(numpy.asarray(probs))
    gold, mask = [0, 0, 0, 1, 0, 0], [1, 1, 1, 1, 0, 1]
    loss = NegativeSampling(SoftmaxCE(), distribution="weighted", mu=8.0, epochs=4, total_steps=100)
    # exp(r_A) = 2 sqrt 2, exp(r_B) = (2 sqrt 2)^(.75^8), exp(r_C) = .9^-.9 .05^-.1
    w = [2 * math.sqrt(2), (2 * math.sqrt(2)) ** (0.75**8), 0.9**-0.9 * 0.05**-0.1]
    expected = {
        2.0: ([0.4254254827830384, 0.2664733283235448, 0.3081011888934167], 1.07873827134116),
        1.0: ([0.5216943549200277, 0.20468057552827892, 0.27362506955169347], 1.0187555137079851),
    }
    for step, T in ((0, 2.0), (99, 1.0)):
        truth = make_truth(gold, 3, mask=mask, lengths=[5, 1], multilabel=False, step=step)
        q = loss.sampling_distribution(scores, truth)
        by_hand = [x ** (1 / T) / sum(y ** (1 / T) for y in w) for x in w]
        numpy.testing.assert_allclose(q[:3], by_hand, rtol=1e-12)
        numpy.testing.assert_allclose(q[:3], expected[T][0], rtol=1e-12)
        assert q[3] == 0 and q[4] == 0 and q[5] == 1.0
        assert -(q[:3] * numpy.log(q[:3])).sum() == pytest.approx(expected[T][1], rel=1e-12)
    # entropy falls as T does, and stays above log 3 - log 3 / T
    assert math.log(3) > 1.07873827134116 > 1.0187555137079851 > math.log(3) - math.log(3) / 1.0


def sentence_entropies(q, lengths):
    ends = numpy.cumsum(lengths)
    return [-(x[x > 0] * numpy.log(x[x > 0])).sum() for x in numpy.split(q, ends[:-1])]


def trained_model_scores(n, rng):
    """Softmax scores of a model that has learnt most of its O tokens (p(O) .9 to .999) and
    takes a few for entities (hidden entities under missing annotations)."""
    p_o = 1 - 10 ** rng.uniform(-3, -1, size=n)
    p_o[rng.choice(n, size=n // 10, replace=False)] = rng.uniform(0.05, 0.4, size=n // 10)
    split = rng.uniform(0.2, 0.8, size=n)
    probs = numpy.stack([p_o, (1 - p_o) * split, (1 - p_o) * (1 - split)], axis=1)
    return numpy.log(probs)


def test_entropy_along_the_schedule_never_collapses():
    # 40 gold-O tokens; over C = 10 epochs T = sqrt(10 - c): the entropy of the first draw
    # falls epoch by epoch, from near uniform (log 40) to its value at T = 1, and never below
    # log m - log K / T.
    rng = numpy.random.default_rng(0)
    m, C, total = 40, 10, 1000
    scores = trained_model_scores(m, rng)
    loss = NegativeSampling(SoftmaxCE(), distribution="weighted", epochs=C, total_steps=total)
    entropies, top = [], []
    for c in range(C):
        truth = make_truth([0] * m, 3, multilabel=False, step=c * total // C)
        T = loss.temperature_at(truth.step)
        assert T == pytest.approx(math.sqrt(C - c))
        q = loss.sampling_distribution(scores, truth)
        assert q.sum() == pytest.approx(1.0)
        H = sentence_entropies(q, [m])[0]
        assert H >= math.log(m) - math.log(3) / T
        assert q.max() <= 3 ** (1 / T) / (m - 1 + 3 ** (1 / T)) + 1e-12
        entropies.append(H)
        top.append(q.max())
    assert all(a > b for a, b in zip(entropies, entropies[1:]))
    # as printed, q stays close to uniform on a model this sure of its O tokens: their
    # entropies u, hence r, are small (here H = 3.6883 at T = sqrt 10, 3.6823 at T = 1,
    # against log 40 = 3.6889; the likeliest first draw 1.09 and 1.31 times uniform's 1/40)
    assert math.log(m) - entropies[0] < 1e-3 and math.log(m) - entropies[-1] > 5e-3
    assert 1.0 < top[0] * m < top[-1] * m < 1.5
    # the earlier reading (max over the entity labels only, v up to +1, r up to 256 u) on the
    # same scores puts the first draw on a handful of tokens whatever T: H = 1.42 nats at
    # T = sqrt 10 (one token .47), 0.51 at T = 1 (one token .81)
    z = numpy.exp(scores)
    u = -(z * numpy.log(z)).sum(axis=1)
    for T, H_old, top_old in ((math.sqrt(C), 1.417, 0.474), (1.0, 0.513, 0.811)):
        r_old = u * (1 + z[:, 0] - z[:, 1:].max(axis=1)) ** 8 / T
        q_old = numpy.exp(r_old - r_old.max()) / numpy.exp(r_old - r_old.max()).sum()
        assert -(q_old * numpy.log(q_old + 1e-300)).sum() == pytest.approx(H_old, abs=1e-3)
        assert q_old.max() == pytest.approx(top_old, abs=1e-3)
        # the library is not that reading: on the same scores its first draw is near uniform
        assert min(entropies) > H_old + 2.0 and max(top) < top_old / 10


@settings(max_examples=40, deadline=None)
@given(st.lists(st.integers(1, 15), min_size=1, max_size=4), st.floats(0.1, 30.0), st.integers(0, 99), st.booleans())
def test_weighted_entropy_bound(lengths, scale, step, multilabel):
    # any scores, any step: per sentence of m candidates, H(q) >= log m - log K / T
    rng = numpy.random.default_rng(len(lengths) + step)
    scores = rng.normal(size=(sum(lengths), 3)) * scale
    truth = make_truth([0] * sum(lengths), 3, lengths=lengths, multilabel=multilabel, step=step)
    loss = NegativeSampling(SoftmaxCE(), distribution="weighted", epochs=5, total_steps=100)
    T = loss.temperature_at(step)
    q = loss.sampling_distribution(scores, truth)
    assert numpy.isfinite(q).all()
    for m, H in zip(lengths, sentence_entropies(q, lengths)):
        assert H >= math.log(m) - math.log(3) / T - 1e-9


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
    # Six O-looking tokens (v = 0, the same missampling risk): three uncertain
    # (.5/.25/.25, entropy 1.04), three confident (.96/.02/.02, entropy 0.20). One of six is
    # drawn per step; the draws follow q (Gumbel-top-1 is a draw from q).
    uncertain, confident = [0.5, 0.25, 0.25], [0.96, 0.02, 0.02]
    scores = scores_for([uncertain, confident] * 3, multilabel)
    inner = BinaryCE() if multilabel else SOFTMAX
    weighted = NegativeSampling(inner, rate=1 / 6, distribution="weighted", temperature=1.0)
    counts = sample_counts(weighted, scores)
    q = weighted.sampling_distribution(scores, make_truth([0] * 6, 3, multilabel=multilabel))
    share = q[[0, 2, 4]].sum()  # P(uncertain) of one draw
    assert share == pytest.approx(1 / (1 + math.exp(-(1.5 * math.log(2) - 0.1957))), abs=1e-3)
    assert abs(counts[[0, 2, 4]].sum() / 600 - share) < 0.06
    uniform = sample_counts(NegativeSampling(inner, rate=1 / 6), scores)
    assert abs(uniform[[0, 2, 4]].sum() / 600 - 0.5) < 0.08


@pytest.mark.parametrize("multilabel", [False, True])
def test_weighted_avoids_tokens_that_look_like_entities(multilabel):
    # an unannotated entity (the model says B with .9: v = -.85, (1 + v)^8 = 2.6e-7) weighs
    # exp(0) against exp(u) of an O-looking token of the same entropy; mu = 0 drops that
    # term and leaves only the (equal) uncertainties
    scores = scores_for([[0.9, 0.05, 0.05], [0.05, 0.9, 0.05]], multilabel)
    inner = BinaryCE() if multilabel else SOFTMAX
    truth = make_truth([0, 0], 3, multilabel=multilabel)
    r = NegativeSampling(inner, distribution="weighted", temperature=1.0).sampling_logits(scores, truth)
    assert r[0] == pytest.approx(U_C, rel=1e-9) and r[1] < 1e-6
    q = NegativeSampling(inner, distribution="weighted", temperature=1.0).sampling_distribution(scores, truth)
    assert q[0] == pytest.approx(math.exp(U_C) / (math.exp(U_C) + math.exp(r[1])), rel=1e-9)
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
    assert schemes_of(NegativeSampling(SoftmaxCE())) == {"softmax"}
    assert schemes_of(NegativeSampling(Focal())) == {"softmax", "ova"}
    assert schemes_of(MoM(NegativeSampling(Focal()))) == {"softmax", "ova"}
    with pytest.raises(ValueError, match="cannot train scheme 'two_task'"):
        check_scheme(NegativeSampling(BinaryCE()), "two_task")
    for bad in (dict(rate=0.0), dict(distribution="topk"), dict(mu=-1.0), dict(epochs=0), dict(total_steps=0), dict(temperature=0.0)):
        with pytest.raises(ValueError, match=rf"^\[components.ner.loss.{next(iter(bad))}\] must "):
            NegativeSampling(**bad).validate("components.ner.loss")
    NegativeSampling(temperature=None).validate("components.ner.loss")


@pytest.mark.parametrize("distribution, multilabel", [("uniform", True), ("weighted", False), ("weighted", True)])
def test_no_nan_on_degenerate_batches(distribution, multilabel):  # the defaults: tests/test_loss_contract.py
    inner = BinaryCE() if multilabel else SoftmaxCE()
    for name, scores, truth in degenerate_cases(multilabel):
        assert_finite(NegativeSampling(inner, distribution=distribution)(scores, truth), scores.shape)
