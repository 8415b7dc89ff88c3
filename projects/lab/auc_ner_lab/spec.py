"""Study specs: a YAML grid of corpora x methods x setting values x partitions, expanded to cells.

A cell is one training run: a named method (``configs/methods/<name>.cfg``) assembled onto the
base of the spec's encoder (``configs/base_<encoder>.cfg``), plus config overrides. Its
training set is the override of ``[corpora.train]`` built by
`auc_ner_lab.sets.training_set_config`, so every method of a partition trains on
the same sampled sentences and differences are paired.
Each cell has a stable id (readable fields plus a hash of the method, base and overrides) under
which the runner records it and by which a rerun skips what is done. A spec with a ``tune:``
block adds tuning trials (cells too, see `study/tuning.py` for the protocol) whose dev scores
choose the values its reported cells train with.
"""
import hashlib
import json
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any, Dict, List, Optional, Sequence

import yaml
from spacy.util import load_config
from thinc.api import Config

from .corpora import SPLITS
from spacy_auc_ner.data.files import PathLike
from spacy_auc_ner.pipeline.scoring import METRICS
from .sets import dev_set_config, training_set_config
from spacy_auc_ner.methods import DEFAULT_CONFIGS_DIR, ENCODERS, MethodError, assemble, method_path
from .training_extras import POOL_STEPS, augmented_block, config_augment, hashable, parse_extras
from .tuning import TUNE_SEED_OFFSET, TuneSpec, parse_tune, point_label, value_text


# setting -> the spec key holding its values (None: the values are the sizes themselves)
SETTINGS: Dict[str, Optional[str]] = {
    "lowres": None,
    "imbalance": "shares",
    "missing": "mask_p",
    "resampling": "resamplers",
}
# how a setting's value is named in cell ids and results
VALUE_NAMES = {"lowres": None, "imbalance": "share", "missing": "mask_p", "resampling": "resampler"}
_TOP_KEYS = {
    "name", "description", "setting", "corpora", "corpora_dir", "configs_dir", "methods",
    "sizes", "partitions", "seed", "overrides", "gpu_id", "runner", "dev_size", "encoder",
    "shares", "mask_p", "resamplers", "notes", "tune", "metric", "baseline",
}
# the score a study's tables show unless its spec names another (`metric:`)
DEFAULT_METRIC = "ents_seqeval_micro_f"
# what its reports pair every result with unless its spec says (`baseline:`, see Baseline)
DEFAULT_BASELINE = "ce"
_METHOD_KEYS = {"name", "config", "base", "overrides", "description", "augment", "pretrain", "self_train"}
_CORPUS_KEYS = {"train", "dev", "test", "overrides"}


@dataclass(frozen=True)
class Baseline:
    """What each result is paired with: `Baseline.parse("ce")` the method ce at the same corpus,
    size and value; `Baseline.parse("resampler=none")` the same method at the value none of the
    setting whose values are named resampler (study/spec.py VALUE_NAMES)."""

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

    def is_baseline(self, r: "MethodResult") -> bool:
        if self.method is not None:
            return r.method == self.method
        return VALUE_NAMES.get(r.setting) == self.value_name and value_text(r.value) == self.value

    def coordinates(self, r: "MethodResult") -> Optional[tuple]:
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


@dataclass
class MethodSpec:
    """A method of a study: `config` is a method file assembled onto `base_config`, or, when
    `base_config` is None, a full training config of the user's. `extras`: augmentation,
    pretraining, self-training (`study/training_extras.py`)."""

    name: str
    config: str
    overrides: Dict[str, Any] = field(default_factory=dict)
    base_config: Optional[str] = None
    extras: Dict[str, Any] = field(default_factory=dict)


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
    id: str = ""
    # a tuning trial: {"partition": t, "point": {config key: value}} (its `partition` is None)
    tuning: Optional[Dict[str, Any]] = None
    # a reported cell of a tuned study: the grid points, the ids of their trials and the
    # selection metric; the runner adds "chosen" when it merges the chosen point
    selection: Optional[Dict[str, Any]] = None
    # the method's training extras (augment, pretrain, self_train; see study/training_extras.py)
    extras: Optional[Dict[str, Any]] = None

    def __post_init__(self):
        if not self.id:
            self.id = cell_id(self)

    def describe(self) -> Dict[str, Any]:
        """The fields a results row carries to identify the cell (a tuning trial's row also
        has ``tuning``, a tuned reported cell's row ``tuned``: the chosen point and its dev score)."""
        row = {
            "cell_id": self.id,
            "study": self.study,
            "corpus": self.corpus,
            "method": self.method,
            "setting": self.setting,
            "size": self.size,
            "value": self.value,
            "partition": self.partition,
            "seed": self.seed,
            "encoder": encoder_of(self.base_config),
        }
        if self.tuning is not None:
            row["tuning"] = self.tuning
        if self.selection is not None and "chosen" in self.selection:
            row["tuned"] = self.selection["chosen"]
        if self.extras:
            row["extras"] = sorted(self.extras)
        return row

    def training_config(self) -> Config:
        """The cell's full training config: its method assembled onto its base (or its own
        full config), with the cell's overrides; not interpolated."""
        if self.base_config is None:
            return load_config(self.config, overrides=self.overrides, interpolate=False)
        return assemble(self.base_config, self.config, self.overrides)

    def to_dict(self) -> Dict[str, Any]:
        return asdict(self)


# config files renamed after rows were trained from them -> the name their ids hash, so that
# committed rows keep matching their cells (lowres_spacy_ner.cfg was lowres_best.cfg until the
# package's head took that name on 2026-11-24; today's lowres_best.cfg hashes another name, so
# that its cells never match the spaCy-ner rows)
ID_CONFIG_NAMES = {"lowres_spacy_ner.cfg": "lowres_best.cfg", "lowres_best.cfg": "lowres_best.cfg (bilstm_crf, 2026-11-24)"}


def cell_id(cell: Cell) -> str:
    """Readable fields plus a hash of what the run trains (method or config file name, base
    config name, overrides).

    Paths are left out so that moving the corpora or configs does not invalidate results;
    changing an override or the encoder does, so that stale results are never mistaken for new
    ones (and rows written before methods had their own files, under other keys, never match).
    A tuned reported cell's hash covers its grid and selection metric (not the chosen values,
    which its trials decide); a trial's overrides hold its grid point and tuning seed.
    """
    config_name = Path(cell.config).name
    content: Dict[str, Any] = {
        "method_config": ID_CONFIG_NAMES.get(config_name, config_name),
        "base_config": Path(cell.base_config).name if cell.base_config else None,
        "overrides": cell.overrides,
    }
    if cell.extras:  # only then: the ids of cells without extras stay as they were
        content["extras"] = hashable(cell.extras)
    if cell.selection is not None:
        content["tune"] = {k: cell.selection[k] for k in ("points", "partitions", "metric")}
    payload = json.dumps(content, sort_keys=True, default=str)
    digest = hashlib.sha1(payload.encode("utf8")).hexdigest()[:10]
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
    return "/".join(parts) + "#" + digest


def encoder_of(base_config: Optional[str]) -> Optional[str]:
    """The encoder family of a base config file (None for a full config of the user's)."""
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
    encoder: str = "cpu"
    gpu_id: int = -1
    runner: Optional[str] = None
    dev_size: Optional[int] = None
    description: str = ""
    source: str = "<spec>"
    tune: Optional[TuneSpec] = None
    metric: str = DEFAULT_METRIC
    baseline: str = DEFAULT_BASELINE

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
        overrides = {  # the method's own keys over the spec's shared ones
            **self.overrides,
            **method.overrides,
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
        )

    def _tuning_trials(self) -> List["Cell"]:
        """Per corpus x size x value x method: every grid point on every tuning partition."""
        assert self.tune is not None
        out = []
        for corpus, paths in self.corpora.items():
            for size in self.sizes:
                for value in self.values:
                    for method in self.methods:
                        for t, seed in enumerate(self.tune.seeds(self.seed)):
                            for point in self.tune.points():
                                tuning = {"partition": t, "point": point}
                                out.append(self._cell(corpus, paths, size, value, method, None, seed, tuning))
        return out

    def _with_selection(self, cell: "Cell") -> "Cell":
        """A reported cell that trains with the grid point its group's trials choose."""
        assert self.tune is not None
        points = self.tune.points()
        trials = [
            [
                self._cell(
                    cell.corpus, self.corpora[cell.corpus], cell.size, cell.value,
                    self._method(cell.method), None, seed, {"partition": t, "point": point},
                ).id
                for t, seed in enumerate(self.tune.seeds(self.seed))
            ]
            for point in points
        ]
        selection = {"points": points, "partitions": self.tune.partitions, "metric": self.tune.metric, "trials": trials}
        return Cell(**{**cell.to_dict(), "id": "", "selection": selection})

    def _method(self, name: str) -> MethodSpec:
        return next(m for m in self.methods if m.name == name)

    def check_files(self) -> None:
        """Fail before any training when a config or corpus file is missing."""
        problems = []
        for method in self.methods:
            for path in filter(None, (method.config, method.base_config)):
                if not Path(path).exists():
                    problems.append(f"method {method.name!r}: config {path} not found")
        for corpus, paths in self.corpora.items():
            for split in SPLITS:
                if not Path(paths[split]).exists():
                    problems.append(f"corpus {corpus!r}: {split} file {paths[split]} not found")
        if problems:
            raise SpecError(f"{self.source}: " + "; ".join(problems))

    def check_overrides(self) -> None:
        """Fail before any training when an ``overrides`` key (the spec's, a method's or a
        corpus's) names nothing in the config it is applied to, as ``tune.grid`` keys are
        checked: spaCy would take the typo ``training.max_step`` as a new setting and train
        the config's own budget, and fail every cell on a key in an unknown section."""
        from .tuning import missing_keys

        problems, seen = [], set()
        for cell in self.cells():
            if (cell.method, cell.corpus) in seen or not all(Path(p).exists() for p in filter(None, (cell.config, cell.base_config))):
                continue
            seen.add((cell.method, cell.corpus))
            method = self._method(cell.method)
            origin = {k: f"methods.{method.name}.overrides" for k in method.overrides}
            origin.update({k: "overrides" for k in self.overrides})
            origin.update({k: f"corpora.{cell.corpus}.overrides" for k in self.corpora[cell.corpus].get("overrides", {})})
            if not origin:
                continue
            # A key that swaps a registered function (``...embed.@architectures``) is checked
            # against the config without the spec's keys; the others against the config with
            # the swaps made, as the new function's settings exist only there.
            swaps = [k for k in origin if k.rsplit(".", 1)[-1].startswith("@")]
            missing = []
            for keys, kept in ((swaps, ()), ([k for k in origin if k not in swaps], swaps)):
                if not keys:
                    continue
                overrides = {k: v for k, v in cell.overrides.items() if k not in origin or k in kept}
                config = Cell(**{**cell.to_dict(), "id": "", "overrides": overrides}).training_config()
                absent = missing_keys(config, keys)
                if absent:  # a key may restate a default the config file leaves out
                    absent = missing_keys(_filled(config), absent)
                missing.extend(absent)
            problems.extend(
                f"{origin[key]}.{key}: names nothing in the config of method {method.name!r} ({cell.config})"
                for key in missing
            )
        if problems:
            raise SpecError(f"{self.source}: " + "; ".join(dict.fromkeys(problems)))

    def check_tuning(self) -> None:
        """Fail before any training when a grid key names nothing in a method's config, as
        assembled for its cells (the method's config file with the cell's overrides).
        Methods whose config file is missing are left to `check_files`."""
        if self.tune is None:
            return
        from .tuning import grid_key_problems

        configs = {}
        for cell in self.cells():
            if cell.tuning is not None or cell.method in configs or not Path(cell.config).exists():
                continue
            base = {k: v for k, v in cell.overrides.items() if k not in self.tune.grid}
            plain = Cell(**{**cell.to_dict(), "id": "", "overrides": base, "selection": None})
            configs[cell.method] = (cell.config, _filled(plain.training_config()))
        problems = grid_key_problems(self.tune, configs)
        if problems:
            raise SpecError(f"{self.source}: " + "; ".join(problems))


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
    keep those corpora and methods (by the names the spec gives them).

    A subset of a grid (fewer sizes, partitions or corpora) has the same cell ids as in the
    whole grid, so its results count towards the whole study later.
    """
    path = Path(path)
    try:
        data = yaml.safe_load(path.read_text(encoding="utf8"))
    except FileNotFoundError:
        raise SpecError(f"{path}: study spec not found") from None
    except UnicodeDecodeError as err:
        raise SpecError(f"{path}: not a study spec (not UTF-8 text: {err.reason} at byte {err.start})") from None
    except yaml.YAMLError as err:
        raise SpecError(f"{path}: not valid YAML: {err}") from None
    if set_values and isinstance(data, dict):
        data = dict(data)
        for item in set_values:
            key, sep, raw = item.partition("=")
            if not sep or not key.strip():
                raise SpecError(f"{path}: --set {item!r} is not KEY=VALUE")
            try:
                data[key.strip()] = yaml.safe_load(raw)
            except yaml.YAMLError as err:
                raise SpecError(f"{path}: --set {item!r}: the value is not valid YAML: {err}") from None
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
        spec.methods = [m for m in spec.methods if m.name in set(only_methods)]
    return spec


def parse_spec(
    data: Any,
    *,
    source: str = "<spec>",
    corpora_dir: Optional[PathLike] = None,
    configs_dir: Optional[PathLike] = None,
    gpu_id: Optional[int] = None,
) -> StudySpec:
    def fail(msg: str):
        raise SpecError(f"{source}: {msg}")

    if not isinstance(data, dict):
        fail("a study spec is a mapping of keys (name, setting, corpora, methods, ...)")
    unknown = sorted(set(data) - _TOP_KEYS)
    if unknown:
        fail(f"unknown key(s) {', '.join(unknown)}; allowed: {', '.join(sorted(_TOP_KEYS))}")
    name = data.get("name") or Path(source).stem
    setting = data.get("setting", "lowres")
    if setting not in SETTINGS:
        fail(f"setting: {setting!r} is not one of {', '.join(SETTINGS)}")

    corpora_dir = Path(corpora_dir if corpora_dir is not None else data.get("corpora_dir", "corpus"))
    configs_dir = Path(configs_dir if configs_dir is not None else data.get("configs_dir", DEFAULT_CONFIGS_DIR))
    corpora = _parse_corpora(data.get("corpora"), corpora_dir, fail)
    encoder = data.get("encoder", "cpu")
    if encoder not in ENCODERS:
        fail(f"encoder: {encoder!r} is not one of {', '.join(ENCODERS)} (the bases {', '.join(ENCODERS.values())} of configs_dir)")
    methods = _parse_methods(data.get("methods"), configs_dir, encoder, fail)
    for method in methods:
        steps = sorted(set(method.extras) & set(POOL_STEPS))
        if steps and setting != "lowres":
            fail(f"methods ({method.name}): {' and '.join(steps)} take their unlabeled pool from the rest of a lowres draw; the {setting} setting has none")

    sizes = data.get("sizes")
    if sizes is None:
        if setting in ("lowres", "imbalance"):
            fail(f"sizes: a {setting} study needs a list of training-set sizes")
        sizes = [None]
    sizes = _as_list(sizes, "sizes", fail)
    for s in sizes:
        if s is not None and (not isinstance(s, int) or isinstance(s, bool) or s < 1):
            fail(f"sizes: {s!r} is not a positive whole number of sentences")
    _check_unique(sizes, "sizes", fail)

    value_key = SETTINGS[setting]
    if value_key is None:
        values: List[Any] = [None]
    else:
        if data.get(value_key) is None:
            fail(f"{value_key}: a {setting} study needs a list of {value_key}")
        values = _as_list(data[value_key], value_key, fail)
        for v in values:
            if setting in ("imbalance", "missing"):
                if isinstance(v, bool) or not isinstance(v, (int, float)) or not 0 <= v <= 1:
                    fail(f"{value_key}: {v!r} is not a fraction between 0 and 1 (write 2% as 0.02)")
            elif not isinstance(v, str):
                fail(f"{value_key}: {v!r} is not a resampling method name (or 'none')")
        values = [float(v) if setting in ("imbalance", "missing") else v for v in values]
        _check_unique(values, value_key, fail)
    for other in set(SETTINGS.values()) - {value_key, None}:
        if other in data:
            fail(f"{other}: only used by the {_setting_of(other)} setting, not {setting}")

    partitions = data.get("partitions", 1)
    if not isinstance(partitions, int) or isinstance(partitions, bool) or partitions < 1:
        fail(f"partitions: {partitions!r} is not a positive whole number")
    seed = data.get("seed", 0)
    if not isinstance(seed, int) or isinstance(seed, bool):
        fail(f"seed: {seed!r} is not a whole number")
    overrides = data.get("overrides") or {}
    if not isinstance(overrides, dict):
        fail("overrides: a mapping of config keys (training.max_steps: 500) is expected")
    dev_size = data.get("dev_size")
    if dev_size is not None and (not isinstance(dev_size, int) or dev_size < 1):
        fail(f"dev_size: {dev_size!r} is not a positive whole number")
    runner = data.get("runner")
    if runner is not None and (not isinstance(runner, str) or ":" not in runner):
        fail(f"runner: {runner!r} is not a 'module:function' path")
    metric = data.get("metric", DEFAULT_METRIC)
    if metric not in METRICS:
        fail(f"metric: {metric!r} is not a score; choose one of {', '.join(METRICS)}")
    baseline = _parse_baseline(data.get("baseline"), setting, [m.name for m in methods], values, fail)
    # null in a spec (or `--set gpu_id=null`) means the CPU, as -1 does for spacy train
    spec_gpu = data.get("gpu_id")
    spec_gpu = -1 if spec_gpu is None else spec_gpu
    if not isinstance(spec_gpu, int) or isinstance(spec_gpu, bool) or spec_gpu < -1:
        fail(f"gpu_id: {spec_gpu!r} is not a GPU number (0, 1, ...) or -1 / null for the CPU")
    default_metric = data.get("metric") if isinstance(data.get("metric"), str) else None
    tune = parse_tune(data.get("tune"), fail, default_metric=default_metric)
    if tune is not None and partitions > TUNE_SEED_OFFSET:
        fail(f"partitions: at most {TUNE_SEED_OFFSET} in a tuned study (tuning partitions use seeds from seed + {TUNE_SEED_OFFSET})")
    return StudySpec(
        name=str(name),
        setting=setting,
        corpora=corpora,
        methods=methods,
        sizes=sizes,
        values=values,
        partitions=partitions,
        seed=seed,
        overrides=dict(overrides),
        encoder=encoder,
        gpu_id=int(gpu_id if gpu_id is not None else spec_gpu),
        runner=runner,
        dev_size=dev_size,
        description=str(data.get("description", "")),
        metric=metric,
        baseline=baseline,
        source=source,
        tune=tune,
    )


def _parse_baseline(value: Any, setting: str, methods: List[str], values: List[Any], fail) -> str:
    """`baseline:` a method of the spec (its reports pair every method with it), or
    VALUE_NAME=VALUE (each method paired with itself at that value, e.g. resampler=none)."""
    if value is None:
        return DEFAULT_BASELINE
    if not isinstance(value, str) or not value.strip():
        fail(f"baseline: {value!r} is not a method name or {VALUE_NAMES[setting] or 'VALUE_NAME'}=VALUE")
    base = Baseline.parse(value)
    if base.method is not None:
        if base.method not in methods:
            fail(f"baseline: {value!r} is not a method of this spec ({', '.join(methods)})")
        return value
    if VALUE_NAMES[setting] is None:
        fail(f"baseline: {value!r} names a value, but a {setting} study has none; name a method")
    if base.value_name != VALUE_NAMES[setting]:
        fail(f"baseline: {value!r}: the values of a {setting} study are named {VALUE_NAMES[setting]}, not {base.value_name}")
    known = [value_text(v) for v in values]
    if base.value not in known:
        fail(f"baseline: {value!r}: {base.value} is not one of the spec's {SETTINGS[setting]} ({', '.join(known)})")
    return str(base)


def _setting_of(value_key: str) -> str:
    return next(s for s, k in SETTINGS.items() if k == value_key)


def _as_list(value: Any, key: str, fail) -> list:
    if not isinstance(value, list) or not value:
        fail(f"{key}: a non-empty list is expected, not {value!r}")
    return list(value)


def _check_unique(values: Sequence, key: str, fail) -> None:
    seen = set()
    for v in values:
        if v in seen:
            fail(f"{key}: {v!r} is listed twice")
        seen.add(v)


def _parse_corpora(raw: Any, corpora_dir: Path, fail) -> Dict[str, Dict[str, Any]]:
    if raw is None:
        fail("corpora: name at least one corpus (its files are <corpora_dir>/<name>/{train,dev,test}.spacy)")
    if isinstance(raw, str):
        raw = [raw]
    if isinstance(raw, list):
        raw = {name: {} for name in raw}
    if not isinstance(raw, dict) or not raw:
        fail("corpora: a list of corpus names or a mapping name -> {train, dev, test, overrides}")
    out = {}
    for name, entry in raw.items():
        entry = entry or {}
        if not isinstance(entry, dict):
            fail(f"corpora.{name}: a mapping with train/dev/test paths and overrides is expected")
        unknown = sorted(set(entry) - _CORPUS_KEYS)
        if unknown:
            fail(f"corpora.{name}: unknown key(s) {', '.join(unknown)}; allowed: {', '.join(sorted(_CORPUS_KEYS))}")
        paths: Dict[str, Any] = {
            split: str(entry.get(split) or corpora_dir / str(name) / f"{split}.spacy") for split in SPLITS
        }
        overrides = entry.get("overrides") or {}
        if not isinstance(overrides, dict):
            fail(f"corpora.{name}.overrides: a mapping of config keys is expected")
        paths["overrides"] = dict(overrides)
        out[str(name)] = paths
    return out


def _own_augment(config_file: str) -> Optional[Dict[str, Any]]:
    """The augmentation a method's own config file applies to its training corpus (a study
    replaces the corpus by its draw and puts the draw inside the same wrapper)."""
    if not Path(config_file).is_file():
        return None  # check_files reports it
    return config_augment(load_config(config_file, interpolate=False))


def _parse_methods(raw: Any, configs_dir: Path, encoder: str, fail) -> List[MethodSpec]:
    """Methods by name (a file of configs_dir/methods/, on the spec's encoder), by a named
    `base` method with the study's own `overrides`, or by a full `config` file of the user's."""
    if not isinstance(raw, list) or not raw:
        fail("methods: a non-empty list of method names or {name, base|config, overrides} entries is expected")
    out: List[MethodSpec] = []
    for i, entry in enumerate(raw):
        if isinstance(entry, str):
            entry = {"name": entry}
        if not isinstance(entry, dict) or "name" not in entry:
            fail(f"methods[{i}]: a method name or a mapping with a 'name' is expected, not {entry!r}")
        unknown = sorted(set(entry) - _METHOD_KEYS)
        if unknown:
            fail(f"methods[{i}] ({entry['name']}): unknown key(s) {', '.join(unknown)}; allowed: {', '.join(sorted(_METHOD_KEYS))}")
        name = str(entry["name"])
        overrides = entry.get("overrides") or {}
        if not isinstance(overrides, dict):
            fail(f"methods[{i}] ({name}).overrides: a mapping of config keys is expected")
        if "config" in entry and "base" in entry:
            fail(f"methods[{i}] ({name}): give either 'config' (a full config file) or 'base' (a method), not both")
        if "config" in entry:
            config_file, base_config = str(entry["config"]), None
        else:
            try:
                config_file = str(method_path(str(entry.get("base", name)), configs_dir))
            except MethodError as err:
                fail(f"methods[{i}]: {err} (or define it with 'config: <file.cfg>')")
            base_config = str(configs_dir / ENCODERS[encoder])
        own = None if "augment" in entry else _own_augment(config_file)
        extras = parse_extras(entry, f"methods[{i}] ({name})", configs_dir, own, fail)
        out.append(MethodSpec(name, config_file, dict(overrides), base_config=base_config, extras=extras))
    _check_unique([m.name for m in out], "methods", fail)
    return out
