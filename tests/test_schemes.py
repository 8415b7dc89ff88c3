import numpy
import pytest
from spacy.tokens import Doc
from spacy.training import Example

from spacy_auc_ner.schemes import MISSING, LabelSet, get_scheme


def test_bio_layout():
    labels = LabelSet(["PER", "LOC"])
    assert labels.types == ("LOC", "PER")
    assert labels.bio == ("O", "B-LOC", "I-LOC", "B-PER", "I-PER")
    assert labels.bio_type.tolist() == [-1, 0, 0, 1, 1]
    assert labels.bio_begin.tolist() == [False, True, False, True, False]


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


def test_gold_different_tokenisation(nlp):
    labels = LabelSet(["LOC"])
    ref = Doc(nlp.vocab, words=["in", "New", "York"], spaces=[True, True, False], ents=["O", "B-LOC", "I-LOC"])
    pred = Doc(nlp.vocab, words=["in", "New York"], spaces=[True, False])
    gold = labels.gold([Example(pred, ref)])
    assert gold.tolist() == [0, 1]  # one predicted token covering a whole entity: B-LOC (U-LOC)


def test_targets():
    labels = LabelSet(["LOC", "PER"])
    gold = numpy.asarray([0, 1, 2, 3, MISSING])
    Y = get_scheme("ova").targets(gold, labels, numpy)
    assert Y.tolist() == [[1, 0, 0, 0, 0], [0, 1, 0, 0, 0], [0, 0, 1, 0, 0], [0, 0, 0, 1, 0], [0, 0, 0, 0, 0]]
    two = get_scheme("two_task")
    assert two.columns(labels) == ["ENTITY", "BEGIN", "TYPE-LOC", "TYPE-PER"]
    Y2 = two.targets(gold, labels, numpy)
    assert Y2.tolist() == [[0, 0, 0, 0], [1, 1, 1, 0], [1, 0, 1, 0], [1, 1, 0, 1], [0, 0, 0, 0]]
    assert get_scheme("two_task").columns(LabelSet(["Disease"])) == ["ENTITY", "BEGIN"]


def test_two_task_bio_probabilities_sum_to_one():
    labels = LabelSet(["LOC", "PER"])
    scores = numpy.random.default_rng(0).normal(size=(6, 4)).astype("f")
    p = get_scheme("two_task").bio_probabilities(scores, labels)
    assert numpy.allclose(p.sum(axis=1), 1.0, atol=1e-5)


def test_unknown_scheme():
    with pytest.raises(ValueError, match="unknown scheme 'crf2'"):
        get_scheme("crf2")
