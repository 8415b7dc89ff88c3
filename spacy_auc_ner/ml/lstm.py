"""thinc's LSTM layer (LSTM.v1) with a correct gradient, on the CPU and on a GPU.

thinc 8.3's compiled CPU backward is not the gradient of its forward (``tests/test_lstm.py``
checks against finite differences), and its generic array version (CupyOps) computes only
the first sequence of each batch. :func:`lstm_layer` is a drop-in for ``thinc.api.LSTM`` (same
node, parameter layout and forward, so saved pipelines load) with :func:`lstm_backward`.
Per layer and direction, gates in thinc's order (f, i, o, c)::

    A_t = x_t Wx^T + bx + h_{t-1} Wh^T + bh
    f, i, o = sigmoid(A_t[f]), sigmoid(A_t[i]), sigmoid(A_t[o]);  g = tanh(A_t[c])
    c_t = f * c_{t-1} + i * g;   h_t = o * tanh(c_t)

from the initial state ``HC0`` (zeros, untrained). Sequences are time-major, longest first
(thinc's Padded order): the sequences alive at step t are the first ``size_at_t[t]`` rows.
"""
from functools import partial
from typing import List, Optional, Tuple

import numpy
from thinc.api import Model, glorot_uniform_init, zero_init
from thinc.layers import lstm as thinc_lstm
from thinc.types import Floats1d, Floats2d, Padded

GATES = 4  # f, i, o, c


def lstm_layer(nO: Optional[int] = None, *, bi: bool = False, depth: int = 1, dropout: float = 0.0) -> Model[Padded, Padded]:
    """``thinc.api.LSTM(nO, bi=bi, depth=depth, dropout=dropout)``, correct on every ops."""
    if depth < 1:
        raise ValueError(f"an LSTM needs depth >= 1, not {depth}")
    return Model(
        "lstm",
        _forward,
        dims={"nO": nO, "nI": None, "depth": depth, "dirs": 1 + int(bi)},
        attrs={"registry_name": "LSTM.v1", "dropout_rate": dropout},
        params={"LSTM": None, "HC0": None},
        init=partial(thinc_lstm.init, glorot_uniform_init, zero_init),
    )


def _forward(model: Model, Xp: Padded, is_train: bool):
    xp = model.ops.xp
    sizes = model.ops.to_numpy(Xp.size_at_t)  # Python sizes and slice bounds: on the host
    depth, dirs = model.get_dim("depth"), model.get_dim("dirs")
    nH = model.get_dim("nO") // dirs
    params = model.get_param("LSTM")
    HC0 = model.get_param("HC0")
    mask = None
    if is_train:  # dropout over the weights, as thinc's layer does (Gal's variational RNN)
        mask = model.ops.get_dropout_mask(params.shape, model.attrs["dropout_rate"])
        params = params * mask
    X = _pack(xp, Xp.data, sizes)
    Y, state = lstm_forward(xp, params, HC0[1], HC0[0], X, sizes, depth, dirs, nH)
    Yp = Padded(_unpack(xp, Y, sizes, Xp.data.shape[1]), Xp.size_at_t, Xp.lengths, Xp.indices)

    def backprop(dYp: Padded) -> Padded:
        dX, d_params = lstm_backward(xp, _pack(xp, dYp.data, sizes), params, state, depth, dirs, nH)
        if mask is not None:
            d_params *= mask
        model.inc_grad("LSTM", d_params)
        return Padded(_unpack(xp, dX, sizes, Xp.data.shape[1]), dYp.size_at_t, dYp.lengths, dYp.indices)

    return Yp, backprop


def _live(xp, sizes: numpy.ndarray, batch: int):
    """(T, batch) True on the rows alive at each step (the first sizes[t]), on the device."""
    return xp.asarray(numpy.arange(batch)[None, :] < numpy.asarray(sizes)[:, None])


def _pack(xp, data, sizes: numpy.ndarray):
    """Padded (T, B, width) to packed (sum of sizes, width): step t's live rows, in turn."""
    return data[_live(xp, sizes, data.shape[1])]  # one gather (row-major: step by step), not one slice per step


def _unpack(xp, packed, sizes: numpy.ndarray, batch: int):
    out = xp.zeros((len(sizes), batch, packed.shape[1]), dtype=packed.dtype)
    out[_live(xp, sizes, batch)] = packed
    return out


def _starts(sizes: numpy.ndarray) -> List[int]:
    return [0] + numpy.cumsum(sizes)[:-1].tolist()


def _weights(params, offset: int, nH: int, nI: int):
    """One layer-direction's (Wx, bx, Wh, bh) from the flat parameters (thinc's layout:
    Wx (4nH, nI), bx (4nH), Wh (4nH, nH), bh (4nH), gate blocks f, i, o, c) and the next offset."""
    shapes = [(GATES * nH, nI), (GATES * nH,), (GATES * nH, nH), (GATES * nH,)]
    parts = []
    for shape in shapes:
        size = int(numpy.prod(shape))
        parts.append(params[offset : offset + size].reshape(shape))
        offset += size
    return parts, offset


def _fit(xp, rows, n: int, fill):
    """The first n rows of `rows`, or `rows` followed by copies of `fill` up to n rows."""
    if rows.shape[0] >= n:
        return rows[:n]
    return xp.concatenate([rows, xp.broadcast_to(fill, (n - rows.shape[0], fill.shape[-1]))], axis=0)


def _sigmoid(xp, x):
    return 1.0 / (1.0 + xp.exp(-x))


def lstm_forward(xp, params, H0, C0, X, sizes: numpy.ndarray, depth: int, dirs: int, nH: int) -> Tuple[Floats2d, tuple]:
    """Outputs (rows of X, dirs * nH: the directions side by side) of a `depth`-layer LSTM over
    packed sequences X (sizes: live rows per step, host ints); H0 and C0 (depth, dirs, nH) are
    the initial hidden and cell states. The second value is what :func:`lstm_backward` needs."""
    starts = _starts(sizes)
    steps = list(zip(starts, (int(n) for n in sizes)))
    offset, layers = 0, []
    for i in range(depth):
        outputs = []
        for d in range(dirs):
            first = offset  # where this layer-direction's weights start
            (Wx, bx, Wh, bh), offset = _weights(params, offset, nH, X.shape[1])
            A_x = X @ Wx.T + (bx + bh)
            gates = xp.zeros_like(A_x)
            cells, h_prev_all, c_prev_all = (xp.zeros((X.shape[0], nH), dtype=X.dtype) for _ in range(3))
            hidden = xp.zeros((X.shape[0], nH), dtype=X.dtype)
            h = c = xp.zeros((0, nH), dtype=X.dtype)
            for start, n in steps if d == 0 else reversed(steps):
                h_prev, c_prev = _fit(xp, h, n, H0[i, d]), _fit(xp, c, n, C0[i, d])
                A = A_x[start : start + n] + h_prev @ Wh.T
                f, ig, o = (_sigmoid(xp, A[:, k * nH : (k + 1) * nH]) for k in range(3))
                g = xp.tanh(A[:, 3 * nH :])
                c = f * c_prev + ig * g
                h = o * xp.tanh(c)
                rows = slice(start, start + n)
                gates[rows] = xp.concatenate([f, ig, o, g], axis=1)
                cells[rows], hidden[rows], h_prev_all[rows], c_prev_all[rows] = c, h, h_prev, c_prev
            outputs.append(hidden)
            layers.append((first, X, gates, cells, h_prev_all, c_prev_all))
        X = xp.concatenate(outputs, axis=1) if dirs == 2 else outputs[0]
    return X, (layers, steps)


def lstm_backward(xp, dY, params, state, depth: int, dirs: int, nH: int) -> Tuple[Floats2d, Floats1d]:
    """Gradients of the inputs and of the flat parameters (thinc's layout) from the gradient
    of :func:`lstm_forward`'s outputs. The initial state gets none (thinc does not train it)."""
    layers, steps = state
    d_params = xp.zeros_like(params)
    dH = dY
    for i in reversed(range(depth)):
        dX = None
        for d in range(dirs):
            offset, X, gates, cells, h_prev_all, c_prev_all = layers[i * dirs + d]
            (Wx, _, Wh, _), _ = _weights(params, offset, nH, X.shape[1])
            dh_out = dH[:, d * nH : (d + 1) * nH]
            dA = xp.zeros_like(gates)
            dh_next = dc_next = xp.zeros((0, nH), dtype=dY.dtype)
            zero = xp.zeros((nH,), dtype=dY.dtype)
            for start, n in reversed(steps) if d == 0 else steps:
                rows = slice(start, start + n)
                f, ig, o, g = (gates[rows, k * nH : (k + 1) * nH] for k in range(GATES))
                tanh_c = xp.tanh(cells[rows])
                dh = dh_out[rows] + _fit(xp, dh_next, n, zero)
                dc = _fit(xp, dc_next, n, zero) + dh * o * (1.0 - tanh_c**2)
                dA_t = xp.concatenate(
                    [dc * c_prev_all[rows] * f * (1.0 - f), dc * g * ig * (1.0 - ig), dh * tanh_c * o * (1.0 - o), dc * ig * (1.0 - g**2)],
                    axis=1,
                )
                dA[rows] = dA_t
                dh_next, dc_next = dA_t @ Wh, dc * f
            d_bias = dA.sum(axis=0)  # bx and bh enter A alike
            grads = [dA.T @ X, d_bias, dA.T @ h_prev_all, d_bias]
            for grad in grads:
                d_params[offset : offset + grad.size] = grad.ravel()
                offset += grad.size
            dX_d = dA @ Wx
            dX = dX_d if dX is None else dX + dX_d
        dH = dX
    return dH, d_params
