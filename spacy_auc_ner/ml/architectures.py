"""Registered architectures: an encoder and a linear head (a BiLSTM between them for
BiLSTM-CRF), and the BiLSTM alone as an encoder for any pipe. The head also creates the
learned parameters the loss declares (written into its ``loss_params`` by the component), so
the optimizer updates them and ``nlp.to_disk`` saves them with no special case.
"""
from typing import List, Optional

from spacy.tokens import Doc
from spacy.util import registry
from thinc.api import Maxout, Model, chain, glorot_uniform_init, with_array, with_padded
from thinc.types import Floats2d

from .lstm import lstm_layer

# attribute of the head: {parameter name: [shape, initial value]}, set by the component
LOSS_PARAMS_ATTR = "loss_params"


@registry.architectures("spacy_auc_ner.TokenScorer.v2")
def build_token_scorer(
    tok2vec: Model[List[Doc], List[Floats2d]],
    nO: Optional[int] = None,
    hidden_width: int = 0,
    maxout_pieces: int = 3,
) -> Model[List[Doc], List[Floats2d]]:
    """One raw score (logit) per token and output column; leave `nO` unset (the component sets
    it). `hidden_width` > 0 puts a normalised maxout layer (of `maxout_pieces` >= 1) before the
    head, the capacity spaCy's `ner` has above its tok2vec; 0 keeps the head linear; a negative
    one is refused."""
    head = build_classifier_head(nO)
    # written as a positive condition (NaN fails it); a negative width was a linear head, silently
    if not (hidden_width >= 0 and maxout_pieces >= 1):
        raise ValueError(f"[model] TokenScorer needs hidden_width >= 0 and maxout_pieces >= 1, not {hidden_width} and {maxout_pieces}")
    if hidden_width > 0:
        hidden = Maxout(nO=hidden_width, nP=maxout_pieces, normalize=True)
        model = chain(tok2vec, with_array(chain(hidden, head)))
    else:
        model = chain(tok2vec, with_array(head))
    model.set_ref("tok2vec", tok2vec)
    model.set_ref("output", head)
    return model


@registry.architectures("spacy_auc_ner.BiLSTMTokenScorer.v2")
def build_bilstm_token_scorer(
    tok2vec: Model[List[Doc], List[Floats2d]],
    hidden_width: int = 128,
    depth: int = 1,
    dropout: float = 0.0,
    nO: Optional[int] = None,
) -> Model[List[Doc], List[Floats2d]]:
    """The TokenScorer with a BiLSTM between encoder and head (BiLSTM-CRF): `depth` layers of
    `hidden_width` units per direction; it infers its input width, so it sits on any encoder.
    `dropout` holds until training sets the pipeline's dropout rate."""
    head = build_classifier_head(nO)
    lstm, layer = _bilstm("BiLSTMTokenScorer", hidden_width, depth, dropout)
    model = chain(tok2vec, layer, with_array(head))
    model.set_ref("tok2vec", tok2vec)
    model.set_ref("lstm", lstm)
    model.set_ref("output", head)
    return model


@registry.architectures("spacy_auc_ner.BiLSTMEncoder.v1")
def build_bilstm_encoder(
    tok2vec: Model[List[Doc], List[Floats2d]],
    hidden_width: int = 128,
    depth: int = 1,
    dropout: float = 0.0,
) -> Model[List[Doc], List[Floats2d]]:
    """`tok2vec` then a BiLSTM (`depth` layers of `hidden_width` per direction), so each token's
    vector (width 2 * hidden_width) sees the whole sentence where the window encoder sees four
    tokens each side; a tok2vec for any pipe, spaCy's `ner` and `spacy pretrain` included."""
    lstm, layer = _bilstm("BiLSTMEncoder", hidden_width, depth, dropout)
    model = chain(tok2vec, layer)
    model.set_ref("tok2vec", tok2vec)
    model.set_ref("lstm", lstm)
    return model


def _bilstm(name: str, hidden_width: int, depth: int, dropout: float):
    """An LSTM (both directions; thinc's LSTM.v1 with a correct gradient, see ml/lstm.py) over a
    list of token arrays: (the LSTM, the layer)."""
    if hidden_width < 1 or depth < 1:
        raise ValueError(f"[model] {name} needs hidden_width >= 1 and depth >= 1, not {hidden_width} and {depth}")
    lstm = lstm_layer(nO=2 * hidden_width, bi=True, depth=depth, dropout=dropout)
    return lstm, _skip_empty(with_padded(lstm), 2 * hidden_width)


def _skip_empty(layer: Model[List[Floats2d], List[Floats2d]], nO: int) -> Model[List[Floats2d], List[Floats2d]]:
    """Run `layer` on the non-empty docs only (an LSTM cannot pad a batch where an empty
    doc's array has another width, as transformers give); empty docs get (0, nO) outputs."""
    return Model("skip_empty", _skip_empty_forward, init=_skip_empty_init, layers=[layer], dims={"nO": nO})


def _skip_empty_init(model: Model, X: Optional[List[Floats2d]] = None, Y=None) -> None:
    kept = [x for x in X if x.shape[0]] if X is not None else []
    model.layers[0].initialize(X=kept or None)


def _skip_empty_forward(model: Model, Xs: List[Floats2d], is_train: bool):
    layer = model.layers[0]
    keep = [i for i, X in enumerate(Xs) if X.shape[0]]
    Ys = [model.ops.alloc2f(0, model.get_dim("nO")) for _ in Xs]
    backprop_kept = None
    if keep:
        kept, backprop_kept = layer([Xs[i] for i in keep], is_train)
        for i, Y in zip(keep, kept):
            Ys[i] = Y

    def backprop(dYs: List[Floats2d]) -> List[Floats2d]:
        dXs = [model.ops.xp.zeros_like(X) for X in Xs]
        if backprop_kept is not None:
            for i, dX in zip(keep, backprop_kept([dYs[i] for i in keep])):
                dXs[i] = dX
        return dXs

    return Ys, backprop


def build_classifier_head(nO: Optional[int] = None, nI: Optional[int] = None) -> Model[Floats2d, Floats2d]:
    """Linear scores Y = X W^T + b, plus the loss parameters of ``attrs["loss_params"]``
    (created at initialisation)."""
    return Model(
        "classifier_head",
        _head_forward,
        init=_head_init,
        dims={"nO": nO, "nI": nI},
        params={"W": None, "b": None},
        attrs={LOSS_PARAMS_ATTR: {}},
    )


def _head_forward(model: Model, X: Floats2d, is_train: bool):
    W = model.get_param("W")
    b = model.get_param("b")
    Y = model.ops.gemm(X, W, trans2=True)
    Y += b

    def backprop(dY: Floats2d) -> Floats2d:
        model.inc_grad("W", model.ops.gemm(dY, X, trans1=True))
        model.inc_grad("b", dY.sum(axis=0))
        return model.ops.gemm(dY, W)

    return Y, backprop


def _head_init(model: Model, X: Optional[Floats2d] = None, Y: Optional[Floats2d] = None) -> None:
    if X is not None and not model.has_dim("nI"):
        model.set_dim("nI", X.shape[1])
    if Y is not None and not model.has_dim("nO"):
        model.set_dim("nO", Y.shape[1])
    nO, nI = model.get_dim("nO"), model.get_dim("nI")
    model.set_param("W", glorot_uniform_init(model.ops, (nO, nI)))
    model.set_param("b", model.ops.alloc1f(nO))
    for name, (shape, init) in model.attrs[LOSS_PARAMS_ATTR].items():
        model.set_param(name, model.ops.alloc(tuple(shape), dtype="f") + init)
