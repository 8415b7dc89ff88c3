"""Regenerate the evidence from the committed results: one command for every README table.

For each `studies/campaign_*.yaml` whose results file `results/<name>.jsonl` exists: the study
report (mean F1 with 95 % intervals, paired tests against CE, chosen tuning values, compute,
plots) into `docs/evidence/<name>/`; then the verdict of every claim of `studies/claims.yaml`
into `docs/evidence/verdicts.md`; then the generated blocks of README.md (see
scripts/readme_tables.py). Run from the repository root: `python scripts/evidence.py` or
`spacy project run evidence`.
"""
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
OUT = ROOT / "docs" / "evidence"


def run(*args: str) -> bool:
    print("$", " ".join(args), flush=True)
    return subprocess.run([sys.executable, "-m", "spacy_auc_ner", *args], cwd=ROOT, stdout=subprocess.DEVNULL).returncode == 0


def status_table() -> str:
    """How far each campaign has got: finished cells of its grid, tuning trials apart, and the
    training time its rows record (summed over cells, so about twice the wall time with 2
    workers)."""
    from spacy_auc_ner.study.runner import latest_rows, read_results
    from spacy_auc_ner.study.spec import load_spec

    lines = [
        "| campaign | reported cells done | tuning trials done | failed | training hours recorded |",
        "|---|---:|---:|---:|---:|",
    ]
    for spec_path in sorted((ROOT / "studies").glob("campaign_*.yaml")):
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
    if not run("study", "verdicts", "studies/claims.yaml", "--out", str((OUT / "verdicts.md").relative_to(ROOT))):
        raise SystemExit(1)
    subprocess.run([sys.executable, str(ROOT / "scripts" / "readme_tables.py"), str(ROOT / "README.md")], check=True)


if __name__ == "__main__":
    main()
