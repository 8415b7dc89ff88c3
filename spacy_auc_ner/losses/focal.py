"""Focal loss (Lin et al. 2017): cross entropy scaled by (1 - p_t)^gamma, so that tokens the
model already gets right (most `O` tokens) contribute little:

    FL = -(1 - p_t)^gamma log p_t

summed over the sigmoid columns (``ova``, ``two_task``), one binary problem each, or over the
softmax's gold class, then a mask-weighted mean over tokens; gamma = 0 is BinaryCE or SoftmaxCE.
"""
import math

from spacy.util import registry
from thinc.backends import get_array_ops

from ..capabilities import SIGMOID, SOFTMAX, requires
from ..ml.activations import log_sigmoid, log_softmax, sigmoid
from .base import LossOutput, TokenLoss, Truth, check_float32, check_setting, empty_output, safe_inverse


@registry.losses("spacy_auc_ner.Focal.v1")
class Focal(TokenLoss):
    """Focal loss (Lin et al. 2017) on sigmoid columns or a softmax; gamma = 0 is cross entropy."""

    name = "spacy_auc_ner.Focal.v1"
    needs = requires({SIGMOID, SOFTMAX})

    def __init__(self, gamma: float = 2.0):
        self.gamma = float(gamma)

    def validate(self, key: str = "loss") -> None:
        # finite: an infinite gamma (`gamma = inf` in a config) makes every gradient 0 * inf = NaN
        check_setting(0 <= self.gamma < math.inf, f"{key}.gamma", f"must be >= 0 and finite, not {self.gamma}")
        check_float32(self.gamma, f"{key}.gamma")  # 1e39 is inf in float32: the same NaN

    def __call__(self, scores, truth: Truth) -> LossOutput:
        if scores.shape[0] == 0:
            return empty_output(scores)
        if truth.multilabel:
            per_token, d_per_token = binary_focal(scores, truth.targets, self.gamma)
            per_token = per_token * truth.columns
            d_per_token = d_per_token * truth.columns
        else:
            per_token, d_per_token = softmax_focal(scores, truth.targets, self.gamma)
        xp = get_array_ops(scores).xp
        w = truth.mask[:, None] * safe_inverse(xp, truth.mask.sum())
        loss = float((per_token * w).sum())
        return LossOutput((d_per_token * w).astype(scores.dtype), loss)


def _pow(xp, base, exponent: float):
    """base ** exponent with 0 ** 0 == 1 and no warning for 0 ** negative (gives 0: the
    callers multiply it by a factor that vanishes at least as fast)."""
    if exponent >= 0:
        return base**exponent
    safe = xp.where(base > 0, base, 1.0)
    return xp.where(base > 0, safe**exponent, 0.0)


def binary_focal(scores, targets, gamma: float):
    """(N, K) focal loss of each sigmoid column and its derivative wrt the scores.

    With sign = 2y - 1, p_t = sigmoid(sign * s) and dp_t/ds = sign p_t (1 - p_t):
    dFL/ds = sign [gamma p_t (1 - p_t)^gamma log p_t - (1 - p_t)^(gamma + 1)].
    """
    xp = get_array_ops(scores).xp
    sign = 2.0 * targets - 1.0
    z = sign * scores
    p_t = sigmoid(z)
    q = sigmoid(-z)  # 1 - p_t, without cancellation
    log_p_t = log_sigmoid(z)
    q_gamma = _pow(xp, q, gamma)
    loss = -q_gamma * log_p_t
    grad = sign * (gamma * p_t * q_gamma * log_p_t - q_gamma * q)
    return loss, grad


def softmax_focal(scores, targets, gamma: float):
    """(N, 1) focal loss of the gold class under a softmax and its (N, K) derivative.

    With p_t the gold probability and dp_t/ds_j = p_t (y_j - p_j):
    dFL/ds_j = [gamma (1 - p_t)^(gamma - 1) p_t log p_t - (1 - p_t)^gamma] (y_j - p_j).
    Rows without a gold class (all-zero targets) get 0.
    """
    xp = get_array_ops(scores).xp
    logp = log_softmax(scores)
    p = xp.exp(logp)
    has_gold = targets.sum(axis=1, keepdims=True)
    log_p_t = (targets * logp).sum(axis=1, keepdims=True)
    p_t = xp.exp(log_p_t)
    q = (p * (1.0 - targets)).sum(axis=1, keepdims=True)  # 1 - p_t, without cancellation
    loss = -_pow(xp, q, gamma) * log_p_t * has_gold
    factor = gamma * _pow(xp, q, gamma - 1.0) * p_t * log_p_t - _pow(xp, q, gamma)
    grad = factor * (targets - p) * has_gold
    return loss, grad
