"""How many sentences of a corpus spaCy's tokenizer splits otherwise than the corpus annotates
("AL-AIN" -> "AL", "-", "AIN"), per split. spaCy's Corpus.v1 without gold_preproc reads a
sentence by tokenizing its text again, so a pipeline trained on the annotated tokens meets
other tokens there: the lab scores every cell's test split that way (the same input for every
method, the Hugging Face peer included), and until 2026-11-26 its self-training cells also
trained and were scored on dev that way (`auc_ner_lab.training_extras.on_annotated_tokens`).

    python scripts/corpus_tokens.py conll2003 ncbi_disease s800 [--data-dir DIR] [--out docs/evidence/corpus_tokens.md]

The corpus is found as `scripts/corpus_overlap.py` finds it. With `--out`, a markdown table is
written there and the counts beside it as JSON (`x.md` -> `x.json`), which
the evidence reads (`auc_ner_lab/evidence/caveats.py`).
"""
from pathlib import Path
from typing import Dict, Optional, Sequence

import spacy

from auc_ner_lab.corpora import locate
from scripts.corpus_overlap import table_command
from spacy_auc_ner.api import read_docs

SPLITS = ("train", "dev", "test")


def retokenized(docs, nlp) -> int:
    """The docs whose text `nlp`'s tokenizer splits into other tokens than the doc's."""
    return sum([t.text for t in nlp.make_doc(doc.text)] != [t.text for t in doc] for doc in docs)


def counts(corpora: Sequence[str], data_dir: Optional[Path] = None, lang: str = "en") -> Dict[str, Optional[Dict[str, list]]]:
    """{corpus: {split: [sentences, of them tokenized otherwise]}, or None when not found}."""
    nlp = spacy.blank(lang)
    out: Dict[str, Optional[Dict[str, list]]] = {}
    for name in corpora:
        folder = locate(name, data_dir)
        if folder is None:
            out[name] = None
            continue
        out[name] = {}
        for split in SPLITS:
            docs = read_docs(folder / f"{split}.tsv", nlp.vocab)
            out[name][split] = [len(docs), retokenized(docs, nlp)]
    return out


def table(found: Dict[str, Optional[Dict[str, list]]]) -> str:
    lines = ["| corpus | " + " | ".join(f"{s}: sentences tokenized otherwise" for s in SPLITS) + " |",
             "|---|" + "---:|" * len(SPLITS)]
    for name, c in found.items():
        if c is None:
            lines.append(f"| {name} | not found |" + " – |" * (len(SPLITS) - 1))
            continue
        lines.append(f"| {name} | " + " | ".join(f"{c[s][1]:,} of {c[s][0]:,} ({100 * c[s][1] / c[s][0]:.1f} %)" for s in SPLITS) + " |")
    return "\n".join(lines) + "\n"


def main() -> None:
    table_command(__doc__.splitlines()[0], counts, table)


if __name__ == "__main__":
    main()
