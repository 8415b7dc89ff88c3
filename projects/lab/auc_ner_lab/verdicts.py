"""A verdict for each claim of the papers, from study results.

A claim names two sides, each a method (``a: ova_auc``) or a method at a setting value
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

The table (`markdown_table`) then corrects for testing many claims at once: a verdict that
rests on p < 0.05 (a confirmed difference or trend, any contradiction) stands only when its
Holm-adjusted p is below 0.05 too; otherwise it reads *not confirmed after Holm*, with what
the claim's own test said (`family_verdict`).

Each row says which corpora, sizes and values its pairs cover, so that a claim's name cannot
promise more than its rows hold; a claim over several corpora also shows each corpus's
difference and p, uncorrected and marked exploratory: a subgroup is read beside its registered
claim, never as a finding of its own.
"""
import dataclasses
import math
from dataclasses import dataclass
from pathlib import Path
from typing import Annotated, Any, Callable, Dict, List, Optional, Sequence, Tuple, Union

import srsly
from pydantic import BeforeValidator, model_validator

from .settings import DEFAULT_METRIC
from .stats import draw_means, holm, paired_t_test, summarize, trend_test
from .store import ResultsStore, latest_rows, spec_of
from .validation import At, Section, validate
from .validation import expect as check

PathLike = Union[str, Path]
EXPECTATIONS = ("better", "similar", "worse", "rising", "falling")
TREND_EXPECTATIONS = ("rising", "falling")
_COORDS = ("corpus", "setting", "size", "value", "partition")
# the unit of a claim's test: one training draw (its sizes, values share the seed, dev and test)
DRAW = ("corpus", "setting", "partition")
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
    trend: Optional[str] = None  # the axis a rising/falling claim reads ("value")
    note: str = ""  # a caveat printed under the table
    repeats: Optional[str] = None  # the id of the claim this one repeats on another encoder


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


def _side(value: Any) -> Any:
    if isinstance(value, str):
        return {"method": value}
    if isinstance(value, dict) and "method" in value and set(value) <= {"method", "value"}:
        return dict(value)
    raise ValueError(f"expected a method name or {{method: NAME, value: VALUE}}, not {value!r}")


def _listed(value: Any) -> Any:
    return value if isinstance(value, list) else [value]


class Where(Section):
    """The cells a claim compares its sides on; a list for several values."""

    corpus: Annotated[Optional[List[Any]], BeforeValidator(_listed)] = None
    setting: Annotated[Optional[List[Any]], BeforeValidator(_listed)] = None
    size: Annotated[Optional[List[Any]], BeforeValidator(_listed)] = None
    value: Annotated[Optional[List[Any]], BeforeValidator(_listed)] = None


class ClaimEntry(Section):
    """A claim of `studies/claims.yaml` (see the module's docstring)."""

    id: str
    claim: str
    paper: str = ""
    results: Annotated[List[str], BeforeValidator(_listed)]
    a: Annotated[Dict[str, Any], BeforeValidator(_side)]
    b: Annotated[Dict[str, Any], BeforeValidator(_side)]
    where: Annotated[Where, BeforeValidator(lambda v: v or {})] = Where()
    expect: Annotated[str, check(lambda v: v in EXPECTATIONS, "{value} is not one of " + ", ".join(EXPECTATIONS))] = "better"
    metric: str = DEFAULT_METRIC
    margin: Annotated[float, check(lambda v: isinstance(v, (int, float)) and not isinstance(v, bool) and v > 0,
                                    "must be a positive number, not {value}")] = DEFAULT_MARGIN
    trend: Annotated[Optional[str], check(lambda v: v in (None, "value", "size"), "{value} is not an axis (value or size)")] = None
    note: str = ""
    repeats: Optional[str] = None

    @model_validator(mode="after")
    def _trend_with_its_expectations(self) -> "ClaimEntry":
        if (self.trend is None) != (self.expect not in TREND_EXPECTATIONS):
            raise ValueError(f"expect {', '.join(TREND_EXPECTATIONS)} goes with a trend axis and only with one")
        return self


class ClaimsFile(Section):
    claims: Annotated[List[ClaimEntry], check(lambda v: isinstance(v, list) and v, "a non-empty list of claims is expected, not {value}")]

    @model_validator(mode="after")
    def _ids_once(self) -> "ClaimsFile":

        seen = set()
        for i, claim in enumerate(self.claims):
            if claim.id in seen:
                raise At(("claims", i, "id"), f"{claim.id!r} is used twice")
            seen.add(claim.id)
        for i, claim in enumerate(self.claims):
            if claim.repeats is not None and claim.repeats not in seen:
                raise At(("claims", i, "repeats"), f"{claim.repeats!r} is not the id of a claim of this file")
        return self


def load_claims(path: PathLike) -> List[Claim]:
    """The claims of a claims file; its results stores' paths are relative to it."""
    path = Path(path)
    try:
        data = srsly.read_yaml(path)
    except OSError as err:
        raise ClaimsError(f"{path}: cannot read: {err.strerror or err}") from None
    except ValueError as err:  # srsly's "Invalid YAML" names the line and column
        raise ClaimsError(f"{path}: not valid YAML: {' '.join(str(err).split())}") from None
    if not isinstance(data, dict):
        raise ClaimsError(f"{path}: expected a mapping with a non-empty list under 'claims'")
    parsed = validate(ClaimsFile, data, source=str(path), error=ClaimsError)
    return [
        Claim(
            id=c.id, claim=c.claim, paper=c.paper,
            results=tuple(str(path.parent / r) if not Path(r).is_absolute() else r for r in c.results),
            a=c.a, b=c.b, where={k: tuple(v) for k, v in c.where.model_dump(exclude_none=True).items()},
            expect=c.expect, metric=c.metric, margin=float(c.margin), trend=c.trend, note=c.note,
            repeats=c.repeats,
        )
        for c in parsed.claims
    ]


def side_name(side: Dict[str, Any]) -> str:
    return side["method"] if "value" not in side else f"{side['method']} ({side['value']})"


def _is_reported(row: Dict[str, Any]) -> bool:
    """Rows of reported cells only: tuning trials are selection data, not evidence."""
    return row.get("status") == "ok" and not row.get("tuning")


def _matches(row: Dict[str, Any], where: Dict[str, Tuple[Any, ...]]) -> bool:
    return all(row.get(key) in values for key, values in where.items())


def paired_scores(rows: Sequence[Dict[str, Any]], claim: Claim) -> List[Tuple[float, float]]:
    """(score of a, score of b) for every cell coordinate and partition both finished."""
    return list(paired_cells(rows, claim).values())


def paired_cells(rows: Sequence[Dict[str, Any]], claim: Claim) -> Dict[Tuple[Tuple[str, Any], ...], Tuple[float, float]]:
    """{coordinates: (score of a, score of b)} for every cell coordinate and partition both
    finished, coordinates as ((key, value), ...); they leave out what the sides fix (a side
    fixing the value pairs across values)."""
    return {c: (_score(ra, claim), _score(rb, claim)) for c, (ra, rb) in paired_rows(rows, claim).items()}


def _score(row: Dict[str, Any], claim: Claim) -> float:
    return float((row.get("scores") or {})[claim.metric])


def paired_rows(rows: Sequence[Dict[str, Any]], claim: Claim) -> Dict[Tuple[Tuple[str, Any], ...], Tuple[Dict[str, Any], Dict[str, Any]]]:
    """{coordinates: (row of a, row of b)} behind `paired_cells`."""
    fixed = set(claim.a) | set(claim.b)
    coord_keys = [k for k in _COORDS if k not in fixed]
    found: Tuple[Dict[tuple, Dict[str, Any]], Dict[tuple, Dict[str, Any]]] = ({}, {})
    for row in latest_rows(rows).values():
        if not _is_reported(row) or not _matches(row, claim.where):
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
    low = high = None
    if test.n >= 2:
        interval = summarize(test.slopes, confidence=1.0 - alpha)
        low, high = interval.low, interval.high
    pairs = list(cells.values())
    sign = 1.0 if claim.expect == "rising" else -1.0
    significant = test.p_value is not None and test.p_value < alpha
    verdict = "not confirmed" if not significant else ("confirmed" if sign * test.mean_slope > 0 else "contradicted")
    return Verdict(claim, test.n, sum(x for x, _ in pairs) / len(pairs), sum(y for _, y in pairs) / len(pairs),
                   test.mean_slope, low, high, test.p_value, verdict)


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
        rows: List[Dict[str, Any]] = []
        for path in claim.results:
            if path not in cache:
                cache[path] = named_rows(path, warn)
            rows.extend(cache[path])
        pairs = paired_rows(rows, claim)
        cells = {c: (_score(ra, claim), _score(rb, claim)) for c, (ra, rb) in pairs.items()}
        if claim.trend:
            verdict = dataclasses.replace(judge_trend(claim, cells), by_cell=judge_trend(claim, cells, unit=None))
        else:
            verdict = dataclasses.replace(judge(claim, list(by_draw(cells).values())), per_corpus=per_corpus(cells),
                                          by_cell=judge(claim, list(cells.values())))
        out.append(dataclasses.replace(verdict, covers=coverage(list(cells)), cells=len(cells), unversioned=unversioned(pairs)))
    return out


def _pct(x: Optional[float], signed: bool = False) -> str:
    if x is None:
        return "–"
    return f"{100 * x:+.1f}" if signed else f"{100 * x:.1f}"


def _p(p: Optional[float]) -> str:
    if p is None:
        return "–"
    return "p<0.001" if p < 0.001 else f"p={p:.3f}"


def family_verdict(verdict: Verdict, p_holm: Optional[float], alpha: float = 0.05) -> str:
    """`verdict`'s verdict among all the claims of a table: one that rests on p < `alpha`
    (confirmed better/worse/trend, contradicted) but whose Holm-adjusted p is not below
    `alpha` is one of the findings that many tests make by chance, so it is not confirmed;
    a ``similar`` claim confirmed by its interval needs no correction."""
    rests_on_p = verdict.verdict == "contradicted" or (verdict.verdict == "confirmed" and verdict.claim.expect != "similar")
    if rests_on_p and (p_holm is None or p_holm >= alpha):
        return f"not confirmed after Holm ({verdict.verdict} at p < {alpha} alone)"
    return verdict.verdict


UNIT_NOTE = (
    "Unit: the training draw (a corpus's partition in a setting). The cells of one draw (its sizes, masking "
    "rates or entity shares: one seed, one dev sample, one test set, a smaller draw a subset of a larger one) "
    "are averaged into one pair, then a two-sided paired t-test over the draws (a trend: one slope of the gap "
    "per draw, t-test over the draws); Holm's adjustment over every claim of the table. Means and differences "
    "are over the draws. Per corpus: each corpus's draws alone, uncorrected, exploratory (a subgroup is read "
    "beside its claim, not as a finding). Counted by cell: the same test with every cell a pair, as the table "
    "counted before, with its Holm p and verdict where the verdict differs. \"k without versions\": cell pairs "
    "with a row that records no library versions or commit (written before rows recorded them, not rerun)."
)


def _per_corpus_text(v: Verdict) -> str:
    if not v.per_corpus:
        return "–"
    return "; ".join(f"{c} {_pct(d, True)} ({_p(p)}, n={n})" for c, d, p, n in v.per_corpus)


def markdown_table(results: Sequence[Verdict]) -> str:
    """`UNIT_NOTE`, then one row per claim: the claim, the paper's figure, ours (a vs b, F1 in
    %, means over draws), the paired difference in points with its 95 % interval (for a trend
    claim: the mean slope of the gap per doubling of its axis, with the interval of the
    slopes), p-value with its draws and the cells averaged into them, what the pairs cover, the
    p-value adjusted by Holm's method over every claim of the table with a test (many claims
    tested at 0.05 find some by chance), the verdict after that correction (`family_verdict`),
    each corpus's difference (exploratory), and the verdict counted by cell where it differs;
    then the claims' notes."""
    lines = [
        UNIT_NOTE, "",
        "| claim | paper | ours: a vs b (F1 %) | paired difference (points, 95 % CI) | p (draws; cells) | pairs cover | Holm p | verdict | per corpus (exploratory, uncorrected) | counted by cell: Holm p, verdict |",
        "|---|---|---|---|---|---|---|---|---|---|",
    ]
    adjusted = holm([v.p_value for v in results])
    cell_adjusted = holm([v.by_cell.p_value if v.by_cell else None for v in results])
    notes = []
    for v, p_holm, p_cell in zip(results, adjusted, cell_adjusted):
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
            if c.trend:
                diff = f"slope of the gap {diff} per doubling of {c.trend}"
        pairs = f"n={v.n} draws; {v.cells} cells" + (f", {v.unversioned} without versions" if v.unversioned else "")
        if c.note:
            notes.append(f"- {c.claim}: {c.note}")
        verdict = family_verdict(v, p_holm)
        before = "–"
        if v.by_cell is not None and v.by_cell.n:
            was = family_verdict(v.by_cell, p_cell)
            before = "same verdict" if was == verdict else f"{_p(p_cell).replace('p=', '')}, {was}"
        lines.append(f"| {c.claim} | {c.paper} | {ours} | {diff} | {_p(v.p_value)} ({pairs}) | {v.covers or '–'} | "
                     f"{_p(p_holm).replace('p=', '')} | {verdict} | {_per_corpus_text(v)} | {before} |")
    if notes:
        lines += ["", "Notes:", ""] + notes
    return "\n".join(lines + encoder_columns(results, adjusted)) + "\n"


def encoder_columns(results: Sequence[Verdict], adjusted: Sequence[Optional[float]]) -> List[str]:
    """The claims that another claim repeats on a second encoder (``repeats``), side by side:
    each encoder's paired difference, p-value (pairs) and verdict after Holm, from the rows of
    the table above (so the same Holm correction)."""
    by_id = {v.claim.id: (v, p) for v, p in zip(results, adjusted)}
    repeats = [(by_id[v.claim.repeats], (v, p)) for v, p in zip(results, adjusted) if v.claim.repeats in by_id]
    if not repeats:
        return []

    def cell(v: Verdict, p_holm: Optional[float]) -> str:
        if v.n == 0:
            return "not measured"
        return f"{_pct(v.mean_diff, True)} points, {_p(v.p_value)} (n={v.n} draws): {family_verdict(v, p_holm)}"

    lines = ["", "The claims measured on both encoders (the repeat's name and pairs in the table above):", "",
             "| claim | CPU tok2vec | repeated on |", "|---|---|---|"]
    for (first, p_first), (again, p_again) in repeats:
        lines.append(f"| {first.claim.claim} | {cell(first, p_first)} | {again.claim.claim.split(':')[0]}: {cell(again, p_again)} |")
    return lines
