"""The lab tests' data, their own (the library's tests keep theirs): a few hand-made sentences
written as train/dev/test .spacy files for end-to-end study tests, and the real corpora
(`real_data`; a test skips without its corpus)."""
import os
from pathlib import Path

import pytest
import spacy
from spacy.tokens import Doc, DocBin

SENTENCES = [
    ("Aspirin treats breast cancer in Paris .", ["O", "O", "B-Disease", "I-Disease", "O", "B-LOC", "O"]),
    ("John Smith lives in Berlin", ["B-PER", "I-PER", "O", "O", "B-LOC"]),
    ("Colon cancer is rare", ["B-Disease", "I-Disease", "O", "O"]),
    ("Mary met Anna in Rome .", ["B-PER", "O", "B-PER", "O", "B-LOC", "O"]),
    ("Nothing to see here", ["O", "O", "O", "O"]),
    ("Lung cancer kills in London", ["B-Disease", "I-Disease", "O", "O", "B-LOC"]),
]
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


def write_toy_corpus(folder: Path) -> Path:
    """folder/toy/{train,dev,test}.spacy; returns folder (the corpora_dir of a spec)."""
    vocab = spacy.blank("en").vocab
    out = Path(folder) / "toy"
    out.mkdir(parents=True, exist_ok=True)
    for split, reps in (("train", 2), ("dev", 1), ("test", 1)):
        db = DocBin()
        for _ in range(reps):
            for text, tags in SENTENCES:
                db.add(Doc(vocab, words=text.split(), ents=tags))
        db.to_disk(out / f"{split}.spacy")
    return Path(folder)


def shared_corpus(name: str) -> Path:
    path = SHARED_DATA / name
    if not (path / "train.tsv").exists():
        pytest.skip(f"corpus {name} not found under {SHARED_DATA} (spacy project run corpora projects/lab)")
    return path
