"""A study spec as its YAML file holds it, read into pydantic models (`SpecFile`, `MethodEntry`,
`CorpusEntry`; the extras' and the tune block's in `training_extras.py` and `tuning.py`), so
that bad input is one line naming the file and the key (`validation.py`)."""
from typing import Annotated, Any, ClassVar, Dict, List, Optional, Sequence

from pydantic import BeforeValidator, Field, field_validator, model_validator

from spacy_auc_ner.api import ENCODERS, METRICS

from .baseline import Baseline
from .selection_loop import SelectionSettings
from .settings import CONFIG_RUNNERS, SELECTION_RUNNER, SETTINGS, VALUE_NAMES
from .training_extras import PRETRAIN_TEXTS, AugmentSettings
from .tuning import TUNE_SEED_OFFSET, TuneBlock, value_text
from .validation import At, Section, expect, positive, whole

NO_DEV_READER = "spacy_auc_ner.NoDev.v1"  # a dev corpus of no examples: training keeps its last step


class SpecError(ValueError):
    """A study spec that cannot be expanded; the message names the file and the key."""


_NONEMPTY_LIST = expect(lambda v: isinstance(v, list) and v, "a non-empty list is expected, not {value}")


def _mapping_or_empty(message: str):
    """None means {}; anything else must be a mapping."""

    def check(value):
        if value is not None and not isinstance(value, dict):
            raise ValueError(message)
        return value or {}

    return BeforeValidator(check)


Overrides = Annotated[Dict[str, Any], _mapping_or_empty("a mapping of config keys is expected")]
PositiveInt = Annotated[int, positive()]
Size = Annotated[Optional[int], expect(lambda v: v is None or (whole(v) and v >= 1), "{value} is not a positive whole number of sentences")]
Fraction = Annotated[float, expect(lambda v: isinstance(v, (int, float)) and not isinstance(v, bool) and 0 <= v <= 1,
                                   "{value} is not a fraction between 0 and 1 (write 2% as 0.02)")]
Resampler = Annotated[str, expect(lambda v: isinstance(v, str), "{value} is not a resampling method name (or 'none')")]


def _listed_once(values: Sequence, key: str) -> None:
    for i, v in enumerate(values):
        if v in values[:i]:
            raise At((key,), f"{v!r} is listed twice")


RunnerPath = Annotated[Optional[str], expect(lambda v: v is None or (isinstance(v, str) and ":" in v), "{value} is not a 'module:function' path")]


class MethodEntry(Section):
    """A method of a spec: a method file by name (``ce``), a named ``base`` method with the
    study's own ``overrides``, a ``recipe`` of the package by name (``lowres_best``), or a full
    ``config`` file of the user's; ``layers``, partials merged between the base and the method
    (``pretrain/characters.cfg``, ``self_training.cfg``); the augmentation of its draw and what
    its pretraining reads (`training_extras.py`). With ``runner`` a 'module:function' trains its
    cells instead of spacy train, reading the spec's base alone, or with ``selection`` (the
    annotation loop's settings) the method's config. With ``tuned_as`` (another method) its
    cells train with the grid point the other method's trials choose in the same group."""

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
        if self.runner is not None and given and self.runner not in CONFIG_RUNNERS:
            raise ValueError(f"a method trained by its own function ('runner') takes no {' or '.join(given)}: the function trains alone "
                             f"(only {' and '.join(CONFIG_RUNNERS)} train the method's config)")
        if self.runner == SELECTION_RUNNER and self.selection is None:
            raise ValueError(f"the annotation loop ({self.runner}) needs its settings: give 'selection' (strategy, batch, rounds, pool)")
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
    sizes: Annotated[Optional[List[Size]], _NONEMPTY_LIST] = None
    shares: Annotated[Optional[List[Fraction]], _NONEMPTY_LIST] = None
    mask_p: Annotated[Optional[List[Fraction]], _NONEMPTY_LIST] = None
    resamplers: Annotated[Optional[List[Resampler]], _NONEMPTY_LIST] = None
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
        setting, value_key = self.setting, SETTINGS[self.setting]
        if value_key is not None and getattr(self, value_key) is None:
            raise At((value_key,), f"a {setting} study needs a list of {value_key}")
        for other in self.VALUE_KEYS:
            if other != value_key and getattr(self, other) is not None:
                raise At((other,), f"only used by the {_setting_of(other)} setting, not {setting}")
        if self.sizes is None and setting in ("lowres", "imbalance"):
            raise At(("sizes",), f"a {setting} study needs a list of training-set sizes")
        _listed_once(self.sizes or [], "sizes")
        self._check_size_overrides()
        _listed_once(self.values(), value_key or "values")
        _listed_once([m.name for m in self.methods], "methods")
        for i, method in enumerate(self.methods):
            unknown = sorted(set(method.corpus_overrides) - set(self.corpora))
            if unknown:
                raise At(("methods", i, "corpus_overrides", unknown[0]), f"{unknown[0]!r} is not a corpus of this spec ({', '.join(self.corpora)})")
        self._check_baseline()
        self._check_tuned_as()
        self._check_dev_corpus()
        if self.tune is not None and self.partitions > TUNE_SEED_OFFSET:
            raise At(("partitions",), f"at most {TUNE_SEED_OFFSET} in a tuned study (tuning partitions use seeds from seed + {TUNE_SEED_OFFSET})")
        return self

    def values(self) -> List[Any]:
        """The setting's values ([None] for lowres)."""
        key = SETTINGS[self.setting]
        return [None] if key is None else list(getattr(self, key) or [])

    def _check_size_overrides(self) -> None:
        """Each size_overrides entry is of a size of the spec: one of another (300 for 30) would be
        ignored (`load_spec` drops those of the file's sizes that `--set sizes=` leaves out)."""
        known = ", ".join(str(size) for size in self.sizes or [])
        for size in self.size_overrides:
            if size not in (self.sizes or []):
                raise At(("size_overrides",), f"{size} is not one of the spec's sizes ({known})")

    def _check_dev_corpus(self) -> None:
        """No cell trains without a dev corpus (NoDev.v1 in an overrides, which a dev_size sample
        replaces) where tuning trials choose on dev scores or score_on: dev reports them."""
        if self.dev_size is not None:
            return
        places = [(("overrides",), self.overrides, None)]
        places += [(("size_overrides", size), keys, None) for size, keys in self.size_overrides.items()]
        places += [(("corpora", name, "overrides"), entry.overrides, None) for name, entry in self.corpora.items()]
        for i, m in enumerate(self.methods):
            places += [(("methods", i, "overrides"), m.overrides, m)]
            places += [(("methods", i, "corpus_overrides", name), keys, m) for name, keys in m.corpus_overrides.items()]
        for loc, overrides, method in places:
            key = _no_dev_key(overrides)
            needs = [what for what, needed in (
                ("the tune: block's trials choose on dev scores", self.tune is not None and (method is None or method.tuned_as is None)),
                ("score_on: dev scores the reported cells on it", self.score_on == "dev")) if needed]
            if key is not None and needs:
                raise At((*loc, key), f"{NO_DEV_READER} leaves the cells no dev corpus, but {' and '.join(needs)} "
                                      "(give dev_size: a sample of the dev file)")

    def _check_tuned_as(self) -> None:
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


def _no_dev_key(overrides: Dict[str, Any]) -> Optional[str]:
    """The key of `overrides` that makes the dev corpus NoDev.v1, if one does."""
    for key, value in overrides.items():
        if (key == "corpora.dev" and isinstance(value, dict) and value.get("@readers") == NO_DEV_READER) or \
                (key == "corpora.dev.@readers" and value == NO_DEV_READER):
            return key
    return None


def _setting_of(value_key: str) -> str:
    return next(s for s, k in SETTINGS.items() if k == value_key)
