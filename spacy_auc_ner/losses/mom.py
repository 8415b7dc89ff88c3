"""MoM (majority or minority) learning, Nemoto et al.: any token loss plus the same loss over
the tokens whose gold label is `O` only,

    L_MoM = lambda L(all tokens) + (1 - lambda) L(gold-O tokens),

so that predicting an entity on an `O` token costs extra: a pseudo-binary O-vs-entity task on
top of the usual one. Each term is normalised as the inner loss normalises (for the cross
entropies: the mean over the tokens of that term). Needs an `O` column (``softmax``, ``ova``).
"""
from typing import Optional

from spacy.util import registry

from .base import LossOutput, LossWrapper, TokenLoss, Truth, empty_output, require, weighted_sum
from .crossentropy import SoftmaxCE


class MoM(LossWrapper):
    name = "spacy_auc_ner.MoM.v1"
    own_schemes = ("softmax", "ova")

    def __init__(self, loss: TokenLoss, lam: float = 0.2):
        super().__init__(loss=loss)
        self.loss = loss
        self.lam = float(lam)

    def validate_own(self, key: str) -> None:
        require(0.0 <= self.lam <= 1.0, f"{key}.lam", f"must be in [0, 1], not {self.lam}")

    def __call__(self, scores, truth: Truth) -> LossOutput:
        if scores.shape[0] == 0:
            return empty_output(scores)
        if truth.o_column < 0:
            raise ValueError(f"[loss] {self.name} needs an O column; the scheme has none")
        o_mask = truth.mask * truth.targets[:, truth.o_column]
        full = self.loss(scores, truth)
        majority = self.loss(scores, truth.with_mask(o_mask.astype(truth.mask.dtype)))
        return weighted_sum([full, majority], [self.lam, 1.0 - self.lam])


@registry.losses("spacy_auc_ner.MoM.v1")
def make_mom(loss: Optional[TokenLoss] = None, lam: float = 0.2) -> MoM:
    """MoM learning: lam * loss(all tokens) + (1 - lam) * loss(gold-O tokens). `loss` is any
    token loss for the scheme (default softmax cross entropy). The paper tuned lam in
    0.04-0.45 for sequence labelling; the default 0.2 is about the median of its choices."""
    return MoM(loss if loss is not None else SoftmaxCE(), lam=lam)
