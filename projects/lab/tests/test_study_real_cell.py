"""One tiny real cell end to end: a spec, the default runner, spaCy training, seqeval scores."""
import pytest

from lab_helpers import train_tiny
from lab_data import SENTENCES


@pytest.mark.slow
def test_tiny_real_cell_end_to_end(tmp_path):
    _, outcome, (row,) = train_tiny(tmp_path, ["ce"], steps=10)
    assert outcome.ok == 1
    scores = row["scores"]
    for key in ("ents_f", "ents_p", "ents_r", "ents_untyped_f", "ents_seqeval_micro_f", "ents_seqeval_macro_f", "train_seconds"):
        assert isinstance(scores[key], float), key
    assert 0.0 <= scores["ents_seqeval_micro_f"] <= 1.0
    assert scores["ents_untyped_f"] >= scores["ents_f"]
    assert set(scores["ents_per_type"]) <= {"Disease", "LOC", "PER"}
    assert scores["test_words"] == sum(len(t.split()) for t, _ in SENTENCES)
    assert row["config"] == "ce.cfg" and row["encoder"] == "cpu" and row["overrides"]["corpora.train"]["n"] == 5
