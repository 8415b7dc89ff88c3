"""``Augmented.v1``: the label-preserving augmentation of Dai & Adel (2020), "An Analysis of
Simple Data Augmentation for Named Entity Recognition", as a reader that yields each example
followed by ``copies`` new versions: label-wise token replacement ("another token with the
same label"), mention replacement ("another mention ... which has the same entity type") and
shuffle within segments ("the label order is kept unchanged"), each a coin flip with
probability p. Entities keep their number, types and order; tokens with missing gold are never
replaced. The corpus is augmented at once with array operations and Docs built as yielded
(memory grows by bytes a token, not by Docs); copy k comes from
``numpy.random.default_rng([seed, k])``, so raising ``copies`` keeps the first ones.
"""
import math
from typing import Callable, Iterable, Iterator, List, NamedTuple, Optional, Sequence, Tuple

import numpy
from spacy.attrs import ENT_IOB, ENT_TYPE, ORTH, SPACY
from spacy.language import Language
from spacy.tokens import Doc
from spacy.training import Example
from spacy.util import registry

from ..data.columns import DataError
from ..data.files import check_seed, is_number, is_whole

Reader = Callable[[Language], Iterable[Example]]
OPERATIONS = ("mention", "token", "shuffle")  # MR, LwTR, SiS: the order of a chain
COMBINE = ("separate", "chain")
# ENT_IOB codes of a spaCy Doc
MISSING, INSIDE, OUTSIDE, BEGIN = 0, 1, 2, 3


class Tokens(NamedTuple):
    """A corpus as flat token arrays: ORTH and ENT_TYPE hashes, ENT_IOB codes, trailing
    spaces (all (N,)), and the length of each sentence (S,)."""

    orth: numpy.ndarray
    iob: numpy.ndarray
    etype: numpy.ndarray
    space: numpy.ndarray
    lengths: numpy.ndarray

    def take(self, index: numpy.ndarray, lengths: Optional[numpy.ndarray] = None) -> "Tokens":
        """The tokens at ``index`` (new sentence lengths when they change)."""
        return Tokens(
            self.orth[index], self.iob[index], self.etype[index], self.space[index],
            self.lengths if lengths is None else lengths,
        )


def corpus_tokens(docs: Sequence[Doc]) -> Tokens:
    """The flat token arrays of a list of Docs."""
    lengths = numpy.asarray([len(doc) for doc in docs], dtype="i8")
    if not lengths.sum():
        empty = numpy.zeros((0,), dtype="u8")
        return Tokens(empty, empty.astype("i8"), empty, empty.astype(bool), lengths)
    arr = numpy.concatenate([doc.to_array([ORTH, ENT_IOB, ENT_TYPE, SPACY]).reshape(-1, 4) for doc in docs if len(doc)])
    return Tokens(arr[:, 0], arr[:, 1].astype("i8"), arr[:, 2], arr[:, 3].astype(bool), lengths)


def segment_starts(iob: numpy.ndarray, lengths: numpy.ndarray) -> numpy.ndarray:
    """Where a segment of the same label starts (bool (N,)): at every sentence start, every
    B, and every O or missing token that follows a token of another kind. An I continues its
    mention, so a segment is a mention, a run of O tokens or a run of missing ones."""
    starts = numpy.ones(len(iob), dtype=bool)
    if len(iob) > 1:
        prev = iob[:-1]
        cur = iob[1:]
        same_run = (cur == prev) & ((cur == OUTSIDE) | (cur == MISSING))
        continues = (cur == INSIDE) & ((prev == INSIDE) | (prev == BEGIN))
        starts[1:] = ~(same_run | continues)
    first = numpy.cumsum(lengths) - lengths
    starts[first[lengths > 0]] = True
    return starts


def segments(tokens: Tokens) -> Tuple[numpy.ndarray, numpy.ndarray]:
    """The first token and the length of every segment (`segment_starts`), in order."""
    seg_start = numpy.flatnonzero(segment_starts(tokens.iob, tokens.lengths))
    return seg_start, numpy.diff(numpy.append(seg_start, len(tokens.iob)))


def _ranges(starts: numpy.ndarray, lengths: numpy.ndarray) -> numpy.ndarray:
    """The concatenation of range(s, s + l) for each start s and length l."""
    total = int(lengths.sum())
    offsets = numpy.cumsum(lengths) - lengths
    return numpy.repeat(starts - offsets, lengths) + numpy.arange(total)


class Source:
    """What the operations draw from, built from the original training set: the label-wise
    token distribution (count^power over the distinct tokens of each BIO label) and the
    distinct mentions of each entity type, both in order of first appearance."""

    def __init__(self, tokens: Tokens, power: float = 1.0):
        self.tokens = tokens
        self.types = numpy.unique(numpy.concatenate([tokens.etype, numpy.zeros(1, dtype=tokens.etype.dtype)]))
        # label-wise token distribution: (label, orth) pairs sorted by label, cumulative weights
        labelled = tokens.iob != MISSING
        pairs = numpy.stack([self.label_ids(tokens)[labelled].astype("u8"), tokens.orth[labelled]], axis=1)
        pairs, first, counts = numpy.unique(pairs.reshape(-1, 2), axis=0, return_index=True, return_counts=True)
        order = numpy.lexsort((first, pairs[:, 0]))  # by label, then first appearance
        self.pair_label = pairs[order, 0].astype("i8")
        self.pair_orth = pairs[order, 1]
        self.cum_weight = numpy.cumsum(counts[order].astype("f8") ** power)
        # distinct mentions: (type rank, orth of each token, 0-padded), first occurrence
        seg_start, seg_len = segments(tokens)
        is_mention = tokens.iob[seg_start] == BEGIN
        m_start, m_len = seg_start[is_mention], seg_len[is_mention]
        width = int(m_len.max()) if len(m_len) else 0
        table = numpy.zeros((len(m_start), width + 1), dtype="u8")
        table[:, 0] = self.type_ids(tokens.etype[m_start])
        rows = numpy.repeat(numpy.arange(len(m_start)), m_len)
        cols = 1 + numpy.arange(int(m_len.sum())) - numpy.repeat(numpy.cumsum(m_len) - m_len, m_len)
        table[rows, cols] = tokens.orth[_ranges(m_start, m_len)]
        _, first = numpy.unique(table, axis=0, return_index=True)
        first = first[numpy.lexsort((first, table[first, 0]))]  # by type, then first appearance
        self.mention_type = table[first, 0].astype("i8")
        self.mention_start = m_start[first]
        self.mention_len = m_len[first]

    def type_ids(self, etype: numpy.ndarray) -> numpy.ndarray:
        return numpy.searchsorted(self.types, etype)

    def label_ids(self, tokens: Tokens) -> numpy.ndarray:
        """One id per (entity type, IOB code): the full BIO label of each token."""
        return self.type_ids(tokens.etype) * 4 + tokens.iob


def replace_mentions(source: Source, p: float, rng: numpy.random.Generator) -> Tokens:
    """MR over the whole training set: each mention is replaced, with probability p, by a
    distinct mention of its type drawn uniformly. Draws: one uniform per segment for the coin,
    then one per segment for the choice (floor(u * number of mentions of the type))."""
    tokens = source.tokens
    seg_start, seg_len = segments(tokens)
    coin = rng.random(len(seg_start))
    pick = rng.random(len(seg_start))
    is_mention = tokens.iob[seg_start] == BEGIN
    replace = is_mention & (coin < p)
    seg_type = source.type_ids(tokens.etype[seg_start])
    lo = numpy.searchsorted(source.mention_type, seg_type, side="left")
    hi = numpy.searchsorted(source.mention_type, seg_type, side="right")
    chosen = (lo + numpy.floor(pick * (hi - lo)).astype("i8"))[replace]
    new_start, new_len = seg_start.copy(), seg_len.copy()
    new_start[replace] = source.mention_start[chosen]
    new_len[replace] = source.mention_len[chosen]
    index = _ranges(new_start, new_len)
    sentence = numpy.repeat(numpy.arange(len(tokens.lengths)), tokens.lengths)[seg_start]
    lengths = numpy.bincount(sentence, weights=new_len, minlength=len(tokens.lengths)).astype("i8")
    out = tokens.take(index, lengths)
    # the last token of a segment keeps the space that followed the segment it replaces
    space = out.space.copy()
    space[numpy.cumsum(new_len) - 1] = tokens.space[seg_start + seg_len - 1]
    return out._replace(space=space)


def replace_tokens(source: Source, tokens: Tokens, p: float, rng: numpy.random.Generator) -> Tokens:
    """LwTR: each token with a gold label is replaced, with probability p, by a token drawn from
    the distribution of its BIO label. Draws: one uniform per token for the coin, then one per
    token for the choice (inverse of the label's cumulative weights)."""
    coin = rng.random(len(tokens.orth))
    pick = rng.random(len(tokens.orth))
    replace = (coin < p) & (tokens.iob != MISSING)
    if not replace.any():
        return tokens
    label = source.label_ids(tokens)[replace]
    lo = numpy.searchsorted(source.pair_label, label, side="left")
    hi = numpy.searchsorted(source.pair_label, label, side="right")
    cum = source.cum_weight
    base = numpy.where(lo > 0, cum[numpy.maximum(lo - 1, 0)], 0.0)
    target = base + pick[replace] * (cum[hi - 1] - base)
    chosen = numpy.minimum(numpy.searchsorted(cum, target, side="right"), hi - 1)
    orth = tokens.orth.copy()
    orth[replace] = source.pair_orth[chosen]
    return tokens._replace(orth=orth)


def shuffle_segments(tokens: Tokens, p: float, rng: numpy.random.Generator) -> Tokens:
    """SiS: the tokens of each segment are shuffled with probability p; labels and spaces stay
    in place. Draws: one uniform per segment for the coin, then one per token as sort keys."""
    starts = segment_starts(tokens.iob, tokens.lengths)
    segment = numpy.cumsum(starts) - 1
    coin = rng.random(int(starts.sum()))
    keys = rng.random(len(tokens.orth))
    keys = numpy.where((coin < p)[segment], keys, numpy.arange(len(keys), dtype="f8"))
    order = numpy.lexsort((keys, segment))
    return tokens._replace(orth=tokens.orth[order])


def augment(source: Source, operations: Sequence[Tuple[str, float]], rng: numpy.random.Generator) -> Tokens:
    """The training set after the given (operation, p) steps, in order."""
    tokens = source.tokens
    for op, p in operations:
        if op == "mention":
            if tokens is not source.tokens:
                raise ValueError("mention replacement must come first: it draws from the original sentences")
            tokens = replace_mentions(source, p, rng)
        elif op == "token":
            tokens = replace_tokens(source, tokens, p, rng)
        else:
            tokens = shuffle_segments(tokens, p, rng)
    return tokens


def iter_docs(tokens: Tokens, vocab) -> Iterator[Tuple[Doc, Doc]]:
    """(predicted, reference) Docs, one pair per sentence, made as they are yielded: a Doc
    costs far more memory than its tokens' array entries."""
    strings = vocab.strings
    ends = numpy.cumsum(tokens.lengths).tolist()
    begin = 0
    for end in ends:
        w = [strings[int(h)] for h in tokens.orth[begin:end].tolist()]
        s = tokens.space[begin:end].tolist()
        reference = Doc(vocab, words=w, spaces=s)
        if end > begin:
            ents = numpy.stack([tokens.iob[begin:end], tokens.etype[begin:end].astype("i8")], axis=1).astype("u8")
            reference = reference.from_array([ENT_IOB, ENT_TYPE], ents)
        yield Doc(vocab, words=w, spaces=s), reference
        begin = end


@registry.readers("spacy_auc_ner.Augmented.v1")
class AugmentedCorpus:
    """Dai & Adel (2020) augmentation of the wrapped corpus: every example, then ``copies``
    augmented versions of it (settings: README's readers table and the package guide). ``combine``
    "separate": copy k applies the k-th enabled operation, cycling; "chain": every copy all."""

    def __init__(
        self,
        corpus: Reader,
        copies: int = 3,
        replace_tokens: float = 0.3,
        replace_mentions: float = 0.3,
        shuffle_segments: float = 0.3,
        combine: str = "separate",
        power: float = 1.0,
        seed: int = 0,
    ):
        name = "[Augmented.v1]"
        if not is_whole(copies, 0):
            raise DataError(f"{name} copies must be 0 or more, got {copies!r}")
        probs = {"replace_tokens": replace_tokens, "replace_mentions": replace_mentions, "shuffle_segments": shuffle_segments}
        for key, p in probs.items():
            if not (is_number(p) and 0.0 <= p <= 1.0):
                raise DataError(f"{name} {key} must be in [0, 1], got {p!r}")
        if combine not in COMBINE:
            raise DataError(f"{name} combine must be one of {', '.join(COMBINE)}, got {combine!r}")
        if not (is_number(power) and 0 <= power < math.inf):  # inf: every weight inf, the draw's probabilities NaN
            raise DataError(f"{name} power must be 0 or more and finite, got {power!r}")
        check_seed(seed, f"{name} seed")  # numpy refused -1 only when the corpus was read, naming nothing
        ps = dict(zip(OPERATIONS, (replace_mentions, replace_tokens, shuffle_segments)))
        self.operations = [(op, ps[op]) for op in OPERATIONS if ps[op] > 0]
        if copies and not self.operations:
            raise DataError(f"{name} copies = {copies} but every operation is off: set replace_tokens, replace_mentions or shuffle_segments above 0")
        self.corpus, self.copies, self.combine, self.power, self.seed = corpus, copies, combine, power, seed

    def plan(self, k: int) -> List[Tuple[str, float]]:
        """The (operation, p) steps of copy k."""
        if self.combine == "chain":
            return list(self.operations)
        return [self.operations[k % len(self.operations)]]

    def __call__(self, nlp: Language) -> Iterator[Example]:
        examples = list(self.corpus(nlp))
        if not self.copies or not examples:
            yield from examples
            return
        source = Source(corpus_tokens([eg.reference for eg in examples]), self.power)
        # each copy is drawn over the whole corpus at once but yielded after its example,
        # so copies wait as token arrays
        copies = [
            iter_docs(augment(source, self.plan(k), numpy.random.default_rng([self.seed, k])), nlp.vocab)
            for k in range(self.copies)
        ]
        for eg in examples:
            yield eg
            for pairs in copies:
                yield Example(*next(pairs))

