"""The evidence of the annotation loop (studies/campaign_selection.yaml, issue 47): the recipe on
20 drawn sentences + 30 chosen by a strategy against the recipe on 50 random sentences, and how
many random sentences reach the same F1.

The random side is campaign_trf_nodev's ``lowres_best_trf`` rows, the same protocol: its n=50
draw of a partition is the first 50 of the seeded order whose first 20 are the loop's draw, so
each loop row pairs with the 50-random row of its corpus and partition (the draw is the unit of
the paired t-test). "How many random sentences reach the same F1": the random recipe's mean F1 at
each size it has rows for (20, 50, 100, ...), on the draws the strategy has, interpolated
linearly in log n at the strategy's mean F1.

Each strategy is also read against the loop's own random control of its schedule (``random_30``
for ``mnlp_30``: the same draws, 20 + 30 random sentences, trained in the same study and mostly on
the same device), because the 50-random rows and the loop's rows may come from different device
kinds (CPU and GPU train apart numerically): each comparison says how many of its pairs mix them.
The best strategy is the best of the strategies, never a random control. A method that chooses
in three rounds of 10 (retrained between them) is also read against its one-batch twin, the same
strategy choosing 30 at once (issue 47's "10 + 10 + 10 against one batch of 30").

Pure functions of ``{(method, corpus, size): MethodResult}`` maps (`aggregate.aggregate`), so
that tests give them hand-made rows.
"""
import math
from typing import Any, List, Mapping, Optional, Sequence, Tuple

from ..aggregate import crosses_devices
from ..stats import paired_t_test, summarize
from .nodev import cell_count, difference, short_difference

Results = Mapping[Tuple[str, str, Optional[int]], Any]  # (method, corpus, size) -> MethodResult (.scores: {partition: F1})
CONTROL = "random_"  # the loop's methods that choose at random (the controls), by name
RANDOM_METHOD, DRAW, CHOSEN = "lowres_best_trf", 20, 50  # campaign_trf_nodev's recipe; 20 drawn, 20 + 30 trained on
TOTAL_CELLS = 90  # campaign_selection's
GOAL_POINTS = 3.0  # issue 47: the best strategy at least 3 points above 50 random sentences, p < 0.05
GOAL_SIZE = 100  # ... and at the F1 of 100 random sentences on at least one corpus
FIGURE = "f1_vs_annotated"  # docs/evidence/campaign_selection/FIGURE.png and .svg (`plots.plot_selection`)


def methods_of(loop: Results) -> List[str]:
    """The loop's methods with rows, in the order first met (the spec's, for aggregate's maps)."""
    return list(dict.fromkeys(method for method, _, _ in loop))


def control_of(method: str) -> Optional[str]:
    """The loop's random control of a strategy's schedule (``mnlp_10x3`` -> ``random_10x3``);
    None for a control itself."""
    if method.startswith(CONTROL):
        return None
    return CONTROL + method.split("_", 1)[1] if "_" in method else None


def _pairs(loop: Results, method: str, other: Results, other_method: str, other_size: int,
           corpus: Optional[str] = None) -> List[Tuple[float, float, bool]]:
    """(loop F1, other F1, whether the two rows trained on different device kinds), one per draw
    (corpus, partition) both have."""
    return [(r.scores[p], twin.scores[p], crosses_devices(r, twin, p))
            for (m, c, size), r in sorted(loop.items(), key=lambda kv: str(kv[0])) if m == method and size == DRAW
            and not (corpus and c != corpus) for twin in [other.get((other_method, c, other_size))] if twin is not None
            for p in sorted(set(r.scores) & set(twin.scores))]


def _xy(pairs: Sequence[Tuple[float, float, bool]]) -> Tuple[List[float], List[float]]:
    return [x for x, _, _ in pairs], [y for _, y, _ in pairs]


def pairs_50(loop: Results, method: str, random: Results, corpus: Optional[str] = None) -> Tuple[List[float], List[float]]:
    """(loop F1, 50-random F1), one pair per draw (corpus, partition) both have."""
    return _xy(_pairs(loop, method, random, RANDOM_METHOD, CHOSEN, corpus))


def _mixed(pairs: Sequence[Tuple[float, float, bool]]) -> str:
    mixed = sum(1 for _, _, m in pairs if m)
    return f"; {mixed} of the {len(pairs)} pairs mix a GPU row with a CPU one" if mixed else ""


def _tested(pairs: Sequence[Tuple[float, float, bool]]) -> str:
    """`difference` of the pairs, the device mix inside its parentheses: "+0.6 [-2.1, +3.3]
    points (p = 0.629, 15 draws; 14 of the 15 pairs mix a GPU row with a CPU one)"."""
    text = difference(*_xy(pairs))
    return text[:-1] + _mixed(pairs) + ")"  # `difference` ends in its closing parenthesis


def _control_pairs(loop: Results, method: str) -> Tuple[Optional[str], List[Tuple[float, float, bool]]]:
    """(the control of ``method``, its `_pairs` against it) ([] for a control itself)."""
    control = control_of(method)
    return control, (_pairs(loop, method, loop, control, DRAW) if control else [])


def beats_random(loop: Results, random: Results) -> bool:
    """Whether some strategy lies above every random reference it has rows against (50 random
    sentences, its own random control), each with p < 0.05."""
    for method in methods_of(loop):
        control, own = _control_pairs(loop, method)
        references = [p for p in (_pairs(loop, method, random, RANDOM_METHOD, CHOSEN), own) if p]
        if control is None or not references:
            continue
        tests = [paired_t_test(*_xy(p)) for p in references]
        if all(t.mean_diff > 0 and t.p_value is not None and t.p_value < 0.05 for t in tests):
            return True
    return False


def _best(loop: Results, random: Results):
    """(strategy, paired test, its `_pairs` against 50 random sentences) of the strategy (not a
    random control) furthest above them, or None."""
    best = None
    for method in methods_of(loop):
        pairs = _pairs(loop, method, random, RANDOM_METHOD, CHOSEN)
        if pairs and control_of(method) is not None:
            test = paired_t_test(*_xy(pairs))
            if best is None or test.mean_diff > best[1].mean_diff:
                best = (method, test, pairs)
    return best


def random_curve(random: Results, corpus: str, partitions: Sequence[int]) -> List[Tuple[int, float]]:
    """(n, mean F1) of the random recipe on ``corpus`` at each size that has every one of
    ``partitions``, by size."""
    curve = []
    for (m, c, size), result in random.items():
        if m == RANDOM_METHOD and c == corpus and size is not None and partitions and set(partitions) <= set(result.scores):
            curve.append((size, sum(result.scores[p] for p in partitions) / len(partitions)))
    return sorted(curve)


def equivalent_sentences(f1: float, curve: Sequence[Tuple[int, float]]) -> Tuple[str, Optional[float]]:
    """How many random sentences reach ``f1`` on ``curve`` ((n, mean F1) by n): ("=", n)
    interpolated linearly in log n on the first segment that crosses it, ("<", smallest n)
    below the whole curve, (">", largest n) above it, ("?", None) without a curve."""
    if not curve:
        return "?", None
    if f1 < curve[0][1]:
        return "<", curve[0][0]
    for (n0, y0), (n1, y1) in zip(curve, curve[1:]):
        if y0 <= f1 <= y1 and y1 > y0:
            return "=", math.exp(math.log(n0) + (f1 - y0) / (y1 - y0) * (math.log(n1) - math.log(n0)))
    if f1 == curve[-1][1]:
        return "=", float(curve[-1][0])
    return (">", curve[-1][0]) if f1 > curve[-1][1] else ("<", curve[0][0])


def _worth(loop: Results, random: Results, method: str, corpus: str):
    """(`equivalent_sentences` of ``method``'s mean F1 on ``corpus``, the random curve of its
    draws): how many random sentences its F1 is worth; ("?", None) without rows or curve."""
    scores = {p: f for (m, c, size), r in loop.items() if (m, c, size) == (method, corpus, DRAW) for p, f in r.scores.items()}
    curve = random_curve(random, corpus, sorted(scores)) if scores else []
    return (equivalent_sentences(sum(scores.values()) / len(scores), curve) if curve else ("?", None)), curve


def _sentences_text(found: Tuple[str, Optional[float]]) -> str:
    how, n = found
    if how == "=":
        return f"≈ {n:.0f} random sentences"
    return f"{'fewer than' if how == '<' else 'more than'} {n} random sentences"


def one_batch_of(method: str) -> Optional[str]:
    """The one-batch twin of a method that chooses in rounds (``mnlp_10x3`` -> ``mnlp_30``: the
    same strategy, 30 sentences chosen at once); None for a one-batch method."""
    strategy, _, schedule = method.partition("_")
    return f"{strategy}_{CHOSEN - DRAW}" if schedule and schedule != str(CHOSEN - DRAW) else None


def _row(loop: Results, random: Results, method: str) -> str:
    """`method`'s line of the strategies' table: draws, the paired difference against 50
    random sentences, against the loop's own random control of its schedule, and (for a method
    that chooses in rounds) against its one-batch twin."""
    pairs = _pairs(loop, method, random, RANDOM_METHOD, CHOSEN)
    control, own = _control_pairs(loop, method)
    draws = len({(c, p) for (m, c, size), r in loop.items() if m == method and size == DRAW for p in r.scores})
    against = _tested(pairs) if pairs else "no 50-random row of its draws yet"
    versus = f"`{control}`: {_tested(own)}" if own else ("(a random control)" if control is None else f"`{control}`: no rows of its draws yet")
    twin = one_batch_of(method)
    batch = _pairs(loop, method, loop, twin, DRAW) if twin else []
    at_once = f"`{twin}`: {_tested(batch)}" if batch else ("–" if twin is None else f"`{twin}`: no rows of its draws yet")
    return f"| `{method}` | {draws} | {against} | {versus} | {at_once} |"


def _corpus_rows(loop: Results, random: Results, method: str, corpora: Sequence[str]) -> List[str]:
    """`method`'s lines of the per-corpus table: mean test F1, the random sentences it is worth,
    and the paired difference against its control on that corpus."""
    control = control_of(method)
    lines = []
    for corpus in corpora:
        scores = [f for (m, c, size), r in loop.items() if (m, c, size) == (method, corpus, DRAW) for f in r.scores.values()]
        if not scores:
            continue
        (how, n), _ = _worth(loop, random, method, corpus)
        worth = "no random curve of its draws yet" if how == "?" else _sentences_text((how, n))
        own = _pairs(loop, method, loop, control, DRAW, corpus) if control else []
        versus = short_difference(*_xy(own)) if own else "–"
        lines.append(f"| `{method}` | {corpus} | {100 * sum(scores) / len(scores):.1f} | {worth} | {versus} |")
    return lines


def readme_text(loop: Results, random: Results, corpora: Sequence[str], rows: Sequence[Mapping[str, Any]] = ()) -> str:
    """The loop's evidence for docs/evidence/transformer.md (the README has `readme_short`),
    generated from the rows: how many cells have rows; a table of each method (strategy and
    schedule) against 50 random sentences and against its own random control, paired by draw;
    a table per corpus of its mean F1, the random sentences that F1 is worth and the difference
    to its control there; what the methods chose (`chosen_table`, from the loop's ``rows``); the
    issue's goal read on these rows."""
    cells = cell_count(loop)
    if cells == 0:
        return f"no rows yet (0 of {TOTAL_CELLS} cells of studies/campaign_selection.yaml).\n"
    methods = methods_of(loop)
    lines = [f"{cells} of {TOTAL_CELLS} cells have rows. 20 drawn + 30 chosen sentences (the recipe without a dev set), test F1 "
             "in points, paired by draw (a corpus and partition); a pair \"mixes\" when its two rows trained on different "
             "device kinds:", "",
             "| method | draws | against 50 random sentences | against the loop's own random control "
             "| rounds of 10 against one batch of 30 |", "|---|---:|---|---|---|",
             *(_row(loop, random, m) for m in methods), "",
             "By corpus: the mean test F1, how many random sentences reach it (the recipe's mean F1 at 20, 50 and 100 random "
             "sentences on the same draws, interpolated in log n), and the difference to the loop's own random control:", "",
             "| method | corpus | F1 | as good as | against its control |", "|---|---|---:|---|---|",
             *(line for m in methods for line in _corpus_rows(loop, random, m, corpora)), ""]
    chosen = chosen_table(rows, corpora)
    lines += [chosen] if chosen else []
    best = _best(loop, random)
    if best is None:
        return "\n".join(lines + ["No strategy has a 50-random row of its draws yet."]) + "\n"
    method, test, _ = best
    met = 100 * test.mean_diff >= GOAL_POINTS and test.p_value is not None and test.p_value < 0.05
    verdict = "" if beats_random(loop, random) else (
        " Shen et al. (2018) report MNLP reaching full-data F1 with about a quarter of the data; on these rows no strategy "
        "beats random choice (none lies above the random references it has, 50 random sentences and its own random control, "
        "with p < 0.05).")
    lines.append(f"Goal (+{GOAL_POINTS:.0f} points, p < 0.05) for the best strategy, `{method}`: {'met' if met else 'not met'}; "
                 f"{reaches_text(loop, random, method, corpora)} on these rows.{verdict}")
    return "\n".join(lines) + "\n"


def chosen_table(rows: Sequence[Mapping[str, Any]], corpora: Sequence[str]) -> str:
    """What each method chose, from its rows' ``selection`` records (every batch's sentences,
    tokens and gold entities): per method and corpus, the chosen sentences, their mean length in
    tokens and mean gold entities; an annotator's effort grows with the tokens, not the
    sentences. "" without selection records."""
    totals: dict = {}
    for row in rows:
        record = (row.get("scores") or {}).get("selection") or {}
        for batch in record.get("batches", []):
            t = totals.setdefault((row["method"], row["corpus"]), [0, 0, 0])
            t[0], t[1], t[2] = t[0] + len(batch["selected"]), t[1] + batch["tokens"], t[2] + batch["entities"]
    if not totals:
        return ""
    methods = list(dict.fromkeys(method for method, _ in totals))
    lines = ["What the methods chose (their rows' records of every batch): the sentences, their mean length in tokens "
             "and their mean gold entities, by corpus:", "",
             "| method | " + " | ".join(f"{c}: sentences, tokens, entities" for c in corpora) + " |",
             "|---|" + "---:|" * len(corpora)]
    for method in methods:
        cells = []
        for corpus in corpora:
            n, tokens, entities = totals.get((method, corpus), (0, 0, 0))
            cells.append(f"{n}, {tokens / n:.1f}, {entities / n:.2f}" if n else "–")
        lines.append(f"| `{method}` | " + " | ".join(cells) + " |")
    return "\n".join(lines) + "\n"


def readme_short(loop: Results, random: Results) -> str:
    """README's sentence on the loop (`readme_text` has every method and corpus): interim while
    cells are missing; the best strategy against 50 random sentences, paired by draw, the
    issue's goal read on it, and, where no strategy beats random choice, that it does not (the
    issue: "If no strategy beats random, that is a result: README says so")."""
    cells = cell_count(loop)
    if cells == 0:
        return f"no rows yet (0 of {TOTAL_CELLS} cells of studies/campaign_selection.yaml)\n"
    head = f"interim, {cells} of {TOTAL_CELLS} cells so far" if cells < TOTAL_CELLS else f"all {TOTAL_CELLS} cells"
    best = _best(loop, random)
    if best is None:
        return f"{head}; no strategy has a 50-random row of its draws yet\n"
    method, test, pairs = best
    met = 100 * test.mean_diff >= GOAL_POINTS and test.p_value is not None and test.p_value < 0.05
    verdict = "" if beats_random(loop, random) else (
        "; no strategy beats random choice on these rows (none lies above both random references with p < 0.05), so "
        "`suggest` is a tool here, not a measured gain")
    return (f"{head}: the best strategy, `{method}`, {short_difference(*_xy(pairs))} against 50 random sentences (test F1, paired by "
            f"draw{_mixed(pairs)}){_short_control(loop, method)}; goal +{GOAL_POINTS:.0f} points with p < 0.05: "
            f"{'met' if met else 'not met'}{' so far' if cells < TOTAL_CELLS else ''}{verdict}\n")


def _short_control(loop: Results, method: str) -> str:
    control, pairs = _control_pairs(loop, method)
    if not pairs:
        return ""
    return f", {short_difference(*_xy(pairs))} against the loop's own random `{control}`"


GUARD = "_min5"  # studies/campaign_selection_guard.yaml: a one-batch strategy with suggest --min-tokens 5


def guard_text(guard: Results, loop: Results, random: Results, total: int) -> str:
    """The length guard's reading, fixed in its spec before any row: each guarded strategy
    against its unguarded twin in campaign_selection (``mnlp_30_min5`` against ``mnlp_30``) and
    against 50 random sentences, test F1 paired by draw; interim while fewer than `total`
    cells (the spec's) have rows."""
    cells = cell_count(guard)
    head = (f"The length guard (`suggest --min-tokens 5`, studies/campaign_selection_guard.yaml, fixed before its rows): "
            f"{cells} of {total} cells" + (" so far" if cells < total else ""))
    parts = []
    for method in methods_of(guard):
        twin = method.removesuffix(GUARD)
        against = [(f"`{twin}`", _pairs(guard, method, loop, twin, DRAW)),
                   ("50 random sentences", _pairs(guard, method, random, RANDOM_METHOD, CHOSEN))]
        said = [f"against {name} {_tested(pairs)}" for name, pairs in against if pairs]
        parts.append(f"`{method}` " + ("; ".join(said) if said else "has no pairs yet"))
    return head + (": " + "; ".join(parts) if parts else "; the comparisons follow when it has rows") + ".\n"


def reaches_text(loop: Results, random: Results, method: str, corpora: Sequence[str]) -> str:
    """Whether ``method`` reaches the F1 of `GOAL_SIZE` random sentences on at least one corpus
    (only corpora whose random curve has that size count)."""
    judged = []
    for corpus in corpora:
        (how, n), curve = _worth(loop, random, method, corpus)
        if GOAL_SIZE in dict(curve):
            judged.append(how in ("=", ">") and n is not None and n >= GOAL_SIZE)
    if not judged:
        return f"the F1 of {GOAL_SIZE} random sentences: no {GOAL_SIZE}-sentence rows of its draws yet"
    return f"the F1 of {GOAL_SIZE} random sentences on at least one corpus: {'met' if any(judged) else 'not met'}"


Point = Tuple[float, Optional[float], Optional[float]]  # mean F1 and its 95 % interval in points (no interval from one draw)


def _point(scores: Sequence[float]) -> Point:
    s = summarize(scores)
    return 100 * s.mean, None if s.low is None else 100 * s.low, None if s.high is None else 100 * s.high


def figure_points(loop: Results, random: Results, corpora: Sequence[str]):
    """What the figure (`plots.plot_selection`) draws, by corpus: the random recipe's curve
    ``[(n, Point)]`` at each size it has rows for, and each loop method's ``(method, Point)``
    at its 50 annotated sentences (20 drawn + 30 chosen); corpora without rows are left out."""
    out = {}
    for corpus in corpora:
        curve = sorted((size, _point(list(r.scores.values()))) for (m, c, size), r in random.items()
                       if m == RANDOM_METHOD and c == corpus and size is not None and r.scores)
        chosen = [(m, _point(list(r.scores.values()))) for (m, c, size), r in loop.items() if c == corpus and size == DRAW and r.scores]
        if curve or chosen:
            out[corpus] = (curve, chosen)
    return out
