"""AUC for sequence models: the CRF objective plus an auxiliary one-vs-all AUC loss on the
CRF's emission scores (issue 12, item 1):

    L = NLL_CRF(E; trans, start, end) + mu * sum_k L_k(sigmoid(E[:, k]))

E (N, K) are the per-token emission scores of the K BIO labels (scheme ``crf``), NLL_CRF the
mean negative log-likelihood of the gold paths (:class:`~spacy_auc_ner.losses.crf.CRFLoss`),
and L_k the deep AUC margin loss of the OVA-AUC paper (eq. 1c) for label k read as a binary
classifier h_k = sigmoid(E[:, k]) whose positives are the tokens with gold label k, exactly
as the ``ova`` scheme's classifiers are read:

    L_k = E[(h_k - a_k)^2 | y_k = 1] + E[(h_k - b_k)^2 | y_k = -1]
          + max_{alpha_k >= 0} {2 alpha_k (m - E[h_k | y_k = 1] + E[h_k | y_k = -1]) - alpha_k^2}

(:class:`~spacy_auc_ner.losses.auc.AUCMargin`, which has the details).

Why: the CRF likelihood only cares about the emissions of one token *relative to each
other* (adding a constant to a token's row changes nothing), and under imbalance its gradient
is dominated by the many `O` tokens. The AUC term asks, per label, that every token of the
label score above every token of the other labels, across the batch, with class-wise means
so that rare B-/I- labels weigh as much as `O` (the OVA-AUC paper's remedy, kept as an
auxiliary signal while the CRF still models the sequence and decodes with Viterbi).

The learned parameters of both terms are declared side by side (the CRF's ``crf_trans``,
``crf_start``, ``crf_end`` and the margin loss's ``dam_a``, ``dam_b``, ``dam_alpha``, each
laid out over the K BIO labels), so the model's head creates them all and a saved pipeline
holds them. Scales: NLL_CRF is a mean over sentences of each sentence's NLL (a sum over its
tokens); the AUC term is a sum over the K labels of class-wise means, at most about K (1 + m)^2.
With mu = 0 the loss *is* the CRF loss: the AUC term is not even evaluated and its parameters
get no update.

``auc`` may be any loss over one-vs-all classifiers (scheme ``ova``), e.g. ``BinaryCE.v1`` to
tell the AUC term's effect apart from that of any auxiliary per-token loss.
"""
import math
from dataclasses import replace
from typing import Optional

from spacy.util import registry

from .auc import AUCMargin
from .base import LossOutput, LossWrapper, TokenLoss, Truth, check_setting, weighted_sum
from .crf import CRFLoss


@registry.losses("spacy_auc_ner.CRFWithAUC.v1")
class CRFWithAUC(LossWrapper):
    """CRF negative log-likelihood + mu * the AUC margin loss of the emissions read as one
    sigmoid classifier per BIO label (scheme crf). `crf` default CRFLoss.v1, `auc` default the
    learned AUCMargin.v1 (any loss that trains scheme ova), `mu` >= 0 (0: the CRF loss)."""

    name = "spacy_auc_ner.CRFWithAUC.v1"
    own_schemes = ("crf",)

    def __init__(self, crf: Optional[TokenLoss] = None, auc: Optional[TokenLoss] = None, mu: float = 0.1):
        crf = crf if crf is not None else CRFLoss()
        auc = auc if auc is not None else AUCMargin()
        super().__init__(crf=crf, auc=auc)
        self.crf = crf
        self.auc = auc
        self.mu = float(mu)
        # the AUC term reads the emissions as one-vs-all classifiers, so it needs to support
        # ova, not crf (LossWrapper would ask every inner loss for crf)
        self.schemes = ("crf",) if "crf" in crf.schemes and "ova" in auc.schemes else ()

    def validate_own(self, key: str) -> None:
        check_setting(0.0 <= self.mu < math.inf, f"{key}.mu", f"must be a finite number >= 0, not {self.mu}")

    def check_scheme(self, scheme: str, key: str = "loss") -> None:
        check_setting(
            scheme in self.own_schemes,
            key,
            f"{self.name} cannot train scheme '{scheme}'; it supports: {', '.join(self.own_schemes)}",
        )
        self.crf.check_scheme(scheme, f"{key}.crf")
        check_setting(
            "ova" in self.auc.schemes,
            f"{key}.auc",
            f"{self.auc.name} cannot score the CRF's emissions as one-vs-all classifiers: it does "
            f"not train scheme 'ova' (it supports: {', '.join(self.auc.schemes) or 'none'})",
        )

    def __call__(self, scores, truth: Truth) -> LossOutput:
        crf_out = self.crf(scores, truth)
        if self.mu == 0.0:
            return crf_out
        # the same gold, read as K independent binary classifiers (one-hot targets per label)
        auc_out = self.auc(scores, replace(truth, multilabel=True))
        return weighted_sum([crf_out, auc_out], [1.0, self.mu])
