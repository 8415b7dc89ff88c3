"""Negative sampling for missing annotations, over tokens: Li et al. 2021 (uniform) and the
weighted distribution of Li et al. 2022, "Rethinking negative sampling for handling missing
entity annotations". Per sentence of n tokens only k = min(ceil(rate n), #candidates) of its
gold-`O` tokens enter the loss (entity tokens always do), the paper's k = ceil(lambda n) with
``rate`` its lambda, drawn without replacement by Gumbel-top-k with noise seeded by (seed,
Truth.seed, Truth.step), so a rerun samples the same. The paper's loss (eq. 1) is the sum of
-log P(l | x) over the annotated entities and the sampled negatives; here it is the inner
``loss`` over those tokens, for SoftmaxCE their mean: the same terms, scaled by one over their
count per batch, as every loss of the package is a mean over tokens.

"weighted" is the paper's eqs. 3-5, with z_l = P(l | x) over all labels L (`O` included):

    v = z_O - max_{l in L} z_l                                   (3)  in [-1, 0]
    u = H(L | X = x) = - sum_{l in L} z_l log z_l                 (4)  in [0, log |L|]
    r = u (1 + v)^mu,   q = exp(r / T) / sum_{candidates} exp(r' / T)   (5)

with "T ... scheduled as sqrt(C - c), where C is the number of training epochs and 0 <= c < C
is the current epoch number", c = floor(C step / total_steps), or a fixed ``temperature``.
As r <= log |L|, q never collapses onto one token (the max over entity labels only, which the
prose suggests, did). The paper samples spans and prints no rate: 0.35 is ours.
"""
import math
from typing import Literal, Optional

import numpy
from spacy.util import registry
from thinc.backends import get_array_ops

from ..capabilities import O_COLUMN, SIGMOID, SOFTMAX, requires
from ..data.files import check_seed
from ..ml.activations import log_softmax, sigmoid
from .base import LossOutput, LossWrapper, TokenLoss, Truth, check_setting, empty_output
from .crossentropy import SoftmaxCE


@registry.losses("spacy_auc_ner.NegativeSampling.v1")
class NegativeSampling(LossWrapper):
    """`loss` over the entity tokens and ceil(rate n) sampled gold-O tokens per sentence of n
    tokens, drawn "uniform" or "weighted" (the module docstring; settings: README's losses table)."""

    name = "spacy_auc_ner.NegativeSampling.v1"
    # per-token columns with an O column (the candidates); the inner loss says which kind
    needs = requires({SIGMOID, SOFTMAX}, {O_COLUMN})

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
        # a number: `temperature = inf` or `"2"` in a config reaches here as the string it was
        # (confection checks that it reads as a float, and passes it on as written)
        self.temperature = None if temperature is None else float(temperature)
        self.seed = seed

    def validate_own(self, key: str) -> None:
        check_setting(0.0 < self.rate <= 1.0, f"{key}.rate", f"must be in (0, 1], not {self.rate}")
        check_setting(
            self.distribution in ("uniform", "weighted"),
            f"{key}.distribution",
            f"must be 'uniform' or 'weighted', not {self.distribution!r}",
        )
        check_setting(0 <= self.mu < math.inf, f"{key}.mu", f"must be >= 0 and finite, not {self.mu}")
        check_setting(self.epochs >= 1, f"{key}.epochs", f"must be >= 1, not {self.epochs}")
        check_setting(self.total_steps >= 1, f"{key}.total_steps", f"must be >= 1, not {self.total_steps}")
        t = self.temperature
        check_setting(t is None or 0 < t < math.inf, f"{key}.temperature", f"must be > 0 and finite (or null), not {t}")
        # numpy's own refusal of a negative seed names no setting, and comes at the first update
        check_seed(self.seed, f"[{key}.seed]")

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
        logits = xp.where(candidate, self.sampling_logits(scores, truth), -xp.inf)
        # r / T reaches log K / T: a small fixed T overflows exp, so each sentence is shifted by its largest
        top = segment_max(logits, sent, len(truth.lengths))
        w = xp.exp(logits - xp.where(xp.isfinite(top), top, 0.0)[sent])
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
        """(N,) sentence of every token, and whether it is a candidate (gold `O` with gold)."""
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


def segment_max(values, segment, n_segments: int):
    """(n_segments,) the largest of `values` (N,) in each segment, `segment` (N,) the ascending
    segment of each value; -inf for a segment without values."""
    xp = get_array_ops(values).xp
    out = xp.full(n_segments, -xp.inf, dtype=values.dtype)
    if values.shape[0] == 0:
        return out
    # sorted by segment, then value: a segment's last entry is its largest
    order = xp.lexsort(xp.stack([values, segment.astype(values.dtype)]))
    counts = xp.bincount(segment, minlength=n_segments)
    last = xp.maximum(xp.cumsum(counts) - 1, 0)
    return xp.where(counts > 0, values[order][last], out)


def label_distribution(scores, multilabel: bool):
    """(N, K) per-token distribution z over the labels: softmax, or the sigmoids normalised
    (the OVA classifiers are independent, the paper's z is a distribution)."""
    xp = get_array_ops(scores).xp
    if not multilabel:
        return xp.exp(log_softmax(scores))
    h = sigmoid(scores)
    return h / xp.maximum(h.sum(axis=1, keepdims=True), 1e-12)
