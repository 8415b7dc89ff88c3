"""The linear-chain CRF objective: mean negative log-likelihood of the gold BIO sequences over
the emissions; transitions, start and end scores are learned parameters of the loss (zero at
first), and invalid BIO moves are impossible (-inf).
"""
from spacy.util import registry
from thinc.backends import get_array_ops

from ..capabilities import BIO, CRF, requires
from ..ml.crf import bio_constraints_of, constrain, crf_nll, pad, unpad
from .base import LossOutput, LossParam, TokenLoss, Truth

# transition scores trans[i, j] (label i then j), start and end scores; zero at first
CRF_PARAMS = (LossParam("crf_trans", 2, 0.0), LossParam("crf_start", 1, 0.0), LossParam("crf_end", 1, 0.0))
TRANS, START, END = (p.name for p in CRF_PARAMS)


@registry.losses("spacy_auc_ner.CRFLoss.v1")
class CRFLoss(TokenLoss):
    """Linear-chain CRF negative log-likelihood over BIO labels (scheme crf): the NLL of each sentence's gold path (unknown tokens summed over), averaged over the
    sentences with any known label; the token mask and sentence lengths come from Truth."""

    name = "spacy_auc_ner.CRFLoss.v1"
    needs = requires({CRF}, {BIO})
    params = CRF_PARAMS

    def __call__(self, scores, truth: Truth) -> LossOutput:
        xp = get_array_ops(scores).xp
        K = scores.shape[1]
        if truth.params is None:
            raise ValueError("CRFLoss needs its learned trans, start and end scores (Truth.params)")
        zero = {k: xp.zeros_like(truth.params[k]) for k in (TRANS, START, END)}
        if scores.shape[0] == 0:
            return LossOutput(xp.zeros_like(scores), 0.0, zero)
        constraints = bio_constraints_of(K)
        trans, start, end = constrain(truth.params[TRANS], truth.params[START], truth.params[END], constraints)
        gold_flat = xp.where(truth.mask > 0, truth.targets.argmax(axis=1), -1)[:, None]
        E, mask = pad(scores, truth.lengths)
        gold = pad(gold_flat.astype("i"), truth.lengths)[0][:, :, 0]
        gold = xp.where(mask, gold, -1)
        has_gold = ((gold >= 0) & mask).any(axis=1)
        n = int(has_gold.sum())
        if n == 0:
            return LossOutput(xp.zeros_like(scores), 0.0, zero)
        out = crf_nll(E, mask, gold, trans, start, end, xp.full(E.shape[0], 1.0 / n, dtype=scores.dtype))
        d_scores = unpad(out.d_E, mask).astype(scores.dtype)
        d_params = {TRANS: out.d_trans, START: out.d_start, END: out.d_end}
        return LossOutput(d_scores, float(out.nll.sum()), {k: v.astype(scores.dtype) for k, v in d_params.items()})
