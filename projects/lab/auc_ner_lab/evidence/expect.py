"""README's "What to expect": test F1 of the transformer recipe, the plain Hugging Face
fine-tune of the same encoder and spaCy's ``ner`` at 20 and 50 sentences, none with a dev set,
from the committed rows (the mean over a cell's draws), one column per corpus and size."""
from typing import Dict, Tuple

from .committed import has_results, results_by_cell

CORPORA = (("conll2003", "CoNLL 2003"), ("ncbi_disease", "NCBI-disease"), ("s800", "s800"))
SIZES = (20, 50)
# (study, method in it, what the README calls it)
ROWS = (("campaign_trf_nodev60", "lowres_best_trf_e60", "`lowres_best_trf` (60 epochs, 1,000 raw sentences)"),
        ("campaign_trf_nodev", "hf_token_classification", "plain Hugging Face fine-tune (30 epochs, last step)"),
        ("campaign_trf_nodev", "spacy_ner", "spaCy's `ner` on the same encoder (30 epochs)"))


def expect_table() -> str:
    """The table as markdown (empty where its studies have no rows)."""
    if not all(has_results(study) for study, _, _ in ROWS):
        return ""
    cells: Dict[Tuple[str, str, str, int], float] = {}
    draws = set()
    for study, method, _ in ROWS:
        for (m, corpus, size), result in results_by_cell(study).items():
            if m == method:
                cells[(study, m, corpus, size)] = 100 * result.summary.mean
                draws.add(result.summary.n)
    header = ["test F1 (mean of the draws)"] + [f"{name} {n}" for _, name in CORPORA for n in SIZES]
    rows = [[label] + [f"{cells[(study, method, corpus, n)]:.1f}" if (study, method, corpus, n) in cells else "" for corpus, _ in CORPORA for n in SIZES]
            for study, method, label in ROWS]
    lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)] + ["| " + " | ".join(r) + " |" for r in rows]
    return "\n".join(lines) + "\n" + (f"\n{'/'.join(map(str, sorted(draws)))} draws a cell; MiniLM, CPU or GPU rows, "
                                           f"no dev set on any side: [protocol](projects/lab/docs/evidence/transformer.md#without-a-dev-set).\n")
