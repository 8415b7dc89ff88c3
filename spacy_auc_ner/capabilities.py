"""What a scheme's output columns are, as capabilities, and what a loss or an update strategy
needs of them: a scheme offers a set of capabilities, a loss (strategy) lists its needs, each
need a set of alternatives of which the scheme must offer one. So a new scheme is trained by
every loss whose needs it meets, and no loss names a scheme.

The capabilities:

- ``sigmoid``: the columns are independent sigmoid classifiers (one binary problem each);
- ``softmax``: the columns are exclusive classes under a per-token softmax;
- ``crf``: the columns are the emissions of a linear-chain CRF over the BIO labels;
- ``bio``: one column per BIO label, in :class:`~spacy_auc_ner.labels.LabelSet`'s order;
- ``one_class``: each token with gold has exactly one positive column (its class);
- ``o_column``: one column is the gold ``O`` label.
"""
from typing import FrozenSet, Iterable, Optional, Tuple

SIGMOID, SOFTMAX, CRF, BIO, ONE_CLASS, O_COLUMN = "sigmoid", "softmax", "crf", "bio", "one_class", "o_column"
CAPABILITIES = (SIGMOID, SOFTMAX, CRF, BIO, ONE_CLASS, O_COLUMN)

# a need: the scheme offers at least one of these capabilities
Need = FrozenSet[str]
# what a loss or strategy needs: every one of its needs met
Needs = Tuple[Need, ...]


def requires(*alternatives: Iterable[str]) -> Needs:
    """``requires({"sigmoid", "softmax"}, {"o_column"})``: sigmoid or softmax columns, and an O column."""
    return tuple(frozenset(a) for a in alternatives)


def unmet(wanted: Needs, offers: FrozenSet[str]) -> Optional[Need]:
    """The first need of `wanted` that `offers` does not meet, or None."""
    return next((need for need in wanted if not need & offers), None)


def describe(capabilities: Iterable[str], joiner: str = ", ") -> str:
    """'sigmoid or softmax' for a need (joiner " or "), 'bio, sigmoid' for an offer; sorted."""
    return joiner.join(sorted(capabilities)) or "nothing"
