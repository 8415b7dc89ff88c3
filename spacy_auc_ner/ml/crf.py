"""Linear-chain CRF maths over BIO labels on padded arrays: emissions ``E`` (B, T, K), ``mask``
(B, T) True on real tokens (every sentence has one), ``trans[i, j]`` (label i followed by j),
``start``, ``end``. Loops run over positions only, vectorised through numpy or cupy; forbidden
BIO moves are -inf (:func:`constrain`), and every function is NaN-free with them.
"""
from functools import lru_cache
from typing import Any, NamedTuple, Optional

import numpy
from thinc.backends import get_array_ops
from thinc.util import is_cupy_array

from ..labels import bio_layout


class BIOConstraints(NamedTuple):
    """Allowed moves between BIO labels: ``allowed[i, j]`` (i then j), ``start[j]`` (j first),
    ``end[i]`` (i last), as boolean numpy arrays."""

    allowed: numpy.ndarray
    start: numpy.ndarray
    end: numpy.ndarray


def bio_constraints(bio_type, bio_begin) -> BIOConstraints:
    """The valid BIO moves between labels laid out as :func:`spacy_auc_ner.labels.bio_layout`
    gives them: I-X only after B-X or I-X (so never after O, B-Y or I-Y, and never
    first); everything else is allowed, any label may end a sentence."""
    bio_type = numpy.asarray(bio_type)
    is_inside = (bio_type >= 0) & ~numpy.asarray(bio_begin, dtype=bool)
    allowed = ~is_inside[None, :] | (bio_type[:, None] == bio_type[None, :])
    return BIOConstraints(allowed, ~is_inside, numpy.ones(len(bio_type), dtype=bool))


@lru_cache(maxsize=None)
def bio_constraints_of(n_labels: int) -> BIOConstraints:
    """The BIO constraints of `n_labels` labels (read-only), built once: a pipe's labels are fixed
    for its lifetime, so every step and batch shares them."""
    constraints = bio_constraints(*bio_layout(n_labels))
    for array in constraints:
        array.setflags(write=False)
    return constraints


def constrain(trans, start, end, constraints: Optional[BIOConstraints]):
    """The scores with -inf on forbidden moves (unchanged when `constraints` is None)."""
    if constraints is None:
        return trans, start, end
    xp = get_array_ops(trans).xp
    dtype = trans.dtype
    forbid = lambda ok: xp.asarray(numpy.where(ok, 0.0, -numpy.inf), dtype=dtype)  # noqa: E731
    return (
        trans + forbid(constraints.allowed),
        start + forbid(constraints.start),
        end + forbid(constraints.end),
    )


def pad(flat, lengths):
    """(N, K) rows of the concatenated sentences -> (B, T, K) zero-padded and the (B, T)
    mask, for the sentences with at least one token (empty ones are dropped)."""
    xp = get_array_ops(flat).xp
    lengths = host_lengths(lengths)
    offsets = numpy.cumsum(lengths) - lengths
    keep = lengths > 0
    lengths, offsets = lengths[keep], offsets[keep]
    T = int(lengths.max()) if lengths.size else 0
    positions = numpy.arange(T, dtype="i")
    mask = positions[None, :] < lengths[:, None]
    index = numpy.where(mask, offsets[:, None] + positions[None, :], 0)
    mask_x = xp.asarray(mask)
    padded = flat[xp.asarray(index)] * mask_x[:, :, None].astype(flat.dtype)
    return padded, mask_x


def host_lengths(lengths) -> numpy.ndarray:
    """Tokens per sentence as a host int array (from a list, numpy or cupy array)."""
    return numpy.asarray(lengths.get() if is_cupy_array(lengths) else lengths, dtype="i")


def unpad(padded, mask):
    """Inverse of :func:`pad`: the real rows, in sentence order."""
    return padded[mask]


def logsumexp(x, axis: int):
    """log(sum(exp(x))) along `axis`, exact for rows of -inf (gives -inf, not NaN)."""
    xp = get_array_ops(x).xp
    m = x.max(axis=axis, keepdims=True)
    m = xp.where(xp.isfinite(m), m, 0.0).astype(x.dtype)
    with numpy.errstate(divide="ignore"):
        out = xp.log(xp.exp(x - m).sum(axis=axis, keepdims=True)) + m
    return out.squeeze(axis)


def log_probability(x):
    """`x`, a log-probability up to float32 rounding, capped at 0: at large scores (|E| ~ 1e7) the
    rounding of alpha + beta - log Z exceeds 88 and exp overflowed to an infinite gradient."""
    return get_array_ops(x).xp.minimum(x, 0.0)


def forward_backward(E, mask, trans, start, end):
    """Forward and backward log-scores (B, T, K) and the log-partition (B,): ``alpha[b, t, k]``
    of the label prefixes of sentence b ending in k at t, ``beta[b, t, k]`` of the suffixes after
    t given k (end score included); past a sentence's end both carry their last real value."""
    xp = get_array_ops(E).xp
    B, T, K = E.shape
    alpha = xp.empty_like(E)
    beta = xp.empty_like(E)
    alpha[:, 0] = start[None, :] + E[:, 0]
    for t in range(1, T):
        step = logsumexp(alpha[:, t - 1, :, None] + trans[None], axis=1) + E[:, t]
        alpha[:, t] = xp.where(mask[:, t, None], step, alpha[:, t - 1])
    beta[:, T - 1] = end[None, :]
    for t in range(T - 2, -1, -1):
        step = logsumexp(trans[None] + (E[:, t + 1] + beta[:, t + 1])[:, None, :], axis=2)
        beta[:, t] = xp.where(mask[:, t + 1, None], step, beta[:, t + 1])
    log_z = logsumexp(alpha[:, T - 1] + end[None, :], axis=1)
    return alpha, beta, log_z


def marginals(E, mask, trans, start, end):
    """(B, T, K) posterior probability of each label at each real position (0 on padding)."""
    xp = get_array_ops(E).xp
    alpha, beta, log_z = forward_backward(E, mask, trans, start, end)
    finite_z = xp.where(xp.isfinite(log_z), log_z, 0.0).astype(E.dtype)
    return xp.exp(log_probability(alpha + beta - finite_z[:, None, None])) * mask[:, :, None]


class CRFGradients(NamedTuple):
    """Weighted per-sentence negative log-likelihood (B,) and the gradients of its sum
    with respect to the emissions (B, T, K), transitions (K, K), start and end (K,)."""

    nll: Any
    d_E: Any
    d_trans: Any
    d_start: Any
    d_end: Any


def _expected_counts(E, mask, trans, scores, weights):
    """Weighted posterior expectations of the label (B, T, K), pair (K, K), first and last
    (K,) indicators, from the :func:`forward_backward` scores of `E`."""
    xp = get_array_ops(E).xp
    alpha, beta, log_z = scores
    # alpha + beta is -inf wherever log Z is (no path), so z = 0 there gives exp(-inf) = 0.
    z = xp.where(xp.isfinite(log_z), log_z, 0.0).astype(E.dtype)
    unary = xp.exp(log_probability(alpha + beta - z[:, None, None])) * (mask * weights[:, None])[:, :, None]
    # pairs (t-1, t) for t >= 1: alpha[t-1, i] + trans[i, j] + E[t, j] + beta[t, j] - log Z
    pair_log = (
        alpha[:, :-1, :, None]
        + trans[None, None]
        + (E[:, 1:] + beta[:, 1:])[:, :, None, :]
        - z[:, None, None, None]
    )
    pair_w = (mask[:, 1:] * weights[:, None])[:, :, None, None]
    pairs = (xp.exp(log_probability(pair_log)) * pair_w).sum(axis=(0, 1))
    last = mask.sum(axis=1) - 1
    return unary, pairs, unary[:, 0].sum(axis=0), unary[xp.arange(E.shape[0]), last].sum(axis=0)


def crf_nll(E, mask, gold, trans, start, end, weights=None) -> CRFGradients:
    """Negative log-likelihood of the gold labels (B, T) under the CRF, and its gradients. A
    gold label of -1 is unknown: the likelihood sums over every label there, so it constrains
    nothing; a sentence whose gold has no path (a forbidden move) or no known label gets NLL 0 and
    no gradient. `weights` (B,) scale each sentence's contribution (default 1)."""
    xp = get_array_ops(E).xp
    if weights is None:
        weights = xp.ones(E.shape[0], dtype=E.dtype)
    known = (gold >= 0) & mask
    onehot = gold[:, :, None] == xp.arange(E.shape[2])[None, None, :]
    E_gold = E + xp.where(~known[:, :, None] | onehot, 0.0, -xp.inf).astype(E.dtype)
    scores_gold = forward_backward(E_gold, mask, trans, start, end)
    scores_all = forward_backward(E, mask, trans, start, end)
    feasible = xp.isfinite(scores_gold[2]) & known.any(axis=1)
    w = (weights * feasible).astype(E.dtype)
    nll = w * (scores_all[2] - xp.where(feasible, scores_gold[2], 0.0))
    model = _expected_counts(E, mask, trans, scores_all, w)
    data = _expected_counts(E_gold, mask, trans, scores_gold, w)
    return CRFGradients(nll.astype(E.dtype), *(m - d for m, d in zip(model, data)))


def viterbi(E, mask, trans, start, end):
    """Best label sequence per sentence: (B, T) labels (padding repeats the last) and (B,) scores."""
    xp = get_array_ops(E).xp
    B, T, K = E.shape
    identity = xp.broadcast_to(xp.arange(K, dtype="i")[None, :], (B, K))
    back = xp.empty((B, T, K), dtype="i")
    back[:, 0] = identity
    score = start[None, :] + E[:, 0]
    for t in range(1, T):
        cand = score[:, :, None] + trans[None]
        prev = cand.argmax(axis=1).astype("i")
        step = cand.max(axis=1) + E[:, t]
        on = mask[:, t, None]
        score = xp.where(on, step, score)
        back[:, t] = xp.where(on, prev, identity)
    final = score + end[None, :]
    path = xp.empty((B, T), dtype="i")
    path[:, T - 1] = final.argmax(axis=1)
    rows = xp.arange(B)
    for t in range(T - 1, 0, -1):
        path[:, t - 1] = back[rows, t, path[:, t]]
    return path, final.max(axis=1)


def posteriors(emissions, lengths, trans, start, end, constraints: Optional[BIOConstraints] = None):
    """(N, K) posterior label probabilities of the concatenated tokens of a batch."""
    xp = get_array_ops(emissions).xp
    if emissions.shape[0] == 0:
        return xp.zeros_like(emissions)
    E, mask = pad(emissions, lengths)
    # float32 rounding can push exp(alpha + beta - log Z) a hair above 1
    return xp.minimum(unpad(marginals(E, mask, *constrain(trans, start, end, constraints)), mask), 1.0)


def best_path_log_prob(emissions, lengths, trans, start, end, constraints: Optional[BIOConstraints] = None):
    """(B,) log-probability of each sentence's most probable label sequence (its Viterbi score
    minus the log-partition), for the sentences of the concatenated (N, K) `emissions` that have
    a token (empty ones are dropped, as :func:`pad` drops them). Capped at 0: float32 rounding
    can leave the best path's score a hair above log Z."""
    xp = get_array_ops(emissions).xp
    if emissions.shape[0] == 0:
        return xp.zeros((0,), dtype=emissions.dtype)
    E, mask = pad(emissions, lengths)
    trans, start, end = constrain(trans, start, end, constraints)
    _, best = viterbi(E, mask, trans, start, end)
    _, _, log_z = forward_backward(E, mask, trans, start, end)
    return xp.minimum(best - log_z, 0.0)
