"""The deep AUC margin loss (DAM) of Yuan et al. 2021, one binary problem per column.

The papers (OVA-AUC eq. 1, AUC-2T eq. 3; x positive, x' negative) print

    AUC_M(w) = E[(m - h(x) + h(x'))^2 | y = 1, y' = -1]                               (1a)
             = min_{a,b} A_1(w) + A_2(w) + max_{alpha >= 0} {2 alpha (m - a + b) - alpha^2}   (1c)
    A_1(w) = E[h^2(x) | y = 1] - a^2,   A_2(w) = E[h^2(x) | y = -1] - b^2,

minimised at a = E[h(x) | y = 1], b = E[h(x') | y = -1]. This module computes, for column k
with h = sigmoid(s), DAM as Yuan et al. 2021 (OVA-AUC's [11], AUC-2T's 2021b) and LibAUC write it:

    L_k = mean_pos (h - a_k)^2 + mean_neg (h - b_k)^2
          + 2 alpha_k (m - mean_pos h + mean_neg h) - alpha_k^2

minimised over the network, a_k and b_k, maximised over alpha_k >= 0, summed with the
weights of ``Truth.columns``. This deviates from (1c) as printed, deliberately: A_1 = E[h^2] -
a^2 is unbounded below in a (so (1c) cannot be minimised over a, b as written), and a margin
term in a, b alone gives the scores no gradient from the margin. At the minimisers a, b (the
class means) both forms are equal, and with alpha at its maximiser max(0, gap) the value is
(1a) whenever gap = m - mean_pos h + mean_neg h >= 0 (below 0 the max over alpha >= 0 drops
the gap term: (1c) is the squared hinge (gap)_+^2, not (1a)'s (gap)^2); ``mode = "batch"``
computes exactly that saddle value. A column with one class only keeps the variance term of that
class (the margin term needs both). ``weighting = "libauc"`` is the form of Yuan et al. 2021
and LibAUC's default AUCMLoss, p the batch's share of positives:

    F = (1-p) (h - a)^2 I[y=1] + p (h - b)^2 I[y=0]
        + 2 alpha (p (1-p) m + p h I[y=0] - (1-p) h I[y=1]) - p (1-p) alpha^2

averaged over all tokens, which is p_k (1 - p_k) L_k. The papers print the prior-free form
("mean"), but the AUC-2T paper's code came from libauc, hence both.
"""
import math
from typing import Literal

from spacy.util import registry
from thinc.backends import get_array_ops

from ..capabilities import SIGMOID, requires
from ..ml.activations import sigmoid
from .base import LossOutput, LossParam, TokenLoss, Truth, check_scale, check_setting, empty_output, masked_counts, safe_inverse

# a starts at the class mean of a perfect scorer under margin 1 (h = 1 on positives), b at
# that of the negatives (0); at a = 0 the positives' variance term would pin all scores to 0
# while Adam moves a by ~lr per step. alpha starts at 0, its lower bound.
AUC_PARAMS = (LossParam("dam_a", 1, 1.0), LossParam("dam_b", 1, 0.0), LossParam("dam_alpha", 1, 0.0))
A, B, ALPHA = (p.name for p in AUC_PARAMS)
WEIGHTINGS = ("mean", "libauc")


@registry.losses("spacy_auc_ner.AUCMargin.v1")
class AUCMargin(TokenLoss):
    """Deep AUC margin loss (settings: README's losses table). a, b, alpha are learned
    parameters on the model's head (mode "learned") or set to their batch optima ("batch")."""

    name = "spacy_auc_ner.AUCMargin.v1"
    needs = requires({SIGMOID})

    def __init__(
        self,
        margin: float = 1.0,
        mode: str = "learned",
        alpha_update: str = "ascent",
        alpha_lr: float = 0.1,
        weighting: Literal["mean", "libauc"] = "mean",
    ):
        self.margin = float(margin)
        self.mode = mode
        self.alpha_update = alpha_update
        self.alpha_lr = float(alpha_lr)
        self.weighting = weighting
        self.params = AUC_PARAMS if mode == "learned" else ()

    def validate(self, key: str = "loss") -> None:
        check_setting(self.mode in ("learned", "batch"), f"{key}.mode", f"must be 'learned' or 'batch', not {self.mode!r}")
        check_setting(
            self.alpha_update in ("ascent", "pesg"),
            f"{key}.alpha_update",
            f"must be 'ascent' or 'pesg', not {self.alpha_update!r}",
        )
        # finite: an infinite margin or alpha_lr (`margin = inf` in a config) drives alpha to inf
        # and the scores' gradient to NaN at the first step
        check_setting(0 < self.margin < math.inf, f"{key}.margin", f"must be > 0 and finite, not {self.margin}")
        check_setting(0 < self.alpha_lr < math.inf, f"{key}.alpha_lr", f"must be > 0 and finite, not {self.alpha_lr}")
        check_scale(self.margin, f"{key}.margin")  # the loss holds margin**2
        # PESG's step moves alpha's distance e to its optimum m + b - a to e (1 - 2 alpha_lr), which
        # shrinks only for alpha_lr < 1: at 1 alpha swaps sides of its optimum every step, above 1
        # it moves further off each step (at 1e38 that overflowed float32, at 4096 with a margin of
        # 2**24 the squared norm of the weighted gradient did). Ascent never reads alpha_lr.
        check_setting(
            self.alpha_update != "pesg" or self.alpha_lr < 1.0, f"{key}.alpha_lr",
            f"must be below 1 for alpha_update 'pesg' (PESG's step settles alpha at its optimum only below 1), not {self.alpha_lr}",
        )
        check_setting(self.weighting in WEIGHTINGS, f"{key}.weighting", f"must be 'mean' or 'libauc', not {self.weighting!r}")

    def finish_update(self, store) -> None:
        """Projection of alpha's ascent step onto alpha >= 0."""
        if self.mode == "learned":
            store.set_param(ALPHA, get_array_ops(store.get_param(ALPHA)).xp.maximum(store.get_param(ALPHA), 0.0))

    def __call__(self, scores, truth: Truth) -> LossOutput:
        if scores.shape[0] == 0:
            return empty_output(scores)
        xp = get_array_ops(scores).xp
        m = self.margin
        h = sigmoid(scores)
        pos, neg, n_pos, n_neg = masked_counts(truth)
        inv_pos = safe_inverse(xp, n_pos)
        inv_neg = safe_inverse(xp, n_neg)
        has_pos = (n_pos > 0).astype(h.dtype)
        has_neg = (n_neg > 0).astype(h.dtype)
        both = has_pos * has_neg
        mean_pos = (pos * h).sum(axis=0) * inv_pos
        mean_neg = (neg * h).sum(axis=0) * inv_neg
        if self.mode == "batch":
            # a, b at their minimisers (the class means), alpha at its maximiser.
            a, b = mean_pos, mean_neg
            alpha = xp.maximum(0.0, m - mean_pos + mean_neg) * both
        else:
            if truth.params is None:
                raise ValueError(
                    "AUCMargin(mode='learned') needs its learned a, b, alpha "
                    "(Truth.params); use mode='batch' to train without them"
                )
            a, b, alpha = (truth.params[k] for k in (A, B, ALPHA))
        gap = m - mean_pos + mean_neg
        per_column = (
            (pos * (h - a) ** 2).sum(axis=0) * inv_pos
            + (neg * (h - b) ** 2).sum(axis=0) * inv_neg
            + both * (2.0 * alpha * gap - alpha**2)
        )
        weights = truth.columns * self.prior_weights(n_pos, n_neg)
        loss = float((weights * per_column).sum())
        d_h = (
            pos * (2.0 * (h - a) * inv_pos)
            + neg * (2.0 * (h - b) * inv_neg)
            + (both * 2.0 * alpha) * (neg * inv_neg - pos * inv_pos)
        ) * weights
        d_scores = (d_h * h * (1.0 - h)).astype(scores.dtype)
        if self.mode == "batch":
            return LossOutput(d_scores, loss)
        d_a = weights * has_pos * -2.0 * (mean_pos - a)
        d_b = weights * has_neg * -2.0 * (mean_neg - b)
        ascent = weights * both * (2.0 * gap - 2.0 * alpha)
        if self.alpha_update == "ascent":
            return LossOutput(d_scores, loss, {A: d_a, B: d_b, ALPHA: -ascent})
        # PESG's closed-form dual step: with a and b in place of the batch means, the
        # derivative in alpha of (1c) as printed, 2 (m - a + b) - 2 alpha.
        step = 2.0 * (m + b - a) - 2.0 * alpha
        active = (weights > 0) * both
        new_alpha = xp.where(active > 0, xp.maximum(0.0, alpha + self.alpha_lr * step), alpha)
        zero = xp.zeros_like(alpha)
        return LossOutput(
            d_scores, loss, {A: d_a, B: d_b, ALPHA: zero}, {ALPHA: new_alpha.astype(alpha.dtype)}
        )

    def prior_weights(self, n_pos, n_neg):
        """(K,) factor on each column's L_k: 1 ("mean"), or p (1 - p) with p the positive
        share of the column's (masked) tokens ("libauc")."""
        xp = get_array_ops(n_pos).xp
        if self.weighting == "mean":
            return xp.ones_like(n_pos)
        p = n_pos * safe_inverse(xp, n_pos + n_neg)
        return p * (1.0 - p)
