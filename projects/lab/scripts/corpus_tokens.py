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
from scripts.corpus_overlap import per_corpus_table, table_command
from spacy_auc_ner.api import read_docs

SPLITS = ("train", "dev", "test")


def retokenized(docs, nlp) -> int:
    """The docs whose text `nlp`'s tokenizer splits into other tokens than the doc's."""
    return sum([t.text for t in nlp.make_doc(doc.text)] != [t.text for t in doc] for doc in docs)


def counts(corpora: Sequence[str], data_dir: Optional[Path] = None, lang: str = "en") -> Dict[str, Optional[Dict[str, list]]]:
    """{corpus: {split: [sentences, of them tokenized otherwise]}, or None when not found}."""
    nlp = spacy.blank(lang)
    def split_counts(path: Path) -> list:
        docs = read_docs(path, nlp.vocab)
        return [len(docs), retokenized(docs, nlp)]

    folders = {name: locate(name, data_dir) for name in corpora}
    return {name: None if folder is None else {split: split_counts(folder / f"{split}.tsv") for split in SPLITS}
            for name, folder in folders.items()}


def table(found: Dict[str, Optional[Dict[str, list]]]) -> str:
    return per_corpus_table([f"{s}: sentences tokenized otherwise" for s in SPLITS], found, lambda c: [
        f"{c[s][1]:,} of {c[s][0]:,} ({100 * c[s][1] / c[s][0]:.1f} %)" for s in SPLITS])


def main() -> None:
    table_command(__doc__.splitlines()[0], counts, table)


if __name__ == "__main__":
    main()
