"""The AUC-2T paper's scheme: entity-token and beginning-token classifiers trained with
AUC_en + lam AUC_be (its eq. 4), plus one softmax column per type (trained on gold entity
tokens) when there are several; decoded by its Algorithm 1, whose decision threshold on both
probabilities is ``threshold``.

The type head is not in the paper, which predicts untyped B/I/O tags only (the OVA-AUC paper
names this as its limit): it is added so that a corpus with several entity types gets typed
entities: its softmax cross entropy is added to eq. 4's value, and a one-type corpus has none."""
import math
from typing import FrozenSet, List

import numpy
from spacy.util import registry
from thinc.backends import get_array_ops
from thinc.types import Floats2d

from ..capabilities import SIGMOID
from ..data.files import is_number
from ..labels import LabelSet, label_is_begin, label_type
from ..losses import SoftmaxCE, Truth
from ..losses.base import LossOutput, check_scale, check_setting
from ..ml.activations import log_softmax, sigmoid
from ..ml.decoding import Spans, two_task_spans
from .base import BIOScheme, Targets


@registry.misc("spacy_auc_ner.TwoTask.v1")
class TwoTaskScheme(BIOScheme):
    """AUC-2T's two tasks and type head: `lam` weighs the beginning task (the paper's lambda,
    100), `threshold` is Algorithm 1's decision threshold (0.5)."""

    name = "two_task"
    # the entity and beginning tasks are sigmoid classifiers; a token is positive for both
    # (one_class does not hold) and no column is O
    capabilities: FrozenSet[str] = frozenset({SIGMOID})
    o_column = -1

    def __init__(self, lam: float = 100.0, threshold: float = 0.5):
        self.lam = lam
        self.threshold = threshold
        self.type_loss = SoftmaxCE()

    def validate(self, key: str = "scheme") -> None:
        check_setting(is_number(self.lam) and 0.0 <= self.lam < math.inf, f"{key}.lam", f"must be a finite number >= 0, not {self.lam!r}")
        check_scale(self.lam, f"{key}.lam")  # the beginning task's weight: at 1e38 its gradient overflowed float32
        check_setting(is_number(self.threshold) and 0.0 < self.threshold < 1.0, f"{key}.threshold", f"must be a number in (0, 1), not {self.threshold!r}")

    def columns(self, labels: LabelSet) -> List[str]:
        cols = ["ENTITY", "BEGIN"]
        if len(labels.types) > 1:
            cols += [f"TYPE-{t}" for t in labels.types]
        return cols

    def loss_columns(self, labels: LabelSet) -> int:
        return 2

    def targets(self, gold, labels: LabelSet, xp) -> Floats2d:
        K = len(self.columns(labels))
        Y = xp.zeros((gold.shape[0], K), dtype="f")
        Y[:, 0] = gold > 0
        Y[:, 1] = label_is_begin(gold)
        if K > 2:
            Y[:, 2:] = label_type(gold)[:, None] == xp.arange(K - 2)[None, :]
        return Y

    def get_loss(self, loss, scores, gold: Targets, column_weights, lengths, params, step) -> LossOutput:
        """AUC_en + lam AUC_be over the first two columns (by the configured loss), plus the
        type head's softmax cross entropy over the gold entity tokens."""
        xp = get_array_ops(scores).xp
        task_weights = xp.asarray([1.0, float(self.lam)], dtype="f") * column_weights[:2]
        truth = Truth(gold.Y[:, :2], gold.mask, task_weights, lengths, True, params, self.o_column, step)
        out = loss(scores[:, :2], truth)
        d_scores = xp.zeros_like(scores)
        d_scores[:, :2] = out.d_scores
        total = out.loss
        if scores.shape[1] > 2:
            type_mask = gold.mask * gold.Y[:, 0]
            type_truth = Truth(gold.Y[:, 2:], type_mask, column_weights[2:], lengths, False, None, -1, step)
            type_out = self.type_loss(scores[:, 2:], type_truth)
            d_scores[:, 2:] = type_out.d_scores
            total += type_out.loss
        return out._replace(d_scores=d_scores, loss=total)

    def type_log_probs(self, scores, labels: LabelSet):
        """(N, n_types) log-probabilities of the type head; (N, 1) zeros for a single type."""
        xp = get_array_ops(scores).xp
        if len(labels.types) <= 1:
            return xp.zeros((scores.shape[0], 1), dtype="f")
        return log_softmax(scores[:, 2:])

    def bio_probabilities(self, scores, labels):
        """p(B-t) = p_en p_be p_t, p(I-t) = p_en (1 - p_be) p_t, p(O) = 1 - p_en."""
        xp = get_array_ops(scores).xp
        p = sigmoid(scores[:, :2])
        p_type = xp.exp(self.type_log_probs(scores, labels))
        out = xp.zeros((scores.shape[0], len(labels.bio)), dtype="f")
        out[:, 0] = 1.0 - p[:, 0]
        out[:, 1::2] = (p[:, 0] * p[:, 1])[:, None] * p_type
        out[:, 2::2] = (p[:, 0] * (1.0 - p[:, 1]))[:, None] * p_type
        return out

    def entity_columns(self, labels: LabelSet) -> List[int]:
        return [0, 1]  # the entity-token and beginning-token classifiers; type columns compete among themselves

    def entity_margin(self, scores, labels: LabelSet):
        """The entity-token logit minus the logit of the decision threshold."""
        return scores[:, 0] - float(numpy.log(self.threshold / (1.0 - self.threshold)))

    def decode_spans(self, scores, lengths, labels: LabelSet, decoder: str, params) -> Spans:
        if decoder == "viterbi":
            return super().decode_spans(scores, lengths, labels, decoder, params)
        to_numpy = get_array_ops(scores).to_numpy
        p = to_numpy(sigmoid(scores[:, :2]))
        type_lp = to_numpy(self.type_log_probs(scores, labels))
        return two_task_spans(p[:, 0], p[:, 1], type_lp, lengths, float(self.threshold))
