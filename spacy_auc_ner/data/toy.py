"""A toy corpus of six hand-made sentences (diseases, people, places; one without an entity),
for a smoke run of a pipeline, a config or a study without a real corpus: the package's tests,
the lab's tests and its GPU check train on it, from this one copy."""
from pathlib import Path
from typing import List, Tuple

from .files import PathLike

# (text, BIO tags of its whitespace-separated tokens)
TOY_SENTENCES: List[Tuple[str, List[str]]] = [
    ("Aspirin treats breast cancer in Paris .", ["O", "O", "B-Disease", "I-Disease", "O", "B-LOC", "O"]),
    ("John Smith lives in Berlin", ["B-PER", "I-PER", "O", "O", "B-LOC"]),
    ("Colon cancer is rare", ["B-Disease", "I-Disease", "O", "O"]),
    ("Mary met Anna in Rome .", ["B-PER", "O", "B-PER", "O", "B-LOC", "O"]),
    ("Nothing to see here", ["O", "O", "O", "O"]),
    ("Lung cancer kills in London", ["B-Disease", "I-Disease", "O", "O", "B-LOC"]),
]


def write_toy_corpus(folder: PathLike) -> Path:
    """``folder/toy/{train,dev,test}.spacy`` (train: every sentence twice); returns `folder`,
    the corpora folder of a study whose corpus is ``toy``."""
    import spacy
    from spacy.tokens import Doc, DocBin

    vocab = spacy.blank("en").vocab
    out = Path(folder) / "toy"
    out.mkdir(parents=True, exist_ok=True)
    for split, reps in (("train", 2), ("dev", 1), ("test", 1)):
        db = DocBin()
        for _ in range(reps):
            for text, tags in TOY_SENTENCES:
                db.add(Doc(vocab, words=text.split(), ents=tags))
        db.to_disk(out / f"{split}.spacy")
    return Path(folder)
