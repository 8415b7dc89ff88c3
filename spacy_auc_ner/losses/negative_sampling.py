"""Negative sampling for missing annotations (Li et al. 2021; the weighted variant of Li et al.
2022, "Rethinking negative sampling for handling missing entity annotations"), for tokens.

Unlabelled entities look like `O` tokens, and training on all of them teaches the model to
miss entities. So for each sentence of n tokens only k = min(ceil(rate n), #gold-O tokens)
gold-`O` tokens, drawn without replacement, enter the loss; entity tokens always do. n is the
sentence length, as in the paper's Theorem 1 (k grows with the sentence, not with the number
of candidates).

Distributions:
- "uniform": every gold-`O` token of the sentence equally likely.
- "weighted" (the paper's eq. 5): r = u (1 + v)^mu with u the entropy of the model's label
  distribution on the token and v = p(O) - max over the entity labels of p (the labels other
  than O: with O among them v would be 0 whenever O wins), sampled with probability
  softmax(r / T) within the sentence. The model is its own oracle: p comes from the scores of
  the same step (softmax for ``softmax``, the sigmoids normalised to sum 1 for ``ova``), with
  no gradient through the sampling. The paper anneals T = sqrt(C - c) over epochs c < C; a
  spaCy run is counted in steps, so c = floor(C step / total_steps) maps the run onto C
  epochs (T from sqrt(C) down to 1); or set a fixed ``temperature``.

Sampling without replacement from softmax(r / T) is Gumbel-top-k: the k largest r / T + G per
sentence, G standard Gumbel noise, all sentences of the batch at once through one sort. The
noise is drawn from a generator seeded by (seed, Truth.seed, Truth.step), so a rerun samples
the same tokens.
"""
import math
from typing import Literal, Optional

import numpy
from spacy.util import registry
from thinc.backends import get_array_ops

from ..ml.activations import log_softmax, sigmoid
from .base import LossOutput, LossWrapper, TokenLoss, Truth, empty_output, require
from .crossentropy import SoftmaxCE


class NegativeSampling(LossWrapper):
    name = "spacy_auc_ner.NegativeSampling.v1"
    own_schemes = ("softmax", "ova")

    def __init__(
        self,
        loss: TokenLoss,
        rate: float = 0.35,
        distribution: Literal["uniform", "weighted"] = "uniform",
        mu: float = 8.0,
        epochs: int = 10,
        total_steps: int = 20000,
        temperature: Optional[float] = None,
        seed: int = 0,
    ):
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
        require(0.0 < self.rate <= 1.0, f"{key}.rate", f"must be in (0, 1], not {self.rate}")
        require(
            self.distribution in ("uniform", "weighted"),
            f"{key}.distribution",
            f"must be 'uniform' or 'weighted', not {self.distribution!r}",
        )
        require(self.mu >= 0, f"{key}.mu", f"must be >= 0, not {self.mu}")
        require(self.epochs >= 1, f"{key}.epochs", f"must be >= 1, not {self.epochs}")
        require(self.total_steps >= 1, f"{key}.total_steps", f"must be >= 1, not {self.total_steps}")
        t = self.temperature
        require(t is None or t > 0, f"{key}.temperature", f"must be > 0 (or null), not {t}")

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
        """(N,) log-weights of the sampling distribution: 0 (uniform) or r / T (weighted)."""
        xp = get_array_ops(scores).xp
        if self.distribution == "uniform":
            return xp.zeros(scores.shape[0], dtype="f8")
        p = label_distribution(scores, truth.multilabel).astype("f8")
        u = -(xp.where(p > 0, p * xp.log(xp.maximum(p, 1e-300)), 0.0)).sum(axis=1)
        o = truth.o_column
        others = xp.concatenate([p[:, :o], p[:, o + 1 :]], axis=1)
        v = p[:, o] - (others.max(axis=1) if others.shape[1] else 0.0)
        r = u * (1.0 + v) ** self.mu
        return r / self.temperature_at(truth.step)

    def sampled_mask(self, scores, truth: Truth):
        """Truth.mask with the gold-O tokens that were not sampled set to 0."""
        if truth.o_column < 0:
            raise ValueError(f"[loss] {self.name} needs an O column; the scheme has none")
        xp = get_array_ops(scores).xp
        N = scores.shape[0]
        lengths = xp.asarray(truth.lengths).astype("i8")
        if int(lengths.sum()) != N:
            raise ValueError(f"[loss] Truth.lengths sum to {int(lengths.sum())}, not to the {N} scores")
        D = lengths.shape[0]
        ends = xp.cumsum(lengths)
        # sentence of each token (empty docs own no token); cupy's repeat wants host counts
        sent = xp.searchsorted(ends, xp.arange(N), side="right")
        is_o = truth.targets[:, truth.o_column] > 0
        candidate = is_o & (truth.mask > 0)
        n_candidates = xp.bincount(sent, weights=candidate.astype("f8"), minlength=D)
        k = xp.minimum(xp.ceil(self.rate * lengths - 1e-9), n_candidates)
        noise = numpy.random.default_rng([self.seed, truth.seed, truth.step]).gumbel(size=N)
        key = self.sampling_logits(scores, truth) + xp.asarray(noise)
        key = xp.where(candidate, key, -xp.inf)
        # sentence ascending, key descending; then rank = position within the sentence
        order = xp.lexsort(xp.stack([-key, sent.astype("f8")]))
        starts = ends - lengths
        rank = xp.empty(N, dtype="i8")
        rank[order] = xp.arange(N) - starts[sent[order]]
        chosen = candidate & (rank < k[sent])
        keep = xp.where(is_o, chosen, True)
        return (truth.mask * keep).astype(truth.mask.dtype)


def label_distribution(scores, multilabel: bool):
    """(N, K) per-token distribution over the labels: softmax, or the sigmoids normalised."""
    xp = get_array_ops(scores).xp
    if not multilabel:
        return xp.exp(log_softmax(scores))
    h = sigmoid(scores)
    return h / xp.maximum(h.sum(axis=1, keepdims=True), 1e-12)


@registry.losses("spacy_auc_ner.NegativeSampling.v1")
def make_negative_sampling(
    loss: Optional[TokenLoss] = None,
    rate: float = 0.35,
    distribution: str = "uniform",
    mu: float = 8.0,
    epochs: int = 10,
    total_steps: int = 20000,
    temperature: Optional[float] = None,
    seed: int = 0,
) -> NegativeSampling:
    """`loss` (default softmax CE) over the entity tokens and, per sentence of n tokens,
    ceil(rate n) sampled gold-O tokens. distribution "uniform" or "weighted"
    (r = u (1 + v)^mu, softmax(r / T), T = sqrt(C - c) with C = `epochs` spread over
    `total_steps`, or a fixed `temperature`)."""
    return NegativeSampling(
        loss if loss is not None else SoftmaxCE(),
        rate=rate,
        distribution=distribution,
        mu=mu,
        epochs=epochs,
        total_steps=total_steps,
        temperature=temperature,
        seed=seed,
    )
