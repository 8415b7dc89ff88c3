"""Corpus statistics: the gold arrays made from BIO label strings are the library's, made from
Docs, and the per-type counts of Table I come from them."""
import spacy
from spacy.tokens import Doc

from auc_ner_lab.corpus_stats import entity_arrays, split_statistics
from spacy_auc_ner.api import EntityArrays, Sentence

SENTENCES = [
    Sentence(("A", "B", "c", "d"), ("B-PER", "I-PER", "O", "O")),
    Sentence(("E", "F", "G", "h"), ("B-LOC", "I-LOC", "B-PER", "O")),
    Sentence(("i", "j"), ("O", "O")),
    Sentence(("M", "N", "O"), ("B-PER", "B-ORG", "I-ORG")),
]


def test_entity_arrays_from_sentences_are_those_from_docs():
    vocab = spacy.blank("en").vocab
    gold = entity_arrays(SENTENCES)
    from_docs = EntityArrays.from_docs(Doc(vocab, words=list(s.tokens), ents=list(s.labels)) for s in SENTENCES)
    assert gold.types == from_docs.types == ["LOC", "ORG", "PER"]
    for name in ("lengths", "prefix", "type_index"):
        assert getattr(gold, name).tolist() == getattr(from_docs, name).tolist()
    assert gold.prefix.tolist() == [1, 2, 0, 0, 1, 2, 1, 0, 0, 0, 1, 1, 2]
    assert entity_arrays([]).entity_tokens().tolist() == []


def test_split_statistics_hand_counts():
    stats = split_statistics(SENTENCES)
    assert (stats["sentences"], stats["tokens"], stats["entities"]) == (4, 13, 5)
    assert {t: (v["tokens"], v["entities"]) for t, v in stats["per_type"].items()} == {"LOC": (2, 1), "ORG": (2, 1), "PER": (4, 3)}
    assert stats["sent_with_entity%"] == 75.0
