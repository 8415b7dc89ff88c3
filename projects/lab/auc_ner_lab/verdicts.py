"""A verdict for each claim of the papers, from study results.

A claim names two sides, each a method (``a: ova_auc``) or a method at a setting value
(``a: {method: ce, value: sCRD}``: resampling against none), and the cells where the papers compare them (corpus, setting, sizes
or setting values) and what the paper found: ``better`` (method a beats b), ``similar`` (no
difference that matters) or ``worse``. Its evidence is the paired comparison of a and b over
every matching cell and partition both finished (the same training sentences, so the noise of
the sample cancels): the mean paired difference, its 95 % Student-t interval and the two-sided
paired t-test p-value.

Verdicts, at the 5 % level:

- ``better``/``worse``: *confirmed* when the difference has the claimed sign and p < 0.05,
  *contradicted* when it has the other sign and p < 0.05, *not confirmed* otherwise;
- ``similar``: *confirmed* when the whole 95 % interval of the difference lies within
  ±``margin`` (two one-sided tests at 5 %, a 90 % interval, would be laxer; we keep the 95 %
  one), *contradicted* when p < 0.05, *not confirmed* (inconclusive) otherwise;
- *not measured*: no pair of finished cells yet.
"""
import math
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Dict, List, Optional, Sequence, Tuple, Union

import yaml

from .runner import latest_rows, read_results
from .spec import DEFAULT_METRIC
from .stats import holm, paired_t_test, summarize

PathLike = Union[str, Path]
EXPECTATIONS = ("better", "similar", "worse")
_CLAIM_KEYS = {"id", "claim", "paper", "results", "a", "b", "where", "expect", "metric", "margin"}
_WHERE_KEYS = {"corpus", "setting", "size", "value"}
DEFAULT_MARGIN = 0.02


class ClaimsError(ValueError):
    """A claims file that cannot be read; the message names the file and the key."""


@dataclass(frozen=True)
class Claim:
    id: str
    claim: str
    paper: str
    results: Tuple[str, ...]
    a: Dict[str, Any]
    b: Dict[str, Any]
    where: Dict[str, Tuple[Any, ...]]
    expect: str = "better"
    metric: str = DEFAULT_METRIC
    margin: float = DEFAULT_MARGIN


@dataclass(frozen=True)
class Verdict:
    claim: Claim
    n: int
    mean_a: Optional[float]
    mean_b: Optional[float]
    mean_diff: Optional[float]
    diff_low: Optional[float]
    diff_high: Optional[float]
    p_value: Optional[float]
    verdict: str

    @property
    def relative(self) -> Optional[float]:
        """(mean a - mean b) / mean b: the papers state some gains as percentages."""
        if self.mean_a is None or not self.mean_b:
            return None
        return self.mean_a / self.mean_b - 1.0


def load_claims(path: PathLike) -> List[Claim]:
    path = Path(path)
    try:
        data = yaml.safe_load(path.read_text(encoding="utf8"))
    except OSError as err:
        raise ClaimsError(f"{path}: cannot read: {err.strerror or err}") from None
    except yaml.YAMLError as err:
        raise ClaimsError(f"{path}: not valid YAML: {err}".splitlines()[0]) from None
    if not isinstance(data, dict) or not isinstance(data.get("claims"), list) or not data["claims"]:
        raise ClaimsError(f"{path}: expected a mapping with a non-empty list under 'claims'")
    base = path.parent
    claims, seen = [], set()
    for i, item in enumerate(data["claims"]):
        where = f"{path}: claims[{i}]"
        if not isinstance(item, dict):
            raise ClaimsError(f"{where}: expected a mapping")
        unknown = set(item) - _CLAIM_KEYS
        if unknown:
            raise ClaimsError(f"{where}: unknown key(s) {', '.join(sorted(unknown))}")
        for key in ("id", "claim", "a", "b", "results"):
            if key not in item:
                raise ClaimsError(f"{where}.{key}: missing")
        if item["id"] in seen:
            raise ClaimsError(f"{where}.id: {item['id']!r} is used twice")
        seen.add(item["id"])
        expect = item.get("expect", "better")
        if expect not in EXPECTATIONS:
            raise ClaimsError(f"{where}.expect: {expect!r} is not one of {', '.join(EXPECTATIONS)}")
        filters = item.get("where") or {}
        if not isinstance(filters, dict) or set(filters) - _WHERE_KEYS:
            raise ClaimsError(f"{where}.where: expected a mapping of {', '.join(sorted(_WHERE_KEYS))}")
        results = item["results"] if isinstance(item["results"], list) else [item["results"]]
        margin = item.get("margin", DEFAULT_MARGIN)
        if not isinstance(margin, (int, float)) or margin <= 0:
            raise ClaimsError(f"{where}.margin: must be a positive number, not {margin!r}")
        claims.append(
            Claim(
                id=str(item["id"]),
                claim=str(item["claim"]),
                paper=str(item.get("paper", "")),
                results=tuple(str(base / r) if not Path(r).is_absolute() else str(r) for r in results),
                a=_side(item["a"], f"{where}.a"),
                b=_side(item["b"], f"{where}.b"),
                where={k: tuple(v) if isinstance(v, list) else (v,) for k, v in filters.items()},
                expect=expect,
                metric=str(item.get("metric", DEFAULT_METRIC)),
                margin=float(margin),
            )
        )
    return claims


def _side(value: Any, where: str) -> Dict[str, Any]:
    if isinstance(value, str):
        return {"method": value}
    if isinstance(value, dict) and "method" in value and set(value) <= {"method", "value"}:
        return dict(value)
    raise ClaimsError(f"{where}: expected a method name or {{method: NAME, value: VALUE}}, not {value!r}")


def side_name(side: Dict[str, Any]) -> str:
    return side["method"] if "value" not in side else f"{side['method']} ({side['value']})"


def _is_reported(row: Dict[str, Any]) -> bool:
    """Rows of reported cells only: tuning trials are selection data, not evidence."""
    return row.get("status") == "ok" and not row.get("tuning")


def _matches(row: Dict[str, Any], where: Dict[str, Tuple[Any, ...]]) -> bool:
    return all(row.get(key) in values for key, values in where.items())


def paired_scores(rows: Sequence[Dict[str, Any]], claim: Claim) -> List[Tuple[float, float]]:
    """(score of a, score of b) for every cell coordinate and partition both finished; the
    coordinates leave out what the sides fix (a side fixing the value pairs across values)."""
    fixed = set(claim.a) | set(claim.b)
    coord_keys = [k for k in ("corpus", "setting", "size", "value", "partition") if k not in fixed]
    scores: Tuple[Dict[tuple, float], Dict[tuple, float]] = ({}, {})
    for row in latest_rows(rows).values():
        if not _is_reported(row) or not _matches(row, claim.where):
            continue
        value = (row.get("scores") or {}).get(claim.metric)
        if not isinstance(value, (int, float)) or not math.isfinite(value):
            continue
        for side, found in zip((claim.a, claim.b), scores):
            if all(row.get(k) == v for k, v in side.items()):
                found[tuple(row.get(k) for k in coord_keys)] = float(value)
    a, b = scores
    shared = sorted(set(a) & set(b), key=str)
    return [(a[c], b[c]) for c in shared]


def judge(claim: Claim, pairs: Sequence[Tuple[float, float]], alpha: float = 0.05) -> Verdict:
    if not pairs:
        return Verdict(claim, 0, None, None, None, None, None, None, "not measured")
    a = [x for x, _ in pairs]
    b = [y for _, y in pairs]
    test = paired_t_test(a, b)
    n = test.n
    low = high = None
    if n >= 2:
        interval = summarize([x - y for x, y in pairs], confidence=1.0 - alpha)
        low, high = interval.low, interval.high
    significant = test.p_value is not None and test.p_value < alpha
    if claim.expect == "similar":
        if significant:
            verdict = "contradicted"
        elif low is not None and -claim.margin <= low and high <= claim.margin:
            verdict = "confirmed"
        else:
            verdict = "not confirmed"
    else:
        sign = 1.0 if claim.expect == "better" else -1.0
        if significant and sign * test.mean_diff > 0:
            verdict = "confirmed"
        elif significant:
            verdict = "contradicted"
        else:
            verdict = "not confirmed"
    return Verdict(claim, n, sum(a) / n, sum(b) / n, test.mean_diff, low, high, test.p_value, verdict)


def verdicts(claims: Sequence[Claim]) -> List[Verdict]:
    cache: Dict[str, List[Dict[str, Any]]] = {}
    out = []
    for claim in claims:
        rows: List[Dict[str, Any]] = []
        for path in claim.results:
            if path not in cache:
                cache[path] = read_results(path)
            rows.extend(cache[path])
        out.append(judge(claim, paired_scores(rows, claim)))
    return out


def _pct(x: Optional[float], signed: bool = False) -> str:
    if x is None:
        return "–"
    return f"{100 * x:+.1f}" if signed else f"{100 * x:.1f}"


def _p(p: Optional[float]) -> str:
    if p is None:
        return "–"
    return "p<0.001" if p < 0.001 else f"p={p:.3f}"


def markdown_table(results: Sequence[Verdict]) -> str:
    """One row per claim: the claim, the paper's figure, ours (a vs b, F1 in %), the paired
    difference in points with its 95 % interval, p-value and pairs, the p-value adjusted by
    Holm's method over every claim of the table with a test (many claims tested at 0.05 find
    some by chance), and the verdict (on the raw p, as each claim's own test)."""
    lines = [
        "| claim | paper | ours: a vs b (F1 %) | paired difference (points, 95 % CI) | p (pairs) | Holm p | verdict |",
        "|---|---|---|---|---|---|---|",
    ]
    adjusted = holm([v.p_value for v in results])
    for v, p_holm in zip(results, adjusted):
        c = v.claim
        if v.n == 0:
            ours = f"`{side_name(c.a)}` vs `{side_name(c.b)}`: no finished pairs yet"
            diff = "–"
        else:
            rel = v.relative
            ours = f"`{side_name(c.a)}` {_pct(v.mean_a)} vs `{side_name(c.b)}` {_pct(v.mean_b)}" + (
                f" ({rel * 100:+.0f} %)" if rel is not None else ""
            )
            ci = f" [{_pct(v.diff_low, True)}, {_pct(v.diff_high, True)}]" if v.diff_low is not None else ""
            diff = f"{_pct(v.mean_diff, True)}{ci}"
        lines.append(f"| {c.claim} | {c.paper} | {ours} | {diff} | {_p(v.p_value)} (n={v.n}) | {_p(p_holm).replace('p=', '')} | {v.verdict} |")
    return "\n".join(lines) + "\n"
