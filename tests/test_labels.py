"""The BIO layout and gold extraction of spacy_auc_ner.labels."""
import numpy
import pytest
from spacy.tokens import Doc
from spacy.training import Example

from spacy_auc_ner.labels import MISSING, LabelSet, bio_layout, entity_types_of, label_is_begin, label_type


def test_bio_layout():
    labels = LabelSet(["PER", "LOC"])
    assert labels.types == ("LOC", "PER")
    assert labels.bio == ("O", "B-LOC", "I-LOC", "B-PER", "I-PER")
    assert labels.bio_type.tolist() == [-1, 0, 0, 1, 1]
    assert labels.bio_begin.tolist() == [False, True, False, True, False]
    types, begin = bio_layout(5)
    assert types.tolist() == labels.bio_type.tolist() and begin.tolist() == labels.bio_begin.tolist()
    assert LabelSet([]).bio == ("O",) and bio_layout(1)[0].tolist() == [-1]
    with pytest.raises(ValueError, match=r"1 \+ 2 \* n_types"):
        bio_layout(4)


def test_type_hashes_are_the_types_string_ids_sorted():
    from spacy.strings import get_string_id

    hashes = LabelSet(["PER", "LOC"]).type_hashes
    assert hashes.tolist() == sorted([get_string_id("PER"), get_string_id("LOC")]) and hashes.dtype == "uint64"
    assert LabelSet([]).type_hashes.tolist() == []


def test_index_helpers_by_hand():
    index = numpy.asarray([MISSING, 0, 1, 2, 3, 4, 5, 6])
    assert label_type(index).tolist() == [-1, -1, 0, 0, 1, 1, 2, 2]
    assert label_is_begin(index).tolist() == [False, False, True, False, True, False, True, False]


def test_gold_same_tokenisation(nlp):
    labels = LabelSet(["LOC", "PER"])
    words = "John lives in New York".split()
    eg = Example(Doc(nlp.vocab, words=words), Doc(nlp.vocab, words=words, ents=["B-PER", "O", "O", "B-LOC", "I-LOC"]))
    assert labels.gold([eg]).tolist() == [3, 0, 0, 1, 2]


def test_gold_missing_and_unseen_labels(nlp):
    labels = LabelSet(["LOC"])
    words = "John lives in Rome".split()
    # ORG is unknown to the component, None is missing annotation: both get no gold
    ref = Doc(nlp.vocab, words=words, ents=["B-ORG", None, "O", "B-LOC"])
    eg = Example(Doc(nlp.vocab, words=words), ref)
    assert labels.gold([eg]).tolist() == [MISSING, MISSING, 0, 1]


def test_gold_without_any_type_is_o_or_missing(nlp):
    words = "John lives in Rome".split()
    eg = Example(Doc(nlp.vocab, words=words), Doc(nlp.vocab, words=words, ents=["B-PER", "O", None, "O"]))
    assert LabelSet([]).gold([eg]).tolist() == [MISSING, 0, MISSING, 0]


def test_gold_different_tokenisation(nlp):
    labels = LabelSet(["LOC"])
    ref = Doc(nlp.vocab, words=["in", "New", "York"], spaces=[True, True, False], ents=["O", "B-LOC", "I-LOC"])
    pred = Doc(nlp.vocab, words=["in", "New York"], spaces=[True, False])
    gold = labels.gold([Example(pred, ref)])
    assert gold.tolist() == [0, 1]  # one predicted token covering a whole entity: B-LOC (U-LOC)


def test_entity_types_of(toy_examples):
    assert entity_types_of(toy_examples) == ["Disease", "LOC", "PER"]
