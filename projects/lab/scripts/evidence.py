"""Regenerate the evidence from the committed results: one command for every table.

For each `studies/campaign_*.yaml` whose results store `results/<name>/` exists: the study
report (mean F1 with 95 % intervals, paired tests against CE, chosen tuning values, compute,
plots) into `docs/evidence/<name>/`; the same for the recipe's ablation
(`studies/lowres_recipe.yaml`, against spaCy's default `ner`) plus its tables
(`docs/evidence/lowres_recipe/ablation.md`: ratios to spaCy's `ner`, paired tests, wall time;
`parts.md`: what each part adds, pooled and per corpus; `rerun.md`); the test sentences found in
the training split (`corpus_overlap.md`) and the sentences spaCy's tokenizer splits otherwise
than annotated (`corpus_tokens.md`), when the corpora are present (else the committed tables
are kept); `caveats.md`, what the evidence does not show (a choice that read test, the dev
sample's uses, the overlap, the contrasts behind sentences that said more than their tests);
then the verdict of every claim of `studies/claims.yaml` into `docs/evidence/verdicts.md`;
the transformer recipe's dev ablation read by the rule fixed early in it (`trf_ablation.rule_fixed`:
its commit held 6 rows, 8 had finished) (`docs/evidence/campaign_trf_ablation/parts.md`, `scripts/trf_ablation.py`);
the heads' tables (`docs/evidence/heads_lowres/`) and the README's figures
(`docs/evidence/readme/`); then the generated blocks of the documents (`scripts/doc_blocks.py`:
the repository's README, the lab's README, `docs/*.md`, `docs/evidence/*.md`). Every comparison
is a two-sided paired t-test over the training draws (a draw's sizes averaged into one pair)
and is printed with its difference, p-value and draws; rows that record no library versions
are marked where a table rests on them.

`fragments` computes every generated text from the rows; `docs` writes them (without the
plots), `docs(check=True)` only compares, as `python projects/lab/lab.py docs [--check]` does.
This script (`spacy project run evidence` in projects/lab, or `python -m scripts.evidence`
there) also writes the plots and, with the corpora present, the overlap table.
"""
import json
import subprocess
import sys
from pathlib import Path
from typing import Optional

from scripts import trf_ablation

ROOT = Path(__file__).resolve().parents[1]
OUT = ROOT / "docs" / "evidence"
# the studies reported here besides the campaigns, with the baseline of their paired tests
OTHER_STUDIES = {"lowres_recipe": "spacy_ner"}
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


def run(*args: str) -> bool:
    print("$", " ".join(args), flush=True)
    return subprocess.run([sys.executable, "-m", "auc_ner_lab", *args], cwd=ROOT, stdout=subprocess.DEVNULL).returncode == 0


def p_text(p, missing: str = "–") -> str:
    """A p-value as the tables print it: p=0.012, p<0.001, or `missing` when there is none."""
    return missing if p is None else (f"p={p:.3f}" if p >= 0.001 else "p<0.001")


def paired_difference(xs, ys):
    """The paired test of xs against ys and its difference in points with the 95 % interval
    of the differences ("+1.2 [-0.3, +2.7]"; no interval from one pair)."""
    from auc_ner_lab.stats import paired_t_test, summarize

    t = paired_t_test(xs, ys)
    diff = f"{100 * t.mean_diff:+.1f}"
    interval = summarize([x - y for x, y in zip(xs, ys)])
    if interval.half_width is not None:
        diff += f" [{100 * interval.low:+.1f}, {100 * interval.high:+.1f}]"
    return t, diff


def status_table() -> str:
    """How far each campaign has got: finished cells of its grid, tuning trials apart, those
    whose row is superseded by a fix of the code it ran (`store.superseded`: read by the
    reports until `study run` trains them again, which it does), and the training time its
    rows record (summed over cells, so about twice the wall time with 2 workers), and the
    reported rows trained from a working tree with uncommitted changes that no stored diff
    records (`ResultsStore.untraced`: their commit alone does not say what code ran)."""
    from auc_ner_lab.spec import load_spec
    from auc_ner_lab.store import latest_rows, superseded

    lines = [
        "| study | reported cells done | tuning trials done | of them superseded (to train again) | failed | training hours recorded "
        "| reported rows from uncommitted trees (no stored diff) |",
        "|---|---:|---:|---:|---:|---:|---:|",
    ]
    specs = sorted((ROOT / "studies").glob("campaign_*.yaml")) + [ROOT / "studies" / f"{name}.yaml" for name in OTHER_STUDIES]
    for spec_path in specs:
        cells = load_spec(spec_path).cells()
        store = _store(spec_path.stem)
        rows = latest_rows(store.rows_for(cells))
        done = {key for key, row in rows.items() if row.get("status") == "ok"}
        failed = sum(1 for c in cells if c.key in rows and rows[c.key].get("status") != "ok")
        trials = [c for c in cells if c.tuning is not None]
        reported = [c for c in cells if c.tuning is None]
        hours = sum(float(rows[c.key].get("seconds") or 0.0) for c in cells if c.key in rows) / 3600
        stale = sum(1 for c in cells if c.key in done and superseded(rows[c.key]))
        untraced = len(store.untraced([rows[c.key] for c in reported if c.key in done]))
        lines.append(
            f"| `{spec_path.stem}` | {sum(c.key in done for c in reported)} of {len(reported)} "
            f"| {sum(c.key in done for c in trials)} of {len(trials)} | {stale} | {failed} | {hours:.1f} | {untraced} |"
        )
    return "\n".join(lines) + "\n"


def ratio_table(name: str, baseline: str) -> str:
    """The README table of a study against `baseline`: per method and corpus/size, mean F1 in %,
    the ratio of the mean F1s over the partitions both have, the paired t-test's p-value; a
    last column pools every (corpus, size, partition) pair; then the mean wall seconds of one
    cell (training, extras and scoring), finished cells only."""
    from auc_ner_lab.aggregate import aggregate
    from auc_ner_lab.spec import load_spec
    from auc_ner_lab.stats import paired_t_test
    from auc_ner_lab.store import latest_rows

    spec = load_spec(ROOT / "studies" / f"{name}.yaml")
    wanted = spec.cells()
    rows = _store(name).rows_for(wanted)
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


def _results_by_cell(name: str, spec=None, rows=None) -> dict:
    """{(method, corpus, size): MethodResult} of a study's reported cells (its spec's only;
    `spec`: studies/<name>.yaml when already loaded; `rows`: its store's rows for the spec's
    cells when already read)."""
    from auc_ner_lab.aggregate import aggregate
    from auc_ner_lab.spec import load_spec

    spec = spec or load_spec(ROOT / "studies" / f"{name}.yaml")
    rows = _store(name).rows_for(spec.cells()) if rows is None else rows
    return {(r.method, r.corpus, r.size): r for r in aggregate(rows, metric=spec.metric, baseline=None)}


def paired_lists(by: dict, a: str, b: str, sizes=None, corpus=None):
    """Scores of a and of b, one pair per draw (corpus, partition) both finished: the mean over
    the draw's sizes (a partition's smaller draw is a subset of its larger one, with the same
    dev sample and test set, so its sizes are not independent pairs; `stats.draw_means`),
    optionally only at `sizes` and on `corpus`."""
    from auc_ner_lab.stats import draw_means

    found = []
    for (method, c, size), r in sorted(by.items(), key=lambda kv: str(kv[0])):
        other = by.get((b, c, size))
        if method != a or other is None or (sizes and size not in sizes) or (corpus and c != corpus):
            continue
        found += [((c, p), r.scores[p], other.scores[p]) for p in sorted(set(r.scores) & set(other.scores))]
    draws = draw_means(found)
    return [x for x, _ in draws.values()], [y for _, y in draws.values()]


def _cell_pairs(by: dict, a: str, b: str, sizes=None, corpus=None) -> list:
    """The (a's result, b's result, partition) of every cell pair `paired_lists` pairs; `corpus`
    one corpus or a collection of them."""
    corpora = None if corpus is None else ({corpus} if isinstance(corpus, str) else set(corpus))
    out = []
    for (method, c, size), r in sorted(by.items(), key=lambda kv: str(kv[0])):
        other = by.get((b, c, size))
        if method != a or other is None or (sizes and size not in sizes) or (corpora and c not in corpora):
            continue
        out += [(r, other, p) for p in sorted(set(r.scores) & set(other.scores))]
    return out


def mixed_devices(by: dict, a: str, b: str, sizes=None, corpus=None) -> tuple:
    """(cell pairs whose two rows trained on different device kinds, cell pairs) of a against b:
    a pair across kinds carries the numerical difference between a GPU and a CPU training too
    (`device_gap`). A result without `devices` (made by hand) counts as on one kind."""
    pairs = _cell_pairs(by, a, b, sizes, corpus)
    mixed = sum(1 for x, y, p in pairs if (getattr(x, "devices", {}) or {}).get(p, "CPU") != (getattr(y, "devices", {}) or {}).get(p, "CPU"))
    return mixed, len(pairs)


def mixed_text(by: dict, a: str, b: str, sizes=None, corpus=None) -> str:
    """"; 12 of the 30 cell pairs mix a GPU row with a CPU one" for a paired test whose two
    sides trained on different device kinds in some pairs, else ""."""
    mixed, total = mixed_devices(by, a, b, sizes, corpus)
    return f"; {mixed} of the {total} cell pairs mix a GPU row with a CPU one" if mixed else ""


def pooled_ratio(by: dict, a: str, b: str, corpus=None):
    """The mean test F1 of a over every cell pair it shares with b (`_cell_pairs`) divided by
    b's over the same pairs: "×1.4 b's mean test F1"; None without pairs or with b's mean 0."""
    pairs = _cell_pairs(by, a, b, corpus=corpus)
    mean_b = sum(y.scores[p] for _, y, p in pairs) / len(pairs) if pairs else 0.0
    return sum(x.scores[p] for x, _, p in pairs) / len(pairs) / mean_b if mean_b > 0 else None


def contrast_table(name: str, contrasts) -> str:
    """Per (what, a, b[, sizes]): the paired difference a - b over every draw (corpus,
    partition; its sizes averaged) both finished (at `sizes` when given), in points with its 95 % interval, the
    ratio of the means and the p-value; then the same difference and p-value per corpus, so
    that "on every corpus" can be read off."""
    from auc_ner_lab.stats import paired_t_test

    by = _results_by_cell(name)
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


METRIC_NAME = "Entity F1 (seqeval strict IOB2, micro)"


def rerun_table(name: str, contrasts) -> str:
    """The same cells trained again later (`results/<name>_rerun/`, written with the same
    spec and cells, other library versions and code): per method, corpus and size, the
    committed mean F1, the rerun's, their paired difference and the largest difference of one
    cell; then each new method against the rerun of what it changes, both from the same
    environment."""
    from auc_ner_lab.spec import load_spec
    from auc_ner_lab.store import latest_rows

    spec = load_spec(ROOT / "studies" / f"{name}.yaml")
    metric, cells = spec.metric, spec.cells()

    def ok(store):
        return {key: r for key, r in latest_rows(_store(store).rows_for(cells)).items() if r["status"] == "ok" and metric in (r.get("scores") or {})}

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
        lines.append(f"| {what} | `{a}` vs `{b}` | {diff_text(*_by_draw(pairs))} |")
    lines += ["", f"{METRIC_NAME} in %. The rerun's rows record what ran them: "
              + ("; ".join(", ".join(f"{k} {v}" for k, v in json.loads(v).items() if v) for v in versions) or "not recorded")
              + "; committed rows written before the fifth session do not record them."]
    return "\n".join(lines) + "\n"


def tested(a: str, b: str, xs, ys) -> str:
    """One sentence part that says how a compares with b and cites its paired test:
    "`a` - `b` = +1.2 [-0.3, +2.7] points (p=0.120, 15 draws; not significant at the 5 % level)";
    xs and ys hold one pair per draw (`paired_lists`)."""
    t, diff = paired_difference(xs, ys)
    level = "significant" if t.p_value is not None and t.p_value < 0.05 else "not significant"
    return f"`{a}` - `{b}` = {diff} points ({p_text(t.p_value, 'no p-value')}, {t.n} draws; {level} at the 5 % level)"


def _store(name: str):
    """The results store of study `name` (results/<name>/)."""
    from auc_ner_lab.store import ResultsStore

    return ResultsStore(ROOT / "results" / name)


def _latest_reported(rows) -> list:
    """Of `rows`, each reported cell's latest row when it is ok (tuning trials left out)."""
    from auc_ner_lab.store import latest_rows

    return [r for r in latest_rows(rows).values() if r["status"] == "ok" and not r.get("tuning")]


def _rows(name: str):
    """The latest ok rows of a store's reported cells, every row of it (its spec's or not)."""
    return _latest_reported(_store(name).rows())


def distinct(rows) -> list:
    """`rows`, a row copied into several stores (a shared cell: run_campaign_trf.sh copies them)
    once: one training, known by its file name, which is the same in every store."""
    from auc_ner_lab.store import row_name

    return list({row_name(r): r for r in rows}.values())


def distinct_rows(names) -> list:
    """Every row of the stores `names`, each training once (`distinct`)."""
    return distinct(r for name in names for r in _store(name).rows())


def _named_rows(name: str, spec: str):
    """`_rows` of the cells of studies/<spec>.yaml, each named as the spec names its cell now
    (a row keeps the method name it was written under)."""
    from auc_ner_lab.spec import load_spec

    return _reported_rows(name, load_spec(ROOT / "studies" / f"{spec}.yaml").cells())


def _reported_rows(name: str, cells):
    """The latest ok rows of store `name` for the reported cells among `cells`."""
    return _latest_reported(_store(name).rows_for(cells))


def _by_draw(pairs):
    """[((corpus, size, partition), a, b), ...] -> (a's, b's), one mean pair per draw (corpus,
    partition): a partition's sizes share its draw."""
    from auc_ner_lab.stats import draw_means

    draws = draw_means(((c, p), a, b) for (c, _, p), a, b in pairs)
    return [a for a, _ in draws.values()], [b for _, b in draws.values()]


def _dev_pairs(a_rows, b_rows, metric: str):
    """Dev scores of a and b over the (corpus, size, partition) both have, one mean pair per
    draw (corpus, partition)."""
    def dev(rows):
        return {(r["corpus"], r["size"], r["partition"]): ((r.get("scores") or {}).get("dev_scores") or {}).get(metric)
                for r in rows}
    da, db = dev(a_rows), dev(b_rows)
    keys = sorted(k for k in set(da) & set(db) if isinstance(da[k], (int, float)) and isinstance(db[k], (int, float)))
    return _by_draw([(k, da[k], db[k]) for k in keys])


def fix_effect(names) -> str:
    """How much the fix of the self-training tokens moved test F1: per study, method, corpus
    and size, the cells that have both a superseded row and a standing one (trained again),
    the paired difference new - old over them (the partitions, independent draws within a
    cell), and how many pairs changed device kind too (CPU and GPU train apart numerically)."""
    from auc_ner_lab.aggregate import row_score
    from auc_ner_lab.spec import load_spec
    from auc_ner_lab.store import device_kind, superseded

    parts = []
    for name in names:
        metric = load_spec(ROOT / "studies" / f"{name}.yaml").metric
        pairs: dict = {}
        old: dict = {}
        new: dict = {}
        for r in _store(name).rows():
            if r.get("status") != "ok" or r.get("tuning") or row_score(r, metric) is None:
                continue
            (old if superseded(r) else new)[r["key"]] = r  # the last of each (rows come in their order)
        for key in sorted(set(old) & set(new)):
            r = new[key]
            moved = device_kind(r) != device_kind(old[key])
            pairs.setdefault((r["method"], r["corpus"], r["size"]), []).append((row_score(r, metric), row_score(old[key], metric), moved))
        for (method, corpus, size), found in sorted(pairs.items()):
            xs, ys = [a for a, _, _ in found], [b for _, b, _ in found]
            t, diff = paired_difference(xs, ys)
            moved = sum(m for *_, m in found)
            parts.append(f"`{method}` on {corpus} at {size} sentences ({name}): {100 * sum(ys) / len(ys):.1f} before, "
                         f"{100 * sum(xs) / len(xs):.1f} after, {diff} points ({p_text(t.p_value, 'no p-value')}, "
                         f"{t.n} partitions" + (f", {moved} of them trained again on another device kind" if moved else "") + ")")
    if not parts:
        return "How much the fix moves test F1: no cell has been trained again yet."
    return ("How much the fix moved test F1 where cells have been trained again (new - old, paired over the cell's "
            "partitions): " + "; ".join(parts) + ".")


def caveats_text() -> str:
    """What the evidence does not show, from the committed rows: where a choice read test
    scores, the dev sample's three uses, the CoNLL 2003 test sentences found in its training
    split, and the contrasts behind sentences that once said more than their tests."""
    from auc_ner_lab.spec import load_spec
    from auc_ner_lab.store import superseded
    from auc_ner_lab.verdicts import load_claims, verdicts

    metric = load_spec(ROOT / "studies" / "lowres_recipe.yaml").metric
    recipe_rows, rerun_rows = _named_rows("lowres_recipe", "lowres_recipe"), _named_rows("lowres_recipe_rerun", "lowres_recipe")
    by = _results_by_cell("lowres_recipe")
    lines = ["# What the evidence does not show", "",
             f"Generated by `python scripts/evidence.py` from the committed results stores (`results/<study>/`). {METRIC_NAME}; "
             "every comparison is a two-sided paired t-test over the same training draws.", ""]

    # 1. the two-round default
    def draws(rows, method):
        return {(r["corpus"], r["size"], r["partition"]): r for r in rows if r["method"] == method}
    two, one = draws(recipe_rows, "lowres_spacy_ner"), draws(rerun_rows, "lowres_spacy_ner_rounds1")
    shared = sorted(set(two) & set(one))
    chosen = [((two[k]["scores"].get("extras") or {}).get("chosen_round")) for k in sorted(two)]
    lines += ["## A choice that read test scores", ""]
    if shared:
        test_part = tested("lowres_spacy_ner", "lowres_spacy_ner_rounds1", *_by_draw([(k, two[k]["scores"][metric], one[k]["scores"][metric]) for k in shared]))
        dev_part = tested("lowres_spacy_ner", "lowres_spacy_ner_rounds1", *_dev_pairs([two[k] for k in shared], [one[k] for k in shared], metric))
        lines += [
            "The recipe's default of two self-training rounds (commit 1fd9fb0) was chosen partly on test: "
            "the commit cites the test-F1 contrast of the two-round recipe against the one-round recipe "
            f"trained again with the same libraries. On today's rows that contrast is {test_part}. "
            f"On the dev sample, the only score a choice may read, the same pairs give {dev_part}; "
            "dev F1 is itself the best of the rounds (see below), so it favours more rounds. "
            f"Dev chose round 2 in {sum(c == 2 for c in chosen)} of the {len(chosen)} two-round cells "
            f"(round 1 in {sum(c == 1 for c in chosen)}, round 0 in {sum(c == 0 for c in chosen)}). "
            "The test figures of the two-round recipe are therefore not a clean held-out estimate of the default.", ""]

    # 2. one dev sample
    all_rows = {name: _rows(name) for name in ["lowres_recipe", "lowres_recipe_rerun"]
                + sorted(p.name for p in (ROOT / "results").glob("campaign_*") if p.is_dir())}
    stored = distinct_rows(all_rows)
    dev_settings = set()
    for r in stored:
        dev = (r.get("overrides") or {}).get("corpora.dev") or {}
        dev_settings.add((dev.get("n"), dev.get("seed")))
    n_rows = len(stored)
    rounds = distinct(r for rows in all_rows.values() for r in rows if ((r.get("scores") or {}).get("extras") or {}).get("rounds"))
    gains = []
    for r in rounds:
        devs = [x["dev_f"] for x in r["scores"]["extras"]["rounds"] if isinstance(x.get("dev_f"), (int, float))]
        if devs:
            gains.append(max(devs) - devs[0])
    later = sum(1 for r in rounds if (r["scores"]["extras"].get("chosen_round") or 0) > 0)
    settings = "; ".join(f"{n} sentences, seed {seed}" for n, seed in sorted(dev_settings, key=str))
    same = f"the same dev sample ({settings})" if len(dev_settings) == 1 else f"one of {len(dev_settings)} dev samples ({settings})"
    lines += ["## One dev sample, three uses", "",
              f"Every one of the {n_rows:,} committed rows reads {same}. It serves "
              "three choices at once: the tuning trials' grid point, early stopping inside every training, "
              "and, for the self-training methods, the round that is kept. Their \"dev F1\" is therefore the "
              f"best of their rounds on the sample that chose it: over the {len(rounds)} cells with rounds, a "
              f"later round was kept in {later}, and the kept round's dev F1 is {100 * sum(gains) / max(1, len(gains)):.1f} points "
              "above round 0's on average. Dev F1 columns so favour the methods that choose more (more rounds, "
              "more trials); the test columns are held out from those choices, not from the one above.", ""]

    # 2b. the entity bias calibrated on the dev sample that scores the run
    gaps = {True: [], False: []}
    for name in ("lowres_recipe", "heads_lowres"):
        if (ROOT / "results" / name).exists():
            for r in _rows(name):
                dev, test = (r.get("scores") or {}).get("dev_score"), (r.get("scores") or {}).get(metric)
                if r.get("size") in (20, 50) and isinstance(dev, (int, float)) and isinstance(test, (int, float)):
                    calibrated = "calibrate_entity_bias" in json.dumps({k: v for k, v in r.items() if k != "scores"})
                    gaps[calibrated].append(dev - test)
    if gaps[True] and gaps[False]:
        lines += ["## A bias calibrated on the dev sample that scores it", "",
                  "`spacy_auc_ner.calibrate_entity_bias.v1` chooses the entity bias on the dev sample that early stopping "
                  "also reads, so a calibrated run's dev F1 is optimistic beyond the other methods'. Dev minus test F1 "
                  f"at 20 and 50 sentences (`results/lowres_recipe/` and `results/heads_lowres/`): {100 * sum(gaps[True]) / len(gaps[True]):+.1f} "
                  f"points on average over the {len(gaps[True])} calibrated runs, {100 * sum(gaps[False]) / len(gaps[False]):+.1f} over the "
                  f"{len(gaps[False])} others (a mean over runs, not a paired test). A dev comparison of a calibrated method "
                  "with another favours it by about the difference; test F1 is held out from the calibration.", ""]

    # 3. CoNLL 2003 overlap
    import srsly

    overlap = OUT / "corpus_overlap.md"
    lines += ["## Test sentences that also occur in training", ""]
    found = srsly.read_json(overlap.with_suffix(".json")) if overlap.with_suffix(".json").exists() else {}
    conll = found.get("conll2003")
    if overlap.exists() and conll:
        from collections import Counter

        pools = Counter(((r.get("scores") or {}).get("extras") or {}).get("pool_sentences") for r in recipe_rows)
        pools.pop(None, None)
        pool = pools.most_common(1)[0][0] if pools else 2000  # the pool most cells drew
        lines += ["`python scripts/corpus_overlap.py conll2003 ncbi_disease s800` (the same token sequence; "
                  "`docs/evidence/corpus_overlap.md`):", "", overlap.read_text(encoding="utf8").rstrip("\n"), "",
                  f"{conll['in_train']} of the {conll['test']:,} CoNLL 2003 test sentences also occur in its training split "
                  f"({conll['in_train_with_entity']} of them with an entity), and {conll['train_in_test']} of its "
                  f"{conll['train']:,} training sentences equal a test sentence. Training draws and the raw-text pools "
                  "(the training sentences a draw leaves out) come from the training split, so they can hold test "
                  f"sentences verbatim: a {pool:,}-sentence pool holds about {pool * conll['train_in_test'] / conll['train']:.0f} "
                  "of them on average (in proportion; not counted per cell). How much that moves test F1 is not measured.", ""]
    else:
        lines += ["Not computed: run `python scripts/corpus_overlap.py conll2003 ncbi_disease s800 "
                  "--out docs/evidence/corpus_overlap.md` with the corpora present.", ""]

    # 4. text tokenized again
    tokens = OUT / "corpus_tokens.md"
    lines += ["## Text that spaCy tokenizes again", ""]
    if tokens.exists() and tokens.with_suffix(".json").exists():
        found = srsly.read_json(tokens.with_suffix(".json"))
        before = [r for r in rounds if superseded(r)]
        by_store: dict = {}
        for r in before:
            by_store[r.get("study")] = by_store.get(r.get("study"), 0) + 1
        conll = (found.get("conll2003") or {}).get("test") or [0, 0]
        lines += ["`python scripts/corpus_tokens.py conll2003 ncbi_disease s800` (`docs/evidence/corpus_tokens.md`): "
                  "the sentences whose text spaCy's English tokenizer splits otherwise than the corpus annotates:", "",
                  tokens.read_text(encoding="utf8").rstrip("\n"), "",
                  "Every cell is scored on its test split read by spaCy's `Corpus.v1`, which tokenizes each sentence's text "
                  "again, so a pipeline trained on the annotated tokens meets other tokens in "
                  f"{100 * conll[1] / max(conll[0], 1):.0f} % of CoNLL 2003's test sentences; the same for every method, the "
                  "Hugging Face peer included, but not the papers' protocol (annotated tokens), so absolute F1s are not theirs. "
                  "Every cell trains, stops early and is scored on dev on the annotated tokens (`LowResource.v1`), except the "
                  "self-training cells trained before 2026-11-26, which read their draw, pseudo-labelled sentences and dev "
                  f"sample tokenized again: {len(before)} of the {len(rounds)} committed reported self-training rows ("
                  + ", ".join(f"{n} of `{k}`" for k, n in sorted(by_store.items())) + "; a row that read the annotated "
                  "tokens says so, `extras.tokens`). So their comparisons with cells that do not self-train (the CRF head "
                  "alone, the peer, spaCy's `ner`) mix the method with its tokens on CoNLL 2003; on NCBI-disease and S800 "
                  "few sentences differ. Their rows are superseded (`store.superseded`, the status table's column): the "
                  "reports read them until `study run` trains their cells again, which it does; their tuning trials stand. "
                  + fix_effect(["campaign_trf_recipe", "lowres_recipe"]), ""]
    else:
        lines += ["Not computed: run `python scripts/corpus_tokens.py conll2003 ncbi_disease s800 "
                  "--out docs/evidence/corpus_tokens.md` with the corpora present.", ""]

    # 5. sentences that said more than their tests
    lines += ["## Contrasts behind sentences that once said more", ""]
    at100 = (100,)
    lines.append(f"- At 100 sentences, the BiLSTM-CRF + AUC head with the extras against the recipe as shipped "
                 f"(two rounds): {tested('bilstm_crf_auc_extras', 'lowres_spacy_ner', *paired_lists(by, 'bilstm_crf_auc_extras', 'lowres_spacy_ner', at100))}; "
                 f"against the one-round recipe: {tested('bilstm_crf_auc_extras', 'lowres_spacy_ner_rounds1', *paired_lists(by, 'bilstm_crf_auc_extras', 'lowres_spacy_ner_rounds1', at100))}, "
                 "one contrast among the many of the ablation, uncorrected.")
    no_raw = ["bilstm_crf", "spacy_ner", "lowres_spacy_ner_no_raw", "lowres_spacy_ner_augment_only", "bilstm_crf_augment", "bilstm_crf_auc", "crf", "crf_auc"]
    # the mean over the corpora of each method finished on every corpus at 100 (a group with
    # no finished cell has no mean)
    corpora = sorted({c for _, c, _ in by})
    at = {m: [by[(m, c, 100)].summary.mean for c in corpora if (m, c, 100) in by and by[(m, c, 100)].summary.n]
          for m in no_raw}
    means = {m: sum(v) / len(v) for m, v in at.items() if len(v) == len(corpora)}
    if means:
        top = max(means, key=means.get)
        others = "; ".join(tested(top, m, *paired_lists(by, top, m, at100)) for m in sorted(means) if m != top)
        lines.append(f"- At 100 sentences without raw text, the highest mean F1 (over the {len(corpora)} corpora) is "
                     f"`{top}`'s ({100 * means[top]:.1f}); against each other method without raw text: {others}.")
    per_corpus = "; ".join(f"{c}: {tested('lowres_spacy_ner_no_raw', 'spacy_ner', *paired_lists(by, 'lowres_spacy_ner_no_raw', 'spacy_ner', (20, 50), c))}"
                           for c in sorted({c for _, c, _ in by}))
    lines.append(f"- Without raw text at 20-50 sentences, the recipe without `--raw` against spaCy's `ner`, per corpus: {per_corpus}.")
    trend = [v for v in verdicts(load_claims(ROOT / "studies" / "claims.yaml")) if v.claim.trend]
    for v in trend:
        if v.n:
            lines.append(f"- {v.claim.claim}: the slope of the gap `{v.claim.a['method']}` - `{v.claim.b['method']}` "
                         f"per doubling of the {v.claim.trend} is {100 * v.mean_diff:+.1f} points "
                         f"[{100 * v.diff_low:+.1f}, {100 * v.diff_high:+.1f}] ({p_text(v.p_value)}, {v.n} partitions; "
                         f"{v.verdict} by its own test); see `verdicts.md` for it among all claims (Holm).")
    return "\n".join(lines) + "\n"


MINILM = ("campaign_minilm_20", "campaign_minilm_50")
MINILM_METHODS = ["spacy_ner", "ce", "ova_auc", "ova_auc_all", "ova_bce", "two_task_auc", "ce_2t", "crf"]


def minilm_table() -> str:
    """The MiniLM campaign (issue 26): per method, corpus and size the mean test F1 over the
    reported partitions, and paired differences (same draws) against CE on MiniLM, spaCy's
    `ner` on MiniLM and the two shipped tok2vec recipes as lowres_recipe trains them (its methods
    `lowres_best` and `lowres_spacy_ner`), whose partitions 0-2 are the same draws (LowResource.v1
    with the same n and seed)."""

    by = {}
    for name in MINILM:
        if (ROOT / "results" / name).exists():
            by.update(_results_by_cell(name))
    recipe = _results_by_cell("lowres_recipe") if (ROOT / "results" / "lowres_recipe").exists() else {}
    keys = sorted({(corpus, size) for (_, corpus, size) in by})
    lines = [
        "# MiniLM: every method on a fully fine-tuned all-MiniLM-L6-v2 (CPU)",
        "",
        "Generated by `python scripts/evidence.py` from `results/campaign_minilm_{20,50}/`",
        "(specs `studies/campaign_minilm_{20,50}.yaml`: 30 epochs of 8-sentence batches, the peak",
        "learn rate tuned per method on an unreported partition). Entity F1 in % (seqeval strict",
        "IOB2, micro), mean over the reported partitions (n); differences in points with the paired",
        "t-test over the partitions both have: against CE on MiniLM, spaCy's `ner` on MiniLM, and the",
        "two recipes on the CPU tok2vec, same draws: `lowres_best` (the package's BiLSTM-CRF head +",
        "extras) and `lowres_spacy_ner` (spaCy's `ner` + extras), as `studies/lowres_recipe.yaml`'s",
        "methods of those names train them. Rows appear as the campaign finishes methods.",
        "",
    ]
    if not keys:
        return "\n".join(lines + ["No reported MiniLM cell yet.", ""])

    def versus(a, b) -> str:
        if a is None or b is None:
            return "–"
        shared = sorted(set(a.scores) & set(b.scores))
        if len(shared) < 2:
            return f"(n={len(shared)})"
        t, diff = paired_difference([a.scores[i] for i in shared], [b.scores[i] for i in shared])
        return f"{diff} {p_text(t.p_value)} n={len(shared)}"

    parts = {p for res in by.values() for p in res.scores}
    bare = {m: sum(1 for r in _named_rows("lowres_recipe", "lowres_recipe") if r["method"] == m and (r["corpus"], r.get("size")) in set(keys)
                   and r.get("partition") in parts and not r.get("versions"))
            for m in ("lowres_best", "lowres_spacy_ner")} if recipe else {}
    minilm_bare = sum(1 for name in MINILM if (ROOT / "results" / name).exists() for r in _rows(name) if not r.get("versions"))
    lines += [f"Rows without recorded library versions on these draws: `lowres_best` "
              f"{bare.get('lowres_best', 0)}, `lowres_spacy_ner` {bare.get('lowres_spacy_ner', 0)}, MiniLM {minilm_bare}.", ""]
    lines += ["| corpus | size | method | F1 (n) | vs CE | vs spaCy `ner` (MiniLM) | vs `lowres_best` (tok2vec) | vs `lowres_spacy_ner` (tok2vec) |",
              "|---|---:|---|---:|---|---|---|---|"]
    for corpus, size in keys:
        for method in MINILM_METHODS:
            r = by.get((method, corpus, size))
            if r is None:
                continue
            mean = 100 * sum(r.scores.values()) / len(r.scores)
            lines.append(
                f"| {corpus} | {size} | `{method}` | {mean:.1f} ({len(r.scores)}) | "
                f"{versus(r, by.get(('ce', corpus, size))) if method != 'ce' else '–'} | "
                f"{versus(r, by.get(('spacy_ner', corpus, size))) if method != 'spacy_ner' else '–'} | "
                f"{versus(r, recipe.get(('lowres_best', corpus, size)))} | "
                f"{versus(r, recipe.get(('lowres_spacy_ner', corpus, size)))} |"
            )
    return "\n".join(lines) + "\n"


def minilm_budget(spec_path=None) -> dict:
    """The MiniLM campaign's budget and partitions as its spec sets them (studies/campaign_minilm_20.yaml:
    steps written per size), for the README's words on it: "30 of 8 sentences, dev every 2,
    patience 12" (epochs of batches) and "3 partitions a cell"."""
    import math

    from auc_ner_lab.spec import load_spec

    spec = load_spec(spec_path or ROOT / "studies" / f"{MINILM[0]}.yaml")
    o = spec.overrides
    batch = o["training.batcher"]["size"]
    per_epoch = math.ceil(spec.sizes[0] / batch)  # steps an epoch at the spec's one size

    def epochs(steps: int) -> str:
        return f"{steps / per_epoch:g}"

    return {"evidence/readme/minilm_budget.md": f"{epochs(o['training.max_steps'])} of {batch} sentences, dev every "
                                                f"{epochs(o['training.eval_frequency'])}, patience {epochs(o['training.patience'])}\n",
            "evidence/readme/minilm_partitions.md": f"{spec.partitions} partitions a cell\n"}


def report_texts(name: str, baseline=None) -> dict:
    """{docs-relative path: text} of a study's report (report.md, summary.json, compute.json)
    as `study report --spec studies/<name>.yaml` writes it, without plots; {} when the study
    has no report yet (no reported cell finished)."""
    import tempfile

    from auc_ner_lab.report import write_report
    from auc_ner_lab.spec import load_spec

    study = load_spec(ROOT / "studies" / f"{name}.yaml")
    baseline = study.baseline if baseline is None else baseline
    with tempfile.TemporaryDirectory() as tmp:
        try:
            write_report(ROOT / "results" / name, tmp, metric=study.metric, baseline=baseline or None, plots=False,
                         cells=study.cells(), value_order=[v for v in study.values if v is not None])
        except (FileNotFoundError, ValueError):
            return {}
        return {f"evidence/{name}/{f}": (Path(tmp) / f).read_text(encoding="utf8") for f in ("report.md", "summary.json", "compute.json")}


def fragments() -> dict:
    """{path relative to docs/: text} of every generated file, computed from the committed
    rows (`results/`) now: the studies' reports, the tables and sentences of the documents and
    of the repository's README (`docs/evidence/readme/`). `docs` writes them and the blocks
    that show them; `docs --check` compares. Computed in the project folder, whatever the
    caller's: a spec's relative paths (its configs folder, a method's config file) are that
    folder's, as for `study run`, and a path read from elsewhere would give its cells other keys."""
    import os

    here = os.getcwd()
    os.chdir(ROOT)
    try:
        return _fragments()
    finally:
        os.chdir(here)


def _fragments() -> dict:
    from auc_ner_lab.verdicts import load_claims, markdown_table, verdicts

    out = {"evidence/campaign_status.md": status_table()}
    out.update(spec_counts())
    for spec in sorted((ROOT / "studies").glob("campaign_*.yaml")):
        if (ROOT / "results" / spec.stem).exists():
            out.update(report_texts(spec.stem))
    for name, baseline in OTHER_STUDIES.items():
        if (ROOT / "results" / name).exists():
            out.update(report_texts(name, baseline))
            out[f"evidence/{name}/ablation.md"] = ratio_table(name, baseline)
    if (ROOT / "results" / "lowres_recipe").exists():
        out["evidence/lowres_recipe/parts.md"] = contrast_table("lowres_recipe", RECIPE_CONTRASTS)
        by = _results_by_cell("lowres_recipe")
        out.update(named_contrasts(by))
        for key, (a, b, sizes) in RECIPE_SENTENCES.items():
            xs, ys = paired_lists(by, a, b, sizes)
            at = "" if sizes is None else f" at {', '.join(map(str, sizes))} sentences"
            out[f"evidence/recipe/{key}.md"] = (tested(a, b, xs, ys) if xs else f"`{a}` against `{b}`: no pairs") + at + "\n"
        out["evidence/caveats.md"] = caveats_text()
    if (ROOT / "results" / "lowres_recipe_rerun").exists():
        out["evidence/lowres_recipe/rerun.md"] = rerun_table("lowres_recipe", RERUN_CONTRASTS)
    out["evidence/campaign_minilm.md"] = minilm_table()
    if (ROOT / "results" / "campaign_trf_recipe").exists():
        from auc_ner_lab.nodev import cpu_text, readme_text
        from auc_ner_lab.spec import load_spec

        spec = load_spec(ROOT / "studies" / "campaign_trf_nodev.yaml")
        nodev = _results_by_cell("campaign_trf_nodev", spec) if (ROOT / "results" / "campaign_trf_nodev").exists() else {}
        text = readme_text(nodev, _results_by_cell("campaign_trf_recipe"), list(spec.corpora)).rstrip("\n")
        cpu = _results_by_cell("campaign_cpu_nodev") if (ROOT / "results" / "campaign_cpu_nodev").exists() else {}
        out["evidence/readme/nodev.md"] = f"{text} And {cpu_text(cpu, _results_by_cell('lowres_recipe'))}"
    out["evidence/readme/selection.md"] = selection_text()
    out.update(minilm_budget())
    if (ROOT / "results" / trf_ablation.STUDY).exists():
        out.update(trf_ablation_texts())
    results = verdicts(load_claims(ROOT / "studies" / "claims.yaml"))
    out["evidence/verdicts.md"] = markdown_table(results)
    out.update(claim_sentences(results))
    if (ROOT / "results" / "campaign_resampling").exists():
        out["evidence/claims/resampling_subgroups.md"] = subgroup_sentence("campaign_resampling")
    if (ROOT / "results" / "heads_lowres").exists():
        from scripts import heads_lowres_table as heads

        heads_summary, recipe_summary = {}, {}
        out["evidence/heads_lowres/table.md"] = heads.table(ROOT / "results" / "heads_lowres", ROOT / "results" / "lowres_recipe", heads_summary) + "\n"
        out["evidence/heads_lowres/screen.md"] = heads.screen(ROOT / "results" / "heads_lowres") + "\n"
        out["evidence/heads_lowres/recipe.md"] = heads.recipe_table(ROOT / "results" / "lowres_recipe", recipe_summary) + "\n"
        out.update(readme_fragments(heads_summary, recipe_summary, {v.claim.id: v for v in results}))
    return out


def selection_text() -> str:
    """README's sentences on the annotation loop (`selection_evidence.readme_text`): the rows of
    studies/campaign_selection.yaml against campaign_trf_nodev's random draws of the recipe."""
    from auc_ner_lab.selection_evidence import readme_text
    from auc_ner_lab.spec import load_spec

    spec = load_spec(ROOT / "studies" / "campaign_selection.yaml")
    loop = _results_by_cell(spec.name, spec) if (ROOT / "results" / spec.name).exists() else {}
    random = _results_by_cell("campaign_trf_nodev") if loop and (ROOT / "results" / "campaign_trf_nodev").exists() else {}
    return readme_text(loop, random, list(spec.corpora))


def _gpu_process_check() -> str:
    """`trf_ablation.process_check` of the latest GPU lease's committed process-check log
    (docs/evidence/gpu/<lease>/process_check.log, leases named by kind and date), "" before one."""
    logs = sorted((ROOT / "docs" / "evidence" / "gpu").glob("*/process_check.log"), key=lambda p: p.parent.name.split("_", 1)[-1])
    if not logs:
        return ""
    return trf_ablation.process_check(logs[-1].read_text(encoding="utf8"), str(logs[-1].relative_to(ROOT))).rstrip()


def _hypothesis_rows():
    """campaign_trf_recipe's reported rows of the recipe as first proposed (its method
    `trf_ablation.HYPOTHESIS`, the frozen file the ablation's recipe trains too: the same keys),
    named as the ablation names that recipe, so that the two studies' rows pair."""
    rows = _named_rows("campaign_trf_recipe", "campaign_trf_recipe")
    return [{**r, "method": trf_ablation.RECIPE} for r in rows if r["method"] == trf_ablation.HYPOTHESIS]


def trf_ablation_texts() -> dict:
    """The transformer recipe's dev ablation read by the rule fixed early in it (`trf_ablation.rule_fixed`)
    (`scripts/trf_ablation.py`): parts.md (the table, then the round-0 check of the spec's
    caveat) and the README's words on it."""
    from auc_ner_lab.aggregate import aggregate
    from auc_ner_lab.spec import load_spec
    from auc_ner_lab.store import superseded
    from spacy_auc_ner.api import recipe_config

    spec = load_spec(ROOT / "studies" / f"{trf_ablation.STUDY}.yaml")
    rows = _store(trf_ablation.STUDY).rows_for(spec.cells())
    kept = [r for r in rows if not superseded(r)]  # paired only with rows of the same procedure
    by = {(r.method, r.corpus, r.size): r for r in aggregate(kept, metric=spec.metric, baseline=None)}
    planned = len(spec.corpora) * len(spec.sizes) * spec.partitions  # one method's reported cells
    title = ["# Which parts lowres_best_trf keeps: the dev ablation", "",
             f"Generated by `python scripts/evidence.py` from `results/{trf_ablation.STUDY}/` "
             f"(spec `studies/{trf_ablation.STUDY}.yaml`, its caveat included).", ""]
    reported = _latest_reported(kept)
    recipe_rows = [r for r in _hypothesis_rows() if not superseded(r)]
    standing = {r["key"] for r in kept if r.get("status") == "ok"}
    stale = [r for r in rows if r.get("status") == "ok" and superseded(r)]
    waiting = sum(r["key"] not in standing for r in {r["key"]: r for r in stale}.values())
    stores = [_store(d.name) for d in sorted((ROOT / "results").iterdir()) if d.is_dir()]
    every = [r for store in stores if store.marker.exists() for r in store.rows()]  # every study's rows
    where = trf_ablation.process_positions(every)  # where each worker process trained what
    positions, confounded = trf_ablation.position_check(reported, recipe_rows, where)
    repeats, other_history = trf_ablation.gpu_repeats(every, where)
    judged = trf_ablation.judge(by, planned)
    shipped, _ = trf_ablation.shipped_check(judged, recipe_config(trf_ablation.RECIPE))
    fixed = trf_ablation.rule_fixed(rows, spec.metric)
    guard = self_training_test_guard(judged, reported, spec)
    untraced = _store(trf_ablation.STUDY).untraced(reported)
    parts = ("\n".join(title) + "\n" + trf_ablation.parts_table(by, spec.corpora, spec.sizes, spec.partitions, fixed) + "\n"
             + shipped + "\n"
             + (f"Self-training: {guard}.\n\n" if guard else "")
             + (f"Provenance: {len(untraced)} of the {len(reported)} reported rows read here were trained from a working tree with "
                "uncommitted changes that no stored diff records (their `versions.git_commit` ends in `+changes`), so their commit "
                "alone does not say what code ran.\n\n" if untraced else "")
             + f"Left out: {len(stale)} finished rows superseded by a fix of the code they ran (`store.superseded`: "
             f"self-trained on re-tokenized text before 2026-11-26, caveats.md); {waiting} of their cells have no row "
             "since, which `study run` trains again.\n\n"
             + trf_ablation.round_zero_check(reported)
             + trf_ablation.repeat_check(reported, recipe_rows, "campaign_trf_recipe")
             + positions
             + repeats
             + trf_ablation.device_mix(reported))
    if trf_ablation.differs(trf_ablation.round_zero_pairs(reported).get("GPU", [])):
        cause = ("The rows cannot tell the path from the position: on the GPU every pair that differs ran at two positions (the "
                 "recipe's cell, then `no_self_train`, in one worker process) and every repeat that agrees at one. So the "
                 "difference may come from the two paths or from what a GPU process trained before a cell; on the CPU neither "
                 "changes a training. " + (_gpu_process_check() or (("A GPU cell repeated after other cells in its process (the line above) "
                 "speaks against an effect of history in general, not against one that only the recipe's config meets (augmentation, "
                 "the bias callback). " if other_history else "") + "docs/gpu.md has the check that tells them apart on the next GPU "
                 "lease, and a CPU check that rules out Python code reading memory it never wrote."))
                 if confounded else
                 "The cause is not found (a guess: floating-point sums on the GPU that depend on what the process did before, "
                 "amplified by a few hundred steps on 20-50 sentences).")
        parts += ("On the GPU round 0 of the recipe (the library's `run_rounds`, handed the draw as a `.spacy` file) and a plain "
                  "cell of the same config differ, while a cell trained twice repeats (above); on the CPU they agree. " + cause
                  + " So a GPU pair with `no_self_train` measures self-training plus that difference; what self-training "
                  "adds within one run is the recipe's kept round against its own round 0 (optimistic: chosen on this dev sample).\n")
    return {f"evidence/{trf_ablation.STUDY}/parts.md": parts,
            "evidence/readme/trf_ablation.md": trf_ablation.readme_sentence(by, planned, fixed, guard) + "\n",
            "evidence/trf_dropped.md": dropped_parts_text(judged) + "\n"}


def dropped_parts_text(judged) -> str:
    """What the dev ablation said of the two parts it dropped from the transformer recipe (the
    entity bias, augmentation: their d, p and rule) and what test says of them afterwards: the
    recipe as first proposed, with both, against the shipped one on campaign_trf_recipe's test
    cells, pooled and per cell (not part of the choice, which read dev only)."""
    told = []
    for j in judged:
        if j.part.variant in ("no_bias", "no_augment") and j.diffs:
            rule = "its rule asks for a mean above 0 and p < 0.05" if j.part.rule == "significant gain" else "its rule asks for a mean above 0"
            told.append(f"{j.part.what} {j.interval} dev points ({p_text(j.test.p_value)}, {j.test.n} draws; {rule})")
    text = "the dev ablation dropped " + "; ".join(told) if told else "the dev ablation has not chosen yet"
    if (ROOT / "results" / "campaign_trf_recipe").exists():
        v = versus(_results_by_cell("campaign_trf_recipe"), trf_ablation.HYPOTHESIS, trf_ablation.RECIPE)
        if v is not None:
            text += (f". On test, after the choice, the recipe with both (`{trf_ablation.HYPOTHESIS}`) scores {v.diff} points over "
                     f"the shipped `{trf_ablation.RECIPE}` ({_p_words(v.p)}, {v.draws} draws{v.mixed}), above it with p < 0.05 in "
                     f"{v.above} of the {len(v.cells)} corpus × size cells and below it in {v.below}")
    return text


def self_training_test_guard(judged, reported, spec) -> str:
    """`trf_ablation.self_training_guard` with its test figure: the shipped recipe against the
    CRF head alone on campaign_trf_recipe's test cells (the recipe is the CRF head plus the parts
    the rule kept; said so when self-training is the one part kept); "" without those rows or
    before the rule has kept self-training."""
    kept = [j.part for j in judged if j.part.rule and j.choice in trf_ablation.KEPT]
    if not (ROOT / "results" / "campaign_trf_recipe").exists() or not any(p.variant == "no_self_train" for p in kept):
        return ""
    by = _results_by_cell("campaign_trf_recipe")
    xs, ys = paired_lists(by, trf_ablation.RECIPE, "crf")
    if not xs:
        return ""
    t, diff = paired_difference(xs, ys)
    alone = (", self-training the one part the rule kept" if len(kept) == 1
             else f", with the parts the rule kept ({', '.join(p.what for p in kept)})")
    test = (f"`{trf_ablation.RECIPE}` against the CRF head alone on `campaign_trf_recipe`'s test cells (the shipped recipe"
            f"{alone}), {diff} points ({p_text(t.p_value)}, {t.n} draws{mixed_text(by, trf_ablation.RECIPE, 'crf')})")
    return trf_ablation.self_training_guard(reported, len(spec.corpora) * spec.partitions, len(spec.sizes), test)


CONTRAST = "evidence/recipe/c/"


def named_contrasts(by: dict) -> dict:
    """The recipe ablation's contrasts that the documents name in their markers,
    ``<!-- generated: evidence/recipe/c/A~B[@CORPUS][@SIZES].md -->`` (SIZES as 20-50): the
    paired difference of A and B over their shared draws (a draw's sizes averaged), with its
    interval, the ratio of the means, p and the draws: "+4.5 [+2.5, +6.6] points, ×1.16
    (p<0.001, 15 draws)". A document names the contrast, the rows give the figure."""
    import re

    from scripts import doc_blocks

    out = {}
    for doc in documents():
        for m in doc_blocks.BLOCK.finditer(doc.read_text(encoding="utf8")):
            target = (doc.resolve().parent / m["path"]).resolve()
            base = (ROOT / "docs" / CONTRAST).resolve()
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


def spec_counts() -> dict:
    """{evidence/specs/<campaign>.md: "trials + reported"}: the cells each campaign spec holds
    (the MiniLM pair summed as campaign_minilm.md), for evidence.md's list of the campaigns."""
    from auc_ner_lab.spec import load_spec

    counts = {}
    for spec in sorted((ROOT / "studies").glob("campaign_*.yaml")):
        cells = load_spec(spec).cells()
        trials = sum(c.tuning is not None for c in cells)
        name = "campaign_minilm" if spec.stem.startswith("campaign_minilm") else spec.stem
        t, r = counts.get(name, (0, 0))
        counts[name] = (t + trials, r + len(cells) - trials)
    return {f"evidence/specs/{name}.md": f"{t} + {r}\n" for name, (t, r) in counts.items()}


def claim_sentences(results) -> dict:
    """{evidence/claims/<id>.md: what a claim's test gives, as a sentence part}, for the
    documents' prose: "`ova_auc` - `ce` = +2.5 points [+1.1, +3.9] over 10 draws (20 cells;
    p = 0.003 alone, Holm p = 0.078 over the 27 claims: not confirmed after Holm ...)"."""
    from auc_ner_lab.stats import holm
    from auc_ner_lab.verdicts import family_verdict, side_name

    out = {}
    for v, p_holm in zip(results, holm([v.p_value for v in results])):
        c = v.claim
        if not v.n:
            text = f"`{side_name(c.a)}` against `{side_name(c.b)}`: no finished pairs yet"
        else:
            ci = f" [{100 * v.diff_low:+.1f}, {100 * v.diff_high:+.1f}]" if v.diff_low is not None else ""
            what = (f"the slope of the gap `{side_name(c.a)}` - `{side_name(c.b)}` per doubling of the {c.trend} is {100 * v.mean_diff:+.1f} points{ci}"
                    if c.trend else f"`{side_name(c.a)}` - `{side_name(c.b)}` = {100 * v.mean_diff:+.1f} points{ci}")
            p_alone = "no p-value" if v.p_value is None else f"{_p_words(v.p_value)} alone"
            holm_text = "" if p_holm is None else f", Holm {_p_words(p_holm)} over the {len(results)} claims"
            text = f"{what} over {v.n} draws ({v.cells} cells; {p_alone}{holm_text}: {family_verdict(v, p_holm)})"
        out[f"evidence/claims/{c.id}.md"] = text + "\n"
    return out


def subgroup_sentence(name: str) -> str:
    """How many of a study's per-cell tests against its baseline (each method or value at each
    corpus and size, over its draws) reach p < 0.05 uncorrected, and the smallest p after Holm
    over all of them: subgroups are exploratory, and this says how exploratory."""
    from auc_ner_lab.aggregate import aggregate
    from auc_ner_lab.spec import load_spec
    from auc_ner_lab.stats import holm

    spec = load_spec(ROOT / "studies" / f"{name}.yaml")
    results = aggregate(_store(name).rows_for(spec.cells()), metric=spec.metric, baseline=spec.baseline)
    ps = [r.vs_baseline.p_value for r in results if r.vs_baseline is not None and r.vs_baseline.p_value is not None]
    low = sum(p < 0.05 for p in ps)
    adjusted = [p for p in holm(ps) if p is not None]
    return (f"{low} of the {len(ps)} per-cell tests against {spec.baseline} (each at one corpus and size, over its draws) "
            f"have p < 0.05 uncorrected; after Holm over the {len(ps)} the smallest p is {min(adjusted):.2f}\n")


def _span(values) -> str:
    """"3" or "3-5": the range of some counts."""
    return str(min(values)) if min(values) == max(values) else f"{min(values)}-{max(values)}"


def _p_words(p) -> str:
    return "p < 0.001" if p < 0.001 else f"p = {p:.3f}"


def agreement(diff: float, p: float) -> str:
    """What a paired dev comparison says of a choice already made (diff: chosen - other):
    it agrees only when the chosen one leads with p < 0.05."""
    if diff > 0 and p < 0.05:
        return "agrees"
    return "leans the same way without confirming it" if diff > 0 else "disagrees"


def readme_fragments(heads: dict, recipe: dict, by_claim: dict) -> dict:
    """The README's figures, each a sentence or table generated from the rows (README.md's
    blocks name these files)."""
    from auc_ner_lab.stats import holm

    out = {}
    fixed, plain = heads.get("bilstm_crf_cal_wd"), heads.get("bilstm_crf")
    if fixed and plain and "p" in fixed:
        out["evidence/readme/heads.md"] = (
            f"×{fixed['mean_ratio']:.2f} spaCy's default `ner` on average over the {fixed['cells']} corpus × size cells, "
            f"{fixed['diff']:+.1f} points of entity F1 (paired t-test over the {fixed['draws']} draws, a draw's two "
            f"sizes averaged, {_p_words(fixed['p'])}), no cell below ×{fixed['low']:.2f} (s800 at 20: the plain BiLSTM-CRF "
            f"was ×{plain['ratios'][('s800', 20)]:.2f})" + ("; the spaCy `ner` rows of this comparison record no library versions" if fixed["unversioned"] else "") + "\n")
    if recipe.get("cells"):
        names = {"conll2003": "CoNLL", "ncbi_disease": "NCBI", "s800": "s800"}
        keys = sorted(recipe["cells"], key=lambda k: (list(names).index(k[0]), k[1]))
        lines = ["| dev / test F1 | " + " | ".join(f"{names[c]} {n}" for c, n in keys) + " |", "|---|" + "---|" * len(keys)]
        cells = recipe["cells"]
        lines.append("| `lowres_best` | " + " | ".join(f"{cells[k][0]:.1f} / {cells[k][1]:.1f}" for k in keys) + " |")
        lines.append("| `lowres_spacy_ner` | " + " | ".join(f"{cells[k][2]:.1f} / {cells[k][3]:.1f}" + (" †" if cells[k][6] else "") for k in keys) + " |")
        lines.append("| spaCy's default `ner` | " + " | ".join(f"– / {cells[k][4]:.1f}" + (" †" if cells[k][5] else "") for k in keys) + " |")
        if any(cells[k][5] or cells[k][6] for k in keys):
            lines += ["", "† a row of the cell records no library versions (written before rows recorded them; not rerun)."]
        stale, total = recipe.get("stale", (0, 0))
        if stale:
            lines += ["", f"{stale} of these {total} rows of `lowres_best` and `lowres_spacy_ner` self-trained on text spaCy tokenized "
                      "again (before a fix of 2026-11-26), spaCy's `ner` on the annotated tokens; their cells are being trained again "
                      "([caveats.md](projects/lab/docs/evidence/caveats.md))."]
        out["evidence/readme/recipe_table.md"] = "\n".join(lines) + "\n"
        dev, test, opt = recipe["dev"], recipe["test"], recipe["optimism"]
        best, ner = recipe["lowres_best"], recipe["lowres_spacy_ner"]
        out["evidence/readme/recipe.md"] = (
            f"the dev comparison, run after the switch on the same draws, {agreement(dev[0] - dev[1], dev[2])}: `lowres_best` {dev[0] - dev[1]:+.1f} points of dev F1 "
            f"over `lowres_spacy_ner` (paired t-test over {dev[3]} draws, {_p_words(dev[2])}; test {test[0] - test[1]:+.1f}, {_p_words(test[2])}). "
            f"About {opt['lowres_best'] - opt['lowres_spacy_ner']:.1f} points of the dev gap may be the optimism of the entity bias, "
            f"calibrated on the dev sample that scores it: dev minus test averages {opt['lowres_best']:+.1f} points for `lowres_best` and "
            f"{opt['lowres_spacy_ner']:+.1f} for `lowres_spacy_ner` on these cells. On test `lowres_best` scores ×{best[0] / best[1]:.2f} spaCy's "
            f"default `ner` ({best[0] - best[1]:+.1f}, {_p_words(best[2])}, {best[3]} draws), `lowres_spacy_ner` ×{ner[0] / ner[1]:.2f} "
            f"({ner[0] - ner[1]:+.1f}, {_p_words(ner[2])})\n")
    crf_vs = by_claim.get("minilm_ova_auc_vs_crf")
    ce_vs = by_claim.get("minilm_ova_auc_vs_ce")
    by = {}
    for name in MINILM:
        if (ROOT / "results" / name).exists():
            by.update(_results_by_cell(name))
    recipe_cells = _results_by_cell("lowres_recipe") if (ROOT / "results" / "lowres_recipe").exists() else {}
    crf = {(c, n): r for (m, c, n), r in by.items() if m == "crf"}
    if crf and crf_vs and ce_vs and crf_vs.n and ce_vs.n:
        adjusted = dict(zip(by_claim, holm([v.p_value for v in by_claim.values()])))

        def scores(corpus):
            return " / ".join(f"{100 * crf[(corpus, n)].summary.mean:.1f}" for n in sorted(n for c, n in crf if c == corpus))

        gaps = []
        for (c, n), r in sorted(crf.items()):
            other = recipe_cells.get(("lowres_best", c, n))
            if other is not None:
                shared = sorted(set(r.scores) & set(other.scores))
                if len(shared) >= 2:
                    t, _ = paired_difference([r.scores[i] for i in shared], [other.scores[i] for i in shared])
                    gaps.append((100 * t.mean_diff, t.p_value, len(shared)))
        gap_text = ""
        if gaps:
            gap_text = (f"; {min(g for g, _, _ in gaps):+.1f} to {max(g for g, _, _ in gaps):+.1f} points over the tok2vec `lowres_best` "
                        f"on the same draws (paired p {min(p for _, p, _ in gaps):.3f}-{max(p for _, p, _ in gaps):.3f}, "
                        f"{_span([n for _, _, n in gaps])} pairs each), a tuned protocol against an untuned one, "
                        "so not the encoder's gain alone")

        def corpora(v):
            return ", ".join(f"{c} {100 * d:+.1f}" for c, d, _, _ in v.per_corpus)

        out["evidence/readme/minilm.md"] = (
            f"the CRF head on MiniLM scores {scores('conll2003')} entity F1 on CoNLL 2003 at 20 / 50 sentences and "
            f"{scores('ncbi_disease')} on NCBI-disease (learn rate tuned per method){gap_text}. "
            f"OVA-AUC against the CRF: {100 * crf_vs.mean_diff:+.1f} points over {crf_vs.n} draws (a draw's sizes averaged; "
            f"{_p_words(crf_vs.p_value)}, Holm over the {len(by_claim)} claims {adjusted['minilm_ova_auc_vs_crf']:.2f}: not confirmed; "
            f"by corpus, exploratory: {corpora(crf_vs)}); against CE: {100 * ce_vs.mean_diff:+.1f} ({_p_words(ce_vs.p_value)}, "
            f"{ce_vs.n} draws, Holm {adjusted['minilm_ova_auc_vs_ce']:.2f}), its sign differing by corpus ({corpora(ce_vs)})\n")
    out.update(trf_fragments())
    return out


PEER = "hf_token_classification"
RECIPE_TRF = "lowres_best_trf"
# issue 31's goal for the transformer recipe, fixed before its rows: x1.4 the peer's test F1 on
# average (read as the ratio of the mean test F1s over the same cells: `pooled_ratio`), no cell
# below x1.0, x1.3 spaCy's ner in every cell
GOAL_PEER_MEAN, GOAL_PEER_CELL, GOAL_NER_CELL = 1.4, 1.0, 1.3


def device_label(row: dict) -> str:
    """Where a row trained, in words: "an NVIDIA H200" (its `device` without "cuda:N"), "a GPU"
    when it names none, "the CPU" (rows from before rows recorded a device trained there)."""
    device = str(row.get("device") or "cpu")
    if not device.startswith("cuda"):
        return "the CPU"
    name = device.split(" ", 1)[1].strip() if " " in device else ""
    return f"an {name}" if name[:1].upper() in "AEFHILMNORSX" else (f"a {name}" if name else "a GPU")


def device_counts(rows, methods) -> str:
    """Per (method, name) of `methods`, how many of `rows` trained where: "`crf` 18 on an NVIDIA
    H200 and 12 on the CPU" (methods without rows left out)."""
    from collections import Counter

    parts = []
    for method, name in methods:
        where = Counter(device_label(r) for r in rows if r["method"] == method)
        if where:
            parts.append(f"{name} " + " and ".join(f"{n} on {label}" for label, n in sorted(where.items(), key=lambda kv: (-kv[1], kv[0]))))
    return "; ".join(parts)


def trf_fragments() -> dict:
    """The README's two sentences on campaign_trf_recipe, from its rows read once: the
    package's heads against the Hugging Face peer (`peer_sentence`) and the transformer recipe
    against the peer, spaCy's ner and the CRF head (`trf_recipe_sentence`)."""
    from collections import Counter

    from auc_ner_lab.spec import load_spec
    from auc_ner_lab.store import device_kind, superseded

    if not (ROOT / "results" / "campaign_trf_recipe").exists():
        return {}
    spec = load_spec(ROOT / "studies" / "campaign_trf_recipe.yaml")
    store = _store("campaign_trf_recipe")
    rows = store.rows_for(spec.cells())  # read once, for both sentences and the stale count
    by = _results_by_cell("campaign_trf_recipe", spec, rows)
    planned = spec.partitions * len(spec.corpora) * len(spec.sizes) * len(spec.values)  # one method's reported cells
    reported = _latest_reported(rows)
    stale = sum(1 for r in reported if r["method"] == RECIPE_TRF and superseded(r))
    gpu = {m: sum(1 for r in reported if r["method"] == m and device_kind(r) == "GPU") for m in (RECIPE_TRF, trf_ablation.HYPOTHESIS)}
    extras = [(r.get("scores") or {}).get("extras") or {} for r in reported if r["method"] == RECIPE_TRF]
    pools = Counter(e.get("pool_sentences") for e in extras if e.get("pool_sentences"))
    trainings = Counter(len(e["rounds"]) for e in extras if e.get("rounds"))
    cost = (pools.most_common(1)[0][0], trainings.most_common(1)[0][0]) if pools and trainings else None
    untraced = store.untraced(reported)
    provenance = (len(untraced), sum(r["method"] == RECIPE_TRF for r in untraced), len(reported),
                  sum(r["method"] == RECIPE_TRF for r in reported))
    out = {"evidence/readme/trf_recipe.md": trf_recipe_sentence(by, planned, stale, gpu, cost, provenance) + "\n"}
    stores = [_store(d.name) for d in sorted((ROOT / "results").iterdir()) if d.is_dir()]
    gap = trf_ablation.device_gap(distinct(r for s in stores if s.marker.exists() for r in s.rows()))
    names = ((PEER, f"`{PEER}`"), ("crf", "the CRF head"), ("spacy_ner", "spaCy's `ner`"))
    peer = peer_sentence(by, device_counts([r for r in reported if r["method"] in dict(names)], names), gap)
    if peer:
        out["evidence/readme/peer.md"] = peer + "\n"
    return out


def cell_ratios(by: dict, a: str, b: str) -> list:
    """Per corpus x size cell where a and b share >= 2 partitions: (corpus, size, mean of a /
    mean of b over the shared partitions, paired p-value over them, partitions)."""
    out = []
    for (m, c, n), r in sorted(by.items(), key=lambda kv: str(kv[0])):
        other = by.get((b, c, n))
        shared = sorted(set(r.scores) & set(other.scores)) if m == a and other is not None else []
        mean_b = sum(other.scores[i] for i in shared) / len(shared) if shared else 0.0
        if len(shared) >= 2 and mean_b > 0:  # no ratio to a zero
            t, _ = paired_difference([r.scores[i] for i in shared], [other.scores[i] for i in shared])
            out.append((c, n, sum(r.scores[i] for i in shared) / len(shared) / mean_b, t.p_value, len(shared)))
    return out


def _shared_mean(by: dict, a: str, b: str, corpus: str, size) -> float:
    """b's mean over the partitions of one cell that a shares with it."""
    x, y = by[(a, corpus, size)], by[(b, corpus, size)]
    shared = sorted(set(x.scores) & set(y.scores))
    return sum(y.scores[i] for i in shared) / len(shared)


def versus(by: dict, a: str, b: str):
    """a against b over the corpus x size cells both have (`cell_ratios`): the ratio of the
    pooled means over every cell pair (`pooled_ratio`) and per corpus, the cell ratios' mean,
    lowest and highest, the cells above and below b with p < 0.05, the partitions a cell, the
    pooled difference, one pair per draw (`paired_lists`), and the pairs across device kinds
    (`mixed_text`); None without such a cell."""
    from types import SimpleNamespace

    cells = cell_ratios(by, a, b)
    if not cells:
        return None
    ratios = [r for _, _, r, _, _ in cells]
    xs, ys = paired_lists(by, a, b)
    t, diff = paired_difference(xs, ys)
    above, below = (sum(p < 0.05 and (r > 1) == up for _, _, r, p, _ in cells) for up in (True, False))
    corpora = sorted({c for c, *_ in cells})
    return SimpleNamespace(cells=cells, mean=sum(ratios) / len(ratios), low=min(ratios), high=max(ratios), above=above,
                           below=below, partitions=_span([k for *_, k in cells]), diff=diff, p=t.p_value, draws=len(xs),
                           pooled=pooled_ratio(by, a, b), pairs=len(_cell_pairs(by, a, b)), mixed=mixed_text(by, a, b),
                           by_corpus={c: pooled_ratio(by, a, b, corpus=c) for c in corpora})


def peer_sentence(by: dict, devices: str = "", gap=None) -> str:
    """MiniLM against a plain Hugging Face fine-tune of it: the package's heads over the peer
    in each corpus x size cell of campaign_trf_recipe (partitions independent within a cell),
    and pooled one pair per draw (a draw's sizes averaged); "" without rows to pair.
    `devices`: where the compared rows trained (`device_counts`); `gap`: (mean dev points, cells)
    between a CPU and a GPU training of one cell (`trf_ablation.device_gap`)."""
    parts = []
    for method, name in (("crf", "the CRF head"), ("spacy_ner", "spaCy's `ner`")):
        v = versus(by, method, PEER)
        if v is not None:
            parts.append(f"{name} ×{v.low:.2f} to ×{v.high:.2f} its test F1 in the {len(v.cells)} corpus × size cells "
                         f"({v.above} above and {v.below} below it with p < 0.05, {v.partitions} partitions each), "
                         f"{v.diff} points pooled ({_p_words(v.p)}, {v.draws} draws, a draw's sizes averaged{v.mixed})")
    if not parts:
        return ""
    where = f"({v.partitions} partitions a cell"
    if devices:
        where += f"; rows by device: {devices}"
        if gap and gap[1]:
            where += (f"; one cell trained on both a GPU and the CPU differs by {100 * gap[0]:.1f} dev F1 points on average, "
                      f"{gap[1]} such cells in any study, so a pair across devices carries that too")
    where += ") "
    return (f"{where}against a plain Hugging Face fine-tune of the same MiniLM (`AutoModelForTokenClassification`, "
            "the lab's `hf_token_classification`) on the same draws, budget and learn-rate tuning: " + "; ".join(parts))


def _times(n: int) -> str:
    return {1: "once", 2: "twice"}.get(n, f"{n} times")


def trf_recipe_sentence(by: dict, planned: int, stale: int = 0, gpu: Optional[dict] = None, cost=None, provenance=None) -> str:
    """The README's sentence on lowres_best_trf (`by`: `_results_by_cell` of
    campaign_trf_recipe; `planned`: its reported cells in the spec; `stale`: how many of its
    rows are superseded, `store.superseded`; `gpu`: per method, its reported rows trained on a
    GPU; `cost`: (the raw sentences its self-training reads, the trainings of a cell) as its
    rows record them; `provenance`: (reported rows from uncommitted trees without a stored
    diff, of them the recipe's, reported rows, the recipe's)): against the peer, spaCy's ner
    and the CRF head alone, the ratio of the pooled means (the headline; the mean of the cell
    ratios beside it, labelled), per cell (partitions within a cell are independent draws) and
    pooled one pair per draw, whether issue 31's goal holds on the cells there are, and against
    the recipe as first proposed, which the dev ablation changed."""
    def cells_of(method: str) -> int:
        return sum(len(r.scores) for (m, _, _), r in by.items() if m == method)

    done = cells_of(RECIPE_TRF)
    if not done:
        return f"`{RECIPE_TRF}` has no reported cells yet (0 of {planned}; its campaign: `projects/lab/scripts/run_campaign_trf.sh`)"
    parts, verdicts = [], []
    for other, name in ((PEER, "the peer"), ("spacy_ner", "spaCy's `ner`"), ("crf", "the CRF head alone")):
        v = versus(by, RECIPE_TRF, other)
        if v is None:
            continue
        if len(v.cells) > 1:
            how = [f"the ratio of the pooled means over {v.pairs} cell pairs"]
            if other == PEER and len(v.by_corpus) > 1:
                top = max(v.by_corpus, key=lambda c: v.by_corpus[c])
                rest = pooled_ratio(by, RECIPE_TRF, other, corpus=[c for c in v.by_corpus if c != top])
                how.append("by corpus " + ", ".join(f"{c} ×{r:.2f}" for c, r in v.by_corpus.items())
                           + ("" if rest is None else f"; without {top}, ×{rest:.2f}"))
            mean_text = f"the mean of the {len(v.cells)} per-cell ratios ×{v.mean:.2f}"
            if other == PEER:
                highest = sorted(v.cells, key=lambda cell: -cell[2])[:2]
                mean_text += (", lifted by its highest cells, " + " and ".join(
                    f"{c} at {n} (×{r:.2f}, the peer's F1 {100 * _shared_mean(by, RECIPE_TRF, other, c, n):.1f})" for c, n, r, _, _ in highest))
            how.append(mean_text)
            parts.append(f"×{v.pooled:.2f} {name}'s mean test F1 ({'; '.join(how)}; cells ×{v.low:.2f} to ×{v.high:.2f}, "
                         f"{v.above} above and {v.below} below with p < 0.05, {v.partitions} partitions each), "
                         f"{v.diff} points pooled ({_p_words(v.p)}, {v.draws} draws, a draw's sizes averaged{v.mixed})")
        else:
            parts.append(f"×{v.mean:.2f} {name}'s test F1 in its one corpus × size cell with rows ({v.cells[0][0]} at {v.cells[0][1]}), "
                         f"{v.diff} points ({_p_words(v.p)}, {v.draws} draws{v.mixed})")
        if other == PEER:
            pooled = v.pooled if v.pooled is not None else v.mean
            met = f"{'met' if pooled >= GOAL_PEER_MEAN else 'not met'} on the ratio of the pooled means (×{pooled:.2f})"
            if len(v.cells) > 1:
                met += (f"; the mean of the cell ratios, ×{v.mean:.2f}, a reading picked after the peer rows existed, "
                        + ("would pass" if v.mean >= GOAL_PEER_MEAN else "would not pass either"))
            verdicts.append(f"×{GOAL_PEER_MEAN} the peer's mean test F1: {met}; "
                            f"no cell below ×{GOAL_PEER_CELL}: {'met' if v.low >= GOAL_PEER_CELL else 'not met'}")
        if other == "spacy_ner":
            verdicts.append(f"×{GOAL_NER_CELL} spaCy's `ner` in every cell: {'met' if v.low >= GOAL_NER_CELL else 'not met'}")
    so_far = "" if done == planned else " so far"
    if not parts:
        return (f"`{RECIPE_TRF}` has {done} of {planned} reported cells{so_far}, too few for a paired comparison "
                "(a cell needs 2 partitions shared with the method it is compared with)")
    progress = f"{done} of {planned} reported cells so far, the rest still training" if so_far else f"all {planned} reported cells"
    gpu = gpu or {}
    if gpu.get(RECIPE_TRF):
        progress += f", {gpu[RECIPE_TRF]} of them trained on a GPU"
    same = "same draws, budget and tuning"
    if cost:
        same += (f" as the methods compared; besides, it reads {cost[0]:,} raw sentences, its self-training pool, which "
                 f"they do not, and trains {_times(cost[1])} a cell, the draw and then with the pool it labelled")
    first = versus(by, RECIPE_TRF, trf_ablation.HYPOTHESIS)
    against_first = ("" if first is None else
                     f". Against the recipe as first proposed (`{trf_ablation.HYPOTHESIS}`: with the entity bias and augmentation, "
                     f"which the dev ablation dropped; {gpu.get(trf_ablation.HYPOTHESIS, 0)} of its {cells_of(trf_ablation.HYPOTHESIS)} cells trained on a "
                     f"GPU; compared on test after the choice, not part of it): {first.diff} points pooled ({_p_words(first.p)}, "
                     f"{first.draws} draws{first.mixed}; {first.below} of the {len(first.cells)} cells below it and {first.above} above "
                     "with p < 0.05)")
    caveat = ("" if not stale else
              f". Caveat: {stale} of these rows of `{RECIPE_TRF}` self-trained and were scored on dev on text that spaCy tokenized "
              "again, unlike the methods compared with it, which read the annotated tokens (it matters on CoNLL 2003, whose "
              "hyphenated words spaCy splits); fixed on 2026-11-26, their cells are being trained again: which, and how much "
              "the others moved, in [caveats.md](projects/lab/docs/evidence/caveats.md)")
    untraced = ""
    if provenance and provenance[0]:
        untraced = (f". Provenance: {provenance[0]} of the {provenance[2]} reported rows of this comparison ({provenance[1]} of "
                    f"`{RECIPE_TRF}`'s {provenance[3]} among them) were trained from a working tree with uncommitted changes that no "
                    "stored diff records (their `versions.git_commit` ends in `+changes`), so their commit alone does not say what "
                    "code ran")
    return (f"`{RECIPE_TRF}` ({progress}; {same}): " + "; ".join(parts) + f". The goal set before its rows ({'; '.join(verdicts)}){so_far}"
            + against_first + caveat + untraced)


def documents() -> list:
    """The documents whose generated blocks `docs` refreshes and checks: the repository's
    README, the lab's README and docs/*.md, docs/evidence/*.md."""
    repo = ROOT.parents[1]
    docs = [repo / "README.md", ROOT / "README.md"] + sorted((ROOT / "docs").glob("*.md")) + sorted(OUT.glob("*.md"))
    return [d for d in docs if d.exists()]


def docs(check: bool = False, say=print, generated=None, docs_list=None) -> int:
    """Write every generated file and block from the rows (`fragments`, or `generated` when
    given), or with `check` only compare: one line per file or block that differs from what
    the rows give, and 1; 0 when nothing differs. `docs_list`: the documents (`documents()`).
    A row file the rows are read from that cannot be read is named; then nothing is written
    (a StoreError), and the check fails."""
    import tempfile

    from auc_ner_lab.store import StoreError
    from scripts import doc_blocks

    generated, unreadable = unread_rows(fragments) if generated is None else (generated, [])
    for line in unreadable:
        say(line)
    if unreadable and not check:  # a figure without its row would be written as if it were all
        raise StoreError(f"{len(unreadable)} unreadable row file(s) in the results stores (named above); nothing "
                         "written: put them right or train their cells again, then run docs again")
    texts = {(ROOT / "docs" / rel).resolve(): text for rel, text in generated.items()}
    problems = []
    for path, text in texts.items():
        current = path.read_text(encoding="utf8") if path.exists() else None
        if current == text:
            continue
        if check:
            problems.append(f"{path.relative_to(ROOT.parents[1].resolve())}: differs from what the rows give")
        else:
            path.parent.mkdir(parents=True, exist_ok=True)
            with tempfile.NamedTemporaryFile("w", encoding="utf8", dir=path.parent, delete=False, suffix=".tmp") as tmp:
                tmp.write(text)
            Path(tmp.name).replace(path)
            say(f"wrote {path}")
    for doc in documents() if docs_list is None else docs_list:
        if check:
            problems += doc_blocks.drift(doc, doc.resolve().parent, texts)
        else:
            before = doc.read_text(encoding="utf8")
            doc_blocks.refresh(doc, doc.resolve().parent, texts)
            if doc.read_text(encoding="utf8") != before:
                say(f"{doc}: generated blocks refreshed")
    repo = f"{ROOT.parents[1].resolve()}/"
    for line in problems:
        say(line.replace(repo, ""))
    if problems:
        say(f"{len(problems)} generated text(s) differ from the rows: run `python projects/lab/lab.py docs` to rewrite them")
    if unreadable:
        say(f"{len(unreadable)} unreadable row file(s) in the results stores (named above)")
    return 1 if problems or unreadable else 0


def unread_rows(compute):
    """`compute()` and the row files its reads skipped (`store.UnreadableRow`), each named once;
    any other warning is shown as it would have been."""
    import warnings

    from auc_ner_lab.store import UnreadableRow

    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always", UnreadableRow)
        result = compute()
    for w in caught:
        if not issubclass(w.category, UnreadableRow):
            warnings.showwarning(w.message, w.category, w.filename, w.lineno)
    return result, list(dict.fromkeys(str(w.message) for w in caught if issubclass(w.category, UnreadableRow)))


def main() -> None:
    """Everything `docs` writes, plus the studies' plots and the corpus overlap table (which
    needs the corpora)."""
    OUT.mkdir(parents=True, exist_ok=True)
    for spec in sorted((ROOT / "studies").glob("campaign_*.yaml")):
        results = ROOT / "results" / spec.stem
        if results.exists():
            run("study", "report", str(results.relative_to(ROOT)), "--spec", str(spec.relative_to(ROOT)),
                "--out", str((OUT / spec.stem).relative_to(ROOT)), "--overwrite")
    for name, baseline in OTHER_STUDIES.items():
        if (ROOT / "results" / name).exists():
            run("study", "report", f"results/{name}", "--spec", f"studies/{name}.yaml", "--baseline", baseline,
                "--out", str((OUT / name).relative_to(ROOT)), "--overwrite")
    corpora = ["conll2003", "ncbi_disease", "s800"]
    from auc_ner_lab.corpora import locate

    if all(locate(c, cwd=ROOT) for c in corpora):
        subprocess.run([sys.executable, "-m", "scripts.corpus_overlap", *corpora, "--out",
                        str(OUT / "corpus_overlap.md")], cwd=ROOT, stdout=subprocess.DEVNULL, check=True)
        subprocess.run([sys.executable, "-m", "scripts.corpus_tokens", *corpora, "--out",
                        str(OUT / "corpus_tokens.md")], cwd=ROOT, stdout=subprocess.DEVNULL, check=True)
    else:
        print("corpus_overlap.md, corpus_tokens.md: corpora not found; the committed tables are kept")
    docs()


if __name__ == "__main__":
    sys.path.insert(0, str(ROOT))
    main()
