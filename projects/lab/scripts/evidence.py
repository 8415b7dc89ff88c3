"""Regenerate the evidence from the committed results: one command for every README table.

For each `studies/campaign_*.yaml` whose results file `results/<name>.jsonl` exists: the study
report (mean F1 with 95 % intervals, paired tests against CE, chosen tuning values, compute,
plots) into `docs/evidence/<name>/`; the same for the recipe's ablation
(`studies/lowres_recipe.yaml`, against spaCy's default `ner`) plus its README table
(`docs/evidence/lowres_recipe/ablation.md`: ratios to spaCy's `ner`, paired tests, wall time);
then the verdict of every claim of `studies/claims.yaml` into `docs/evidence/verdicts.md`;
then the generated blocks of README.md (see scripts/readme_tables.py). Run from the repository root: `python scripts/evidence.py` or
`spacy project run evidence`.
"""
import json
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
OUT = ROOT / "docs" / "evidence"
# the studies reported here besides the campaigns, with the baseline of their paired tests
OTHER_STUDIES = {"lowres_recipe": "spacy_ner"}
# what each part of the recipe adds: (what, method with it, method without it)
RECIPE_CONTRASTS = [
    ("the extras (the recipe against spaCy's default ner)", "recipe", "spacy_ner"),
    ("augmentation", "recipe", "recipe_no_augment"),
    ("pretraining", "recipe", "recipe_no_pretrain"),
    ("self-training", "recipe", "recipe_no_self_train"),
    ("a second self-training round", "recipe_rounds2", "recipe"),
    ("a third self-training round", "recipe_rounds3", "recipe_rounds2"),
    ("more raw text: 5,000 pool sentences in place of 2,000 (two rounds)", "recipe_pool5000", "recipe_rounds2"),
    ("raw text (the recipe against it without --raw)", "recipe", "recipe_no_raw"),
    ("pretraining on the annotated sentences alone (no raw text)", "recipe_no_raw", "recipe_augment_only"),
    ("augmentation alone, for spaCy's ner", "recipe_augment_only", "spacy_ner"),
    ("no raw text: the recipe without --raw against the BiLSTM-CRF", "recipe_no_raw", "bilstm_crf"),
    ("augmentation, for the BiLSTM-CRF", "bilstm_crf_augment", "bilstm_crf"),
    ("no raw text: the BiLSTM-CRF with augmentation against spaCy's ner with it", "bilstm_crf_augment", "recipe_augment_only"),
    ("the AUC term (mu 0.1), for the CRF", "crf_auc", "crf"),
    ("the AUC term (mu 0.1), for the BiLSTM-CRF", "bilstm_crf_auc", "bilstm_crf"),
    ("the CRF + AUC head in place of spaCy's ner, both with the extras", "crf_auc_extras", "recipe"),
    ("the BiLSTM-CRF + AUC head in place of spaCy's ner, both with the extras", "bilstm_crf_auc_extras", "recipe"),
    ("the extras, for the BiLSTM-CRF + AUC head", "bilstm_crf_auc_extras", "bilstm_crf_auc"),
    ("the extras, for the CRF + AUC head", "crf_auc_extras", "crf_auc"),
    ("augmentation, for the CRF + AUC head", "crf_auc_extras", "crf_auc_extras_no_augment"),
    ("pretraining, for the CRF + AUC head", "crf_auc_extras", "crf_auc_extras_no_pretrain"),
    ("self-training, for the CRF + AUC head", "crf_auc_extras", "crf_auc_extras_no_self_train"),
    ("the AUC term (mu 0.1 against 0), with the extras", "crf_auc_extras", "crf_extras"),
    ("a BiLSTM under the CRF + AUC head, with the extras", "bilstm_crf_auc_extras", "crf_auc_extras"),
    ("a BiLSTM encoder under spaCy's ner (BiLSTMEncoder.v1)", "spacy_ner_bilstm", "spacy_ner"),
    ("a BiLSTM encoder under spaCy's ner, with the extras", "recipe_bilstm_encoder", "recipe"),
]

# new methods against their baseline rerun alongside them (results/lowres_recipe_rerun.jsonl):
# (what, method of the committed results, method of the rerun)
RERUN_CONTRASTS = [
    ("a second self-training round, against the recipe rerun with today's libraries", "recipe_rounds2", "recipe"),
    ("no raw text: the recipe without --raw, against the recipe rerun", "recipe_no_raw", "recipe"),
    ("augmentation alone, against spaCy's ner rerun", "recipe_augment_only", "spacy_ner"),
    ("the recipe as shipped (two rounds), against spaCy's ner rerun", "recipe_rounds2", "spacy_ner"),
    ("no raw text: the BiLSTM-CRF (the package's LSTM), against spaCy's ner rerun", "bilstm_crf", "spacy_ner"),
    ("the BiLSTM-CRF + AUC head with the extras, against the recipe rerun", "bilstm_crf_auc_extras", "recipe"),
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
    """How far each campaign has got: finished cells of its grid, tuning trials apart, and the
    training time its rows record (summed over cells, so about twice the wall time with 2
    workers)."""
    from auc_ner_lab.runner import latest_rows, read_results
    from auc_ner_lab.spec import load_spec

    lines = [
        "| study | reported cells done | tuning trials done | failed | training hours recorded |",
        "|---|---:|---:|---:|---:|",
    ]
    specs = sorted((ROOT / "studies").glob("campaign_*.yaml")) + [ROOT / "studies" / f"{name}.yaml" for name in OTHER_STUDIES]
    for spec_path in specs:
        cells = load_spec(spec_path).cells()
        rows = latest_rows(read_results(ROOT / "results" / f"{spec_path.stem}.jsonl"))
        done = {cid for cid, row in rows.items() if row.get("status") == "ok"}
        failed = sum(1 for c in cells if c.id in rows and rows[c.id].get("status") != "ok")
        trials = [c for c in cells if c.tuning is not None]
        reported = [c for c in cells if c.tuning is None]
        hours = sum(float(rows[c.id].get("seconds") or 0.0) for c in cells if c.id in rows) / 3600
        lines.append(
            f"| `{spec_path.stem}` | {sum(c.id in done for c in reported)} of {len(reported)} "
            f"| {sum(c.id in done for c in trials)} of {len(trials)} | {failed} | {hours:.1f} |"
        )
    return "\n".join(lines) + "\n"


def ratio_table(name: str, baseline: str) -> str:
    """The README table of a study against `baseline`: per method and corpus/size, mean F1 in %,
    the ratio of the mean F1s over the partitions both have, the paired t-test's p-value; a
    last column pools every (corpus, size, partition) pair; then the mean wall seconds of one
    cell (training, extras and scoring), finished cells only."""
    from auc_ner_lab.aggregate import aggregate
    from auc_ner_lab.runner import latest_rows, read_results
    from auc_ner_lab.spec import load_spec
    from auc_ner_lab.stats import paired_t_test

    spec = load_spec(ROOT / "studies" / f"{name}.yaml")
    wanted = {c.id for c in spec.cells()}
    rows = [r for r in read_results(ROOT / "results" / f"{name}.jsonl") if r["cell_id"] in wanted]
    results = aggregate(rows, metric=spec.metric, baseline=baseline)
    columns = sorted({(r.corpus, r.size) for r in results}, key=lambda k: (k[0], k[1]))
    methods = list(dict.fromkeys(r.method for r in results))
    cell = {(r.method, r.corpus, r.size): r for r in results}
    seconds: dict = {}
    dev: dict = {}
    for row in latest_rows(rows).values():
        if row["status"] != "ok":
            continue
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
        return f"{mean} ({ratio}, {p_text(t.p_value, 'p –')})"

    def pooled(method: str) -> str:
        a, b = [], []
        for corpus, size in columns:
            r, base = cell.get((method, corpus, size)), cell.get((baseline, corpus, size))
            if r is None or base is None:
                continue
            shared = sorted(set(r.scores) & set(base.scores))
            a += [r.scores[p] for p in shared]
            b += [base.scores[p] for p in shared]
        if method == baseline or not a:
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
        f"| method | {' | '.join(head)} | all pairs | dev F1 | s per cell |",
        "|---|" + "---:|" * (len(head) + 3),
    ]
    for method in methods:
        cells = [text(cell.get((method, corpus, size))) for corpus, size in columns]
        secs = seconds.get(method, [])
        mean_s = f"{sum(secs) / len(secs):.0f}" if secs else "–"
        lines.append(f"| `{method}` | {' | '.join(cells)} | {pooled(method)} | {dev_text(method)} | {mean_s} |")
    done = sum(1 for r in latest_rows(rows).values() if r["status"] == "ok")
    lines += [
        "",
        f"{METRIC_NAME} in %, mean over the partitions finished ({done} of {len(wanted)} cells); "
        f"(×ratio, p): the ratio of the mean F1s to `{baseline}` over the same partitions and "
        f"the two-sided paired t-test's p-value; all pairs: every corpus, size and partition pooled; "
        f"dev F1: the mean on the 300-sentence dev sample over the cells shared with `{baseline}`, "
        f"with the ratio to its dev F1 on them, what a choice between methods may read "
        f"(the test columns may not); s per cell: mean wall seconds of a cell (training, extras, "
        f"scoring) on the 2 shared cores.",
    ]
    return "\n".join(lines) + "\n"


def contrast_table(name: str, contrasts) -> str:
    """Per (what, a, b): the paired difference a - b over every (corpus, size, partition) both
    finished, in points with its 95 % interval, the ratio of the means and the p-value."""
    from auc_ner_lab.aggregate import aggregate
    from auc_ner_lab.runner import read_results
    from auc_ner_lab.spec import load_spec

    spec = load_spec(ROOT / "studies" / f"{name}.yaml")
    wanted = {c.id for c in spec.cells()}
    rows = [r for r in read_results(ROOT / "results" / f"{name}.jsonl") if r["cell_id"] in wanted]
    results = aggregate(rows, metric=spec.metric, baseline=None)
    by = {(r.method, r.corpus, r.size): r for r in results}
    lines = ["| what it adds | with vs without | difference (points, 95 % CI) | ratio | p (pairs) |", "|---|---|---:|---:|---:|"]
    for what, a, b in contrasts:
        xs, ys = [], []
        for (method, corpus, size), r in by.items():
            other = by.get((b, corpus, size))
            if method != a or other is None:
                continue
            shared = sorted(set(r.scores) & set(other.scores))
            xs += [r.scores[p] for p in shared]
            ys += [other.scores[p] for p in shared]
        if not xs:
            lines.append(f"| {what} | `{a}` vs `{b}` | – | – | – (n=0) |")
            continue
        t, diff = paired_difference(xs, ys)
        ratio = "–" if t.ratio is None else f"×{t.ratio:.2f}"
        lines.append(f"| {what} | `{a}` vs `{b}` | {diff} | {ratio} | {p_text(t.p_value)} (n={t.n}) |")
    return "\n".join(lines) + "\n"


METRIC_NAME = "Entity F1 (seqeval strict IOB2, micro)"


def rerun_table(name: str, contrasts) -> str:
    """The same cells trained again later (`results/<name>_rerun.jsonl`, written with the same
    spec and cell ids, other library versions and code): per method, corpus and size, the
    committed mean F1, the rerun's, their paired difference and the largest difference of one
    cell; then each new method against the rerun of what it changes, both from the same
    environment."""
    from auc_ner_lab.runner import latest_rows, read_results
    from auc_ner_lab.spec import load_spec

    metric = load_spec(ROOT / "studies" / f"{name}.yaml").metric
    def ok(path):
        return {cid: r for cid, r in latest_rows(read_results(path)).items() if r["status"] == "ok" and metric in (r.get("scores") or {})}

    old, new = ok(ROOT / "results" / f"{name}.jsonl"), ok(ROOT / "results" / f"{name}_rerun.jsonl")

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
    lines += ["", "| what it adds | method (committed) vs baseline (rerun) | difference (points, 95 % CI) | p (pairs) |", "|---|---|---:|---:|"]
    for what, a, b in contrasts:
        by_draw = {(r["corpus"], r["size"], r["partition"]): r["scores"][metric] for r in new.values() if r["method"] == b}
        pairs = [(r["scores"][metric], by_draw[k]) for r in old.values() if r["method"] == a
                 for k in [(r["corpus"], r["size"], r["partition"])] if k in by_draw]
        if not pairs:
            lines.append(f"| {what} | `{a}` vs `{b}` | – | – (n=0) |")
            continue
        lines.append(f"| {what} | `{a}` vs `{b}` | {diff_text([x for x, _ in pairs], [y for _, y in pairs])} |")
    lines += ["", f"{METRIC_NAME} in %. The rerun's rows record what ran them: "
              + ("; ".join(", ".join(f"{k} {v}" for k, v in json.loads(v).items() if v) for v in versions) or "not recorded")
              + "; committed rows written before the fifth session do not record them."]
    return "\n".join(lines) + "\n"


def main() -> None:
    OUT.mkdir(parents=True, exist_ok=True)
    (OUT / "campaign_status.md").write_text(status_table(), encoding="utf8")
    for spec in sorted((ROOT / "studies").glob("campaign_*.yaml")):
        results = ROOT / "results" / f"{spec.stem}.jsonl"
        if not results.exists():
            print(f"{spec.name}: no results yet ({results.relative_to(ROOT)})")
            continue
        # a campaign whose reported cells have not started yet (only tuning trials) has no
        # report: say so and go on with the others
        if not run("study", "report", str(results.relative_to(ROOT)), "--spec", str(spec.relative_to(ROOT)),
                   "--out", str((OUT / spec.stem).relative_to(ROOT))):
            print(f"{spec.name}: no report yet")
    for name, baseline in OTHER_STUDIES.items():
        results = ROOT / "results" / f"{name}.jsonl"
        if not results.exists():
            print(f"{name}: no results yet ({results.relative_to(ROOT)})")
            continue
        run("study", "report", str(results.relative_to(ROOT)), "--spec", f"studies/{name}.yaml", "--baseline", baseline,
            "--out", str((OUT / name).relative_to(ROOT)))
        (OUT / name).mkdir(parents=True, exist_ok=True)
        (OUT / name / "ablation.md").write_text(ratio_table(name, baseline), encoding="utf8")
    if (ROOT / "results" / "lowres_recipe.jsonl").exists():
        (OUT / "lowres_recipe" / "parts.md").write_text(contrast_table("lowres_recipe", RECIPE_CONTRASTS), encoding="utf8")
    if (ROOT / "results" / "lowres_recipe_rerun.jsonl").exists():
        (OUT / "lowres_recipe" / "rerun.md").write_text(rerun_table("lowres_recipe", RERUN_CONTRASTS), encoding="utf8")
    if not run("study", "verdicts", "studies/claims.yaml", "--out", str((OUT / "verdicts.md").relative_to(ROOT))):
        raise SystemExit(1)
    subprocess.run([sys.executable, str(ROOT / "scripts" / "readme_tables.py"), str(ROOT / "docs")], check=True)


if __name__ == "__main__":
    main()
