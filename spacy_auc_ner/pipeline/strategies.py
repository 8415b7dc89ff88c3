"""OVA update strategies: which classifiers each optimizer step trains. A strategy turns the
columns into a *plan*, a list of column-weight vectors; the component makes one forward and
backward pass per entry and an optimizer step after each but the last (the training loop
makes that one). Costs per batch: README's strategies table.
"""
from typing import FrozenSet, List, Optional, Sequence

import numpy
from spacy.util import registry

from ..capabilities import BIO, SIGMOID, Needs, requires, unmet
from ..data.files import check_seed
from ..losses.base import Unmet, check_setting

# the strategies that pick classifiers need one sigmoid classifier per BIO label (scheme ova)
OVA_CLASSIFIERS = requires({SIGMOID}, {BIO})


@registry.misc("spacy_auc_ner.AllClassifiers.v1")
class UpdateStrategy:
    """Train every classifier at every step (``all``); the base of the other strategies."""

    name = "all"
    # what the strategy needs of a scheme's columns (spacy_auc_ner.capabilities)
    needs: Needs = ()

    def plan(self, columns: Sequence[str], step: int) -> List[numpy.ndarray]:
        return [numpy.ones(len(columns), dtype="f")]

    def validate(self, key: str = "strategy") -> None:
        """Raise a one-line error naming `key` and the setting when a setting is invalid."""

    def check_columns(self, columns: Sequence[str]) -> None:
        """Raise a one-line error naming the setting (under the key `validate` was given) when
        it does not fit the pipe's columns, known once its labels are; `plan` checks first."""

    def unmet_need(self, offers: FrozenSet[str]) -> Optional[Unmet]:
        """Why the strategy cannot train columns offering `offers`, or None (as a loss's)."""
        need = unmet(self.needs, offers)
        return None if need is None else ("", f"'{self.name}' (it picks OVA classifiers)", need)


@registry.misc("spacy_auc_ner.GroupedByPrefix.v1")
class GroupedByPrefix(UpdateStrategy):
    """Algorithm 1: per batch, one optimizer step per B/I/O prefix group, in the order B, I, O,
    on the sum of eq. 1 over the group's classifiers (scheme ova). The pseudo-code loops over
    epochs with no batch loop; its body runs here once per batch."""

    name = "grouped"
    needs = OVA_CLASSIFIERS

    def plan(self, columns: Sequence[str], step: int) -> List[numpy.ndarray]:
        prefixes = numpy.asarray([c.split("-", 1)[0] for c in columns])
        return [(prefixes == p).astype("f") for p in ("B", "I", "O") if (prefixes == p).any()]


@registry.misc("spacy_auc_ner.SampledClassifiers.v1")
class SampledClassifiers(UpdateStrategy):
    """Algorithm 2: per step, the loss of m classifiers sampled without replacement (scheme
    ova). The paper calls it a first-order MAML approximation, but its pseudo-code has no inner
    (task) or outer (meta) update, and neither has this strategy: it follows the pseudo-code."""

    name = "sampled"
    needs = OVA_CLASSIFIERS

    def __init__(self, m: int = 2, seed: int = 0):
        self.m = m
        self.seed = seed
        self.key = "strategy"  # where the config holds it: `validate` is told, `plan` names it

    def validate(self, key: str = "strategy") -> None:
        # a whole number: `m = "2"` in a config reaches here as the string (confection checks
        # that it reads as an int, and passes it on as written); comparing it raised a TypeError
        m_ok = isinstance(self.m, int) and not isinstance(self.m, bool) and self.m >= 1
        check_setting(m_ok, f"{key}.m", f"must be a whole number >= 1, not {self.m!r}")
        check_seed(self.seed, f"[{key}.seed]")
        self.key = key

    def check_columns(self, columns: Sequence[str]) -> None:
        """Refuse an m above the pipe's number of classifiers (a larger m was cut down to it,
        silently, and every classifier trained at every step)."""
        check_setting(
            self.m <= len(columns), f"{self.key}.m",
            f"must be at most {len(columns)}, the number of classifiers the pipe has (one per BIO label of its entity types), not {self.m}",
        )

    def plan(self, columns: Sequence[str], step: int) -> List[numpy.ndarray]:
        self.check_columns(columns)  # at the first update, before any pass
        K = len(columns)
        rng = numpy.random.default_rng([self.seed, step])
        weights = numpy.zeros(K, dtype="f")
        weights[rng.choice(K, size=self.m, replace=False)] = 1.0
        return [weights]

