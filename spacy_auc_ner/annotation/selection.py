"""The ranking of sentences to annotate, as pure functions of per-sentence scores, so that the
command and the lab's simulated annotation loop choose alike.

Strategies: ``mnlp`` (Shen et al. 2018, "Deep active learning for named entity recognition"):
the log-probability of the sentence's best label sequence divided by its length, lowest (least
confident) first, the division keeping long sentences from being chosen for their length alone;
``entropy``: the mean over the sentence's tokens of the entropy (nats) of each token's label
distribution, highest first; ``random``: a seeded shuffle, the control. Ties keep pool order.

The diversity guard walks down the ranking and skips a sentence whose set of (lower-cased)
tokens is more than ``max_similarity`` alike (Jaccard) to one already chosen: near-duplicates
share their uncertainty, so a ranking alone would spend the batch on copies of one sentence.

The length guard (``min_tokens``, off at 1) skips sentences shorter than it, for every strategy:
a score divided by the length ranks a one-token line (a rule of dashes, a heading word) as
doubtful as a long sentence, and in the lab's simulated loop on CoNLL 2003 both mnlp and
entropy spent their batches on such lines (projects/lab/docs/evidence/transformer.md).
"""
from typing import AbstractSet, Iterable, List, Optional, Sequence, Union

import numpy

from ..data.files import DataError, check_seed

STRATEGIES = ("mnlp", "entropy", "random")
Scores = Union[Sequence[float], numpy.ndarray]  # one per sentence of the pool
DEFAULT_MAX_SIMILARITY = 0.7  # one new word in a 5-word sentence (4/6 alike) passes, one in 8 (7/9) does not
DEFAULT_MIN_TOKENS = 1  # the length guard off: what the lab's loop measured


def check_strategy(strategy: str) -> None:
    if strategy not in STRATEGIES:
        raise DataError(f"--strategy: unknown strategy {strategy!r}; choose one of {', '.join(STRATEGIES)}")


def token_entropy(probs) -> numpy.ndarray:
    """(N,) entropy in nats of each row of an (N, K) label distribution (0 log 0 taken as 0)."""
    p = numpy.asarray(probs, dtype="f8")
    terms = p * numpy.log(numpy.where(p > 0, p, 1.0))  # log(1) = 0 where p = 0: no -inf * 0
    return numpy.maximum(-terms.sum(axis=1), 0.0)


def sentence_means(values, lengths) -> numpy.ndarray:
    """(B,) the mean of each sentence's run of the concatenated per-token ``values`` (``lengths``
    tokens each); 0 for a sentence without tokens."""
    values = numpy.asarray(values, dtype="f8")
    lengths = numpy.asarray(lengths, dtype="i8")
    ends = numpy.cumsum(lengths)
    csum = numpy.concatenate([[0.0], numpy.cumsum(values)])
    return (csum[ends] - csum[ends - lengths]) / numpy.maximum(lengths, 1)


def mnlp(best_log_prob, lengths) -> numpy.ndarray:
    """(B,) MNLP: each sentence's best-sequence log-probability over its number of tokens."""
    return numpy.asarray(best_log_prob, dtype="f8") / numpy.maximum(numpy.asarray(lengths, dtype="f8"), 1.0)


def parse_marginals(parse_labels, parse_probs, n_labels: int) -> numpy.ndarray:
    """(T, n_labels) each token's label distribution over a beam's parses: the (P, T) label of
    every token in each parse, weighted by the (P,) parse probabilities (normalised to sum to 1)."""
    labels = numpy.asarray(parse_labels, dtype="i8")
    probs = numpy.asarray(parse_probs, dtype="f8")
    P, T = labels.shape
    out = numpy.zeros((T, n_labels), dtype="f8")
    if P == 0 or T == 0:
        return out
    positions = numpy.broadcast_to(numpy.arange(T), (P, T))
    numpy.add.at(out, (positions, labels), numpy.broadcast_to(probs[:, None], (P, T)))
    total = probs.sum()
    return out / total if total > 0 else out


def priority(strategy: str, scores: Optional[Scores], n_sentences: int, seed: int = 0) -> numpy.ndarray:
    """The pool's sentence indices, most worth annotating first (module docstring)."""
    check_strategy(strategy)
    if strategy == "random":
        return numpy.random.default_rng(seed).permutation(n_sentences)
    if scores is None or len(scores) != n_sentences:
        raise ValueError(f"strategy {strategy!r} ranks by one score per sentence: got {0 if scores is None else len(scores)} for {n_sentences}")
    values = numpy.asarray(scores, dtype="f8")
    if not numpy.isfinite(values).all():
        raise DataError(f"the model gives {int((~numpy.isfinite(values)).sum())} sentence(s) a {strategy} score that is not a number (NaN or infinite): its weights have diverged; retrain it")
    key = values if strategy == "mnlp" else -values  # mnlp: least confident first; entropy: most uncertain first
    return numpy.argsort(key, kind="stable")


def token_set(words: Iterable[str]) -> frozenset:
    """The lower-cased distinct tokens of a sentence, what the diversity guard compares."""
    return frozenset(w.lower() for w in words)


def jaccard(a: AbstractSet, b: AbstractSet) -> float:
    """|a & b| / |a | b|; two empty sets are alike (1)."""
    union = len(a | b)
    return len(a & b) / union if union else 1.0


def diverse_first(order: Iterable[int], token_sets: Sequence[AbstractSet], n: int, max_similarity: float = DEFAULT_MAX_SIMILARITY) -> List[int]:
    """The first ``n`` sentences of ``order`` whose token sets are each at most ``max_similarity``
    alike (Jaccard) to every sentence chosen before them (fewer when the pool runs out)."""
    chosen: List[int] = []
    for i in order:
        if len(chosen) == n:
            break
        if all(jaccard(token_sets[i], token_sets[j]) <= max_similarity for j in chosen):
            chosen.append(int(i))
    return chosen


def long_enough(order, lengths: Optional[Sequence[int]], min_tokens: int) -> numpy.ndarray:
    """The sentences of ``order`` with at least ``min_tokens`` tokens (``lengths``: one per pool
    sentence), in their order; all of them with the guard off or without lengths."""
    order = numpy.asarray(order, dtype="i8")
    if min_tokens <= 1 or lengths is None:
        return order
    return order[numpy.asarray(lengths, dtype="i8")[order] >= min_tokens]


def select_sentences(
    strategy: str,
    token_sets: Sequence[AbstractSet],
    n: int,
    scores: Optional[Scores] = None,
    *,
    seed: int = 0,
    max_similarity: float = DEFAULT_MAX_SIMILARITY,
    lengths: Optional[Sequence[int]] = None,
    min_tokens: int = DEFAULT_MIN_TOKENS,
) -> List[int]:
    """The indices of the ``n`` pool sentences to annotate next, best first: ranked by
    ``strategy`` on ``scores`` (one per sentence; none for random), sentences of fewer than
    ``min_tokens`` tokens (``lengths``) and near-duplicates skipped. The settings are checked
    by the caller's entrance (`check_selection`)."""
    if min_tokens > 1 and (lengths is None or len(lengths) != len(token_sets)):
        raise ValueError(f"the length guard (min_tokens {min_tokens}) needs one length per sentence: got "
                         f"{0 if lengths is None else len(lengths)} for {len(token_sets)}")
    order = long_enough(priority(strategy, scores, len(token_sets), seed), lengths, min_tokens)
    return diverse_first(order, token_sets, n, max_similarity)


def check_selection(strategy: str, n: int, max_similarity: float, seed: int = 0, min_tokens: int = DEFAULT_MIN_TOKENS) -> None:
    """The settings of a selection, each error naming its option."""
    check_strategy(strategy)
    if isinstance(n, bool) or not isinstance(n, int) or n < 1:
        raise DataError(f"--n: expected 1 or more sentences to suggest, got {n!r}")
    check_seed(seed, "--seed")
    if isinstance(max_similarity, bool) or not isinstance(max_similarity, (int, float)) or not 0.0 <= max_similarity <= 1.0:
        raise DataError(f"--max-similarity: expected a Jaccard similarity between 0 and 1 (1: no guard), got {max_similarity!r}")
    if isinstance(min_tokens, bool) or not isinstance(min_tokens, int) or min_tokens < 1:
        raise DataError(f"--min-tokens: expected a whole number of tokens, 1 or more (1: no guard), got {min_tokens!r}")
