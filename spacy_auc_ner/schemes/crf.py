"""The CRF and BiLSTM-CRF baselines' scheme: the columns are BIO emissions of a linear-chain
CRF whose transitions, start and end scores are the CRF loss's learned parameters (on the
head); Viterbi decoding under the BIO constraints by default."""
from typing import FrozenSet

from spacy.util import registry

from ..capabilities import BIO, CRF, O_COLUMN, ONE_CLASS
from ..labels import LabelSet
from ..losses.crf import END, START, TRANS
from ..ml.crf import best_path_log_prob, bio_constraints_of, posteriors
from ..ml.decoding import Spans, greedy_bio, viterbi_bio
from .softmax import SoftmaxScheme


@registry.misc("spacy_auc_ner.CRF.v1")
class CRFScheme(SoftmaxScheme):
    """BIO emissions of a linear-chain CRF; no settings (the transitions are learned)."""

    name = "crf"
    capabilities: FrozenSet[str] = frozenset({CRF, BIO, ONE_CLASS, O_COLUMN})
    default_loss = {"@losses": "spacy_auc_ner.CRFLoss.v1"}
    default_decoder = "viterbi"

    def label_distribution(self, scores, lengths, labels: LabelSet, params):
        """The CRF's marginals under the BIO constraints (what its span scores average)."""
        constraints = bio_constraints_of(len(labels.bio))
        return posteriors(scores, lengths, params[TRANS], params[START], params[END], constraints)

    def best_path_log_prob(self, scores, lengths, labels: LabelSet, params):
        """The probability of the CRF's Viterbi path among the valid BIO sequences (MNLP's)."""
        constraints = bio_constraints_of(len(labels.bio))
        return best_path_log_prob(scores, lengths, params[TRANS], params[START], params[END], constraints)

    def decode_spans(self, scores, lengths, labels: LabelSet, decoder: str, params) -> Spans:
        """Viterbi path (or per-token posterior argmax) under the learned transitions; span
        scores are the mean posterior probability of the chosen labels."""
        trans, start, end = params[TRANS], params[START], params[END]
        constraints = bio_constraints_of(len(labels.bio))
        probs = posteriors(scores, lengths, trans, start, end, constraints)
        if decoder == "viterbi":
            return viterbi_bio(scores, lengths, labels.bio_type, labels.bio_begin, probs, trans, start, end)
        return greedy_bio(probs, labels.bio_type, labels.bio_begin, lengths)
