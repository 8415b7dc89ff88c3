"""The gold entities of a corpus as flat arrays (per sentence its length, per token its BIO
prefix and entity type index), from Docs (``Doc.to_array``, `from_docs`): what the entity-share
draw and resampling count from (the lab's corpus statistics read column files through
``projects/lab/auc_ner_lab/corpus_stats.py``, which builds the same arrays). A
token with missing entity annotation counts as O.
"""
from typing import Iterable, List, NamedTuple, Sequence, Union

import numpy

# prefix codes of `EntityArrays.prefix`
PREFIX_O, PREFIX_B, PREFIX_I = 0, 1, 2
# spaCy's ENT_IOB codes (0 is missing annotation)
_IOB_I, _IOB_B = 1, 3


class EntityArrays(NamedTuple):
    """lengths (S,) tokens per sentence; prefix (N,) 0 O, 1 B, 2 I for every token of the
    corpus in order; type_index (N,) index into ``types`` (-1 for O); types sorted."""

    lengths: numpy.ndarray
    prefix: numpy.ndarray
    type_index: numpy.ndarray
    types: List[str]

    @classmethod
    def from_docs(cls, docs: Iterable) -> "EntityArrays":
        """From Docs: their ``ENT_IOB`` and ``ENT_TYPE`` arrays."""
        from spacy.attrs import ENT_IOB, ENT_TYPE

        docs = list(docs)
        lengths = numpy.asarray([len(doc) for doc in docs], dtype="i8")
        if int(lengths.sum()) == 0:
            empty = numpy.zeros((0,), dtype="i8")
            return cls(lengths, empty, empty.copy(), [])
        arr = numpy.concatenate([doc.to_array([ENT_IOB, ENT_TYPE]).reshape(-1, 2) for doc in docs])
        iob = arr[:, 0]
        prefix = numpy.full(len(arr), PREFIX_O, dtype="i8")
        prefix[iob == _IOB_B] = PREFIX_B
        prefix[iob == _IOB_I] = PREFIX_I
        is_ent = prefix != PREFIX_O
        hashes, inverse = numpy.unique(arr[:, 1][is_ent], return_inverse=True)
        strings = docs[0].vocab.strings
        names = [strings[int(h)] for h in hashes]
        order = numpy.argsort(names)
        rank = numpy.empty_like(order)
        rank[order] = numpy.arange(len(order))
        type_index = numpy.full(len(arr), -1, dtype="i8")
        type_index[is_ent] = rank[inverse.ravel()]
        return cls(lengths, prefix, type_index, sorted(names))

    def type_counts(self) -> numpy.ndarray:
        """(S, T) c(t, s): tokens of entity type t in sentence s."""
        return type_counts(self.lengths, self.type_index, len(self.types))

    def entity_tokens(self) -> numpy.ndarray:
        """(S,) entity tokens (B or I, any type) in each sentence."""
        return self.type_counts().sum(axis=1)

    def type_tokens(self) -> numpy.ndarray:
        """(T,) tokens of each entity type in the corpus."""
        return numpy.bincount(self.type_index[self.type_index >= 0], minlength=len(self.types))


def type_counts(lengths: Union[Sequence[int], numpy.ndarray], type_index: numpy.ndarray, n_types: int) -> numpy.ndarray:
    """(S, T) c(t, s) from sentence lengths and the (N,) type index (-1 for O), one bincount."""
    lengths = numpy.asarray(lengths, dtype="i8")
    type_index = numpy.asarray(type_index)
    sentence = numpy.repeat(numpy.arange(len(lengths)), lengths)
    is_ent = type_index >= 0
    flat = sentence[is_ent] * n_types + type_index[is_ent]
    return numpy.bincount(flat, minlength=len(lengths) * n_types).reshape(len(lengths), n_types)
