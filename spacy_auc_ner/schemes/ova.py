"""The OVA-AUC paper's scheme: one sigmoid classifier per BIO label (2 types + 1 columns),
prediction by maximum confidence (its eq. 2); trained by the AUC margin loss by default."""
from spacy.util import registry

from ..ml.activations import log_sigmoid
from .base import BIOScheme


@registry.misc("spacy_auc_ner.OVA.v1")
class OVAScheme(BIOScheme):
    """One-versus-all: one sigmoid classifier per BIO label; no settings."""

    name = "ova"

    def bio_log_scores(self, scores, labels):
        return log_sigmoid(scores)
