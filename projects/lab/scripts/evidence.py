"""Regenerate the evidence from the committed results: one command for every table and plot
(`spacy project run evidence` in projects/lab, or `python -m scripts.evidence` there).

Every generated text comes from `auc_ner_lab.evidence` (`docs.docs`, which `lab.py docs [--check]`
runs); this script adds the studies' plots and, with the corpora present, the tables of test
sentences found in training (`corpus_overlap.md`) and of sentences spaCy's tokenizer splits
otherwise than annotated (`corpus_tokens.md`); without the corpora the committed tables are kept.
It reads and writes the lab folder it sits in.
"""
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
if __name__ == "__main__":  # run as a file: this lab folder, which holds auc_ner_lab, on the path
    sys.path.insert(0, str(ROOT))

from auc_ner_lab.corpora import locate  # noqa: E402
from auc_ner_lab.evidence import committed  # noqa: E402
from auc_ner_lab.evidence.docs import docs, selection_results  # noqa: E402
from auc_ner_lab.evidence.reports import OTHER_STUDIES  # noqa: E402
from auc_ner_lab.evidence.selection import CHOSEN, FIGURE, figure_points  # noqa: E402
from auc_ner_lab.plots import plot_selection  # noqa: E402


def run(*args: str) -> bool:
    print("$", " ".join(args), flush=True)
    return subprocess.run([sys.executable, "-m", "auc_ner_lab", *args], cwd=ROOT, stdout=subprocess.DEVNULL).returncode == 0


def main() -> None:
    """Everything `docs` writes, plus the studies' plots (the annotation loop's too) and the
    corpus tables (which need the corpora)."""
    committed.ROOT = ROOT
    out = committed.evidence_dir()
    out.mkdir(parents=True, exist_ok=True)
    campaigns = {spec.stem: None for spec in sorted((ROOT / "studies").glob("campaign_*.yaml"))}
    for name, baseline in {**campaigns, **OTHER_STUDIES}.items():
        if (ROOT / "results" / name).exists():
            run("study", "report", f"results/{name}", "--spec", f"studies/{name}.yaml", *(["--baseline", baseline] if baseline else []),
                "--out", str((out / name).relative_to(ROOT)), "--overwrite")
    spec, loop, random = selection_results()  # the annotation loop's figure, beside its report
    plot_selection(figure_points(loop, random, list(spec.corpora)), out / spec.name, FIGURE, CHOSEN)
    corpora = ["conll2003", "ncbi_disease", "s800"]
    if all(locate(c, cwd=ROOT) for c in corpora):
        for table in ("corpus_overlap", "corpus_tokens"):
            subprocess.run([sys.executable, "-m", f"scripts.{table}", *corpora, "--out", str(out / f"{table}.md")], cwd=ROOT,
                           stdout=subprocess.DEVNULL, check=True)
    else:
        print("corpus_overlap.md, corpus_tokens.md: corpora not found; the committed tables are kept")
    docs()


if __name__ == "__main__":
    main()
