"""Label encodings: BIO labels from entity types, gold extraction, and each scheme's targets.

Gold BIO labels are indexed as O = 0, B-t = 1 + 2t, I-t = 2 + 2t for the sorted entity types
t. A gold index of -1 means "no gold here" (misaligned token, missing annotation, a label the
component was not initialised with): such tokens get no gradient.
"""
from functools import cached_property
from typing import Iterable, List, Sequence, Tuple

import numpy
from spacy.attrs import ENT_IOB, ENT_TYPE
from spacy.training import Example
from thinc.types import Floats2d

from .losses.base import log_softmax, sigmoid

MISSING = -1
# spaCy's ENT_IOB codes
_IOB_MISSING, _IOB_I, _IOB_O, _IOB_B = 0, 1, 2, 3


class LabelSet:
    """The entity types and the BIO labels built from them."""

    def __init__(self, types: Iterable[str]):
        self.types: Tuple[str, ...] = tuple(sorted(set(types)))
        self.bio: Tuple[str, ...] = ("O",) + tuple(
            f"{prefix}-{t}" for t in self.types for prefix in ("B", "I")
        )
        self._index = {label: i for i, label in enumerate(self.bio)}

    def __len__(self) -> int:
        return len(self.bio)

    @cached_property
    def bio_type(self) -> numpy.ndarray:
        """(n_bio,) entity type index of each BIO label, -1 for O."""
        return numpy.asarray([-1] + [t for t in range(len(self.types)) for _ in "BI"], dtype="i")

    @cached_property
    def bio_begin(self) -> numpy.ndarray:
        return numpy.asarray([False] + [p == "B" for _ in self.types for p in "BI"])

    @cached_property
    def _hash_lookup(self) -> Tuple[numpy.ndarray, numpy.ndarray]:
        from spacy.strings import get_string_id

        hashes = numpy.asarray([get_string_id(t) for t in self.types], dtype="uint64")
        order = numpy.argsort(hashes)
        return hashes[order], order.astype("i")

    def gold(self, examples: Sequence[Example]) -> numpy.ndarray:
        """(N,) gold BIO index of every predicted token of the examples, -1 where missing."""
        parts = [self._gold_one(eg) for eg in examples]
        return numpy.concatenate(parts) if parts else numpy.zeros((0,), dtype="i")

    def _gold_one(self, eg: Example) -> numpy.ndarray:
        x, y = eg.predicted, eg.reference
        if len(x) == 0:
            return numpy.zeros((0,), dtype="i")
        if len(x) == len(y) and _is_identity(eg):
            return self._from_arrays(y.to_array([ENT_IOB, ENT_TYPE]))
        # Tokenisations differ: let spaCy project the gold entities onto predicted tokens.
        lookup = {"O": 0}
        for label, i in self._index.items():
            if label != "O":
                lookup["U" + label[1:] if label[0] == "B" else "L" + label[1:]] = i
                lookup[label] = i
        return numpy.asarray([lookup.get(t, MISSING) if t else MISSING for t in eg.get_aligned_ner()], dtype="i")

    def _from_arrays(self, arr: numpy.ndarray) -> numpy.ndarray:
        iob = arr[:, 0].astype("i")
        hashes, order = self._hash_lookup
        type_hash = arr[:, 1].astype("uint64")
        if len(hashes):
            pos = numpy.minimum(numpy.searchsorted(hashes, type_hash), len(hashes) - 1)
            known = hashes[pos] == type_hash
            type_idx = order[pos]
        else:
            known = numpy.zeros(len(iob), dtype=bool)
            type_idx = numpy.zeros(len(iob), dtype="i")
        gold = numpy.full(len(iob), MISSING, dtype="i")
        gold[iob == _IOB_O] = 0
        is_b = (iob == _IOB_B) & known
        is_i = (iob == _IOB_I) & known
        gold[is_b] = 1 + 2 * type_idx[is_b]
        gold[is_i] = 2 + 2 * type_idx[is_i]
        return gold


def _is_identity(eg: Example) -> bool:
    x2y = eg.alignment.x2y
    lengths = numpy.asarray(x2y.lengths)
    if not (lengths == 1).all():
        return False
    return bool((numpy.asarray(x2y.data).ravel() == numpy.arange(len(lengths))).all())


def entity_types_of(examples: Iterable[Example]) -> List[str]:
    return sorted({ent.label_ for eg in examples for ent in eg.reference.ents})


class Scheme:
    """How a scheme lays out its output columns and builds its targets."""

    name = "ova"
    multilabel = True

    def columns(self, labels: LabelSet) -> List[str]:
        return list(labels.bio)

    def targets(self, gold, labels: LabelSet, xp) -> Floats2d:
        """(N, K) 0/1 targets from (N,) gold BIO indices (rows of -1 are all zero; the
        component masks them)."""
        K = len(self.columns(labels))
        return (gold[:, None] == xp.arange(K)[None, :]).astype("f")

    def bio_probabilities(self, scores: Floats2d, labels: LabelSet) -> Floats2d:
        """(N, n_bio) confidence of each BIO label, for decoding and span scores."""
        return sigmoid(scores)

    def bio_log_scores(self, scores: Floats2d, labels: LabelSet) -> Floats2d:
        """(N, n_bio) per-token log-scores of the BIO labels, for Viterbi decoding."""
        return _xp(scores).log(_xp(scores).maximum(self.bio_probabilities(scores, labels), 1e-30))


class OVAScheme(Scheme):
    """One sigmoid classifier per BIO label; prediction by maximum confidence (eq. 2)."""

    name = "ova"
    multilabel = True

    def bio_log_scores(self, scores, labels):
        """log sigmoid(s) = -log(1 + exp(-s)), computed stably."""
        xp = _xp(scores)
        return (xp.minimum(scores, 0) - xp.log1p(xp.exp(-xp.abs(scores)))).astype(scores.dtype)


class SoftmaxScheme(Scheme):
    """Exclusive BIO classes under a softmax (the CE baseline)."""

    name = "softmax"
    multilabel = False

    def bio_probabilities(self, scores, labels):
        return _xp(scores).exp(log_softmax(scores))

    def bio_log_scores(self, scores, labels):
        return log_softmax(scores)


class CRFScheme(SoftmaxScheme):
    """BIO emission scores of a linear-chain CRF (transitions live in the model's head)."""

    name = "crf"


class TwoTaskScheme(Scheme):
    """AUC-2T: an entity-token column, a beginning-token column and, when the corpus has more
    than one entity type, one softmax column per type (trained on gold entity tokens)."""

    name = "two_task"
    multilabel = True

    def columns(self, labels: LabelSet) -> List[str]:
        cols = ["ENTITY", "BEGIN"]
        if len(labels.types) > 1:
            cols += [f"TYPE-{t}" for t in labels.types]
        return cols

    def targets(self, gold, labels: LabelSet, xp) -> Floats2d:
        K = len(self.columns(labels))
        Y = xp.zeros((gold.shape[0], K), dtype="f")
        Y[:, 0] = gold > 0
        Y[:, 1] = (gold > 0) & (gold % 2 == 1)
        if K > 2:
            type_idx = (gold - 1) // 2
            Y[:, 2:] = (type_idx[:, None] == xp.arange(K - 2)[None, :]) & (gold[:, None] > 0)
        return Y

    def type_log_probs(self, scores, labels: LabelSet):
        xp = _xp(scores)
        if len(labels.types) <= 1:
            return xp.zeros((scores.shape[0], 1), dtype="f")
        return log_softmax(scores[:, 2:])

    def bio_probabilities(self, scores, labels):
        """p(B-t) = p_en p_be p_t, p(I-t) = p_en (1 - p_be) p_t, p(O) = 1 - p_en."""
        xp = _xp(scores)
        p = sigmoid(scores[:, :2])
        p_type = xp.exp(self.type_log_probs(scores, labels))
        out = xp.zeros((scores.shape[0], len(labels.bio)), dtype="f")
        out[:, 0] = 1.0 - p[:, 0]
        out[:, 1::2] = (p[:, 0] * p[:, 1])[:, None] * p_type
        out[:, 2::2] = (p[:, 0] * (1.0 - p[:, 1]))[:, None] * p_type
        return out


def _xp(arr):
    from thinc.backends import get_array_ops

    return get_array_ops(arr).xp


SCHEMES = {s.name: s for s in (OVAScheme(), SoftmaxScheme(), TwoTaskScheme(), CRFScheme())}


def get_scheme(name: str) -> Scheme:
    if name not in SCHEMES:
        raise ValueError(f"[scheme] unknown scheme {name!r}; choose one of {', '.join(SCHEMES)}")
    return SCHEMES[name]
