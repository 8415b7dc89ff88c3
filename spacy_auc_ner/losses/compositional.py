"""Compositional AUC training (Yuan et al. 2021a; COMAUC-2T): k training steps of a cross
entropy, then k of the AUC margin loss, and so on. The phase comes from ``Truth.step``, saved
with the pipeline, so a resumed training continues the cycle (LibAUC's CompositionalAUCLoss:
CE while step % 2k < k). The default CE is per-column binary CE, which trains the same sigmoid
probabilities as the AUC phase (as LibAUC pairs them). This deviates from the AUC-2T paper's
words, "alternates between the standard multi-class cross entropy loss function and the AUC
two-task loss function", deliberately: the two tasks' columns are independent sigmoids (a token
is both ENTITY and BEGIN), which a softmax cannot train; pass ``ce`` to choose another.
"""
from typing import Optional

from spacy.util import registry

from ..capabilities import SIGMOID, requires
from .auc import AUCMargin
from .base import LossOutput, LossWrapper, TokenLoss, Truth, check_setting
from .crossentropy import BinaryCE


@registry.losses("spacy_auc_ner.Compositional.v1")
class Compositional(LossWrapper):
    """COMAUC: k training steps of `ce` (default binary CE), then k of `auc` (default the
    learned AUC margin loss), alternating; for schemes ova and two_task."""

    name = "spacy_auc_ner.Compositional.v1"
    needs = requires({SIGMOID})

    def __init__(self, ce: Optional[TokenLoss] = None, auc: Optional[TokenLoss] = None, k: int = 1):
        ce = ce if ce is not None else BinaryCE()
        auc = auc if auc is not None else AUCMargin()
        super().__init__(ce=ce, auc=auc)
        self.ce = ce
        self.auc = auc
        self.k = int(k)

    def validate_own(self, key: str) -> None:
        check_setting(self.k >= 1, f"{key}.k", f"must be >= 1, not {self.k}")

    def phase(self, step: int) -> str:
        """"ce" for steps 0..k-1, "auc" for k..2k-1, and so on."""
        return "ce" if (step // self.k) % 2 == 0 else "auc"

    def __call__(self, scores, truth: Truth) -> LossOutput:
        loss = self.ce if self.phase(truth.step) == "ce" else self.auc
        return loss(scores, truth)
