"""A study's report: markdown tables (mean ± 95% CI, paired tests against the baseline;
for a tuned study the values each method chose and its dev score; the compute every method
spent, tuning included), a JSON summary, and its plots (`plots.py`).
"""
from collections import OrderedDict
from pathlib import Path
from typing import Any, Dict, List, Optional, Sequence

from spacy_auc_ner.api import METRICS, PathLike, check_output_file, write_json, write_text

from .aggregate import DEFAULT_METRIC, Compute, MethodResult, aggregate, baseline_pairs, compute, crosses_devices, row_score, row_scores
from .baseline import Baseline
from .panels import AXIS_LABELS, by_panel, column_name, panel_title
from .plots import PLOT_STEMS, paired_plot_stem, plot_paired_differences, plot_results, pyplot
from .requirements import MissingRequirement
from .stats import p_text, pct
from .store import ResultsStore, check_not_in_store, latest_rows
from .tuning import value_text

SIGNIFICANCE = 0.05


def markdown_report(results: Sequence[MethodResult], *, baseline: Optional[str] = "ce",
                    failures: Sequence[Dict[str, Any]] = (), title: Optional[str] = None,
                    costs: Sequence[Compute] = (), dev_only: bool = False) -> str:
    """Markdown: per panel a table of mean ± CI (▲/▼ where a paired t-test against the
    baseline gives p < 0.05), a table of paired differences with their p-values and, when
    tuned, the chosen values; then the compute per method (`costs`). `dev_only`: the scores
    are the dev sample's (a study with score_on: dev), and the report says so."""
    if not results:
        return f"# {title or 'Study report'}\n\nNo results yet.\n"
    metric = results[0].metric
    lines = [f"# {title or 'Study report'}", "",
             f"Metric: {METRICS.get(metric, metric)} (`{metric}`), in %. Cells: mean ± half width of the 95% "
             f"Student-t confidence interval over the training partitions (n = partitions that finished)."
             + (" Scored on the dev sample, not on test (score_on: dev): a choice may read these."
                if dev_only else "")]
    base = Baseline.parse(baseline)
    if base is not None:
        lines.append(f"▲ / ▼: better / worse than {base.describe()} by a two-sided paired t-test over the same "
                     f"partitions, p < {SIGNIFICANCE}.")
    lines.append("")
    for key, panel in by_panel(results).items():
        setting = panel[0].setting
        columns = list(OrderedDict.fromkeys(column_name(setting, r.size, r.value) for r in panel))
        methods = list(OrderedDict.fromkeys(r.method for r in panel))
        cell = {(r.method, column_name(setting, r.size, r.value)): r for r in panel}
        head = "size" if setting == "lowres" else AXIS_LABELS[setting].split(" (")[0]
        lines += [f"## {panel_title(key)} ({setting}: {head})", ""]
        lines += _method_table(methods, columns, lambda m, c: _summary_text(cell.get((m, c))))
        compared = [m for m in methods if any(cell.get((m, c)) and cell[(m, c)].vs_baseline for c in columns)]
        if base is not None and compared:
            partner = {(r.method, column_name(setting, r.size, r.value)): b for r, b in baseline_pairs(panel, base)}
            mixed = {(m, c): _mixed(cell.get((m, c)), partner.get((m, c))) for m in compared for c in columns}
            texts = {(m, c): _diff_text(cell.get((m, c)), mixed[(m, c)]) for m in compared for c in columns}
            mixed_note = "; k mixed: k of the pairs join a GPU row with a CPU one, which train apart numerically"
            lines += [f"Paired difference to {base.describe()} (points of F1; ×: ratio of the mean F1s over the same "
                      f"partitions; two-sided p-value; pairs{mixed_note if any(mixed.values()) else ''}):", ""]
            lines += _method_table(compared, columns, lambda m, c: texts[(m, c)])
        tuned = [r.tuned for r in panel if r.tuned]
        if tuned:
            lines += [f"Chosen values (grid point with the best mean dev {tuned[0].get('metric')} over "
                      f"{tuned[0].get('partitions')} tuning partition(s), never reported; its dev score in %):", ""]
            lines += _method_table(methods, columns, lambda m, c: _tuned_text(cell.get((m, c))))
    if costs:
        lines += _compute_lines(costs)
    if failures:
        lines += [f"## Failed cells ({len(failures)})", ""]
        lines += [f"- `{row['cell_id']}`: {row.get('error', '')}" for row in failures[:20]]
        if len(failures) > 20:
            lines.append(f"- ... and {len(failures) - 20} more")
        lines.append("")
    return "\n".join(lines)


def _summary_text(r: Optional[MethodResult]) -> str:
    if r is None:
        return "–"
    if r.summary.n == 0:
        return f"– ({r.failed} failed)"
    s = r.summary
    text = pct(s.mean) if s.half_width is None else f"{pct(s.mean)} ± {100 * s.half_width:.1f}"
    t = r.vs_baseline
    if t is not None and t.p_value is not None and t.p_value < SIGNIFICANCE and t.mean_diff != 0:
        text += " ▲" if t.mean_diff > 0 else " ▼"
    if r.failed:
        text += f" (n={s.n}, {r.failed} failed)"
    return text


def _tuned_text(r: Optional[MethodResult]) -> str:
    if r is None or not r.tuned:
        return "–"
    t = r.tuned
    point = t.get("point") or {}
    names = [k.rsplit(".", 1)[-1] for k in point]
    text = ", ".join(f"{n if names.count(n) == 1 else k}={value_text(v)}" for n, k, v in zip(names, point, point.values()))
    if isinstance(t.get("dev_score"), (int, float)):
        text += f" (dev {pct(t['dev_score'])}" + (f" of {t['tuned_as']}'s trials)" if t.get("tuned_as") else ")")
    elif t.get("tuned_as"):
        text += f" ({t['tuned_as']}'s trials)"
    if t.get("varies"):
        text += f" (varies: {len(t['varies'])} points across partitions)"
    return text


def _compute_lines(costs: Sequence[Compute]) -> List[str]:
    """One row per corpus and method: trainings and summed seconds, tuning included."""
    return ["## Compute per method", "",
            "Trainings (tuning trials + reported cells; every recorded run, failed ones and reruns "
            "included) and the wall seconds of those runs summed (with N parallel workers the study "
            "itself takes about 1/N of that):", "",
            "| corpus | method | trainings | tuning | reported | seconds | tuning s | reported s |",
            "|---|---|---|---|---|---|---|---|",
            *(f"| {c.corpus} | {c.method} | {c.runs} | {c.tuning_runs} | {c.reported_runs} | "
              f"{c.seconds:.0f} | {c.tuning_seconds:.0f} | {c.reported_seconds:.0f} |" for c in costs), ""]


def _mixed(r: Optional[MethodResult], base: Optional[MethodResult]) -> int:
    """How many of the pairs of ``r`` and ``base`` (the partitions both have) join rows of two
    device kinds (`aggregate.crosses_devices`)."""
    if r is None or base is None:
        return 0
    return sum(crosses_devices(r, base, part) for part in set(r.scores) & set(base.scores))


def _diff_text(r: Optional[MethodResult], mixed: int = 0) -> str:
    """"+1.2 (×1.05, p=0.120, n=5)", with "; 2 mixed" where that many of its pairs join rows of
    two device kinds (`_mixed`)."""
    if r is None or r.vs_baseline is None:
        return "–"
    t = r.vs_baseline
    p = p_text(t.p_value, "p –")
    ratio = "" if t.ratio is None else f"×{t.ratio:.2f}, "
    return f"{100 * t.mean_diff:+.1f} ({ratio}{p}, n={t.n}" + (f"; {mixed} mixed" if mixed else "") + ")"


def write_report(results_path: PathLike, out_dir: PathLike, *, metric: str = DEFAULT_METRIC,
                 baseline: Optional[str] = "ce", confidence: float = 0.95, title: Optional[str] = None,
                 plots: bool = True, cells: Optional[Sequence] = None, warn=None, value_order: Sequence[Any] = (),
                 overwrite: bool = False, inputs: Sequence[Optional[PathLike]] = ()) -> Dict[str, Any]:
    """Read the results store `results_path` (only the rows of `cells`, named as they are,
    when given: a spec's), write report.md, summary.json and the plots into `out_dir`; a
    setting's values in `value_order` (the spec's) where given. Nothing is written into a
    results store, over the store or another of `inputs`, nor over an existing file without
    `overwrite`: all checked before anything is read or written."""
    results_path, out_dir = Path(results_path), Path(out_dir)
    store = ResultsStore(results_path)
    store.check()
    check_not_in_store(out_dir)
    names = ["report.md", "summary.json", "compute.json"] + [f"{stem}.{fmt}" for stem in PLOT_STEMS.values() for fmt in ("png", "svg")]
    base = Baseline.parse(baseline)
    if base is not None:
        names += [f"{paired_plot_stem(base)}.{fmt}" for fmt in ("png", "svg")]
    for name in names:
        check_output_file(out_dir / name, [results_path, *inputs], overwrite)
    if plots:
        _check_plotting()
    rows = store.rows(warn=warn) if cells is None else store.rows_for(cells, warn=warn)
    if not rows:
        raise FileNotFoundError(f"{results_path}: no results rows (run the study first)")
    if not any(row_score(r, metric) is not None for r in rows):
        found = sorted({k for r in rows for k, v in row_scores(r).items() if isinstance(v, (int, float))})
        raise ValueError(f"{results_path}: no row has a score {metric!r}; scores found: {', '.join(found) or 'none'}")
    summaries = aggregate(rows, metric=metric, baseline=baseline, confidence=confidence, warn=warn, value_order=value_order)
    others = [r for r in summaries if base is not None and not base.is_baseline(r)]
    if warn is not None and others and not any(r.vs_baseline for r in others):
        warn(f"{results_path}: no result pairs with the baseline {baseline!r}: no paired tests (name a method, or VALUE_NAME=VALUE)")
    latest = list(latest_rows(rows).values())
    failures = [r for r in latest if r["status"] != "ok"]
    warning = store.untraced_warning([r for r in latest if r["status"] == "ok"]) if warn is not None else None
    if warning:
        warn(warning)
    costs = compute(rows)
    text = markdown_report(
        summaries, baseline=baseline, failures=failures, title=title or f"Study report: {results_path.name}",
        costs=costs, dev_only=any(r.get("scored_on") == "dev" for r in rows if not r.get("tuning")),
    )
    write_text(out_dir / "report.md", text)
    write_json(out_dir / "summary.json", [s.to_dict() for s in summaries])
    write_json(out_dir / "compute.json", [c.to_dict() for c in costs])
    written = plot_results(summaries, out_dir) if plots and summaries else []
    if plots and summaries and baseline:
        written += plot_paired_differences(summaries, baseline, out_dir)
    return {"markdown": text, "summaries": summaries, "plots": written, "failures": failures, "compute": costs}


def _check_plotting() -> None:
    """The plots' dependency, before any file is written: a report that wrote its tables and then
    failed on its plots left files that its rerun with --no-plots refused to write over."""
    try:
        pyplot()
    except MissingRequirement as err:
        raise MissingRequirement(f"{err}; or write the report without plots (--no-plots)") from None


def _method_table(methods, columns, text) -> List[str]:
    """Markdown rows: one per method, one column per size/value, `text(method, column)`."""
    lines = ["| method | " + " | ".join(columns) + " |", "|---|" + "---|" * len(columns)]
    lines += [f"| {m} | " + " | ".join(text(m, c) for c in columns) + " |" for m in methods]
    return lines + [""]
