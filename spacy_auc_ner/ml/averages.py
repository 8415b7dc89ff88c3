"""The optimizer's weight averages for the torch weights of a model (a fine-tuned transformer).

With ``[training.optimizer] use_averages = true`` thinc keeps a moving average of every weight
and spaCy evaluates and saves the model inside ``nlp.use_params(optimizer.averages)``. thinc
8.3's ``PyTorchShim`` files its weights' averages under the key ``(shim.id, name)`` (its
``finish_update`` calls ``optimizer((self.id, name), ...)``) but its ``use_params`` looks them up
under ``"pytorch_<id>_<name>"``, so a transformer's weights keep their last values: averaging
silently leaves a fine-tuned encoder as it is (tests/test_averages.py shows it on thinc's own
layer). `torch_averages` swaps the averages in under the keys ``finish_update`` used, for every
PyTorch shim of a model, and restores the weights afterwards; the component's ``use_params``
applies it beside thinc's (which swaps the thinc-native weights, the head's).
"""
from contextlib import contextmanager
from typing import Any, Dict, Iterator, Mapping

from thinc.api import Model
from thinc.shims import PyTorchShim


def torch_shims(model: Model) -> Dict[int, PyTorchShim]:
    """The PyTorch shims of `model`'s nodes, by id (a shim shared by two nodes once)."""
    return {shim.id: shim for node in model.walk() for shim in node.shims if isinstance(shim, PyTorchShim)}


@contextmanager
def torch_averages(model: Model, params: Mapping[Any, Any]) -> Iterator[None]:
    """Within the block, every torch weight of `model` that has an average in `params` (an
    optimizer's ``averages``: ``(shim id, parameter name) -> array``) holds that average; the
    weights are restored when the block ends, however it ends. Without averages for a shim (an
    optimizer without ``use_averages``, a frozen encoder) nothing changes."""
    import torch
    from thinc.api import xp2torch

    kept = []
    try:
        with torch.no_grad():
            for shim in torch_shims(model).values():
                for name, weight in shim._model.named_parameters():
                    average = params.get((shim.id, name))
                    if average is not None:
                        kept.append((weight, weight.detach().clone()))
                        weight.copy_(xp2torch(average, device=weight.device).to(weight.dtype))
        yield
    finally:
        with torch.no_grad():
            for weight, value in kept:
                weight.copy_(value)
