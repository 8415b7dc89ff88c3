"""``spacy train`` in-process, the package's one, and the config it trains: a file or a Config
with command-line overrides, where an override key that names nothing in the config is refused
(spaCy would take the typo ``--training.max_stepz 10`` as a new setting and train the config's
own budget). The study engine of the lab checks its specs' overrides with the same function.
"""
import sys
from pathlib import Path
from typing import Any, Callable, Dict, Iterator, List, Mapping, Optional, Sequence, Tuple, Union

from thinc.api import Config

from ..data.columns import DataError
from ..data.config_files import load_config_file, located_error, with_overrides
from ..data.files import PathLike, check_seed, is_whole
from ..ml.encoders import check_encoder_names
from .no_dev import has_dev


def load_training_config(config: Union[PathLike, Config], overrides: Optional[Dict[str, Any]] = None, where: Optional[PathLike] = None) -> Config:
    """``config`` (a file or a Config) with ``overrides``, not interpolated; a missing file, one
    not UTF-8 or an override naming no section is one line naming the file (or ``where``)."""
    if isinstance(config, Config):
        return with_overrides(config, overrides or {}, where if where is not None else "the config")
    return load_config_file(config, overrides)


def with_settings(config: Config, settings: Mapping[str, Any]) -> Config:
    """A copy of ``config`` with ``settings`` (dotted keys of sections it has, plain values such
    as the steps `budget.budgeted` derives) written in: the config as it was read, not parsed
    again as `load_training_config` parses overrides."""
    config = config.copy()
    for key, value in settings.items():
        *sections, name = key.split(".")
        block = config
        for part in sections:
            block = block[part]
        block[name] = value
    return config


def checked_block(block: Mapping[str, Any], name: str, what: str, checks: Mapping[str, Tuple[Callable[[Any], bool], str]]) -> Dict[str, Any]:
    """The settings of the config block ``[name]`` (defaults already filled in), each checked by
    its ``checks`` entry (valid, what it must be): a setting that is not one of ``what`` or a
    wrong value is one line naming its full key, ``[name.key] must be ..., not 2``."""
    import json

    unknown = sorted(set(block) - set(checks))
    if unknown:
        raise DataError(f"[{name}.{unknown[0]}] is not a setting of {what} ({', '.join(checks)})")
    for key, (valid, text) in checks.items():
        if not valid(block[key]):
            raise DataError(f"[{name}.{key}] {text}, not {json.dumps(block[key])}")
    return {key: block[key] for key in checks}


def missing_keys(config: Mapping[str, Any], keys: Sequence[str]) -> List[str]:
    """The dotted keys that name nothing in ``config``."""
    out = []
    for key in keys:
        node: Any = config
        for part in key.split("."):
            if not isinstance(node, Mapping) or part not in node:
                out.append(key)
                break
            node = node[part]
    return out


def filled_config(config: Config) -> Config:
    """The config as spaCy fills it (the factories' and registered functions' defaults written
    out): a config file leaves out lines that restate a default, yet an override may set them."""
    from spacy.util import load_model_from_config

    return load_model_from_config(config, auto_fill=True, validate=False).config


def unknown_override_keys(config: Config, overrides: Mapping[str, Any]) -> List[str]:
    """The keys of ``overrides`` that name nothing in ``config`` nor in spaCy's filled version of
    it. A key that swaps a registered function (``...embed.@architectures``) is checked against
    the config as it is; the others against the config with the swaps made, as the new
    function's settings exist only there."""
    swaps = [k for k in overrides if k.rsplit(".", 1)[-1].startswith("@")]
    others = [k for k in overrides if k not in swaps]
    missing: List[str] = []
    for keys, applied in ((swaps, {}), (others, {k: overrides[k] for k in swaps})):
        if not keys:
            continue
        target = load_training_config(config, applied) if applied else config
        absent = missing_keys(target, keys)
        if absent:  # a key may restate a default the config file leaves out
            absent = missing_keys(filled_config(target), absent)
        missing.extend(absent)
    return missing


def check_overrides(config: Config, overrides: Mapping[str, Any], where: PathLike) -> None:
    """Refuse, in one line, the command-line overrides that name nothing in ``config``."""
    missing = unknown_override_keys(config, overrides)
    if missing:
        raise DataError("; ".join(f"--{key}: names nothing in {where}" for key in missing))


def _number(value: Any) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool)


# the package's checks of [training] settings that spaCy's schema takes whatever their value
# (the schema has checked their types first): (valid, what the setting must be)
TRAINING_CHECKS: Dict[str, Tuple[Callable[[Any], bool], str]] = {
    # spaCy's loop stops once `max_steps and step >= max_steps`: 0 is no limit (its docs), and
    # a negative number is no limit either but stops after the first step
    "max_steps": (lambda v: v >= 0, "must be 0 (no limit, as in spacy train) or more"),
    "eval_frequency": (lambda v: v >= 1, "must be 1 or more"),  # spaCy's loop takes step % eval_frequency
    "patience": (lambda v: v >= 0, "must be 0 (no early stopping) or more"),
    "dropout": (lambda v: 0 <= v < 1, "must be in [0, 1)"),
    # a negative seed fails inside numpy ("expected non-negative integer") once training starts
    "seed": (lambda v: v >= 0, "must be a whole number >= 0"),
    # a schedule (a block) checks its own settings
    "optimizer.learn_rate": (lambda v: not _number(v) or v > 0, "must be more than 0"),
}


def check_training_settings(training: Mapping[str, Any]) -> None:
    """Refuse, in one line naming its full key, a [training] setting (interpolated, its type
    checked by spaCy's schema) that spaCy would take and train nonsense with, or crash on."""
    import json

    for key, (valid, text) in TRAINING_CHECKS.items():
        value: Any = training
        for part in key.split("."):
            value = value.get(part) if isinstance(value, Mapping) else None
        if _number(value) and not valid(value):
            raise DataError(f"[training.{key}]: {text}, not {json.dumps(value)}")


def check_seeds(config: Config) -> None:
    """Refuse a ``[system] seed`` that is not a whole number from 0 to 2**64 - 1 (`check_seed`):
    training.seed and the seeded readers take it (``${system.seed}``), and numpy refuses a
    negative one only once pretraining or training has run (``expected non-negative integer``).
    Then any seed of the config above 2**64 - 1, by its key: spaCy writes [system] and a
    component's settings as JSON (srsly's ujson) before the component checks them, and a larger
    integer was a SystemError inside spaCy (a loss's or a strategy's seed of 1e41)."""
    interpolated = config.interpolate()
    system = interpolated.get("system") or {}
    check_seed(system.get("seed", 0), "[system.seed]")  # spaCy fills in 0 where [system] leaves it out
    for key, value in _settings(interpolated):
        if key.rsplit(".", 1)[-1] == "seed" and is_whole(value, 0):
            check_seed(value, f"[{key}]")


def _settings(node: Mapping[str, Any], prefix: str = "") -> Iterator[Tuple[str, Any]]:
    """Every (dotted key, value) of the nested blocks of ``node``."""
    for key, value in node.items():
        if isinstance(value, Mapping):
            yield from _settings(value, f"{prefix}{key}.")
        else:
            yield f"{prefix}{key}", value


def validate_training_config(config: Config, sections: Sequence[str] = ("training", "initialize")) -> None:
    """spaCy's own validation of ``config`` as ``spacy debug config`` does it, before a command
    claims an output folder or writes anything: the seeds (`check_seeds`), [nlp] and the components
    built (their settings' types, their models' checks), the ``sections`` resolved with spaCy's
    schemas, the corpora that [training] names, then the package's checks of [training] (`check_training_settings`) and
    the transformer names (`check_encoder_names`).
    A failure is one line naming the full config key (`located_error`), not spaCy's dump."""
    from spacy import schemas
    from spacy.util import load_model_from_config, registry, resolve_dot_names

    check_seeds(config)  # first: the readers built below take [system.seed], spaCy writes the components' as JSON

    schema = {"training": schemas.ConfigSchemaTraining, "initialize": schemas.ConfigSchemaInit,
              "pretraining": schemas.ConfigSchemaPretrain}
    try:
        filled = load_model_from_config(config, auto_fill=True, validate=True).config
    except ValueError as err:  # ConfigValidationError is one
        raise located_error(err, config.interpolate(), [f"components.{name}" for name in config["components"]], "nlp") from None
    interpolated = filled.interpolate()
    for section in sections:
        try:
            registry.resolve(interpolated[section], schema=schema[section])
        except ValueError as err:
            raise located_error(err, interpolated, [section], section) from None
    corpora = [interpolated["training"]["train_corpus"], interpolated["training"]["dev_corpus"]]
    try:
        resolve_dot_names(interpolated, corpora)
    except ValueError as err:
        raise located_error(err, interpolated, corpora, None) from None
    check_training_settings(interpolated["training"])
    check_encoder_names(interpolated)  # a transformer that cannot load, before anything trains


def train_config(config: Union[PathLike, Config], output_dir: Path, overrides: Optional[Dict[str, Any]] = None, gpu_id: int = -1) -> Path:
    """``spacy train`` in-process: ``config`` with ``overrides`` trained into ``output_dir``, its
    log on stderr; returns ``output_dir / "model-best"``."""
    import spacy
    from spacy.training.initialize import init_nlp
    from spacy.training.loop import train as train_loop


    if gpu_id >= 0:  # as `spacy train` does before it builds the pipeline
        spacy.require_gpu(gpu_id)
    loaded = load_training_config(config, overrides)
    nlp = init_nlp(loaded, use_gpu=gpu_id)
    Path(output_dir).mkdir(parents=True, exist_ok=True)
    train_loop(nlp, output_dir, use_gpu=gpu_id, stdout=sys.stderr, stderr=sys.stderr)
    if not has_dev(loaded):
        _no_dev_meta(Path(output_dir))
    return output_dir / "model-best"


def _no_dev_meta(output_dir: Path) -> None:
    """Without a dev set spaCy's meta would give the scores of its empty dev corpus (0.0) as
    the pipeline's performance: say instead that nothing was scored and which step was kept."""
    import json

    for name in ("model-best", "model-last"):
        path = output_dir / name / "meta.json"
        if path.is_file():
            meta = json.loads(path.read_text(encoding="utf8"))
            meta["performance"] = {}
            meta["spacy_auc_ner"] = {"dev_set": None, "kept": "the last step (no dev set: nothing chosen on dev)"}
            path.write_text(json.dumps(meta, indent=2) + "\n", encoding="utf8")


def check_training_blocks(config: Mapping[str, Any], where: PathLike) -> None:
    """Refuse, in one line naming it, a block that training reads and ``config`` lacks: [nlp],
    [components], [training], and the corpora that [training] train_corpus and dev_corpus
    name (spaCy's defaults: [corpora.train], [corpora.dev]). Without it spaCy raises a KeyError
    once it reaches the block, which a recipe does after claiming its output folder (and for
    the dev corpus only after round 0 trained)."""
    for block in ("nlp", "components", "training"):
        if not isinstance(config.get(block), Mapping):
            raise DataError(f"{where}: no [{block}] block, which training needs")
    training = config["training"]
    for key, default in (("train_corpus", "corpora.train"), ("dev_corpus", "corpora.dev")):
        block = training.get(key, default)
        if not isinstance(block, str) or missing_keys(config, [block]):
            named = "" if block == default else f" ([training.{key}] names it)"
            raise DataError(f"{where}: no [{block}] block, which training needs{named}")
