"""The lab tests' data: the package's toy corpus (`TOY_SENTENCES` as `SENTENCES`, and
`write_toy_corpus`, the one copy the library's tests read too) for end-to-end study tests, and
the real corpora (`real_data`; a test skips without its corpus)."""
import os
from pathlib import Path

import pytest

from spacy_auc_ner.api import TOY_SENTENCES as SENTENCES  # noqa: F401 (the tests import them from here)
from spacy_auc_ner.api import write_toy_corpus  # noqa: F401

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
