"""Results rows -> one summary per corpus x setting value x size x method, over partitions.

Each summary holds the mean and Student-t confidence interval of a metric over the
partitions that succeeded, and a paired t-test against its baseline over the partitions both
succeeded on (the same training sentences, so the noise of the sample cancels). The baseline is
another method at the same coordinates (`ce`) or, in a setting with values, the same method at
one value (`resampler=none`: every resampler against no resampling).
Tuning trials are left out of the summaries (selection data, not evidence); a tuned summary
carries the grid point its group chose, and `compute` counts what every method cost, trials
included.
"""
from dataclasses import asdict, dataclass, field
from typing import Any, Callable, Dict, List, Optional, Sequence, Tuple

from .baseline import Baseline
from .settings import DEFAULT_METRIC
from .stats import PairedTest, Summary, paired_t_test, summarize
from .store import device_kind, latest_rows
from .tuning import value_text

Key = Tuple[str, str, Optional[int], Any]  # corpus, setting, size, value


def baseline_pairs(results: Sequence["MethodResult"], baseline: Optional[Baseline]) -> List[Tuple["MethodResult", "MethodResult"]]:
    """(result, its baseline's result) for every result that has one among `results`."""
    if baseline is None:
        return []
    lookup = {(r.corpus, r.setting, r.size, value_text(r.value), r.method): r for r in results}
    coords = [(r, baseline.coordinates(r)) for r in results]
    return [(r, lookup[c]) for r, c in coords if c is not None and c in lookup]


@dataclass
class MethodResult:
    corpus: str
    setting: str
    size: Optional[int]
    value: Any
    method: str
    metric: str
    scores: Dict[int, float]  # partition -> metric
    summary: Summary
    vs_baseline: Optional[PairedTest] = None
    failed: int = 0
    per_type: Dict[str, float] = field(default_factory=dict)  # mean F1 per entity type
    tuned: Optional[Dict[str, Any]] = None  # the chosen grid point, its dev score and metric
    # partition -> "CPU" or "GPU" (`store.device_kind` of its row): a pair across kinds carries
    # the numerical difference between them too
    devices: Dict[int, str] = field(default_factory=dict)

    @property
    def key(self) -> Key:
        return (self.corpus, self.setting, self.size, self.value)

    def to_dict(self) -> Dict[str, Any]:
        s, t = self.summary, self.vs_baseline
        return {
            "corpus": self.corpus, "setting": self.setting, "size": self.size, "value": self.value,
            "method": self.method, "metric": self.metric,
            "n": s.n, "mean": s.mean, "std": s.std, "ci_low": s.low, "ci_high": s.high,
            "partitions": sorted(self.scores), "failed": self.failed,
            "vs_baseline": None if t is None else {"n": t.n, "mean_diff": t.mean_diff, "t": t.t, "p_value": t.p_value},
            "per_type_f": self.per_type, "tuned": self.tuned,
        }


def crosses_devices(a: Any, b: Any, partition: int) -> bool:
    """Whether the rows of ``partition`` in results ``a`` and ``b`` trained on different device
    kinds (`MethodResult.devices`): such a pair carries the numerical difference between a GPU and
    a CPU training too. A result without ``devices`` (made by hand) counts as trained on the CPU."""
    a_kind, b_kind = ((getattr(r, "devices", None) or {}).get(partition, "CPU") for r in (a, b))
    return a_kind != b_kind


def row_scores(row: Dict[str, Any]) -> Dict[str, Any]:
    """The row's scores: on test, or on the dev sample for a cell of a dev-only study."""
    scores = row.get("scores") or {}
    return (scores.get("dev_scores") or {}) if row.get("scored_on") == "dev" else scores


def row_score(row: Dict[str, Any], metric: str) -> Optional[float]:
    """The row's score `metric` (`row_scores`), None where it has none."""
    value = row_scores(row).get(metric)
    # a boolean is no score (the store skips such rows; rows made otherwise get the same rule)
    return float(value) if isinstance(value, (int, float)) and not isinstance(value, bool) else None


def aggregate(rows: Sequence[Dict[str, Any]], *, metric: str = DEFAULT_METRIC, baseline: Optional[str] = "ce",
              confidence: float = 0.95, warn: Optional[Callable[[str], None]] = None,
              value_order: Sequence[Any] = ()) -> List[MethodResult]:
    """Summaries in a stable order: corpus, setting, size, value, then methods as first seen
    (a baseline method first; values in `value_order`, a spec's, where given); `baseline` as
    `Baseline.parse` reads it. Two cells with the same coordinates but different ids (a spec
    whose overrides changed between runs) keep the later row, with a warning. Tuning trials
    are selection data, not results: they are left out. Finished rows without the metric
    (scored before it existed) are left out, with a warning."""
    latest = [row for row in latest_rows(rows).values() if not row.get("tuning")]
    unscored = [r["cell_id"] for r in latest if r["status"] == "ok" and row_score(r, metric) is None]
    if unscored:
        if warn is not None:
            warn(f"{len(unscored)} finished cell(s) have no score {metric!r} and are left out (e.g. {unscored[0]}); rerun them to include them")
        latest = [r for r in latest if r["cell_id"] not in set(unscored)]
    seen: Dict[tuple, str] = {}
    groups: Dict[Tuple[Key, str], Dict[str, Any]] = {}
    method_order: List[str] = []
    for row in latest:
        key = (row["corpus"], row["setting"], row.get("size"), row.get("value"))
        method = row["method"]
        if method not in method_order:
            method_order.append(method)
        group = groups.setdefault((key, method), {"scores": {}, "failed": 0, "types": {}, "tuned": [], "devices": {}})
        value = row_score(row, metric) if row["status"] == "ok" else None
        if value is None:
            group["failed"] += 1
            continue
        part = int(row["partition"])
        coords = (key, method, part)
        if coords in seen and warn is not None:
            warn(f"{row['cell_id']} replaces {seen[coords]} (same cell, other overrides); pass --spec to report one spec's cells")
        seen[coords] = row["cell_id"]
        group["scores"][part], group["devices"][part] = value, device_kind(row)
        if isinstance(row.get("tuned"), dict):
            group["tuned"].append(row["tuned"])
        for ent_type, prf in ((row.get("scores") or {}).get("ents_per_type") or {}).items():
            if isinstance(prf, dict) and isinstance(prf.get("f"), (int, float)):
                group["types"].setdefault(ent_type, []).append(float(prf["f"]))
    base_spec = Baseline.parse(baseline)
    if base_spec is not None and base_spec.method in method_order:
        method_order.remove(base_spec.method)
        method_order.insert(0, base_spec.method)

    results: List[MethodResult] = []
    for (key, method), group in groups.items():
        # every partition failed: no mean at all (None, not NaN, so that nothing prints "nan")
        summary = summarize(list(group["scores"].values()), confidence) if group["scores"] else Summary(0, None, None, None)
        per_type = {t: sum(v) / len(v) for t, v in sorted(group["types"].items())}
        results.append(MethodResult(*key, method=method, metric=metric, scores=group["scores"], summary=summary,
                                    failed=group["failed"], per_type=per_type, tuned=_chosen(group["tuned"]),
                                    devices=group["devices"]))
    for r, base in baseline_pairs(results, base_spec):
        shared = sorted(set(r.scores) & set(base.scores))
        if shared:
            r.vs_baseline = paired_t_test([r.scores[p] for p in shared], [base.scores[p] for p in shared])
    rank = {value_text(v): i for i, v in enumerate(value_order)}
    results.sort(key=lambda r: (_sort_key(r.key, rank), method_order.index(r.method)))
    return results


def _chosen(tuned: Sequence[Dict[str, Any]]) -> Optional[Dict[str, Any]]:
    """The group's choice: every partition of a group trains with the same point, unless the
    trials changed between runs (then ``varies`` lists the points seen)."""
    if not tuned:
        return None
    points: List[Any] = []  # the points seen, in order (a point is a dict: not hashable)
    for t in tuned:
        if t.get("point") not in points:
            points.append(t.get("point"))
    first = dict(tuned[0])
    if len(points) > 1:
        first["varies"] = points
    return first


@dataclass
class Compute:
    """What a method cost on a corpus: trainings and their summed wall seconds (each cell's own
    time in its worker), tuning trials and reported cells apart; every recorded run counts,
    failed ones and reruns included."""

    corpus: str
    method: str
    tuning_runs: int = 0
    tuning_seconds: float = 0.0
    reported_runs: int = 0
    reported_seconds: float = 0.0

    @property
    def runs(self) -> int:
        return self.tuning_runs + self.reported_runs

    @property
    def seconds(self) -> float:
        return self.tuning_seconds + self.reported_seconds

    def to_dict(self) -> Dict[str, Any]:
        return {**asdict(self), "runs": self.runs, "seconds": self.seconds}


def compute(rows: Sequence[Dict[str, Any]]) -> List[Compute]:
    """Per corpus and method (in order of first appearance): trainings and seconds. A reported
    cell refused because its tuning failed trained nothing and is not counted."""
    out: Dict[Tuple[str, str], Compute] = {}
    for row in rows:
        if str(row.get("error", "")).startswith("tuning: "):
            continue
        c = out.setdefault((row["corpus"], row["method"]), Compute(row["corpus"], row["method"]))
        seconds = row.get("seconds")
        seconds = float(seconds) if isinstance(seconds, (int, float)) else 0.0
        if row.get("tuning"):
            c.tuning_runs += 1
            c.tuning_seconds += seconds
        else:
            c.reported_runs += 1
            c.reported_seconds += seconds
    return list(out.values())


def _sort_key(key: Key, rank: Dict[str, int]):
    """Corpus, setting, size, then value: in `rank` order (the spec's) where ranked, else no
    resampling first, numbers ascending, names alphabetically."""
    corpus, setting, size, value = key
    numeric = isinstance(value, (int, float))
    return (corpus, setting, -1 if size is None else size, rank.get(value_text(value), len(rank)),
            0 if value in (None, "none") else 1, value if numeric else 0, "" if numeric else str(value))
