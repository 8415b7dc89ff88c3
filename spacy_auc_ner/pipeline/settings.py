"""The ``auc_ner`` pipe's settings, checked once, where the pipe is made (:func:`check_settings`):
the pipe and the layers below take what it returns as checked. Beside it, the check of a
scheme against what trains it (:func:`check_trains`) and of a loaded pipe's cfg against its
config and model (:func:`check_saved`, :func:`check_class_counts`). Each error is one line
naming the setting's full key.
"""
import math
from typing import NamedTuple, Optional, Sequence, Union

from spacy.util import registry

from ..capabilities import describe
from ..data.files import is_number
from ..losses import TokenLoss
from ..losses.base import check_setting
from ..schemes import DECODERS, NAMED_SCHEMES, Scheme, make_scheme
from .strategies import UpdateStrategy

# the largest entity_bias: a logit shift that fixes every decision long before it, while one
# near float32's range (1e38; 1e308 is inf in float32) summed to inf over a sentence in the CRF's
# Viterbi, and the span scores were NaN (softmax: inf - inf, no entity at all)
MAX_ENTITY_BIAS = 1e6


class Parts(NamedTuple):
    """What the settings build: the scheme, the loss (null: the scheme's default) and the strategy."""

    scheme: Scheme
    loss: TokenLoss
    strategy: UpdateStrategy


def check_settings(
    key: str,
    *,
    scheme: Union[str, Scheme],
    loss: Optional[TokenLoss],
    strategy: Optional[UpdateStrategy],
    decoder: Optional[str],
    entity_bias: float,
    spans_key: str,
    overwrite_ents: bool,
) -> Parts:
    """Every setting of the pipe at `key` (``components.NAME``), then the parts they make, each
    checked by its own ``validate`` and the pair of scheme and loss (and strategy) by
    :func:`check_trains`. A scheme's name stands for its block with the block's defaults."""
    check_setting(
        not isinstance(scheme, str) or scheme in NAMED_SCHEMES,
        f"{key}.scheme",
        f"unknown scheme {scheme!r}; choose one of {', '.join(NAMED_SCHEMES)}, or a registered scheme block",
    )
    check_setting(
        decoder is None or decoder in DECODERS,
        f"{key}.decoder",
        f"unknown decoder {decoder!r}; use 'greedy' or 'viterbi' (or null: the scheme's default)",
    )
    check_setting(isinstance(spans_key, str) and spans_key != "", f"{key}.spans_key", f"must be a non-empty string, not {spans_key!r}")
    # the loss and strategy blocks are of their registries: a block of another (a strategy's
    # @misc under [loss]) failed later with an AttributeError on a missing method
    for name, value, kind, example in (
        ("loss", loss, TokenLoss, '(@losses = "spacy_auc_ner.AUCMargin.v1") or null'),
        ("strategy", strategy, UpdateStrategy, '(@misc = "spacy_auc_ner.AllClassifiers.v1")'),
    ):
        check_setting(
            value is None or isinstance(value, kind),
            f"{key}.{name}",
            f"must be a {name} block {example}, not a block that makes {type(value).__name__}",
        )
    # a number first: `entity_bias = inf` in a config reaches here as the string "inf"
    # (confection checks that it reads as a float, and passes it on as written)
    bounded = is_number(entity_bias) and abs(entity_bias) <= MAX_ENTITY_BIAS
    check_setting(bounded, f"{key}.entity_bias", f"must be a finite number in [-{MAX_ENTITY_BIAS:.0f}, {MAX_ENTITY_BIAS:.0f}], not {entity_bias!r}")
    check_setting(isinstance(overwrite_ents, bool), f"{key}.overwrite_ents", f"must be true or false, not {overwrite_ents!r}")
    if isinstance(scheme, str):
        scheme = make_scheme(scheme)
    check_setting(
        isinstance(scheme, Scheme),
        f"{key}.scheme",
        f"must be a scheme name or a registered scheme block (@misc = \"spacy_auc_ner.TwoTask.v1\"), not {scheme!r}",
    )
    scheme.validate(f"{key}.scheme")
    loss = loss if loss is not None else registry.resolve({"loss": dict(scheme.default_loss)})["loss"]
    loss.validate(f"{key}.loss")
    strategy = strategy if strategy is not None else UpdateStrategy()
    strategy.validate(f"{key}.strategy")
    check_trains(scheme, loss, f"{key}.loss", f"{key}.scheme")
    check_trains(scheme, strategy, f"{key}.strategy", f"{key}.scheme")
    return Parts(scheme, loss, strategy)


def check_trains(scheme: Scheme, part, key: str, scheme_key: str) -> None:
    """The one check of a scheme against what trains it (the loss, the strategy): a one-line
    error naming both config keys when the scheme's columns do not meet a need of `part`'s."""
    miss = part.unmet_need(scheme.capabilities)
    if miss is not None:
        where, who, need = miss
        raise ValueError(
            f"[{key}{where}] {who} cannot train scheme '{scheme.name}': it needs {describe(need, ' or ')} "
            f"columns, and [{scheme_key}] offers {describe(scheme.capabilities)}"
        )


def check_saved(
    where: str, name: str, saved_scheme, scheme: str, saved_columns: Optional[int], labels: Sequence[str], n_columns: int
) -> None:
    """A loaded pipe's cfg (its labels and scheme) against its config and its model: a config
    whose scheme was edited loaded the weights of another scheme and predicted with them (ova
    and softmax have the same columns), and a pipe whose cfg file was lost or replaced loaded
    with no labels (it predicted nothing) or with others (an IndexError when predicting)."""
    if saved_scheme is not None and saved_scheme != scheme:
        raise ValueError(f"{where}: the pipe was trained with scheme {saved_scheme!r}, but [components.{name}.scheme] is "
                         f"{scheme!r}: load it with the config it was saved with, or train it again")
    if saved_columns is not None and saved_columns != n_columns:
        raise ValueError(f"{where}: the saved model has {saved_columns} output columns, but the labels of the pipe's cfg "
                         f"({', '.join(labels) or 'none'}) make {n_columns} for scheme {scheme!r}: its cfg file is missing "
                         "or is not the one saved with its model")


def check_class_counts(where: str, counts) -> None:
    """The class counts of a loaded pipe's cfg, which the loss initialises from."""
    if not isinstance(counts, list) or not all(is_number(c) and 0 <= c < math.inf for c in counts):
        raise ValueError(f"{where}: the class_counts of the pipe's cfg must be a list of counts, not {counts!r}: "
                         "its cfg file was edited or damaged")
