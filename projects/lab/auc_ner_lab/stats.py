"""Small-sample statistics of a study: Student-t confidence intervals and paired t-tests.

Written out here (regularised incomplete beta by continued fraction, quantile by bisection)
so that the report needs no scipy; tests check the values against printed t tables and,
where installed, against scipy.
"""
import math
from dataclasses import dataclass
from typing import List, Optional, Sequence

_EPS = 1e-15
_TINY = 1e-300


def _betacf(a: float, b: float, x: float) -> float:
    """Continued fraction of the incomplete beta function (modified Lentz)."""
    qab, qap, qam = a + b, a + 1.0, a - 1.0
    c, d = 1.0, 1.0 - qab * x / qap
    d = 1.0 / (d if abs(d) > _TINY else _TINY)
    h = d
    for m in range(1, 1000):
        m2 = 2 * m
        aa = m * (b - m) * x / ((qam + m2) * (a + m2))
        d = 1.0 + aa * d
        d = 1.0 / (d if abs(d) > _TINY else _TINY)
        c = 1.0 + aa / c
        c = c if abs(c) > _TINY else _TINY
        h *= d * c
        aa = -(a + m) * (qab + m) * x / ((a + m2) * (qap + m2))
        d = 1.0 + aa * d
        d = 1.0 / (d if abs(d) > _TINY else _TINY)
        c = 1.0 + aa / c
        c = c if abs(c) > _TINY else _TINY
        delta = d * c
        h *= delta
        if abs(delta - 1.0) < _EPS:
            break
    return h


def betainc(a: float, b: float, x: float) -> float:
    """Regularised incomplete beta function I_x(a, b) for a, b > 0 and 0 <= x <= 1."""
    if not 0.0 <= x <= 1.0:
        raise ValueError(f"betainc: x must lie in [0, 1], not {x}")
    if x in (0.0, 1.0):
        return x
    log_front = (
        math.lgamma(a + b) - math.lgamma(a) - math.lgamma(b) + a * math.log(x) + b * math.log1p(-x)
    )
    front = math.exp(log_front)
    # The continued fraction converges fast for x < (a + 1) / (a + b + 2); use symmetry otherwise.
    if x < (a + 1.0) / (a + b + 2.0):
        return front * _betacf(a, b, x) / a
    return 1.0 - front * _betacf(b, a, 1.0 - x) / b


def t_cdf(t: float, df: float) -> float:
    """P(T <= t) for Student's t with `df` degrees of freedom."""
    if df <= 0:
        raise ValueError(f"t_cdf: degrees of freedom must be > 0, not {df}")
    if math.isinf(t):
        return 1.0 if t > 0 else 0.0
    tail = 0.5 * betainc(df / 2.0, 0.5, df / (df + t * t))
    return 1.0 - tail if t > 0 else tail


def t_quantile(q: float, df: float) -> float:
    """The t with P(T <= t) = q, by bisection on `t_cdf` (to ~1e-12)."""
    if not 0.0 < q < 1.0:
        raise ValueError(f"t_quantile: q must lie in (0, 1), not {q}")
    if q == 0.5:
        return 0.0
    if q < 0.5:
        return -t_quantile(1.0 - q, df)
    lo, hi = 0.0, 1.0
    while t_cdf(hi, df) < q:
        lo, hi = hi, hi * 2.0
    for _ in range(200):
        mid = 0.5 * (lo + hi)
        if t_cdf(mid, df) < q:
            lo = mid
        else:
            hi = mid
        if hi - lo < 1e-12 * max(1.0, hi):
            break
    return 0.5 * (lo + hi)


@dataclass(frozen=True)
class Summary:
    """Mean of `n` values with the half width of its two-sided confidence interval."""

    n: int
    mean: float
    std: float
    half_width: Optional[float]  # None when n < 2: no interval from one value

    @property
    def low(self) -> Optional[float]:
        return None if self.half_width is None else self.mean - self.half_width

    @property
    def high(self) -> Optional[float]:
        return None if self.half_width is None else self.mean + self.half_width


def summarize(values: Sequence[float], confidence: float = 0.95) -> Summary:
    """Mean, sample standard deviation (ddof 1) and Student-t confidence half width."""
    values = [float(v) for v in values]
    n = len(values)
    if n == 0:
        raise ValueError("summarize: no values")
    mean = sum(values) / n
    if n < 2:
        return Summary(n, mean, 0.0, None)
    std = math.sqrt(sum((v - mean) ** 2 for v in values) / (n - 1))
    half = t_quantile(0.5 + confidence / 2.0, n - 1) * std / math.sqrt(n)
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


def paired_t_test(a: Sequence[float], b: Sequence[float]) -> PairedTest:
    """Two-sided paired t-test of the differences a_i - b_i (same partition i)."""
    if len(a) != len(b):
        raise ValueError(f"paired_t_test: {len(a)} values against {len(b)}")
    diffs = [float(x) - float(y) for x, y in zip(a, b)]
    n = len(diffs)
    if n == 0:
        raise ValueError("paired_t_test: no pairs")
    mean = sum(diffs) / n
    mean_b = sum(float(y) for y in b) / n
    ratio = (sum(float(x) for x in a) / n) / mean_b if mean_b > 0 else None
    if n < 2:
        return PairedTest(n, mean, None, None, ratio)
    var = sum((d - mean) ** 2 for d in diffs) / (n - 1)
    if var <= 0.0:
        # Identical differences: no noise, so either no effect at all or a certain one.
        if mean == 0.0:
            return PairedTest(n, mean, 0.0, 1.0, ratio)
        return PairedTest(n, mean, math.copysign(math.inf, mean), 0.0, ratio)
    t = mean / math.sqrt(var / n)
    p = 2.0 * (1.0 - t_cdf(abs(t), n - 1))
    return PairedTest(n, mean, t, min(1.0, max(0.0, p)), ratio)


def holm(p_values: Sequence[Optional[float]]) -> List[Optional[float]]:
    """Holm-Bonferroni adjusted p-values (None stays None and does not count as a test): with
    m tests sorted by p, the k-th smallest (k from 0) becomes max over j <= k of
    min(1, (m - j) p_(j)), so that "adjusted p < alpha" controls the chance of any false
    finding among the m at alpha, where each raw p alone controls it per test only."""
    order = sorted((p, i) for i, p in enumerate(p_values) if p is not None)
    m = len(order)
    out: List[Optional[float]] = [None] * len(p_values)
    running = 0.0
    for j, (p, i) in enumerate(order):
        running = max(running, min(1.0, (m - j) * p))
        out[i] = running
    return out
