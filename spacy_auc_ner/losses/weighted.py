"""Weighted cross entropy with the MoM paper's class weightings (WCE-1, WCE-2), from the gold
counts s_k of the training data, s = sum_k s_k, K classes (counts clipped to at least 1):

    "inverse": w_k = s / (K s_k)
    "log":     w_k = log10((s - s_k) / s_k + beta)   (Li et al. 2020, beta >= 1)

The loss is sum_i w_i l_i / sum_i w_i, as PyTorch's ``CrossEntropyLoss(weight=...)``; every
weight is 1 before ``initialize``. WCE-1 is the paper's "inverse class frequency" s / s_k
divided by K (mean 1 on balanced classes), a factor that this normalisation cancels.
"""
import math
from typing import Optional

from spacy.util import registry
from thinc.backends import get_array_ops

from ..capabilities import ONE_CLASS, SIGMOID, SOFTMAX, requires
from .base import LossOutput, TokenLoss, Truth, check_setting, empty_output
from .crossentropy import BinaryCE, SoftmaxCE


def class_weights(class_counts, form: str, beta: float = 1.0):
    """(K,) class weights from (K,) gold counts; see the module docstring."""
    xp = get_array_ops(class_counts).xp
    counts = xp.maximum(class_counts.astype("f8"), 1.0)
    total = counts.sum()
    if form == "inverse":
        weights = total / (counts.shape[0] * counts)
    else:
        weights = xp.log10((total - counts) / counts + beta)
    return weights.astype(class_counts.dtype)


@registry.losses("spacy_auc_ner.WeightedCE.v1")
class WeightedCE(TokenLoss):
    """Cross entropy with each token weighted by its gold class: `form` "inverse"
    (s / (K s_k)) or "log" (log10((s - s_k)/s_k + beta)); counts from the training data."""

    name = "spacy_auc_ner.WeightedCE.v1"
    # one class per token: two_task's targets are not (a token can be ENTITY and BEGIN)
    needs = requires({SIGMOID, SOFTMAX}, {ONE_CLASS})

    def __init__(self, form: str = "inverse", beta: float = 1.0):
        self.form = form
        self.beta = float(beta)
        self.weights: Optional[object] = None
        self._softmax = SoftmaxCE()
        self._binary = BinaryCE()

    def validate(self, key: str = "loss") -> None:
        check_setting(self.form in ("inverse", "log"), f"{key}.form", f"must be 'inverse' or 'log', not {self.form!r}")
        # finite: an infinite beta (`beta = inf` in a config) makes every weight inf, the loss inf / inf = NaN
        check_setting(1.0 <= self.beta < math.inf, f"{key}.beta", f"must be >= 1 (so that weights are >= 0) and finite, not {self.beta}")

    def initialize(self, class_counts) -> None:
        self.weights = class_weights(class_counts, self.form, self.beta)

    def __call__(self, scores, truth: Truth) -> LossOutput:
        if scores.shape[0] == 0:
            return empty_output(scores)
        if self.weights is None:
            token_weight = truth.mask
        else:
            xp = get_array_ops(scores).xp
            weights = xp.asarray(self.weights).astype(scores.dtype)
            if weights.shape[0] != scores.shape[1]:
                raise ValueError(
                    f"[loss] WeightedCE was initialised with {weights.shape[0]} class counts "
                    f"but the scores have {scores.shape[1]} columns"
                )
            token_weight = truth.mask * (truth.targets * weights).sum(axis=1)
        inner = self._binary if truth.multilabel else self._softmax
        return inner(scores, truth.with_mask(token_weight))
