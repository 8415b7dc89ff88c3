"""Which forms of an auc_ner pipeline load. 0.1.0 keeps no compatibility layer (CHANGELOG.md): a
pipeline saved now round-trips through to_disk/from_disk, to_bytes/from_bytes and spacy.load;
a config naming a removed form is refused by spaCy, naming it: a v1 architecture by its
registry, the component's two_task_lambda or threshold (two_task's lam and threshold are set in
its scheme block) by its validation."""
import pytest
import spacy
from catalogue import RegistryError
from thinc.api import ConfigValidationError

from spacy_auc_ner.cli.errors import error_text
from toy_data import fit_toy

TOK2VEC = {
    "@architectures": "spacy.HashEmbedCNN.v2", "width": 16, "depth": 1, "embed_size": 300,
    "window_size": 1, "maxout_pieces": 2, "subword_features": True, "pretrained_vectors": None,
}
TEXTS = ["Aspirin treats breast cancer in Paris .", "Mary met Anna in Rome ."]
SAVED_NOW = [
    {"scheme": "ova"},
    {"scheme": {"@misc": "spacy_auc_ner.TwoTask.v1", "lam": 3.0, "threshold": 0.7}},
    {"scheme": "crf", "model": {"@architectures": "spacy_auc_ner.BiLSTMTokenScorer.v2", "tok2vec": TOK2VEC, "hidden_width": 8}},
]


def _predicted(nlp):
    return [([(e.start, e.end, e.label_) for e in d.ents], d.spans["auc_ner"].attrs["scores"].tolist()) for d in nlp.pipe(TEXTS)]


@pytest.mark.parametrize("config", SAVED_NOW, ids=["ova", "two_task_block", "crf_bilstm"])
def test_a_pipeline_saved_now_round_trips(tmp_path, config):
    nlp, _, _ = fit_toy(config, n_iter=8)
    pipe = nlp.get_pipe("auc_ner")
    expected = _predicted(nlp)
    assert any(ents for ents, _ in expected)
    nlp.to_disk(tmp_path / "pipe")
    loaded = spacy.load(tmp_path / "pipe")
    assert _predicted(loaded) == expected
    assert loaded.config["components"]["auc_ner"] == nlp.config["components"]["auc_ner"]
    assert loaded.get_pipe("auc_ner").cfg == pipe.cfg
    # from_disk and from_bytes into a pipeline made from the saved config
    for read in (lambda fresh: fresh.from_disk(tmp_path / "pipe"), lambda fresh: fresh.from_bytes(nlp.to_bytes())):
        fresh = spacy.util.load_model_from_config(loaded.config, auto_fill=True)
        read(fresh)
        assert _predicted(fresh) == expected and fresh.get_pipe("auc_ner").cfg == pipe.cfg


@pytest.mark.parametrize("name", ["TokenScorer", "BiLSTMTokenScorer"])
def test_a_config_naming_a_v1_architecture_is_refused_naming_it(tmp_path, name):
    model = {"@architectures": f"spacy_auc_ner.{name}.v1", "tok2vec": TOK2VEC}
    with pytest.raises(RegistryError) as err:
        spacy.blank("en").add_pipe("auc_ner", config={"model": model})
    text = str(err.value)
    assert text.splitlines()[0].startswith(f"[E893] Could not find function 'spacy_auc_ner.{name}.v1' in function registry 'architectures'")
    assert f"spacy_auc_ner.{name}.v2" in text  # among the names spaCy lists
    assert "\n" not in error_text(err.value)  # as the package's commands print it
    # a pipeline whose saved config names one does not load
    nlp, _, _ = fit_toy({"scheme": "ova", "model": {**model, "@architectures": f"spacy_auc_ner.{name}.v2"}}, n_iter=1)
    nlp.to_disk(tmp_path / "pipe")
    saved = tmp_path / "pipe" / "config.cfg"
    saved.write_text(saved.read_text().replace(f"spacy_auc_ner.{name}.v2", f"spacy_auc_ner.{name}.v1"))
    with pytest.raises(RegistryError, match=rf"^\[E893\] Could not find function 'spacy_auc_ner.{name}.v1'"):
        spacy.load(tmp_path / "pipe")


@pytest.mark.parametrize("setting, value", [("two_task_lambda", 3.0), ("threshold", 0.7)])
def test_the_components_old_scheme_settings_are_refused_naming_them(tmp_path, setting, value):
    with pytest.raises(ConfigValidationError) as err:
        spacy.blank("en").add_pipe("auc_ner", config={"scheme": "two_task", setting: value})
    assert f"auc_ner -> {setting}\tunexpected argument: '{setting}'" in str(err.value)
    assert error_text(err.value) == f"[auc_ner.{setting}]: unexpected argument: '{setting}'"
    # a pipeline whose saved config.cfg holds one does not load
    nlp, _, _ = fit_toy({"scheme": "two_task"}, n_iter=1)
    nlp.to_disk(tmp_path / "pipe")
    saved = tmp_path / "pipe" / "config.cfg"
    saved.write_text(saved.read_text().replace('scheme = "two_task"\n', f'scheme = "two_task"\n{setting} = {value}\n'))
    with pytest.raises(ConfigValidationError, match=rf"auc_ner -> {setting}\tunexpected argument"):
        spacy.load(tmp_path / "pipe")


def test_a_scheme_name_is_its_block_with_the_blocks_defaults():
    pipe = spacy.blank("en").add_pipe("auc_ner", config={"scheme": "two_task"})
    assert (pipe.scheme.lam, pipe.scheme.threshold) == (100.0, 0.5)
    assert "two_task_lambda" not in pipe.cfg and "threshold" not in pipe.cfg
    block = spacy.blank("en").add_pipe("auc_ner", config={"scheme": {"@misc": "spacy_auc_ner.TwoTask.v1", "lam": 3.0}})
    assert (block.scheme.lam, block.scheme.threshold) == (3.0, 0.5) and block.cfg["scheme"] == "two_task"
