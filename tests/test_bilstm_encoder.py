"""BiLSTMEncoder.v1: a BiLSTM over an encoder is an encoder of its own. Each token's vector sees
the whole sentence (the CPU tok2vec's window encoder sees four tokens each side); spaCy's ner
trains on it, saves and loads it; `spacy pretrain` can move it into a shared tok2vec pipe."""
from pathlib import Path

import numpy
import pytest
import spacy
from spacy.tokens import Doc
from spacy.util import load_config, registry

from spacy_auc_ner.methods import method_config
from spacy_auc_ner.training.pretraining import pretraining_config
from toy_data import TOY, fit_toy

CONFIGS = Path(__file__).resolve().parents[1] / "configs"


def _base_tok2vec():
    cfg = load_config(CONFIGS / "base_cpu.cfg", interpolate=False)
    block = cfg["components"]["auc_ner"]["model"]["tok2vec"]
    return registry.resolve({"m": block})["m"]


def _first_token_vector(model, words):
    doc = Doc(spacy.blank("en").vocab, words=words)
    return model.predict([doc])[0][0]


def test_every_token_sees_the_whole_sentence():
    """Changing the 12th word moves the first word's vector through the BiLSTM, and not through
    the window encoder alone (4 layers of window 1: 4 tokens each side)."""
    words = "the patient was treated for a rare form of colon cancer today".split()
    other = words[:-1] + ["yesterday"]
    base = _base_tok2vec()
    base.initialize()
    assert numpy.allclose(_first_token_vector(base, words), _first_token_vector(base, other))
    build = registry.architectures.get("spacy_auc_ner.BiLSTMEncoder.v1")
    model = build(_base_tok2vec(), hidden_width=8)
    model.initialize(X=[Doc(spacy.blank("en").vocab, words=words)])
    assert model.get_dim("nO") == 16
    first, changed = _first_token_vector(model, words), _first_token_vector(model, other)
    assert first.shape == (16,) and not numpy.allclose(first, changed)


def test_empty_docs_get_empty_outputs_of_the_width():
    build = registry.architectures.get("spacy_auc_ner.BiLSTMEncoder.v1")
    model = build(_base_tok2vec(), hidden_width=4)
    vocab = spacy.blank("en").vocab
    docs = [Doc(vocab, words=["a", "b"]), Doc(vocab, words=[])]
    model.initialize(X=docs[:1])
    out = model.predict(docs)
    assert out[0].shape == (2, 8) and out[1].shape == (0, 8)


@pytest.mark.parametrize("hidden_width,depth", [(0, 1), (8, 0)])
def test_a_bilstm_of_no_size_is_refused(hidden_width, depth):
    build = registry.architectures.get("spacy_auc_ner.BiLSTMEncoder.v1")
    with pytest.raises(ValueError, match=r"\[model\] BiLSTMEncoder needs hidden_width >= 1 and depth >= 1"):
        build(_base_tok2vec(), hidden_width=hidden_width, depth=depth)


def test_spacys_ner_trains_on_it_and_round_trips(tmp_path):
    cfg = method_config("spacy_ner_bilstm", "cpu", CONFIGS)
    cfg["components"]["ner"]["model"]["tok2vec"]["hidden_width"] = 16
    nlp, examples, losses = fit_toy({"model": cfg["components"]["ner"]["model"]}, 120, factory="ner")
    assert numpy.isfinite(losses[-1])
    assert nlp.evaluate(examples)["ents_f"] > 0.9
    texts = [" ".join(words) for words, _ in TOY]
    before = [[(e.start, e.end, e.label_) for e in doc.ents] for doc in nlp.pipe(texts)]
    nlp.to_disk(tmp_path / "pipe")
    loaded = spacy.load(tmp_path / "pipe")
    assert [[(e.start, e.end, e.label_) for e in doc.ents] for doc in loaded.pipe(texts)] == before


def test_pretraining_moves_the_whole_bilstm_encoder_into_a_tok2vec_pipe(tmp_path):
    path = tmp_path / "spacy_ner_bilstm.cfg"
    method_config("spacy_ner_bilstm", "cpu", CONFIGS).to_disk(path)
    config = pretraining_config(path, CONFIGS / "pretrain" / "characters.cfg")
    assert config["nlp"]["pipeline"] == ["tok2vec", "ner"]
    assert config["pretraining"]["component"] == "tok2vec" and config["pretraining"]["layer"] == ""
    assert config["components"]["tok2vec"]["model"]["@architectures"] == "spacy_auc_ner.BiLSTMEncoder.v1"
    # the ner listens at the BiLSTM's width: 2 x 128 units
    assert config["components"]["ner"]["model"]["tok2vec"] == {"@architectures": "spacy.Tok2VecListener.v1", "width": 256, "upstream": "tok2vec"}
