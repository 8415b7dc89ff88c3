"""From per-token scores to valid BIO entity spans, vectorised over a whole batch.

Everything here works on CPU numpy arrays of the concatenated tokens of a batch, with
``lengths`` giving the tokens per doc. The component moves scores off the device once per
batch, at prediction time only.
"""
from typing import NamedTuple

import numpy


class Spans(NamedTuple):
    """Entity spans of a batch: doc index, token start, token end (exclusive, doc-relative),
    entity type index and a confidence score, each an array of length n_spans."""

    doc: numpy.ndarray
    start: numpy.ndarray
    end: numpy.ndarray
    type: numpy.ndarray
    score: numpy.ndarray


def doc_starts(lengths: numpy.ndarray) -> numpy.ndarray:
    """(N,) True at the first token of each doc."""
    lengths = numpy.asarray(lengths, dtype="i")
    starts = numpy.zeros(int(lengths.sum()), dtype=bool)
    offsets = numpy.cumsum(lengths) - lengths
    starts[offsets[lengths > 0]] = True
    return starts


def bio_spans(is_entity, is_begin, types, confidence, lengths) -> Spans:
    """Maximal valid BIO spans from token decisions, with the usual repair: an I token that
    cannot continue the entity before it (previous token O, another type, or doc start) opens
    a new entity, as a B would. The span score is the mean token confidence.
    """
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
    best = bio_probs.argmax(axis=1)
    conf = bio_probs[numpy.arange(best.shape[0]), best]
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
