"""A study spec resolved (`spec.parse_spec`): its corpora's files, its methods' config files
and extras, and the grid they expand to, cells (`cells.Cell`) partition-major with a tuned
study's trials first; and the checks that refuse a spec before any training (missing files,
overrides and grid keys that name nothing)."""
import itertools
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Dict, List, Optional, Sequence

from thinc.api import Config

from .cells import Cell, config_files
from .corpora import SPLITS
from .sets import dev_set_config, training_set_config
from .settings import DEFAULT_BASELINE, DEFAULT_METRIC
from .spec_file import SpecError
from .training_extras import augmented_block
from .tuning import TuneSpec


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
        grid = itertools.product(range(self.partitions), self.corpora, self.sizes, self.values, self.methods)
        out = [self._cell(corpus, size, value, method, partition, self.seed + partition)
               for partition, corpus, size, value, method in grid]
        if self.tune is None:
            return out
        return self._tuning_trials() + [self._with_selection(cell) for cell in out]

    def _cell(self, corpus, size, value, method, partition, seed, tuning=None) -> "Cell":
        paths = self.corpora[corpus]
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
            study=self.name, corpus=corpus, method=method.name, setting=self.setting, size=size, value=value,
            partition=partition, seed=seed, config=method.config, overrides=overrides,
            train=str(paths["train"]), dev=str(paths["dev"]), test=str(paths["test"]),
            gpu_id=self.gpu_id, base_config=method.base_config, tuning=tuning, extras=dict(method.extras) or None,
            layers=list(method.layers), runner=method.runner, score_on=self.score_on,
            pretrain_text=method.pretrain_text,
        )

    def _trials(self, corpus, size, value, method) -> List[List["Cell"]]:
        """A group's tuning trials of `method`: per grid point, one per tuning partition."""
        assert self.tune is not None
        return [[self._cell(corpus, size, value, method, None, seed, {"partition": t, "point": point})
                 for t, seed in enumerate(self.tune.seeds(self.seed))] for point in self.tune.points()]

    def _tuning_trials(self) -> List["Cell"]:
        """Per corpus x size x value x method with trials of its own (`tuning_methods`): every
        grid point on every tuning partition, partition by partition."""
        groups = itertools.product(self.corpora, self.sizes, self.values, self.tuning_methods())
        return [trial for group in groups for by_partition in zip(*self._trials(*group)) for trial in by_partition]

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
        grid = self._trials(cell.corpus, cell.size, cell.value, chooser)
        trials = [[trial.key for trial in by_point] for by_point in grid]
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
            problems += [f"{origin[key]}.{key}: names nothing in the config of method {method.name!r} ({cell.config})"
                         for key in missing]
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
