"""A toy corpus of a few hand-made sentences (diseases, people, places) as train/dev/test
.spacy files: the lab's tests and its GPU check train on it when no real corpus is given."""
from pathlib import Path

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
