"""A study's cells: a cell is one training run, self-contained so that it can be shipped to a
worker: a named method (``configs/methods/<name>.cfg``) assembled onto the base of the spec's
encoder (``configs/base_<encoder>.cfg``), or a recipe (``configs/recipes/<name>.cfg`` on the CPU
base after the partials every CPU recipe shares, or on the transformer base for a
``<name>_trf``), plus config overrides. A cell's `key` says what it trains (`cell_key`: its
training config as assembled, not the method's or a file's name), its `id` is a readable label
for logs and lists."""
import hashlib
import json
import os
from dataclasses import dataclass, field, replace
from functools import lru_cache
from pathlib import Path
from typing import Any, Dict, List, Optional, Sequence

from thinc.api import Config

from spacy_auc_ner.api import ENCODERS, DataError, MethodError, PathLike, assemble, load_training_config

from .settings import VALUE_NAMES
from .training_extras import hashable
from .tuning import point_label, value_text


def config_files(base_config: Optional[str], layers: Sequence[str], config: str) -> List[str]:
    """The config files a method or cell assembles from: its base, its layers, its own."""
    return [*filter(None, [base_config]), *layers, config]


# the fields of a cell that its rows carry as they are (`Cell.describe`)
_DESCRIBED = ("study", "corpus", "method", "setting", "size", "value", "partition", "seed")


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
    # the method's own cell function ('module:function'; None: spacy train, `execution.run_cell`)
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
        return replace(self, key="", id="", **changes)

    def describe(self) -> Dict[str, Any]:
        """The fields a results row carries to identify the cell (a tuning trial's row also
        has ``tuning``, a tuned reported cell's row ``tuned``: the chosen point and its dev score)."""
        row = {"key": self.key, "cell_id": self.id, **{name: getattr(self, name) for name in _DESCRIBED},
               "encoder": encoder_of(self.base_config if self.base_config is not None else self.config)}
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
        """The split the cell is scored on: its test file, or None for a tuning trial and a cell
        of a dev-only study."""
        return None if self.tuning is not None or self.score_on == "dev" else self.test

    def training_config(self) -> Config:
        """The cell's training config, with its overrides; not interpolated."""
        return assembled_config(self.base_config, [*self.layers, self.config], self.overrides)

    def files(self) -> List[str]:
        return config_files(self.base_config, self.layers, self.config)


def assembled_config(base_config: Optional[PathLike], partials: Sequence[PathLike], overrides: Optional[Dict[str, Any]] = None) -> Config:
    """Partial configs assembled onto their base config, or a full config file of the user's (the
    one partial) when `base_config` is None, with `overrides`; not interpolated."""
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
    """What the cell trains, hashed: its config as assembled (`config_digest`) and what the cell
    adds (`cell_additions`). No name counts, nor how the config is written: a method, a config
    file or a base renamed or restructured keeps the cell's rows exactly when what it trains is
    unchanged; any other change is another cell, so rows trained before are never read as today's."""
    content = {"config": config_digest(cell.base_config, [*cell.layers, cell.config]), **cell_additions(cell)}
    return hashlib.sha1(json.dumps(content, sort_keys=True, default=str).encode("utf8")).hexdigest()[:16]


def cell_additions(cell: Cell) -> Dict[str, Any]:
    """What a cell adds to its config, as its key hashes it: its overrides (draw and seed among
    them), its extras, its draw's coordinates and, for a tuned reported cell, its grid and
    selection metric (not the chosen values, which its trials decide; a cell tuned as another
    method also hashes that method's trials' keys). Paths are left out, so that moving the
    corpora or the configs does not lose results."""
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
    """A digest of the config `partials` assemble to on `base_config` (`assembled_config`), parsed
    (comments, layout and key order do not count) and without `CELL_PATHS`; cached per set of
    files as they are now."""
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
    # the file as it is now (a cache key): which file (absolute path, device and inode: cheaper
    # than resolving links, which every cell of every spec did), when and how large
    return (os.path.abspath(path), stat.st_dev, stat.st_ino, stat.st_mtime_ns, stat.st_size)


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
    """The encoder family of a base config file (None for a full config of the user's)."""
    if base_config is None:
        return None
    return next((enc for enc, name in ENCODERS.items() if name == Path(base_config).name), None)
