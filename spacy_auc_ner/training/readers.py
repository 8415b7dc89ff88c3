"""Registered corpus readers for low-resource and imbalance studies, composed in configs like
``spacy.Corpus.v1``: sources (``LowResource.v1``, ``EntityRatio.v1``) read a ``path`` or wrap a
``corpus``, ``Pool.v1`` the rest of a draw's split without entities (unlabeled text);
``PseudoLabelled.v1`` adds a self-training round's pseudo-labelled sentences to a corpus;
wrappers (``MaskedEntities.v1``, ``Resampled.v1``) wrap a nested reader block. A
sentence (one Doc, as ``convert`` writes them) is one Example. Draws use
``random.Random(seed)``, whose streams are the same on every platform, so a seed gives the same
sentences in the same order anywhere.
"""
import collections.abc
import logging
import random
import sys
from pathlib import Path
from typing import Callable, Iterable, Iterator, List, Optional, Sequence, Tuple, Union

import numpy
from spacy.language import Language
from spacy.tokens import Doc
from spacy.training import Example
from spacy.util import registry

from ..data.columns import DataError, read_docs, tokens_only
from ..data.entity_arrays import EntityArrays
from ..data.files import check_seed, is_number, is_whole
from .resampling import METHODS, VARIANTS, check_base, frequencies, rareness

Reader = Callable[[Language], Iterable[Example]]
logger = logging.getLogger(__name__)


class FileDocs:
    """The reference Docs of a file, read once per vocab. spaCy calls the training corpus
    every epoch and the dev corpus at every evaluation, and a draw keeps n of a corpus's
    thousands of sentences: reading the file and making an Example of every sentence on each
    call took a third of a 20-sentence study cell."""

    def __init__(self, path: Union[str, Path]):
        self.path = path
        self._vocab = None
        self._docs: List[Doc] = []

    def __call__(self, nlp: Language) -> List[Doc]:
        if self._vocab is not nlp.vocab:
            self._docs, self._vocab = read_docs(self.path, nlp.vocab, lang=nlp.lang), nlp.vocab
        return self._docs


class LazyExamples(collections.abc.Sequence):
    """The Examples of reference Docs, each made when it is asked for (a fresh one on every
    access, as a reader makes fresh Examples on every call)."""

    def __init__(self, nlp: Language, references: Sequence[Doc]):
        self.nlp, self.references = nlp, references

    def __len__(self) -> int:
        return len(self.references)

    def __getitem__(self, i):
        if isinstance(i, slice):
            return [self[j] for j in range(*i.indices(len(self)))]
        return Example(tokens_only(self.references[i], self.nlp.vocab), self.references[i])


def _load(nlp: Language, docs: Optional[FileDocs], corpus: Optional[Reader], reader: str) -> Sequence[Example]:
    """The examples of a file (through ``docs``) or of an inner reader (``corpus``): exactly one."""
    if (docs is None) == (corpus is None):
        raise DataError(f"[{reader}] give exactly one of 'path' (a .spacy or column file) and 'corpus' (a reader)")
    if corpus is not None:
        return list(corpus(nlp))
    assert docs is not None
    return LazyExamples(nlp, docs(nlp))


def gold_arrays(examples: Sequence[Example]) -> EntityArrays:
    """The gold entities of the examples' reference Docs as flat arrays."""
    if isinstance(examples, LazyExamples):  # no Example needed to read the references
        return EntityArrays.from_docs(examples.references)
    return EntityArrays.from_docs(eg.reference for eg in examples)


def _report(text: str) -> None:
    logger.info(text)
    print(f"[spacy_auc_ner] {text}", file=sys.stderr)


@registry.readers("spacy_auc_ner.LowResource.v1")
class LowResourceCorpus:
    """n sentences drawn with a seed: the first n of a seeded permutation (in drawn order, or
    corpus order without shuffle), so a smaller draw with the same seed is a subset of a larger."""

    def __init__(self, path: Optional[str] = None, n: int = 100, seed: int = 0, shuffle: bool = True, corpus: Optional[Reader] = None):
        if not is_whole(n, 1):
            raise DataError(f"[LowResource.v1] n must be a whole number, at least 1, got {n!r}")
        check_seed(seed, "[LowResource.v1] seed")
        self.path, self.corpus, self.n, self.seed, self.shuffle = path, corpus, n, seed, shuffle
        self.indices: List[int] = []
        self._docs = FileDocs(path) if path is not None else None

    def __call__(self, nlp: Language) -> Iterator[Example]:
        examples = _load(nlp, self._docs, self.corpus, "LowResource.v1")
        self.indices = draw_indices(len(examples), self.n, self.seed, self.shuffle, where=self.path or "corpus")
        for i in self.indices:
            yield examples[i]


def draw_indices(n_total: int, n: int, seed: int, shuffle: bool = True, where="corpus") -> List[int]:
    """The sentence indices of a low-resource draw (shared by the reader and ``partition``)."""
    if n > n_total:
        raise DataError(f"{where}: cannot draw {n} sentences from a corpus of {n_total}")
    order = list(range(n_total))
    random.Random(seed).shuffle(order)
    chosen = order[:n]
    return chosen if shuffle else sorted(chosen)


def pool_indices(n_total: int, n: int, seed: int, limit: int = 0, where="corpus") -> List[int]:
    """The sentence indices that the draw of ``n`` with ``seed`` leaves out, the first ``limit``
    of them in the draw's seeded order (0: all; a smaller pool is within a larger), in corpus
    order: the experiments' unlabeled pool (`PoolCorpus`, ``spacy-auc-ner pool``)."""
    if not is_whole(n, 0):
        raise DataError(f"{where}: a draw of {n!r} sentences: expected 0 or more")
    if not is_whole(limit, 0):
        raise DataError(f"{where}: a pool limit of {limit!r} sentences: expected 0 (all) or more")
    if n >= n_total:
        raise DataError(f"{where}: a draw of {n} sentences leaves none of its {n_total} for the pool")
    order = draw_indices(n_total, n_total, seed, where=where)
    return sorted(order[n : n + limit] if limit else order[n:])


@registry.readers("spacy_auc_ner.Pool.v1")
class PoolCorpus:
    """The rest of the split: the sentences of ``path`` that ``LowResource.v1``'s draw of ``n``
    with ``seed`` leaves out, entities removed, ``limit`` of them (`pool_indices`), tokens and
    spaces kept: an experiment's unlabeled text for ``[corpora.pool]`` (self-training) and
    ``[corpora.pretrain]`` (spacy pretrain), read from the split itself, never written out."""

    def __init__(self, path: str, n: int, seed: int = 0, limit: int = 0):
        check_seed(seed, "[Pool.v1] seed")  # as the pool command's --seed: -1 drew what 1 draws
        self.path, self.n, self.seed, self.limit = path, n, seed, limit
        self._docs = FileDocs(path)

    def __call__(self, nlp: Language) -> Iterator[Example]:
        references = self._docs(nlp)
        for i in pool_indices(len(references), self.n, self.seed, self.limit, where=self.path):
            doc = tokens_only(references[i], nlp.vocab)
            yield Example(doc, doc)


@registry.readers("spacy_auc_ner.PseudoLabelled.v1")
def create_pseudo_labelled(corpus: Reader, path: str, gold_preproc: bool = True) -> Reader:
    """The examples of ``corpus`` (the gold sentences), then the pseudo-labelled sentences of
    ``path`` (the .spacy file a self-training round writes), read as spaCy's ``Corpus.v1``
    reads a file with ``gold_preproc`` (true: on their own tokens): a round's training corpus,
    the config's own plus the round's pseudo-labels, without writing the gold sentences out."""
    from spacy.training import Corpus

    pseudo = Corpus(path, gold_preproc=gold_preproc)

    def read(nlp: Language) -> Iterator[Example]:
        yield from corpus(nlp)
        yield from pseudo(nlp)

    return read


@registry.readers("spacy_auc_ner.EntityRatio.v1")
class EntityRatioCorpus:
    """The imbalance generator: n sentences with ``percent`` % entity tokens, within ``tolerance``
    x target or an error; the share reached is printed to stderr and kept as ``.reached``."""

    def __init__(
        self, path: Optional[str] = None, n: int = 100, percent: float = 5.0, seed: int = 0, tolerance: float = 0.1, corpus: Optional[Reader] = None
    ):
        if not (is_number(percent) and 0 < percent < 100):
            raise DataError(f"[EntityRatio.v1] percent must be between 0 and 100 (exclusive), got {percent!r}")
        if not is_whole(n, 1):
            raise DataError(f"[EntityRatio.v1] n must be a whole number, at least 1, got {n!r}")
        if not (is_number(tolerance) and tolerance >= 0):  # a negative one refused every draw, NaN none
            raise DataError(f"[EntityRatio.v1] tolerance must be a number >= 0, got {tolerance!r}")
        check_seed(seed, "[EntityRatio.v1] seed")
        self.path, self.corpus, self.n, self.percent = path, corpus, n, percent
        self.seed, self.tolerance = seed, tolerance
        self.indices: List[int] = []
        self.reached: Optional[float] = None
        self._reported = False
        self._docs = FileDocs(path) if path is not None else None
        self._drawn_from: Optional[Sequence[Doc]] = None  # the file's Docs the draw was made on

    def __call__(self, nlp: Language) -> Iterator[Example]:
        examples = _load(nlp, self._docs, self.corpus, "EntityRatio.v1")
        where = self.path or "corpus"
        # the draw depends only on the sentences: made once per read of a file
        references = examples.references if isinstance(examples, LazyExamples) else None
        if references is None or references is not self._drawn_from:
            gold = gold_arrays(examples)
            self.indices, self.reached = draw_entity_ratio(
                gold.lengths, gold.entity_tokens(), self.n, self.percent, self.seed, self.tolerance, where=where
            )
            self._drawn_from = references
        if not self._reported:
            _report(f"EntityRatio: {self.n} sentences of {where} with {self.reached:.2f}% entity tokens (target {self.percent}%)")
            self._reported = True
        for i in self.indices:
            yield examples[i]


def draw_entity_ratio(
    lengths: numpy.ndarray,
    entity_tokens: numpy.ndarray,
    n: int,
    percent: float,
    seed: int,
    tolerance: float = 0.1,
    where="corpus",
    max_rounds: Optional[int] = None,
    n_candidates: int = 2000,
) -> Tuple[List[int], float]:
    """Indices of n sentences whose entity-token share is closest to ``percent``, and the share
    reached (in %): the best split of seeded entity-bearing and entity-free sentences, then
    single swaps with a seeded sample of unchosen ones while they help. Raises DataError when
    the share is off by more than ``tolerance`` times the target."""
    lengths = numpy.asarray(lengths, dtype="f8")
    ents = numpy.asarray(entity_tokens, dtype="f8")
    total = len(lengths)
    if n > total:
        raise DataError(f"{where}: cannot draw {n} sentences from a corpus of {total}")
    target = percent / 100.0
    rng = random.Random(seed)
    bearing = [i for i in range(total) if ents[i] > 0]
    free = [i for i in range(total) if ents[i] == 0]
    rng.shuffle(bearing)
    rng.shuffle(free)
    # k entity-bearing sentences, n - k entity-free: k in [max(0, n - |free|), min(n, |bearing|)]
    ks = numpy.arange(max(0, n - len(free)), min(n, len(bearing)) + 1)
    cb_e = numpy.concatenate([[0.0], numpy.cumsum(ents[bearing])])
    cb_l = numpy.concatenate([[0.0], numpy.cumsum(lengths[bearing])])
    cf_l = numpy.concatenate([[0.0], numpy.cumsum(lengths[free])])
    shares = entity_share(cb_e[ks], cb_l[ks] + cf_l[n - ks])
    k = int(ks[numpy.argmin(numpy.abs(shares - target))])
    chosen = numpy.asarray(bearing[:k] + free[: n - k], dtype="i8")
    unchosen = numpy.asarray(bearing[k:] + free[n - k :], dtype="i8")
    E, L = ents[chosen].sum(), lengths[chosen].sum()
    rounds = max_rounds if max_rounds is not None else 4 * n + 10
    for _ in range(rounds):
        err = abs(entity_share(E, L) - target)
        if err <= 0.01 * target or not len(unchosen):  # within 1% of the target
            break
        cand = numpy.asarray(rng.sample(range(len(unchosen)), min(n_candidates, len(unchosen))), dtype="i8")
        j = unchosen[cand]
        new_E = E - ents[chosen][:, None] + ents[j][None, :]
        new_L = L - lengths[chosen][:, None] + lengths[j][None, :]
        new_err = numpy.abs(entity_share(new_E, new_L) - target)
        a, b = numpy.unravel_index(int(numpy.argmin(new_err)), new_err.shape)
        if new_err[a, b] >= err - 1e-12:
            break
        E, L = new_E[a, b], new_L[a, b]
        chosen[a], unchosen[cand[b]] = unchosen[cand[b]], chosen[a]
    reached = float(entity_share(100.0 * E, L))  # in %
    if abs(reached - percent) > tolerance * percent:
        overall = float(entity_share(100.0 * ents.sum(), lengths.sum()))
        raise DataError(
            f"{where}: cannot reach {percent}% entity tokens with {n} sentences; the closest found is "
            f"{reached:.2f}% (the corpus has {overall:.2f}% overall, {len(bearing)} entity-bearing and "
            f"{len(free)} entity-free sentences; tolerance {tolerance:.0%} of the target)"
        )
    order = chosen.tolist()
    rng.shuffle(order)
    return order, float(reached)


def entity_share(entity_tokens, tokens):
    """Entity tokens over tokens, 0 over no tokens: 0/0 (empty sentences) was NaN, which argmin
    chose and the tolerance check let through."""
    return entity_tokens / numpy.maximum(tokens, 1.0)


@registry.readers("spacy_auc_ner.MaskedEntities.v1")
class MaskedEntitiesCorpus:
    """Each gold entity hidden with probability p (O, or missing with ``missing = true``) to
    simulate unlabeled entities; the same seed hides the same entities on every call."""

    def __init__(self, corpus: Reader, p: float = 0.5, seed: int = 0, missing: bool = False):
        if not (is_number(p) and 0.0 <= p <= 1.0):
            raise DataError(f"[MaskedEntities.v1] p must be in [0, 1], got {p!r}")
        check_seed(seed, "[MaskedEntities.v1] seed")
        self.corpus, self.p, self.seed, self.missing = corpus, p, seed, missing
        self.n_entities = 0
        self.n_masked = 0

    def __call__(self, nlp: Language) -> Iterator[Example]:
        rng = random.Random(self.seed)
        self.n_entities = self.n_masked = 0
        for eg in self.corpus(nlp):
            ents = eg.reference.ents
            hide = [e for e in ents if rng.random() < self.p]
            self.n_entities += len(ents)
            self.n_masked += len(hide)
            if not hide:
                yield eg
                continue
            ref = eg.reference.copy()
            spans = [ref[e.start : e.end] for e in hide]
            if self.missing:
                ref.set_ents([], missing=spans, default="unmodified")
            else:
                ref.set_ents([], outside=spans, default="unmodified")
            yield Example(eg.predicted, ref)


@registry.readers("spacy_auc_ner.Resampled.v1")
class ResampledCorpus:
    """Sentence-level resampling of the wrapped corpus (Wang & Wang 2022) by ``method`` and
    ``variant``; the rareness comes from the wrapped corpus, computed on the first call and kept."""

    def __init__(self, corpus: Reader, method: str = "sCR", variant: str = "paper", base: float = 2.0, seed: int = 0, shuffle: bool = True):
        if method not in METHODS:
            raise DataError(f"[Resampled.v1] unknown method {method!r}; choose one of {', '.join(METHODS)}")
        if variant not in VARIANTS:
            raise DataError(f"[Resampled.v1] unknown variant {variant!r}; choose one of {', '.join(VARIANTS)}")
        check_base(base, "[Resampled.v1]")
        check_seed(seed, "[Resampled.v1] seed")
        self.corpus, self.method, self.variant, self.base = corpus, method, variant, base
        self.seed, self.shuffle = seed, shuffle
        self.types: Optional[List[str]] = None
        self.rareness: Optional[dict] = None
        self.frequencies: Optional[numpy.ndarray] = None

    def __call__(self, nlp: Language) -> Iterator[Example]:
        examples = list(self.corpus(nlp))
        if not examples:  # numpy's reshape of nothing failed, naming nothing
            raise DataError("[Resampled.v1] the corpus it wraps gives no sentences")
        gold = gold_arrays(examples)
        types = gold.types
        if self.rareness is None:
            r = rareness(gold.type_tokens(), int(gold.lengths.sum()), self.base) if types else numpy.zeros(0)
            self.types, self.rareness = types, dict(zip(types, r.tolist()))
        r = numpy.asarray([self.rareness.get(t, 0.0) for t in types])
        self.frequencies = frequencies(gold.type_counts(), gold.lengths, r, self.method, self.variant)
        order = numpy.repeat(numpy.arange(len(examples)), self.frequencies).tolist()
        if self.shuffle:
            random.Random(self.seed).shuffle(order)
        # A repeat is the same Example object: spaCy's Language.update copies each batch's
        # predicted Docs before annotating them, so repeats never share state in training.
        for i in order:
            yield examples[i]
