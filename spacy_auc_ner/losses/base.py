"""The token-loss interface: raw scores (N, K) and a :class:`Truth` in, value and gradients out.

Losses run on ``ops.xp`` (numpy or cupy) with no loop over tokens or labels. Learned
parameters are declared (:class:`LossParam`) and held by the model's head, so that a saved
pipeline holds them; the loss keeps their update rules. A loss does not know where it sits in
a config, so it checks its settings under the key it is given (:meth:`TokenLoss.validate`).
"""
from dataclasses import dataclass, replace
from typing import Dict, FrozenSet, NamedTuple, Optional, Sequence, Tuple

import numpy
from thinc.api import Model
from thinc.backends import get_array_ops
from thinc.types import Floats1d, Floats2d, Ints1d

from ..capabilities import Need, Needs, unmet

# where a loss cannot train a scheme's columns: (the config key below the loss's, "" for the
# loss itself or ".loss" for its inner loss; that loss's name; the need its columns do not meet)
Unmet = Tuple[str, str, Need]


def check_setting(ok: bool, key: str, message: str) -> None:
    """Raise a one-line ValueError naming the config `key` unless `ok`. Written as a positive
    condition, so NaN settings (for which every comparison is False) are refused too."""
    if not ok:
        raise ValueError(f"[{key}] {message}")


# float32's largest number (3.4e38): the losses compute in the scores' float32, where a setting
# above it is inf (1e39 as Focal's gamma or Dice's alpha gave inf * 0 = NaN at the first step)
FLOAT32_MAX = float(numpy.finfo(numpy.float32).max)

# the largest setting that scales a loss term: a weight (CRFWithAUC's mu, two_task's lambda), the
# AUC margin (squared in the loss) and Dice's smoothing. 2**24 is float32's precision (a 24-bit
# significand): a term scaled beyond it swamps the others, which vanish in its rounding, so a
# larger setting changes nothing but the range. At 1e38, finite in float32, the weighted gradient
# overflowed once summed (inf), and training stopped as diverged ("lower the learn rate"), the
# setting unnamed; a margin of 1e19 squared was inf in the loss. With a weight and the margin at
# 2**24 together, the gradient and its squared norm (the optimizer's clipping sums it in float32)
# stay finite (tests/test_losses_training.py trains at the bounds).
MAX_SCALE = 2.0**24


def check_float32(value: float, key: str) -> None:
    """Refuse, naming `key`, a setting (a number, checked finite already) that is inf in float32."""
    check_setting(
        abs(value) <= FLOAT32_MAX, key,
        f"must be at most {FLOAT32_MAX!r}, float32's largest number (the loss computes in float32, where it is inf), not {value}",
    )


def check_scale(value: float, key: str) -> None:
    """Refuse, naming `key`, a weight, margin or smoothing (a number) above :data:`MAX_SCALE`."""
    check_setting(
        value <= MAX_SCALE, key,
        f"must be at most 2**24 = {MAX_SCALE:.0f}, float32's precision (a larger scale swamps the loss's other terms and overflows float32), not {value}",
    )


class LossParam(NamedTuple):
    """A learned parameter declared by a loss, shape (K,) * ndim for K columns, starting at
    `init`; its name on the head says whose it is (``dam_alpha``, ``crf_trans``)."""

    name: str
    ndim: int
    init: float

    def shape(self, n_columns: int) -> Tuple[int, ...]:
        return (n_columns,) * self.ndim


@dataclass(frozen=True)
class Truth:
    """Gold and bookkeeping for one loss evaluation over N tokens and K columns.

    targets: (N, K) 0/1; one-hot for `softmax`/`ova`, the entity and beginning columns for `two_task`.
    mask: (N,) token weights, 0 without gold or left out this step (negative sampling, MoM's
        O-only term); a row of zeros never produces NaN.
    columns: (K,) column weights: the classifiers an OVA strategy updates, or task weights
        (1 and lambda for AUC_en + lambda AUC_be).
    lengths: (D,) tokens per doc, summing to N. multilabel: independent sigmoid columns (True)
        or exclusive softmax classes. params: the loss's learned parameters by name, or None.
    o_column: the gold-`O` column, -1 if none. step: training updates so far (schedules,
        seeds). seed: base seed for losses that sample."""

    targets: Floats2d
    mask: Floats1d
    columns: Floats1d
    lengths: Ints1d
    multilabel: bool
    params: Optional[Dict[str, Floats1d]] = None
    o_column: int = -1
    step: int = 0
    seed: int = 0

    def with_mask(self, mask: Floats1d) -> "Truth":
        return replace(self, mask=mask)


class LossOutput(NamedTuple):
    """d_scores: (N, K) gradient wrt the scores. loss: the value, a Python float.
    d_params: gradients for the head's learned loss parameters, or None; for a *maximised* one
        (alpha) the negated ascent direction, so that any descent optimizer ascends.
    new_params: parameters the loss sets directly (closed-form updates), or None."""

    d_scores: Floats2d
    loss: float
    d_params: Optional[Dict[str, Floats1d]] = None
    new_params: Optional[Dict[str, Floats1d]] = None


class TokenLoss:
    """Base class: thinc's loss convention (``__call__``, ``get_grad``, ``get_loss``) over a Truth."""

    name = "loss"
    # What the loss needs of a scheme's columns (:mod:`spacy_auc_ner.capabilities`); a wrapper
    # lists its own needs, its inner losses theirs.
    needs: Needs = ()
    # The learned parameters the loss reads from Truth.params.
    params: Tuple[LossParam, ...] = ()

    def __call__(self, scores: Floats2d, truth: Truth) -> LossOutput:
        raise NotImplementedError

    def get_grad(self, scores: Floats2d, truth: Truth) -> Floats2d:
        return self(scores, truth).d_scores

    def get_loss(self, scores: Floats2d, truth: Truth) -> float:
        return self(scores, truth).loss

    @property
    def param_names(self) -> Tuple[str, ...]:
        return tuple(p.name for p in self.params)

    def validate(self, key: str = "loss") -> None:
        """Raise a one-line error naming `key` (where the loss sits, e.g. "components.auc_ner.loss")."""

    def unmet_need(self, offers: FrozenSet[str]) -> Optional[Unmet]:
        """Why the loss cannot train columns offering `offers` (:data:`Unmet`), or None when it can."""
        need = unmet(self.needs, offers)
        return None if need is None else ("", self.name, need)

    def trains(self, offers: FrozenSet[str]) -> bool:
        """Whether the loss (with its inner losses) can train columns offering `offers`."""
        return self.unmet_need(offers) is None

    def initialize(self, class_counts: Floats1d) -> None:
        """Called once with the (K,) gold counts of each column, for losses that weight classes."""

    def read_params(self, store: Model) -> Optional[Dict[str, Floats2d]]:
        """The declared parameters' values on `store` (the head); None without parameters."""
        return {p.name: store.get_param(p.name) for p in self.params} or None

    def apply_update(self, store: Model, out: LossOutput) -> None:
        """Hand a step's updates to `store`: gradients for the optimizer, closed-form values now."""
        for name, grad in (out.d_params or {}).items():
            store.inc_grad(name, grad)
        for name, value in (out.new_params or {}).items():
            store.set_param(name, value)

    def finish_update(self, store: Model) -> None:
        """After each optimizer step: constraints on the parameters (projections)."""


def masked_counts(truth: Truth) -> Tuple[Floats2d, Floats2d, Floats1d, Floats1d]:
    """Positive and negative token weights (N, K) and their column sums (K,)."""
    w = truth.mask[:, None]
    pos = truth.targets * w
    neg = (1.0 - truth.targets) * w
    return pos, neg, pos.sum(axis=0), neg.sum(axis=0)


def safe_inverse(xp, counts):
    """1/counts where counts > 0, else 0 (so empty sets contribute nothing, never NaN)."""
    return xp.where(counts > 0, 1.0 / xp.maximum(counts, 1e-12), 0.0).astype(counts.dtype)


def empty_output(scores: Floats2d) -> LossOutput:
    xp = get_array_ops(scores).xp
    return LossOutput(xp.zeros_like(scores), 0.0)


def weighted_sum(outputs: Sequence[LossOutput], weights: Sequence[float]) -> LossOutput:
    """sum_j w_j out_j of loss outputs over the same scores: values and gradients add up;
    closed-form ``new_params`` are averaged with the weights of the outputs that set them."""
    d_scores = sum(w * out.d_scores for out, w in zip(outputs, weights))
    loss = float(sum(w * out.loss for out, w in zip(outputs, weights)))
    d_params: Dict[str, Floats1d] = {}
    for out, w in zip(outputs, weights):
        for k, grad in (out.d_params or {}).items():
            d_params[k] = d_params[k] + w * grad if k in d_params else w * grad
    setters: Dict[str, list] = {}
    for out, w in zip(outputs, weights):
        for k, value in (out.new_params or {}).items():
            setters.setdefault(k, []).append((w, value))
    new_params: Dict[str, Floats1d] = {}
    for k, pairs in setters.items():
        total = sum(w for w, _ in pairs)
        if total <= 0:  # no weight on any setter: plain average
            pairs, total = [(1.0, v) for _, v in pairs], float(len(pairs))
        new_params[k] = (sum(w * v for w, v in pairs) / total).astype(pairs[0][1].dtype)
    dtype = outputs[0].d_scores.dtype
    return LossOutput(
        d_scores.astype(dtype), loss, d_params or None, new_params or None
    )


class LossWrapper(TokenLoss):
    """A loss built on inner losses (``loss``, ``ce``, ``auc``): it trains the columns that meet
    its own needs and its inner losses' (:meth:`inner_offers`), declares their parameters, and
    passes validation, ``initialize`` and updates on."""

    def __init__(self, **inner: TokenLoss):
        self.inner = inner
        declared = {p.name: p for loss in inner.values() for p in loss.params}
        self.params = tuple(declared.values())

    def validate(self, key: str = "loss") -> None:
        self.validate_own(key)
        for name, loss in self.inner.items():
            loss.validate(f"{key}.{name}")

    def validate_own(self, key: str) -> None:
        """The wrapper's own settings (the inner losses check theirs)."""

    def inner_offers(self, slot: str, offers: FrozenSet[str]) -> FrozenSet[str]:
        """What the columns offer to the inner loss `slot`: what they offer the wrapper."""
        return offers

    def unmet_need(self, offers: FrozenSet[str]) -> Optional[Unmet]:
        own = super().unmet_need(offers)
        if own is not None:
            return own
        for slot, loss in self.inner.items():
            inner = loss.unmet_need(self.inner_offers(slot, offers))
            if inner is not None:
                return (f".{slot}{inner[0]}", inner[1], inner[2])
        return None

    def initialize(self, class_counts: Floats1d) -> None:
        for loss in self.inner.values():
            loss.initialize(class_counts)

    def finish_update(self, store: Model) -> None:
        for loss in self.inner.values():
            loss.finish_update(store)
