import numpy
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from spacy_auc_ner.labels import LabelSet
from spacy_auc_ner.ml.decoding import Spans, bio_spans, fit_to_text, free_spans, greedy_bio, token_mask, true_runs, two_task_spans


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


def test_two_task_type_is_the_highest_summed_log_probability():
    # one span of 3 tokens, type probabilities (.95, .05), (.2, .8), (.2, .8): the product
    # .95 * .2 * .2 = .038 beats .05 * .8 * .8 = .032, so type 0, though two tokens of three
    # prefer type 1 and so does the summed probability (1.35 against 1.65)
    p_en = numpy.asarray([0.9, 0.9, 0.9])
    p_be = numpy.asarray([0.9, 0.1, 0.1])
    type_lp = numpy.log(numpy.asarray([[0.95, 0.05], [0.2, 0.8], [0.2, 0.8]]))
    spans = two_task_spans(p_en, p_be, type_lp, numpy.asarray([3]))
    assert list(zip(spans.start.tolist(), spans.end.tolist(), spans.type.tolist())) == [(0, 3, 0)]
    assert spans.score[0] == pytest.approx(0.9)


def _two_task_by_hand(p_en, p_be, type_lp, lengths, threshold):
    """Algorithm 1 token by token (B: both on, I: entity only, O: else), an I with no entity to
    continue opening one; a span's type the argmax of its tokens' summed log-probabilities."""
    out, g = [], 0
    for d, n in enumerate(lengths):
        current = None
        for i in range(n):
            en, be = p_en[g + i] > threshold, p_be[g + i] > threshold
            if en and (be or current is None):
                if current is not None:
                    out.append(current)
                current = [d, i, i + 1]
            elif en:
                current[2] = i + 1
            elif current is not None:
                out.append(current)
                current = None
        if current is not None:
            out.append(current)
        g += n
    offsets = numpy.cumsum(lengths) - lengths
    rows = []
    for d, s, e in out:
        tokens = slice(offsets[d] + s, offsets[d] + e)
        rows.append((d, s, e, int(type_lp[tokens].sum(axis=0).argmax()), float(p_en[tokens].mean())))
    return rows


@settings(max_examples=100, deadline=None)
@given(
    lengths=st.lists(st.integers(0, 8), min_size=1, max_size=5),
    n_types=st.integers(1, 3),
    threshold=st.sampled_from([0.3, 0.5, 0.8]),
    seed=st.integers(0, 2**31 - 1),
)
def test_two_task_decoder_is_algorithm_1(lengths, n_types, threshold, seed):
    rng = numpy.random.default_rng(seed)
    lengths = numpy.asarray(lengths)
    N = int(lengths.sum())
    p_en, p_be = rng.random(N), rng.random(N)
    type_lp = numpy.log(rng.dirichlet(numpy.ones(n_types), size=N))
    spans = two_task_spans(p_en, p_be, type_lp, lengths, threshold)
    got = list(zip(spans.doc.tolist(), spans.start.tolist(), spans.end.tolist(), spans.type.tolist()))
    expected = _two_task_by_hand(p_en, p_be, type_lp, lengths, threshold)
    assert got == [row[:4] for row in expected]
    numpy.testing.assert_allclose(spans.score, [row[4] for row in expected], rtol=1e-5)


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


def _spans(rows):
    doc, start, end, typ, score = (numpy.asarray(c) for c in zip(*rows)) if rows else ([],) * 5
    return Spans(numpy.asarray(doc, dtype="i"), numpy.asarray(start, dtype="i"), numpy.asarray(end, dtype="i"),
                 numpy.asarray(typ, dtype="i"), numpy.asarray(score, dtype="f"))


def _rows(spans):
    return list(zip(spans.doc.tolist(), spans.start.tolist(), spans.end.tolist(), spans.type.tolist(), [round(x, 3) for x in spans.score.tolist()]))


def test_fit_to_text_by_hand():
    # doc 0: ' ' A B | ' ' ' ' ' ' ; doc 1: C ' ' [sentence] D E
    spans = _spans([(0, 0, 3, 0, 0.9), (0, 3, 6, 1, 0.8), (1, 0, 4, 0, 0.7)])
    is_space = numpy.asarray([1, 0, 0, 1, 1, 1, 0, 1, 0, 0], dtype=bool)
    sent_start = numpy.asarray([1, 0, 0, 0, 0, 0, 1, 0, 1, 0], dtype=bool)
    got = fit_to_text(spans, [6, 4], is_space, sent_start)
    # leading whitespace dropped, the all-whitespace span gone, doc 1's span cut at its sentence start
    assert _rows(got) == [(0, 1, 3, 0, 0.9), (1, 0, 2, 0, 0.7), (1, 2, 4, 0, 0.7)]
    # a piece after the cut that starts on whitespace loses it too; nothing to fit: unchanged
    got = fit_to_text(_spans([(0, 0, 4, 2, 0.5)]), [4], numpy.asarray([0, 0, 1, 0], dtype=bool), numpy.asarray([1, 0, 1, 0], dtype=bool))
    assert _rows(got) == [(0, 0, 2, 2, 0.5), (0, 3, 4, 2, 0.5)]
    plain = _spans([(0, 1, 3, 1, 0.4)])
    assert _rows(fit_to_text(plain, [4], numpy.zeros(4, dtype=bool), numpy.asarray([1, 0, 0, 0], dtype=bool))) == _rows(plain)
    assert _rows(fit_to_text(_spans([]), [3], numpy.ones(3, dtype=bool), numpy.ones(3, dtype=bool))) == []


@settings(max_examples=200, deadline=None)
@given(lengths=st.lists(st.integers(0, 9), min_size=1, max_size=4), seed=st.integers(0, 2**31 - 1))
def test_fit_to_text_never_starts_on_whitespace_nor_crosses_a_sentence(lengths, seed):
    rng = numpy.random.default_rng(seed)
    lengths = numpy.asarray(lengths, dtype="i")
    N = int(lengths.sum())
    tags = rng.integers(0, 3, N)  # 0 O, 1 B, 2 I: any spans bio_spans makes
    spans = bio_spans(tags > 0, tags == 1, rng.integers(0, 2, N), rng.random(N), lengths)
    is_space, sent_start = rng.random(N) < 0.3, rng.random(N) < 0.2
    got = fit_to_text(spans, lengths, is_space, sent_start)
    offsets = numpy.cumsum(lengths) - lengths
    before = {int(offsets[d] + t): (int(d), int(k)) for d, s, e, k in zip(spans.doc, spans.start, spans.end, spans.type) for t in range(s, e)}
    covered = []
    for d, s, e, k in zip(got.doc, got.start, got.end, got.type):
        g = int(offsets[d])
        assert 0 <= s < e <= lengths[d] and not is_space[g + s]
        assert not sent_start[g + s + 1: g + e].any()
        tokens = range(g + s, g + e)
        assert all(before.get(t) == (int(d), int(k)) for t in tokens)  # inside the spans it was cut from, same type
        assert len({spans_id for spans_id in (numpy.searchsorted(offsets[spans.doc] + spans.start, t, side="right") for t in tokens)}) == 1
        covered.extend(tokens)
    assert len(covered) == len(set(covered))
    # every token dropped is whitespace at the head of a piece: a word inside a span stays covered
    for t, (d, k) in before.items():
        if not is_space[t]:
            assert t in covered


def test_the_span_arrays_of_set_annotations_by_hand():
    taken = numpy.asarray([False, True, False, False, True])
    starts, ends = numpy.asarray([0, 0, 2, 2, 4, 5]), numpy.asarray([1, 2, 4, 5, 5, 5])
    assert free_spans(starts, ends, taken).tolist() == [True, False, True, False, False, True]
    assert token_mask(6, [(1, 3), (2, 4)]).tolist() == [False, True, True, True, False, False]
    assert token_mask(3, []).tolist() == [False] * 3 and token_mask(0, []).tolist() == []
    assert true_runs(numpy.asarray([True, True, False, True])) == [(0, 2), (3, 4)]
    assert true_runs(numpy.zeros(0, dtype=bool)) == []


def test_true_runs_and_token_mask_are_inverse():
    rng = numpy.random.default_rng(0)
    for n in range(0, 30):
        mask = rng.random(n) < 0.5
        runs = true_runs(mask)
        assert token_mask(n, runs).tolist() == mask.tolist()
        assert all(a < b for a, b in runs) and all(b < c for (_, b), (c, _) in zip(runs, runs[1:]))  # gaps between runs
