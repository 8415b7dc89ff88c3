"""Training extras of study methods: augmentation around the draw, pretraining and
self-training on the rest of the training split (auc_ner_lab/training_extras.py)."""
import json
from pathlib import Path

import pytest
import spacy
import srsly

from auc_ner_lab.spec import SpecError, parse_spec
from auc_ner_lab.training_extras import AUGMENTED, config_augment, pool_block, steps, with_pretraining
from lab_data import SENTENCES, write_toy_corpus
from lab_helpers import train_tiny
from spacy_auc_ner.api import assemble, draw_indices, read_docs, recipe_config

ROOT = Path(__file__).parents[1]
CONFIGS = ROOT / "configs"
RECIPE = "lowres_spacy_ner"  # the recipe until 2026-11-24
HEAD_RECIPE = "lowres_best"
CRF_AUC_RECIPE = "lowres_crf_auc"


def _spec(methods, **extra):
    data = {"name": "x", "corpora": ["toy"], "methods": methods, "sizes": [5], "partitions": 2, **extra}
    return parse_spec(data, corpora_dir="corpus", configs_dir=CONFIGS)


def test_augment_wraps_the_draw_with_the_cell_seed():
    spec = _spec(["ce", {"name": "ce_aug", "base": "ce", "augment": {"copies": 2}}])
    plain, aug = [c for c in spec.cells() if c.partition == 1]
    draw = plain.overrides["corpora.train"]
    block = aug.overrides["corpora.train"]
    assert block == {"@readers": AUGMENTED, "copies": 2, "seed": 1, "corpus": draw}
    assert aug.extras == {"augment": {"copies": 2}} and plain.extras is None
    assert aug.key != plain.key and aug.describe()["extras"] == ["augment"]
    assert "extras" not in plain.describe()


def test_a_config_that_augments_keeps_its_wrapper_unless_told_not_to():
    spec = _spec([
        {"name": "recipe", "recipe": RECIPE},
        {"name": "recipe_no_augment", "recipe": RECIPE, "augment": False},
        {"name": "recipe_one_copy", "recipe": RECIPE, "augment": {"copies": 1}},
    ])
    recipe, plain, one = [c for c in spec.cells() if c.partition == 0]
    own = config_augment(recipe_config(RECIPE, CONFIGS))
    assert own["copies"] == 3 and "seed" not in own and "corpus" not in own
    assert recipe.overrides["corpora.train"]["@readers"] == AUGMENTED
    assert recipe.overrides["corpora.train"]["corpus"] == plain.overrides["corpora.train"]
    assert {k: recipe.overrides["corpora.train"][k] for k in own} == own
    assert plain.overrides["corpora.train"]["@readers"] == "spacy_auc_ner.LowResource.v1"
    assert one.overrides["corpora.train"]["copies"] == 1


LAYERS = ["pretrain/characters.cfg", "self_training.cfg"]


def test_pretraining_and_self_training_are_the_cells_config():
    """A recipe pretrains and self-trains as it is shipped; a base method with the layers does
    too; overrides set them; the key hashes all of it."""
    spec = _spec([{"name": "recipe", "recipe": RECIPE},
                  {"name": "one_round", "recipe": RECIPE, "overrides": {"self_training.rounds": 1}},
                  {"name": "no_steps", "recipe": RECIPE, "overrides": {"self_training.rounds": 0, "pretraining.max_epochs": 0}},
                  {"name": "crf_steps", "base": "crf", "layers": LAYERS},
                  {"name": "crf"}])
    recipe, one, none, crf_steps, crf = [c for c in spec.cells() if c.partition == 0]
    assert steps(recipe) == steps(one) == steps(crf_steps) == ["pretrain", "self_train"] and steps(none) == steps(crf) == []
    assert recipe.training_config()["self_training"]["rounds"] == 2 and one.training_config()["self_training"]["rounds"] == 1
    assert len({recipe.key, one.key, none.key}) == 3 and crf_steps.key != crf.key
    assert recipe.describe()["extras"] == ["augment", "pretrain", "self_train"] and "extras" not in crf.describe()
    assert crf_steps.layers == [str(CONFIGS / layer) for layer in LAYERS]


def test_pretraining_on_the_draw_is_another_cell():
    spec = _spec([{"name": "pool", "recipe": RECIPE}, {"name": "draw", "recipe": RECIPE, "pretrain_text": "draw"}])
    pool, draw = [c for c in spec.cells() if c.partition == 0]
    assert (pool.pretrain_text, draw.pretrain_text) == ("pool", "draw") and pool.key != draw.key


@pytest.mark.parametrize(
    "entry, message",
    [
        ({"augment": {"copy": 2}}, r"methods\[0\] \(m\)\.augment: unknown setting\(s\) copy"),
        ({"augment": 3}, r"methods\[0\] \(m\)\.augment: a mapping"),
        ({"pretrain_text": "raw"}, r"methods\[0\] \(m\)\.pretrain_text: 'raw' is neither 'pool' \(the rest of the split\) nor 'draw'"),
        ({"layers": "self_training.cfg"}, r"methods\[0\] \(m\)\.layers: 'self_training.cfg' is not a list of partial config files"),
        ({"recipe": RECIPE, "layers": LAYERS}, r"methods\[0\] \(m\): layers go between a base and a method; a recipe has its own"),
        # the extras until 2026-11-26 say what to write instead
        ({"pretrain": True, "self_train": {"rounds": 2}}, r"methods\[0\] \(m\): pretrain and self_train are config settings since 2026-11-26: "
                                                          r"name a recipe .* layers: \[pretrain/characters.cfg, self_training.cfg\]; then set them with overrides"),
    ],
)
def test_bad_extras_are_one_line_errors(entry, message):
    with pytest.raises(SpecError, match=message):
        _spec([{"name": "m", **({"base": "ce"} if "recipe" not in entry else {}), **entry}])


def test_a_self_training_key_on_a_config_without_the_block_is_refused():
    spec = _spec([{"name": "m", "base": "ce", "overrides": {"self_training.rounds": 1}}])
    with pytest.raises(SpecError, match=r"methods.m.overrides.self_training.rounds: names nothing in the config of method 'm'"):
        spec.check_overrides()


def test_the_pool_is_the_rest_of_the_draw(tmp_path):
    corpora = write_toy_corpus(tmp_path / "corpus")
    train = corpora / "toy" / "train.spacy"
    from spacy.util import registry

    cell = type("Cell", (), {"train": train, "size": 5, "seed": 3})()
    block = pool_block(cell, None)
    pool = [eg.reference for eg in registry.resolve({"pool": block})["pool"](spacy.blank("en"))]
    docs = read_docs(train, spacy.blank("en").vocab)
    drawn = set(draw_indices(len(docs), 5, 3))
    rest = [d.text for i, d in enumerate(docs) if i not in drawn]
    assert len(docs) - 5 == len(pool)
    assert sorted(d.text for d in pool) == sorted(rest)
    assert all(not d.ents for d in pool)


def test_crf_auc_recipe_config_is_the_crf_auc_method_plus_its_own_blocks():
    """The recipe lowres_crf_auc restates its head (configs/recipes/lowres_crf_auc.cfg);
    outside its extras it must stay what the base and the crf_auc method assemble to."""
    recipe = recipe_config(CRF_AUC_RECIPE, CONFIGS)
    method = assemble(CONFIGS / "base_cpu.cfg", CONFIGS / "methods" / "crf_auc.cfg", {})
    for section in ("system", "nlp", "training", "initialize"):
        assert recipe[section] == method[section], section
    assert recipe["corpora"]["dev"] == method["corpora"]["dev"]
    assert recipe["corpora"]["train"]["corpus"] == method["corpora"]["train"]
    assert {k: v for k, v in recipe["paths"].items() if k != "raw_text"} == method["paths"]
    model = dict(recipe["components"]["auc_ner"])
    loss = model.pop("loss")
    expected = dict(method["components"]["auc_ner"])
    assert loss == {**expected.pop("loss"), "mu": 0.1}
    assert model == expected
    assert recipe["pretraining"]["component"] == "auc_ner" and recipe["pretraining"]["layer"] == "tok2vec"


def _named(config, folder: Path):
    """``config`` with its pretraining component and layer named as the orchestrator names
    them, read through the command that does the same (`spacy-auc-ner pretrain-config`, its
    fragment the config's own [pretraining] block)."""
    import inspect

    from thinc.api import Config
    from typer.testing import CliRunner

    from spacy_auc_ner.api import main

    app = inspect.signature(main).parameters["app"].default  # the app `spacy-auc-ner` runs

    folder.mkdir()
    config.to_disk(folder / "cell.cfg")
    Config({"pretraining": config["pretraining"]}).to_disk(folder / "fragment.cfg")
    result = CliRunner().invoke(app, ["pretrain-config", *(str(folder / f) for f in ("cell.cfg", "fragment.cfg", "named.cfg"))])
    assert result.exit_code == 0, result.output
    return spacy.util.load_config(folder / "named.cfg", interpolate=False)


def _trained_alike(spec, tmp_path):
    """The configs `spacy pretrain` and `spacy train` get for the spec's two methods (partition
    1), asserted equal (augmentation is in the configs)."""
    a, b = [c for c in spec.cells() if c.partition == 1]
    configs = [_named(with_pretraining(cell.training_config()), tmp_path / cell.method) for cell in (a, b)]
    assert configs[0] == configs[1]
    return configs


def test_the_recipe_trains_what_spacy_ner_with_the_extras_trains(tmp_path):
    """The recipe lowres_spacy_ner restates spaCy's ner with its own tok2vec pipe; a study cell
    of it (with pretraining) must train exactly what spaCy's ner with augmentation (3 copies)
    and pretraining assembles to, so that the recipe's committed rows (first run as
    `spacy_ner_extras`) stay true."""
    spec = _spec([
        {"name": "recipe", "recipe": RECIPE},
        {"name": "spacy_ner_extras", "base": "spacy_ner", "augment": {"copies": 3}, "layers": LAYERS, "overrides": {"pretraining.max_epochs": 2}},
    ])
    configs = _trained_alike(spec, tmp_path)
    assert configs[0]["nlp"]["pipeline"] == ["tok2vec", "ner"]
    assert configs[0]["pretraining"]["component"] == "tok2vec" and configs[0]["pretraining"]["max_epochs"] == 2


def test_the_recipe_trains_what_its_study_method_trained(tmp_path):
    """The recipe lowres_best (the package's head with the extras) restates its head; a study
    cell of it must train exactly what studies/lowres_recipe.yaml's method `lowres_best` (then
    called `bilstm_crf_cal_wd_extras`) trained, the rows that chose it on dev, under that
    spec's budget (its top-level overrides: 600 steps, which the shipped recipe carries)."""
    budget = srsly.read_yaml(Path(__file__).parents[1] / "studies" / "lowres_recipe.yaml")["overrides"]
    overrides = {
        **budget,
        "training.before_update": {"@callbacks": "spacy_auc_ner.calibrate_entity_bias.v1"},
        "components.auc_ner.model.tok2vec.embed.@architectures": "spacy_auc_ner.MultiHashEmbed.v1",
        "components.auc_ner.model.tok2vec.embed.word_dropout_rate": 0.3,
    }
    spec = _spec([
        {"name": "shipped", "recipe": HEAD_RECIPE},
        {"name": "lowres_best", "base": "bilstm_crf", "layers": LAYERS, "overrides": {**overrides, "pretraining.max_epochs": 2},
         "augment": {"copies": 3}},
    ])
    configs = _trained_alike(spec, tmp_path)
    assert configs[0]["nlp"]["pipeline"] == ["auc_ner"]
    assert configs[0]["pretraining"]["component"] == "auc_ner" and configs[0]["pretraining"]["layer"] == "tok2vec"


@pytest.mark.slow
def test_a_cell_with_every_extra_runs_and_reports_its_rounds(tmp_path):
    overrides = {"pretraining.max_epochs": 1, "corpora.pretrain.limit": 4, "self_training.rounds": 1, "self_training.threshold": 0.0,
                 "corpora.pool.limit": 3}
    _, outcome, (row,) = train_tiny(tmp_path, [{"name": "recipe", "recipe": RECIPE, "augment": {"copies": 1}, "overrides": overrides}], steps=6)
    assert outcome.ok == 1
    extras = row["scores"]["extras"]
    assert extras["pool_sentences"] == 4
    assert 0 < extras["pretrain_seconds"] < row["scores"]["train_seconds"] <= row["seconds"]
    assert row["scores"]["train_seconds"] > sum(r["train_seconds"] for r in extras["rounds"])
    assert [r["round"] for r in extras["rounds"]] == [0, 1]
    assert extras["rounds"][1]["pseudo_sentences"] <= 3  # self-training's own pool, not pretraining's 4
    assert extras["chosen_round"] in (0, 1)
    assert row["scores"]["dev_score"] == extras["rounds"][extras["chosen_round"]]["dev_f"]
    assert row["scores"]["test_words"] == sum(len(t.split()) for t, _ in SENTENCES)
    assert row["extras"] == ["augment", "pretrain", "self_train"]


@pytest.mark.slow
def test_a_cell_that_only_pretrains_trains_from_the_weights(tmp_path, monkeypatch):
    from spacy.training import initialize

    seen = []
    real = initialize.init_nlp  # spaCy's, which each training of a cell calls once

    def spy(config, *args, **kwargs):
        seen.append(config["paths"]["init_tok2vec"])
        return real(config, *args, **kwargs)

    monkeypatch.setattr(initialize, "init_nlp", spy)
    _, outcome, (row,) = train_tiny(tmp_path, [{"name": "ce_pre", "base": "ce", "layers": ["pretrain/characters.cfg"],
                                                "overrides": {"pretraining.max_epochs": 1, "corpora.pretrain.limit": 4}}])
    assert outcome.ok == 1, row.get("traceback")
    assert len(seen) == 1 and seen[0].endswith("model-last.bin")
    extras = row["scores"]["extras"]
    assert set(extras) == {"pool_sentences", "pretrain_seconds"} and extras["pool_sentences"] == 4
    assert row["scores"]["train_seconds"] > extras["pretrain_seconds"] > 0


@pytest.mark.slow
def test_a_cell_that_pretrains_on_its_draw_reads_the_drawn_sentences(tmp_path, monkeypatch):
    """`pretrain_text: draw` (spacy-auc-ner recipe without raw text): spacy pretrain reads the cell's own
    sentences, as drawn and not augmented, and no pool is written."""
    from spacy.training import pretrain as pretrain_module

    read = []
    real = pretrain_module.pretrain

    def spy(config, *args, **kwargs):
        # what [corpora.pretrain] (spacy.JsonlCorpus.v1, from the objective's fragment) reads
        assert config["corpora"]["pretrain"]["@readers"] == "spacy.JsonlCorpus.v1"
        lines = Path(config["paths"]["raw_text"]).read_text(encoding="utf8").splitlines()
        read.append(sorted(json.loads(line)["text"] for line in lines))
        return real(config, *args, **kwargs)

    monkeypatch.setattr(pretrain_module, "pretrain", spy)
    spec, outcome, (row,) = train_tiny(tmp_path, [{"name": "no_raw", "recipe": RECIPE, "augment": {"copies": 1}, "pretrain_text": "draw",
                                                   "overrides": {"pretraining.max_epochs": 1, "self_training.rounds": 0}}])
    assert outcome.ok == 1
    train_docs = read_docs(tmp_path / "corpus" / "toy" / "train.spacy", spacy.blank("en").vocab)
    drawn = sorted(" ".join(train_docs[i].text.split()) for i in draw_indices(len(train_docs), 5, spec.seed))
    assert read == [drawn]
    extras = row["scores"]["extras"]
    assert extras["pretrain_sentences"] == 5 and "pool_sentences" not in extras and extras["pretrain_seconds"] > 0


def test_self_training_reads_the_draw_and_dev_sample_on_their_annotated_tokens(tmp_path):
    """The rounds read the cell's draw (its own reader) and its dev set (spaCy's Corpus.v1
    with gold_preproc, `on_annotated_tokens`) with the tokens the corpus annotates, as
    LowResource.v1 gives every other cell: spaCy's tokenizer would split "AL-AIN" and
    "1996-12-06" (29 % of CoNLL 2003's dev sentences), which it did until 2026-11-26."""
    from spacy.tokens import Doc, Span
    from spacy.util import registry

    from auc_ner_lab.training_extras import on_annotated_tokens
    from spacy_auc_ner.api import write_docs

    nlp = spacy.blank("en")
    doc = Doc(nlp.vocab, words=["AL-AIN", ",", "United", "Arab", "Emirates", "1996-12-06"], spaces=[False, True, True, True, True, False])
    doc.ents = [Span(doc, 0, 1, "LOC"), Span(doc, 2, 5, "LOC")]
    assert len(nlp.make_doc(doc.text)) == 12  # what re-tokenizing the text gives: AL - AIN, 1996 - 12 - 06
    write_docs(tmp_path / "corpus.spacy", [doc])
    config = spacy.util.load_config_from_str("[nlp]\nlang = \"en\"\n[training]\ndev_corpus = \"corpora.dev\"\n[corpora]\n", interpolate=False)
    config["corpora"] = {"train": {"@readers": "spacy_auc_ner.LowResource.v1", "path": str(tmp_path / "corpus.spacy"), "n": 1, "seed": 0},
                         "dev": {"@readers": "spacy.Corpus.v1", "path": str(tmp_path / "corpus.spacy"), "gold_preproc": False}}
    config = on_annotated_tokens(config)
    for name in ("train", "dev"):
        (example,) = list(registry.resolve({"reader": config["corpora"][name]})["reader"](nlp))
        assert [t.text for t in example.predicted] == [t.text for t in doc], name
        assert [(e.text, e.label_) for e in example.reference.ents] == [("AL-AIN", "LOC"), ("United Arab Emirates", "LOC")]
