"""Self-adjusting dice loss (Li et al. 2020, "Dice Loss for Data-imbalanced NLP Tasks"):
q = (1 - p)^alpha p down-weights easy examples, delta smooths, c_k are the column weights:

    token level (their per-example DSC):
        L = sum_k c_k mean_i [1 - (2 q_ik y_ik + delta) / (q_ik + y_ik + delta)]
    batch level (the set form their released code trains with, the default):
        L = sum_k c_k [1 - (2 sum_i q_ik y_ik + delta) / (sum_i q_ik + sum_i y_ik + delta)]

(The MoM paper's eq. 6 prints the ratio itself, not 1 minus it, and (1 - p)^epsilon in place
of q in the denominator: a misprint of Li et al.'s form, which is the one followed here.)
alpha = delta = 0.01 by default: with alpha = 1, q = 0 at p = 1 as at p = 0, and per-example
dice scored F1 0.03 on NCBI-disease (100 sentences) against 0.32 for the default, 0.34 for CE.
"""
import math

from spacy.util import registry
from thinc.backends import get_array_ops

from ..capabilities import SIGMOID, SOFTMAX, requires
from ..ml.activations import log_softmax, sigmoid
from .base import LossOutput, TokenLoss, Truth, check_float32, check_scale, check_setting, empty_output, safe_inverse
from .focal import _pow


@registry.losses("spacy_auc_ner.Dice.v1")
class Dice(TokenLoss):
    """Self-adjusting dice loss of Li et al. 2020 per column, at `level` "token" or "batch"."""

    name = "spacy_auc_ner.Dice.v1"
    needs = requires({SIGMOID, SOFTMAX})

    def __init__(self, alpha: float = 0.01, delta: float = 0.01, level: str = "batch"):
        self.alpha = float(alpha)
        self.delta = float(delta)
        self.level = level

    def validate(self, key: str = "loss") -> None:
        # finite: an infinite alpha or delta (`alpha = inf` in a config) makes the ratio inf / inf = NaN
        check_setting(0 <= self.alpha < math.inf, f"{key}.alpha", f"must be >= 0 and finite, not {self.alpha}")
        check_setting(0 < self.delta < math.inf, f"{key}.delta", f"must be > 0 and finite (it keeps the ratio finite), not {self.delta}")
        # an exponent: 1e39 is inf in float32, the same NaN
        check_float32(self.alpha, f"{key}.alpha")
        # added to q + y (<= 2 a token): at float32's largest, 2 y delta was inf and the gradient inf / inf
        check_scale(self.delta, f"{key}.delta")
        check_setting(self.level in ("token", "batch"), f"{key}.level", f"must be 'token' or 'batch', not {self.level!r}")

    def __call__(self, scores, truth: Truth) -> LossOutput:
        if scores.shape[0] == 0:
            return empty_output(scores)
        xp = get_array_ops(scores).xp
        a, d = self.alpha, self.delta
        y = truth.targets
        p = sigmoid(scores) if truth.multilabel else xp.exp(log_softmax(scores))
        one_minus_p = sigmoid(-scores) if truth.multilabel else 1.0 - p
        q = _pow(xp, one_minus_p, a) * p
        w = truth.mask[:, None]
        c = truth.columns
        if self.level == "token":
            den = q + y + d
            per = 1.0 - (2.0 * q * y + d) / den
            inv_n = safe_inverse(xp, truth.mask.sum())
            loss = float((per * w * inv_n * c).sum())
            d_q = -(2.0 * y * y + 2.0 * y * d - d) / den**2 * w * inv_n * c
        else:
            num = 2.0 * (q * y * w).sum(axis=0) + d
            den = (q * w).sum(axis=0) + (y * w).sum(axis=0) + d
            loss = float((c * (1.0 - num / den)).sum())
            d_q = -w * (2.0 * y * den - num) / den**2 * c
        if truth.multilabel:
            # dq/ds = q (1 - (1 + alpha) p) for p = sigmoid(s)
            d_scores = d_q * q * (1.0 - (1.0 + a) * p)
        else:
            # h_k = p_k dq_k/dp_k; ds_j = h_j dq_j - p_j sum_k h_k dq_k
            h = _pow(xp, one_minus_p, a - 1.0) * p * (1.0 - (1.0 + a) * p)
            g = d_q * h
            d_scores = g - p * g.sum(axis=1, keepdims=True)
        return LossOutput(d_scores.astype(scores.dtype), loss)
