"""The CRF maths against brute-force enumeration of every label sequence, finite-difference
gradients, and the BIO constraints."""
import itertools

import numpy
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from spacy_auc_ner.labels import bio_layout
from spacy_auc_ner.losses import CRFLoss, Truth
from spacy_auc_ner.ml.crf import (
    bio_constraints,
    constrain,
    crf_nll,
    forward_backward,
    pad,
    posteriors,
    unpad,
    viterbi,
)

# K = 5: O, B-0, I-0, B-1, I-1
O, B0, I0, B1, I1 = range(5)


def random_crf(seed, K=5, lengths=(4, 2, 3), scale=1.0):
    rng = numpy.random.default_rng(seed)
    B, T = len(lengths), max(lengths)
    E = rng.normal(scale=scale, size=(B, T, K))
    mask = numpy.arange(T)[None, :] < numpy.asarray(lengths)[:, None]
    E = E * mask[:, :, None]
    trans, start, end = rng.normal(size=(K, K)), rng.normal(size=K), rng.normal(size=K)
    return E, mask, trans, start, end


def path_score(seq, E_b, trans, start, end):
    s = start[seq[0]] + E_b[0, seq[0]] + end[seq[-1]]
    return s + sum(trans[a, b] + E_b[t + 1, b] for t, (a, b) in enumerate(zip(seq[:-1], seq[1:])))


def all_paths(K, L):
    return list(itertools.product(range(K), repeat=L))


def is_valid(seq, constraints):
    return (
        constraints.start[seq[0]]
        and constraints.end[seq[-1]]
        and all(constraints.allowed[a, b] for a, b in zip(seq[:-1], seq[1:]))
    )


def test_bio_constraints_by_hand():
    c = bio_constraints(*bio_layout(5))
    allowed = {(a, b) for a in range(5) for b in range(5) if c.allowed[a, b]}
    forbidden = {(O, I0), (O, I1), (B0, I1), (I0, I1), (B1, I0), (I1, I0)}
    assert allowed == {(a, b) for a in range(5) for b in range(5)} - forbidden
    assert c.start.tolist() == [True, True, False, True, False]
    assert c.end.all()
    with pytest.raises(ValueError, match="1 \\+ 2 \\* n_types"):
        bio_layout(4)


@pytest.mark.parametrize("constrained", [False, True])
def test_log_partition_equals_brute_force(constrained):
    E, mask, *scores = random_crf(0)
    c = bio_constraints(*bio_layout(5)) if constrained else None
    trans, start, end = constrain(*scores, c)
    _, _, log_z = forward_backward(E, mask, trans, start, end)
    for b, L in enumerate(mask.sum(axis=1)):
        paths = [p for p in all_paths(5, L) if c is None or is_valid(p, c)]
        brute = numpy.logaddexp.reduce([path_score(p, E[b], trans, start, end) for p in paths])
        assert log_z[b] == pytest.approx(brute, rel=1e-10)


def test_nll_equals_brute_force_with_unknown_tokens():
    E, mask, *scores = random_crf(1)
    c = bio_constraints(*bio_layout(5))
    trans, start, end = constrain(*scores, c)
    gold = numpy.asarray([[B0, I0, O, B1], [O, -1, -1, -1], [-1, B1, -1, -1]])
    out = crf_nll(E, mask, gold, trans, start, end)
    for b, L in enumerate(mask.sum(axis=1)):
        paths = [p for p in all_paths(5, L) if is_valid(p, c)]
        total = numpy.logaddexp.reduce([path_score(p, E[b], trans, start, end) for p in paths])
        agree = [p for p in paths if all(g < 0 or g == y for g, y in zip(gold[b], p))]
        numer = numpy.logaddexp.reduce([path_score(p, E[b], trans, start, end) for p in agree])
        assert out.nll[b] == pytest.approx(total - numer, rel=1e-10)
    # sentence 0 has a single gold path: its NLL is log Z minus that path's score
    assert out.nll[0] == pytest.approx(
        forward_backward(E, mask, trans, start, end)[2][0] - path_score(gold[0], E[0], trans, start, end)
    )


def test_nll_gradients_match_finite_differences():
    E, mask, trans, start, end = random_crf(2)
    c = bio_constraints(*bio_layout(5))
    gold = numpy.asarray([[B0, I0, O, B1], [O, B1, -1, -1], [-1, I0, O, -1]])
    weights = numpy.asarray([1.0, 0.5, 2.0])

    def total(E_, trans_, start_, end_):
        return crf_nll(E_, mask, gold, *constrain(trans_, start_, end_, c), weights).nll.sum()

    out = crf_nll(E, mask, gold, *constrain(trans, start, end, c), weights)
    eps = 1e-6
    for arr, grad, idx in (
        (E, out.d_E * mask[:, :, None], [(0, 1, B0), (0, 2, I0), (1, 1, O), (2, 0, B0), (2, 2, I1)]),
        (trans, out.d_trans, [(O, O), (B0, I0), (I0, O), (O, B1), (B1, I1)]),
        (start, out.d_start, [(O,), (B0,), (B1,)]),
        (end, out.d_end, [(O,), (I0,), (B1,)]),
    ):
        for i in idx:
            args = [E, trans, start, end]
            k = next(j for j, a in enumerate(args) if a is arr)
            plus, minus = arr.copy(), arr.copy()
            plus[i] += eps
            minus[i] -= eps
            numeric = (total(*args[:k], plus, *args[k + 1 :]) - total(*args[:k], minus, *args[k + 1 :])) / (2 * eps)
            assert grad[i] == pytest.approx(numeric, abs=1e-6), (k, i)
    # forbidden moves get no gradient; padding gets none
    assert out.d_trans[O, I0] == 0 and out.d_start[I0] == 0
    assert (out.d_E[~mask] == 0).all()


def test_infeasible_or_unknown_gold_gives_zero_and_no_nan():
    E, mask, *scores = random_crf(3)
    trans, start, end = constrain(*scores, bio_constraints(*bio_layout(5)))
    # sentence 0: O then I-0 is forbidden; sentence 1: no known label
    gold = numpy.asarray([[O, I0, O, O], [-1, -1, -1, -1], [B1, I1, O, -1]])
    out = crf_nll(E, mask, gold, trans, start, end)
    assert out.nll[0] == 0 and out.nll[1] == 0 and out.nll[2] > 0
    assert (out.d_E[:2] == 0).all()
    for arr in out:
        assert numpy.isfinite(arr).all()


@pytest.mark.parametrize("constrained", [False, True])
def test_viterbi_equals_brute_force_argmax(constrained):
    E, mask, *scores = random_crf(4, lengths=(5, 1, 3))
    c = bio_constraints(*bio_layout(5)) if constrained else None
    trans, start, end = constrain(*scores, c)
    path, best = viterbi(E, mask, trans, start, end)
    for b, L in enumerate(mask.sum(axis=1)):
        paths = [p for p in all_paths(5, L) if c is None or is_valid(p, c)]
        brute = max(paths, key=lambda p: path_score(p, E[b], trans, start, end))
        assert tuple(path[b, :L]) == brute
        assert best[b] == pytest.approx(path_score(brute, E[b], trans, start, end))


def test_posteriors_equal_brute_force_and_sum_to_one():
    E, mask, trans, start, end = random_crf(5, lengths=(3, 2))
    c = bio_constraints(*bio_layout(5))
    lengths = mask.sum(axis=1)
    flat = unpad(E, mask)
    probs = posteriors(flat, lengths, trans, start, end, c)
    assert probs.sum(axis=1) == pytest.approx(numpy.ones(flat.shape[0]))
    t_, s_, e_ = constrain(trans, start, end, c)
    paths = [p for p in all_paths(5, 3) if is_valid(p, c)]
    w = numpy.exp([path_score(p, E[0], t_, s_, e_) for p in paths])
    brute = sum(wi * (numpy.asarray(p)[:, None] == numpy.arange(5)) for wi, p in zip(w, paths)) / w.sum()
    assert probs[:3] == pytest.approx(brute)


def test_pad_unpad_round_trip_skips_empty_docs():
    flat = numpy.arange(12.0).reshape(6, 2)
    padded, mask = pad(flat, numpy.asarray([2, 0, 3, 1]))
    assert padded.shape == (3, 3, 2)
    assert mask.tolist() == [[True, True, False], [True, True, True], [True, False, False]]
    assert (padded[0, 2] == 0).all()
    assert (unpad(padded, mask) == flat).all()


@settings(max_examples=60, deadline=None)
@given(
    seed=st.integers(0, 10_000),
    n_types=st.integers(1, 3),
    lengths=st.lists(st.integers(1, 12), min_size=1, max_size=5),
    scale=st.sampled_from([0.1, 3.0, 50.0]),
)
def test_viterbi_never_outputs_forbidden_moves(seed, n_types, lengths, scale):
    K = 1 + 2 * n_types
    rng = numpy.random.default_rng(seed)
    E, mask = pad(rng.normal(scale=scale, size=(sum(lengths), K)).astype("f"), numpy.asarray(lengths))
    # transitions that reward the forbidden moves, so only the constraints stop them
    c = bio_constraints(*bio_layout(K))
    trans = numpy.where(c.allowed, 0.0, 100.0).astype("f") + rng.normal(size=(K, K)).astype("f")
    start = numpy.where(c.start, 0.0, 100.0).astype("f")
    path, _ = viterbi(E, mask, *constrain(trans, start, numpy.zeros(K, "f"), c))
    for b, L in enumerate(lengths):
        assert is_valid(tuple(path[b, :L]), c)


def crf_truth(gold, lengths, K, params):
    gold = numpy.asarray(gold)
    targets = (gold[:, None] == numpy.arange(K)[None, :]).astype("f")
    return Truth(targets, (gold >= 0).astype("f"), numpy.ones(K, "f"), numpy.asarray(lengths, "i"), False, params)


def test_crf_loss_is_mean_sentence_nll_with_param_gradients():
    rng = numpy.random.default_rng(6)
    K, lengths = 5, [3, 0, 2, 2]
    scores = rng.normal(size=(7, K)).astype("f")
    params = {k: rng.normal(size=s).astype("f") for k, s in (("crf_trans", (K, K)), ("crf_start", K), ("crf_end", K))}
    gold = [B0, I0, O, O, B1, -1, -1]  # the last sentence has no known label
    out = CRFLoss()(scores, crf_truth(gold, lengths, K, params))
    E, mask = pad(scores, numpy.asarray(lengths))
    c = bio_constraints(*bio_layout(K))
    expected = crf_nll(
        E.astype("f8"), mask, pad(numpy.asarray(gold)[:, None], numpy.asarray(lengths))[0][:, :, 0] * mask - ~mask,
        *constrain(*(params[k].astype("f8") for k in ("crf_trans", "crf_start", "crf_end")), c),
    ).nll
    assert out.loss == pytest.approx(expected.sum() / 2, rel=1e-5)
    assert out.d_scores.shape == scores.shape and out.d_scores.dtype == scores.dtype
    assert (out.d_scores[5:] == 0).all()
    assert set(out.d_params) == {"crf_trans", "crf_start", "crf_end"} and out.d_params["crf_trans"].shape == (K, K)
    eps = 1e-3
    for i in [(0, B0), (1, I0), (4, O)]:
        plus, minus = scores.astype("f8"), scores.astype("f8")
        plus[i] += eps
        minus[i] -= eps
        f = lambda s: CRFLoss()(s, crf_truth(gold, lengths, K, {k: v.astype("f8") for k, v in params.items()})).loss  # noqa: E731
        assert out.d_scores[i] == pytest.approx((f(plus) - f(minus)) / (2 * eps), abs=1e-4)


def test_crf_loss_empty_inputs():
    K = 3
    params = {"crf_trans": numpy.zeros((K, K), "f"), "crf_start": numpy.zeros(K, "f"), "crf_end": numpy.zeros(K, "f")}
    out = CRFLoss()(numpy.zeros((0, K), "f"), crf_truth([], [0, 0], K, params))
    assert out.loss == 0.0 and out.d_scores.shape == (0, K)
    out = CRFLoss()(numpy.ones((2, K), "f"), crf_truth([-1, -1], [2], K, params))
    assert out.loss == 0.0 and (out.d_scores == 0).all()
    with pytest.raises(ValueError, match="Truth.params"):
        CRFLoss()(numpy.ones((2, K), "f"), crf_truth([0, 0], [2], K, None))
