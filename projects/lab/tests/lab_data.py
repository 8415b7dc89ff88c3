"""The lab tests' data: the package's toy corpus (`write_toy_corpus`, the one copy the
library's tests read too, and its sentences as `SENTENCES`) for end-to-end study tests, and
the real corpora (`real_data`; a test skips without its corpus)."""
import os
import tempfile
from pathlib import Path
from typing import List, Tuple

import pytest

from spacy_auc_ner.api import doc_bio_tags, read_docs, write_toy_corpus


def toy_sentences() -> List[Tuple[str, List[str]]]:
    """(text, BIO tags of its whitespace-separated tokens) of each sentence of the toy corpus,
    read from its test split as `write_toy_corpus` writes it."""
    from spacy.vocab import Vocab

    with tempfile.TemporaryDirectory() as tmp:
        docs = read_docs(write_toy_corpus(tmp) / "toy" / "test.spacy", Vocab())
    return [(" ".join(t.text for t in doc), list(doc_bio_tags(doc))) for doc in docs]


SENTENCES = toy_sentences()

LAB = Path(__file__).resolve().parents[1]
REAL_CORPORA = ("conll2003", "ncbi_disease", "s800")


def real_data() -> Path:
    """The folder of the three real corpora as token<TAB>BIO files: $SPACY_AUC_NER_DATA,
    ../shared/data beside the checkout, or the lab's assets/ (where `spacy project run corpora`,
    part of README's first command, puts them); the first holding all three (the last when
    none does: the tests that need them then skip)."""
    folders = [Path(os.environ["SPACY_AUC_NER_DATA"])] if os.environ.get("SPACY_AUC_NER_DATA") else []
    folders += [LAB.parents[1].parent / "shared" / "data", LAB / "assets"]
    return next((f for f in folders if all((f / c / "train.tsv").is_file() for c in REAL_CORPORA)), folders[-1])


SHARED_DATA = real_data()


def shared_corpus(name: str) -> Path:
    path = SHARED_DATA / name
    if not (path / "train.tsv").exists():
        pytest.skip(f"corpus {name} not found under {SHARED_DATA} (spacy project run corpora projects/lab)")
    return path
