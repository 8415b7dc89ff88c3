"""`spacy-auc-ner recipe`: pretraining, training and self-training of the recipe's config on a
user's files, every input checked before anything trains (training/recipe.py)."""
import json
from pathlib import Path

import pytest
from spacy.util import load_config
from typer.testing import CliRunner

from spacy_auc_ner.cli.app import app
from spacy_auc_ner.data.columns import DataError
from spacy_auc_ner.methods import recipe_config
from spacy_auc_ner.training import recipe as recipe_module
from spacy_auc_ner.training.recipe import run_recipe
from toy_data import TOY

RECIPE = "lowres_best"  # the shipped recipe, by name
FAST = {"training.max_steps": 4, "training.eval_frequency": 2}
runner = CliRunner()


@pytest.fixture
def raw(toy_corpus):
    path = toy_corpus / "raw.txt"
    path.write_text("".join(" ".join(w) + "\n" for w, _ in TOY * 3))
    return path


@pytest.mark.slow
def test_recipe_with_raw_text_pretrains_trains_from_the_weights_and_self_trains(toy_corpus, raw):
    out = toy_corpus / "out"
    summary = run_recipe(RECIPE, out, train=toy_corpus / "train.spacy", dev=toy_corpus / "dev.spacy", raw=raw,
                         pretrain_epochs=1, rounds=1, threshold=0.0, overrides=FAST, log=lambda m: None, progress=False)
    weights = out / "pretrain" / "model-last.bin"
    assert summary["weights"] == str(weights) and weights.exists() and summary["raw_text"] == str(raw)
    assert [r["round"] for r in summary["rounds"]] == [0, 1]
    assert summary["rounds"][1]["pool_sentences"] == 3 * len(TOY)  # round 1 labelled the raw text
    assert len((out / "rounds.jsonl").read_text().splitlines()) == 2
    assert (out / "model-best" / "meta.json").exists()
    # every round trained from the pretrained encoder
    for k in (0, 1):
        saved = load_config(out / f"round-{k}" / "model-best" / "config.cfg", interpolate=False)
        assert saved["paths"]["init_tok2vec"] == str(weights)


@pytest.mark.slow
def test_recipe_without_raw_text_pretrains_on_the_training_file_and_trains_once(toy_corpus):
    out = toy_corpus / "out"
    summary = run_recipe(RECIPE, out, train=toy_corpus / "train.spacy", dev=toy_corpus / "dev.spacy",
                         pretrain_epochs=1, overrides=FAST, log=lambda m: None, progress=False)
    assert summary["raw_text"] == str(toy_corpus / "train.spacy") and summary["rounds"] == []
    assert (out / "pretrain" / "model-last.bin").exists() and (out / "model-best" / "meta.json").exists()
    assert not (out / "rounds.jsonl").exists()


def _never_train(monkeypatch):
    def fail(*args, **kwargs):
        raise AssertionError("trained before every input was checked")

    monkeypatch.setattr(recipe_module, "train_config", fail)
    monkeypatch.setattr(recipe_module, "run_rounds", fail)
    monkeypatch.setattr("spacy.training.pretrain.pretrain", fail)


@pytest.mark.parametrize("change,message", [
    ({"recipe": "missing.cfg"}, r"missing.cfg: no such config file"),
    ({"recipe": "lowres_bst"}, r"lowres_bst: neither a config file nor a recipe \(lowres_best, lowres_best_trf, lowres_crf_auc, lowres_spacy_ner\)"),
    # the recipes' files until 2026-11-24
    ({"recipe": "configs/lowres_best.cfg"}, r"configs/lowres_best.cfg: no such config file; the recipes are assembled now: "
                                            r"give --config lowres_best, or write the file with 'spacy-auc-ner config lowres_best --output lowres_best.cfg'"),
    ({"train": "missing.spacy"}, r"missing.spacy: no such file"),
    ({"rounds": 0}, r"--rounds: expected 1 or more"),
    ({"threshold": 1.5}, r"--threshold: expected a confidence in \[0, 1\]"),
    ({"pretrain_epochs": 0}, r"--pretrain-epochs: expected 1 or more"),
])
def test_bad_input_is_refused_before_anything_trains(toy_corpus, raw, monkeypatch, change, message):
    _never_train(monkeypatch)
    kwargs = {"recipe": RECIPE, "output_dir": toy_corpus / "out", "train": toy_corpus / "train.spacy",
              "dev": toy_corpus / "dev.spacy", "raw": raw, **change}
    with pytest.raises(DataError, match=message):
        run_recipe(**kwargs)
    assert not (toy_corpus / "out").exists()


def test_a_bad_raw_line_is_named_before_pretraining(toy_corpus, monkeypatch):
    _never_train(monkeypatch)
    bad = toy_corpus / "raw.jsonl"
    bad.write_text('{"text": "fine"}\nnot json\n')
    with pytest.raises(DataError, match=r"raw.jsonl:2: not a JSON line"):
        run_recipe(RECIPE, toy_corpus / "out", train=toy_corpus / "train.spacy", dev=toy_corpus / "dev.spacy", raw=bad)


def test_a_config_without_a_pretraining_block_says_what_to_do(toy_corpus, monkeypatch, full_configs):
    _never_train(monkeypatch)
    with pytest.raises(DataError, match=r"names no component to pretrain; .* or pass --no-pretrain"):
        run_recipe(full_configs["spacy_ner"], toy_corpus / "out", train=toy_corpus / "train.spacy", dev=toy_corpus / "dev.spacy")


def test_a_jsonl_reader_with_text_of_another_format_is_refused(toy_corpus, raw, monkeypatch, tmp_path):
    _never_train(monkeypatch)
    config = recipe_config(RECIPE)
    config["corpora"]["pretrain"] = {"@readers": "spacy.JsonlCorpus.v1", "path": "${paths.raw_text}", "min_length": 1, "max_length": 500, "limit": 0}
    config.to_disk(tmp_path / "jsonl.cfg")
    with pytest.raises(DataError, match=r"reads .jsonl only, not .*raw.txt; use spacy_auc_ner.RawText.v1"):
        run_recipe(tmp_path / "jsonl.cfg", toy_corpus / "out", train=toy_corpus / "train.spacy", dev=toy_corpus / "dev.spacy", raw=raw)


def test_a_previous_run_is_refused_and_kept(toy_corpus, raw, monkeypatch):
    _never_train(monkeypatch)
    out = toy_corpus / "out"
    (out / "pretrain").mkdir(parents=True)
    (out / "pretrain" / "model-last.bin").write_bytes(b"weights")
    with pytest.raises(DataError, match=r"out: already holds a recipe run \(pretrain\); choose another output folder or overwrite it"):
        run_recipe(RECIPE, out, train=toy_corpus / "train.spacy", dev=toy_corpus / "dev.spacy", raw=raw)
    assert (out / "pretrain" / "model-last.bin").read_bytes() == b"weights"


def test_the_command_prints_one_error_line(toy_corpus):
    result = runner.invoke(app, ["recipe", str(toy_corpus / "out"), "--train", str(toy_corpus / "missing.spacy"),
                                 "--dev", str(toy_corpus / "dev.spacy"), "--config", str(RECIPE)])
    assert result.exit_code == 1
    assert result.output.strip().splitlines() == [f"Error: {toy_corpus / 'missing.spacy'}: no such file"]


def test_the_command_trains_the_shipped_recipe_by_default_and_takes_a_name_or_a_file(toy_corpus, monkeypatch, tmp_path):
    seen = []

    def fake_run_recipe(recipe, output_dir, **kwargs):
        seen.append(recipe)
        return {"rounds": [], "model": str(output_dir / "model-best")}

    monkeypatch.setattr(recipe_module, "run_recipe", fake_run_recipe)
    args = ["recipe", str(toy_corpus / "out"), "--train", str(toy_corpus / "train.spacy"), "--dev", str(toy_corpus / "dev.spacy")]
    written = tmp_path / "mine.cfg"
    for extra in ([], ["--config", "lowres_crf_auc"], ["--config", str(written)]):
        assert runner.invoke(app, args + extra).exit_code == 0
    assert seen == ["lowres_best", "lowres_crf_auc", str(written)]


@pytest.mark.slow
def test_the_command_runs_the_recipe_and_prints_the_rounds(toy_corpus, raw):
    out = toy_corpus / "out"
    result = runner.invoke(app, ["recipe", str(out), "--train", str(toy_corpus / "train.spacy"), "--dev", str(toy_corpus / "dev.spacy"),
                                 "--raw", str(raw), "--config", str(RECIPE), "--pretrain-epochs", "1", "--threshold", "0",
                                 "--training.max_steps", "4", "--training.eval_frequency", "2"])
    assert result.exit_code == 0, result.output
    lines = result.output.strip().splitlines()
    assert lines[-1] == f"model-best: {out / 'model-best'}"
    assert [line.split("\t")[0] for line in lines if line.startswith("round ")] == ["round 0", "round 1", "round 2"]  # 2 rounds by default
    rounds = [json.loads(x) for x in (out / "rounds.jsonl").read_text().splitlines()]
    assert rounds[-1]["threshold"] == 0.0


def test_column_files_are_converted_into_the_output_folder(toy_corpus, monkeypatch):
    """A token<TAB>BIO training and dev file: read before anything runs, written to
    OUTPUT/data/*.spacy, and those are what pretraining and training read."""
    calls = {}

    def fake_pretrain(config, output_dir, **kwargs):
        calls["raw_text"] = config["paths"]["raw_text"]
        (Path(output_dir) / "model-last.bin").write_bytes(b"w")

    def fake_train(config_path, output_dir, overrides, gpu_id):
        calls["overrides"] = overrides

    monkeypatch.setattr("spacy.training.pretrain.pretrain", fake_pretrain)
    monkeypatch.setattr(recipe_module, "train_config", fake_train)
    tsv = toy_corpus / "train.tsv"
    tsv.write_text("".join("".join(f"{w}\t{t}\n" for w, t in zip(words, tags)) + "\n" for words, tags in TOY))
    out = toy_corpus / "out"
    run_recipe(RECIPE, out, train=tsv, dev=tsv, log=lambda m: None, progress=False)
    converted = out / "data" / "train.spacy"
    assert calls["raw_text"] == str(converted) and calls["overrides"]["paths.train"] == str(converted)
    assert calls["overrides"]["paths.dev"] == str(out / "data" / "dev.spacy")
    from spacy_auc_ner.data.columns import read_docs
    import spacy

    docs = read_docs(converted, spacy.blank("en").vocab)
    assert [[t.text for t in d] for d in docs] == [list(w) for w, _ in TOY]
    assert [[t.ent_iob_ + ("-" + t.ent_type_ if t.ent_type_ else "") for t in d] for d in docs] == [list(t) for _, t in TOY]


def test_a_bad_column_line_is_named_before_anything_runs(toy_corpus, monkeypatch):
    _never_train(monkeypatch)
    bad = toy_corpus / "train.tsv"
    bad.write_text("Aspirin\tB-Chemical\ntreats\n")
    with pytest.raises(DataError, match=r"train.tsv:2"):
        run_recipe(RECIPE, toy_corpus / "out", train=bad, dev=toy_corpus / "dev.spacy")
    assert not (toy_corpus / "out").exists()
