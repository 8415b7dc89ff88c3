"""The tables of issue 23 (docs/evidence/heads_lowres.md's generated blocks): the fixed auc_ner
heads (results/heads_lowres/) against spaCy's default ner and the unfixed heads of
studies/lowres_recipe.yaml (results/lowres_recipe/: the same cells, so rows pair by corpus, size
and partition), per corpus x size and pooled one pair per draw (a partition's 20 sentences are
the first 20 of its 50, so its two sizes are averaged); then the recipe decision (issue 23 point
3): the fixed head with the recipe's extras (lowres_best) against spaCy's ner with the same
extras (lowres_spacy_ner), on dev (what the decision reads) and test. Cells with fewer than 5
pairs are marked incomplete; a cell with a row that records no library versions is marked †.
"""
from collections import defaultdict

import numpy
from scipy.stats import ttest_rel

from ..spec import load_spec
from ..stats import draw_means
from ..store import ResultsStore, spec_of

BASELINE = "spacy_ner"
REFERENCE = ["crf", "bilstm_crf"]  # the unfixed heads of lowres_recipe
CORPORA = ["conll2003", "ncbi_disease", "s800"]
SIZES = [20, 50]


def spec_rows(path):
    """The rows of the results store `path`, named as its spec studies/<store>.yaml names its
    cells now, whatever name a row was written under."""
    return ResultsStore(path).rows_for(load_spec(spec_of(path)).cells())


def load(path, methods=None):
    """{(method, corpus, size): {partition: (test F1 %, dev F1 %, versions recorded)}}, the last
    ok row of a cell of the results store `path` (`spec_rows`)."""
    out = defaultdict(dict)
    for r in spec_rows(path):
        if r.get("status") != "ok" or r.get("size") not in SIZES or (methods and r["method"] not in methods):
            continue
        s = r["scores"]
        out[(r["method"], r["corpus"], r["size"])][r["partition"]] = (100 * s["ents_seqeval_micro_f"], 100 * (s.get("dev_score") or 0.0),
                                                                   bool(r.get("versions")))
    return out


def draws(pairs):
    """[((corpus, partition), a, b), ...] -> (a's, b's) as arrays, one mean pair per draw."""
    means = draw_means(pairs)
    return numpy.asarray([a for a, _ in means.values()]), numpy.asarray([b for _, b in means.values()])


def _p(a, b) -> str:
    """The paired t-test's p-value of two arrays, "–" for one pair."""
    return f"{ttest_rel(a, b).pvalue:.3f}" if len(a) > 1 else "–"


def _pairs_mark(parts) -> str:
    return f"{len(parts)}" + ("" if len(parts) >= 5 else " (incomplete)")


def _pooled(pairs, summary: dict, key: str):
    """(mean a, mean b, p, draws) of `draws(pairs)`, also put in `summary[key]`."""
    a, b = draws(pairs)
    summary[key] = (a.mean(), b.mean(), ttest_rel(a, b).pvalue, len(a))
    return summary[key]


def unversioned(*cells, parts) -> str:
    """'†' when a row of these cells on these partitions records no versions."""
    return " †" if any(not cell[p][2] for cell in cells for p in parts if p in cell) else ""


UNVERSIONED_NOTE = ("† a row of the cell records no library versions or commit (written before rows "
                    "recorded them; not rerun).")


def table(heads_path, recipe_path, summary=None):
    """The markdown tables; `summary`, a dict, receives per method what the last table prints
    (mean_ratio, low, cells, ratios per (corpus, size), diff, p, draws, unversioned), for
    sentences that cite it."""
    summary = {} if summary is None else summary
    rows = load(recipe_path, [BASELINE] + REFERENCE)
    heads = load(heads_path)
    rows.update(heads)
    methods = REFERENCE + sorted({m for m, _, _ in heads})
    lines = ["| method | corpus | n | test F1 | dev F1 | spaCy ner test F1 | ratio | paired p | unfixed head F1 | p vs unfixed | pairs |", "|---|---|---|---|---|---|---|---|---|---|---|"]
    averages, pooled = {}, {}
    for m in methods:
        ratios = []
        for c in CORPORA:
            for n in SIZES:
                mine, base = rows.get((m, c, n), {}), rows.get((BASELINE, c, n), {})
                parts = sorted(set(mine) & set(base))
                if not parts:
                    continue
                a = numpy.asarray([mine[p][0] for p in parts])
                b = numpy.asarray([base[p][0] for p in parts])
                dev = numpy.mean([mine[p][1] for p in parts])
                ratio = a.mean() / b.mean() if b.mean() > 0 else None
                if ratio is not None:
                    ratios.append(ratio)
                    summary.setdefault(m, {"ratios": {}, "unversioned": False})["ratios"][(c, n)] = ratio
                    summary[m]["unversioned"] |= bool(unversioned(mine, base, parts=parts))
                pooled.setdefault(m, []).extend(((c, p), x, y) for p, x, y in zip(parts, a, b))
                unfixed, p_unfixed = "", ""
                ref = rows.get((m.split("_cal")[0], c, n), {}) if m not in REFERENCE else {}
                if ref and all(q in ref for q in parts):
                    u = numpy.asarray([ref[q][0] for q in parts])
                    unfixed = f"{u.mean():.1f}"
                    p_unfixed = _p(a, u)
                ratio_text = "–" if ratio is None else f"{ratio:.2f}x"
                lines.append(f"| {m} | {c} | {n} | {a.mean():.1f} | {dev:.1f} | {b.mean():.1f} | {ratio_text} | {_p(a, b)} | {unfixed} "
                             f"| {p_unfixed} | {_pairs_mark(parts)}{unversioned(mine, base, parts=parts)} |")
        if ratios:
            averages[m] = (float(numpy.mean(ratios)), len(ratios), float(numpy.min(ratios)))
    # one paired t-test over the draws (corpus, partition) a method shares with spaCy's ner
    def pooled_text(m):
        a, b = draws(pooled[m])
        if len(a) < 2:
            return "–"
        p = ttest_rel(a, b).pvalue
        summary[m].update(diff=a.mean() - b.mean(), p=p, draws=len(a))
        return f"{a.mean() - b.mean():+.1f} points, p={p:.3g}, {len(a)} draws"

    lines += ["", "| method | mean ratio to spaCy ner | lowest cell ratio | corpus x size cells | paired difference to spaCy ner over "
              "the draws |", "|---|---|---|---|---|"]
    for m, (mean, k, low) in averages.items():
        summary[m].update(mean_ratio=mean, cells=k, low=low)
        lines.append(f"| {m} | {mean:.2f}x | {low:.2f}x | {k} of {len(CORPORA) * len(SIZES)} | {pooled_text(m)} |")
    return "\n".join(lines + ["", UNVERSIONED_NOTE])


def screen(heads_path, methods=("bilstm_crf_cal", "bilstm_crf_cal_wd"), corpora=("s800", "ncbi_disease"), parts=(0, 1)) -> str:
    """The dev screen that picked the head: mean dev F1 at 20 sentences on partitions 0-1, per
    method and corpus ("`bilstm_crf_cal` 5.5 and 26.8; ...")."""
    rows = load(heads_path, list(methods))
    def mean_dev(m: str, c: str) -> float:
        return numpy.mean([rows[(m, c, 20)][p][1] for p in parts if p in rows.get((m, c, 20), {})])

    return "; ".join(f"`{m}` " + " and ".join(f"{mean_dev(m, c):.1f}" for c in corpora) for m in methods)


HEAD_EXTRAS, NER_EXTRAS = "lowres_best", "lowres_spacy_ner"


def recipe_table(recipe_path, summary=None):
    """The fixed head with the extras against spaCy's ner with the same extras, dev and test;
    `summary`, a dict, receives the pooled tests ("dev", "test", and per method against spaCy's
    ner: (mean a, mean b, p, draws)) and the mean dev-minus-test gap of each method."""
    summary = {} if summary is None else summary
    rows = load(recipe_path, [HEAD_EXTRAS, NER_EXTRAS, BASELINE])
    lines = ["| corpus | n | dev F1 head+extras | dev F1 ner+extras | dev p | test F1 head+extras | test F1 ner+extras | ratio | test p | spaCy ner test F1 | pairs |",
             "|---|---|---|---|---|---|---|---|---|---|---|"]
    pooled = {0: [], 1: []}
    against_ner = {HEAD_EXTRAS: [], NER_EXTRAS: []}  # test F1 pairs with spaCy's default ner
    for c in CORPORA:
        for n in SIZES:
            mine, theirs, plain = (rows.get((m, c, n), {}) for m in (HEAD_EXTRAS, NER_EXTRAS, BASELINE))
            parts = sorted(set(mine) & set(theirs))
            if not parts:
                continue
            for name, own in ((HEAD_EXTRAS, mine), (NER_EXTRAS, theirs)):
                against_ner[name].extend(((c, p), own[p][0], plain[p][0]) for p in parts if p in plain)
            cols = []
            for i in (1, 0):  # dev, then test
                a = numpy.asarray([mine[p][i] for p in parts])
                b = numpy.asarray([theirs[p][i] for p in parts])
                pooled[i].extend(((c, p), x, y) for p, x, y in zip(parts, a, b))
                cols.append((a.mean(), b.mean(), _p(a, b)))
            (da, db, dp), (ta, tb, tp) = cols
            ratio = f"{ta / tb:.2f}x" if tb > 0 else "–"
            base = f"{numpy.mean([plain[p][0] for p in parts if p in plain]):.1f}" if any(p in plain for p in parts) else "–"
            lines.append(f"| {c} | {n} | {da:.1f} | {db:.1f} | {dp} | {ta:.1f} | {tb:.1f} | {ratio} | {tp} | {base}"
                         f"{unversioned(plain, parts=parts)} | {_pairs_mark(parts)}{unversioned(mine, theirs, parts=parts)} |")
    lines.append("")
    for i, name in ((1, "dev"), (0, "test")):
        if len(pooled[i]) > 1:
            a, b, p, k = _pooled(pooled[i], summary, name)
            lines.append(f"- pooled {name}: head+extras {a:.1f}, ner+extras {b:.1f}, {a - b:+.1f} points (x{a / b:.2f}), "
                         f"paired t-test p={p:.3g}, {k} draws")
    for name, pairs in against_ner.items():
        if len(pairs) > 1:
            a, b, p, k = _pooled(pairs, summary, name)
            lines.append(f"- pooled test, `{name}` against spaCy's default ner: {a:.1f} vs {b:.1f}, {a - b:+.1f} points "
                         f"(x{a / b:.2f}), paired t-test p={p:.3g}, {k} draws")
    gaps = {}
    for (m, c, n), by_part in rows.items():
        if m in (HEAD_EXTRAS, NER_EXTRAS):
            gaps.setdefault(m, []).extend(test_dev[1] - test_dev[0] for test_dev in by_part.values())
    summary["optimism"] = {m: float(numpy.mean(g)) for m, g in gaps.items()}
    if len(gaps) == 2:
        lines.append(f"- dev minus test, the optimism of a dev score: `{HEAD_EXTRAS}` {summary['optimism'][HEAD_EXTRAS]:+.1f} points, "
                     f"`{NER_EXTRAS}` {summary['optimism'][NER_EXTRAS]:+.1f} (means over their cells): the head's entity bias is "
                     "calibrated on the dev sample that scores it")
    lines += ["", "Pooled: one pair per draw (corpus, partition; the mean of its 20 and 50 sentences, "
              "the first 20 of one seeded permutation and its first 50). " + UNVERSIONED_NOTE]
    return "\n".join(lines)
