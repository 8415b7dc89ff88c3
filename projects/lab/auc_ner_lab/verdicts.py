"""A verdict for each claim of the papers, from study results.

A claim (`claims_file.py`) names two sides, each a method (``a: ova_auc``) or a method at a setting value
(``a: {method: ce, value: sCRD}``: resampling against none), and the cells where the papers compare them (corpus, setting, sizes
or setting values) and what the paper found: ``better`` (method a beats b), ``similar`` (no
difference that matters) or ``worse``. Its evidence is the paired comparison of a and b over
every matching cell and partition both finished (the same training sentences, so the noise of
the sample cancels), with the *draw* as the unit: a corpus's partition in a setting
(`DRAW`). The cells of one draw (its sizes, masking rates or entity shares, which share its
seed, dev sample and test set, a smaller draw being a subset of a larger one) are averaged into
one pair first (`stats.draw_means`), then the mean paired difference over the draws, its 95 %
Student-t interval and the two-sided paired t-test p-value.

Verdicts, at the 5 % level:

- ``better``/``worse``: *confirmed* when the difference has the claimed sign and p < 0.05,
  *contradicted* when it has the other sign and p < 0.05, *not confirmed* otherwise;
- ``similar``: *confirmed* when the whole 95 % interval of the difference lies within
  ±``margin`` (two one-sided tests at 5 %, a 90 % interval, would be laxer; we keep the 95 %
  one), *contradicted* when p < 0.05, *not confirmed* (inconclusive) otherwise;
- ``rising``/``falling`` (a claim with ``trend: value``): the gap a - b rises/falls with
  the setting value, on a log2 axis (per doubling); its test is `stats.trend_test`: one
  least-squares slope of the gap per draw (the gap at each level averaged over the draw's other
  cells), then a t-test over the draws; confirmed /
  contradicted / not confirmed as for ``better``;
- *not measured*: no pair of finished cells yet.

The table (`verdict_table.markdown_table`) then corrects for testing many claims at once
(Holm's method, `verdict_table.family_verdict`).

Each row says which corpora, sizes and values its pairs cover, so that a claim's name cannot
promise more than its rows hold; a claim over several corpora also shows each corpus's
difference and p, uncorrected and marked exploratory: a subgroup is read beside its registered
claim, never as a finding of its own.
"""
import dataclasses
import math
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable, Dict, List, Optional, Sequence, Tuple

from spacy_auc_ner.api import PathLike

from .claims_file import Claim
from .stats import draw_means, paired_t_test, summarize, trend_test
from .store import ResultsStore, latest_rows, spec_of

_COORDS = ("corpus", "setting", "size", "value", "partition")
# the unit of a claim's test: one training draw (its sizes, values share the seed, dev and test)
DRAW = ("corpus", "setting", "partition")


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
    covers: str = ""  # the corpora, sizes and values of the pairs
    cells: int = 0  # the cell pairs averaged into the n draws
    unversioned: int = 0  # of those, pairs with a row that records no versions
    # per corpus (exploratory, uncorrected): (corpus, mean difference, p, draws)
    per_corpus: Tuple[Tuple[str, float, Optional[float], int], ...] = ()
    # the same claim with every cell a pair (the unit before draws): what the table compares
    by_cell: Optional["Verdict"] = None

    @property
    def relative(self) -> Optional[float]:
        """(mean a - mean b) / mean b: the papers state some gains as percentages."""
        if self.mean_a is None or not self.mean_b:
            return None
        return self.mean_a / self.mean_b - 1.0


def paired_scores(pairs: Dict[Any, Tuple[Dict[str, Any], Dict[str, Any]]], claim: Claim) -> Dict[Any, Tuple[float, float]]:
    """{coordinates: (score of a, score of b)} of the row pairs of `paired_rows`."""
    return {c: tuple(float((row.get("scores") or {})[claim.metric]) for row in pair) for c, pair in pairs.items()}


def paired_rows(rows: Sequence[Dict[str, Any]], claim: Claim) -> Dict[Tuple[Tuple[str, Any], ...], Tuple[Dict[str, Any], Dict[str, Any]]]:
    """{coordinates: (row of a, row of b)} for every cell coordinate and partition both sides
    finished, coordinates as ((key, value), ...); they leave out what the sides fix (a side
    fixing the value pairs across values)."""
    fixed = set(claim.a) | set(claim.b)
    coord_keys = [k for k in _COORDS if k not in fixed]
    found: Tuple[Dict[tuple, Dict[str, Any]], Dict[tuple, Dict[str, Any]]] = ({}, {})
    for row in latest_rows(rows).values():
        # reported cells only: tuning trials are selection data, not evidence
        if row.get("status") != "ok" or row.get("tuning") or any(row.get(k) not in v for k, v in claim.where.items()):
            continue
        value = (row.get("scores") or {}).get(claim.metric)
        if not isinstance(value, (int, float)) or not math.isfinite(value):
            continue
        for side, side_rows in zip((claim.a, claim.b), found):
            if all(row.get(k) == v for k, v in side.items()):
                side_rows[tuple(row.get(k) for k in coord_keys)] = row
    a, b = found
    shared = sorted(set(a) & set(b), key=str)
    return {tuple(zip(coord_keys, c)): (a[c], b[c]) for c in shared}


def unversioned(pairs: Dict[Any, Tuple[Dict[str, Any], Dict[str, Any]]]) -> int:
    """How many of the cell pairs rest on a row that records no versions (library versions
    and commit: rows written before rows recorded them, which no rerun has replaced)."""
    return sum(1 for ra, rb in pairs.values() if not ra.get("versions") or not rb.get("versions"))


def coverage(coords: Sequence[Tuple[Tuple[str, Any], ...]]) -> str:
    """"conll2003, ncbi_disease; size 20, 50": what a row's pairs hold (value and size only
    where set)."""
    seen: Dict[str, List[Any]] = {}
    for coord in coords:
        for key, value in coord:
            if key in ("corpus", "size", "value") and value is not None and value not in seen.setdefault(key, []):
                seen[key].append(value)

    def text(v: Any) -> str:
        return f"{v:g}" if isinstance(v, float) else str(v)

    parts = [", ".join(sorted(map(str, seen.get("corpus", []))))]
    for key in ("size", "value"):
        if seen.get(key):
            numeric = all(isinstance(v, (int, float)) for v in seen[key])
            parts.append(f"{key} {', '.join(text(v) for v in (sorted(seen[key]) if numeric else seen[key]))}")
    return "; ".join(p for p in parts if p)


def by_draw(cells: Dict[Tuple[Tuple[str, Any], ...], Tuple[float, float]]) -> Dict[tuple, Tuple[float, float]]:
    """One (a, b) per draw (`DRAW`): the means over the draw's cells (`stats.draw_means`)."""
    return draw_means((tuple(dict(c).get(k) for k in DRAW), a, b) for c, (a, b) in cells.items())


def per_corpus(cells: Dict[Tuple[Tuple[str, Any], ...], Tuple[float, float]]) -> Tuple[Tuple[str, float, Optional[float], int], ...]:
    """(corpus, mean difference, p, draws) of each corpus's draws when there are several corpora:
    subgroups, for reading beside the claim (uncorrected, exploratory)."""
    corpora = sorted({str(dict(c).get("corpus")) for c in cells})
    if len(corpora) < 2:
        return ()
    out = []
    for corpus in corpora:
        pairs = list(by_draw({c: v for c, v in cells.items() if str(dict(c).get("corpus")) == corpus}).values())
        test = paired_t_test([a for a, _ in pairs], [b for _, b in pairs])
        out.append((corpus, test.mean_diff, test.p_value, test.n))
    return tuple(out)


def judge_trend(claim: Claim, cells: Dict[Tuple[Tuple[str, Any], ...], Tuple[float, float]], alpha: float = 0.05,
                unit: Optional[Sequence[str]] = DRAW) -> Verdict:
    """The gap a - b against log2 of the claim's axis, one slope per draw (`DRAW`; the gaps of
    a level averaged over the draw's other cells), tested over the draws; `unit=None`: one
    slope per cell coordinate without the axis (the unit before draws)."""
    levels: Dict[tuple, Dict[float, List[float]]] = {}
    for coord, (x, y) in cells.items():
        c = dict(coord)
        level = c.get(claim.trend)
        key = tuple(c.get(k) for k in unit) if unit else tuple((k, v) for k, v in coord if k != claim.trend)
        if isinstance(level, (int, float)) and level > 0:
            levels.setdefault(key, {}).setdefault(math.log2(level), []).append(x - y)
    gaps = {draw: {lv: sum(g) / len(g) for lv, g in by.items()} for draw, by in levels.items()}
    if not any(len(g) >= 2 for g in gaps.values()):
        return Verdict(claim, 0, None, None, None, None, None, None, "not measured")
    test = trend_test(gaps)
    pairs = list(cells.values())
    sign = 1.0 if claim.expect == "rising" else -1.0
    return Verdict(claim, test.n, sum(x for x, _ in pairs) / len(pairs), sum(y for _, y in pairs) / len(pairs),
                   test.mean_slope, *_interval(test.slopes, alpha), test.p_value,
                   _signed_verdict(test.p_value, alpha, sign * test.mean_slope))


def _interval(values: Sequence[float], alpha: float) -> Tuple[Optional[float], Optional[float]]:
    """The (1 - alpha) Student-t interval of the mean of `values`; (None, None) from fewer than two."""
    if len(values) < 2:
        return None, None
    interval = summarize(values, confidence=1.0 - alpha)
    return interval.low, interval.high


def _signed_verdict(p: Optional[float], alpha: float, signed: float) -> str:
    """A difference or slope `signed` by the claim's direction: confirmed or contradicted at p < alpha."""
    if p is None or p >= alpha:
        return "not confirmed"
    return "confirmed" if signed > 0 else "contradicted"


def judge(claim: Claim, pairs: Sequence[Tuple[float, float]], alpha: float = 0.05) -> Verdict:
    if not pairs:
        return Verdict(claim, 0, None, None, None, None, None, None, "not measured")
    a = [x for x, _ in pairs]
    b = [y for _, y in pairs]
    test = paired_t_test(a, b)
    n = test.n
    low, high = _interval([x - y for x, y in pairs], alpha)
    if claim.expect != "similar":
        verdict = _signed_verdict(test.p_value, alpha, (1.0 if claim.expect == "better" else -1.0) * test.mean_diff)
    elif test.p_value is not None and test.p_value < alpha:
        verdict = "contradicted"
    elif low is not None and -claim.margin <= low and high <= claim.margin:
        verdict = "confirmed"
    else:
        verdict = "not confirmed"
    return Verdict(claim, n, sum(a) / n, sum(b) / n, test.mean_diff, low, high, test.p_value, verdict)


def named_rows(store: PathLike, warn: Optional[Callable[[str], None]] = None) -> List[Dict[str, Any]]:
    """The rows of the store results/<name>, each named as its spec studies/<name>.yaml names its
    cell now where that spec exists (`ResultsStore.rows_for`: a row file keeps the name it was
    written under, a claim names the spec's methods); rows of keys the spec no longer has keep
    their own names."""
    from .spec import load_spec

    spec = spec_of(store)
    if not spec.exists():
        return ResultsStore(store).rows(warn=warn)
    return ResultsStore(store).rows_for(load_spec(spec).cells(), warn=warn, others=True)


def inputs(path: PathLike, claims: Sequence[Claim]) -> List[Path]:
    """Every file `verdicts` reads, which its output never replaces: the claims file at `path`,
    its results stores, and the spec of each store (`named_rows` names the rows by it) with the
    config files its cells' keys hash."""
    from .spec import load_spec

    stores = list(dict.fromkeys(Path(store) for claim in claims for store in claim.results))
    specs = [spec_of(store) for store in stores if spec_of(store).exists()]
    return [Path(path), *stores, *specs, *(Path(config) for spec in specs for config in load_spec(spec).config_users())]


def verdicts(claims: Sequence[Claim], warn: Optional[Callable[[str], None]] = None) -> List[Verdict]:
    """The verdict of each claim, from the rows of its results stores (each store read once;
    a file that is not a readable row is skipped, with a warning through `warn`), methods
    named as the store's spec names them (`named_rows`)."""
    cache: Dict[str, List[Dict[str, Any]]] = {}
    out = []
    for claim in claims:
        for path in claim.results:
            if path not in cache:
                cache[path] = named_rows(path, warn)
        rows = [row for path in claim.results for row in cache[path]]
        pairs = paired_rows(rows, claim)
        cells = paired_scores(pairs, claim)
        if claim.trend:
            verdict = dataclasses.replace(judge_trend(claim, cells), by_cell=judge_trend(claim, cells, unit=None))
        else:
            verdict = dataclasses.replace(judge(claim, list(by_draw(cells).values())), per_corpus=per_corpus(cells),
                                          by_cell=judge(claim, list(cells.values())))
        out.append(dataclasses.replace(verdict, covers=coverage(list(cells)), cells=len(cells), unversioned=unversioned(pairs)))
    return out
