"""Training and dev sets as ``[corpora]`` reader blocks (plain dicts, config overrides of
``corpora.train`` or ``corpora.dev``): a study cell and a partition's manifest entry both
describe their training set with `training_set_config`, so the same setting, size, value and
seed always name the same sentences, whoever asks."""
from typing import Any, Dict, Optional

TRAIN_PATH = "${paths.train}"
DEV_PATH = "${paths.dev}"


def training_set_config(
    setting: str, size: Optional[int], value: Any, seed: int, *, path: str = TRAIN_PATH
) -> Dict[str, Any]:
    """The ``[corpora.train]`` block of one training set drawn from `path`.

    lowres: `size` sentences drawn with `seed` (``LowResource.v1``); imbalance: `size`
    sentences whose entity tokens make up the share `value` (``EntityRatio.v1``, which takes a
    percent); missing: the drawn sentences with each gold entity hidden with probability
    `value` (``MaskedEntities.v1``); resampling: the drawn sentences resampled by method
    `value` (``Resampled.v1``; "none": as drawn). `size` None means the whole file.
    """
    if setting == "imbalance":
        if size is None:
            raise ValueError("the imbalance setting draws a number of sentences: give a size")
        # the reader takes a percent; rounding keeps 0.07 -> 7.0 rather than 7.000000000000001
        return {"@readers": "spacy_auc_ner.EntityRatio.v1", "path": path, "n": size, "percent": round(100.0 * value, 10), "seed": seed}
    sample = sample_config(path, size, seed)
    if setting == "lowres" or (setting == "resampling" and value == "none"):
        return sample
    if setting == "missing":
        return {"@readers": "spacy_auc_ner.MaskedEntities.v1", "corpus": sample, "p": value, "seed": seed}
    if setting == "resampling":
        return {"@readers": "spacy_auc_ner.Resampled.v1", "corpus": sample, "method": value}
    raise ValueError(f"unknown setting {setting!r}; choose one of lowres, imbalance, missing, resampling")


def sample_config(path: str, size: Optional[int], seed: int) -> Dict[str, Any]:
    """`size` sentences of `path` drawn with `seed` (``LowResource.v1``); the whole file when
    `size` is None (``spacy.Corpus.v1``)."""
    if size is None:
        return {"@readers": "spacy.Corpus.v1", "path": path}
    return {"@readers": "spacy_auc_ner.LowResource.v1", "path": path, "n": size, "seed": seed}


def dev_set_config(size: Optional[int], seed: int) -> Optional[Dict[str, Any]]:
    """A fixed sample of the dev file for early stopping (cheaper than the whole file, the same
    for every cell of a study); None when `size` is None (the config's own dev corpus)."""
    return None if size is None else sample_config(DEV_PATH, size, seed)
