"""Negative sampling for missing annotations, over tokens: Li et al. 2021 (uniform) and the
weighted distribution of "Rethinking negative sampling for handling missing entity
annotations" (Li et al. 2022, ``negative-sampling.txt``; "the paper" below).

Unlabelled entities look like `O`, and training on every `O` token teaches the model to miss
entities. So for each sentence of n tokens only k = min(ceil(rate n), #candidates) of its
candidates (its gold-`O` tokens that have gold), drawn without replacement, enter the loss;
entity tokens always do.

Tokens, not spans. The paper labels spans: a sentence has n(n+1)/2 candidate spans, entities
are a vanishing share of them, and that sparsity is what keeps a uniform sample of ceil(lambda n)
spans nearly free of unlabelled entities. It does not carry over to tokens: a sentence has at
most n candidate tokens, the tokens of its hidden entities are a fixed share of them, and a
uniform sample holds them in that same share. Over tokens, uniform sampling mainly lowers the
weight of the `O` tokens against the entity tokens; keeping hidden entities out of the sample
is the weighted distribution's work.

The rate. The paper writes k = ceil(lambda n) and prints no value of lambda. Li et al. 2021's
code draws int(0.7 n) + 1 spans of the n(n+1)/2 (its ``negative_rate`` 0.7), about 1.4/(n+1) of
the candidates; the same count of tokens would be 70 % of the sentence, most of its `O`
tokens. The default 0.35 is this package's choice, kept from its first version: with 83 to
96 % `O` tokens (CoNLL 2003, NCBI-disease, s800) it puts 36 to 42 % of a sentence's `O`
tokens in the loss.

Distributions:
- "uniform": every candidate of the sentence equally likely.
- "weighted", eqs. 3-5 of the paper as printed, with z_l = P(l | x) the model's label
  distribution on the token over the whole label space L (`O` included):

      v = z_O - max_{l in L} z_l                                   (3)  in [-1, 0]
      u = H(L | X = x) = - sum_{l in L} z_l log z_l                 (4)  in [0, log |L|]
      r = u (1 + v)^mu,   q = exp(r / T) / sum_{candidates} exp(r' / T)   (5)

  v is 0 where the model puts `O` on top and falls towards -1 as an entity label takes over:
  (1 + v)^mu (mu = 8, the paper's grid-search value) is .17 at v = -.2, .004 at v = -.5 and
  all but removes the tokens the model gives to an entity; among the others the uncertain
  ones weigh more. As r lies in [0, log |L|], two candidates' weights differ by a factor
  |L|^(1/T) at most: over m candidates the entropy of q is at least log m - log |L| / T, so q
  never collapses onto one token, and T sets how far it departs from uniform. On a model sure
  of most of its `O` tokens, u and so r are small everywhere and q stays close to uniform
  (in the tests: entropy within .01 nats of log m over the whole schedule). (An earlier
  version took the max over the entity labels only, the reading the paper's prose suggests
  ("if v is high, then z_O is high and max z_l is low"): v reached +1, (1 + v)^8 up to 256,
  and on the same model the first draw concentrated on a handful of tokens whatever T,
  entropy 1.4 nats at T = sqrt 10 and 0.5 at T = 1 against log 40 = 3.7.)

  "T is scheduled as sqrt(C - c), where C is the number of training epochs and 0 <= c < C is
  the current epoch number": near uniform while the model is poor, down to T = 1. A spaCy run
  counts steps, so c = floor(C step / total_steps) maps the run onto C = ``epochs`` epochs; or
  set a fixed ``temperature``. The model is its own oracle (the paper's adaptive variant): z
  comes from the scores of the same step (softmax for ``softmax``, the sigmoids normalised to
  sum 1 for ``ova``), with no gradient through the sampling.

Sampling without replacement from q is Gumbel-top-k: the k largest r / T + G per sentence, G
standard Gumbel noise, all sentences of the batch at once through one sort. The noise is drawn
from a generator seeded by (seed, Truth.seed, Truth.step), so a rerun samples the same tokens.
"""
import math
from typing import Literal, Optional

import numpy
from spacy.util import registry
from thinc.backends import get_array_ops

from ..ml.activations import log_softmax, sigmoid
from .base import LossOutput, LossWrapper, TokenLoss, Truth, check_setting, empty_output
from .crossentropy import SoftmaxCE


@registry.losses("spacy_auc_ner.NegativeSampling.v1")
class NegativeSampling(LossWrapper):
    """`loss` (default softmax CE) over the entity tokens and, per sentence of n tokens,
    ceil(rate n) sampled gold-O tokens. distribution "uniform" or "weighted" (the paper's
    r = u (1 + v)^mu with v = z_O - max_l z_l, sampled by softmax(r / T), T = sqrt(C - c)
    with C = `epochs` spread over `total_steps`, or a fixed `temperature`)."""

    name = "spacy_auc_ner.NegativeSampling.v1"
    own_schemes = ("softmax", "ova")

    def __init__(
        self,
        loss: Optional[TokenLoss] = None,
        rate: float = 0.35,
        distribution: Literal["uniform", "weighted"] = "uniform",
        mu: float = 8.0,
        epochs: int = 10,
        total_steps: int = 20000,
        temperature: Optional[float] = None,
        seed: int = 0,
    ):
        loss = loss if loss is not None else SoftmaxCE()
        super().__init__(loss=loss)
        self.loss = loss
        self.rate = float(rate)
        self.distribution = distribution
        self.mu = float(mu)
        self.epochs = int(epochs)
        self.total_steps = int(total_steps)
        self.temperature = temperature
        self.seed = int(seed)

    def validate_own(self, key: str) -> None:
        check_setting(0.0 < self.rate <= 1.0, f"{key}.rate", f"must be in (0, 1], not {self.rate}")
        check_setting(
            self.distribution in ("uniform", "weighted"),
            f"{key}.distribution",
            f"must be 'uniform' or 'weighted', not {self.distribution!r}",
        )
        check_setting(self.mu >= 0, f"{key}.mu", f"must be >= 0, not {self.mu}")
        check_setting(self.epochs >= 1, f"{key}.epochs", f"must be >= 1, not {self.epochs}")
        check_setting(self.total_steps >= 1, f"{key}.total_steps", f"must be >= 1, not {self.total_steps}")
        t = self.temperature
        check_setting(t is None or t > 0, f"{key}.temperature", f"must be > 0 (or null), not {t}")

    def __call__(self, scores, truth: Truth) -> LossOutput:
        if scores.shape[0] == 0:
            return empty_output(scores)
        return self.loss(scores, truth.with_mask(self.sampled_mask(scores, truth)))

    def temperature_at(self, step: int) -> float:
        """T = sqrt(C - c), c = floor(C step / total_steps) capped at C - 1; or the fixed T."""
        if self.temperature is not None:
            return float(self.temperature)
        c = min(self.epochs - 1, (self.epochs * step) // self.total_steps)
        return math.sqrt(self.epochs - c)

    def sampling_logits(self, scores, truth: Truth):
        """(N,) log-weights of the sampling distribution: 0 (uniform) or r / T (weighted),
        r = u (1 + v)^mu with v = z_O - max_l z_l over all labels (eqs. 3-5)."""
        xp = get_array_ops(scores).xp
        if self.distribution == "uniform":
            return xp.zeros(scores.shape[0], dtype="f8")
        if truth.o_column < 0:
            raise ValueError(f"[loss] {self.name} needs an O column; the scheme has none")
        z = label_distribution(scores, truth.multilabel).astype("f8")
        u = -(xp.where(z > 0, z * xp.log(xp.maximum(z, 1e-300)), 0.0)).sum(axis=1)
        v = z[:, truth.o_column] - z.max(axis=1)
        r = u * (1.0 + v) ** self.mu
        return r / self.temperature_at(truth.step)

    def sampling_distribution(self, scores, truth: Truth):
        """(N,) probability of each token to be the first draw of its sentence: q of eq. 5
        over the sentence's candidates, 0 for the other tokens."""
        xp = get_array_ops(scores).xp
        sent, candidate = self._candidates(scores, truth)
        # r / T lies in [0, log K]: exp cannot overflow, no per-sentence max needed
        w = xp.where(candidate, xp.exp(self.sampling_logits(scores, truth)), 0.0)
        totals = xp.bincount(sent, weights=w, minlength=len(truth.lengths))
        return w / xp.maximum(totals[sent], 1e-300)

    def sampled_mask(self, scores, truth: Truth):
        """Truth.mask with the gold-O tokens that were not sampled set to 0."""
        xp = get_array_ops(scores).xp
        N = scores.shape[0]
        sent, candidate = self._candidates(scores, truth)
        lengths = xp.asarray(truth.lengths).astype("i8")
        D = lengths.shape[0]
        is_o = truth.targets[:, truth.o_column] > 0
        n_candidates = xp.bincount(sent, weights=candidate.astype("f8"), minlength=D)
        k = xp.minimum(xp.ceil(self.rate * lengths - 1e-9), n_candidates)
        noise = numpy.random.default_rng([self.seed, truth.seed, truth.step]).gumbel(size=N)
        key = self.sampling_logits(scores, truth) + xp.asarray(noise)
        key = xp.where(candidate, key, -xp.inf)
        # sentence ascending, key descending; then rank = position within the sentence
        order = xp.lexsort(xp.stack([-key, sent.astype("f8")]))
        starts = xp.cumsum(lengths) - lengths
        rank = xp.empty(N, dtype="i8")
        rank[order] = xp.arange(N) - starts[sent[order]]
        chosen = candidate & (rank < k[sent])
        keep = xp.where(is_o, chosen, True)
        return (truth.mask * keep).astype(truth.mask.dtype)

    def _candidates(self, scores, truth: Truth):
        """(N,) sentence index of every token and (N,) whether it is a candidate negative
        (gold `O` with gold)."""
        if truth.o_column < 0:
            raise ValueError(f"[loss] {self.name} needs an O column; the scheme has none")
        xp = get_array_ops(scores).xp
        N = scores.shape[0]
        lengths = xp.asarray(truth.lengths).astype("i8")
        if int(lengths.sum()) != N:
            raise ValueError(f"[loss] Truth.lengths sum to {int(lengths.sum())}, not to the {N} scores")
        # sentence of each token (empty docs own no token); cupy's repeat wants host counts
        sent = xp.searchsorted(xp.cumsum(lengths), xp.arange(N), side="right")
        candidate = (truth.targets[:, truth.o_column] > 0) & (truth.mask > 0)
        return sent, candidate


def label_distribution(scores, multilabel: bool):
    """(N, K) per-token distribution z over the labels: softmax, or the sigmoids normalised
    (the OVA classifiers are independent, the paper's z is a distribution)."""
    xp = get_array_ops(scores).xp
    if not multilabel:
        return xp.exp(log_softmax(scores))
    h = sigmoid(scores)
    return h / xp.maximum(h.sum(axis=1, keepdims=True), 1e-12)
