"""MoM (majority or minority) learning, Nemoto et al.: a token loss plus the same loss over the
gold-`O` tokens, so that an entity predicted on an `O` token costs extra. The paper's eqs.
1-3 (N sentences; M a constant token count per sentence, the models' input length, "the
maximum number of tokens in a sentence (M=128)"):

    L_MoM(y, p) = - 1/M sum_{i: y_i = O} l(y_i, p_i)                          (1)
    L_sentence  = lambda L(y, p) + (1 - lambda) L_MoM(y, p)                    (2)
    L_model     = 1/N sum_n L_sentence                                          (3)

Eq. 1's leading minus is dropped here, deliberately: with l a loss (cross entropy, focal,
...) it would reward errors on the O tokens, against the paper's own words ("incorporates the
loss computed only for samples whose ground truth is the majority class"); we read l as the
loss itself, L_MoM = 1/M sum_{i: y_i = O} l(y_i, p_i).

Both terms are token sums over one denominator, so with inner losses that are means over the
batch's Z masked tokens the default ``o_term = "share"`` is

    L = lambda L(all tokens) + (1 - lambda) (Z_O / Z) L(gold-O tokens)

and the paper's lambda values carry over; ``o_term = "mean"`` (the O-term as a mean over the
O tokens) weighs that term 1/share more. Needs an `O` column (``softmax``, ``ova``).
"""
from typing import Literal, Optional

from spacy.util import registry
from thinc.backends import get_array_ops

from ..capabilities import O_COLUMN, SIGMOID, SOFTMAX, requires
from .base import LossOutput, LossWrapper, TokenLoss, Truth, check_setting, empty_output, safe_inverse, weighted_sum
from .crossentropy import SoftmaxCE

O_TERMS = ("share", "mean")


@registry.losses("spacy_auc_ner.MoM.v1")
class MoM(LossWrapper):
    """MoM learning: lam * loss(all tokens) + (1 - lam) * share * loss(gold-O tokens) (settings:
    README's losses table); the paper tuned lam per dataset and model, 0.041-0.446."""

    name = "spacy_auc_ner.MoM.v1"
    # per-token columns with an O column (the O-term); the inner loss says which kind
    needs = requires({SIGMOID, SOFTMAX}, {O_COLUMN})

    def __init__(self, loss: Optional[TokenLoss] = None, lam: float = 0.2, o_term: Literal["share", "mean"] = "share"):
        loss = loss if loss is not None else SoftmaxCE()
        super().__init__(loss=loss)
        self.loss = loss
        self.lam = float(lam)
        self.o_term = o_term

    def validate_own(self, key: str) -> None:
        check_setting(0.0 <= self.lam <= 1.0, f"{key}.lam", f"must be in [0, 1], not {self.lam}")
        check_setting(self.o_term in O_TERMS, f"{key}.o_term", f"must be 'share' or 'mean', not {self.o_term!r}")

    def __call__(self, scores, truth: Truth) -> LossOutput:
        if scores.shape[0] == 0:
            return empty_output(scores)
        if truth.o_column < 0:
            raise ValueError(f"[loss] {self.name} needs an O column; the scheme has none")
        xp = get_array_ops(scores).xp
        o_mask = (truth.mask * truth.targets[:, truth.o_column]).astype(truth.mask.dtype)
        full = self.loss(scores, truth)
        majority = self.loss(scores, truth.with_mask(o_mask))
        weight = 1.0 - self.lam
        if self.o_term == "share":
            weight *= float(o_mask.sum() * safe_inverse(xp, truth.mask.sum()))
        return weighted_sum([full, majority], [self.lam, weight])
