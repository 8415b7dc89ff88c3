"""Word dropout at the encoder input (spacy_auc_ner.ml.word_dropout)."""
import numpy
import pytest
import spacy
from spacy.tokens import Doc
from spacy.util import registry
from thinc.api import fix_random_seed
from thinc.types import Ragged

from spacy_auc_ner.ml.word_dropout import UNK_KEY, word_dropout


def keys(n=2000, n_attrs=4):
    data = numpy.arange(n * n_attrs, dtype="uint64").reshape(n, n_attrs) + 1000
    return Ragged(data, numpy.asarray([n // 2, n - n // 2], dtype="i"))


def test_prediction_passes_the_keys_through_untouched():
    layer = word_dropout(column=0, rate=0.5)
    X = keys()
    Y, backprop = layer(X, is_train=False)
    assert Y is X
    assert backprop("grad") == "grad"


@pytest.mark.parametrize("unknown", ["random", "unk"])
def test_training_replaces_about_rate_of_the_column_and_nothing_else(unknown):
    fix_random_seed(0)
    X = keys()
    Y, _ = word_dropout(column=1, rate=0.3, unknown=unknown)(X, is_train=True)
    changed = Y.dataXd[:, 1] != X.dataXd[:, 1]
    assert 0.25 < changed.mean() < 0.35  # 2000 draws: sd of the share ~0.01
    numpy.testing.assert_array_equal(Y.dataXd[:, [0, 2, 3]], X.dataXd[:, [0, 2, 3]])
    numpy.testing.assert_array_equal(Y.lengths, X.lengths)
    assert Y.dataXd.dtype == X.dataXd.dtype
    if unknown == "unk":
        assert set(Y.dataXd[changed, 1].tolist()) == {UNK_KEY}
    else:  # fresh keys per token: (almost) all distinct
        assert len(set(Y.dataXd[changed, 1].tolist())) >= changed.sum() - 1
    assert (X.dataXd[:, 1] == numpy.arange(2000, dtype="uint64") * 4 + 1001).all()  # input not written


def test_rate_zero_changes_nothing_in_training():
    X = keys()
    Y, _ = word_dropout(column=0, rate=0.0)(X, is_train=True)
    assert Y is X


@pytest.mark.parametrize("kwargs, message", [({"rate": 1.0}, "word_dropout must be in [0, 1)"), ({"rate": -0.1}, "word_dropout must be in [0, 1)"), ({"rate": 0.1, "unknown": "zero"}, "word_dropout_unknown must be one of")])
def test_bad_settings_are_one_line_errors(kwargs, message):
    with pytest.raises(ValueError, match=message.replace("[", r"\[").replace(")", r"\)")):
        word_dropout(column=0, **kwargs)


def _embed(arch, **extra):
    fix_random_seed(0)
    cfg = {"@architectures": arch, "width": 8, "attrs": ["NORM", "PREFIX", "SUFFIX", "SHAPE"], "rows": [50, 20, 20, 20], "include_static_vectors": False, **extra}
    return registry.resolve({"m": cfg})["m"]


def test_multihashembed_v1_is_spacys_v2_at_prediction_and_with_rate_zero():
    nlp = spacy.blank("en")
    docs = [Doc(nlp.vocab, words="Aspirin treats breast cancer".split()), Doc(nlp.vocab, words="Colon cancer".split())]
    ours = _embed("spacy_auc_ner.MultiHashEmbed.v1", word_dropout_rate=0.5)
    spacys = _embed("spacy.MultiHashEmbed.v2")
    for m in (ours, spacys):
        fix_random_seed(0)
        m.initialize(X=docs)
    assert [n.name for n in ours.walk() if n.has_param("E")] == [n.name for n in spacys.walk() if n.has_param("E")]
    for a, b in zip([n for n in ours.walk() if n.has_param("E")], [n for n in spacys.walk() if n.has_param("E")]):
        numpy.testing.assert_array_equal(a.get_param("E"), b.get_param("E"))
        assert a.attrs["seed"] == b.attrs["seed"]
    for Y, Z in zip(ours.predict(docs), spacys.predict(docs)):
        numpy.testing.assert_allclose(Y, Z, rtol=1e-6)
    # in training, dropping NORM changes the vectors of some tokens, and the gradient still flows
    fix_random_seed(1)
    Ys, backprop = ours.begin_update(docs)
    backprop([numpy.ones_like(Y) for Y in Ys])
    assert any(float(abs(n.get_grad("E")).sum()) > 0 for n in ours.walk() if n.has_param("E"))


def test_word_dropout_attr_must_be_embedded():
    with pytest.raises(ValueError, match="word_dropout_attr 'LOWER' is not one of attrs"):
        _embed("spacy_auc_ner.MultiHashEmbed.v1", word_dropout_rate=0.1, word_dropout_attr="LOWER")
