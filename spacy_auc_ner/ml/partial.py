"""Partial fine-tuning of a BERT-type encoder (``trainable_layers = k``): the embeddings and the
lower L - k layers are frozen and their output for a wordpiece row is computed once, in
inference mode, and cached (``cache_size`` rows, least recently used first out). It replaces
``forward`` on the Hugging Face model *instance* (re-applied before each call), so
spacy-transformers' tokenisation, alignment and serialisation are untouched. A row's key is
its wordpiece and token type ids; weights loaded into the same instance behind its back
(``load_state_dict``) would leave the cache stale.
"""
from dataclasses import dataclass
from types import MethodType
from typing import Optional

import numpy

from .cached import EncoderCache

CONFIG_KEY = "trainable_layers (components.<component>.model.tok2vec.trainable_layers)"


@dataclass
class PartialState:
    """What a patched model needs: how many top layers train, and the cache of lower outputs."""

    trainable_layers: int
    cache: EncoderCache
    lower_rows_computed: int = 0


def n_layers(hf_model) -> int:
    """The number of transformer layers of a BERT-type model, or a one-line error."""
    encoder = getattr(hf_model, "encoder", None)
    if not (
        hasattr(hf_model, "embeddings")
        and encoder is not None
        and hasattr(encoder, "layer")
        and hasattr(hf_model, "get_extended_attention_mask")
    ):
        raise ValueError(
            f"{CONFIG_KEY} needs a BERT-type model (.embeddings, .encoder.layer); "
            f"{type(hf_model).__name__} has not that layout: remove trainable_layers or use a BERT-type encoder"
        )
    return len(encoder.layer)


def apply_partial(hf_model, trainable_layers: int, cache: EncoderCache) -> None:
    """Freeze `hf_model`'s embeddings and lower layers and route its forward through the cache
    (nothing to do when it already is, with this cache)."""
    state = getattr(hf_model, "_spacy_auc_ner_partial", None)
    if state is not None and state.cache is cache:
        return
    total = n_layers(hf_model)
    if not 1 <= trainable_layers <= total:
        raise ValueError(
            f"{CONFIG_KEY} = {trainable_layers}, but the encoder has {total} layers: "
            f"use 1 to {total} (0 means frozen = true; null trains every layer)"
        )
    cache.clear()  # a new model instance: other weights, perhaps
    lower = [hf_model.embeddings, *hf_model.encoder.layer[: total - trainable_layers]]
    for module in lower:
        for param in module.parameters():
            param.requires_grad_(False)
            param.grad = None
    # instance attributes: the class, other instances and the state_dict are untouched
    hf_model._spacy_auc_ner_partial = PartialState(trainable_layers, cache)
    hf_model.forward = MethodType(partial_forward, hf_model)


def partial_forward(
    self,
    input_ids=None,
    attention_mask=None,
    token_type_ids=None,
    return_dict: Optional[bool] = None,
    **unsupported,
):
    """The model's output for right-padded rows of wordpieces: the lower layers' outputs
    from the cache (computed without gradient for the rows it lacks), the top layers with
    gradient. The same as the unpatched forward at every non-padded position."""
    import torch
    from transformers.modeling_outputs import BaseModelOutputWithPooling

    state: PartialState = self._spacy_auc_ner_partial
    asked = sorted(name for name, value in unsupported.items() if value not in (None, False))
    if input_ids is None or asked:
        raise ValueError(
            f"{CONFIG_KEY}: the partial forward takes input_ids, attention_mask and token_type_ids "
            f"only (got {asked or 'no input_ids'}); remove trainable_layers for this use"
        )
    if attention_mask is None:
        attention_mask = torch.ones_like(input_ids)
    if token_type_ids is None:
        token_type_ids = torch.zeros_like(input_ids)
    mask = attention_mask.detach().cpu().numpy()
    lengths = mask.sum(axis=1).astype(numpy.int64)
    if not (mask == (numpy.arange(mask.shape[1])[None, :] < lengths[:, None])).all():
        raise ValueError(f"{CONFIG_KEY}: the wordpiece rows must be right-padded (mask 1...1 0...0)")
    ids = input_ids.detach().cpu().numpy()
    types = token_type_ids.detach().cpu().numpy()
    keys = [ids[i, :n].tobytes() + b"|" + types[i, :n].tobytes() for i, n in enumerate(lengths)]

    found, todo = state.cache.lookup(keys)  # todo: one row per distinct key to compute now
    if todo:
        for key, value in zip((keys[i] for i in todo), _lower_outputs(self, state, input_ids, attention_mask, token_type_ids, todo, lengths)):
            found[key] = value
            state.cache.put(key, value)
        state.lower_rows_computed += len(todo)

    rows = [found[key] for key in keys]
    hidden = torch.nn.utils.rnn.pad_sequence(rows, batch_first=True)
    if hidden.shape[1] < input_ids.shape[1]:
        hidden = torch.nn.functional.pad(hidden, (0, 0, 0, input_ids.shape[1] - hidden.shape[1]))
    extended = self.get_extended_attention_mask(attention_mask, input_ids.shape)
    total = len(self.encoder.layer)
    for layer in self.encoder.layer[total - state.trainable_layers :]:
        hidden = layer(hidden, extended)[0]
    pooled = self.pooler(hidden) if getattr(self, "pooler", None) is not None else None
    if return_dict is False:
        return (hidden, pooled)
    return BaseModelOutputWithPooling(last_hidden_state=hidden, pooler_output=pooled)


def _lower_outputs(model, state: PartialState, input_ids, attention_mask, token_type_ids, todo, lengths):
    """The embeddings + lower layers' outputs of the rows `todo`, in inference mode, each cut
    to its length and detached (on the model's device, like the inputs)."""
    import torch

    width = int(max(lengths[i] for i in todo))
    index = torch.as_tensor(todo, device=input_ids.device)
    ids, mask, types = (t.index_select(0, index)[:, :width] for t in (input_ids, attention_mask, token_type_ids))
    total = len(model.encoder.layer)
    lower = [model.embeddings, *model.encoder.layer[: total - state.trainable_layers]]
    was_training = [module.training for module in lower]
    try:
        for module in lower:
            module.eval()
        with torch.no_grad():
            hidden = model.embeddings(input_ids=ids, token_type_ids=types)
            extended = model.get_extended_attention_mask(mask, ids.shape)
            for layer in lower[1:]:
                hidden = layer(hidden, extended)[0]
    finally:
        for module, training in zip(lower, was_training):
            module.train(training)
    # own storage per row: a view would keep the whole batch alive in the cache
    return [hidden[j, : int(lengths[i])].clone() for j, i in enumerate(todo)]
