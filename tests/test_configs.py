"""The CPU configs compare methods fairly: one encoder and one training setup for all."""
from pathlib import Path

import pytest
from spacy.util import load_config, load_model_from_config

CONFIGS = Path(__file__).resolve().parents[1] / "configs"
CPU = sorted(p.name for p in CONFIGS.glob("*.cfg") if not p.name.endswith("_trf.cfg"))
REFERENCE = load_config(CONFIGS / "ova_auc.cfg", interpolate=False)


def _component(cfg):
    return cfg["components"][cfg["nlp"]["pipeline"][0]]


@pytest.mark.parametrize("name", CPU)
def test_cpu_configs_share_encoder_training_and_corpora(name):
    cfg = load_config(CONFIGS / name, interpolate=False)
    assert cfg["training"] == REFERENCE["training"]
    assert cfg["corpora"] == REFERENCE["corpora"]
    assert cfg["nlp"]["batch_size"] == REFERENCE["nlp"]["batch_size"]
    assert _component(cfg)["model"]["tok2vec"] == _component(REFERENCE)["model"]["tok2vec"]


@pytest.mark.parametrize("name", sorted(p.name for p in CONFIGS.glob("*.cfg")))
def test_every_config_builds(name):
    nlp = load_model_from_config(load_config(CONFIGS / name, overrides={"paths.transformer": "unused"} if name.endswith("_trf.cfg") else {}), auto_fill=True, validate=True)
    assert nlp.pipe_names
