"""studies/lowres_recipe.yaml names each method that runs a shipped recipe after it (issue 31
point 2): `recipe`, which trained lowres_spacy_ner with one self-training round, is
`lowres_spacy_ner_rounds1`; `recipe_rounds2`, the shipped lowres_spacy_ner, is
`lowres_spacy_ner`; `bilstm_crf_cal_wd_extras`, what the shipped lowres_best trains, is
`lowres_best`. The rename changed names only: every cell keeps its key, so the committed rows
(written under the old names, which their `method` and `cell_id` keep) are read under the new
ones."""
from pathlib import Path

import pytest
import srsly
import yaml

from auc_ner_lab.row_checks import row_problem
from auc_ner_lab.spec import parse_spec
from auc_ner_lab.store import ResultsStore

ROOT = Path(__file__).parents[1]
SPEC = ROOT / "studies" / "lowres_recipe.yaml"

# the renamed entries as main's commit 2f0df0b had them, keyed by their name of today
OLD_ENTRIES = {
    new: yaml.safe_load(text)
    for new, text in {
        "lowres_spacy_ner_rounds1": "{name: recipe, recipe: lowres_spacy_ner, overrides: {self_training.rounds: 1, corpora.pretrain.limit: 2000, corpora.pool.limit: 2000}}",
        "lowres_spacy_ner_rounds1_no_augment": "{name: recipe_no_augment, recipe: lowres_spacy_ner, augment: false, overrides: {self_training.rounds: 1, corpora.pretrain.limit: 2000, corpora.pool.limit: 2000}}",
        "lowres_spacy_ner_rounds1_no_pretrain": "{name: recipe_no_pretrain, recipe: lowres_spacy_ner, overrides: {pretraining.max_epochs: 0, self_training.rounds: 1, corpora.pool.limit: 2000}}",
        "lowres_spacy_ner_no_self_train": "{name: recipe_no_self_train, recipe: lowres_spacy_ner, overrides: {self_training.rounds: 0, corpora.pretrain.limit: 2000}}",
        "lowres_spacy_ner": "{name: recipe_rounds2, recipe: lowres_spacy_ner, overrides: {corpora.pretrain.limit: 2000, corpora.pool.limit: 2000}}",
        "lowres_spacy_ner_rounds3": "{name: recipe_rounds3, recipe: lowres_spacy_ner, overrides: {self_training.rounds: 3, corpora.pretrain.limit: 2000, corpora.pool.limit: 2000}}",
        "lowres_spacy_ner_pool5000": "{name: recipe_pool5000, recipe: lowres_spacy_ner, overrides: {corpora.pretrain.limit: 5000, corpora.pool.limit: 5000}}",
        "lowres_spacy_ner_no_raw": "{name: recipe_no_raw, recipe: lowres_spacy_ner, pretrain_text: draw, overrides: {self_training.rounds: 0}}",
        "lowres_spacy_ner_augment_only": "{name: recipe_augment_only, recipe: lowres_spacy_ner, overrides: {pretraining.max_epochs: 0, self_training.rounds: 0}}",
        "spacy_ner_bilstm_extras": """{name: recipe_bilstm_encoder, base: spacy_ner_bilstm, augment: {copies: 3}, layers: [pretrain/characters.cfg, self_training.cfg],
                                       overrides: {pretraining.max_epochs: 2, corpora.pretrain.limit: 2000, self_training.rounds: 1, corpora.pool.limit: 2000}}""",
        "lowres_best": """
            name: bilstm_crf_cal_wd_extras
            base: bilstm_crf
            layers: [pretrain/characters.cfg, self_training.cfg]
            overrides:
              training.before_update: {"@callbacks": spacy_auc_ner.calibrate_entity_bias.v1}
              components.auc_ner.model.tok2vec.embed.@architectures: spacy_auc_ner.MultiHashEmbed.v1
              components.auc_ner.model.tok2vec.embed.word_dropout_rate: 0.3
              pretraining.max_epochs: 2
              corpora.pretrain.limit: 2000
              corpora.pool.limit: 2000
            augment: {copies: 3}
        """,
    }.items()
}
OLD_NAME = {new: entry["name"] for new, entry in OLD_ENTRIES.items()}


def _data():
    return srsly.yaml_loads(SPEC.read_text(encoding="utf8"))


def _name(entry) -> str:
    return entry if isinstance(entry, str) else entry["name"]


def _cells(data):
    return parse_spec(data, source=str(SPEC), corpora_dir=ROOT / "corpus", configs_dir=ROOT / "configs").cells()


@pytest.fixture(scope="module")
def specs():
    """Today's cells, and those of today's spec with the renamed entries as they were."""
    new = _data()
    old = {**new, "methods": [OLD_ENTRIES.get(_name(e), e) for e in new["methods"]]}
    return _cells(new), _cells(old)


def test_the_rename_changed_the_names_only():
    entries = {_name(e): e for e in _data()["methods"]}
    assert set(OLD_ENTRIES) <= set(entries)
    assert {new: {**OLD_ENTRIES[new], "name": new} for new in OLD_ENTRIES} == {new: entries[new] for new in OLD_ENTRIES}
    # no method of the spec is called `recipe` (or `recipe_*`) any more
    assert not [name for name in entries if name == "recipe" or name.startswith("recipe_")]


def test_the_renamed_cells_keep_their_keys(specs):
    new, old = specs
    assert len(new) == len(old) == 1170
    assert [c.key for c in new] == [c.key for c in old]  # the same cells, in the same order
    for name, was in OLD_NAME.items():
        keys = [c.key for c in new if c.method == name]
        assert keys and keys == [c.key for c in old if c.method == was], name
    assert {c.method for c in old} & set(OLD_ENTRIES) == set()


def test_the_committed_rows_are_read_under_the_new_names(specs):
    """The rows keep the names they were written under (`method`, `cell_id`), which the store
    accepts (a row's cell_id agrees with its own method; the key decides its cell); reading
    them through the spec (`rows_for`, as reports do) names them as the spec does now."""
    cells, _ = specs
    store = ResultsStore(ROOT / "results" / "lowres_recipe")
    raw = store.rows()
    written = [r for r in raw if r["method"] in OLD_NAME.values()]
    assert {r["method"] for r in written} == set(OLD_NAME.values())  # every renamed method has rows
    by_key = {c.key: c for c in cells}
    assert {r["key"] for r in written} <= set(by_key)
    assert all(row_problem(r, r["key"], by_key[r["key"]]) is None for r in written)
    named = store.rows_for(cells)
    assert len(named) == len(raw)
    renamed = [r for r in named if r["method"] in OLD_ENTRIES]
    since = [r for r in raw if r["method"] in OLD_ENTRIES]  # written under the new names (cells trained again)
    assert len(renamed) == len(written) + len(since)
    assert not [r for r in named if r["method"] in OLD_NAME.values()]
    for r in renamed:
        assert r["cell_id"].startswith(f"{r['corpus']}/{r['method']}/n={r['size']}/p{r['partition']}#"), r["cell_id"]
    old_of = {r["key"]: r["method"] for r in written}
    assert {(OLD_NAME[r["method"]], old_of[r["key"]]) for r in renamed} == {(was, was) for was in OLD_NAME.values()}
