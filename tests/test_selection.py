"""The ranking behind `suggest`, by hand: MNLP of a 2-token CRF (every path listed), the
schemes' token distributions and best paths, token entropy, a beam's per-token marginals, the
orders of the strategies, and the diversity guard."""
import math

import numpy
import pytest

from spacy_auc_ner.annotation.selection import (
    DEFAULT_MAX_SIMILARITY,
    check_selection,
    diverse_first,
    jaccard,
    long_enough,
    mnlp,
    parse_marginals,
    priority,
    select_sentences,
    sentence_means,
    token_entropy,
    token_set,
)
from spacy_auc_ner.data.files import DataError
from spacy_auc_ner.labels import LabelSet
from spacy_auc_ner.losses.crf import END, START, TRANS
from spacy_auc_ner.ml.crf import best_path_log_prob
from spacy_auc_ner.schemes import make_scheme

LN2 = math.log(2.0)


# -- MNLP ---------------------------------------------------------------------------------------

def test_mnlp_of_a_two_token_two_label_crf_by_hand():
    # emissions E[t, k], transitions trans[i, j], no start/end scores; the four paths' scores:
    # (0,0): 1 + 0 + 0.5 = 1.5; (0,1): 1 + 2 + 0 = 3; (1,0): 0 + 0 + 0 = 0; (1,1): 0 + 2 - 1 = 1
    E = numpy.asarray([[1.0, 0.0], [0.0, 2.0]], dtype="f")
    trans = numpy.asarray([[0.5, 0.0], [0.0, -1.0]], dtype="f")
    zeros = numpy.zeros(2, dtype="f")
    log_z = math.log(math.exp(1.5) + math.exp(3.0) + math.exp(0.0) + math.exp(1.0))
    best = best_path_log_prob(E, numpy.asarray([2]), trans, zeros, zeros)
    assert best == pytest.approx([3.0 - log_z], abs=1e-6)
    assert mnlp(best, [2]) == pytest.approx([(3.0 - log_z) / 2], abs=1e-6)


def test_the_crf_schemes_best_path_is_among_the_valid_bio_sequences():
    # one type: O, B, I. Of the 9 two-token sequences, I first or I after O is invalid, leaving
    # OO, OB, BO, BB, BI. With zero transitions a path scores E[0, a] + E[1, b].
    E = numpy.asarray([[0.0, 1.0, 3.0], [0.0, 0.0, 2.0]], dtype="f")  # I first (3) would win unconstrained
    params = {TRANS: numpy.zeros((3, 3), dtype="f"), START: numpy.zeros(3, dtype="f"), END: numpy.zeros(3, dtype="f")}
    valid = {"OO": 0.0, "OB": 0.0, "BO": 1.0, "BB": 1.0, "BI": 3.0}
    log_z = math.log(sum(math.exp(v) for v in valid.values()))
    crf = make_scheme("crf")
    best = crf.best_path_log_prob(E, numpy.asarray([2]), LabelSet(["X"]), params)
    assert best == pytest.approx([3.0 - log_z], abs=1e-6)
    # its marginals: token 0 is B on BO, BB, BI
    dist = crf.label_distribution(E, numpy.asarray([2]), LabelSet(["X"]), params)
    p_b0 = (math.exp(1.0) * 2 + math.exp(3.0)) / math.exp(log_z)
    assert dist[0] == pytest.approx([1 - p_b0, p_b0, 0.0], abs=1e-6)


def test_best_path_of_the_token_schemes_is_each_tokens_most_probable_label():
    # softmax scheme: rows of log-probabilities; the best path takes 0.7 then 0.6
    scores = numpy.log(numpy.asarray([[0.7, 0.2, 0.1], [0.1, 0.6, 0.3]], dtype="f"))
    best = make_scheme("softmax").best_path_log_prob(scores, numpy.asarray([2]), LabelSet(["X"]), None)
    assert best == pytest.approx([math.log(0.7 * 0.6)], abs=1e-5)
    assert mnlp(best, [2]) == pytest.approx([math.log(0.42) / 2], abs=1e-5)


def test_mnlp_divides_by_length_and_orders_least_confident_first():
    assert mnlp([-2.0, -3.0, 0.0], [4, 2, 0]).tolist() == [-0.5, -1.5, 0.0]
    assert priority("mnlp", [-0.5, -1.5, 0.0, -1.5], 4).tolist() == [1, 3, 0, 2]  # ties in pool order


# -- entropy ------------------------------------------------------------------------------------

def test_token_entropy_and_sentence_means_by_hand():
    probs = [[0.5, 0.5, 0.0], [1.0, 0.0, 0.0], [0.25, 0.25, 0.5]]
    h = token_entropy(probs)
    assert h == pytest.approx([LN2, 0.0, 1.5 * LN2])
    # sentences of 2 and 1 tokens, and an empty one (0, not NaN)
    assert sentence_means(h, [2, 1, 0]) == pytest.approx([LN2 / 2, 1.5 * LN2, 0.0])
    assert priority("entropy", [0.1, 0.3, 0.3, 0.0], 4).tolist() == [1, 2, 0, 3]  # most uncertain first


def test_ova_sigmoids_are_normalised_two_tasks_already_sum_to_one():
    labels = LabelSet(["X"])  # O, B-X, I-X
    # sigmoids 0.5, 0.5, 0.25 -> 0.4, 0.4, 0.2
    ova = make_scheme("ova").label_distribution(numpy.asarray([[0.0, 0.0, math.log(1 / 3)]], dtype="f"), numpy.asarray([1]), labels, None)
    assert ova[0] == pytest.approx([0.4, 0.4, 0.2], abs=1e-6)
    # two_task with p_entity = p_begin = 0.5: O 0.5, B 0.25, I 0.25, entropy 1.5 ln 2
    two = make_scheme("two_task").label_distribution(numpy.asarray([[0.0, 0.0]], dtype="f"), numpy.asarray([1]), labels, None)
    assert two[0] == pytest.approx([0.5, 0.25, 0.25], abs=1e-6)
    assert token_entropy(two) == pytest.approx([1.5 * LN2], abs=1e-6)
    # a sure softmax token: near-zero entropy, no NaN from its zero probabilities
    soft = make_scheme("softmax").label_distribution(numpy.asarray([[0.0, -200.0, -200.0]], dtype="f"), numpy.asarray([1]), labels, None)
    assert token_entropy(soft) == pytest.approx([0.0], abs=1e-6)


def test_a_beams_token_marginals_by_hand():
    # two parses (O=0, B=1, I=2): "O B I" with 0.75 and "B I O" with 0.25 (given unnormalised: 3 and 1)
    m = parse_marginals([[0, 1, 2], [1, 2, 0]], [3.0, 1.0], 3)
    assert m == pytest.approx(numpy.asarray([[0.75, 0.25, 0.0], [0.0, 0.75, 0.25], [0.25, 0.0, 0.75]]))
    h = -(0.75 * math.log(0.75) + 0.25 * math.log(0.25))
    assert token_entropy(m) == pytest.approx([h, h, h])
    assert parse_marginals(numpy.zeros((0, 3), dtype="i"), [], 3).sum() == 0.0


# -- the order, the guard, the errors -------------------------------------------------------------

def test_random_is_a_seeded_permutation():
    a = priority("random", None, 10, seed=3)
    assert sorted(a.tolist()) == list(range(10))
    assert a.tolist() == priority("random", None, 10, seed=3).tolist()
    assert a.tolist() != priority("random", None, 10, seed=4).tolist()


def test_jaccard_and_the_diversity_guard_by_hand():
    A, B, C, D = (frozenset(s) for s in ("abcd", "abce", "abcd", "xy"))
    assert jaccard(A, B) == pytest.approx(3 / 5) and jaccard(A, C) == 1.0 and jaccard(A, D) == 0.0
    assert jaccard(frozenset(), frozenset()) == 1.0
    sets = [A, B, C, D]
    assert diverse_first([0, 2, 1, 3], sets, 3, 0.7) == [0, 1, 3]  # C duplicates A
    assert diverse_first([0, 2, 1, 3], sets, 3, 0.5) == [0, 3]  # B too alike (0.6); the pool runs out
    assert diverse_first([0, 2, 1, 3], sets, 3, 1.0) == [0, 2, 1]  # 1: no guard
    assert diverse_first([3, 0, 1], sets, 1) == [3]


def test_token_sets_ignore_case_and_repeats():
    assert token_set("The cat saw the Cat".split()) == frozenset({"the", "cat", "saw"})
    assert DEFAULT_MAX_SIMILARITY == 0.7
    # one new word in five: 4/6 alike, kept; one in eight: 7/9, skipped
    five, eight = "a b c d e".split(), "a b c d e f g h".split()
    for words, kept in ((five, 2), (eight, 1)):
        sets = [token_set(words), token_set(words[:-1] + ["z"])]
        assert len(select_sentences("mnlp", sets, 2, [-1.0, -0.5])) == kept


def test_select_sentences_ranks_then_guards():
    sets = [frozenset("ab"), frozenset("ab"), frozenset("cd"), frozenset("ef")]
    assert select_sentences("entropy", sets, 2, [0.9, 0.8, 0.1, 0.5]) == [0, 3]  # 1 duplicates 0
    assert select_sentences("mnlp", sets, 2, [-0.9, -0.8, -0.1, -0.5]) == [0, 3]


def test_the_length_guard_skips_short_sentences_for_every_strategy():
    """Lengths 1, 6, 2, 5 and min_tokens 5: mnlp's ranking 0, 2, 3, 1 (lowest first) keeps 3, 1;
    entropy's 2, 0, 1, 3 keeps 1, 3; random's permutation keeps only the long ones; at 1 (off)
    the ranking is the guard-less one, and a guard without lengths is refused."""
    sets = [frozenset("a"), frozenset("bcdefg"), frozenset("hi"), frozenset("jklmn")]
    lengths = [1, 6, 2, 5]
    assert select_sentences("mnlp", sets, 2, [-0.9, -0.1, -0.8, -0.5], lengths=lengths, min_tokens=5) == [3, 1]
    assert select_sentences("entropy", sets, 4, [0.8, 0.5, 0.9, 0.1], lengths=lengths, min_tokens=5) == [1, 3]
    assert set(select_sentences("random", sets, 4, lengths=lengths, min_tokens=5, seed=3)) == {1, 3}
    assert select_sentences("mnlp", sets, 2, [-0.9, -0.1, -0.8, -0.5], lengths=lengths, min_tokens=1) == [0, 2]
    assert list(long_enough([3, 0, 1], [1, 6, 2, 5], 2)) == [3, 1]
    with pytest.raises(ValueError, match="needs one length per sentence"):
        select_sentences("mnlp", sets, 2, [-0.9, -0.1, -0.8, -0.5], min_tokens=5)


@pytest.mark.parametrize("min_tokens", [0, -1, 2.5, True, "5"])
def test_a_bad_min_tokens_is_one_line(min_tokens):
    with pytest.raises(DataError, match="--min-tokens: expected a whole number of tokens, 1 or more"):
        check_selection("mnlp", 1, 0.7, 0, min_tokens)


@pytest.mark.parametrize("args, message", [
    (("mnlp", 0, 0.7), "--n: expected 1 or more"),
    (("mnlp", -2, 0.7), "--n: expected 1 or more"),
    (("margin", 3, 0.7), "--strategy: unknown strategy 'margin'"),
    (("mnlp", 3, 1.5), "--max-similarity: expected a Jaccard similarity between 0 and 1"),
    (("mnlp", 3, float("nan")), "--max-similarity"),
])
def test_bad_settings_are_one_line(args, message):
    strategy, n, max_similarity = args
    with pytest.raises(DataError, match=message):
        check_selection(strategy, n, max_similarity)


def test_scores_that_are_not_numbers_are_refused():
    with pytest.raises(DataError, match="not a number"):
        priority("entropy", [0.1, float("nan")], 2)
    with pytest.raises(ValueError, match="one score per sentence"):
        priority("mnlp", [0.1], 2)
