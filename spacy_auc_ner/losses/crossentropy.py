"""Cross-entropy baselines: one binary CE per column (OVA-BCE) and softmax CE over classes."""
from spacy.util import registry
from thinc.backends import get_array_ops

from ..capabilities import SIGMOID, SOFTMAX, requires
from ..ml.activations import log_softmax, sigmoid
from .base import LossOutput, TokenLoss, Truth, empty_output, safe_inverse


@registry.losses("spacy_auc_ner.BinaryCE.v1")
class BinaryCE(TokenLoss):
    """Sum over columns (weighted by Truth.columns) of the mean binary cross entropy of
    sigmoid(score) over the masked tokens: the OVA-BCE baseline."""

    name = "spacy_auc_ner.BinaryCE.v1"
    needs = requires({SIGMOID})

    def __call__(self, scores, truth: Truth) -> LossOutput:
        if scores.shape[0] == 0:
            return empty_output(scores)
        xp = get_array_ops(scores).xp
        y = truth.targets
        w = truth.mask[:, None]
        inv_n = safe_inverse(xp, truth.mask.sum())
        # log(1 + exp(-|s|)) + max(s, 0) - s*y  ==  -y log h - (1-y) log(1-h), stably
        per_token = xp.maximum(scores, 0) - scores * y + xp.log1p(xp.exp(-xp.abs(scores)))
        loss = float(((per_token * w).sum(axis=0) * inv_n * truth.columns).sum())
        d_scores = ((sigmoid(scores) - y) * w * inv_n * truth.columns).astype(scores.dtype)
        return LossOutput(d_scores, loss)


@registry.losses("spacy_auc_ner.SoftmaxCE.v1")
class SoftmaxCE(TokenLoss):
    """Mean softmax cross entropy over the masked tokens: the CE baseline."""

    name = "spacy_auc_ner.SoftmaxCE.v1"
    needs = requires({SOFTMAX})

    def __call__(self, scores, truth: Truth) -> LossOutput:
        if scores.shape[0] == 0:
            return empty_output(scores)
        xp = get_array_ops(scores).xp
        w = truth.mask[:, None]
        inv_n = safe_inverse(xp, truth.mask.sum())
        logp = log_softmax(scores)
        loss = float(-(truth.targets * logp * w).sum() * inv_n)
        d_scores = ((xp.exp(logp) - truth.targets) * w * inv_n).astype(scores.dtype)
        return LossOutput(d_scores, loss)
