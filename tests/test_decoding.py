import numpy
from hypothesis import given, settings
from hypothesis import strategies as st

from spacy_auc_ner.labels import LabelSet
from spacy_auc_ner.ml.decoding import bio_spans, greedy_bio, two_task_spans


def test_bio_spans_repairs_and_splits_by_type_and_doc():
    labels = LabelSet(["LOC", "PER"])
    # tokens: B-LOC I-LOC | I-PER (starts PER) I-LOC (type change) O I-LOC || doc2: I-LOC B-PER
    tags = ["B-LOC", "I-LOC", "I-PER", "I-LOC", "O", "I-LOC", "I-LOC", "B-PER"]
    idx = numpy.asarray([labels.bio.index(t) for t in tags])
    probs = numpy.eye(len(labels))[idx]
    spans = greedy_bio(probs, labels.bio_type, labels.bio_begin, numpy.asarray([6, 2]))
    got = list(zip(spans.doc.tolist(), spans.start.tolist(), spans.end.tolist(), [labels.types[t] for t in spans.type]))
    assert got == [(0, 0, 2, "LOC"), (0, 2, 3, "PER"), (0, 3, 4, "LOC"), (0, 5, 6, "LOC"), (1, 0, 1, "LOC"), (1, 1, 2, "PER")]
    assert numpy.allclose(spans.score, 1.0)


def test_span_score_is_mean_token_confidence():
    spans = bio_spans([True, True, False], [True, False, False], [0, 0, 0], [0.9, 0.5, 0.1], [3])
    assert spans.start.tolist() == [0] and spans.end.tolist() == [2]
    assert numpy.isclose(spans.score[0], 0.7)


def test_empty_batch_and_empty_docs():
    labels = LabelSet(["X"])
    spans = greedy_bio(numpy.zeros((0, 3)), labels.bio_type, labels.bio_begin, numpy.asarray([0, 0]))
    assert spans.start.size == 0
    spans = greedy_bio(numpy.eye(3)[[1, 2]], labels.bio_type, labels.bio_begin, numpy.asarray([0, 2, 0]))
    assert spans.doc.tolist() == [1] and spans.start.tolist() == [0] and spans.end.tolist() == [2]


def test_two_task_algorithm_1_and_type_head():
    # en, be per token: B, I, O (be without en), B, B
    p_en = numpy.asarray([0.9, 0.8, 0.2, 0.7, 0.9])
    p_be = numpy.asarray([0.9, 0.1, 0.9, 0.6, 0.8])
    type_lp = numpy.log(numpy.asarray([[0.9, 0.1], [0.4, 0.6], [0.5, 0.5], [0.2, 0.8], [0.7, 0.3]]))
    spans = two_task_spans(p_en, p_be, type_lp, numpy.asarray([5]))
    assert list(zip(spans.start.tolist(), spans.end.tolist())) == [(0, 2), (3, 4), (4, 5)]
    # span 0 sums log-probs of tokens 0 and 1: log .36 vs log .06 -> type 0
    assert spans.type.tolist() == [0, 1, 0]


def _valid(spans, lengths):
    offsets = numpy.cumsum(lengths) - lengths
    occupied = set()
    for d, s, e in zip(spans.doc, spans.start, spans.end):
        assert 0 <= s < e <= lengths[d]
        for i in range(s, e):
            assert (d, i) not in occupied
            occupied.add((d, i))
    return occupied, offsets


@settings(max_examples=200, deadline=None)
@given(
    lengths=st.lists(st.integers(0, 8), min_size=1, max_size=5),
    n_types=st.integers(1, 3),
    seed=st.integers(0, 2**31 - 1),
)
def test_greedy_output_is_always_valid_bio(lengths, n_types, seed):
    rng = numpy.random.default_rng(seed)
    labels = LabelSet([f"T{i}" for i in range(n_types)])
    lengths = numpy.asarray(lengths)
    probs = rng.random((int(lengths.sum()), len(labels)))
    spans = greedy_bio(probs, labels.bio_type, labels.bio_begin, lengths)
    occupied, offsets = _valid(spans, lengths)
    best = probs.argmax(axis=1)
    # every token predicted as an entity label is inside a span of that label's type, others outside
    for g in range(len(best)):
        d = int(numpy.searchsorted(numpy.cumsum(lengths), g, side="right"))
        i = g - offsets[d]
        assert ((d, i) in occupied) == (best[g] > 0)
    for d, s, e, t in zip(spans.doc, spans.start, spans.end, spans.type):
        g = offsets[d] + numpy.arange(s, e)
        assert (labels.bio_type[best[g]] == t).all()
        # inside a span only the first token may be a B
        assert not labels.bio_begin[best[g[1:]]].any()


@settings(max_examples=100, deadline=None)
@given(lengths=st.lists(st.integers(0, 8), min_size=1, max_size=5), seed=st.integers(0, 2**31 - 1))
def test_two_task_output_is_always_valid(lengths, seed):
    rng = numpy.random.default_rng(seed)
    lengths = numpy.asarray(lengths)
    N = int(lengths.sum())
    spans = two_task_spans(rng.random(N), rng.random(N), numpy.log(rng.dirichlet([1, 1, 1], size=N)), lengths)
    _valid(spans, lengths)
    assert ((spans.type >= 0) & (spans.type < 3)).all()
