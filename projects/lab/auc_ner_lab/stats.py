"""Small-sample statistics of a study: Student-t confidence intervals, paired t-tests, Holm's
adjustment, a paired trend test and the draw as the unit of a paired test (`draw_means`), on scipy.stats (the t distribution, `ttest_rel`,
`ttest_1samp`); this module only fixes what the report needs around them: no NaN (one value
gives no interval, identical differences a certain or a null result; a NaN, infinite or
boolean value is refused with a ValueError, never read as a number) and the ratio of the means.
"""
import math
from dataclasses import dataclass
from typing import Dict, Hashable, Iterable, List, Optional, Sequence, Tuple

from scipy import stats as sps


@dataclass(frozen=True)
class Summary:
    """Mean of `n` values with the half width of its two-sided confidence interval."""

    n: int
    mean: Optional[float]  # None when n = 0 (a group whose every cell failed)
    std: Optional[float]
    half_width: Optional[float]  # None when n < 2: no interval from one value

    @property
    def low(self) -> Optional[float]:
        return None if self.half_width is None else self.mean - self.half_width

    @property
    def high(self) -> Optional[float]:
        return None if self.half_width is None else self.mean + self.half_width


def _finite(values: Sequence[float], what: str) -> List[float]:
    """`values` as floats; a NaN, an infinity or a boolean is refused (ValueError): no test
    returns a p-value, nor a summary a mean, from a value that is not a number."""
    out = []
    for v in values:
        if isinstance(v, bool) or not isinstance(v, (int, float)) or not math.isfinite(v):
            raise ValueError(f"{what}: {v!r} is not a finite number")
        out.append(float(v))
    return out


def summarize(values: Sequence[float], confidence: float = 0.95) -> Summary:
    """Mean, sample standard deviation (ddof 1) and Student-t confidence half width."""
    values = _finite(values, "summarize")
    n = len(values)
    if n == 0:
        raise ValueError("summarize: no values")
    mean = sum(values) / n
    if n < 2:
        return Summary(n, mean, 0.0, None)
    std = math.sqrt(sum((v - mean) ** 2 for v in values) / (n - 1))
    half = float(sps.t.ppf(0.5 + confidence / 2.0, n - 1)) * std / math.sqrt(n)
    return Summary(n, mean, std, half)


@dataclass(frozen=True)
class PairedTest:
    """Paired t-test of a - b over the same partitions."""

    n: int
    mean_diff: float
    t: Optional[float]
    p_value: Optional[float]  # two-sided; None when n < 2
    # mean of a / mean of b over the pairs (None when b's mean is not positive): "1.3x the F1"
    ratio: Optional[float] = None


def _t_test(diffs: Sequence[float]) -> Tuple[Optional[float], Optional[float]]:
    """(t, two-sided p) of "the differences have mean 0" (scipy's one-sample t-test); with no
    spread, no noise: t = 0 and p = 1 when every difference is 0, else an infinite t and p = 0
    (where scipy gives NaN); (None, None) from fewer than two differences."""
    diffs = _finite(diffs, "t-test")  # NaN is neither constant nor zero: refused, never p = 0
    if len(diffs) < 2:
        return None, None
    if max(diffs) == min(diffs):
        return (0.0, 1.0) if diffs[0] == 0.0 else (math.copysign(math.inf, diffs[0]), 0.0)
    result = sps.ttest_1samp(diffs, 0.0)
    return float(result.statistic), float(result.pvalue)


def paired_t_test(a: Sequence[float], b: Sequence[float]) -> PairedTest:
    """Two-sided paired t-test of the differences a_i - b_i (same partition i); scipy's
    `ttest_rel(a, b)` is the same test."""
    if len(a) != len(b):
        raise ValueError(f"paired_t_test: {len(a)} values against {len(b)}")
    a, b = _finite(a, "paired_t_test"), _finite(b, "paired_t_test")
    diffs = [x - y for x, y in zip(a, b)]
    n = len(diffs)
    if n == 0:
        raise ValueError("paired_t_test: no pairs")
    mean_a, mean_b = sum(a) / n, sum(b) / n
    t, p = _t_test(diffs)
    return PairedTest(n, sum(diffs) / n, t, p, mean_a / mean_b if mean_b > 0 else None)


def holm(p_values: Sequence[Optional[float]]) -> List[Optional[float]]:
    """Holm-Bonferroni adjusted p-values (None stays None and does not count as a test): the
    k-th smallest of m (k from 0) becomes the running max of min(1, (m - k) p), so that
    "adjusted p < alpha" bounds the chance of any false finding among the m at alpha."""
    _finite([p for p in p_values if p is not None], "holm")
    order = sorted((p, i) for i, p in enumerate(p_values) if p is not None)
    out: List[Optional[float]] = [None] * len(p_values)
    running = 0.0
    for k, (p, i) in enumerate(order):
        running = out[i] = max(running, min(1.0, (len(order) - k) * p))
    return out


@dataclass(frozen=True)
class TrendTest:
    """Does a paired gap change with x? One least-squares slope of the gap on x per unit
    (partition), then a t-test that the slopes have mean 0 (the units are the pairs)."""

    n: int  # units with at least two x values
    points: int  # (unit, x) gaps used
    mean_slope: float
    t: Optional[float]
    p_value: Optional[float]
    slopes: Tuple[float, ...] = ()


def trend_test(gaps: Dict[object, Dict[float, float]]) -> TrendTest:
    """`gaps[unit][x]` = a - b at x for that unit; units with fewer than two x values are left
    out (no slope). Each slope is scipy's `linregress` of the unit's gaps on x."""
    slopes, points = [], 0
    for by_x in gaps.values():
        if len(by_x) < 2:
            continue
        xs = sorted(_finite(list(by_x), "trend_test"))
        _finite([by_x[x] for x in xs], "trend_test")
        slopes.append(float(sps.linregress(xs, [by_x[x] for x in xs]).slope))
        points += len(xs)
    if not slopes:
        raise ValueError("trend_test: no unit with two x values")
    t, p = _t_test(slopes)
    return TrendTest(len(slopes), points, sum(slopes) / len(slopes), t, p, tuple(slopes))


def draw_means(pairs: Iterable[Tuple[Hashable, float, float]]) -> Dict[Hashable, Tuple[float, float]]:
    """{draw: (mean of a, mean of b)} over the `(draw, a, b)` pairs that share a draw, in the
    order the draws first appear. Pairs that share a draw are not independent: a partition's
    20-sentence draw is the first 20 of its 50-sentence draw (`LowResource.v1` takes the first
    n of one seeded permutation), and the sizes, masking rates or entity shares of one
    partition share its seed, dev sample and test set. A paired test over the draws' means
    counts each draw once (with one pair per draw it is the paired t-test of the pairs)."""
    groups: Dict[Hashable, List[Tuple[float, float]]] = {}
    for draw, a, b in pairs:
        groups.setdefault(draw, []).append((float(a), float(b)))
    return {d: (sum(a for a, _ in g) / len(g), sum(b for _, b in g) / len(g)) for d, g in groups.items()}


# ---- the tests as the documents print them (auc_ner_lab.evidence) ---------------------------------
METRIC_NAME = "Entity F1 (seqeval strict IOB2, micro)"


def pct(x: Optional[float], signed: bool = False) -> str:
    """A share in points as the tables print it ("12.3", signed "+1.2"); "–" for none or NaN."""
    if x is None or math.isnan(x):
        return "–"
    return f"{100 * x:+.1f}" if signed else f"{100 * x:.1f}"


def p_text(p, missing: str = "–") -> str:
    """A p-value as the tables print it: p=0.012, p<0.001, or `missing` when there is none."""
    return missing if p is None else (f"p={p:.3f}" if p >= 0.001 else "p<0.001")


def p_words(p) -> str:
    return "p < 0.001" if p < 0.001 else f"p = {p:.3f}"


def paired_difference(xs, ys):
    """The paired test of xs against ys and its difference in points with the 95 % interval
    of the differences ("+1.2 [-0.3, +2.7]"; no interval from one pair)."""
    t = paired_t_test(xs, ys)
    diff = f"{100 * t.mean_diff:+.1f}"
    interval = summarize([x - y for x, y in zip(xs, ys)])
    if interval.half_width is not None:
        diff += f" [{100 * interval.low:+.1f}, {100 * interval.high:+.1f}]"
    return t, diff


def tested(a: str, b: str, xs, ys) -> str:
    """One sentence part that says how a compares with b and cites its paired test:
    "`a` - `b` = +1.2 [-0.3, +2.7] points (p=0.120, 15 draws; not significant at the 5 % level)";
    xs and ys hold one pair per draw (`paired_lists`)."""
    t, diff = paired_difference(xs, ys)
    level = "significant" if t.p_value is not None and t.p_value < 0.05 else "not significant"
    return f"`{a}` - `{b}` = {diff} points ({p_text(t.p_value, 'no p-value')}, {t.n} draws; {level} at the 5 % level)"


def agreement(diff: float, p: float) -> str:
    """What a paired dev comparison says of a choice already made (diff: chosen - other):
    it agrees only when the chosen one leads with p < 0.05."""
    if diff > 0 and p < 0.05:
        return "agrees"
    return "leans the same way without confirming it" if diff > 0 else "disagrees"


def span(values) -> str:
    """"3" or "3-5": the range of some counts."""
    return str(min(values)) if min(values) == max(values) else f"{min(values)}-{max(values)}"
