"""EntityArrays: the one home of the gold arrays and per-sentence entity counts that the
entity-share draw and resampling use (the lab's corpus statistics too), made from Docs."""
import numpy
import spacy
from spacy.tokens import Doc

from spacy_auc_ner.data.columns import Sentence
from spacy_auc_ner.data.entity_arrays import EntityArrays, type_counts

SENTENCES = [
    Sentence(("A", "B", "c", "d"), ("B-PER", "I-PER", "O", "O")),
    Sentence(("E", "F", "G", "h"), ("B-LOC", "I-LOC", "B-PER", "O")),
    Sentence(("i", "j"), ("O", "O")),
    Sentence(("M", "N", "O"), ("B-PER", "B-ORG", "I-ORG")),
]


def _check(gold: EntityArrays):
    assert gold.types == ["LOC", "ORG", "PER"]
    assert gold.lengths.tolist() == [4, 4, 2, 3]
    assert gold.prefix.tolist() == [1, 2, 0, 0, 1, 2, 1, 0, 0, 0, 1, 1, 2]
    assert gold.type_index.tolist() == [2, 2, -1, -1, 0, 0, 2, -1, -1, -1, 2, 1, 1]
    assert gold.type_counts().tolist() == [[0, 0, 2], [2, 0, 1], [0, 0, 0], [0, 2, 1]]
    assert gold.entity_tokens().tolist() == [2, 3, 0, 3]
    assert gold.type_tokens().tolist() == [2, 2, 4]


def test_from_docs_hand_counts():
    vocab = spacy.blank("en").vocab
    _check(EntityArrays.from_docs(Doc(vocab, words=list(s.tokens), ents=list(s.labels)) for s in SENTENCES))


def test_missing_annotation_counts_as_o_and_empty_corpora():
    vocab = spacy.blank("en").vocab
    gold = EntityArrays.from_docs([Doc(vocab, words=["a", "b"], ents=["B-X", None]), Doc(vocab, words=[])])
    assert (gold.lengths.tolist(), gold.prefix.tolist(), gold.entity_tokens().tolist()) == ([2, 0], [1, 0], [1, 0])
    empty = EntityArrays.from_docs([])
    assert (len(empty.lengths), empty.types, empty.type_counts().shape) == (0, [], (0, 0))


def test_type_counts_is_one_bincount():
    assert type_counts([2, 0, 1], numpy.asarray([-1, 0, 0]), 1).tolist() == [[1], [0], [1]]
