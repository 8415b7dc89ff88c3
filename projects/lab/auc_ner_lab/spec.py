"""Study specs: a YAML grid of corpora x methods x setting values x partitions, read and resolved.

`load_spec` reads a spec file (with ``--set``, ``--corpus`` and ``--method`` applied),
`parse_spec` validates its data (`spec_file.SpecFile`) and resolves it into a
`study_spec.StudySpec`, which expands to cells (`cells.py`).

Every method of a partition trains on the same sampled sentences (`sets.training_set_config`),
so differences are paired. A ``tune:`` block adds tuning trials (`tuning.py`) whose dev scores
choose the values the reported cells train with; a method with ``tuned_as: <other method>``
trains with the values the other method's trials choose (an ablation changes one part and
keeps the rest, its learn rate included).

A method may also be a Python function (``runner: module:function``, e.g. the Hugging Face peer
`hf_peer.run_cell`): its cells are built as any other (the config is then the spec's base
alone unless the entry names one, with the cell's draw, dev sample, budget and grid point as
overrides, which the function reads), and the function trains them instead of spacy train.
"""
from pathlib import Path
from typing import Any, List, Optional, Sequence

import srsly

from spacy_auc_ner.api import (
    DEFAULT_CONFIGS_DIR,
    ENCODERS,
    MethodError,
    PathLike,
    method_path,
    recipe_files,
)

from .baseline import Baseline
from .cells import Cell, assembled_config, config_files, encoder_of
from .corpora import SPLITS
from .settings import CONFIG_RUNNERS, DEFAULT_BASELINE, DEFAULT_METRIC
from .spec_file import MethodEntry, SpecError, SpecFile
from .study_spec import MethodSpec, StudySpec
from .training_extras import config_augment, resolve_extras
from .validation import At, key_path, validate


def load_spec(
    path: PathLike, *, corpora_dir: Optional[PathLike] = None, configs_dir: Optional[PathLike] = None,
    gpu_id: Optional[int] = None, set_values: Sequence[str] = (), only_corpora: Sequence[str] = (),
    only_methods: Sequence[str] = (),
) -> StudySpec:
    """Read a YAML spec; `corpora_dir`, `configs_dir` and `gpu_id` override the spec's,
    `set_values` ("key=<YAML value>") replace top-level keys, `only_corpora` and `only_methods`
    keep those corpora and methods (a kept method tuned_as one left out keeps that one's
    trials). A subset of a grid has the same cells as the whole grid, so its results count
    towards the whole study later."""
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
        data, file_data = dict(data), data
        for item in set_values:
            key, sep, raw = item.partition("=")
            if not sep or not key.strip():
                raise SpecError(f"{path}: --set {item!r} is not KEY=VALUE")
            try:
                data[key.strip()] = srsly.yaml_loads(raw)
            except ValueError as err:
                raise SpecError(f"{path}: --set {item!r}: the value is not valid YAML: {' '.join(str(err).split())}") from None
        if data.get("size_overrides") is file_data.get("size_overrides"):
            _keep_size_overrides(data, file_data)
    spec = parse_spec(data, source=str(path), corpora_dir=corpora_dir, configs_dir=configs_dir, gpu_id=gpu_id)
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


def _keep_size_overrides(data: dict, file_data: dict) -> None:
    """`--set sizes=...` runs part of a grid with the same cells: the file's size_overrides keep
    the entries of the new sizes and drop those of the file's own sizes the new list leaves out
    (any other entry is checked, and refused, as the file's)."""
    overrides, sizes, own = file_data.get("size_overrides"), data.get("sizes"), file_data.get("sizes")
    if isinstance(overrides, dict) and isinstance(sizes, list) and isinstance(own, list):
        data["size_overrides"] = {size: keys for size, keys in overrides.items() if size in sizes or size not in own}


def parse_spec(
    data: Any, *, source: str = "<spec>", corpora_dir: Optional[PathLike] = None,
    configs_dir: Optional[PathLike] = None, gpu_id: Optional[int] = None,
) -> StudySpec:
    """A spec's data validated (`SpecFile`) and resolved into a `StudySpec`; `corpora_dir`,
    `configs_dir` and `gpu_id` override the data's."""
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
    tune = None if spec.tune is None else spec.tune.resolve(default_metric=spec.metric)
    return StudySpec(
        name=spec.name or Path(source).stem, setting=spec.setting, corpora=corpora, methods=methods,
        sizes=spec.sizes if spec.sizes is not None else [None],
        values=[float(v) if spec.setting in ("imbalance", "missing") else v for v in spec.values()],
        partitions=spec.partitions, seed=spec.seed, overrides=dict(spec.overrides),
        size_overrides={size: dict(keys) for size, keys in spec.size_overrides.items()},
        score_on=spec.score_on, encoder=spec.encoder,
        gpu_id=gpu_id if gpu_id is not None else (-1 if spec.gpu_id is None else spec.gpu_id),
        runner=spec.runner, dev_size=spec.dev_size, description=spec.description,
        metric=spec.metric or DEFAULT_METRIC,
        baseline=DEFAULT_BASELINE if spec.baseline is None else str(Baseline.parse(spec.baseline)),
        source=source, tune=tune,
    )


def _resolve_method(i: int, entry: MethodEntry, configs_dir: Path, encoder: str, data: Any, source: str) -> MethodSpec:
    """A method entry's config files and extras (the augmentation of its assembled config unless
    the entry says)."""
    where = key_path(("methods", i), data)
    layers: List[str] = []
    try:
        if entry.config is not None:
            config_file, base_config = entry.config, None
        elif entry.runner is not None and entry.base is None and entry.runner not in CONFIG_RUNNERS:  # a function reads the base's shared settings
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


def only_cells(cells: Sequence[Cell], wanted: Sequence[str]) -> List[Cell]:
    """Of `cells`, those that `wanted` names by id or key, in the study's order (``study run
    --cell``); all of them when `wanted` is empty. A name that is no cell's is refused."""
    if not wanted:
        return list(cells)
    names = set(wanted)
    unknown = sorted(names - {c.id for c in cells} - {c.key for c in cells})
    if unknown:
        raise SpecError(f"--cell: {', '.join(unknown[:3])}{' ...' if len(unknown) > 3 else ''} is no cell of the study "
                        "(its ids: study run --dry-run)")
    return [c for c in cells if c.id in names or c.key in names]
