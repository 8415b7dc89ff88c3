"""The component schemes: output columns, targets from gold BIO, the loss over the columns,
decoding, and each scheme's default loss (a config block, so the pipeline's config records it)
and decoder. ``ova``: one sigmoid classifier per BIO label, argmax (OVA-AUC eq. 2).
``two_task``: AUC-2T's entity and beginning classifiers (AUC_en + lambda AUC_be), a softmax
type head when there are several types, Algorithm 1 of the AUC-2T paper. ``softmax``: the CE
baseline. ``crf``: the emissions of a linear-chain CRF, Viterbi.
"""
from typing import Dict, List, NamedTuple, Optional, Sequence

import numpy
from spacy.training import Example
from thinc.api import Ops
from thinc.backends import get_array_ops
from thinc.types import Floats1d, Floats2d, Ints1d

from .labels import LabelSet, label_is_begin, label_type
from .losses import SoftmaxCE, TokenLoss, Truth
from .losses.base import LossOutput
from .losses.crf import END, START, TRANS
from .ml.activations import log_sigmoid, log_softmax, sigmoid
from .ml.crf import best_path_log_prob, bio_constraints, posteriors
from .ml.decoding import Spans, greedy_bio, no_spans, two_task_spans, viterbi_bio

DECODERS = ("greedy", "viterbi")


class Targets(NamedTuple):
    """A batch's gold as the scheme's (N, K) 0/1 targets and the (N,) token mask, 0 where
    the gold is missing (such tokens get no gradient)."""

    Y: Floats2d
    mask: Floats1d


class Scheme:
    """The ``ova`` scheme, and the defaults the others build on."""

    name = "ova"
    # True when the columns are independent sigmoid classifiers, False for a softmax
    multilabel = True
    # the column of the O label, -1 when there is none
    o_column = 0
    default_loss: Dict = {"@losses": "spacy_auc_ner.AUCMargin.v1"}
    default_decoder = "greedy"

    def columns(self, labels: LabelSet) -> List[str]:
        """The output column names, one score per token each."""
        return list(labels.bio)

    def loss_columns(self, labels: LabelSet) -> int:
        """How many columns (the first ones) the configured loss scores; its learned
        parameters are laid out per column of these."""
        return len(self.columns(labels))

    def targets(self, gold: Ints1d, labels: LabelSet, xp) -> Floats2d:
        """(N, K) 0/1 targets from (N,) gold BIO indices (MISSING rows all zero, masked out)."""
        K = len(self.columns(labels))
        return (gold[:, None] == xp.arange(K)[None, :]).astype("f")

    def gold(self, examples: Sequence[Example], labels: LabelSet, ops: Ops) -> Targets:
        """The targets and mask of the examples' predicted tokens, on the ops' device."""
        gold = ops.asarray1i(labels.gold(examples))
        return Targets(self.targets(gold, labels, ops.xp), (gold >= 0).astype("f"))

    def get_loss(
        self,
        loss: TokenLoss,
        scores: Floats2d,
        gold: Targets,
        column_weights: Floats1d,
        lengths: Ints1d,
        params: Optional[Dict[str, Floats2d]],
        step: int,
    ) -> LossOutput:
        """The loss of a batch's (N, K) scores and its gradients (scores and learned parameters)."""
        truth = Truth(gold.Y, gold.mask, column_weights, lengths, self.multilabel, params, self.o_column, step)
        return loss(scores, truth)

    def entity_columns(self, labels: LabelSet) -> List[int]:
        """The columns whose scores favour an entity: an entity bias is added to these."""
        return [k for k in range(len(self.columns(labels))) if k != self.o_column]

    def entity_margin(self, scores: Floats2d, labels: LabelSet) -> Floats1d:
        """(N,) the best entity column's score minus the O column's: a bias b flips, roughly, the
        tokens whose margin is above -b."""
        return scores[:, self.entity_columns(labels)].max(axis=1) - scores[:, self.o_column]

    def bio_probabilities(self, scores: Floats2d, labels: LabelSet) -> Floats2d:
        """(N, n_bio) confidence of each BIO label, for decoding and span scores."""
        return sigmoid(scores)

    def bio_log_scores(self, scores: Floats2d, labels: LabelSet) -> Floats2d:
        """(N, n_bio) per-token log-scores of the BIO labels, for Viterbi decoding."""
        xp = get_array_ops(scores).xp
        return xp.log(xp.maximum(self.bio_probabilities(scores, labels), 1e-30))

    def label_distribution(self, scores: Floats2d, lengths: numpy.ndarray, labels: LabelSet, params) -> Floats2d:
        """(N, n_bio) probability of each BIO label per token, rows summing to 1 (what an
        annotation strategy reads): the BIO confidences normalised per token. For ova this turns
        the independent sigmoids into the distribution its argmax decoding chooses from (their
        own binary entropies would call a token on which every classifier says no, all at 0.01,
        nearly certain, though nothing tells which label it has); two_task's p(O), p(B-t), p(I-t)
        and softmax's already sum to 1."""
        xp = get_array_ops(scores).xp
        p = self.bio_probabilities(scores, labels)
        return p / xp.maximum(p.sum(axis=1, keepdims=True), 1e-30)

    def best_path_log_prob(self, scores: Floats2d, lengths: numpy.ndarray, labels: LabelSet, params) -> Floats1d:
        """(B,) log-probability of each sentence's most probable label sequence, for the sentences
        with a token: tokens independent under :meth:`label_distribution`, so the sum of each
        token's largest log-probability (a CRF without transitions or BIO constraints, as the
        greedy decoder reads the tokens)."""
        xp = get_array_ops(scores).xp
        log_p = xp.log(xp.maximum(self.label_distribution(scores, lengths, labels, params), 1e-30))
        K = log_p.shape[1]
        zeros = xp.zeros(K, dtype=log_p.dtype)
        return best_path_log_prob(log_p, lengths, xp.zeros((K, K), dtype=log_p.dtype), zeros, zeros)

    def decode(
        self,
        scores: Floats2d,
        lengths: numpy.ndarray,
        labels: LabelSet,
        decoder: str,
        params: Optional[Dict[str, Floats2d]] = None,
    ) -> Spans:
        """The entity spans of a batch's (N, K) scores; none without entity types."""
        if not labels.types:
            return no_spans()
        return self.decode_spans(scores, lengths, labels, decoder, params)

    def decode_spans(self, scores, lengths, labels: LabelSet, decoder: str, params) -> Spans:
        if decoder == "viterbi":
            log_scores = self.bio_log_scores(scores, labels)
            return viterbi_bio(log_scores, lengths, labels.bio_type, labels.bio_begin)
        probs = get_array_ops(scores).to_numpy(self.bio_probabilities(scores, labels))
        return greedy_bio(probs, labels.bio_type, labels.bio_begin, lengths)


class OVAScheme(Scheme):
    """One sigmoid classifier per BIO label; prediction by maximum confidence (eq. 2)."""

    def bio_log_scores(self, scores, labels):
        return log_sigmoid(scores)


class SoftmaxScheme(Scheme):
    """Exclusive BIO classes under a softmax (the CE baseline)."""

    name = "softmax"
    multilabel = False
    default_loss = {"@losses": "spacy_auc_ner.SoftmaxCE.v1"}

    def bio_probabilities(self, scores, labels):
        return get_array_ops(scores).xp.exp(log_softmax(scores))

    def bio_log_scores(self, scores, labels):
        return log_softmax(scores)


class CRFScheme(SoftmaxScheme):
    """BIO emissions of a linear-chain CRF whose transitions are the CRF loss's parameters."""

    name = "crf"
    default_loss = {"@losses": "spacy_auc_ner.CRFLoss.v1"}
    default_decoder = "viterbi"

    def label_distribution(self, scores, lengths, labels: LabelSet, params):
        """The CRF's marginals under the BIO constraints (what its span scores average)."""
        constraints = bio_constraints(labels.bio_type, labels.bio_begin)
        return posteriors(scores, lengths, params[TRANS], params[START], params[END], constraints)

    def best_path_log_prob(self, scores, lengths, labels: LabelSet, params):
        """The probability of the CRF's Viterbi path among the valid BIO sequences (MNLP's)."""
        constraints = bio_constraints(labels.bio_type, labels.bio_begin)
        return best_path_log_prob(scores, lengths, params[TRANS], params[START], params[END], constraints)

    def decode_spans(self, scores, lengths, labels: LabelSet, decoder: str, params) -> Spans:
        """Viterbi path (or per-token posterior argmax) under the learned transitions; span
        scores are the mean posterior probability of the chosen labels."""
        trans, start, end = params[TRANS], params[START], params[END]
        constraints = bio_constraints(labels.bio_type, labels.bio_begin)
        probs = posteriors(scores, lengths, trans, start, end, constraints)
        if decoder == "viterbi":
            return viterbi_bio(scores, lengths, labels.bio_type, labels.bio_begin, probs, trans, start, end)
        return greedy_bio(get_array_ops(probs).to_numpy(probs), labels.bio_type, labels.bio_begin, lengths)


class TwoTaskScheme(Scheme):
    """AUC-2T: entity-token and beginning-token columns, AUC_en + lambda AUC_be (eq. 5 of the
    AUC-2T paper), plus one softmax column per type (trained on gold entity tokens) when there are
    several; `threshold` is Algorithm 1's decision threshold on both probabilities."""

    name = "two_task"
    o_column = -1

    def __init__(self, two_task_lambda: float = 100.0, threshold: float = 0.5):
        self.two_task_lambda = float(two_task_lambda)
        self.threshold = float(threshold)
        self.type_loss = SoftmaxCE()

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
        """AUC_en + lambda AUC_be over the first two columns (by the configured loss), plus
        the type head's softmax cross entropy over the gold entity tokens."""
        xp = get_array_ops(scores).xp
        task_weights = xp.asarray([1.0, self.two_task_lambda], dtype="f") * column_weights[:2]
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
        return two_task_spans(p[:, 0], p[:, 1], type_lp, lengths, self.threshold)


COMPONENT_SCHEMES = {s.name: s for s in (OVAScheme, SoftmaxScheme, TwoTaskScheme, CRFScheme)}


def make_scheme(name: str, *, two_task_lambda: float = 100.0, threshold: float = 0.5) -> Scheme:
    """The scheme `name` with the component's settings (KeyError for an unknown name)."""
    if name == "two_task":
        return TwoTaskScheme(two_task_lambda=two_task_lambda, threshold=threshold)
    return COMPONENT_SCHEMES[name]()
