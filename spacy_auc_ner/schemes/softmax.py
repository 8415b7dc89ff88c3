"""The CE baseline's scheme: exclusive BIO classes under a per-token softmax, trained by
softmax cross entropy by default."""
from typing import FrozenSet

from spacy.util import registry
from thinc.backends import get_array_ops

from ..capabilities import BIO, O_COLUMN, ONE_CLASS, SOFTMAX
from ..ml.activations import log_softmax
from .base import BIOScheme


@registry.misc("spacy_auc_ner.Softmax.v1")
class SoftmaxScheme(BIOScheme):
    """One softmax over the BIO labels per token; no settings."""

    name = "softmax"
    capabilities: FrozenSet[str] = frozenset({SOFTMAX, BIO, ONE_CLASS, O_COLUMN})
    default_loss = {"@losses": "spacy_auc_ner.SoftmaxCE.v1"}

    def bio_probabilities(self, scores, labels):
        return get_array_ops(scores).xp.exp(log_softmax(scores))

    def bio_log_scores(self, scores, labels):
        return log_softmax(scores)
