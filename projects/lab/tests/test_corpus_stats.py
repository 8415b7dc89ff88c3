"""Corpus statistics: Table I's counts from BIO label strings and the per-sentence entity
counts; `corpus partition --entity-percent` draws what ``EntityRatio.v1`` draws in the file."""
import math

import spacy
from spacy.util import registry

from auc_ner_lab.corpus_stats import entity_counts, split_statistics
from auc_ner_lab.partitions import entity_ratio_draw
from spacy_auc_ner.api import Sentence, write_sentences

SENTENCES = [
    Sentence(("A", "B", "c", "d"), ("B-PER", "I-PER", "O", "O")),
    Sentence(("E", "F", "G", "h"), ("B-LOC", "I-LOC", "B-PER", "O")),
    Sentence(("i", "j"), ("O", "O")),
    Sentence(("M", "N", "O"), ("B-PER", "B-ORG", "I-ORG")),
]


def test_entity_counts_and_the_partition_draw_are_the_readers(tmp_path):
    lengths, entities = entity_counts(SENTENCES)
    assert lengths.tolist() == [4, 4, 2, 3] and entities.tolist() == [2, 3, 0, 3]
    assert [a.tolist() for a in entity_counts([])] == [[], []]
    path = tmp_path / "train.spacy"
    write_sentences(path, SENTENCES)
    block = {"@readers": "spacy_auc_ner.EntityRatio.v1", "path": str(path), "n": 2, "percent": 50.0, "seed": 3, "tolerance": 0.5}
    ids, reached = entity_ratio_draw(block)
    reader = registry.resolve({"r": block})["r"]
    drawn = sorted(eg.reference.text for eg in reader(spacy.blank("en")))
    assert drawn == sorted(" ".join(SENTENCES[i].tokens) for i in ids) and len(ids) == 2
    # the share reached, by hand from the chosen sentences' counts
    assert reached == 100.0 * entities[ids].sum() / lengths[ids].sum()


def test_split_statistics_hand_counts():
    stats = split_statistics(SENTENCES)
    assert (stats["sentences"], stats["tokens"], stats["entities"]) == (4, 13, 5)
    assert {t: (v["tokens"], v["entities"]) for t, v in stats["per_type"].items()} == {"LOC": (2, 1), "ORG": (2, 1), "PER": (4, 3)}
    assert stats["sent_with_entity%"] == 75.0
    assert (stats["B%"], stats["I%"], stats["O%"]) == (38.46, 23.08, 38.46)
    assert stats["per_type"]["PER"]["r"] == round(-math.log2(4 / 13), 3) and split_statistics(SENTENCES, math.e)["per_type"]["PER"]["r"] == round(-math.log(4 / 13), 3)
    empty = split_statistics([])
    assert (empty["tokens"], empty["types"], empty["per_type"], empty["sent_with_entity%"]) == (0, [], {}, 0.0)
