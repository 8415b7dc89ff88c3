"""AUC for sequence models (issue 12): the CRF objective plus the OVA-AUC margin loss of each
BIO label's emission scores E[:, k], read as a one-vs-all classifier:

    L = NLL_CRF(E; trans, start, end) + mu * sum_k L_k(sigmoid(E[:, k]))

with L_k the margin loss of OVA-AUC eq. 1c in the form of Yuan et al. 2021
(:class:`~spacy_auc_ner.losses.auc.AUCMargin`, whose docstring says where it departs from the printed 1c).

Why: the CRF likelihood sees a token's emissions only relative to each other, and its gradient
is dominated by the many `O` tokens; the AUC term (class-wise means) weighs rare B-/I- labels
as much as `O` while the CRF still models and decodes the sequence. With mu = 0 it *is* the
CRF loss (the AUC term is not evaluated).
"""
import math
from dataclasses import replace
from typing import FrozenSet, Optional

from spacy.util import registry

from ..capabilities import CRF, SIGMOID, SOFTMAX, requires
from .auc import AUCMargin
from .base import LossOutput, LossWrapper, TokenLoss, Truth, check_scale, check_setting, weighted_sum
from .crf import CRFLoss


@registry.losses("spacy_auc_ner.CRFWithAUC.v1")
class CRFWithAUC(LossWrapper):
    """CRF negative log-likelihood + mu * the AUC margin loss (`auc`, any loss that trains sigmoid
    columns) of the emissions read as one sigmoid classifier per BIO label; mu = 0 is `crf` alone."""

    name = "spacy_auc_ner.CRFWithAUC.v1"
    needs = requires({CRF})

    def __init__(self, crf: Optional[TokenLoss] = None, auc: Optional[TokenLoss] = None, mu: float = 0.1):
        crf = crf if crf is not None else CRFLoss()
        auc = auc if auc is not None else AUCMargin()
        super().__init__(crf=crf, auc=auc)
        self.crf = crf
        self.auc = auc
        self.mu = float(mu)

    def validate_own(self, key: str) -> None:
        check_setting(0.0 <= self.mu < math.inf, f"{key}.mu", f"must be a finite number >= 0, not {self.mu}")
        check_scale(self.mu, f"{key}.mu")  # a weight: at 1e38 mu times the AUC gradient overflowed float32

    def inner_offers(self, slot: str, offers: FrozenSet[str]) -> FrozenSet[str]:
        """The AUC term reads the emissions as one-vs-all classifiers: sigmoid columns."""
        return offers if slot == "crf" else (offers - {CRF, SOFTMAX}) | {SIGMOID}

    def __call__(self, scores, truth: Truth) -> LossOutput:
        crf_out = self.crf(scores, truth)
        if self.mu == 0.0:
            return crf_out
        # the same gold, read as K independent binary classifiers (one-hot targets per label)
        auc_out = self.auc(scores, replace(truth, multilabel=True))
        return weighted_sum([crf_out, auc_out], [1.0, self.mu])
