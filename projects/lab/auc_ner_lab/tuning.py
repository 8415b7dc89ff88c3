"""Tuning inside studies: a small grid of config overrides, chosen by dev score on tuning
partitions that are never reported.

The protocol, per corpus x setting value x size x method (a *group*):

1. every grid point is trained on each of ``partitions`` tuning partitions, drawn with seeds
   ``seed + 10000 + t``, which no reported partition uses (``seed + p``, p < 10000), and
   scored on the dev split only (a trial's row has no test scores at all);
2. the point with the best mean dev score over the tuning partitions is chosen (ties: the first
   in grid order); a point is a candidate only when all its trials finished;
3. the reported partitions are trained once each with the chosen values.

A method with ``tuned_as: <other method>`` skips step 1 and 2: its reported partitions train
with the point the other method's trials chose in the same group, so that an ablation of that
method changes one part and keeps its learn rate (its key hashes those trials' keys).

Why not nested selection (every reported cell tries every point and keeps its dev-best): this
costs ``points x partitions + reported`` trainings per group instead of ``points x reported``,
every method gets the same trials, and the reported scores come from training sets that took
no part in the selection, so the max over noisy dev scores never flatters a reported number.
Its cost: one choice per group from a small tuning sample, alike for every method.

Selection metric: ``metric`` of the ``tune:`` block (default: the spec's, else ``ents_f``),
read from the trial's ``scores.dev_scores``; where a run lacks it, ``ents_f`` for the group.
"""
import itertools
import math
from dataclasses import asdict, dataclass, replace
from typing import Annotated, Any, Callable, Dict, List, Mapping, Optional, Sequence, Tuple

from pydantic import BeforeValidator, Field, field_validator

from spacy_auc_ner.api import unknown_override_keys  # the one check of a dotted key, the library's (as `spacy-auc-ner recipe` checks its overrides)

from .validation import Section, expect, positive

TUNE_SEED_OFFSET = 10_000
# the dev score a tuned cell selects its grid point by (settings.DEFAULT_METRIC is the reported
# test score: another job, another name), and the one used when a run lacks the chosen score
DEFAULT_SELECTION_METRIC = "ents_f"
FALLBACK_METRIC = "ents_f"
# keys a cell sets itself: tuning them would select on the training sample or the seed
_RESERVED = ("corpora", "system.seed", "paths.train", "paths.dev", "training.seed")


class TuningError(ValueError):
    """No grid point can be chosen (every candidate has a failed or missing trial)."""


@dataclass(frozen=True)
class TuneSpec:
    """The ``tune:`` block of a study spec."""

    grid: Dict[str, List[Any]]
    partitions: int = 1
    metric: str = DEFAULT_SELECTION_METRIC

    def points(self) -> List[Dict[str, Any]]:
        """Every combination of the grid's values, the first key varying slowest."""
        keys = list(self.grid)
        return [dict(zip(keys, values)) for values in itertools.product(*(self.grid[k] for k in keys))]

    def seeds(self, base_seed: int) -> List[int]:
        return [base_seed + TUNE_SEED_OFFSET + t for t in range(self.partitions)]


def _grid_key(key: Any) -> Any:
    if not isinstance(key, str) or "." not in key or not all(key.split(".")):
        raise ValueError("a dotted config key (section.setting, e.g. training.dropout) is expected")
    if any(key == r or key.startswith(r + ".") for r in _RESERVED):
        raise ValueError("set by each cell (training sample and seed); it cannot be tuned")
    return key


def _grid_values(values: Any) -> Any:
    if not isinstance(values, list) or not values:
        raise ValueError(f"a non-empty list of values is expected, not {values!r}")
    for i, v in enumerate(values):
        if isinstance(v, (dict, list)):
            raise ValueError(f"{v!r} is not a single value")
        if isinstance(v, float) and not math.isfinite(v):
            raise ValueError(f"{v!r} is not a finite number")
        if any(v == s and type(v) is type(s) for s in values[:i]):
            raise ValueError(f"{v!r} is listed twice")
    return values


_grid = expect(lambda grid: isinstance(grid, dict) and grid, "a non-empty mapping of config keys to lists of "
               "values is expected, e.g. {{training.optimizer.learn_rate: [0.001, 0.003]}}, not {value}")


class TuneBlock(Section):
    """The ``tune:`` block of a study spec, as its file holds it."""

    grid: Annotated[Dict[Annotated[str, BeforeValidator(_grid_key)], Annotated[List[Any], BeforeValidator(_grid_values)]],
                    _grid] = Field(None, validate_default=True)
    partitions: Annotated[int, positive()] = 1
    metric: Optional[str] = None

    @classmethod
    def given(cls, value: Any) -> Any:
        if value is not None and not isinstance(value, dict):
            raise ValueError("a mapping {grid: {config.key: [values]}, partitions: 1} is expected")
        return value

    @field_validator("metric")
    @classmethod
    def _known(cls, metric: Optional[str]) -> Optional[str]:
        if metric is not None and metric not in known_metrics():
            raise ValueError(f"unknown metric {metric!r}; known: {', '.join(known_metrics())}")
        return metric

    def resolve(self, *, default_metric: Optional[str] = None) -> TuneSpec:
        """The block as a `TuneSpec` (metric: its own, else the spec's, else ``ents_f``)."""
        return TuneSpec(dict(self.grid), self.partitions, self.metric or default_metric or DEFAULT_SELECTION_METRIC)


def known_metrics() -> List[str]:
    """The scores a dev score can be selected on: the study scorer's (``METRICS``)."""
    from spacy_auc_ner.api import METRICS

    return sorted(METRICS)


def point_label(point: Mapping[str, Any]) -> str:
    """A short readable name of a grid point for cell ids: the keys' last parts (whole keys
    where two share a last part)."""
    lasts = [k.rsplit(".", 1)[-1] for k in point]
    names = [last if lasts.count(last) == 1 else key for key, last in zip(point, lasts)]
    return ",".join(f"{n}={value_text(v)}" for n, v in zip(names, point.values()))


def value_text(value: Any) -> str:
    """A value as cell ids, reports and baselines write it: floats in %g (0.001, 0.7), the
    rest as str."""
    return f"{value:g}" if isinstance(value, float) else str(value)


# ---- checks against the methods' configs ------------------------------------------------------
def grid_key_problems(tune: TuneSpec, method_configs: Mapping[str, Tuple[str, Mapping[str, Any]]]) -> List[str]:
    """One message per grid key that names nothing in a method's assembled config
    (`method_configs`: method -> (config file, the config with the cell's overrides))."""
    problems = []
    for method, (path, config) in method_configs.items():
        pipeline = list((config.get("nlp") or {}).get("pipeline") or [])
        for key in unknown_override_keys(config, {key: values[0] for key, values in tune.grid.items()}):
            problems.append(
                f"tune.grid.{key}: names nothing in the config of method {method!r} "
                f"({path}, pipeline {pipeline}); every method gets the grid, so use keys all "
                f"methods share (e.g. training.optimizer.learn_rate, training.dropout)"
            )
    return problems


# ---- selection ---------------------------------------------------------------------------------
@dataclass(frozen=True)
class Choice:
    point: Dict[str, Any]
    dev_score: float  # mean over the tuning partitions
    metric: str  # the metric selected on (the requested one, or ents_f where runs lack it)
    candidates: int  # grid points whose trials all finished
    trials: int  # trials of the group (grid points x tuning partitions)


def dev_score(row: Mapping[str, Any], metric: str) -> Optional[float]:
    """A finished run's dev score of `metric` (None when it lacks it or did not finish)."""
    if row.get("status") != "ok":
        return None
    scores = row.get("scores") or {}
    value = (scores.get("dev_scores") or {}).get(metric)
    if value is None and metric == FALLBACK_METRIC:
        value = scores.get("dev_score")  # early stopping's ents_f, in rows without dev_scores
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value):
        return None
    return float(value)


def choose(points: Sequence[Mapping[str, Any]], trial_rows: Sequence[Sequence[Optional[Mapping[str, Any]]]],
           metric: str) -> Choice:
    """The grid point with the best mean dev score; `trial_rows[i]` holds point i's rows, one
    per tuning partition (None: no row)."""
    finished = [r for rows in trial_rows for r in rows if r is not None and r.get("status") == "ok"]
    used = metric if finished and all(dev_score(r, metric) is not None for r in finished) else FALLBACK_METRIC
    best: Optional[Tuple[int, float]] = None
    candidates = 0
    for i, rows in enumerate(trial_rows):
        scores = [dev_score(r, used) if r is not None else None for r in rows]
        if not scores or any(s is None for s in scores):
            continue
        candidates += 1
        mean = sum(scores) / len(scores)
        if best is None or mean > best[1]:
            best = (i, mean)
    n_trials = sum(len(rows) for rows in trial_rows)
    if best is None:
        failed = sum(1 for rows in trial_rows for r in rows if r is None or dev_score(r, used) is None)
        raise TuningError(
            f"no grid point has a dev {used} on every tuning partition ({failed} of {n_trials} trials "
            f"failed or missing); rerun to retry them"
        )
    return Choice(dict(points[best[0]]), best[1], used, candidates, n_trials)


def resolve(cell, latest: Mapping[str, Mapping[str, Any]]):
    """The reported `cell` with the chosen grid point merged into its overrides and the choice
    recorded (its key and id unchanged), or TuningError; `latest`: the latest row per cell key."""
    selection = cell.selection
    trial_rows = [[latest.get(key) for key in keys] for keys in selection["trials"]]
    try:
        choice = choose(selection["points"], trial_rows, selection["metric"])
    except TuningError as err:  # whose trials failed: another method's, for a cell tuned as it
        if "tuned_as" not in selection:
            raise
        raise TuningError(f"tuned as {selection['tuned_as']}: {err}") from None
    tuned = {
        **asdict(choice),
        "partitions": selection["partitions"],
        # the method whose trials chose, when not the cell's own (spec key tuned_as)
        **({"tuned_as": selection["tuned_as"]} if "tuned_as" in selection else {}),
    }
    return replace(cell, overrides={**cell.overrides, **choice.point}, selection={**selection, "chosen": tuned})


def trial_keys(cell) -> List[str]:
    """The keys of the tuning trials a reported cell waits for (none for other cells)."""
    selection = getattr(cell, "selection", None)
    return [key for keys in selection["trials"] for key in keys] if selection else []


# ---- a setting chosen on the other corpora ----------------------------------------------------
def choices_leaving_out(
    corpora: Sequence[str], points: Sequence[Mapping[str, Any]],
    rows_of: Callable[[Mapping[str, Any], str], Sequence[Optional[Mapping[str, Any]]]], metric: str,
) -> Dict[str, Choice]:
    """For each of `corpora`, `choose` over `points` on `rows_of(point, held_out)`: the point's
    rows on the other corpora, in one order for every point (None: no row). So each corpus gets
    a setting chosen on corpora that are not it, as a user's corpus is."""
    return {held_out: choose(points, [rows_of(point, held_out) for point in points], metric) for held_out in corpora}


def leave_one_corpus_out(spec, latest: Mapping[str, Mapping[str, Any]]) -> Dict[str, Dict[str, Choice]]:
    """For each method of a tuned ``spec`` with trials of its own and each of its corpora, the
    grid point chosen on its trials on the other corpora (`choices_leaving_out`). ``latest``:
    the latest row per cell key of the spec's store."""
    assert spec.tune is not None, "a spec without tuning trials has nothing to choose from"
    trials = [cell for cell in spec.cells() if cell.tuning is not None]

    def rows_of(method: str):
        return lambda point, held_out: [latest.get(c.key) for c in trials
                                        if c.method == method and c.corpus != held_out and c.tuning["point"] == point]

    return {m.name: choices_leaving_out(spec.corpora, spec.tune.points(), rows_of(m.name), spec.tune.metric) for m in spec.tuning_methods()}
