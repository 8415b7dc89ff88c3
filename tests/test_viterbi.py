"""Constrained Viterbi decoding of the token classifiers: hand-computed cases, brute force,
validity of every output, and the component's `decoder` setting."""
import itertools

import numpy
import pytest
import spacy
from hypothesis import given, settings
from hypothesis import strategies as st
from spacy.training import Example

from spacy_auc_ner.labels import LabelSet, bio_layout
from spacy_auc_ner.ml.crf import bio_constraints
from spacy_auc_ner.ml.decoding import greedy_bio, viterbi_bio
from spacy_auc_ner.schemes import make_scheme

LABELS = LabelSet(["LOC", "PER"])  # O, B-LOC, I-LOC, B-PER, I-PER


def spans_of(spans):
    return list(zip(spans.doc.tolist(), spans.start.tolist(), spans.end.tolist(), spans.type.tolist()))


def decode(probs, lengths):
    return viterbi_bio(numpy.log(numpy.asarray(probs, "f")), numpy.asarray(lengths), LABELS.bio_type, LABELS.bio_begin)


def test_viterbi_fixes_what_greedy_repairs_by_rule():
    # token 0: O 0.6 > B-LOC 0.4; token 1: I-LOC 0.9. Greedy: O, I-LOC -> repaired to a
    # one-token entity [1, 2). Best valid sequence: B-LOC I-LOC (0.4 * 0.9 = 0.36 against
    # O O 0.6 * 0.05, O B-LOC 0.6 * 0.05, B-LOC O 0.4 * 0.05).
    probs = [[0.6, 0.4, 0.0, 0.0, 0.0], [0.05, 0.05, 0.9, 0.0, 0.0]]
    greedy = greedy_bio(numpy.asarray(probs), LABELS.bio_type, LABELS.bio_begin, numpy.asarray([2]))
    assert spans_of(greedy) == [(0, 1, 2, 0)]
    spans = decode(numpy.asarray(probs) + 1e-9, [2])
    assert spans_of(spans) == [(0, 0, 2, 0)]
    assert spans.score[0] == pytest.approx((0.4 + 0.9) / 2, rel=1e-5)


def test_viterbi_never_lets_a_type_switch_inside_an_entity():
    # Greedy reads B-LOC I-PER (a forbidden move, repaired into two entities). Valid
    # sequences: B-PER I-PER 0.4 * 0.6 = 0.24 (best), B-LOC I-LOC 0.5 * 0.3 = 0.15,
    # B-LOC O or B-LOC B-PER 0.5 * 0.05 = 0.025.
    probs = [[0.1, 0.5, 0.0, 0.4, 0.0], [0.05, 0.0, 0.3, 0.05, 0.6]]
    greedy = greedy_bio(numpy.asarray(probs), LABELS.bio_type, LABELS.bio_begin, numpy.asarray([2]))
    assert spans_of(greedy) == [(0, 0, 1, 0), (0, 1, 2, 1)]
    assert spans_of(decode(numpy.asarray(probs) + 1e-9, [2])) == [(0, 0, 2, 1)]


def test_viterbi_equals_greedy_when_greedy_is_valid():
    probs = numpy.asarray(
        [[0.1, 0.8, 0.1, 0, 0], [0.1, 0, 0.8, 0, 0], [0.9, 0, 0, 0.1, 0], [0.2, 0, 0, 0.7, 0.1], [0.9, 0.1, 0, 0, 0]]
    ) + 1e-6
    lengths = numpy.asarray([3, 0, 2])
    greedy = greedy_bio(probs, LABELS.bio_type, LABELS.bio_begin, lengths)
    assert spans_of(decode(probs, lengths)) == spans_of(greedy) == [(0, 0, 2, 0), (2, 0, 1, 1)]


def brute_force(log_scores, c):
    K = log_scores.shape[1]
    paths = [
        p
        for p in itertools.product(range(K), repeat=log_scores.shape[0])
        if c.start[p[0]] and all(c.allowed[a, b] for a, b in zip(p[:-1], p[1:]))
    ]
    return max(paths, key=lambda p: sum(log_scores[t, y] for t, y in enumerate(p)))


def tags_of(spans, n):
    tags = numpy.zeros(n, dtype="i")
    for _, s, e, t in spans_of(spans):
        tags[s] = 1 + 2 * t
        tags[s + 1 : e] = 2 + 2 * t
    return tuple(tags.tolist())


@settings(max_examples=40, deadline=None)
@given(seed=st.integers(0, 10_000), n=st.integers(1, 5))
def test_viterbi_equals_brute_force(seed, n):
    log_scores = numpy.log(numpy.random.default_rng(seed).dirichlet(numpy.ones(5), size=n)).astype("f")
    spans = viterbi_bio(log_scores, [n], LABELS.bio_type, LABELS.bio_begin)
    assert tags_of(spans, n) == brute_force(log_scores, bio_constraints(LABELS.bio_type, LABELS.bio_begin))


@settings(max_examples=40, deadline=None)
@given(
    seed=st.integers(0, 10_000),
    scheme=st.sampled_from(["ova", "softmax", "two_task"]),
    n_types=st.integers(1, 3),
    lengths=st.lists(st.integers(0, 15), min_size=1, max_size=6),
)
def test_decoded_tags_are_always_valid_bio(seed, scheme, n_types, lengths):
    labels = LabelSet([f"T{i}" for i in range(n_types)])
    sch = make_scheme(scheme)
    scores = numpy.random.default_rng(seed).normal(scale=4.0, size=(sum(lengths), len(sch.columns(labels))))
    log_scores = sch.bio_log_scores(scores.astype("f"), labels)
    assert numpy.isfinite(log_scores).all()
    spans = viterbi_bio(log_scores, numpy.asarray(lengths), labels.bio_type, labels.bio_begin)
    c = bio_constraints(*bio_layout(len(labels)))
    offsets = numpy.cumsum(lengths) - lengths
    tags = numpy.zeros(sum(lengths), dtype="i")
    for d, s, e, t in spans_of(spans):
        assert 0 <= s < e <= lengths[d]
        tags[offsets[d] + s] = 1 + 2 * t
        tags[offsets[d] + s + 1 : offsets[d] + e] = 2 + 2 * t
    # the spans read back as the decoded path: no I- after O or after another type
    for d, L in enumerate(lengths):
        seq = tags[offsets[d] : offsets[d] + L]
        if L:
            assert c.start[seq[0]] and all(c.allowed[a, b] for a, b in zip(seq[:-1], seq[1:]))


def test_log_scores_per_scheme():
    labels = LabelSet(["A"])
    s = numpy.asarray([[0.0, 2.0, -3.0]], "f")
    ova = make_scheme("ova").bio_log_scores(s, labels)
    assert ova == pytest.approx(numpy.log(1 / (1 + numpy.exp(-s))), abs=1e-6)
    soft = make_scheme("softmax").bio_log_scores(s, labels)
    assert soft == pytest.approx(s - numpy.log(numpy.exp(s).sum()), abs=1e-6)
    # two_task: p_en = sigmoid(0) = 0.5, p_be = sigmoid(2): log p(O), log p(B), log p(I)
    two = make_scheme("two_task").bio_log_scores(numpy.asarray([[0.0, 2.0]], "f"), labels)
    p_be = 1 / (1 + numpy.exp(-2.0))
    assert two == pytest.approx(numpy.log([[0.5, 0.5 * p_be, 0.5 * (1 - p_be)]]), abs=1e-6)
    assert numpy.isfinite(make_scheme("ova").bio_log_scores(numpy.asarray([[-200.0, 200.0, 0.0]], "f"), labels)).all()


def tiny_examples(nlp):
    data = [
        ("Alice lives in Paris .", [(0, 5, "PER"), (15, 20, "LOC")]),
        ("Bob Smith visited New York today", [(0, 9, "PER"), (18, 26, "LOC")]),
    ]
    return [Example.from_dict(nlp.make_doc(t), {"entities": e}) for t, e in data]


@pytest.mark.parametrize("scheme", ["ova", "softmax", "two_task", "crf"])
def test_component_viterbi_decoder(scheme):
    nlp = spacy.blank("en")
    ner = nlp.add_pipe("auc_ner", config={"scheme": scheme, "decoder": "viterbi"})
    examples = tiny_examples(nlp)
    nlp.initialize(lambda: examples)
    docs = list(nlp.pipe(["Alice lives in Paris .", "", "Bob"]))
    assert ner.cfg["decoder"] == "viterbi"
    for doc in docs:
        assert len(doc.spans["auc_ner"].attrs["scores"]) == len(doc.ents)
        assert all(0 <= s <= 1 for s in doc.spans["auc_ner"].attrs["scores"])


def test_component_decoder_defaults_and_errors():
    nlp = spacy.blank("en")
    assert nlp.add_pipe("auc_ner", name="a", config={"scheme": "crf"}).cfg["decoder"] == "viterbi"
    assert nlp.add_pipe("auc_ner", name="b", config={"scheme": "ova"}).cfg["decoder"] == "greedy"
    with pytest.raises(ValueError, match=r"\[components.c.decoder\] unknown decoder 'beam'"):
        nlp.add_pipe("auc_ner", name="c", config={"decoder": "beam"})
