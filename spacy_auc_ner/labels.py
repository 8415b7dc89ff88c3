"""The BIO label layout and gold extraction: the only place that knows label indices.
For the sorted entity types t = 0 .. T-1: O = 0, B-t = 1 + 2t, I-t = 2 + 2t. A gold index of
MISSING (-1) (misaligned token, missing annotation, unknown type) gets no gradient.
"""
from functools import cached_property
from typing import Iterable, List, Sequence, Tuple

import numpy
from spacy.attrs import ENT_IOB, ENT_TYPE
from spacy.training import Example
from thinc.backends import get_array_ops

MISSING = -1
# spaCy's ENT_IOB codes
_IOB_MISSING, _IOB_I, _IOB_O, _IOB_B = 0, 1, 2, 3


def bio_layout(n_labels: int) -> Tuple[numpy.ndarray, numpy.ndarray]:
    """(n_labels,) entity type of each BIO label (-1 for O) and whether it is a B label."""
    if n_labels < 1 or n_labels % 2 != 1:
        raise ValueError(f"a BIO label set has 1 + 2 * n_types labels, not {n_labels}")
    index = numpy.arange(n_labels, dtype="i")
    return label_type(index), label_is_begin(index)


def label_type(index):
    """Entity type of BIO label indices (-1 for O and MISSING); numpy or cupy arrays."""
    xp = get_array_ops(index).xp
    return xp.where(index > 0, (index - 1) // 2, -1)


def label_is_begin(index):
    """True where BIO label indices are B labels; numpy or cupy arrays."""
    return (index > 0) & (index % 2 == 1)


class LabelSet:
    """The entity types and the BIO labels built from them, in the layout above."""

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
        return bio_layout(len(self.bio))[0]

    @cached_property
    def bio_begin(self) -> numpy.ndarray:
        """(n_bio,) True for the B labels."""
        return bio_layout(len(self.bio))[1]

    @cached_property
    def _hash_lookup(self) -> Tuple[numpy.ndarray, numpy.ndarray]:
        from spacy.strings import get_string_id

        hashes = numpy.asarray([get_string_id(t) for t in self.types], dtype="uint64")
        order = numpy.argsort(hashes)
        return hashes[order], order.astype("i")

    @property
    def type_hashes(self) -> numpy.ndarray:
        """(n_types,) the string hashes of the entity types, sorted (as `ENT_TYPE` holds them)."""
        return self._hash_lookup[0]

    def gold(self, examples: Sequence[Example]) -> numpy.ndarray:
        """(N,) gold BIO index of each predicted token of the examples, MISSING where none."""
        parts = [self._gold_one(eg) for eg in examples]
        return numpy.concatenate(parts) if parts else numpy.zeros((0,), dtype="i")

    def _gold_one(self, eg: Example) -> numpy.ndarray:
        x, y = eg.predicted, eg.reference
        if len(x) == 0:
            return numpy.zeros((0,), dtype="i")
        if len(x) == len(y) and _is_identity(eg):
            return self._from_arrays(y.to_array([ENT_IOB, ENT_TYPE]))
        # Tokenisations differ: let spaCy project the gold entities onto predicted tokens
        # (BILUO tags: U- is a one-token entity, L- its last token).
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
    """The sorted entity types of the examples' reference docs."""
    return sorted({ent.label_ for eg in examples for ent in eg.reference.ents})


def doc_bio_tags(doc) -> List[str]:
    """The entities of a Doc as IOB2 tag strings, one per token ("B-X", "I-X", "O");
    tokens with missing entity annotation are "O"."""
    return [f"{t.ent_iob_}-{t.ent_type_}" if t.ent_iob_ in ("B", "I") else "O" for t in doc]
