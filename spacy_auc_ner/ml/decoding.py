"""From per-token scores to valid BIO entity spans, over a batch's concatenated tokens
(``lengths`` per doc). The decoders run on the scores' device and move only the chosen labels
and their confidences (the two-task decoder takes CPU arrays). Then the spans fitted to a
batch's text (`fit_to_text`, reading `text_arrays`), and the token arithmetic of writing them
into Docs beside the entities already there (`free_spans`, `token_mask`, `true_runs`).
"""
from typing import Iterable, List, NamedTuple, Sequence, Tuple

import numpy
from spacy.attrs import IS_SPACE, SENT_START
from spacy.tokens import Doc
from thinc.backends import get_array_ops

from .crf import bio_constraints, constrain, host_lengths, pad, unpad, viterbi


class Spans(NamedTuple):
    """Entity spans of a batch: doc index, token start, token end (exclusive, doc-relative),
    entity type index and a confidence score, each an array of length n_spans."""

    doc: numpy.ndarray
    start: numpy.ndarray
    end: numpy.ndarray
    type: numpy.ndarray
    score: numpy.ndarray


def no_spans() -> Spans:
    """A batch without entities."""
    empty = numpy.zeros((0,), dtype="i")
    return Spans(empty, empty, empty, empty, numpy.zeros((0,), dtype="f"))


def doc_starts(lengths: numpy.ndarray) -> numpy.ndarray:
    """(N,) True at the first token of each doc."""
    lengths = numpy.asarray(lengths, dtype="i")
    starts = numpy.zeros(int(lengths.sum()), dtype=bool)
    offsets = numpy.cumsum(lengths) - lengths
    starts[offsets[lengths > 0]] = True
    return starts


def bio_spans(is_entity, is_begin, types, confidence, lengths) -> Spans:
    """Maximal valid BIO spans from token decisions, repaired as usual (an I that cannot continue
    the entity before it opens a new one, as a B would); a span's score is its tokens' mean confidence."""
    is_entity = numpy.asarray(is_entity, dtype=bool)
    is_begin = numpy.asarray(is_begin, dtype=bool)
    types = numpy.asarray(types)
    confidence = numpy.asarray(confidence, dtype="f")
    lengths = numpy.asarray(lengths, dtype="i")
    N = is_entity.shape[0]
    first = doc_starts(lengths)
    prev_entity = numpy.zeros(N, dtype=bool)
    prev_entity[1:] = is_entity[:-1]
    same_type = numpy.zeros(N, dtype=bool)
    same_type[1:] = types[1:] == types[:-1]
    continues = is_entity & ~is_begin & ~first & prev_entity & same_type
    start_mask = is_entity & ~continues
    next_continues = numpy.zeros(N, dtype=bool)
    next_continues[:-1] = continues[1:]
    end_mask = is_entity & ~next_continues
    starts = numpy.flatnonzero(start_mask)
    ends = numpy.flatnonzero(end_mask) + 1
    offsets = numpy.cumsum(lengths) - lengths
    doc = numpy.searchsorted(numpy.cumsum(lengths), starts, side="right")
    csum = numpy.concatenate([[0.0], numpy.cumsum(confidence, dtype="f8")])
    score = (csum[ends] - csum[starts]) / numpy.maximum(ends - starts, 1)
    return Spans(
        doc=doc.astype("i"),
        start=(starts - offsets[doc]).astype("i"),
        end=(ends - offsets[doc]).astype("i"),
        type=types[starts].astype("i"),
        score=numpy.asarray(score, dtype="f"),
    )


def greedy_bio(bio_probs: numpy.ndarray, bio_type: numpy.ndarray, bio_begin: numpy.ndarray, lengths) -> Spans:
    """Maximum-confidence label per token (eq. 2 of the OVA paper), then BIO repair."""
    ops = get_array_ops(bio_probs)
    best_on_device = bio_probs.argmax(axis=1)
    conf = ops.to_numpy(bio_probs[ops.xp.arange(best_on_device.shape[0]), best_on_device])
    best = ops.to_numpy(best_on_device)  # (N,) back to the CPU, not the (N, n_bio) probabilities
    return bio_spans(best > 0, bio_begin[best], bio_type[best], conf, lengths)


def two_task_spans(p_entity, p_begin, type_log_probs, lengths, threshold: float = 0.5) -> Spans:
    """Algorithm 1 of the AUC-2T paper: entity and beginning both on -> B, entity only -> I,
    else O (begin without entity is O); then each span takes the entity type with the highest
    summed log-probability over its tokens (the type head; one type: always that type)."""
    is_entity = p_entity > threshold
    is_begin = p_begin > threshold
    untyped = numpy.zeros(is_entity.shape[0], dtype="i")
    spans = bio_spans(is_entity, is_begin, untyped, p_entity, lengths)
    if spans.start.size and type_log_probs.shape[1] > 1:
        offsets = numpy.cumsum(lengths) - lengths
        g_start = spans.start + offsets[spans.doc]
        g_end = spans.end + offsets[spans.doc]
        csum = numpy.concatenate([numpy.zeros((1, type_log_probs.shape[1])), numpy.cumsum(type_log_probs, axis=0, dtype="f8")])
        spans = spans._replace(type=(csum[g_end] - csum[g_start]).argmax(axis=1).astype("i"))
    return spans


def viterbi_bio(
    log_scores,
    lengths,
    bio_type: numpy.ndarray,
    bio_begin: numpy.ndarray,
    confidence=None,
    trans=None,
    start=None,
    end=None,
) -> Spans:
    """The highest-scoring *valid* BIO sequence of each doc, batched on the scores' device: the
    tokens' (N, K) `log_scores` plus, for a CRF, `trans`, `start` and `end` (zero when omitted).
    Span scores are the mean `confidence` (N, K) of the chosen labels (default exp(log_scores))."""
    ops = get_array_ops(log_scores)
    xp = ops.xp
    lengths = host_lengths(lengths)
    K = log_scores.shape[1]
    if log_scores.shape[0] == 0:
        return no_spans()
    zeros = xp.zeros(K, dtype=log_scores.dtype)
    trans = xp.zeros((K, K), dtype=log_scores.dtype) if trans is None else trans
    trans, start, end = constrain(
        trans,
        zeros if start is None else start,
        zeros if end is None else end,
        bio_constraints(bio_type, bio_begin),
    )
    E, mask = pad(log_scores, lengths)
    path, _ = viterbi(E, mask, trans, start, end)
    best_x = unpad(path, mask)
    conf = xp.exp(log_scores) if confidence is None else confidence
    conf = conf[xp.arange(best_x.shape[0]), best_x]
    best = ops.to_numpy(best_x).astype("i")
    return bio_spans(best > 0, bio_begin[best], bio_type[best], ops.to_numpy(conf), lengths)


def fit_to_text(spans: Spans, lengths, is_space, sent_start) -> Spans:
    """The spans cut where spaCy's ``ner`` could not have drawn them (its transition rules), for
    any scheme's decoder: a span that runs over a sentence start (``sent_start``, (N,) True where
    an earlier pipe set one) is cut there, and a piece drops the whitespace tokens it starts
    with (``is_space``, (N,)), an all-whitespace piece dropped whole. Each piece keeps its span's
    type and score; the batch's tokens are concatenated as ``lengths`` says."""
    if spans.start.size == 0:
        return spans
    lengths = numpy.asarray(lengths, dtype="i")
    is_space = numpy.asarray(is_space, dtype=bool)
    sent_start = numpy.asarray(sent_start, dtype=bool)
    offsets = numpy.cumsum(lengths) - lengths
    g_start = spans.start + offsets[spans.doc]
    sizes = spans.end - spans.start
    # the span of each token (-1: outside every span); spans never overlap
    tokens = numpy.repeat(g_start, sizes) + numpy.arange(sizes.sum()) - numpy.repeat(numpy.cumsum(sizes) - sizes, sizes)
    span_of = numpy.full(is_space.shape[0], -1)
    span_of[tokens] = numpy.repeat(numpy.arange(sizes.shape[0]), sizes)
    inside = span_of >= 0
    previous = numpy.concatenate([[-1], span_of[:-1]])
    piece_start = inside & ((span_of != previous) | sent_start)
    piece = numpy.cumsum(piece_start) - 1  # the piece of each token inside a span
    # a token is kept once its piece has shown a token that is not whitespace
    words = numpy.cumsum(inside & ~is_space)
    before_piece = (words - (inside & ~is_space))[piece_start]  # the count before each piece's first token
    kept = inside & (words - before_piece[numpy.maximum(piece, 0)] > 0)
    kept_prev = numpy.concatenate([[False], kept[:-1]])
    piece_prev = numpy.concatenate([[-1], piece[:-1]])
    starts = numpy.flatnonzero(kept & (~kept_prev | (piece != piece_prev)))
    kept_next = numpy.concatenate([kept[1:], [False]])
    piece_next = numpy.concatenate([piece[1:], [-1]])
    ends = numpy.flatnonzero(kept & (~kept_next | (piece != piece_next))) + 1
    source = span_of[starts]
    doc = spans.doc[source]
    return Spans(
        doc=doc.astype("i"),
        start=(starts - offsets[doc]).astype("i"),
        end=(ends - offsets[doc]).astype("i"),
        type=spans.type[source].astype("i"),
        score=spans.score[source].astype("f"),
    )


TextArrays = Tuple[numpy.ndarray, numpy.ndarray, numpy.ndarray]  # what `text_arrays` returns


def text_arrays(docs: Sequence[Doc]) -> TextArrays:
    """What `fit_to_text` reads of a batch's Docs: tokens per doc, and per token whether it is
    whitespace and whether an earlier pipe set it to start a sentence."""
    lengths = numpy.asarray([len(doc) for doc in docs], dtype="i")
    table = [doc.to_array([IS_SPACE, SENT_START]).reshape(-1, 2) for doc in docs]
    flat = numpy.concatenate(table) if table else numpy.zeros((0, 2), dtype="uint64")
    return lengths, flat[:, 0] == 1, flat[:, 1] == 1  # SENT_START: 1 set, 0 unknown, -1 (wrapped) not a start


def free_spans(starts: numpy.ndarray, ends: numpy.ndarray, taken: numpy.ndarray) -> numpy.ndarray:
    """(n_spans,) True for the token spans ``[start, end)`` that overlap no `taken` token."""
    before = numpy.concatenate([[0], numpy.cumsum(taken, dtype="i")])  # taken tokens before each position
    return before[ends] == before[starts]


def token_mask(n_tokens: int, spans: Iterable[Tuple[int, int]]) -> numpy.ndarray:
    """(n_tokens,) True on the tokens inside any of the ``(start, end)`` spans."""
    edges = numpy.zeros(n_tokens + 1, dtype="i")
    for start, end in spans:  # one pair of writes a span; the tokens are filled by cumsum
        edges[start] += 1
        edges[end] -= 1
    return numpy.cumsum(edges[:-1]) > 0


def true_runs(mask: numpy.ndarray) -> List[Tuple[int, int]]:
    """The ``(start, end)`` of each run of True in `mask`, in order."""
    steps = numpy.diff(numpy.concatenate([[0], mask.astype("i1"), [0]]))
    return list(zip(numpy.flatnonzero(steps == 1).tolist(), numpy.flatnonzero(steps == -1).tolist()))
