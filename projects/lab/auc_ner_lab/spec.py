"""Study specs: a YAML grid of corpora x methods x setting values x partitions, expanded to cells.

A spec file is read into pydantic models (`SpecFile`, `MethodEntry`, `CorpusEntry`; the
extras' and the tune block's in `training_extras.py` and `tuning.py`), so that bad input is
one line naming the file and the key (`validation.py`), then resolved into a `StudySpec`: each
method's config file, its base, its extras.

A cell is one training run: a named method (``configs/methods/<name>.cfg``) assembled onto the
base of the spec's encoder (``configs/base_<encoder>.cfg``), or a recipe
(``configs/recipes/<name>.cfg`` on the CPU base after the partials every CPU recipe shares, or
on the transformer base for a ``<name>_trf``), plus
config overrides. Its
training set is the override of ``[corpora.train]`` built by
`auc_ner_lab.sets.training_set_config`, so every method of a partition trains on
the same sampled sentences and differences are paired. A cell's `key` says what it trains
(`cell_key`: its training config as assembled, not the method's or a file's name), its `id` is a
readable label for logs and lists. A spec with a ``tune:`` block adds tuning trials (cells
too, see `tuning.py` for the protocol) whose dev scores choose the values its reported cells
train with; a method with ``tuned_as: <other method>`` has no trials of its own and trains
with the values the other method's trials choose (an ablation changes one part and keeps the
rest, its learn rate included).

A method may also be a Python function rather than a spaCy config (``runner:
module:function``, e.g. the Hugging Face peer `hf_peer.run_cell`): its cells are built as any
other (the config is then the spec's base alone unless the entry names one, with the cell's
draw, dev sample, budget and grid point as overrides, which the function reads), and the cell
runner calls the function instead of spacy train.
"""
import hashlib
import json
from dataclasses import asdict, dataclass, field
from functools import lru_cache
from pathlib import Path
from typing import Annotated, Any, ClassVar, Dict, List, Optional, Protocol, Sequence

import srsly
from pydantic import BeforeValidator, Field, field_validator, model_validator
from thinc.api import Config

from spacy_auc_ner.api import (
    DEFAULT_CONFIGS_DIR,
    ENCODERS,
    METRICS,
    DataError,
    MethodError,
    PathLike,
    assemble,
    load_training_config,
    method_path,
    recipe_files,
)

from .corpora import SPLITS
from .selection_loop import SelectionSettings
from .sets import dev_set_config, training_set_config
from .training_extras import PRETRAIN_TEXTS, AugmentSettings, augmented_block, config_augment, hashable, resolve_extras
from .tuning import TUNE_SEED_OFFSET, TuneBlock, TuneSpec, point_label, value_text
from .validation import At, Section, expect, key_path, positive, validate, whole


class Located(Protocol):
    """Where a result was measured, what `Baseline` reads of it (`aggregate.MethodResult` has
    it; aggregate imports this module, not the other way)."""

    corpus: str
    setting: str
    size: Optional[int]
    value: Any
    method: str


# setting -> the spec key holding its values (None: the values are the sizes themselves)
SETTINGS: Dict[str, Optional[str]] = {
    "lowres": None,
    "imbalance": "shares",
    "missing": "mask_p",
    "resampling": "resamplers",
}
# how a setting's value is named in cell ids and results
VALUE_NAMES = {"lowres": None, "imbalance": "share", "missing": "mask_p", "resampling": "resampler"}
# the score a study's tables show unless its spec names another (`metric:`)
DEFAULT_METRIC = "ents_seqeval_micro_f"
# what its reports pair every result with unless its spec says (`baseline:`, see Baseline)
DEFAULT_BASELINE = "ce"


@dataclass(frozen=True)
class Baseline:
    """What each result is paired with: `Baseline.parse("ce")` the method ce at the same corpus,
    size and value; `Baseline.parse("resampler=none")` the same method at the value none of the
    setting whose values are named resampler (auc_ner_lab/spec.py VALUE_NAMES)."""

    method: Optional[str] = None
    value_name: Optional[str] = None
    value: Optional[str] = None

    @classmethod
    def parse(cls, text: Optional[str]) -> Optional["Baseline"]:
        if not text:
            return None
        if "=" in text:
            name, value = (part.strip() for part in text.split("=", 1))
            try:  # 0.70 names the value 0.7
                value = value_text(float(value))
            except ValueError:
                pass
            return cls(value_name=name, value=value)
        return cls(method=text)

    def __str__(self) -> str:
        return self.method if self.method is not None else f"{self.value_name}={self.value}"

    def describe(self) -> str:
        """For report sentences: '`ce`' or 'the same method at resampler=none'."""
        return f"`{self.method}`" if self.method is not None else f"the same method at {self}"

    def is_baseline(self, r: Located) -> bool:
        if self.method is not None:
            return r.method == self.method
        return VALUE_NAMES.get(r.setting) == self.value_name and value_text(r.value) == self.value

    def coordinates(self, r: Located) -> Optional[tuple]:
        """The lookup key (corpus, setting, size, value text, method) of r's baseline; None
        when r is a baseline itself or its setting has no such value."""
        if self.is_baseline(r):
            return None
        if self.method is not None:
            return (r.corpus, r.setting, r.size, value_text(r.value), self.method)
        if VALUE_NAMES.get(r.setting) != self.value_name:
            return None
        return (r.corpus, r.setting, r.size, self.value, r.method)


class SpecError(ValueError):
    """A study spec that cannot be expanded; the message names the file and the key."""


# ---- the spec file, as pydantic models -------------------------------------------------------
def _nonempty_list(message: str):
    return expect(lambda v: isinstance(v, list) and v, message + ", not {value}")


def _mapping_or_empty(message: str):
    """None means {}; anything else must be a mapping."""

    def check(value):
        if value is None:
            return {}
        if not isinstance(value, dict):
            raise ValueError(message)
        return value

    return BeforeValidator(check)


Overrides = Annotated[Dict[str, Any], _mapping_or_empty("a mapping of config keys is expected")]
PositiveInt = Annotated[int, positive()]
Size = Annotated[Optional[int], expect(lambda v: v is None or (whole(v) and v >= 1), "{value} is not a positive whole number of sentences")]
Fraction = Annotated[float, expect(lambda v: isinstance(v, (int, float)) and not isinstance(v, bool) and 0 <= v <= 1,
                                   "{value} is not a fraction between 0 and 1 (write 2% as 0.02)")]
Resampler = Annotated[str, expect(lambda v: isinstance(v, str), "{value} is not a resampling method name (or 'none')")]


def _listed_once(values: Sequence, key: str) -> None:
    seen: List[Any] = []
    for v in values:
        if v in seen:
            raise At((key,), f"{v!r} is listed twice")
        seen.append(v)


RunnerPath = Annotated[Optional[str], expect(lambda v: v is None or (isinstance(v, str) and ":" in v), "{value} is not a 'module:function' path")]


class MethodEntry(Section):
    """A method of a spec: a method file by name (``ce``), a named ``base`` method with the
    study's own ``overrides``, a ``recipe`` of the package by name (``lowres_best``), or a full
    ``config`` file of the user's; ``layers``, partials of the configs folder merged between the
    base and the method (``pretrain/characters.cfg``, ``self_training.cfg``: pretraining and
    self-training are config, as in a recipe); plus the augmentation of its draw and what its
    pretraining reads (`training_extras.py`). With ``runner``
    (a 'module:function' cell function) the function trains its cells instead of spacy train,
    reading their config: by default the spec's base alone; with ``selection`` (the annotation
    loop's settings, `selection_loop.py`) the method's config as any cell has it. With ``tuned_as`` (another
    method of a tuned spec) it has no tuning trials: its cells train with the grid point the
    other method's trials choose in the same group."""

    name: str
    base: Optional[str] = None
    recipe: Optional[str] = None
    config: Optional[str] = None
    runner: RunnerPath = None
    layers: Annotated[List[str], expect(lambda v: isinstance(v, list) and all(isinstance(x, str) for x in v),
                                        "{value} is not a list of partial config files (e.g. [pretrain/characters.cfg, self_training.cfg])")] = []
    overrides: Overrides = {}
    # more overrides for this method's cells of one corpus, over its own (a setting chosen
    # leaving that corpus out: {conll2003: {training.optimizer.learn_rate.initial_rate: 0.0001}})
    corpus_overrides: Annotated[Dict[str, Overrides], _mapping_or_empty("a mapping of corpus names to mappings of config keys is expected")] = {}
    description: str = ""
    # None: the augmentation of the method's own config; false: none
    augment: Annotated[Optional[AugmentSettings], BeforeValidator(AugmentSettings.given)] = None
    pretrain_text: Annotated[str, expect(lambda v: v in PRETRAIN_TEXTS, "{value} is neither 'pool' (the rest of the split) nor 'draw' (the cell's sentences)")] = "pool"
    # the method whose tuning trials choose this one's grid point (it then has no trials of its own)
    tuned_as: Annotated[Optional[str], expect(lambda v: v is None or (isinstance(v, str) and v), "{value} is not a method name")] = None
    # the annotation loop's settings (auc_ner_lab/selection_loop.py), for its runner
    selection: Annotated[Optional[SelectionSettings], BeforeValidator(SelectionSettings.given)] = None

    @model_validator(mode="before")
    @classmethod
    def _procedure_is_config(cls, data: Any) -> Any:
        old = [key for key in ("pretrain", "self_train") if isinstance(data, dict) and key in data]
        if old:
            raise ValueError(f"{' and '.join(old)} are config settings since 2026-11-26: name a recipe (its [pretraining] and "
                             "[self_training] blocks), or give a base method layers: [pretrain/characters.cfg, self_training.cfg]; "
                             "then set them with overrides (pretraining.max_epochs, corpora.pretrain.limit, self_training.rounds, "
                             "self_training.threshold, corpora.pool.limit, ...)")
        return data

    @model_validator(mode="after")
    def _one_definition(self) -> "MethodEntry":
        given = [key for key in ("base", "recipe", "config") if getattr(self, key) is not None]
        if len(given) > 1:
            raise ValueError("give one of 'base' (a method), 'recipe' (a recipe) or 'config' (a full config file), not " + " and ".join(given))
        given = [name for name, set_ in (("recipe", self.recipe is not None), ("layers", bool(self.layers)), ("augment", self.augment is not None)) if set_]
        if self.runner is not None and given and self.selection is None:
            raise ValueError(f"a method trained by its own function ('runner') takes no {' or '.join(given)}: the function trains alone")
        if self.selection is not None and self.runner is None:
            raise ValueError("'selection' is the settings of the annotation loop: give its runner (auc_ner_lab.selection_loop:run_cell)")
        if self.layers and (self.recipe is not None or self.config is not None):
            raise ValueError("layers go between a base and a method; a recipe has its own, and a full config needs none")
        return self


class CorpusEntry(Section):
    """A corpus of a spec: its files (default ``<corpora_dir>/<name>/<split>.spacy``) and the
    config overrides its cells get."""

    train: Optional[str] = None
    dev: Optional[str] = None
    test: Optional[str] = None
    overrides: Overrides = {}


def _corpora(value: Any) -> Any:
    """A name, a list of names or a mapping name -> entry (an empty entry: the defaults)."""
    if value is None:
        raise ValueError("name at least one corpus (its files are <corpora_dir>/<name>/{train,dev,test}.spacy)")
    if isinstance(value, str):
        value = [value]
    if isinstance(value, list):
        value = {name: {} for name in value}
    if not isinstance(value, dict) or not value:
        raise ValueError("a list of corpus names or a mapping name -> {train, dev, test, overrides}")
    for name, entry in value.items():
        if entry is not None and not isinstance(entry, dict):
            raise At((name,), "a mapping with train/dev/test paths and overrides is expected")
    return {str(name): entry or {} for name, entry in value.items()}


def _methods(value: Any) -> Any:
    if not isinstance(value, list) or not value:
        raise ValueError("a non-empty list of method names or {name, base|config, overrides} entries is expected")
    out = []
    for i, entry in enumerate(value):
        if isinstance(entry, str):
            entry = {"name": entry}
        if not isinstance(entry, dict) or "name" not in entry:
            raise At((i,), f"a method name or a mapping with a 'name' is expected, not {entry!r}")
        out.append(entry)
    return out


def _one_of(choices: Sequence[str], what: str = ""):
    return expect(lambda v: v in choices, "{value} is not one of " + ", ".join(choices) + what)


class SpecFile(Section):
    """A study spec as its YAML file holds it (see docs/studies.md)."""

    name: Optional[str] = None
    description: str = ""
    notes: Any = None
    setting: Annotated[str, _one_of(list(SETTINGS))] = "lowres"
    encoder: Annotated[str, _one_of(list(ENCODERS), f" (the bases {', '.join(ENCODERS.values())} of configs_dir)")] = "cpu"
    corpora: Annotated[Dict[str, CorpusEntry], BeforeValidator(_corpora)] = Field(None, validate_default=True)
    corpora_dir: Optional[str] = None
    configs_dir: Optional[str] = None
    methods: Annotated[List[MethodEntry], BeforeValidator(_methods)] = Field(None, validate_default=True)
    sizes: Annotated[Optional[List[Size]], _nonempty_list("a non-empty list is expected")] = None
    shares: Annotated[Optional[List[Fraction]], _nonempty_list("a non-empty list is expected")] = None
    mask_p: Annotated[Optional[List[Fraction]], _nonempty_list("a non-empty list is expected")] = None
    resamplers: Annotated[Optional[List[Resampler]], _nonempty_list("a non-empty list is expected")] = None
    partitions: PositiveInt = 1
    seed: Annotated[int, expect(whole, "{value} is not a whole number")] = 0
    dev_size: Optional[PositiveInt] = None
    overrides: Annotated[Dict[str, Any], _mapping_or_empty("a mapping of config keys (training.max_steps: 500) is expected")] = {}
    # more overrides for the cells of one size, over the spec's: a budget in epochs written in
    # the steps each size needs ({20: {training.max_steps: 90}, 50: {training.max_steps: 210}})
    size_overrides: Annotated[Dict[Annotated[int, positive()], Overrides], _mapping_or_empty("a mapping of sizes to mappings of config keys is expected")] = {}
    tune: Annotated[Optional[TuneBlock], BeforeValidator(TuneBlock.given)] = None
    metric: Optional[str] = None
    baseline: Any = None
    runner: RunnerPath = None
    # "dev": the reported cells are scored on the dev sample only, never on test (an ablation
    # that chooses a recipe's parts); reports then read their dev scores
    score_on: Annotated[str, _one_of(["test", "dev"])] = "test"
    # null (or `--set gpu_id=null`) means the CPU, as -1 does for spacy train
    gpu_id: Annotated[Optional[int], expect(lambda v: v is None or (whole(v) and v >= -1), "{value} is not a GPU number (0, 1, ...) or -1 / null for the CPU")] = None

    VALUE_KEYS: ClassVar = [k for k in SETTINGS.values() if k]

    @field_validator("metric")
    @classmethod
    def _known_metric(cls, value: Optional[str]) -> Optional[str]:
        if value is not None and value not in METRICS:
            raise ValueError(f"{value!r} is not a score; choose one of {', '.join(METRICS)}")
        return value

    @model_validator(mode="after")
    def _consistent(self) -> "SpecFile":
        """What one key says about another: the setting's values, sizes, unique names, the
        baseline, the extras that need a lowres draw, the tuning seeds."""
        setting, value_key = self.setting, SETTINGS[self.setting]
        if value_key is not None and getattr(self, value_key) is None:
            raise At((value_key,), f"a {setting} study needs a list of {value_key}")
        for other in self.VALUE_KEYS:
            if other != value_key and getattr(self, other) is not None:
                raise At((other,), f"only used by the {_setting_of(other)} setting, not {setting}")
        if self.sizes is None and setting in ("lowres", "imbalance"):
            raise At(("sizes",), f"a {setting} study needs a list of training-set sizes")
        _listed_once(self.sizes or [], "sizes")
        # (a size_overrides entry of a size the spec lacks is allowed: `--set 'sizes=[20]'` runs
        # part of a grid with the same cells)
        _listed_once(self.values(), value_key or "values")
        _listed_once([m.name for m in self.methods], "methods")
        for i, method in enumerate(self.methods):
            unknown = sorted(set(method.corpus_overrides) - set(self.corpora))
            if unknown:
                raise At(("methods", i, "corpus_overrides", unknown[0]), f"{unknown[0]!r} is not a corpus of this spec ({', '.join(self.corpora)})")
        self._check_baseline()
        self._check_tuned_as()
        if self.tune is not None and self.partitions > TUNE_SEED_OFFSET:
            raise At(("partitions",), f"at most {TUNE_SEED_OFFSET} in a tuned study (tuning partitions use seeds from seed + {TUNE_SEED_OFFSET})")
        return self

    def values(self) -> List[Any]:
        """The setting's values ([None] for lowres)."""
        key = SETTINGS[self.setting]
        return [None] if key is None else list(getattr(self, key) or [])

    def _check_tuned_as(self) -> None:
        """`tuned_as:` names another method of this spec, one with trials of its own, in a
        spec with a `tune:` block."""
        names = [m.name for m in self.methods]
        for i, method in enumerate(self.methods):
            target = method.tuned_as
            if target is None:
                continue
            where = ("methods", i, "tuned_as")
            if self.tune is None:
                raise At(where, f"{target!r}: takes the grid point another method's tuning trials choose, but the spec has no tune: block")
            if target == method.name:
                raise At(where, f"{target!r} is the method itself; leave tuned_as out for trials of its own")
            if target not in names:
                raise At(where, f"{target!r} is not a method of this spec ({', '.join(names)})")
            other = self.methods[names.index(target)].tuned_as
            if other is not None:
                raise At(where, f"{target!r} has no trials of its own (tuned_as: {other}); name a method whose trials choose (e.g. {other!r})")

    def _check_baseline(self) -> None:
        """`baseline:` a method of the spec (its reports pair every method with it), or
        VALUE_NAME=VALUE (each method paired with itself at that value, e.g. resampler=none)."""
        value, setting = self.baseline, self.setting

        def fail(message):
            raise At(("baseline",), f"{value!r}{message}")

        if value is None:
            return
        if not isinstance(value, str) or not value.strip():
            fail(f" is not a method name or {VALUE_NAMES[setting] or 'VALUE_NAME'}=VALUE")
        base = Baseline.parse(value)
        methods = [m.name for m in self.methods]
        if base.method is not None:
            if base.method not in methods:
                fail(f" is not a method of this spec ({', '.join(methods)})")
            return
        if VALUE_NAMES[setting] is None:
            fail(f" names a value, but a {setting} study has none; name a method")
        if base.value_name != VALUE_NAMES[setting]:
            fail(f": the values of a {setting} study are named {VALUE_NAMES[setting]}, not {base.value_name}")
        known = [value_text(v) for v in self.values()]
        if base.value not in known:
            fail(f": {base.value} is not one of the spec's {SETTINGS[setting]} ({', '.join(known)})")


def _setting_of(value_key: str) -> str:
    return next(s for s, k in SETTINGS.items() if k == value_key)


# ---- the resolved spec and its cells -----------------------------------------------------------
@dataclass
class MethodSpec:
    """A method of a study: `config` is a method file assembled onto `base_config` (a recipe's
    file after its shared `layers`), or, when `base_config` is None, a full training config of
    the user's. `extras`: augmentation, pretraining, self-training (`auc_ner_lab/training_extras.py`)."""

    name: str
    config: str
    overrides: Dict[str, Any] = field(default_factory=dict)
    base_config: Optional[str] = None
    extras: Dict[str, Any] = field(default_factory=dict)
    layers: List[str] = field(default_factory=list)
    # a cell function ('module:function') that trains the method instead of spacy train
    runner: Optional[str] = None
    pretrain_text: str = "pool"
    # the method whose tuning trials choose this one's grid point (None: its own trials)
    tuned_as: Optional[str] = None
    corpus_overrides: Dict[str, Dict[str, Any]] = field(default_factory=dict)


def config_files(base_config: Optional[str], layers: Sequence[str], config: str) -> List[str]:
    """The config files a method or cell assembles from: its base, its layers, its own."""
    return [*filter(None, [base_config]), *layers, config]


@dataclass
class Cell:
    """One training run of a study, self-contained so that it can be shipped to a worker."""

    study: str
    corpus: str
    method: str
    setting: str
    size: Optional[int]
    value: Any
    partition: Optional[int]  # None for a tuning trial (see `tuning`)
    seed: int
    config: str
    overrides: Dict[str, Any]
    train: str
    dev: str
    test: str
    gpu_id: int = -1
    base_config: Optional[str] = None
    key: str = ""  # what the cell trains (`cell_key`): its rows' folder in a results store
    id: str = ""  # a readable label: corpus/method/n=.../p0#<key's first 10 characters>
    # a tuning trial: {"partition": t, "point": {config key: value}} (its `partition` is None)
    tuning: Optional[Dict[str, Any]] = None
    # a reported cell of a tuned study: the grid points, the keys of their trials and the
    # selection metric (and "tuned_as", the method whose trials they are, when not its own);
    # the runner adds "chosen" when it merges the chosen point
    selection: Optional[Dict[str, Any]] = None
    # the method's training extras (augment, pretrain, self_train; see auc_ner_lab/training_extras.py)
    extras: Optional[Dict[str, Any]] = None
    # partials merged between the base and `config` (a recipe's shared ones, `methods.RECIPE_LAYERS`)
    layers: List[str] = field(default_factory=list)
    # the method's own cell function ('module:function'; None: spacy train, `runner.run_cell`)
    runner: Optional[str] = None
    # "dev": a reported cell scored on the dev sample only (spec key score_on)
    score_on: str = "test"
    # what its pretraining reads: the pool (the rest of the split) or its drawn sentences
    pretrain_text: str = "pool"

    def __post_init__(self):
        if not self.key:
            self.key = cell_key(self)
        if not self.id:
            self.id = cell_label(self) + "#" + self.key[:10]

    def redefined(self, **changes) -> "Cell":
        """This cell with `changes`: another cell, whose key and id follow from them."""
        return Cell(**{**self.to_dict(), "key": "", "id": "", **changes})

    def describe(self) -> Dict[str, Any]:
        """The fields a results row carries to identify the cell (a tuning trial's row also
        has ``tuning``, a tuned reported cell's row ``tuned``: the chosen point and its dev score)."""
        row = {
            "key": self.key,
            "cell_id": self.id,
            "study": self.study,
            "corpus": self.corpus,
            "method": self.method,
            "setting": self.setting,
            "size": self.size,
            "value": self.value,
            "partition": self.partition,
            "seed": self.seed,
            "encoder": encoder_of(self.base_config if self.base_config is not None else self.config),
        }
        if self.runner is not None:
            row["runner"] = self.runner
        if self.score_on == "dev" and self.tuning is None:
            row["scored_on"] = "dev"
        if self.tuning is not None:
            row["tuning"] = self.tuning
        if self.selection is not None and "chosen" in self.selection:
            row["tuned"] = self.selection["chosen"]
        from .training_extras import steps

        try:
            named_steps = steps(self)
        except (OSError, ValueError):  # a config that cannot be read: its run fails and says why
            named_steps = []
        named = sorted({*(self.extras or {}), *named_steps})
        if named:
            row["extras"] = named
        return row

    def test_split(self) -> Optional[str]:
        """The split the cell is scored on after training: its test file, or None for a tuning
        trial and a cell of a dev-only study (scored on the dev sample alone)."""
        return None if self.tuning is not None or self.score_on == "dev" else self.test

    def training_config(self) -> Config:
        """The cell's full training config: its method assembled onto its base (or its own
        full config), with the cell's overrides; not interpolated."""
        return assembled_config(self.base_config, [*self.layers, self.config], self.overrides)

    def files(self) -> List[str]:
        return config_files(self.base_config, self.layers, self.config)

    def to_dict(self) -> Dict[str, Any]:
        return asdict(self)


def assembled_config(base_config: Optional[PathLike], partials: Sequence[PathLike], overrides: Optional[Dict[str, Any]] = None) -> Config:
    """Partial configs (a method file; a recipe's layers and file) assembled onto their base
    config, or a full config file of the user's (the one partial) when `base_config` is None,
    with `overrides`; not interpolated. A full config that is not one fails in one line naming it."""
    if base_config is None:
        (config,) = partials
        try:
            return load_training_config(config, overrides)
        except DataError as err:  # the library's one line naming the file
            raise MethodError(str(err)) from None
    return assemble(base_config, partials, overrides)


# [paths] that a cell sets itself, so that their values in a config are not what it trains:
# its corpus files (the runner's paths.train and paths.dev) and the pretraining step's text
CELL_PATHS = ("train", "dev", "raw_text")


def cell_key(cell: Cell) -> str:
    """What the cell trains, hashed: its training config as assembled (`config_digest`: the
    method on its base, or its own full config, before the cell's overrides) and what the cell
    adds (`cell_additions`: overrides, with the training draw and seed, extras, the draw's
    coordinates and a tuned cell's grid).

    No name counts, nor how the config is written: a method, a config file or a base renamed,
    a base restructured or a full config rewritten as base + partial keeps the cell's rows
    exactly when what it trains is unchanged; a change to the base, the method or an
    override is another cell, so that rows trained before are never read as today's.
    """
    content = {"config": config_digest(cell.base_config, [*cell.layers, cell.config]), **cell_additions(cell)}
    return hashlib.sha1(json.dumps(content, sort_keys=True, default=str).encode("utf8")).hexdigest()[:16]


def cell_additions(cell: Cell) -> Dict[str, Any]:
    """What a cell adds to its config, as its key hashes it: its overrides (the training draw
    and seed among them), its extras (file paths by name), its draw's coordinates (corpus,
    size, value, partition or tuning trial) and, for a tuned reported cell, its grid and
    selection metric (not the chosen values, which its trials decide); a cell tuned as another
    method also hashes the keys of that method's trials, which its own config no longer
    determines. Paths are left out, so that moving the corpora or the configs does not lose
    results."""
    additions = {
        "overrides": cell.overrides,
        "draw": {"corpus": cell.corpus, "size": cell.size, "value": cell.value, "partition": cell.partition, "tuning": cell.tuning},
        "extras": hashable(cell.extras or {}),
        "tune": None if cell.selection is None else {k: cell.selection[k] for k in ("points", "partitions", "metric")},
        # only for a method with tuned_as, so that the keys of every other tuned cell stay as they were
        **({"tuned_by": cell.selection["trials"]} if cell.selection is not None and "tuned_as" in cell.selection else {}),
        # only when set, so that the keys of cells trained by spacy train stay as they were
        **({"runner": cell.runner} if cell.runner is not None else {}),
        # a dev-only reported cell is another row than the same training scored on test (a
        # tuning trial is dev-only anyway, so it stays the trial every spec shares)
        **({"score_on": "dev"} if cell.score_on == "dev" and cell.tuning is None else {}),
    }
    if cell.pretrain_text != "pool":
        additions["pretrain_text"] = cell.pretrain_text
    return additions


def config_digest(base_config: Optional[PathLike], partials: Sequence[PathLike]) -> str:
    """A digest of the training config that `partials` assemble to on `base_config` (a full
    config when that is None: `assembled_config`), parsed (comments, layout and key order do not
    count) and without `CELL_PATHS`; computed once per set of files as they are now."""
    files = tuple(str(p) for p in (base_config, *partials) if p is not None)
    return _config_digest(base_config is not None, files, tuple(_stamp(p) for p in files))


def _text_or_name(path: str) -> str:
    try:
        return Path(path).read_text(encoding="utf8", errors="replace")
    except OSError:
        return Path(path).name


def _stamp(path: str) -> Optional[tuple]:
    try:
        stat = Path(path).stat()
    except OSError:
        return None
    return (str(Path(path).resolve()), stat.st_mtime_ns, stat.st_size)


@lru_cache(maxsize=1024)
def _config_digest(on_base: bool, files: tuple, stamps: tuple) -> str:
    try:
        config = assembled_config(files[0], files[1:]) if on_base else assembled_config(None, files)
        content: Any = json.loads(json.dumps(config, sort_keys=True, default=str))
        for name in CELL_PATHS:
            content.get("paths", {}).pop(name, None)
    except (OSError, ValueError):  # a missing file or not a config (check_files refuses it before training)
        content = {"unread": [_text_or_name(p) for p in files]}
    return hashlib.sha1(json.dumps(content, sort_keys=True).encode("utf8")).hexdigest()


def cell_label(cell: Cell) -> str:
    """corpus/method/n=50/share=0.02/p0 (a tuning trial: .../tune0/learn_rate=0.001)."""
    parts = [cell.corpus, cell.method]
    if cell.size is not None:
        parts.append(f"n={cell.size}")
    value_name = VALUE_NAMES[cell.setting]
    if value_name is not None:
        parts.append(f"{value_name}={value_text(cell.value)}")
    if cell.tuning is not None:
        parts += [f"tune{cell.tuning['partition']}", point_label(cell.tuning["point"])]
    else:
        parts.append(f"p{cell.partition}")
    return "/".join(parts)


def encoder_of(base_config: Optional[str]) -> Optional[str]:
    """The encoder family of a base config file (None for a full config of the user's; a base
    used as a full config, as a method with its own runner has it, is its family)."""
    if base_config is None:
        return None
    return next((enc for enc, name in ENCODERS.items() if name == Path(base_config).name), None)


@dataclass
class StudySpec:
    name: str
    setting: str
    corpora: Dict[str, Dict[str, Any]]
    methods: List[MethodSpec]
    sizes: List[Optional[int]]
    values: List[Any]
    partitions: int
    seed: int = 0
    overrides: Dict[str, Any] = field(default_factory=dict)
    size_overrides: Dict[int, Dict[str, Any]] = field(default_factory=dict)
    score_on: str = "test"
    encoder: str = "cpu"
    gpu_id: int = -1
    runner: Optional[str] = None
    dev_size: Optional[int] = None
    description: str = ""
    source: str = "<spec>"
    tune: Optional[TuneSpec] = None
    metric: str = DEFAULT_METRIC
    baseline: str = DEFAULT_BASELINE
    # methods `--method` left out whose trials choose a kept method's grid point (tuned_as):
    # their trials are cells of the run, their reported cells are not
    choosers: List[MethodSpec] = field(default_factory=list)

    def cells(self) -> List["Cell"]:
        """Every cell, partition-major: a study stopped a third of the way has a whole grid
        for the first partition rather than all partitions of a few sizes. A tuned study's
        trials come first, each group's grid together; its reported cells wait for them."""
        out = []
        for partition in range(self.partitions):
            seed = self.seed + partition
            for corpus, paths in self.corpora.items():
                for size in self.sizes:
                    for value in self.values:
                        for method in self.methods:
                            out.append(self._cell(corpus, paths, size, value, method, partition, seed))
        if self.tune is None:
            return out
        return self._tuning_trials() + [self._with_selection(cell) for cell in out]

    def _cell(self, corpus, paths, size, value, method, partition, seed, tuning=None) -> "Cell":
        dev = dev_set_config(self.dev_size, self.seed)
        train = training_set_config(self.setting, size, value, seed)
        if "augment" in method.extras:
            train = augmented_block(train, method.extras["augment"], seed)
        overrides = {  # the method's own keys over the spec's shared ones (the size's over the rest)
            **self.overrides,
            **self.size_overrides.get(size, {}),
            **method.overrides,
            **method.corpus_overrides.get(corpus, {}),
            **paths.get("overrides", {}),
            "system.seed": seed,
            **({"corpora.dev": dev} if dev is not None else {}),
            "corpora.train": train,
            **(tuning["point"] if tuning else {}),
        }
        return Cell(
            study=self.name,
            corpus=corpus,
            method=method.name,
            setting=self.setting,
            size=size,
            value=value,
            partition=partition,
            seed=seed,
            config=method.config,
            overrides=overrides,
            train=str(paths["train"]),
            dev=str(paths["dev"]),
            test=str(paths["test"]),
            gpu_id=self.gpu_id,
            base_config=method.base_config,
            tuning=tuning,
            extras=dict(method.extras) or None,
            layers=list(method.layers),
            runner=method.runner,
            score_on=self.score_on,
            pretrain_text=method.pretrain_text,
        )

    def _tuning_trials(self) -> List["Cell"]:
        """Per corpus x size x value x method with trials of its own (not tuned_as another, see
        `tuning_methods`): every grid point on every tuning partition."""
        assert self.tune is not None
        out = []
        for corpus, paths in self.corpora.items():
            for size in self.sizes:
                for value in self.values:
                    for method in self.tuning_methods():
                        for t, seed in enumerate(self.tune.seeds(self.seed)):
                            for point in self.tune.points():
                                tuning = {"partition": t, "point": point}
                                out.append(self._cell(corpus, paths, size, value, method, None, seed, tuning))
        return out

    def tuning_methods(self) -> List[MethodSpec]:
        """The methods whose trials run: those without tuned_as, then the targets of kept
        methods' tuned_as that `--method` left out (`choosers`)."""
        return [m for m in self.methods if m.tuned_as is None] + self.choosers

    def _with_selection(self, cell: "Cell") -> "Cell":
        """A reported cell that trains with the grid point its group's trials choose: its
        method's own, or those of the method it is tuned_as."""
        assert self.tune is not None
        points = self.tune.points()
        method = self._method(cell.method)
        chooser = method if method.tuned_as is None else self._method(method.tuned_as)
        trials = [
            [
                self._cell(
                    cell.corpus, self.corpora[cell.corpus], cell.size, cell.value,
                    chooser, None, seed, {"partition": t, "point": point},
                ).key
                for t, seed in enumerate(self.tune.seeds(self.seed))
            ]
            for point in points
        ]
        selection = {"points": points, "partitions": self.tune.partitions, "metric": self.tune.metric, "trials": trials}
        if method.tuned_as is not None:
            selection["tuned_as"] = method.tuned_as
        return cell.redefined(selection=selection)

    def _method(self, name: str) -> MethodSpec:
        return next(m for m in [*self.methods, *self.choosers] if m.name == name)

    def check_configs(self) -> None:
        """Fail when a method's config file is missing: its cells' keys would not say what
        they train (a spec read from another folder than the one its paths are relative to)."""
        self._refuse(self._config_problems())

    def check_files(self) -> None:
        """Fail before any training when a config or corpus file is missing."""
        problems = self._config_problems()
        for corpus, paths in self.corpora.items():
            problems += [f"corpus {corpus!r}: {split} file {paths[split]} not found" for split in SPLITS if not Path(paths[split]).exists()]
        self._refuse(problems)

    def config_users(self) -> Dict[str, List[str]]:
        """Each config file the methods assemble from (their cells' keys hash it), with the
        methods that name it."""
        users: Dict[str, List[str]] = {}
        for m in [*self.methods, *self.choosers]:
            for path in config_files(m.base_config, m.layers, m.config):
                users.setdefault(path, []).append(repr(m.name))
        return users

    def _config_problems(self) -> List[str]:
        missing = {path: names for path, names in self.config_users().items() if not Path(path).exists()}
        problems = [f"method{'s' if len(set(names)) > 1 else ''} {', '.join(dict.fromkeys(names))}: config {path} not found"
                    for path, names in missing.items()]
        if any(not Path(path).is_absolute() for path in missing):
            # the usual cause: a spec of the lab run from another folder than projects/lab
            problems.append(f"a relative path is read from the folder the command runs in, {Path.cwd()}")
        return problems

    def _refuse(self, problems: Sequence[str]) -> None:
        if problems:
            raise SpecError(f"{self.source}: " + "; ".join(dict.fromkeys(problems)))

    def check_overrides(self) -> None:
        """Fail before any training when an ``overrides`` key (the spec's, a method's or a
        corpus's) names nothing in the config it is applied to, as ``tune.grid`` keys are
        checked: spaCy would take the typo ``training.max_step`` as a new setting and train
        the config's own budget, and fail every cell on a key in an unknown section."""
        from spacy_auc_ner.api import unknown_override_keys

        problems, seen = [], set()
        for cell in self.cells():
            if (cell.method, cell.corpus) in seen or not all(Path(p).exists() for p in cell.files()):
                continue
            seen.add((cell.method, cell.corpus))
            method = self._method(cell.method)
            origin = {k: f"methods.{method.name}.overrides" for k in method.overrides}
            origin.update({k: "overrides" for k in self.overrides})
            origin.update({k: f"size_overrides.{cell.size}" for k in self.size_overrides.get(cell.size, {})})
            origin.update({k: f"corpora.{cell.corpus}.overrides" for k in self.corpora[cell.corpus].get("overrides", {})})
            origin.update({k: f"methods.{method.name}.corpus_overrides.{cell.corpus}" for k in method.corpus_overrides.get(cell.corpus, {})})
            if not origin:
                continue
            # the library's check, the one `spacy-auc-ner recipe` makes of its overrides, on the
            # config with the cell's own keys (its draw, its seed)
            config = cell.redefined(overrides={k: v for k, v in cell.overrides.items() if k not in origin}).training_config()
            missing = unknown_override_keys(config, {k: cell.overrides[k] for k in origin})
            problems.extend(
                f"{origin[key]}.{key}: names nothing in the config of method {method.name!r} ({cell.config})"
                for key in missing
            )
        self._refuse(problems)

    def check_tuning(self) -> None:
        """Fail before any training when a grid key names nothing in a method's config, as
        assembled for its cells (the method's config file with the cell's overrides).
        Methods whose config file is missing are left to `check_files`."""
        if self.tune is None:
            return
        from .tuning import grid_key_problems

        configs = {}
        for cell in self.cells():  # a trial too: the method tuned_as one left out by --method has only trials here
            if cell.method in configs or not all(Path(p).exists() for p in cell.files()):
                continue
            base = {k: v for k, v in cell.overrides.items() if k not in self.tune.grid}
            plain = cell.redefined(overrides=base, selection=None, tuning=None)
            configs[cell.method] = (cell.config, _filled(plain.training_config()))
        self._refuse(grid_key_problems(self.tune, configs))


def _filled(config: Config) -> Config:
    """The config as spaCy fills it (the factories' defaults written out): method files leave
    out lines that restate a default, yet a grid may still set them."""
    from spacy.util import load_model_from_config

    return load_model_from_config(config, auto_fill=True, validate=False).config


def load_spec(
    path: PathLike,
    *,
    corpora_dir: Optional[PathLike] = None,
    configs_dir: Optional[PathLike] = None,
    gpu_id: Optional[int] = None,
    set_values: Sequence[str] = (),
    only_corpora: Sequence[str] = (),
    only_methods: Sequence[str] = (),
) -> StudySpec:
    """Read a YAML spec; `corpora_dir`, `configs_dir` and `gpu_id` override the spec's,
    `set_values` ("key=<YAML value>") replace top-level keys, `only_corpora` and `only_methods`
    keep those corpora and methods (by the names the spec gives them; a kept method tuned_as
    one left out keeps that one's tuning trials, which choose its grid point).

    A subset of a grid (fewer sizes, partitions or corpora) has the same cells as in the
    whole grid, so its results count towards the whole study later.
    """
    path = Path(path)
    try:
        data = srsly.yaml_loads(path.read_text(encoding="utf8"))
    except FileNotFoundError:
        raise SpecError(f"{path}: study spec not found") from None
    except IsADirectoryError:
        raise SpecError(f"{path}: is a folder, not a study spec") from None
    except UnicodeDecodeError as err:
        raise SpecError(f"{path}: not a study spec (not UTF-8 text: {err.reason} at byte {err.start})") from None
    except ValueError as err:  # srsly's "Invalid YAML: ..." names the line and column
        raise SpecError(f"{path}: not valid YAML: {' '.join(str(err).split())}") from None
    if set_values and isinstance(data, dict):
        data = dict(data)
        for item in set_values:
            key, sep, raw = item.partition("=")
            if not sep or not key.strip():
                raise SpecError(f"{path}: --set {item!r} is not KEY=VALUE")
            try:
                data[key.strip()] = srsly.yaml_loads(raw)
            except ValueError as err:
                raise SpecError(f"{path}: --set {item!r}: the value is not valid YAML: {' '.join(str(err).split())}") from None
    spec = parse_spec(
        data, source=str(path), corpora_dir=corpora_dir, configs_dir=configs_dir, gpu_id=gpu_id
    )
    if only_corpora:
        unknown = sorted(set(only_corpora) - set(spec.corpora))
        if unknown:
            raise SpecError(f"{path}: --corpus {', '.join(unknown)} not in the spec's corpora ({', '.join(spec.corpora)})")
        spec.corpora = {k: v for k, v in spec.corpora.items() if k in set(only_corpora)}
    if only_methods:
        names = [m.name for m in spec.methods]
        unknown = sorted(set(only_methods) - set(names))
        if unknown:
            raise SpecError(f"{path}: --method {', '.join(unknown)} not in the spec's methods ({', '.join(names)})")
        # the spec's order, not the option's: reports list methods as the spec does
        kept = [m for m in spec.methods if m.name in set(only_methods)]
        # a kept method tuned_as one left out still needs that one's trials (not its cells)
        needed = {m.tuned_as for m in kept} - set(only_methods)
        spec.choosers = [m for m in spec.methods if m.name in needed]
        spec.methods = kept
    return spec


def parse_spec(
    data: Any,
    *,
    source: str = "<spec>",
    corpora_dir: Optional[PathLike] = None,
    configs_dir: Optional[PathLike] = None,
    gpu_id: Optional[int] = None,
) -> StudySpec:
    """A spec's data (validated as `SpecFile`) resolved into a `StudySpec`: corpus files,
    method config files, extras; `corpora_dir`, `configs_dir` and `gpu_id` override the data's."""
    if not isinstance(data, dict):
        raise SpecError(f"{source}: a study spec is a mapping of keys (name, setting, corpora, methods, ...)")
    spec = validate(SpecFile, data, source=source, error=SpecError)
    corpora_dir = Path(corpora_dir if corpora_dir is not None else spec.corpora_dir or "corpus")
    configs_dir = Path(configs_dir if configs_dir is not None else spec.configs_dir or DEFAULT_CONFIGS_DIR)
    corpora = {
        name: {**{split: str(getattr(entry, split) or corpora_dir / name / f"{split}.spacy") for split in SPLITS},
               "overrides": dict(entry.overrides)}
        for name, entry in spec.corpora.items()
    }
    methods = [_resolve_method(i, entry, configs_dir, spec.encoder, data, source) for i, entry in enumerate(spec.methods)]
    tune = None
    if spec.tune is not None:
        tune = spec.tune.resolve(default_metric=spec.metric)
    return StudySpec(
        name=spec.name or Path(source).stem,
        setting=spec.setting,
        corpora=corpora,
        methods=methods,
        sizes=spec.sizes if spec.sizes is not None else [None],
        values=[float(v) if spec.setting in ("imbalance", "missing") else v for v in spec.values()],
        partitions=spec.partitions,
        seed=spec.seed,
        overrides=dict(spec.overrides),
        size_overrides={size: dict(keys) for size, keys in spec.size_overrides.items()},
        score_on=spec.score_on,
        encoder=spec.encoder,
        gpu_id=gpu_id if gpu_id is not None else (-1 if spec.gpu_id is None else spec.gpu_id),
        runner=spec.runner,
        dev_size=spec.dev_size,
        description=spec.description,
        metric=spec.metric or DEFAULT_METRIC,
        baseline=DEFAULT_BASELINE if spec.baseline is None else str(Baseline.parse(spec.baseline)),
        source=source,
        tune=tune,
    )


def _resolve_method(i: int, entry: MethodEntry, configs_dir: Path, encoder: str, data: Any, source: str) -> MethodSpec:
    """A method entry's config files (its own; the named method's on the spec's encoder; the
    named recipe's, on its own base) and its extras (the augmentation of its assembled config
    unless the entry says)."""
    where = key_path(("methods", i), data)
    layers: List[str] = []
    try:
        if entry.config is not None:
            config_file, base_config = entry.config, None
        elif entry.runner is not None and entry.base is None and entry.selection is None:  # a function reads the base's shared settings
            config_file, base_config = str(configs_dir / ENCODERS[encoder]), None
        elif entry.recipe is not None:
            base, partials = recipe_files(entry.recipe, configs_dir)
            if encoder != encoder_of(str(base)):
                raise MethodError(f"recipe {entry.recipe!r} is built on the {encoder_of(str(base))} base; this spec's encoder is {encoder!r}")
            base_config, *layers, config_file = map(str, [base, *partials])
        else:
            try:
                config_file = str(method_path(entry.base or entry.name, configs_dir))
            except MethodError as err:
                raise MethodError(f"{err} (or define it with 'config: <file.cfg>')") from None
            base_config = str(configs_dir / ENCODERS[encoder])
            layers = [str(configs_dir / layer) for layer in entry.layers]  # a missing one: check_files names it
    except MethodError as err:
        raise SpecError(f"{source}: {where}: {err}") from None
    own = None
    if "augment" not in entry.model_fields_set and all(Path(p).is_file() for p in config_files(base_config, layers, config_file)):  # else check_files reports it
        try:
            own = config_augment(assembled_config(base_config, [*layers, config_file]))
        except MethodError as err:
            raise SpecError(f"{source}: {where}: {err}") from None
    try:
        extras = resolve_extras(entry, own)
    except At as err:
        raise SpecError(f"{source}: {key_path(('methods', i) + err.loc, data)}: {err}") from None
    return MethodSpec(entry.name, config_file, dict(entry.overrides), base_config=base_config, extras=extras, layers=layers,
                      pretrain_text=entry.pretrain_text, runner=entry.runner, tuned_as=entry.tuned_as,
                      corpus_overrides={corpus: dict(keys) for corpus, keys in entry.corpus_overrides.items()})


def only_cells(cells: Sequence["Cell"], wanted: Sequence[str]) -> List["Cell"]:
    """Of `cells`, those that `wanted` names by id (what ``study run --dry-run`` lists) or key,
    in the study's order (``study run --cell``: a lent GPU trains each cell first in a fresh
    process, scripts/gpu_lease/run_campaigns.sh); all of them when `wanted` is empty. A name
    that is no cell's (a typo, another spec's cell) is refused (SpecError). A reported cell of a
    tuned study chooses from its trials' rows as in any run: it runs once they have rows."""
    if not wanted:
        return list(cells)
    names = set(wanted)
    unknown = sorted(names - {c.id for c in cells} - {c.key for c in cells})
    if unknown:
        raise SpecError(f"--cell: {', '.join(unknown[:3])}{' ...' if len(unknown) > 3 else ''} is no cell of the study "
                        "(its ids: study run --dry-run)")
    return [c for c in cells if c.id in names or c.key in names]
