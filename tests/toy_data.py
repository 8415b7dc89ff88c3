"""A tiny hand-made two-type corpus shared by the tests."""
from spacy.tokens import Doc
from spacy.training import Example

# A tiny two-type corpus: (words, BIO tags)
TOY = [
    ("Aspirin treats breast cancer in Paris .".split(), ["O", "O", "B-Disease", "I-Disease", "O", "B-LOC", "O"]),
    ("John Smith lives in Berlin".split(), ["B-PER", "I-PER", "O", "O", "B-LOC"]),
    ("Colon cancer is rare".split(), ["B-Disease", "I-Disease", "O", "O"]),
    ("Mary met Anna in Rome .".split(), ["B-PER", "O", "B-PER", "O", "B-LOC", "O"]),
    ("Nothing to see here".split(), ["O", "O", "O", "O"]),
]


def make_examples(nlp, data=TOY):
    return [Example(Doc(nlp.vocab, words=w), Doc(nlp.vocab, words=w, ents=t)) for w, t in data]
