"""Numerically stable activations of logits on numpy or cupy arrays: none takes exp of a large
positive number, so extreme scores give exact 0/1 or finite logs, never NaN.
"""
from thinc.backends import get_array_ops
from thinc.types import Floats2d


def sigmoid(scores: Floats2d) -> Floats2d:
    """1 / (1 + exp(-s))."""
    xp = get_array_ops(scores).xp
    # exp of a non-positive number only: no overflow warnings for large |scores|
    e = xp.exp(-xp.abs(scores))
    return xp.where(scores >= 0, 1.0 / (1.0 + e), e / (1.0 + e)).astype(scores.dtype)


def log_sigmoid(scores: Floats2d) -> Floats2d:
    """log sigmoid(s) = min(s, 0) - log(1 + exp(-|s|))."""
    xp = get_array_ops(scores).xp
    return (xp.minimum(scores, 0) - xp.log1p(xp.exp(-xp.abs(scores)))).astype(scores.dtype)


def log_softmax(scores: Floats2d) -> Floats2d:
    """Row-wise log softmax, shifted by the row maximum."""
    xp = get_array_ops(scores).xp
    shifted = scores - scores.max(axis=1, keepdims=True)
    return shifted - xp.log(xp.exp(shifted).sum(axis=1, keepdims=True))
