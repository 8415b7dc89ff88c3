"""Training extras of study methods: augmentation around the draw, pretraining and
self-training on the rest of the training split (study/training_extras.py)."""
import json
from pathlib import Path

import pytest
import spacy

from spacy_auc_ner.data.columns import read_docs
from spacy_auc_ner.methods import assemble, recipe_config
from auc_ner_lab.spec import SpecError, parse_spec
from auc_ner_lab.training_extras import AUGMENTED, PRETRAIN_DEFAULTS, SELF_TRAIN_DEFAULTS, config_augment, with_pretraining
from spacy_auc_ner.training.readers import draw_indices
from spacy_auc_ner.training.self_training import with_self_training
from spacy_auc_ner.training.unlabeled import write_pool

ROOT = Path(__file__).parents[1]
CONFIGS = ROOT / "configs"
RECIPE = "lowres_spacy_ner"  # the recipe until 2026-11-24
HEAD_RECIPE = "lowres_best"
CRF_AUC_RECIPE = "lowres_crf_auc"
from lab_helpers import train_tiny
from study_toy_corpus import SENTENCES, write_toy_corpus


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


def test_pretrain_and_self_train_defaults_and_fragment():
    spec = _spec([{"name": "st", "base": "crf", "pretrain": True, "self_train": {"rounds": 2}}])
    extras = spec.cells()[0].extras
    assert extras["self_train"] == {**SELF_TRAIN_DEFAULTS, "rounds": 2}
    assert {k: v for k, v in extras["pretrain"].items() if k != "fragment"} == PRETRAIN_DEFAULTS
    assert Path(extras["pretrain"]["fragment"]) == CONFIGS / "pretrain" / "characters.cfg"


def test_pretraining_on_the_draw_has_no_pool_and_the_default_text_keeps_the_ids():
    spec = _spec([{"name": "plain", "base": "crf", "pretrain": True},
                  {"name": "pool", "base": "crf", "pretrain": {"text": "pool"}},
                  {"name": "draw", "base": "crf", "pretrain": {"text": "draw", "epochs": 1}}])
    by_method = {}
    for cell in spec.cells():
        by_method.setdefault(cell.method, []).append(cell)
    draw = by_method["draw"][0].extras["pretrain"]
    assert draw["text"] == "draw" and "pool" not in draw and draw["epochs"] == 1
    # `text: pool` is the default, written or not: the same settings, so the same cells as before it existed
    assert by_method["pool"][0].extras == by_method["plain"][0].extras
    assert "text" not in by_method["plain"][0].extras["pretrain"]
    assert [c.key for c in by_method["pool"]] == [c.key for c in by_method["plain"]]
    assert by_method["draw"][0].key != by_method["plain"][0].key


@pytest.mark.parametrize(
    "entry, message",
    [
        ({"augment": {"copy": 2}}, r"methods\[0\] \(m\)\.augment: unknown setting\(s\) copy"),
        ({"augment": 3}, r"methods\[0\] \(m\)\.augment: a mapping"),
        ({"pretrain": {"objective": "nope"}}, r"pretrain\.objective: 'nope' has no fragment"),
        ({"pretrain": {"epochs": 0}}, r"pretrain\.epochs: 0 is not a positive"),
        ({"self_train": {"pool": 0}}, r"self_train\.pool: 0 is not a positive"),
        ({"self_train": {"threshold": 2}}, r"self_train\.threshold: 2 is not a confidence"),
        ({"self_train": {"round": 1}}, r"self_train: unknown setting\(s\) round"),
        ({"pretrain": {"text": "raw"}}, r"methods\[0\] \(m\)\.pretrain\.text: 'raw' is neither 'pool' \(the rest of the split\) nor 'draw'"),
        ({"pretrain": {"text": "draw", "pool": 100}}, r"pretrain: pool sets the size of a pool that text: draw does not read"),
        ({"self_train": {"text": "draw"}}, r"self_train: unknown setting\(s\) text; allowed: rounds, threshold, pool, low_confidence"),
    ],
)
def test_bad_extras_are_one_line_errors(entry, message):
    with pytest.raises(SpecError, match=message):
        _spec([{"name": "m", "base": "ce", **entry}])


def test_pool_steps_need_a_lowres_draw():
    with pytest.raises(SpecError, match=r"self_train take their unlabeled pool from the rest of a lowres draw; the missing setting"):
        parse_spec(
            {"name": "x", "setting": "missing", "mask_p": [0.5], "corpora": ["toy"], "sizes": [5],
             "methods": [{"name": "m", "base": "ce", "self_train": True}]},
            corpora_dir="corpus", configs_dir=CONFIGS,
        )


def test_the_pool_is_the_rest_of_the_draw(tmp_path):
    corpora = write_toy_corpus(tmp_path / "corpus")
    train = corpora / "toy" / "train.spacy"
    n = write_pool(train, tmp_path / "pool.spacy", 5, 3)
    docs = read_docs(train, spacy.blank("en").vocab)
    drawn = set(draw_indices(len(docs), 5, 3))
    rest = [d.text for i, d in enumerate(docs) if i not in drawn]
    pool = read_docs(tmp_path / "pool.spacy", spacy.blank("en").vocab)
    assert n == len(docs) - 5 == len(pool)
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


def _trained_alike(spec, tmp_path):
    """The configs `spacy pretrain` and `spacy train` get for the spec's two methods (partition
    1), asserted equal, as are their pool steps (augmentation is in the configs)."""
    a, b = [c for c in spec.cells() if c.partition == 1]
    assert a.extras["pretrain"] == b.extras["pretrain"] and a.extras["self_train"] == b.extras["self_train"]
    configs = []
    for cell in (a, b):
        (tmp_path / cell.method).mkdir()
        # as the cell runs: the self-training settings the recipe holds, written into the other's
        configs.append(with_self_training(with_pretraining(cell.training_config(), cell.extras["pretrain"], tmp_path / cell.method)))
    assert configs[0] == configs[1]
    return configs


def test_the_recipe_trains_what_spacy_ner_with_the_extras_trains(tmp_path):
    """The recipe lowres_spacy_ner restates spaCy's ner with its own tok2vec pipe; a study cell
    of it (with pretraining) must train exactly what spaCy's ner with augmentation (3 copies)
    and pretraining assembles to, so that the recipe's committed rows (first run as
    `spacy_ner_extras`) stay true."""
    spec = _spec([
        {"name": "recipe", "recipe": RECIPE, "pretrain": True, "self_train": True},
        {"name": "spacy_ner_extras", "base": "spacy_ner", "augment": {"copies": 3}, "pretrain": True, "self_train": True},
    ])
    configs = _trained_alike(spec, tmp_path)
    assert configs[0]["nlp"]["pipeline"] == ["tok2vec", "ner"]
    assert configs[0]["pretraining"]["component"] == "tok2vec" and configs[0]["pretraining"]["max_epochs"] == 2


def test_the_recipe_trains_what_its_study_method_trained(tmp_path):
    """The recipe lowres_best (the package's head with the extras) restates its head; a study
    cell of it must train exactly what studies/lowres_recipe.yaml's bilstm_crf_cal_wd_extras
    trained, the rows that chose it on dev."""
    overrides = {
        "training.before_update": {"@callbacks": "spacy_auc_ner.calibrate_entity_bias.v1"},
        "components.auc_ner.model.tok2vec.embed.@architectures": "spacy_auc_ner.MultiHashEmbed.v1",
        "components.auc_ner.model.tok2vec.embed.word_dropout_rate": 0.3,
    }
    spec = _spec([
        {"name": "recipe", "recipe": HEAD_RECIPE, "pretrain": True, "self_train": {"rounds": 2}},
        {"name": "bilstm_crf_cal_wd_extras", "base": "bilstm_crf", "overrides": overrides,
         "augment": {"copies": 3}, "pretrain": True, "self_train": {"rounds": 2}},
    ])
    configs = _trained_alike(spec, tmp_path)
    assert configs[0]["nlp"]["pipeline"] == ["auc_ner"]
    assert configs[0]["pretraining"]["component"] == "auc_ner" and configs[0]["pretraining"]["layer"] == "tok2vec"


@pytest.mark.slow
def test_a_cell_with_every_extra_runs_and_reports_its_rounds(tmp_path):
    _, outcome, (row,) = train_tiny(tmp_path, [{"name": "recipe", "recipe": RECIPE, "augment": {"copies": 1},
                                                "pretrain": {"epochs": 1, "pool": 4}, "self_train": {"threshold": 0.0, "pool": 3}}], steps=6)
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
    from spacy_auc_ner.training import recipe

    seen = []
    real = recipe.train_config  # the one training of a cell without self-training

    def spy(config, *args, **kwargs):
        seen.append(config["paths"]["init_tok2vec"])
        return real(config, *args, **kwargs)

    monkeypatch.setattr(recipe, "train_config", spy)
    _, outcome, (row,) = train_tiny(tmp_path, [{"name": "ce_pre", "base": "ce", "pretrain": {"epochs": 1, "pool": 4}}])
    assert outcome.ok == 1, row.get("traceback")
    assert len(seen) == 1 and seen[0].endswith("model-last.bin")
    extras = row["scores"]["extras"]
    assert set(extras) == {"pool_sentences", "pretrain_seconds"} and extras["pool_sentences"] == 4
    assert row["scores"]["train_seconds"] > extras["pretrain_seconds"] > 0


@pytest.mark.slow
def test_a_cell_that_pretrains_on_its_draw_reads_the_drawn_sentences(tmp_path, monkeypatch):
    """`text: draw` (spacy-auc-ner recipe without --raw): spacy pretrain reads the cell's own
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
    spec, outcome, (row,) = train_tiny(tmp_path, [{"name": "no_raw", "recipe": RECIPE, "augment": {"copies": 1},
                                                   "pretrain": {"epochs": 1, "text": "draw"}}])
    assert outcome.ok == 1
    train_docs = read_docs(tmp_path / "corpus" / "toy" / "train.spacy", spacy.blank("en").vocab)
    drawn = sorted(" ".join(train_docs[i].text.split()) for i in draw_indices(len(train_docs), 5, spec.seed))
    assert read == [drawn]
    extras = row["scores"]["extras"]
    assert extras["pretrain_sentences"] == 5 and "pool_sentences" not in extras and extras["pretrain_seconds"] > 0
