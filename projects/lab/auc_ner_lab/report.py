"""A study's report: markdown tables (mean ± 95% CI, paired tests against the baseline;
for a tuned study the values each method chose and its dev score; the compute every method
spent, tuning included), a JSON summary, and plots in the style of the papers (F1 against the
setting's axis with confidence bands, one panel per corpus), as PNG and SVG.
"""
import math
from collections import OrderedDict
from pathlib import Path
from typing import Any, Dict, List, Optional, Sequence

from spacy_auc_ner.api import METRICS, PathLike, atomic_output, check_output_file, write_json, write_text

from .aggregate import DEFAULT_METRIC, Compute, MethodResult, aggregate, baseline_pairs, compute, row_score, row_scores
from .baseline import Baseline
from .stats import summarize
from .store import ResultsStore, check_not_in_store, latest_rows
from .tuning import value_text

AXIS_LABELS = {
    "lowres": "training set size (sentences)",
    "imbalance": "entity tokens in the training set (%)",
    "missing": "probability an entity annotation is removed",
    "resampling": "resampling method",
}
PLOT_STEMS = {"lowres": "f1_vs_size", "imbalance": "f1_vs_share", "missing": "f1_vs_mask_p", "resampling": "f1_by_resampler"}
SIGNIFICANCE = 0.05



def save_figure(fig, path: PathLike, fmt: str, **options: Any) -> None:
    """Write ``fig`` whole or not at all; the same figure gives the same bytes (no date in the
    SVG, its ids from a fixed salt), so a regenerated plot changes in git only with its data."""
    import matplotlib

    with matplotlib.rc_context({"svg.hashsalt": "spacy-auc-ner"}), atomic_output(path) as tmp:
        fig.savefig(tmp, dpi=150, format=fmt, metadata={"Date": None} if fmt == "svg" else None, **options)


def _column(setting: str, size: Optional[int], value: Any) -> str:
    if setting == "lowres":
        return "all" if size is None else str(size)
    if setting == "imbalance":
        return f"{value * 100:g}%"
    if setting == "missing":
        return f"p={value:g}"
    return str(value)


def _pct(x: float) -> str:
    return "–" if x is None or (isinstance(x, float) and math.isnan(x)) else f"{100 * x:.1f}"


def _panels(results: Sequence[MethodResult]) -> "OrderedDict[tuple, List[MethodResult]]":
    """Results by panel: corpus (lowres) or corpus x size (the other settings)."""
    panels: "OrderedDict[tuple, List[MethodResult]]" = OrderedDict()
    for r in results:
        key = (r.corpus, r.setting) if r.setting == "lowres" else (r.corpus, r.setting, r.size)
        panels.setdefault(key, []).append(r)
    return panels


def _panel_title(key: tuple) -> str:
    if len(key) == 2:
        return key[0]
    corpus, _, size = key
    return corpus if size is None else f"{corpus}, n={size}"


def markdown_report(
    results: Sequence[MethodResult],
    *,
    baseline: Optional[str] = "ce",
    failures: Sequence[Dict[str, Any]] = (),
    title: Optional[str] = None,
    costs: Sequence[Compute] = (),
    dev_only: bool = False,
) -> str:
    """Markdown: per panel a table of mean ± CI (▲/▼ where a paired t-test against the
    baseline gives p < 0.05), a table of paired differences with their p-values and, when
    tuned, the chosen values; then the compute per method (`costs`). `dev_only`: the scores
    are the dev sample's (a study with score_on: dev), and the report says so."""
    if not results:
        return f"# {title or 'Study report'}\n\nNo results yet.\n"
    metric = results[0].metric
    lines = [f"# {title or 'Study report'}", ""]
    lines.append(
        f"Metric: {METRICS.get(metric, metric)} (`{metric}`), in %. Cells: mean ± half width of the 95% "
        f"Student-t confidence interval over the training partitions (n = partitions that finished)."
        + (" Scored on the dev sample, not on test (score_on: dev): a choice may read these." if dev_only else "")
    )
    base = Baseline.parse(baseline)
    if base is not None:
        lines.append(
            f"▲ / ▼: better / worse than {base.describe()} by a two-sided paired t-test over the same "
            f"partitions, p < {SIGNIFICANCE}."
        )
    lines.append("")
    for key, panel in _panels(results).items():
        setting = panel[0].setting
        columns = list(OrderedDict.fromkeys(_column(setting, r.size, r.value) for r in panel))
        methods = list(OrderedDict.fromkeys(r.method for r in panel))
        cell = {(r.method, _column(setting, r.size, r.value)): r for r in panel}
        head = "size" if setting == "lowres" else AXIS_LABELS[setting].split(" (")[0]
        lines += [f"## {_panel_title(key)} ({setting}: {head})", ""]
        lines += _method_table(methods, columns, lambda m, c: _summary_text(cell.get((m, c))))
        compared = [m for m in methods if any(cell.get((m, c)) and cell[(m, c)].vs_baseline for c in columns)]
        if base is not None and compared:
            lines.append(f"Paired difference to {base.describe()} (points of F1; ×: ratio of the mean F1s over the same partitions; two-sided p-value; pairs):")
            lines.append("")
            lines += _method_table(compared, columns, lambda m, c: _diff_text(cell.get((m, c))))
        tuned = [r.tuned for r in panel if r.tuned]
        if tuned:
            lines.append(
                f"Chosen values (grid point with the best mean dev {tuned[0].get('metric')} over "
                f"{tuned[0].get('partitions')} tuning partition(s), never reported; its dev score in %):"
            )
            lines.append("")
            lines += _method_table(methods, columns, lambda m, c: _tuned_text(cell.get((m, c))))
    if costs:
        lines += _compute_lines(costs)
    if failures:
        lines += [f"## Failed cells ({len(failures)})", ""]
        for row in failures[:20]:
            lines.append(f"- `{row['cell_id']}`: {row.get('error', '')}")
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
    text = _pct(s.mean) if s.half_width is None else f"{_pct(s.mean)} ± {100 * s.half_width:.1f}"
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
        text += f" (dev {_pct(t['dev_score'])}" + (f" of {t['tuned_as']}'s trials)" if t.get("tuned_as") else ")")
    elif t.get("tuned_as"):
        text += f" ({t['tuned_as']}'s trials)"
    if t.get("varies"):
        text += f" (varies: {len(t['varies'])} points across partitions)"
    return text


def _compute_lines(costs: Sequence[Compute]) -> List[str]:
    """One row per corpus and method: trainings and summed seconds, tuning included."""
    lines = [
        "## Compute per method",
        "",
        "Trainings (tuning trials + reported cells; every recorded run, failed ones and reruns "
        "included) and the wall seconds of those runs summed (with N parallel workers the study "
        "itself takes about 1/N of that):",
        "",
        "| corpus | method | trainings | tuning | reported | seconds | tuning s | reported s |",
        "|---|---|---|---|---|---|---|---|",
    ]
    for c in costs:
        lines.append(
            f"| {c.corpus} | {c.method} | {c.runs} | {c.tuning_runs} | {c.reported_runs} | "
            f"{c.seconds:.0f} | {c.tuning_seconds:.0f} | {c.reported_seconds:.0f} |"
        )
    return lines + [""]


def _diff_text(r: Optional[MethodResult]) -> str:
    if r is None or r.vs_baseline is None:
        return "–"
    t = r.vs_baseline
    p = "p –" if t.p_value is None else (f"p={t.p_value:.3f}" if t.p_value >= 0.001 else "p<0.001")
    ratio = "" if t.ratio is None else f"×{t.ratio:.2f}, "
    return f"{100 * t.mean_diff:+.1f} ({ratio}{p}, n={t.n})"


# ---- plots --------------------------------------------------------------------------------
def plot_results(
    results: Sequence[MethodResult], out_dir: PathLike, *, formats: Sequence[str] = ("png", "svg")
) -> List[Path]:
    """One figure per setting, one panel per corpus (x size for settings other than lowres):
    mean F1 against the setting's axis, with the confidence band."""
    from .requirements import require

    require("matplotlib", "plotting").use("Agg", force=True)
    import matplotlib.pyplot as plt

    out_dir = Path(out_dir)
    written: List[Path] = []
    by_setting: "OrderedDict[str, List[MethodResult]]" = OrderedDict()
    for r in results:
        by_setting.setdefault(r.setting, []).append(r)
    all_methods = list(OrderedDict.fromkeys(r.method for r in results))
    colours = plt.get_cmap("tab10")
    colour = {m: colours(i % 10) for i, m in enumerate(all_methods)}
    for setting, rs in by_setting.items():
        panels = _panels(rs)
        n = len(panels)
        cols = min(n, 3)
        rows = math.ceil(n / cols)
        fig, axes = plt.subplots(rows, cols, figsize=(4.6 * cols, 3.6 * rows), squeeze=False)
        for ax, (key, panel) in zip(axes.flat, panels.items()):
            _draw_panel(ax, panel, setting, colour)
            ax.set_title(_panel_title(key))
        for ax in list(axes.flat)[n:]:
            ax.set_visible(False)
        legend: "OrderedDict[str, Any]" = OrderedDict()
        for ax in axes.flat:
            for handle, label in zip(*ax.get_legend_handles_labels()):
                legend.setdefault(label, handle)
        handles, labels = list(legend.values()), list(legend)
        # as many legend columns as fit under the panels, the rest wraps onto more rows
        ncol = max(1, min(len(labels), 3 * cols))
        legend_rows = math.ceil(len(labels) / ncol) if labels else 0
        fig.legend(handles, labels, loc="lower center", ncol=ncol, frameon=False)
        fig.tight_layout(rect=(0, min(0.4, 0.075 * legend_rows / rows), 1, 1))
        for fmt in formats:
            path = out_dir / f"{PLOT_STEMS[setting]}.{fmt}"
            save_figure(fig, path, fmt, bbox_inches="tight")
            written.append(path)
        plt.close(fig)
    return written


def paired_interval(r: MethodResult, base: MethodResult, confidence: float = 0.95):
    """(mean, low, high) of the paired differences r - base over the partitions both have
    (low = high = mean with one pair; None with none)."""
    shared = sorted(set(r.scores) & set(base.scores))
    if not shared:
        return None
    s = summarize([r.scores[p] - base.scores[p] for p in shared], confidence)
    return (s.mean, s.mean, s.mean) if s.half_width is None else (s.mean, s.low, s.high)


def paired_plot_stem(baseline: Baseline) -> str:
    """paired_vs_ce, paired_vs_resampler_none: the file name of the paired figure."""
    return "paired_vs_" + str(baseline).replace("=", "_")


def plot_paired_differences(
    results: Sequence[MethodResult], baseline: str, out_dir: PathLike, *, formats: Sequence[str] = ("png", "svg")
) -> List[Path]:
    """One figure, one panel per corpus (and size, outside lowres): each method's paired
    difference to `baseline` (a method, or AXIS=VALUE: see baseline.Baseline) in points of F1
    with its 95 % interval, one marker per size or value; a ratio reads off as the distance
    from the zero line. Nothing when no method pairs with the baseline."""
    from .requirements import require

    require("matplotlib", "plotting").use("Agg", force=True)
    import matplotlib.pyplot as plt

    base = Baseline.parse(baseline)
    panels = []
    for key, panel in _panels(results).items():
        points = []
        for r, b in baseline_pairs(panel, base):
            interval = paired_interval(r, b)
            if interval is not None:
                column = _column(r.setting, r.size, r.value)
                points.append((r.method, f"n={column}" if r.setting == "lowres" else column, [100 * x for x in interval]))
        if points:
            panels.append((key, points))
    if not panels:
        return []
    cols = min(len(panels), 3)
    rows = math.ceil(len(panels) / cols)
    methods = list(OrderedDict.fromkeys(m for _, points in panels for m, _, _ in points))
    columns = list(OrderedDict.fromkeys(c for _, points in panels for _, c, _ in points))
    colours = plt.get_cmap("tab10")
    fig, axes = plt.subplots(rows, cols, figsize=(4.8 * cols, 0.9 + 0.32 * len(methods) * rows), squeeze=False)
    step = 0.7 / max(1, len(columns))
    for ax, (key, points) in zip(axes.flat, panels):
        for method, column, (mean, low, high) in points:
            j = columns.index(column)
            y = methods.index(method) - 0.35 + step * (j + 0.5)
            ax.errorbar([mean], [y], xerr=[[mean - low], [high - mean]], fmt="o", capsize=2, markersize=4,
                        color=colours(j % 10), label=column)
        ax.axvline(0.0, color="black", linewidth=0.8)
        ax.set_yticks(range(len(methods)), methods)
        ax.invert_yaxis()
        ax.set_title(_panel_title(key))
        ax.set_xlabel(f"F1 difference to {base.describe().replace('`', '')} (points, 95 % CI)")
        ax.grid(axis="x", alpha=0.3)
    for ax in list(axes.flat)[len(panels):]:
        ax.set_visible(False)
    legend: "OrderedDict[str, Any]" = OrderedDict()
    for ax in axes.flat:
        for handle, label in zip(*ax.get_legend_handles_labels()):
            legend.setdefault(label, handle)
    fig.legend(list(legend.values()), list(legend), loc="upper center", ncol=len(legend), frameon=False,
               bbox_to_anchor=(0.5, 1.0))
    fig.tight_layout(rect=(0, 0, 1, 0.95))
    written = []
    for fmt in formats:
        path = Path(out_dir) / f"{paired_plot_stem(base)}.{fmt}"
        save_figure(fig, path, fmt, bbox_inches="tight")
        written.append(path)
    plt.close(fig)
    return written


def _draw_panel(ax, panel: Sequence[MethodResult], setting: str, colour: Dict[str, Any]) -> None:
    methods = list(OrderedDict.fromkeys(r.method for r in panel))
    if setting == "resampling":
        xs_names = list(OrderedDict.fromkeys(str(r.value) for r in panel))
        width = 0.8 / max(1, len(methods))
        for i, m in enumerate(methods):
            rs = [r for r in panel if r.method == m and r.summary.n]
            if not rs:
                continue
            x = [xs_names.index(str(r.value)) - 0.4 + width * (i + 0.5) for r in rs]
            y = [100 * r.summary.mean for r in rs]
            err = [0 if r.summary.half_width is None else 100 * r.summary.half_width for r in rs]
            ax.errorbar(x, y, yerr=err, fmt="o", capsize=3, color=colour[m], label=m)
        ax.set_xticks(range(len(xs_names)), xs_names)
    else:
        for m in methods:
            rs = sorted(
                (r for r in panel if r.method == m and r.summary.n and (r.size is not None or setting != "lowres")),
                key=lambda r: r.size if setting == "lowres" else r.value,
            )
            if not rs:
                continue
            scale = 100 if setting == "imbalance" else 1
            x = [(r.size if setting == "lowres" else r.value * scale) for r in rs]
            y = [100 * r.summary.mean for r in rs]
            ax.plot(x, y, marker="o", color=colour[m], label=m)
            banded = [(xi, r) for xi, r in zip(x, rs) if r.summary.half_width is not None]
            if banded:
                ax.fill_between(
                    [xi for xi, _ in banded],
                    [100 * r.summary.low for _, r in banded],
                    [100 * r.summary.high for _, r in banded],
                    color=colour[m],
                    alpha=0.2,
                    linewidth=0,
                )
    if setting != "resampling":
        ticks = sorted({r.size if setting == "lowres" else r.value * (100 if setting == "imbalance" else 1)
                        for r in panel if r.size is not None or setting != "lowres"})
        if 1 < len(ticks) <= 12:
            ax.set_xticks(ticks, [f"{t:g}" for t in ticks])
    ax.set_xlabel(AXIS_LABELS[setting])
    ax.set_ylabel("entity F1 (%)")
    ax.grid(alpha=0.3)


# ---- the whole report ---------------------------------------------------------------------
def write_report(
    results_path: PathLike,
    out_dir: PathLike,
    *,
    metric: str = DEFAULT_METRIC,
    baseline: Optional[str] = "ce",
    confidence: float = 0.95,
    title: Optional[str] = None,
    plots: bool = True,
    cells: Optional[Sequence] = None,
    warn=None,
    value_order: Sequence[Any] = (),
    overwrite: bool = False,
    inputs: Sequence[Optional[PathLike]] = (),
) -> Dict[str, Any]:
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
    base_spec = Baseline.parse(baseline)
    if base_spec is not None:
        names += [f"{paired_plot_stem(base_spec)}.{fmt}" for fmt in ("png", "svg")]
    for name in names:
        check_output_file(out_dir / name, [results_path, *inputs], overwrite)
    rows = store.rows(warn=warn) if cells is None else store.rows_for(cells, warn=warn)
    if not rows:
        raise FileNotFoundError(f"{results_path}: no results rows (run the study first)")
    if not any(row_score(r, metric) is not None for r in rows):
        found = sorted({k for r in rows for k, v in row_scores(r).items() if isinstance(v, (int, float))})
        raise ValueError(f"{results_path}: no row has a score {metric!r}; scores found: {', '.join(found) or 'none'}")
    summaries = aggregate(rows, metric=metric, baseline=baseline, confidence=confidence, warn=warn, value_order=value_order)
    base = Baseline.parse(baseline)
    others = [r for r in summaries if base is not None and not base.is_baseline(r)]
    if warn is not None and others and not any(r.vs_baseline for r in others):
        warn(f"{results_path}: no result pairs with the baseline {baseline!r}: no paired tests (name a method, or VALUE_NAME=VALUE)")
    failures = [r for r in latest_rows(rows).values() if r["status"] != "ok"]
    if warn is not None:
        warning = store.untraced_warning([r for r in latest_rows(rows).values() if r["status"] == "ok"])
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


def _method_table(methods, columns, text) -> List[str]:
    """Markdown rows: one per method, one column per size/value, `text(method, column)`."""
    lines = ["| method | " + " | ".join(columns) + " |", "|---|" + "---|" * len(columns)]
    lines += [f"| {m} | " + " | ".join(text(m, c) for c in columns) + " |" for m in methods]
    return lines + [""]
