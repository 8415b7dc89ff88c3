"""CachedFrozenEncoder: each doc encoded once, the same outputs and predictions as the
frozen encoder recomputed every time, no training of the encoder, bounded memory, saved and
loaded like the rest (without its cache). A small CPU tok2vec stands in for the transformer
here; tests/test_transformer_configs.py repeats the main checks on MiniLM."""
import copy
import pickle

import numpy
import pytest
import spacy
from spacy.tokens import Doc
from thinc.api import Config, Model

from spacy_auc_ner.ml.cached import CachedFrozenEncoder, EncoderCache, doc_key
from toy_data import TOY, make_examples

TOK2VEC = {
    "@architectures": "spacy.Tok2Vec.v2",
    "embed": {
        "@architectures": "spacy.MultiHashEmbed.v2",
        "width": 16,
        "attrs": ["NORM", "PREFIX", "SUFFIX", "SHAPE"],
        "rows": [200, 50, 50, 50],
        "include_static_vectors": False,
    },
    "encode": {"@architectures": "spacy.MaxoutWindowEncoder.v2", "width": 16, "depth": 1, "window_size": 1, "maxout_pieces": 2},
}


def frozen_model(max_size=100, bilstm=False):
    tok2vec = {"@architectures": "spacy_auc_ner.CachedFrozenEncoder.v1", "max_size": max_size, "encoder": TOK2VEC}
    if bilstm:
        return {"@architectures": "spacy_auc_ner.BiLSTMTokenScorer.v2", "tok2vec": tok2vec, "hidden_width": 8}
    return {"@architectures": "spacy_auc_ner.TokenScorer.v2", "tok2vec": tok2vec}


class CountingEncoder:
    """The tok2vec, with the docs it was run on recorded."""

    def __init__(self, nlp):
        from spacy.util import registry

        self.inner = registry.resolve(Config({"x": TOK2VEC}))["x"]
        self.seen = []
        self.model = Model("counting", self._forward, init=self._init, layers=[self.inner], dims={"nO": 16})

    def _init(self, model, X=None, Y=None):
        self.inner.initialize(X=X)

    def _forward(self, model, docs, is_train):
        self.seen.extend(doc.text for doc in docs)
        return self.inner(docs, is_train)


def _docs(nlp, words_list):
    return [Doc(nlp.vocab, words=w) for w in words_list]


@pytest.fixture
def counted(nlp):
    counting = CountingEncoder(nlp)
    model = CachedFrozenEncoder(counting.model, max_size=100)
    docs = _docs(nlp, [w for w, _ in TOY])
    model.initialize(X=docs)
    counting.seen.clear()
    return model, counting, docs


def test_outputs_equal_the_frozen_encoder_in_inference_mode(counted):
    model, counting, docs = counted
    expected = counting.inner.predict(docs)
    first, _ = model(docs, is_train=True)
    second, _ = model(docs, is_train=True)
    for e, a, b in zip(expected, first, second):
        numpy.testing.assert_array_equal(a, e)
        numpy.testing.assert_array_equal(b, e)


def test_each_doc_is_encoded_once(counted):
    model, counting, docs = counted
    model(docs[:3], is_train=True)
    model(docs[1:] + docs[:1], is_train=True)  # 1, 2, 0 cached; 3, 4 new
    model.predict(docs)
    assert sorted(counting.seen) == sorted(doc.text for doc in docs)
    cache = model.attrs["cache"]
    assert (cache.misses, cache.hits, len(cache)) == (5, 3 + 5, 5)


def test_a_doc_twice_in_a_batch_is_encoded_once(counted, nlp):
    model, counting, docs = counted
    twin = Doc(nlp.vocab, words=[t.text for t in docs[0]])
    out, _ = model([docs[0], twin], is_train=False)
    assert counting.seen == [docs[0].text]
    numpy.testing.assert_array_equal(out[0], out[1])


def test_key_is_tokens_and_spaces(nlp):
    a = Doc(nlp.vocab, words=["New", "York"], spaces=[True, False])
    b = Doc(nlp.vocab, words=["New", "York"], spaces=[False, False])
    c = Doc(nlp.vocab, words=["NewYork"])
    d = Doc(nlp.vocab, words=["New", "York"], spaces=[True, False])
    assert doc_key(a) == doc_key(d)
    assert len({doc_key(a), doc_key(b), doc_key(c)}) == 3


def test_outputs_are_copies(counted):
    model, _, docs = counted
    out, _ = model(docs[:1], is_train=False)
    out[0][:] = 7.0
    again, _ = model(docs[:1], is_train=False)
    assert not (again[0] == 7.0).all()


def test_no_gradient_goes_into_the_encoder(counted):
    model, counting, docs = counted
    out, backprop = model(docs, is_train=True)
    assert backprop([numpy.ones_like(y) for y in out]) == docs
    assert not any(node.has_grad(name) for node in model.walk() for name in node.param_names)


def test_memory_is_bounded_least_recently_used_first(nlp):
    counting = CountingEncoder(nlp)
    model = CachedFrozenEncoder(counting.model, max_size=2)
    docs = _docs(nlp, [w for w, _ in TOY])
    model.initialize(X=docs)
    expected = counting.inner.predict(docs)
    out, _ = model(docs, is_train=False)  # a batch larger than the cache is still right
    for e, a in zip(expected, out):
        numpy.testing.assert_array_equal(a, e)
    cache = model.attrs["cache"]
    assert len(cache) == 2
    assert cache.get(doc_key(docs[4])) is not None and cache.get(doc_key(docs[0])) is None
    model(docs[3:4], is_train=False)  # 3 becomes the most recent; 4 is dropped next
    model(docs[0:1], is_train=False)
    assert cache.get(doc_key(docs[3])) is not None and cache.get(doc_key(docs[4])) is None


def test_max_size_zero_keeps_nothing(counted, nlp):
    _, counting, docs = counted
    model = CachedFrozenEncoder(counting.model, max_size=0)
    counting.seen.clear()
    model(docs[:2], is_train=True)
    model(docs[:2], is_train=True)
    assert len(model.attrs["cache"]) == 0 and len(counting.seen) == 4


def test_negative_max_size_is_refused():
    with pytest.raises(ValueError, match="max_size must be >= 0"):
        EncoderCache(-1)


def test_copies_and_pickles_start_empty(counted):
    model, _, docs = counted
    model(docs, is_train=False)
    assert len(copy.deepcopy(model.attrs["cache"])) == 0
    restored = pickle.loads(pickle.dumps(model.attrs["cache"]))
    assert (len(restored), restored.max_size) == (0, 100)


def _train(config, n_iter=15, seed=0):
    spacy.util.fix_random_seed(seed)
    nlp = spacy.blank("en")
    nlp.add_pipe("auc_ner", config=config)
    examples = make_examples(nlp)
    optimizer = nlp.initialize(lambda: examples)
    optimizer.learn_rate = 0.01
    losses = [nlp.update(examples[:3], sgd=optimizer, losses={})["auc_ner"] for _ in range(n_iter)]
    losses += [nlp.update(examples[2:], sgd=optimizer, losses={})["auc_ner"] for _ in range(n_iter)]
    return nlp, losses


def _encoder_params(nlp):
    encoder = nlp.get_pipe("auc_ner").model.get_ref("tok2vec").get_ref("encoder")
    return {(node.id, name): node.get_param(name).copy() for node in encoder.walk() for name in node.param_names if node.has_param(name)}


SCHEMES = [("ova", False), ("two_task", False), ("softmax", False), ("crf", False), ("crf", True), ("ova", True)]


@pytest.mark.parametrize("scheme,bilstm", SCHEMES)
def test_cached_trains_like_uncached_frozen_for_every_scheme(scheme, bilstm):
    """Same seed, same batches: the cached run and the recomputing run (max_size 0) see the
    same encoder outputs, so they train the head to the same weights and predict the same."""
    cached, cached_losses = _train({"scheme": scheme, "model": frozen_model(100, bilstm)})
    plain, plain_losses = _train({"scheme": scheme, "model": frozen_model(0, bilstm)})
    assert all(numpy.isfinite(cached_losses))
    numpy.testing.assert_allclose(cached_losses, plain_losses, rtol=1e-5, atol=1e-6)
    assert cached_losses[-1] < cached_losses[0]
    texts = [" ".join(w) for w, _ in TOY] + ["Anna lives in Paris"]
    a = list(cached.pipe(texts))
    b = list(plain.pipe(texts))
    assert [[(e.start, e.end, e.label_) for e in d.ents] for d in a] == [[(e.start, e.end, e.label_) for e in d.ents] for d in b]
    for x, y in zip(a, b):
        numpy.testing.assert_allclose(x.spans["auc_ner"].attrs["scores"], y.spans["auc_ner"].attrs["scores"], rtol=1e-5)
    # the 5 training docs (a space after every word) and the 6 tokenised texts
    assert len(cached.get_pipe("auc_ner").model.get_ref("tok2vec").attrs["cache"]) == 5 + len(texts)


def test_training_leaves_the_encoder_untouched():
    spacy.util.fix_random_seed(0)
    nlp = spacy.blank("en")
    nlp.add_pipe("auc_ner", config={"model": frozen_model()})
    examples = make_examples(nlp)
    optimizer = nlp.initialize(lambda: examples)
    before = _encoder_params(nlp)
    head_before = nlp.get_pipe("auc_ner").model.get_ref("output").get_param("W").copy()
    for _ in range(5):
        nlp.update(examples, sgd=optimizer, drop=0.1)
    after = _encoder_params(nlp)
    assert before.keys() == after.keys() and before
    for key in before:
        numpy.testing.assert_array_equal(before[key], after[key])
    assert not numpy.array_equal(head_before, nlp.get_pipe("auc_ner").model.get_ref("output").get_param("W"))


def test_saves_and_loads_without_its_cache(tmp_path):
    nlp, _ = _train({"scheme": "ova", "model": frozen_model(37)}, n_iter=5)
    texts = [" ".join(w) for w, _ in TOY]
    before = [d.spans["auc_ner"].attrs["scores"] for d in nlp.pipe(texts)]
    nlp.to_disk(tmp_path / "model")
    loaded = spacy.load(tmp_path / "model")
    cache = loaded.get_pipe("auc_ner").model.get_ref("tok2vec").attrs["cache"]
    assert (len(cache), cache.max_size) == (0, 37)
    after = [d.spans["auc_ner"].attrs["scores"] for d in loaded.pipe(texts)]
    for x, y in zip(before, after):
        numpy.testing.assert_allclose(x, y, rtol=1e-6)
    reloaded = spacy.blank("en").from_config(nlp.config)
    reloaded.from_bytes(nlp.to_bytes())
    assert len(reloaded.get_pipe("auc_ner").model.get_ref("tok2vec").attrs["cache"]) == 0


def test_cached_arrays_do_not_hold_their_batch(counted):
    model, _, docs = counted
    model(docs, is_train=False)
    cache = model.attrs["cache"]
    assert all(cache.get(doc_key(doc)).base is None for doc in docs)
