"""The evidence of the protocol "n in all" (studies/campaign_trf_nodev.yaml): what the lab's
200-sentence dev sample buys each method, and the recipe against the Hugging Face peer when
neither has one. Every row of it pairs with its dev-selected twin in campaign_trf_recipe (the
same method, corpus, size and partition: the same draw). The draw is the unit of every test:
a partition's 20 sentences are the first 20 of its 50, so its two sizes are averaged
(`stats.draw_means`) before the paired t-test.

Pure functions of ``{(method, corpus, size): MethodResult}`` maps (`aggregate.aggregate`), so
that tests give them hand-made rows.
"""
import statistics
from typing import Any, List, Mapping, Optional, Sequence, Tuple

from ..stats import p_words, paired_difference
from .pairs import draw_lists, shared_cells

Results = Mapping[Tuple[str, str, Optional[int]], Any]  # (method, corpus, size) -> MethodResult
RECIPE, PEER, CPU_RECIPE = "lowres_best_trf", "hf_token_classification", "lowres_best"
METHODS = (RECIPE, "crf", "spacy_ner", PEER)
NAMES = {RECIPE: "the recipe", "crf": "the CRF head alone", "spacy_ner": "spaCy's `ner`", PEER: "the HF peer"}
TOTAL_CELLS, CPU_CELLS = 120, 10  # campaign_trf_nodev's and campaign_cpu_nodev's


def pairs(a: Results, method_a: str, b: Results, method_b: str, corpora: Optional[Sequence[str]] = None) -> Tuple[List[float], List[float]]:
    """One (a, b) pair per draw (corpus, partition) that both have at every size they share,
    the sizes averaged."""
    found = shared_cells(a, method_a, b, method_b, corpus=corpora)
    return draw_lists(((c, p), r.scores[p], o.scores[p]) for c, r, o, p in found)


def _draws(n: int) -> str:
    return f"{n} draw{'s' if n != 1 else ''}"


def cell_count(results: Results, method: Optional[str] = None) -> int:
    """The cells with rows in `results` (of `method` only, when given)."""
    return sum(len(r.scores) for (m, _, _), r in results.items() if method in (None, m))


def difference(xs: Sequence[float], ys: Sequence[float], interval: bool = True) -> str:
    """"+1.2 [-0.3, +2.7] points (p=0.120, 15 draws)": xs - ys in F1 points, the 95 % interval of
    the differences (none from one draw; none without `interval`) and the paired t-test's p-value."""
    t, text = paired_difference(xs, ys)
    p = "no p-value" if t.p_value is None else p_words(t.p_value)
    return f"{text if interval else f'{100 * t.mean_diff:+.1f}'} points ({p}, {_draws(t.n)})"


def short_difference(xs: Sequence[float], ys: Sequence[float]) -> str:
    """"+1.2 points (p = 0.120, 15 draws)": `difference` without the interval, for the README."""
    return difference(xs, ys, interval=False)


def _ratio(xs: Sequence[float], ys: Sequence[float]) -> Optional[float]:
    """The ratio of the pooled means (not a mean of per-cell ratios, which small cells lift)."""
    total = sum(ys)
    return sum(xs) / total if total > 0 else None


def peer_ratio(a: Results, method: str, peer: Results, corpora: Sequence[str]):
    """(ratio, {corpus: ratio}, goal, xs, ys): `method`'s rows in `a` against the no-dev peer's in
    `peer` by the ratio of pooled means, overall and per corpus (where it has pairs), whether
    issue 44's goal holds on them ("met": ×1.4 with no corpus below ×1.0) and the pairs; ratio
    None without pairs."""
    xs, ys = pairs(a, method, peer, PEER)
    ratio = _ratio(xs, ys)
    shown = {c: r for c, r in ((c, _ratio(*pairs(a, method, peer, PEER, corpora=[c]))) for c in corpora) if r is not None}
    goal = "met" if ratio is not None and ratio >= 1.4 and all(r >= 1.0 for r in shown.values()) else "not met"
    return ratio, shown, goal, xs, ys


def kept_share(nodev: Results, method: str, dev: Results) -> Tuple[Optional[float], int, str]:
    """(share, draws, goal): the no-dev rows' pooled test F1 over their dev-selected twins' (the
    recipe's in campaign_trf_recipe), over the draws both have (None without pairs), and whether
    issue 44's goal holds on them ("met": at least 95 %)."""
    xs, ys = pairs(nodev, method, dev, RECIPE)
    share = _ratio(xs, ys)
    return share, len(xs), "met" if share is not None and share >= 0.95 else "not met"


def _per_corpus(ratios: Mapping[str, float]) -> str:
    """"a ×1.20, b ×0.90": `peer_ratio`'s ratios by corpus."""
    return ", ".join(f"{c} ×{r:.2f}" for c, r in ratios.items())


def protocol_text(nodev: Results, dev: Results, corpora: Sequence[str]) -> str:
    """The protocol's sentences, for docs/evidence/transformer.md: how many cells have rows,
    what the dev sample buys each method (dev-selected minus no-dev, paired by draw), the share
    of its dev-selected F1 the recipe keeps, and the recipe's no-dev ratio to the no-dev peer
    (overall and per corpus)."""
    cells = cell_count(nodev)
    head = f"{cells} of {TOTAL_CELLS} no-dev cells have rows" + (" so far" if cells < TOTAL_CELLS else "")
    if cells == 0:
        return head + "; the comparisons follow when they do.\n"
    bought = [f"{NAMES[m]} {difference(xs, ys)}" for m in METHODS for xs, ys in [pairs(dev, m, nodev, m)] if xs]
    parts = [head]
    if bought:
        parts.append("what the 200-sentence dev sample buys (dev-selected minus no-dev test F1, the same draws): " + "; ".join(bought))
    kept, n, kept_goal = kept_share(nodev, RECIPE, dev)
    if kept is not None:
        parts.append(f"without a dev set the recipe keeps {100 * kept:.0f} % of its dev-selected test F1 (pooled over {_draws(n)}; "
                     f"goal 95 %: {kept_goal} on these rows)")
    ratio, shown, goal, xs, ys = peer_ratio(nodev, RECIPE, nodev, corpora)
    if ratio is not None:
        parts.append(f"without a dev set on either side the recipe is ×{ratio:.2f} the peer by the ratio of pooled means "
                     f"({_per_corpus(shown)}), {difference(xs, ys)}; goal ×1.4 with no corpus below ×1.0: {goal} on these rows")
    return "; ".join(parts) + ".\n"


def cpu_text(nodev: Results, dev: Results) -> str:
    """The CPU recipe's sentence (studies/campaign_cpu_nodev.yaml against its twins in
    lowres_recipe): what the dev sample buys it and the share of its dev-selected F1 it keeps."""
    cells = cell_count(nodev, CPU_RECIPE)
    head = f"the CPU recipe `{CPU_RECIPE}` on NCBI-disease: {cells} of {CPU_CELLS} no-dev cells" + (" so far" if cells < CPU_CELLS else "")
    xs, ys = pairs(dev, CPU_RECIPE, nodev, CPU_RECIPE)
    if not xs:
        return head + ".\n"
    kept = _ratio(ys, xs)
    share = "" if kept is None else f", keeping {100 * kept:.0f} % of its dev-selected test F1"
    return f"{head}; the dev sample buys it {difference(xs, ys)}{share}.\n"


def chosen_budget_text(chosen: Results, nodev: Results, dev: Results, method: str, total: int, corpora: Sequence[str]) -> str:
    """The recipe at the budget campaign_trf_budget's rule chose (campaign_trf_nodev60's rows,
    method `method`), under "n in all", paired by draw with: its 30-epoch twin, the no-dev peer
    (the ratio of pooled means, per corpus too, with issue 44's goal) and the recipe's
    dev-selected twin in campaign_trf_recipe (what the dev sample buys, the share it keeps)."""
    cells = cell_count(chosen)
    so_far = " so far" if cells < total else ""
    head = f"the recipe at 60 epochs, {cells} of {total} no-dev cells" + (" so far (interim)" if so_far else "")
    if cells == 0:
        return head + ".\n"
    parts = []
    xs, ys = pairs(chosen, method, nodev, RECIPE)
    if xs:
        parts.append(f"minus the recipe at 30 epochs {difference(xs, ys)}")
    ratio, shown, goal, xs, ys = peer_ratio(chosen, method, nodev, corpora)
    if ratio is not None:
        parts.append(f"×{ratio:.2f} the no-dev HF peer by the ratio of pooled means ({_per_corpus(shown)}), {difference(xs, ys)}; "
                     f"goal ×1.4 with no corpus below ×1.0: {goal}{so_far}")
    xs, ys = pairs(dev, RECIPE, chosen, method)
    kept, _, kept_goal = kept_share(chosen, method, dev)
    if xs and kept is not None:
        parts.append(f"the dev sample (the recipe at 30 epochs with it) buys it {difference(xs, ys)}; without it the recipe keeps "
                     f"{100 * kept:.0f} % of that dev-selected test F1 (goal 95 %: {kept_goal}{so_far})")
    return head + (": " + "; ".join(parts) if parts else "") + ".\n"


def chosen_budget_short(chosen: Results, nodev: Results, dev: Results, method: str, total: int, corpora: Sequence[str]) -> str:
    """README's phrase on the recipe at the chosen budget (`chosen_budget_text` has the intervals
    and the corpora)."""
    cells = cell_count(chosen)
    interim = f" (interim, {cells} of {total} cells)" if cells < total else f" (all {total} cells)"
    if cells == 0:
        return f"no rows yet{interim}"
    parts = []
    ratio, _, goal, xs, ys = peer_ratio(chosen, method, nodev, corpora)
    if ratio is not None:
        parts.append(f"×{ratio:.2f} the no-dev peer by the ratio of pooled means, {short_difference(xs, ys)[:-1]}; "
                     f"goal ×1.4 with no corpus below ×1.0: {goal})")
    xs, ys = pairs(chosen, method, nodev, RECIPE)
    if xs:
        parts.append(f"{short_difference(xs, ys)} over the same recipe at 30 epochs")
    kept, _, kept_goal = kept_share(chosen, method, dev)
    if kept is not None:
        parts.append(f"{100 * kept:.0f} % of the dev-selected recipe's test F1 (goal 95 %: {kept_goal})")
    return ", ".join(parts) + interim


def run_minutes(rows: Sequence[Mapping[str, Any]]) -> str:
    """How long a no-dev run of the recipe takes, for the README: the median wall time of the
    CPU rows (`rows`: the latest of each cell) at each size, or "" without any."""
    by_size: dict = {}
    for r in rows:
        if r.get("device") == "cpu" and isinstance(r.get("seconds"), (int, float)):
            by_size.setdefault(r["size"], []).append(r["seconds"] / 60)
    if not by_size:
        return ""
    said = ", ".join(f"{statistics.median(by_size[n]):.0f} min at {n} sentences" for n in sorted(by_size))
    runs = sum(len(v) for v in by_size.values())
    return f"on one CPU core, MiniLM: {said} (the median wall time of the lab's {runs} no-dev runs: no pretraining, one self-training round on 1000 raw sentences)"
