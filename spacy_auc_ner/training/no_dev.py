"""Training without a dev set: the user's n sentences are all they have, so nothing is chosen
on dev.

``[corpora.dev]`` is `NO_DEV`, which ``recipe`` sets when ``paths.dev`` is null (`without_dev`).
spaCy's loop then scores a corpus of no examples (0 every time, and a tie counts as its best),
only at step 0 and at the last step (the budget's `step_settings` without dev), so its
``model-best`` is the last checkpoint of the schedule; no score has a weight, so spaCy's table
shows no score columns of zeros; early stopping is off; the entity-bias callback, which
calibrates on dev, is dropped; and self-training keeps its last round (:mod:`.self_training`).
As Perez et al. (2021, "True few-shot learning") warn, choices made on a large dev set make
few-shot results look better than a user with n sentences can get.
"""
from typing import Any, List, Mapping, Optional, Tuple

from spacy.language import Language
from spacy.training import Example
from spacy.util import registry
from thinc.api import Config

NO_DEV = "spacy_auc_ner.NoDev.v1"
BIAS_CALLBACK = "spacy_auc_ner.calibrate_entity_bias.v1"  # chooses the bias on dev examples


def has_dev(config: Mapping[str, Any]) -> bool:
    """Whether the config's dev corpus (``[training] dev_corpus``) is a dev set, not `NO_DEV`."""
    name = (config.get("training") or {}).get("dev_corpus", "corpora.dev")
    block: Any = config
    for part in str(name).split("."):
        block = block.get(part) if isinstance(block, Mapping) else None
    return not (isinstance(block, Mapping) and block.get("@readers") == NO_DEV)


def dev_file_in_config(config: Config, interpolated: Config) -> Optional[Tuple[str, Any]]:
    """Where a config names a dev set other than by ``paths.dev``: the dev corpus's block
    (``[training] dev_corpus``, usually ``[corpora.dev]``) with a ``path`` that is set, as
    (its full key, its value in ``interpolated``, the config interpolated), or a reader of the
    user's that reads no ``path`` (``(its key, None)``); None when the block is `NO_DEV` or its
    path is null."""
    from spacy.util import dot_to_object

    name = str((config.get("training") or {}).get("dev_corpus", "corpora.dev"))
    try:
        block = dot_to_object(config, name)
    except KeyError:
        return None  # no such block: check_training_blocks names it next
    if not isinstance(block, Mapping) or block.get("@readers") == NO_DEV:
        return None
    if "path" not in block:
        return (f"{name}", None) if "@readers" in block else None
    value = dot_to_object(interpolated, name)["path"]
    return (f"{name}.path", value) if value is not None else None


def without_dev(config: Config) -> Tuple[Config, List[str]]:
    """``config`` trained without a dev set: its dev corpus `NO_DEV`, and the entity-bias
    callback (it calibrates on dev) dropped; returns what was dropped, for the log."""
    config = config.copy()
    training = config.get("training") or {}  # a config without it is refused next, in one line
    name = training.get("dev_corpus", "corpora.dev")
    section, _, key = str(name).rpartition(".")
    config.setdefault(section or "corpora", {})[key] = {"@readers": NO_DEV}
    # no score is a measure here: without a weight spaCy's table leaves out the columns that
    # would print 0.00 (the score that chooses stays 0, so the last checkpoint is kept as before)
    if isinstance(config.get("training"), Mapping):
        config["training"].setdefault("score_weights", {}).update({name: None for name in _score_names(config)})
    dropped = []
    if (training.get("before_update") or {}).get("@callbacks") == BIAS_CALLBACK:
        config["training"]["before_update"] = None
        dropped.append(f"[training.before_update] {BIAS_CALLBACK} (it calibrates on dev)")
    return config, dropped


def _score_names(config: Mapping[str, Any]) -> List[str]:
    """The scores the config's components weigh by default (their factories' score weights)."""
    names: List[str] = []
    for block in (config.get("components") or {}).values():
        factory = block.get("factory") if isinstance(block, Mapping) else None
        if isinstance(factory, str) and Language.has_factory(factory):
            names += [n for n in Language.get_factory_meta(factory).default_score_weights if n not in names]
    return names


@registry.readers(NO_DEV)
def no_dev_corpus():
    """The dev corpus of a training without a dev set: no examples. spaCy's loop scores 0 at
    each evaluation and takes a tie as its best, so with one evaluation at the last step
    (`step_settings`) its model-best is the last checkpoint."""

    def read(nlp: Language) -> List[Example]:
        return []

    return read

