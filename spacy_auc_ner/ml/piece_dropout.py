"""Word-piece dropout for a fine-tuned transformer (``piece_dropout = rate``), the transformer's
counterpart of :mod:`spacy_auc_ner.ml.word_dropout`: in training only, each word piece of the
input becomes the tokenizer's mask token (its unknown token when it has no mask) with
probability ``rate``; the special pieces ([CLS], [SEP], padding) never do. With 20 sentences a
fine-tuned encoder can fit every training mention by its own pieces; hidden pieces make it
read the context too, as masked-language-model pretraining made it do.

It is a forward pre-hook on the Hugging Face model *instance*, registered before each call (as
partial fine-tuning's patch: loading a pipeline replaces the instance), so spacy-transformers'
tokenisation, alignment and serialisation are untouched and it composes with
``trainable_layers``. It acts only while the model is in training mode, which thinc's
``PyTorchShim`` sets for ``begin_update`` and unsets for ``predict``. The draws come from
torch's generator on the model's device (seeded by spaCy's ``fix_random_seed``).
"""
from dataclasses import dataclass
from typing import Any, Optional, Tuple

CONFIG_KEY = "piece_dropout (components.<component>.model.tok2vec.piece_dropout)"


def check_rate(rate: float) -> float:
    """`rate` as a float in [0, 1), or a one-line error naming the config key."""
    if isinstance(rate, bool) or not isinstance(rate, (int, float)) or not 0.0 <= rate < 1.0:
        raise ValueError(f"{CONFIG_KEY} must be a number in [0, 1), not {rate!r}")
    return float(rate)


def mask_pieces(input_ids, draws, rate: float, mask_id: int, special_ids):
    """`input_ids` with each piece whose uniform draw (`draws`, same shape) is below `rate`
    replaced by `mask_id`, except the pieces whose id is in `special_ids` (a 1-d tensor)."""
    import torch

    hidden = (draws < rate) & ~torch.isin(input_ids, special_ids)
    return torch.where(hidden, torch.full_like(input_ids, mask_id), input_ids)


@dataclass
class PieceDropoutState:
    """What the hook of one model instance needs, and the handle that removes it."""

    rate: float
    mask_id: int
    special_ids: Tuple[int, ...]
    handle: Any = None


def mask_token_id(tokenizer) -> int:
    """The id hidden pieces become: the tokenizer's mask token, else its unknown token."""
    for name in ("mask_token_id", "unk_token_id"):
        value: Optional[int] = getattr(tokenizer, name, None)
        if value is not None:
            return int(value)
    raise ValueError(
        f"{CONFIG_KEY}: the encoder's tokenizer ({type(tokenizer).__name__}) has neither a mask nor "
        "an unknown token to hide pieces with: set piece_dropout = 0"
    )


def apply_piece_dropout(hf_model, tokenizer, rate: float) -> None:
    """Register the masking hook on `hf_model` (nothing to do when it has it at this rate)."""
    state: Optional[PieceDropoutState] = getattr(hf_model, "_spacy_auc_ner_piece_dropout", None)
    if state is not None and state.rate == rate:
        return
    if state is not None:
        state.handle.remove()
    mask_id = mask_token_id(tokenizer)
    special = tuple(sorted(set(int(i) for i in tokenizer.all_special_ids) - {mask_id}))
    state = PieceDropoutState(rate, mask_id, special)
    state.handle = hf_model.register_forward_pre_hook(_hook, with_kwargs=True)
    hf_model._spacy_auc_ner_piece_dropout = state


def _hook(module: Any, args: tuple, kwargs: dict) -> Optional[tuple]:
    """The pre-hook: in training mode, the call's input_ids (keyword, or first positional)
    with pieces hidden; otherwise the call unchanged."""
    import torch

    state: PieceDropoutState = module._spacy_auc_ner_piece_dropout
    if not module.training or state.rate == 0.0:
        return None
    positional = kwargs.get("input_ids") is None
    ids = args[0] if positional and args else kwargs.get("input_ids")
    if ids is None:
        return None
    special = torch.as_tensor(state.special_ids, dtype=ids.dtype, device=ids.device)
    draws = torch.rand(ids.shape, device=ids.device)
    masked = mask_pieces(ids, draws, state.rate, state.mask_id, special)
    if positional:
        return (masked, *args[1:]), kwargs
    return args, {**kwargs, "input_ids": masked}
