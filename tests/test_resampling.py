"""The four resampling functions of Wang & Wang (2022), both variants, against hand counts."""
import math

import numpy
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra.numpy import arrays

from spacy_auc_ner.data.entity_arrays import type_counts
from spacy_auc_ner.training.resampling import METHODS, frequencies, rareness

# Hand corpus, 16 tokens, types (LOC, PER):
#   s1  B-PER I-PER O     O      c = (0, 2)
#   s2  B-LOC I-LOC B-PER O      c = (2, 1)
#   s3  O     O     O     O      c = (0, 0)
#   s4  B-PER O     O     O      c = (0, 1)
# PER: 4 of 16 tokens -> r = -log2(1/4) = 2; LOC: 2 of 16 -> r = -log2(1/8) = 3.
LENGTHS = [4, 4, 4, 4]
TYPE_INDEX = numpy.asarray([1, 1, -1, -1, 0, 0, 1, -1, -1, -1, -1, -1, 1, -1, -1, -1])
COUNTS = numpy.asarray([[0, 2], [2, 1], [0, 0], [0, 1]])
R = numpy.asarray([3.0, 2.0])
S2 = math.sqrt(2)

# sum r c = 4, 8, 0, 2; sum r sqrt(c) = 2 sqrt2, 3 sqrt2 + 2, 0, 2; sqrt(l) = 2
PAPER = {
    "sC": [1 + 2, 1 + 3, 1, 1 + 1],
    "sCR": [1 + 2, 1 + math.ceil(math.sqrt(8)), 1, 1 + math.ceil(math.sqrt(2))],  # 3, 4, 1, 3
    "sCRD": [1 + 2, 1 + 4, 1, 1 + 1],  # 4/2, 8/2, 0, 2/2 exactly
    "nsCRD": [1 + math.ceil(S2), 1 + math.ceil((3 * S2 + 2) / 2), 1, 1 + 1],  # 3, 5, 1, 2
}
CODE = {
    "sC": [3, 4, 1, 2],
    "sCR": [math.ceil(math.sqrt(5)), 3, 1, math.ceil(math.sqrt(3))],  # sqrt(1 + 8) = 3 exactly
    "sCRD": [math.ceil(5 / 2), math.ceil(9 / 2), 1, math.ceil(3 / 2)],  # 3, 5, 1, 2
    "nsCRD": [math.ceil((1 + 2 * S2) / 2), math.ceil((3 + 3 * S2) / 2), 1, math.ceil(3 / 2)],  # 2, 4, 1, 2
}


def test_hand_values_are_what_the_comments_say():
    assert PAPER["sCR"] == [3, 4, 1, 3] and PAPER["nsCRD"] == [3, 5, 1, 2]
    assert CODE["sCR"] == [3, 3, 1, 2] and CODE["sCRD"] == [3, 5, 1, 2] and CODE["nsCRD"] == [2, 4, 1, 2]


def test_rareness():
    assert rareness([2, 4], 16).tolist() == [3.0, 2.0]
    assert rareness([2, 4], 16, base=math.e) == pytest.approx([math.log(8), math.log(4)])
    assert rareness([16], 16).tolist() == [0.0]
    for bad in ([0], [17]):
        with pytest.raises(ValueError):
            rareness(bad, 16)
    with pytest.raises(ValueError, match="base"):
        rareness([1], 16, base=1)


def test_type_counts():
    assert type_counts(LENGTHS, TYPE_INDEX, 2).tolist() == COUNTS.tolist()
    assert type_counts([2, 0, 1], numpy.asarray([-1, 0, 0]), 1).tolist() == [[1], [0], [1]]


@pytest.mark.parametrize("method", METHODS)
def test_paper_functions(method):
    assert frequencies(COUNTS, LENGTHS, R, method).tolist() == PAPER[method]


@pytest.mark.parametrize("method", METHODS)
def test_code_functions(method):
    assert frequencies(COUNTS, LENGTHS, R, method, variant="code").tolist() == CODE[method]


def _resample_counts(method, base=2.0):
    """Frequencies with rareness from the same corpus, as Resampled.v1 computes them."""
    c = type_counts(LENGTHS, TYPE_INDEX, 2)
    r = rareness(c.sum(axis=0), sum(LENGTHS), base)
    return frequencies(c, LENGTHS, r, method), r


def test_resampling_takes_rareness_from_the_corpus():
    freq, r = _resample_counts("sCRD")
    assert r.tolist() == [3.0, 2.0]
    assert freq.tolist() == PAPER["sCRD"]
    # natural log: r = ln 8, ln 4; sCRD s2 = 1 + ceil((2 ln 8 + ln 4) / 2) = 1 + ceil(2.77) = 4
    freq_e, _ = _resample_counts("sCRD", base=math.e)
    assert freq_e.tolist() == [1 + math.ceil(2 * math.log(4) / 2), 4, 1, 1 + math.ceil(math.log(4) / 2)]


def test_bad_method_and_variant():
    with pytest.raises(ValueError, match="method"):
        frequencies(COUNTS, LENGTHS, R, "CRD")
    with pytest.raises(ValueError, match="variant"):
        frequencies(COUNTS, LENGTHS, R, "sC", variant="authors")


@settings(max_examples=100, deadline=None)
@given(
    arrays("i8", st.tuples(st.integers(1, 8), st.integers(1, 3)), elements=st.integers(0, 5)),
    st.sampled_from(METHODS),
    st.sampled_from(["paper", "code"]),
)
def test_frequencies_keep_every_sentence_and_entity_free_ones_once(counts, method, variant):
    lengths = counts.sum(axis=1) + 3
    r = numpy.linspace(1.0, 6.0, counts.shape[1])
    f = frequencies(counts, lengths, r, method, variant)
    assert f.dtype.kind == "i" and (f >= 1).all()
    assert (f[counts.sum(axis=1) == 0] == 1).all()
    if method == "sC":
        assert f.tolist() == (1 + counts.sum(axis=1)).tolist()
    if variant == "paper":  # an entity sentence is repeated at least twice
        assert (f[counts.sum(axis=1) > 0] >= 2).all()
