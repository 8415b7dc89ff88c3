"""The no-dev recipe's settings chosen leaving one corpus out (auc_ner_lab/nodev_choice.py):
the cells train without a dev set and are scored afterwards on a dev sample; the choice per
corpus reads the other corpora's dev scores only."""
from pathlib import Path

import pytest
import yaml

from auc_ner_lab import nodev_choice
from auc_ner_lab.nodev_choice import leave_one_corpus_out
from auc_ner_lab.spec import load_spec
from lab_helpers import train_tiny

LAB = Path(__file__).resolve().parents[1]
NO_DEV = {"@readers": "spacy_auc_ner.NoDev.v1"}


def _row(method, corpus, dev, test, size=20, partition=0):
    return {"method": method, "corpus": corpus, "size": size, "partition": partition, "status": "ok",
            "scores": {"dev_scores": {"ents_seqeval_micro_f": dev}, "ents_seqeval_micro_f": test}}


def test_each_corpus_gets_the_setting_best_on_the_others_by_hand():
    """Three corpora, two settings. Mean dev scores on the other two corpora:
    held out a: e10 (0.2 + 0.6) / 2 = 0.4, e30 (0.3 + 0.7) / 2 = 0.5 -> e30;
    held out b: e10 (0.9 + 0.6) / 2 = 0.75, e30 (0.1 + 0.7) / 2 = 0.4 -> e10;
    held out c: e10 (0.9 + 0.2) / 2 = 0.55, e30 (0.1 + 0.3) / 2 = 0.2 -> e10.
    The test scores (the other way round everywhere) are never read."""
    dev = {("e10", "a"): 0.9, ("e30", "a"): 0.1, ("e10", "b"): 0.2, ("e30", "b"): 0.3, ("e10", "c"): 0.6, ("e30", "c"): 0.7}
    rows = [_row(m, c, score, 1 - score) for (m, c), score in dev.items()]
    chosen = leave_one_corpus_out(rows, ["e10", "e30"], ["a", "b", "c"], "ents_seqeval_micro_f")
    assert {c: choice.point["method"] for c, choice in chosen.items()} == {"a": "e30", "b": "e10", "c": "e10"}
    assert chosen["a"].dev_score == pytest.approx(0.5) and chosen["b"].dev_score == pytest.approx(0.75)
    assert chosen["a"].trials == 4 and chosen["a"].candidates == 2


def test_a_setting_missing_a_row_on_the_other_corpora_is_no_candidate():
    rows = [_row("e10", "a", 0.1, 0), _row("e30", "a", 0.9, 0), _row("e10", "b", 0.5, 0), _row("e30", "b", 0.5, 0, partition=1)]
    chosen = leave_one_corpus_out(rows, ["e10", "e30"], ["b"], "ents_seqeval_micro_f")
    # held out b: cells (a, 20, 0) have both; held out a: cells (b, 20, 0) and (b, 20, 1), each setting misses one
    assert chosen["b"].point == {"method": "e30"} and chosen["b"].candidates == 2
    with pytest.raises(Exception, match="no grid point has a dev"):
        leave_one_corpus_out(rows, ["e10", "e30"], ["a"], "ents_seqeval_micro_f")


@pytest.mark.slow
def test_a_cell_trains_without_dev_and_is_scored_on_the_dev_sample_after(tmp_path, monkeypatch):
    monkeypatch.setattr(nodev_choice, "DEV_SAMPLE", 3)  # the toy dev split has fewer than 200
    method = {"name": "crf_nodev", "base": "crf", "runner": "auc_ner_lab.nodev_choice:run_cell", "overrides": {"corpora.dev": NO_DEV}}
    _, outcome, (row,) = train_tiny(tmp_path, [method], steps=4)
    scores = row["scores"]
    assert outcome.ok == 1 and scores["dev_score"] is None  # nothing chose on dev
    assert 0.0 <= scores["dev_scores"]["ents_seqeval_micro_f"] <= 1.0 and 0.0 <= scores["ents_seqeval_micro_f"] <= 1.0
    # a config with a dev set is refused in one line: its cells would choose on dev
    with pytest.raises(AssertionError, match="train without a dev set"):
        train_tiny(tmp_path / "with_dev", [{**method, "overrides": {}}], steps=4)


@pytest.mark.slow
def test_a_cell_that_pretrains_trains_through_the_recipes_steps_without_dev(tmp_path, monkeypatch):
    """The CPU recipe's supervised stage pretrains: its cell pretrains (the row's extras say how
    long), trains without a dev set and is scored on the dev sample afterwards."""
    monkeypatch.setattr(nodev_choice, "DEV_SAMPLE", 3)
    method = {"name": "ce_pretrain_nodev", "base": "ce", "layers": ["pretrain/characters.cfg"], "runner": "auc_ner_lab.nodev_choice:run_cell",
              "overrides": {"corpora.pretrain.limit": 4, "pretraining.max_epochs": 1, "corpora.dev": NO_DEV}}
    _, outcome, (row,) = train_tiny(tmp_path, [method], steps=4)
    scores = row["scores"]
    assert scores["extras"]["pretrain_seconds"] > 0 and scores["dev_score"] is None
    assert 0.0 <= scores["dev_scores"]["ents_seqeval_micro_f"] <= 1.0 and 0.0 <= scores["ents_seqeval_micro_f"] <= 1.0


def test_the_cpu_campaign_trains_the_shipped_cpu_recipes_stage_on_the_tuning_draws():
    """campaign_cpu_budget's cells: lowres_best as shipped with no self-training round, its steps
    per method, no dev set but for the held-out share (which brings its own), the tuning draws,
    never a partition that campaign_cpu_nodev or lowres_recipe reports."""
    spec = load_spec(LAB / "studies" / "campaign_cpu_budget.yaml", configs_dir=LAB / "configs")
    cells = spec.cells()
    assert len(cells) == 48 and {c.seed for c in cells} == {10000, 10001}
    for reported in ("campaign_cpu_nodev", "lowres_recipe"):
        assert {c.seed for c in load_spec(LAB / "studies" / f"{reported}.yaml", configs_dir=LAB / "configs").cells()}.isdisjoint({10000, 10001})
    assert {m.name: m.overrides["training.max_steps"] for m in spec.methods} == {
        "stage_s300": 300, "stage_s600": 600, "stage_s1200": 1200, "stage_held_out": 600}
    for cell in cells:
        assert cell.overrides["self_training.rounds"] == 0 and Path(cell.config).name == "lowres_best.cfg"
        assert cell.overrides["corpora.pretrain.limit"] == 2000  # as campaign_cpu_nodev pretrains
        assert cell.overrides.get("corpora.dev") == (None if cell.method == "stage_held_out" else NO_DEV)
    raw = yaml.safe_load((LAB / "studies" / "campaign_cpu_budget.yaml").read_text())
    assert {m["name"]: m["runner"].split(":")[1] for m in raw["methods"] if m["runner"] != "auc_ner_lab.nodev_choice:run_cell"} == {"stage_held_out": "run_held_out_cell"}


def test_the_held_out_share_is_the_last_of_the_draw_by_hand():
    from types import SimpleNamespace

    from auc_ner_lab.nodev_choice import Share

    eight, five = (lambda nlp: iter(range(8))), (lambda nlp: iter(range(5)))
    assert list(Share(eight, 0.25, "train")(None)) == [0, 1, 2, 3, 4, 5]
    assert list(Share(eight, 0.25, "held_out")(None)) == [6, 7]
    assert list(Share(five, 0.05, "held_out")(None)) == [4]  # at least one
    with pytest.raises(ValueError, match="leave none to train on"):
        list(Share(lambda nlp: iter([SimpleNamespace()]), 0.25, "train")(None))
    with pytest.raises(ValueError, match=r"share 1.5 must be in \(0, 1\) and part 'dev' one of"):
        Share(eight, 1.5, "dev")


@pytest.mark.slow
def test_a_held_out_cell_trains_on_the_rest_and_chooses_on_the_share(tmp_path, monkeypatch):
    """The toy draw of 5: 4 trained on, 1 held out for the checkpoint; the row's dev scores are
    the lab's dev sample's, its dev_score the held-out sentence's (the checkpoint's)."""
    from auc_ner_lab import experiment

    monkeypatch.setattr(nodev_choice, "DEV_SAMPLE", 3)
    seen = {}
    train = experiment.train_config

    def spy(config, *args, **kwargs):
        import spacy
        from spacy.util import resolve_dot_names

        interpolated = config.interpolate()
        nlp = spacy.blank("en")
        for role in ("train", "dev"):
            (reader,) = resolve_dot_names(interpolated, [f"corpora.{role}"])
            seen[role] = len(list(reader(nlp)))
        return train(config, *args, **kwargs)

    monkeypatch.setattr(experiment, "train_config", spy)
    method = {"name": "crf_held_out", "base": "crf", "runner": "auc_ner_lab.nodev_choice:run_held_out_cell",
              "overrides": {"corpora.dev": NO_DEV}}
    _, outcome, (row,) = train_tiny(tmp_path, [method], steps=4)
    assert outcome.ok == 1 and seen == {"train": 4, "dev": 1}
    assert row["scores"]["dev_score"] is not None and 0.0 <= row["scores"]["dev_scores"]["ents_seqeval_micro_f"] <= 1.0


def test_the_campaign_trains_as_campaign_trf_nodev_on_the_tuning_draws():
    """campaign_trf_budget's cells: the recipe with no self-training round and no dev set, its
    epochs per method, the learn rates of campaign_trf_nodev's recipe, the tuning draws (seed
    10000 + partition), never a reported partition's."""
    spec = load_spec(LAB / "studies" / "campaign_trf_budget.yaml", configs_dir=LAB / "configs")
    nodev = load_spec(LAB / "studies" / "campaign_trf_nodev.yaml", configs_dir=LAB / "configs")
    recipe = next(m for m in nodev.methods if m.name == "lowres_best_trf")
    cells = spec.cells()
    assert len(cells) == 84 and {c.seed for c in cells} == {10000, 10001}
    assert {c.seed for c in nodev.cells()}.isdisjoint({c.seed for c in cells})
    epochs = {m.name: m.overrides["budget.epochs"] for m in spec.methods}
    assert epochs == {"stage_e10": 10, "stage_e20": 20, "stage_e30": 30, "stage_e60": 60, "stage_e30_avg": 30, "stage_e60_avg": 60, "stage_held_out": 30}
    for cell in cells:
        assert cell.overrides["corpora.dev"] == NO_DEV and cell.overrides["self_training.rounds"] == 0
        rate = cell.overrides["training.optimizer.learn_rate.initial_rate"]
        assert rate == {**recipe.overrides, **recipe.corpus_overrides.get(cell.corpus, {})}["training.optimizer.learn_rate.initial_rate"]
        # the weights' moving average in the _avg settings only
        assert cell.overrides.get("training.optimizer.use_averages", False) == cell.method.endswith("_avg")
    raw = yaml.safe_load((LAB / "studies" / "campaign_trf_budget.yaml").read_text())
    assert {m["name"]: m["runner"].split(":")[1] for m in raw["methods"] if m["runner"] != "auc_ner_lab.nodev_choice:run_cell"} == {"stage_held_out": "run_held_out_cell"}


def test_the_document_says_each_choice_and_what_it_gives_by_hand():
    """Two corpora, two draws each at one size. Dev: stage_e10 beats stage_e30 on b, so a gets
    stage_e10; on a stage_e30 wins, so b keeps the shipped one. On a's draws the choice gives test
    0.5 and 0.7 against 0.4 and 0.4 (+10 and +30 points), b's draws pair e30 with itself (0, 0):
    +10.0 points over the 4 draws (differences 0.1, 0.3, 0, 0: t = 0.1 / (0.1414 / 2) = 1.414 on 3
    degrees of freedom, p = 0.252). With e30 best everywhere the shipped schedule is the choice."""
    from auc_ner_lab.evidence.budget import Shipped, budget_short, budget_text

    def rows(dev_e10_b):
        found = []
        for corpus, p, e10, e30 in (("a", 0, (0.1, 0.5), (0.9, 0.4)), ("a", 1, (0.1, 0.7), (0.9, 0.4)),
                                    ("b", 0, (dev_e10_b, 0.2), (0.5, 0.3)), ("b", 1, (dev_e10_b, 0.2), (0.5, 0.3))):
            found += [_row("stage_e10", corpus, *e10, partition=p), _row("stage_e30", corpus, *e30, partition=p)]
        return found

    settings = (["stage_e10", "stage_e30"], ["a", "b"], "ents_seqeval_micro_f", 60)
    e30 = Shipped("stage_e30", "30 epochs", "stage_e30", "30 epochs")  # shipped before and now
    text = budget_text(rows(0.8), *settings, e30)
    assert "8 of 60 cells have rows so far (interim)" in text
    assert "| `stage_e10` | 10.0 / 60.0 | 80.0 / 20.0 | 4 |" in text
    assert "a: `stage_e10` (80.0 mean dev F1 on the other corpora, 2 of 2 settings with every row); b: `stage_e30` (90.0" in text
    assert "its choice minus that schedule in test F1: +10.0 [" in text and "4 draws)" in text
    assert text.rstrip().endswith("The recipe ships 30 epochs (`stage_e30`): not the choice on every corpus.")
    before = budget_text(rows(0.1), *settings, e30)
    assert "The schedule shipped when the rule was fixed (`stage_e30`: 30 epochs, the last step kept) is the choice on every corpus." in before
    assert before.rstrip().endswith("The recipe ships 30 epochs (`stage_e30`): the choice on every corpus.")
    e10 = Shipped("stage_e30", "30 epochs", "stage_e10", "10 epochs")
    assert budget_text(rows(0.1), *settings, e10).rstrip().endswith("ships 10 epochs (`stage_e10`): not the choice on every corpus.")
    assert "No choice yet" in budget_text([], *settings, e30)
    # README's phrase, which starts with the epochs the recipe ships
    assert budget_short(rows(0.8), *settings, e30) == (
        "30 epochs, not what the other corpora's dev samples choose on every corpus (a `stage_e10`, b `stage_e30`; the choice minus the 30 "
        "epochs shipped before, on test: +10.0 points (p = 0.252, 4 draws)) (interim, 8 of 60 cells)")
    assert budget_short(rows(0.1), *settings, e30) == (
        "30 epochs, what the other corpora's dev samples choose for each corpus, leaving it out (`stage_e30`) (interim, 8 of 60 cells)")
    assert budget_short([], *settings, e30) == "30 epochs, not chosen yet (interim, 0 of 60 cells)"


def test_the_readme_phrase_when_the_recipe_ships_the_choice_everywhere():
    """Dev picks stage_e60 on both corpora (shipped since): the phrase says so, with the choice
    against the 30 epochs shipped before on each corpus's draws: differences 0.1 and 0.3 on a,
    0.1 and 0.1 on b, mean +15.0 points (sd 0.1, t = 0.15 / (0.1 / 2) = 3.0 on 3 degrees of
    freedom, p = 0.058)."""
    from auc_ner_lab.evidence.budget import Shipped, budget_short

    found = []
    for corpus, p, e60, e30 in (("a", 0, (0.9, 0.5), (0.1, 0.4)), ("a", 1, (0.9, 0.7), (0.1, 0.4)),
                                ("b", 0, (0.9, 0.4), (0.1, 0.3)), ("b", 1, (0.9, 0.4), (0.1, 0.3))):
        found += [_row("stage_e60", corpus, *e60, partition=p), _row("stage_e30", corpus, *e30, partition=p)]
    shipped = Shipped("stage_e30", "30 epochs", "stage_e60", "60 epochs")
    assert budget_short(found, ["stage_e30", "stage_e60"], ["a", "b"], "ents_seqeval_micro_f", 8, shipped) == (
        "60 epochs, what the other corpora's dev samples choose for each corpus, leaving it out (`stage_e60`; the choice minus the 30 "
        "epochs shipped before, on test: +15.0 points (p = 0.058, 4 draws))")


def test_the_document_reads_the_shipped_average_against_its_last_weights():
    """The recipe ships stage_e60_avg, whose plain twin is stage_e60: the document adds the
    average minus the last step's weights on test, per draw: 0.52 - 0.50 and 0.41 - 0.40 on a,
    0.33 - 0.30 on b: +2, +1 and +3 points, mean +2.0 (sd 1, t = 0.02 / (0.01 / sqrt 3) = 3.46
    on 2 degrees of freedom, p = 0.074)."""
    from auc_ner_lab.evidence.budget import Shipped, budget_text

    found = []
    for corpus, p, avg, last in (("a", 0, 0.52, 0.50), ("a", 1, 0.41, 0.40), ("b", 0, 0.33, 0.30)):
        found += [_row("stage_e60_avg", corpus, 0.9, avg, partition=p), _row("stage_e60", corpus, 0.8, last, partition=p),
                  _row("stage_e30", corpus, 0.1, 0.2, partition=p)]
    shipped = Shipped("stage_e30", "30 epochs", "stage_e60_avg", "60 epochs, the weights' moving average kept", plain="stage_e60")
    text = budget_text(found, ["stage_e30", "stage_e60", "stage_e60_avg"], ["a", "b"], "ents_seqeval_micro_f", 9, shipped)
    assert "The recipe ships 60 epochs, the weights' moving average kept (`stage_e60_avg`): the choice on every corpus." in text
    assert text.rstrip().splitlines()[-1].startswith(
        "The average minus the last step's weights (`stage_e60_avg` - `stage_e60`), on test: +2.0 [")
    assert "(p = 0.074, 3 draws)." in text
    plain = Shipped("stage_e30", "30 epochs", "stage_e60", "60 epochs")
    assert "The average minus" not in budget_text(found, ["stage_e30", "stage_e60"], ["a", "b"], "ents_seqeval_micro_f", 6, plain)


def test_the_recipe_at_the_chosen_budget_trains_nodevs_recipe_cells_at_60_epochs():
    """campaign_trf_nodev60: each cell is campaign_trf_nodev's lowres_best_trf cell of the same
    corpus, size and partition (draw, seed, learn rate, no dev set), [budget] epochs 60 instead of
    30 (the step keys nodev's spec writes are the budget's own at 30: its orchestrator rewrites them)."""
    spec = load_spec(LAB / "studies" / "campaign_trf_nodev60.yaml", configs_dir=LAB / "configs")
    nodev = load_spec(LAB / "studies" / "campaign_trf_nodev.yaml", configs_dir=LAB / "configs")
    twins = {(c.corpus, c.size, c.partition): c for c in nodev.cells() if c.method == "lowres_best_trf"}
    cells = spec.cells()
    assert len(cells) == len(twins) == 30
    steps = {"training.max_steps", "training.optimizer.learn_rate.warmup_steps", "training.optimizer.learn_rate.total_steps"}
    for cell in cells:
        twin = twins[(cell.corpus, cell.size, cell.partition)]
        assert cell.seed == twin.seed and cell.config == twin.config
        assert {k: v for k, v in cell.overrides.items() if k != "budget.epochs"} == {k: v for k, v in twin.overrides.items() if k not in steps}
        assert cell.overrides["budget.epochs"] == 60 and twin.overrides["training.max_steps"] == {20: 90, 50: 210}[cell.size]


def test_the_frozen_30_epoch_recipe_is_the_shipped_one_but_for_its_schedule():
    """studies/configs/lowres_best_trf_e30.cfg, which the studies that trained 30 epochs train so
    that their keys stay, is the shipped recipe with [budget] epochs = 30 and no weight average
    (the recipe ships the 60 epochs with the average that campaign_trf_budget's rule chose): the
    two differ in those two settings."""
    from auc_ner_lab.cells import assembled_config
    from spacy_auc_ner.api import recipe_config

    frozen = assembled_config(None, [LAB / "studies" / "configs" / "lowres_best_trf_e30.cfg"])
    shipped = recipe_config("lowres_best_trf")
    assert (frozen["budget"]["epochs"], shipped["budget"]["epochs"]) == (30, 60)
    assert (frozen["training"]["optimizer"]["use_averages"], shipped["training"]["optimizer"]["use_averages"]) == (False, True)
    shipped["budget"]["epochs"] = 30
    shipped["training"]["optimizer"]["use_averages"] = False
    assert frozen == shipped
