"""Named methods: a short partial config per method, assembled onto a base config per encoder.

``configs/base_cpu.cfg`` and ``configs/base_trf.cfg`` hold what every method shares on an
encoder family: the nlp settings, the ``auc_ner`` pipe with its architecture and encoder, the
corpora, the training and initialize blocks. ``configs/methods/<name>.cfg`` holds only what
makes method ``<name>`` (its scheme, loss, strategy, decoder...), without the lines that restate
a factory default. The method's name is its file name, in studies, benchmarks and configs alike.

spaCy has no config include, so a full training config is assembled with spaCy's own merge,
``Config.merge`` (the method's values over the base's; a block that names another registered
function replaces the base's block instead of merging into it), plus two rules that keep every
method on the base's encoder:

1. a pipe that the method's ``[nlp] pipeline`` does not name is dropped, with its
   ``[initialize.components]`` block (``spacy_ner`` puts spaCy's ``ner`` in place of ``auc_ner``);
2. every pipe whose model names no ``tok2vec`` gets the base's encoder (``bilstm_crf`` replaces
   the model block, ``spacy_ner`` the pipe; both keep the encoder of the base).

A ``tok2vec`` block naming no function edits the base's encoder, and a ``tok2vec`` pipe without
a model is the base's encoder as a pipe. A key that the base lacks must be one that spaCy or the
package reads (`_check_new_keys`): spaCy itself takes ``[training] max_stepz`` without a word.
A recipe (``configs/recipes/<name>.cfg``) is assembled the same way onto the CPU base after
`RECIPE_LAYERS`, the partials every CPU recipe shares; a recipe whose name ends in
`TRF_RECIPE_SUFFIX` (``lowres_best_trf``) onto the transformer base after `TRF_RECIPE_LAYERS`
(`recipe_encoder`).

Overrides (dotted keys, as ``spacy train`` takes them) are applied last, through
``spacy.util.load_config_from_str``. The result is an ordinary config: ``spacy-auc-ner config``
writes it to a file for ``spacy train``, and the study runner trains it in process.
"""
import difflib
import inspect
import re
import typing
from pathlib import Path
from typing import Any, Dict, List, Mapping, Optional, Sequence, Set, Tuple, Union

from confection import ConfigValidationError
from spacy.util import CONFIG_SECTION_ORDER, load_model_from_config, registry
from thinc.api import Config

from .data.config_files import config_error_text, load_config_file, located_error, with_overrides
from .data.files import DataError, PathLike

# the configs that ship with the package (configs/ in a checkout links to them), so that the
# methods, bases and recipes are there after any pip install
DEFAULT_CONFIGS_DIR = Path(__file__).resolve().parent / "configs"
METHODS_FOLDER = "methods"
# encoder family -> its base config in the configs folder
ENCODERS: Dict[str, str] = {"cpu": "base_cpu.cfg", "trf": "base_trf.cfg"}
RECIPES_FOLDER = "recipes"
PRETRAIN_FOLDER = "pretrain"  # the pretraining fragments (pretrain-config's FRAGMENT, by name)
RECIPE_ENCODER = "cpu"
# what every recipe adds to its base before its own file, in this order
RECIPE_LAYERS = ("pretrain/characters.cfg", "self_training.cfg", "lowres_extras.cfg")
# a recipe named <name>_trf is built on the transformer base after TRF_RECIPE_LAYERS: not the
# CPU layers, which pretrain a tok2vec, which a transformer does not need
TRF_RECIPE_SUFFIX = "_trf"
TRF_RECIPE_LAYERS: Tuple[str, ...] = ("self_training.cfg",)
DEFAULT_RECIPE = "lowres_best"

class MethodError(ValueError):
    """A method or base that cannot be found or assembled; the message is one line naming the file."""


def methods_dir(configs_dir: PathLike = DEFAULT_CONFIGS_DIR) -> Path:
    return Path(configs_dir) / METHODS_FOLDER


def method_names(configs_dir: PathLike = DEFAULT_CONFIGS_DIR) -> List[str]:
    """Every method of the configs folder: the file names of ``methods/*.cfg``."""
    return sorted(p.stem for p in methods_dir(configs_dir).glob("*.cfg"))


def base_path(encoder: str, configs_dir: PathLike = DEFAULT_CONFIGS_DIR) -> Path:
    """The base config of an encoder family ('cpu' or 'trf')."""
    if encoder not in ENCODERS:
        raise MethodError(f"unknown encoder {encoder!r}; choose one of {', '.join(ENCODERS)}")
    path = Path(configs_dir) / ENCODERS[encoder]
    if not Path(configs_dir).is_dir():
        raise MethodError(f"{configs_dir}: no such configs folder (it holds {ENCODERS[encoder]} and methods/)")
    if not path.exists():
        raise MethodError(f"{path}: base config not found (run from the project folder or name the configs folder)")
    return path


def method_path(name: str, configs_dir: PathLike = DEFAULT_CONFIGS_DIR) -> Path:
    """``configs/methods/<name>.cfg``; an unknown name fails with the known ones."""
    path = methods_dir(configs_dir) / f"{name}.cfg"
    if path.exists():
        return path
    known = method_names(configs_dir)
    if not known:
        raise MethodError(f"{methods_dir(configs_dir)}: no method configs found (run from the project folder or name the configs folder)")
    hint = ""
    if name.endswith("_trf") and name[: -len("_trf")] in known:
        hint = f" (the transformer variant is the method {name[: -len('_trf')]!r} on encoder 'trf')"
    recipes = recipe_names(configs_dir)
    raise MethodError(f"unknown method {name!r}{hint}; known: {', '.join(known)}" + (f"; recipes: {', '.join(recipes)}" if recipes else ""))


def recipe_names(configs_dir: PathLike = DEFAULT_CONFIGS_DIR) -> List[str]:
    """Every recipe of the configs folder: the file names of ``recipes/*.cfg``."""
    return sorted(p.stem for p in (Path(configs_dir) / RECIPES_FOLDER).glob("*.cfg"))


def pretrain_names(configs_dir: PathLike = DEFAULT_CONFIGS_DIR) -> List[str]:
    """Every pretraining fragment of the configs folder: the file names of ``pretrain/*.cfg``."""
    return sorted(p.stem for p in (Path(configs_dir) / PRETRAIN_FOLDER).glob("*.cfg"))


def pretrain_fragment(fragment: PathLike, configs_dir: PathLike = DEFAULT_CONFIGS_DIR) -> Path:
    """The file of a pretraining fragment: ``fragment`` itself when it is a file, else the
    fragment of that name in ``pretrain/`` (`pretrain_names`), as ``config`` and ``recipe`` take
    a name: a pip install has no checkout's ``configs/pretrain/characters.cfg``. A missing
    path is left to the config reader ("no such config file"), with the name to give where its
    file name is a fragment's; a bare name that is neither is one line listing the fragments."""
    path, names = Path(fragment), pretrain_names(configs_dir)
    if path.is_file():
        return path
    if str(fragment) in names:
        return Path(configs_dir) / PRETRAIN_FOLDER / f"{fragment}.cfg"
    if path.suffix or len(path.parts) > 1:  # a path, not a name
        if path.suffix == ".cfg" and path.stem in names and not path.exists():
            raise MethodError(f"{path}: no such config file; give the package's fragment by its name: {path.stem}")
        return path
    raise MethodError(f"{fragment}: neither a config file nor a pretraining fragment ({', '.join(names)})")


def recipe_encoder(name: str) -> str:
    """The encoder family recipe `name` is built on: 'trf' for a name ending in
    `TRF_RECIPE_SUFFIX`, else 'cpu' (`RECIPE_ENCODER`)."""
    return "trf" if name.endswith(TRF_RECIPE_SUFFIX) else RECIPE_ENCODER


def recipe_files(name: str, configs_dir: PathLike = DEFAULT_CONFIGS_DIR) -> Tuple[Path, List[Path]]:
    """The base and the partials, in order, that recipe `name` assembles from (on the CPU base
    `RECIPE_LAYERS`, on the transformer base `TRF_RECIPE_LAYERS`, see `recipe_encoder`; then
    ``recipes/<name>.cfg``); an unknown name fails with the known ones."""
    configs_dir = Path(configs_dir)
    if name not in recipe_names(configs_dir):
        raise MethodError(f"unknown recipe {name!r}; known: {', '.join(recipe_names(configs_dir)) or 'none'} (in {configs_dir / RECIPES_FOLDER})")
    encoder = recipe_encoder(name)
    layers = [configs_dir / layer for layer in (RECIPE_LAYERS if encoder == RECIPE_ENCODER else TRF_RECIPE_LAYERS)]  # a missing one fails in `assemble`, named
    return base_path(encoder, configs_dir), [*layers, configs_dir / RECIPES_FOLDER / f"{name}.cfg"]


def recipe_config(name: str, configs_dir: PathLike = DEFAULT_CONFIGS_DIR, overrides: Optional[Dict[str, Any]] = None) -> Config:
    """The full training config of recipe `name` (see `recipe_files`)."""
    return assemble(*recipe_files(name, configs_dir), overrides)


def config_files(name: str, encoder: str = "cpu", configs_dir: PathLike = DEFAULT_CONFIGS_DIR) -> Tuple[Path, List[Path]]:
    """The base and the partials of method `name` on `encoder`, or of recipe `name` (on its own
    base only, `recipe_encoder`); an unknown name fails with the known methods and recipes."""
    if name in recipe_names(configs_dir):
        own = recipe_encoder(name)
        if encoder != own:
            raise MethodError(f"{name!r} is a recipe, built on the {own} base ({ENCODERS[own]}) only, not on {encoder!r}")
        return recipe_files(name, configs_dir)
    return base_path(encoder, configs_dir), [method_path(name, configs_dir)]


def describe(name: str, configs_dir: PathLike = DEFAULT_CONFIGS_DIR) -> str:
    """The first sentence of the comment that opens the method's (or recipe's) file: what it is."""
    words = []
    recipe = Path(configs_dir) / RECIPES_FOLDER / f"{name}.cfg"  # its own file only: no base needed to say what it is
    for line in (recipe if recipe.is_file() else method_path(name, configs_dir)).read_text(encoding="utf8").splitlines():
        if not line.startswith("#"):
            break
        words.append(line.lstrip("#").strip())
    text = " ".join(words)
    end = re.search(r"(?<! al)\.(\s|$)", text)
    return text[: end.start() + 1] if end else text


def assemble(base: PathLike, method: Union[PathLike, Sequence[PathLike]], overrides: Optional[Dict[str, Any]] = None) -> Config:
    """The full training config of the partial config `method` (or of several, merged in turn:
    a recipe's) on the base config `base`, with `overrides` (dotted keys) applied last. Not
    interpolated: ``${paths.train}`` stays a variable."""
    partials = [method] if isinstance(method, (str, Path)) else list(method)
    method = partials[-1]
    base_cfg = _read(base)
    _check_new_keys(base_cfg, {}, base)
    config = base_cfg
    for partial in partials:
        partial_cfg = _read(partial)
        _check_new_keys(partial_cfg, config, partial, base)
        config = config.merge(partial_cfg)
    pipeline = list(config.get("nlp", {}).get("pipeline", []))
    encoder = _encoder_of(base_cfg)
    components = config.get("components", {})
    for name in list(components):
        if name not in pipeline:
            del components[name]
    init_components = config.get("initialize", {}).get("components", {})
    for name in list(init_components):
        if name not in pipeline:
            del init_components[name]
    for name in pipeline:
        if name not in components:
            raise MethodError(f"{method}: [nlp] pipeline names {name!r} but neither the method nor {Path(base).name} has [components.{name}]")
        block = components[name]
        if encoder is not None and block.get("factory") == "tok2vec" and not block.get("model"):
            block["model"] = Config(encoder).copy()
            continue
        slot = _encoder_slot(block.setdefault("model", {}))
        if slot is not None and encoder is not None:
            slot["tok2vec"] = Config(encoder).merge(slot.get("tok2vec") or {})
    config = Config(_ordered_like(config, base_cfg), section_order=base_cfg.section_order)
    try:
        return with_overrides(config, overrides or {}, f"{method}: overrides {sorted(overrides or {})}")
    except DataError as err:
        raise MethodError(str(err)) from None


def method_config(
    name: str,
    encoder: str = "cpu",
    configs_dir: PathLike = DEFAULT_CONFIGS_DIR,
    overrides: Optional[Dict[str, Any]] = None,
) -> Config:
    """The full training config of the named method on an encoder family."""
    return assemble(base_path(encoder, configs_dir), method_path(name, configs_dir), overrides)


def check_config(config: Config, where: str) -> None:
    """Build the pipeline of `config` (without training or initialising it) so that a wrong key
    or value in a method file fails at assembly, with a one-line error naming `where` and the
    setting's full config key (`located_error`: the components first, then the other blocks)."""
    try:
        load_model_from_config(config, auto_fill=True, validate=True)
    except (ValueError, KeyError, TypeError) as err:
        blocks = [f"components.{name}" for name in config.get("components", {})]
        blocks += [name for name in config if name not in ("components", "corpora", "paths")]
        located = located_error(err, config.interpolate(), blocks, None)
        if isinstance(located, ConfigValidationError):
            raise MethodError(f"{where}: {config_error_text(located)}") from None
        if isinstance(located, DataError):
            raise MethodError(f"{where}: {located}") from None
        raise MethodError(f"{where}: {type(err).__name__}: {' '.join(str(err).split())}") from None


def _encoder_slot(model: Any) -> Optional[Dict[str, Any]]:
    """The block of a method's model whose `tok2vec` is the base's encoder: the model itself
    when it names no `tok2vec`, or a `tok2vec` that names no registered function (edits of the
    base's encoder); inside its `tok2vec` when that wraps an encoder (an architecture with a
    `tok2vec` argument, e.g. BiLSTMEncoder.v1) and leaves it out; None when the method brings
    its own encoder."""
    while isinstance(model, dict):
        if "tok2vec" not in model:
            return model
        inner = model["tok2vec"]
        if isinstance(inner, dict) and not any(str(k).startswith("@") for k in inner):
            return model
        if not (isinstance(inner, dict) and _wraps_encoder(inner.get("@architectures"))):
            return None
        model = inner
    return None


def _wraps_encoder(architecture: Any) -> bool:
    if not isinstance(architecture, str) or not registry.has("architectures", architecture):
        return False
    return "tok2vec" in inspect.signature(registry.architectures.get(architecture)).parameters


def _check_new_keys(partial: Mapping[str, Any], config: Mapping[str, Any], path: PathLike, base: Optional[PathLike] = None) -> None:
    """Refuse a key of the config file `path` that `config` (the base, and the files merged onto
    it before) lacks and that nothing reads: spaCy takes an unknown key outside the components,
    [training] max_stepz or a section [trainin], and trains as if it were not there. A file may
    add what `_settings` allows; the settings of a registered function (a block with an @ key)
    and of the components are left to spaCy, which checks them against the function's signature
    when it builds the pipeline (`check_config`)."""
    where = f"names nothing in the base ({Path(base).name}) and " if base is not None else ""

    def walk(block: Mapping[str, Any], known: Any, keys: Tuple[str, ...]) -> None:
        if any(str(k).startswith("@") for k in block):
            return
        allowed = _settings(keys)
        for key, value in block.items():
            new = not (isinstance(known, Mapping) and key in known)
            if new and allowed is not None and key not in allowed:
                what = f"is not a setting of [{'.'.join(keys)}]" if keys else "is not a section that spaCy or spacy-auc-ner reads"
                close = difflib.get_close_matches(str(key), sorted(allowed), n=1)
                hint = f" (did you mean {close[0]}?)" if close else ""
                raise MethodError(f"{path}: [{'.'.join((*keys, str(key)))}] {where}{what}{hint}")
            if isinstance(value, Mapping):
                walk(value, {} if new else known[key], (*keys, str(key)))

    walk(partial, config, ())


def check_config_keys(config: Mapping[str, Any], path: PathLike) -> None:
    """Refuse a key of the full config file `path` that nothing reads, as a method file's new
    keys are refused (`_check_new_keys`): spaCy would train ``max_step = 10`` in [training] as
    if the line were not there, and the recipe then reported the budget it had not set."""
    _check_new_keys(config, {}, path)


def _settings(keys: Tuple[str, ...]) -> Optional[Set[str]]:
    """The keys that the block `keys` of a training config may hold, or None for any key: at
    the top, spaCy's sections and the package's ([self_training], [budget]); in [training],
    [initialize], [nlp] and [pretraining] the fields of spaCy's schema of the section (spaCy's
    validation takes an extra key there without a word); in the package's blocks the settings
    that the recipe checks. [paths], [system] and [variables] hold variables, [components] and
    [corpora] named blocks, a dict setting ([training.score_weights]) any name: None."""
    from spacy import schemas

    from .training import budget, self_training

    own = {self_training.BLOCK: set(self_training.CHECKS), budget.BLOCK: set(budget.CHECKS)}
    if not keys:
        return {*CONFIG_SECTION_ORDER, *schemas.ConfigSchema.model_fields, *own}
    if keys[0] in own:
        return own[keys[0]] if len(keys) == 1 else None
    models: List[Any] = [schemas.ConfigSchema]
    for key in keys:
        fields = [m.model_fields[key].annotation for m in models if key in m.model_fields]
        # a Union of schemas ([pretraining]: the full one or the empty one) allows any of their fields
        models = [a for f in fields for a in (typing.get_args(f) or (f,)) if isinstance(a, type) and hasattr(a, "model_fields")]
        if not models:
            return None
    return {name for m in models for name in m.model_fields}


def _read(path: PathLike) -> Config:
    try:
        return load_config_file(path)
    except DataError as err:
        raise MethodError(str(err)) from None


def _encoder_of(base: Config) -> Optional[Dict[str, Any]]:
    """The ``model.tok2vec`` block of the base's first pipe that has one."""
    for name in base.get("nlp", {}).get("pipeline", []):
        model = base.get("components", {}).get(name, {}).get("model", {})
        if isinstance(model, dict) and isinstance(model.get("tok2vec"), dict):
            return model["tok2vec"]
    return None


def _ordered_like(merged: Dict[str, Any], base: Dict[str, Any]) -> Dict[str, Any]:
    """`merged` with its keys in the base's order, the method's new keys after them, so that
    the written config reads like the base."""
    keys = [k for k in base if k in merged] + [k for k in merged if k not in base]
    out = {}
    for key in keys:
        value = merged[key]
        if isinstance(value, dict) and isinstance(base.get(key), dict):
            value = _ordered_like(value, base[key])
        out[key] = value
    return out
