"""The recipe ablation's tables (studies/lowres_recipe.yaml, against spaCy's default `ner`):
docs/evidence/lowres_recipe/ablation.md (ratios to spaCy's `ner`, paired tests, wall time),
parts.md (what each part adds, pooled and per corpus), rerun.md (the same cells trained again),
and the contrasts the documents name in their markers (evidence/recipe/c/A~B.md)."""
import json

from ..aggregate import aggregate
from ..spec import load_spec
from ..stats import METRIC_NAME, p_text, paired_difference, paired_t_test
from ..store import latest_rows
from . import blocks, committed
from .blocks import documents
from .committed import results_by_cell, results_store
from .pairs import mixed_text, paired_lists, per_draw

# what each part of the recipe adds: (what, method with it, method without it[, sizes])
RECIPE_CONTRASTS = [
    ("the extras (the recipe against spaCy's default ner)", "lowres_spacy_ner_rounds1", "spacy_ner"),
    ("augmentation", "lowres_spacy_ner_rounds1", "lowres_spacy_ner_rounds1_no_augment"),
    ("pretraining", "lowres_spacy_ner_rounds1", "lowres_spacy_ner_rounds1_no_pretrain"),
    ("self-training", "lowres_spacy_ner_rounds1", "lowres_spacy_ner_no_self_train"),
    ("a second self-training round", "lowres_spacy_ner", "lowres_spacy_ner_rounds1"),
    ("a third self-training round", "lowres_spacy_ner_rounds3", "lowres_spacy_ner"),
    ("more raw text: 5,000 pool sentences in place of 2,000 (two rounds)", "lowres_spacy_ner_pool5000", "lowres_spacy_ner"),
    ("raw text (the recipe against it without raw text)", "lowres_spacy_ner_rounds1", "lowres_spacy_ner_no_raw"),
    ("pretraining on the annotated sentences alone (no raw text)", "lowres_spacy_ner_no_raw", "lowres_spacy_ner_augment_only"),
    ("augmentation alone, for spaCy's ner", "lowres_spacy_ner_augment_only", "spacy_ner"),
    ("no raw text: the recipe without raw text against the BiLSTM-CRF", "lowres_spacy_ner_no_raw", "bilstm_crf"),
    ("augmentation, for the BiLSTM-CRF", "bilstm_crf_augment", "bilstm_crf"),
    ("no raw text: the BiLSTM-CRF with augmentation against spaCy's ner with it", "bilstm_crf_augment", "lowres_spacy_ner_augment_only"),
    ("the AUC term (mu 0.1), for the CRF", "crf_auc", "crf"),
    ("the AUC term (mu 0.1), for the BiLSTM-CRF", "bilstm_crf_auc", "bilstm_crf"),
    ("the CRF + AUC head in place of spaCy's ner, both with the extras", "crf_auc_extras", "lowres_spacy_ner_rounds1"),
    ("the BiLSTM-CRF + AUC head in place of spaCy's ner, both with the extras", "bilstm_crf_auc_extras", "lowres_spacy_ner_rounds1"),
    ("the extras, for the BiLSTM-CRF + AUC head", "bilstm_crf_auc_extras", "bilstm_crf_auc"),
    ("the extras, for the CRF + AUC head", "crf_auc_extras", "crf_auc"),
    ("augmentation, for the CRF + AUC head", "crf_auc_extras", "crf_auc_extras_no_augment"),
    ("pretraining, for the CRF + AUC head", "crf_auc_extras", "crf_auc_extras_no_pretrain"),
    ("self-training, for the CRF + AUC head", "crf_auc_extras", "crf_auc_extras_no_self_train"),
    ("the AUC term (mu 0.1 against 0), with the extras", "crf_auc_extras", "crf_extras"),
    ("a BiLSTM under the CRF + AUC head, with the extras", "bilstm_crf_auc_extras", "crf_auc_extras"),
    ("a BiLSTM encoder under spaCy's ner (BiLSTMEncoder.v1)", "spacy_ner_bilstm", "spacy_ner"),
    ("a BiLSTM encoder under spaCy's ner, with the extras", "spacy_ner_bilstm_extras", "lowres_spacy_ner_rounds1"),
    # the contrasts behind statements about one size (a fourth element: the sizes)
    ("at 100 sentences: the BiLSTM-CRF + AUC head with the extras against the recipe as shipped (two rounds)",
     "bilstm_crf_auc_extras", "lowres_spacy_ner", (100,)),
    ("at 100 sentences: the BiLSTM-CRF + AUC head with the extras against the one-round recipe",
     "bilstm_crf_auc_extras", "lowres_spacy_ner_rounds1", (100,)),
    ("at 100 sentences, no raw text: the BiLSTM-CRF against spaCy's ner", "bilstm_crf", "spacy_ner", (100,)),
    ("at 20-50 sentences, no raw text: the recipe without raw text against spaCy's ner", "lowres_spacy_ner_no_raw", "spacy_ner", (20, 50)),
]


# contrasts that docs/recipe.md's prose cites, each a generated sentence part
# (docs/evidence/recipe/<name>.md): name -> (a, b, sizes or None for every size)
RECIPE_SENTENCES = {
    "recipe_vs_ner": ("lowres_spacy_ner_rounds1", "spacy_ner", None),
    "self_training": ("lowres_spacy_ner_rounds1", "lowres_spacy_ner_no_self_train", (20, 50)),
    "augmentation": ("lowres_spacy_ner_rounds1", "lowres_spacy_ner_rounds1_no_augment", (20, 50)),
    "pretraining": ("lowres_spacy_ner_rounds1", "lowres_spacy_ner_rounds1_no_pretrain", (20, 50)),
    "rounds2": ("lowres_spacy_ner", "lowres_spacy_ner_rounds1", None),
    "rounds3": ("lowres_spacy_ner_rounds3", "lowres_spacy_ner", None),
    "crf_auc_head": ("crf_auc_extras", "lowres_spacy_ner_rounds1", (20, 50)),
    "bilstm_crf_auc_head": ("bilstm_crf_auc_extras", "lowres_spacy_ner_rounds1", (20, 50)),
    "bilstm_crf_auc_head_100": ("bilstm_crf_auc_extras", "lowres_spacy_ner_rounds1", (100,)),
    "auc_term_crf": ("crf_auc", "crf", None),
    "auc_term_bilstm_crf": ("bilstm_crf_auc", "bilstm_crf", None),
    "auc_term_extras": ("crf_auc_extras", "crf_extras", None),
    "no_raw": ("lowres_spacy_ner_no_raw", "spacy_ner", (20, 50)),
}


# new methods against their baseline rerun alongside them (results/lowres_recipe_rerun/):
# (what, method of the committed results, method of the rerun)
RERUN_CONTRASTS = [
    ("a second self-training round, against the recipe rerun with today's libraries", "lowres_spacy_ner", "lowres_spacy_ner_rounds1"),
    ("no raw text: the recipe without raw text, against the recipe rerun", "lowres_spacy_ner_no_raw", "lowres_spacy_ner_rounds1"),
    ("augmentation alone, against spaCy's ner rerun", "lowres_spacy_ner_augment_only", "spacy_ner"),
    ("the recipe as shipped (two rounds), against spaCy's ner rerun", "lowres_spacy_ner", "spacy_ner"),
    ("no raw text: the BiLSTM-CRF (the package's LSTM), against spaCy's ner rerun", "bilstm_crf", "spacy_ner"),
    ("the BiLSTM-CRF + AUC head with the extras, against the recipe rerun", "bilstm_crf_auc_extras", "lowres_spacy_ner_rounds1"),
]


def ratio_table(name: str, baseline: str) -> str:
    """The README table of a study against `baseline`: per method and corpus/size, mean F1 in %,
    the ratio of the mean F1s over the partitions both have, the paired t-test's p-value; a
    last column pools every (corpus, size, partition) pair; then the mean wall seconds of one
    cell (training, extras and scoring), finished cells only."""
    spec = load_spec(committed.ROOT / "studies" / f"{name}.yaml")
    wanted = spec.cells()
    rows = results_store(name).rows_for(wanted)
    results = aggregate(rows, metric=spec.metric, baseline=baseline)
    columns = sorted({(r.corpus, r.size) for r in results}, key=lambda k: (k[0], k[1]))
    methods = list(dict.fromkeys(r.method for r in results))
    cell = {(r.method, r.corpus, r.size): r for r in results}
    seconds: dict = {}
    dev: dict = {}
    unversioned: dict = {}  # method -> [rows without versions, rows]
    for row in latest_rows(rows).values():
        if row["status"] != "ok":
            continue
        count = unversioned.setdefault(row["method"], [0, 0])
        count[0] += not row.get("versions")
        count[1] += 1
        if isinstance(row.get("seconds"), (int, float)):
            seconds.setdefault(row["method"], []).append(row["seconds"])
        value = ((row.get("scores") or {}).get("dev_scores") or {}).get(spec.metric)
        if isinstance(value, (int, float)):
            dev[(row["method"], row["corpus"], row["size"], row["partition"])] = value

    def text(r) -> str:
        if r is None or not r.scores:
            return "–"
        mean = f"{100 * r.summary.mean:.1f}"
        t = r.vs_baseline
        if t is None:
            return f"{mean} (n={r.summary.n})"
        ratio = "–" if t.ratio is None else f"×{t.ratio:.2f}"
        return f"{mean} ({ratio}, {p_text(t.p_value, 'p –')}, n={t.n})"

    def pooled(method: str) -> str:
        if method == baseline:
            return "–"
        a, b = paired_lists(cell, method, baseline)
        if not a:
            return "–"
        t = paired_t_test(a, b)
        ratio = "–" if t.ratio is None else f"×{t.ratio:.2f}"
        return f"{ratio} ({p_text(t.p_value, 'p –')}, n={t.n})"

    def dev_text(method: str) -> str:
        """Mean dev F1 over the cells the method shares with the baseline, and its ratio to the
        baseline's over the same cells (the baseline: over all its cells)."""
        keys = [k[1:] for k in dev if k[0] == method]
        if method != baseline:
            keys = [k for k in keys if (baseline, *k) in dev]
        if not keys:
            return "–"
        mean = sum(dev[(method, *k)] for k in keys) / len(keys)
        if method == baseline:
            return f"{100 * mean:.1f}"
        base = sum(dev[(baseline, *k)] for k in keys) / len(keys)
        return f"{100 * mean:.1f} (×{mean / base:.2f})" if base > 0 else f"{100 * mean:.1f}"

    head = [f"{corpus} {size}" for corpus, size in columns]
    lines = [
        f"| method | {' | '.join(head)} | all draws | dev F1 | s per cell | rows without versions |",
        "|---|" + "---:|" * (len(head) + 4),
    ]
    for method in methods:
        cells = [text(cell.get((method, corpus, size))) for corpus, size in columns]
        secs = seconds.get(method, [])
        mean_s = f"{sum(secs) / len(secs):.0f}" if secs else "–"
        bare, total = unversioned.get(method, [0, 0])
        lines.append(f"| `{method}` | {' | '.join(cells)} | {pooled(method)} | {dev_text(method)} | {mean_s} | {bare} of {total} |")
    done = sum(1 for r in latest_rows(rows).values() if r["status"] == "ok")
    lines += [
        "",
        f"{METRIC_NAME} in %, mean over the partitions finished ({done} of {len(wanted)} cells); "
        f"(×ratio, p, n): the ratio of the mean F1s to `{baseline}` over the same partitions, "
        f"the two-sided paired t-test's p-value and its pairs; all draws: one pair per draw (corpus and partition, "
        f"its sizes averaged: a smaller draw is a subset of a larger one), every corpus pooled; "
        f"dev F1: the mean on the 300-sentence dev sample over the cells shared with `{baseline}`, "
        f"with the ratio to its dev F1 on them, what a choice between methods may read "
        f"(the test columns may not); for a self-training method it is the best of its rounds on "
        f"that same sample, which also chose the round, stopped training and tuned (see caveats.md); s per cell: mean wall seconds of a cell (training, extras, "
        f"scoring) on the 2 shared cores; rows without versions: finished rows that record no library versions "
        f"or commit (written before rows recorded them; not rerun).",
    ]
    return "\n".join(lines) + "\n"


def contrast_table(name: str, contrasts) -> str:
    """Per (what, a, b[, sizes]): the paired difference a - b over every draw (corpus,
    partition; its sizes averaged) both finished (at `sizes` when given), in points with its 95 % interval, the
    ratio of the means and the p-value; then the same difference and p-value per corpus, so
    that "on every corpus" can be read off."""
    by = results_by_cell(name)
    corpora = sorted({c for _, c, _ in by})
    lines = ["| what it adds | with vs without | difference (points, 95 % CI) | ratio | p (draws) | " + " | ".join(corpora) + " |",
             "|---|---|---:|---:|---:|" + "---:|" * len(corpora)]
    for what, a, b, *rest in contrasts:
        sizes = rest[0] if rest else None
        xs, ys = paired_lists(by, a, b, sizes)
        if not xs:
            lines.append(f"| {what} | `{a}` vs `{b}` | – | – | – (n=0) |" + " – |" * len(corpora))
            continue
        t, diff = paired_difference(xs, ys)
        ratio = "–" if t.ratio is None else f"×{t.ratio:.2f}"
        per_corpus = []
        for corpus in corpora:
            cx, cy = paired_lists(by, a, b, sizes, corpus)
            if not cx:
                per_corpus.append("–")
                continue
            ct = paired_t_test(cx, cy)
            per_corpus.append(f"{100 * ct.mean_diff:+.1f} ({p_text(ct.p_value, 'p –')}, n={ct.n})")
        lines.append(f"| {what} | `{a}` vs `{b}` | {diff} | {ratio} | {p_text(t.p_value)} (n={t.n}{mixed_text(by, a, b, sizes)}) | "
                     + " | ".join(per_corpus) + " |")
    lines += ["", f"{METRIC_NAME}: paired differences in points over the draws both methods finished, one pair per "
              "draw (corpus and partition, the mean over its sizes: a smaller draw is a subset of a larger one; "
              "the sizes named in the first column where it names them); "
              "per corpus: the difference, the two-sided paired t-test's p-value and the draws. "
              "Each row is its own test, with no correction for the number of rows."]
    return "\n".join(lines) + "\n"


def rerun_table(name: str, contrasts) -> str:
    """The same cells trained again later (`results/<name>_rerun/`, written with the same
    spec and cells, other library versions and code): per method, corpus and size, the
    committed mean F1, the rerun's, their paired difference and the largest difference of one
    cell; then each new method against the rerun of what it changes, both from the same
    environment."""
    spec = load_spec(committed.ROOT / "studies" / f"{name}.yaml")
    metric, cells = spec.metric, spec.cells()

    def ok(store):
        return {key: r for key, r in latest_rows(results_store(store).rows_for(cells)).items() if r["status"] == "ok" and metric in (r.get("scores") or {})}

    old, new = ok(name), ok(f"{name}_rerun")

    def diff_text(xs, ys) -> str:
        t, diff = paired_difference(xs, ys)
        return f"{diff} | {p_text(t.p_value)} (n={t.n})"

    groups: dict = {}
    for cid, row in new.items():
        if cid in old:
            groups.setdefault((row["method"], row["corpus"], row["size"]), []).append((old[cid]["scores"][metric], row["scores"][metric]))
    lines = ["| cells | committed F1 | rerun F1 | rerun - committed (points, 95 % CI) | p (cells) | largest cell difference |",
             "|---|---:|---:|---:|---:|---:|"]
    for (method, corpus, size), pairs in sorted(groups.items()):
        xs, ys = [b for _, b in pairs], [a for a, _ in pairs]
        largest = max(abs(a - b) for a, b in pairs)
        lines.append(f"| `{method}` {corpus} {size} | {100 * sum(ys) / len(ys):.1f} | {100 * sum(xs) / len(xs):.1f} | "
                     f"{diff_text(xs, ys)} | {100 * largest:.1f} |")
    versions = sorted({json.dumps(r.get("versions"), sort_keys=True) for r in new.values() if r.get("versions")})
    lines += ["", "| what it adds | method (committed) vs baseline (rerun) | difference (points, 95 % CI) | p (draws) |", "|---|---|---:|---:|"]
    for what, a, b in contrasts:
        by_draw = {(r["corpus"], r["size"], r["partition"]): r["scores"][metric] for r in new.values() if r["method"] == b}
        pairs = [(k, r["scores"][metric], by_draw[k]) for r in old.values() if r["method"] == a
                 for k in [(r["corpus"], r["size"], r["partition"])] if k in by_draw]
        if not pairs:
            lines.append(f"| {what} | `{a}` vs `{b}` | – | – (n=0) |")
            continue
        lines.append(f"| {what} | `{a}` vs `{b}` | {diff_text(*per_draw(pairs))} |")
    lines += ["", f"{METRIC_NAME} in %. The rerun's rows record what ran them: "
              + ("; ".join(", ".join(f"{k} {v}" for k, v in json.loads(v).items() if v) for v in versions) or "not recorded")
              + "; committed rows written before the fifth session do not record them."]
    return "\n".join(lines) + "\n"


CONTRAST = "evidence/recipe/c/"


def named_contrasts(by: dict) -> dict:
    """The recipe ablation's contrasts that the documents name in their markers,
    ``<!-- generated: evidence/recipe/c/A~B[@CORPUS][@SIZES].md -->`` (SIZES as 20-50): the
    paired difference of A and B over their shared draws (a draw's sizes averaged), with its
    interval, the ratio of the means, p and the draws: "+4.5 [+2.5, +6.6] points, ×1.16
    (p<0.001, 15 draws)". A document names the contrast, the rows give the figure."""
    import re

    out = {}
    for doc in documents():
        for m in blocks.BLOCK.finditer(doc.read_text(encoding="utf8")):
            target = (doc.resolve().parent / m["path"]).resolve()
            base = (committed.ROOT / "docs" / CONTRAST).resolve()
            if target.parent != base:
                continue
            name = target.stem
            parts = name.split("@")
            a, b = parts[0].split("~")
            corpus = next((x for x in parts[1:] if not re.fullmatch(r"[\d-]+", x)), None)
            sizes = next((tuple(int(n) for n in x.split("-")) for x in parts[1:] if re.fullmatch(r"[\d-]+", x)), None)
            xs, ys = paired_lists(by, a, b, sizes, corpus)
            if not xs:
                text = "no pairs"
            else:
                t, diff = paired_difference(xs, ys)
                ratio = "" if t.ratio is None else f", ×{t.ratio:.2f}"
                text = (f"{diff} points{ratio} ({p_text(t.p_value, 'no p-value')}, {t.n} draw{'s' if t.n != 1 else ''}"
                        f"{mixed_text(by, a, b, sizes, corpus)})")
            out[f"{CONTRAST}{name}.md"] = text + "\n"
    return out
