"""A study's plots in the style of the papers: F1 against the setting's axis with confidence
bands, one panel per corpus, and each method's paired difference to the baseline; as PNG and
SVG, the same figure giving the same bytes."""
import math
from collections import OrderedDict
from pathlib import Path
from typing import Any, Dict, List, Sequence, Tuple

from spacy_auc_ner.api import PathLike, atomic_output

from .aggregate import MethodResult, baseline_pairs
from .baseline import Baseline
from .panels import AXIS_LABELS, by_panel, column_name, panel_title
from .stats import summarize

PLOT_STEMS = {"lowres": "f1_vs_size", "imbalance": "f1_vs_share", "missing": "f1_vs_mask_p", "resampling": "f1_by_resampler"}


def save_figure(fig, path: PathLike, fmt: str, **options: Any) -> None:
    """Write ``fig`` whole or not at all; the same figure gives the same bytes (no date in the
    SVG, its ids from a fixed salt), so a regenerated plot changes in git only with its data."""
    import matplotlib

    with matplotlib.rc_context({"svg.hashsalt": "spacy-auc-ner"}), atomic_output(path) as tmp:
        fig.savefig(tmp, dpi=150, format=fmt, metadata={"Date": None} if fmt == "svg" else None, **options)


def pyplot():
    """matplotlib's pyplot on the file-only Agg backend (`require`: one line when it is missing)."""
    from .requirements import require

    require("matplotlib", "plotting").use("Agg", force=True)
    import matplotlib.pyplot as plt

    return plt


def save_and_close(fig, out_dir: PathLike, stem: str, formats: Sequence[str], bbox_inches="tight") -> List[Path]:
    """Write ``fig`` as out_dir/stem.FORMAT for each of ``formats`` (`save_figure`), then free it."""
    import matplotlib.pyplot as plt

    paths = [Path(out_dir) / f"{stem}.{fmt}" for fmt in formats]
    for path, fmt in zip(paths, formats):
        save_figure(fig, path, fmt, bbox_inches=bbox_inches)
    plt.close(fig)
    return paths


def plot_results(results: Sequence[MethodResult], out_dir: PathLike, *,
                 formats: Sequence[str] = ("png", "svg")) -> List[Path]:
    """One figure per setting, one panel per corpus (x size for settings other than lowres):
    mean F1 against the setting's axis, with the confidence band."""
    plt = pyplot()
    written: List[Path] = []
    colours = plt.get_cmap("tab10")
    colour = {m: colours(i % 10) for i, m in enumerate(OrderedDict.fromkeys(r.method for r in results))}
    for setting in OrderedDict.fromkeys(r.setting for r in results):
        panels = by_panel([r for r in results if r.setting == setting])
        fig, axes, cols, rows = _grid(len(panels), lambda cols, rows: (4.6 * cols, 3.6 * rows))
        for ax, (key, panel) in zip(axes.flat, panels.items()):
            _draw_panel(ax, panel, setting, colour)
            ax.set_title(panel_title(key))
        handles, labels = _legend(axes)
        # as many legend columns as fit under the panels, the rest wraps onto more rows
        ncol = max(1, min(len(labels), 3 * cols))
        legend_rows = math.ceil(len(labels) / ncol) if labels else 0
        fig.legend(handles, labels, loc="lower center", ncol=ncol, frameon=False)
        fig.tight_layout(rect=(0, min(0.4, 0.075 * legend_rows / rows), 1, 1))
        written += save_and_close(fig, out_dir, PLOT_STEMS[setting], formats)
    return written


def _grid(n: int, size):
    """A figure of `n` panels, three a row, `size(cols, rows)` inches; the unused panels hidden."""
    import matplotlib.pyplot as plt

    cols = min(n, 3)
    rows = math.ceil(n / cols)
    fig, axes = plt.subplots(rows, cols, figsize=size(cols, rows), squeeze=False)
    for ax in list(axes.flat)[n:]:
        ax.set_visible(False)
    return fig, axes, cols, rows


def _legend(axes) -> Tuple[List[Any], List[str]]:
    """The handles and labels of every panel's lines, each label once: one legend for the figure."""
    legend: "OrderedDict[str, Any]" = OrderedDict()
    for ax in axes.flat:
        for handle, label in zip(*ax.get_legend_handles_labels()):
            legend.setdefault(label, handle)
    return list(legend.values()), list(legend)


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


def plot_paired_differences(results: Sequence[MethodResult], baseline: str, out_dir: PathLike, *,
                            formats: Sequence[str] = ("png", "svg")) -> List[Path]:
    """One figure, one panel per corpus (and size, outside lowres): each method's paired
    difference to `baseline` (a method, or AXIS=VALUE: see baseline.Baseline) in points of F1
    with its 95 % interval, one marker per size or value; a ratio reads off as the distance
    from the zero line. Nothing when no method pairs with the baseline."""
    plt = pyplot()
    base = Baseline.parse(baseline)
    panels = []
    for key, panel in by_panel(results).items():
        points = []
        for r, b in baseline_pairs(panel, base):
            interval = paired_interval(r, b)
            if interval is not None:
                column = column_name(r.setting, r.size, r.value)
                points.append((r.method, f"n={column}" if r.setting == "lowres" else column, [100 * x for x in interval]))
        if points:
            panels.append((key, points))
    if not panels:
        return []
    methods = list(OrderedDict.fromkeys(m for _, points in panels for m, _, _ in points))
    columns = list(OrderedDict.fromkeys(c for _, points in panels for _, c, _ in points))
    colours = plt.get_cmap("tab10")
    fig, axes, _, _ = _grid(len(panels), lambda cols, rows: (4.8 * cols, 0.9 + 0.32 * len(methods) * rows))
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
        ax.set_title(panel_title(key))
        ax.set_xlabel(f"F1 difference to {base.describe().replace('`', '')} (points, 95 % CI)")
        ax.grid(axis="x", alpha=0.3)
    handles, labels = _legend(axes)
    fig.legend(handles, labels, loc="upper center", ncol=len(labels), frameon=False, bbox_to_anchor=(0.5, 1.0))
    fig.tight_layout(rect=(0, 0, 1, 0.95))
    return save_and_close(fig, out_dir, paired_plot_stem(base), formats)


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
        def x_of(r: MethodResult) -> float:  # the setting's axis: the size, or the value (a share in %)
            return r.size if setting == "lowres" else r.value * (100 if setting == "imbalance" else 1)

        shown = [r for r in panel if r.size is not None or setting != "lowres"]
        for m in methods:
            rs = sorted((r for r in shown if r.method == m and r.summary.n), key=x_of)
            if not rs:
                continue
            x = [x_of(r) for r in rs]
            ax.plot(x, [100 * r.summary.mean for r in rs], marker="o", color=colour[m], label=m)
            _band(ax, [(xi, 100 * r.summary.low, 100 * r.summary.high) for xi, r in zip(x, rs)
                       if r.summary.half_width is not None], colour[m])
        ticks = sorted({x_of(r) for r in shown})
        if 1 < len(ticks) <= 12:
            ax.set_xticks(ticks, [f"{t:g}" for t in ticks])
    ax.set_xlabel(AXIS_LABELS[setting])
    ax.set_ylabel("entity F1 (%)")
    ax.grid(alpha=0.3)


def _band(ax, banded: Sequence[Tuple[Any, float, float]], colour) -> None:
    """A confidence band through the (x, low, high) points, if any."""
    if banded:
        xs, lows, highs = zip(*banded)
        ax.fill_between(xs, lows, highs, color=colour, alpha=0.2, linewidth=0)


def plot_selection(panels: Dict[str, Tuple[Sequence[Any], Sequence[Any]]], out_dir: PathLike, stem: str, at: int,
                   *, formats: Sequence[str] = ("png", "svg")) -> List[Path]:
    """The annotation loop's figure, one panel per corpus (`evidence.selection.figure_points`):
    the recipe's mean test F1 on random sentences against how many were annotated (log axis),
    with its 95 % band, and each method's mean F1 at ``at`` sentences with its interval, side by
    side; a strategy above the band at ``at`` did better than random choice there."""
    plt = pyplot()
    if not panels:
        return []
    methods = list(OrderedDict.fromkeys(m for _, chosen in panels.values() for m, _ in chosen))
    colours = plt.get_cmap("tab10")
    fig, axes = plt.subplots(1, len(panels), figsize=(4.6 * len(panels), 3.8), squeeze=False)
    for ax, (corpus, (curve, chosen)) in zip(axes.flat, panels.items()):
        if curve:
            ns = [n for n, _ in curve]
            ax.plot(ns, [mean for _, (mean, _, _) in curve], marker="o", color="grey", label="random sentences")
            _band(ax, [(n, low, high) for n, (_, low, high) in curve if low is not None], "grey")
        for method, (mean, low, high) in chosen:
            i = methods.index(method)
            x = at * 1.04 ** (i - (len(methods) - 1) / 2)  # side by side around ``at`` on the log axis
            err = [[0.0], [0.0]] if low is None else [[mean - low], [high - mean]]
            ax.errorbar([x], [mean], yerr=err, fmt="o", capsize=2, markersize=4, color=colours(i % 10), label=method)
        ticks = sorted({n for n, _ in curve} | {at})
        ax.set_xscale("log")
        ax.set_xticks(ticks, [str(t) for t in ticks])
        ax.minorticks_off()
        ax.set_title(corpus)
        ax.set_xlabel("annotated sentences")
        ax.set_ylabel("entity F1 (%)")
        ax.grid(alpha=0.3)
    handles, labels = _legend(axes)
    fig.legend(handles, labels, loc="lower center", ncol=min(len(labels), 4), frameon=False)
    fig.tight_layout(rect=(0, 0.06 * math.ceil(len(labels) / 4), 1, 1))
    return save_and_close(fig, out_dir, stem, formats)
