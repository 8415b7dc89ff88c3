"""The scheme interface: what the ``auc_ner`` pipe asks of the block in
``[components.auc_ner.scheme]`` (:class:`Scheme`, a protocol as spaCy's ``Suggester`` is), and
:class:`BIOScheme`, the defaults for schemes whose columns are scored per BIO label, which the
registered schemes build on. A scheme holds its settings only; it learns nothing (the loss's
learned parameters live on the model's head), so the config is all a saved pipeline needs of it.
"""
from typing import Any, Dict, FrozenSet, List, NamedTuple, Optional, Protocol, Sequence, runtime_checkable

import numpy
from spacy.training import Example
from thinc.api import Ops
from thinc.backends import get_array_ops
from thinc.types import Floats1d, Floats2d, Ints1d

from ..capabilities import BIO, O_COLUMN, ONE_CLASS, SIGMOID
from ..labels import LabelSet
from ..losses import TokenLoss, Truth
from ..losses.base import LossOutput
from ..ml.activations import sigmoid
from ..ml.crf import best_path_log_prob
from ..ml.decoding import Spans, greedy_bio, no_spans, viterbi_bio

DECODERS = ("greedy", "viterbi")


class Targets(NamedTuple):
    """A batch's gold as the scheme's (N, K) 0/1 targets and the (N,) token mask, 0 where
    the gold is missing (such tokens get no gradient)."""

    Y: Floats2d
    mask: Floats1d


@runtime_checkable
class Scheme(Protocol):
    """Output columns, targets, probabilities and decoding of the ``auc_ner`` pipe.

    ``name``: a short name for messages (``"two_task"``). ``capabilities``: what the columns
    are (:mod:`spacy_auc_ner.capabilities`), which decides the losses and strategies that can
    train them. ``default_loss``: the loss block a null ``loss`` becomes. ``default_decoder``:
    ``"greedy"`` or ``"viterbi"``, what a null ``decoder`` becomes. ``params``: the learned
    parameters of the loss, by name, or None, as the head holds them.
    """

    name: str
    capabilities: FrozenSet[str]
    default_loss: Dict[str, Any]
    default_decoder: str

    def validate(self, key: str) -> None:
        """Raise a one-line error naming `key` and the setting when a setting is invalid."""

    def columns(self, labels: LabelSet) -> List[str]:
        """The output column names, one score per token each."""

    def loss_columns(self, labels: LabelSet) -> int:
        """How many columns (the first ones) the configured loss scores; its learned parameters
        are laid out per column of these."""

    def targets(self, gold: Ints1d, labels: LabelSet, xp) -> Floats2d:
        """(N, K) 0/1 targets from (N,) gold BIO indices (MISSING rows all zero)."""

    def gold(self, examples: Sequence[Example], labels: LabelSet, ops: Ops) -> Targets:
        """The targets and mask of the examples' predicted tokens, on the ops' device."""

    def get_loss(
        self, loss: TokenLoss, scores: Floats2d, gold: Targets, column_weights: Floats1d, lengths: Ints1d,
        params: Optional[Dict[str, Floats2d]], step: int,
    ) -> LossOutput:
        """The loss of a batch's (N, K) scores and its gradients (scores and learned parameters)."""

    def entity_columns(self, labels: LabelSet) -> List[int]:
        """The columns whose scores favour an entity: the entity bias is added to these."""

    def entity_margin(self, scores: Floats2d, labels: LabelSet) -> Floats1d:
        """(N,) how far each token is from becoming an entity (the bias calibration reads it)."""

    def label_distribution(self, scores: Floats2d, lengths: numpy.ndarray, labels: LabelSet, params) -> Floats2d:
        """(N, n_bio) probability of each BIO label per token, rows summing to 1."""

    def best_path_log_prob(self, scores: Floats2d, lengths: numpy.ndarray, labels: LabelSet, params) -> Floats1d:
        """(B,) log-probability of each sentence's most probable label sequence."""

    def decode(
        self, scores: Floats2d, lengths: numpy.ndarray, labels: LabelSet, decoder: str,
        params: Optional[Dict[str, Floats2d]] = None,
    ) -> Spans:
        """The entity spans (valid BIO) of a batch's (N, K) scores; none without entity types."""


class BIOScheme:
    """The defaults of :class:`Scheme`: one sigmoid column per BIO label, column 0 the ``O``
    label, greedy decoding by maximum confidence (what the ``ova`` scheme is). A scheme
    overrides what differs."""

    name = "bio"
    capabilities: FrozenSet[str] = frozenset({SIGMOID, BIO, ONE_CLASS, O_COLUMN})
    # the column of the O label, -1 when there is none
    o_column = 0
    default_loss: Dict[str, Any] = {"@losses": "spacy_auc_ner.AUCMargin.v1"}
    default_decoder = "greedy"

    @property
    def multilabel(self) -> bool:
        """True when the columns are independent sigmoid classifiers (the losses' Truth.multilabel)."""
        return SIGMOID in self.capabilities

    def validate(self, key: str = "scheme") -> None:
        """No settings to check."""

    def columns(self, labels: LabelSet) -> List[str]:
        return list(labels.bio)

    def loss_columns(self, labels: LabelSet) -> int:
        return len(self.columns(labels))

    def targets(self, gold: Ints1d, labels: LabelSet, xp) -> Floats2d:
        K = len(self.columns(labels))
        return (gold[:, None] == xp.arange(K)[None, :]).astype("f")

    def gold(self, examples: Sequence[Example], labels: LabelSet, ops: Ops) -> Targets:
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
        truth = Truth(gold.Y, gold.mask, column_weights, lengths, self.multilabel, params, self.o_column, step)
        return loss(scores, truth)

    def entity_columns(self, labels: LabelSet) -> List[int]:
        return [k for k in range(len(self.columns(labels))) if k != self.o_column]

    def entity_margin(self, scores: Floats2d, labels: LabelSet) -> Floats1d:
        """The best entity column's score minus the O column's: a bias b flips, roughly, the
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
        """The BIO confidences normalised per token (what an annotation strategy reads). For
        sigmoid columns this turns the independent sigmoids into the distribution the argmax
        decoding chooses from (their own binary entropies would call a token on which every
        classifier says no, all at 0.01, nearly certain, though nothing tells which label it
        has); two_task's p(O), p(B-t), p(I-t) and softmax's already sum to 1."""
        xp = get_array_ops(scores).xp
        p = self.bio_probabilities(scores, labels)
        return p / xp.maximum(p.sum(axis=1, keepdims=True), 1e-30)

    def best_path_log_prob(self, scores: Floats2d, lengths: numpy.ndarray, labels: LabelSet, params) -> Floats1d:
        """Tokens independent under :meth:`label_distribution`, so the sum of each token's
        largest log-probability (a CRF without transitions or BIO constraints, as the greedy
        decoder reads the tokens)."""
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
        if not labels.types:
            return no_spans()
        return self.decode_spans(scores, lengths, labels, decoder, params)

    def decode_spans(self, scores, lengths, labels: LabelSet, decoder: str, params) -> Spans:
        """:meth:`decode` with at least one entity type."""
        if decoder == "viterbi":
            log_scores = self.bio_log_scores(scores, labels)
            return viterbi_bio(log_scores, lengths, labels.bio_type, labels.bio_begin)
        return greedy_bio(self.bio_probabilities(scores, labels), labels.bio_type, labels.bio_begin, lengths)
