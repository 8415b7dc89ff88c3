"""The table of issue 23: the fixed auc_ner heads against spaCy's default ner, per corpus x size.

Reads the heads' rows (results/heads_lowres/) and spaCy's ner and the unfixed heads'
rows of studies/lowres_recipe.yaml (results/lowres_recipe/: the same cells, so rows pair
by corpus, size and partition), and prints, for every method, corpus and size: the mean test
F1 (strict seqeval micro, %), the mean dev F1 early stopping saw, the ratio of the mean test
F1 to spaCy ner's, the paired t-test p over the partitions both have (scipy ttest_rel), the
number of pairs, and for a fixed head (name <head>_cal...) the unfixed head's mean test F1 on
the same partitions with its paired p; then each method's ratio averaged over the corpus x size cells it has.
Cells with fewer than 5 pairs are shown as they are, marked incomplete.
Then the recipe decision (issue 23 point 3): the fixed head with the recipe's extras
(bilstm_crf_cal_wd_extras) against spaCy's ner with the same extras (recipe_rounds2, the
recipe until then), dev F1 (what the decision reads) and test F1, paired per cell and pooled.

  python -m scripts.heads_lowres_table [--markdown docs/evidence/heads_lowres.md]   (from projects/lab)
"""
import argparse
from collections import defaultdict
from pathlib import Path

import numpy
from scipy.stats import ttest_rel

ROOT = Path(__file__).resolve().parents[1]
BASELINE = "spacy_ner"
REFERENCE = ["crf", "bilstm_crf"]  # the unfixed heads of lowres_recipe
CORPORA = ["conll2003", "ncbi_disease", "s800"]
SIZES = [20, 50]


def load(path, methods=None):
    """{(method, corpus, size): {partition: (test F1 %, dev F1 %)}}, the last ok row of a cell
    (of the results store `path`, every row of it)."""
    from auc_ner_lab.store import ResultsStore

    out = defaultdict(dict)
    for r in ResultsStore(path).rows():
        if r.get("status") != "ok" or r.get("size") not in SIZES or (methods and r["method"] not in methods):
            continue
        s = r["scores"]
        out[(r["method"], r["corpus"], r["size"])][r["partition"]] = (100 * s["ents_seqeval_micro_f"], 100 * (s.get("dev_score") or 0.0))
    return out


def table(heads_path, recipe_path):
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
                p = f"{ttest_rel(a, b).pvalue:.3f}" if len(parts) > 1 else "–"
                if ratio is not None:
                    ratios.append(ratio)
                pooled.setdefault(m, []).extend(zip(a, b))
                unfixed, p_unfixed = "", ""
                ref = rows.get((m.split("_cal")[0], c, n), {}) if m not in REFERENCE else {}
                if ref and all(q in ref for q in parts):
                    u = numpy.asarray([ref[q][0] for q in parts])
                    unfixed = f"{u.mean():.1f}"
                    p_unfixed = f"{ttest_rel(a, u).pvalue:.3f}" if len(parts) > 1 else "–"
                mark = "" if len(parts) >= 5 else " (incomplete)"
                ratio_text = "–" if ratio is None else f"{ratio:.2f}x"
                lines.append(f"| {m} | {c} | {n} | {a.mean():.1f} | {dev:.1f} | {b.mean():.1f} | {ratio_text} | {p} | {unfixed} | {p_unfixed} | {len(parts)}{mark} |")
        if ratios:
            averages[m] = (float(numpy.mean(ratios)), len(ratios), float(numpy.min(ratios)))
    # one paired t-test over every (corpus, size, partition) pair a method shares with spaCy's ner
    def pooled_text(m):
        a, b = (numpy.asarray(x) for x in zip(*pooled[m]))
        if len(a) < 2:
            return "–"
        return f"{a.mean() - b.mean():+.1f} points, p={ttest_rel(a, b).pvalue:.3g}, {len(a)} pairs"

    lines.append("")
    lines.append("| method | mean ratio to spaCy ner | lowest cell ratio | corpus x size cells | pooled paired difference to spaCy ner |")
    lines.append("|---|---|---|---|---|")
    for m, (mean, k, low) in averages.items():
        lines.append(f"| {m} | {mean:.2f}x | {low:.2f}x | {k} of {len(CORPORA) * len(SIZES)} | {pooled_text(m)} |")
    return "\n".join(lines)


HEAD_EXTRAS, NER_EXTRAS = "bilstm_crf_cal_wd_extras", "recipe_rounds2"


def recipe_table(recipe_path):
    """The fixed head with the extras against spaCy's ner with the same extras, dev and test."""
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
                against_ner[name].extend((own[p][0], plain[p][0]) for p in parts if p in plain)
            cols = []
            for i in (1, 0):  # dev, then test
                a = numpy.asarray([mine[p][i] for p in parts])
                b = numpy.asarray([theirs[p][i] for p in parts])
                pooled[i].extend(zip(a, b))
                p_text = f"{ttest_rel(a, b).pvalue:.3f}" if len(parts) > 1 else "–"
                cols.append((a.mean(), b.mean(), p_text))
            (da, db, dp), (ta, tb, tp) = cols
            ratio = f"{ta / tb:.2f}x" if tb > 0 else "–"
            base = f"{numpy.mean([plain[p][0] for p in parts if p in plain]):.1f}" if any(p in plain for p in parts) else "–"
            mark = "" if len(parts) >= 5 else " (incomplete)"
            lines.append(f"| {c} | {n} | {da:.1f} | {db:.1f} | {dp} | {ta:.1f} | {tb:.1f} | {ratio} | {tp} | {base} | {len(parts)}{mark} |")
    lines.append("")
    for i, name in ((1, "dev"), (0, "test")):
        if len(pooled[i]) > 1:
            a, b = (numpy.asarray(x) for x in zip(*pooled[i]))
            lines.append(f"- pooled {name}: head+extras {a.mean():.1f}, ner+extras {b.mean():.1f}, "
                         f"{a.mean() - b.mean():+.1f} points (x{a.mean() / b.mean():.2f}), paired t-test p={ttest_rel(a, b).pvalue:.3g}, {len(a)} pairs")
    for name, pairs in against_ner.items():
        if len(pairs) > 1:
            a, b = (numpy.asarray(x) for x in zip(*pairs))
            lines.append(f"- pooled test, `{name}` against spaCy's default ner: {a.mean():.1f} vs {b.mean():.1f}, "
                         f"{a.mean() - b.mean():+.1f} points (x{a.mean() / b.mean():.2f}), paired t-test p={ttest_rel(a, b).pvalue:.3g}, {len(a)} pairs")
    return "\n".join(lines)


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--heads", default=ROOT / "results" / "heads_lowres")
    p.add_argument("--recipe", default=ROOT / "results" / "lowres_recipe")
    p.add_argument("--markdown", default=None, help="also write the table under this file's '## Table' heading")
    a = p.parse_args()
    text = table(a.heads, a.recipe)
    text += ("\n\n## The recipe decision\n\nThe fixed head with the recipe's extras (`bilstm_crf_cal_wd_extras`, today's "
             "recipe `lowres_best`) against spaCy's ner with the same extras (`recipe_rounds2`, "
             "the recipe `lowres_spacy_ner`), same draws, 600 steps, untuned; chosen on dev F1. The head's dev F1 is "
             "optimistic: its entity bias is chosen on the same dev sample that scores it (test F1 is held out).\n\n"
             + recipe_table(a.recipe))
    print(text)
    if a.markdown:
        path = Path(a.markdown)
        head = path.read_text(encoding="utf8").split("## Table")[0] if path.exists() else "# heads_lowres\n\n"
        path.write_text(head + "## Table\n\n(generated by scripts/heads_lowres_table.py from results/heads_lowres/ and results/lowres_recipe/; test F1 = strict IOB2 seqeval micro F1, %)\n\n" + text + "\n", encoding="utf8")


if __name__ == "__main__":
    main()
