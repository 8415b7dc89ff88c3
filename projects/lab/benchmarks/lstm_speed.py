"""Speed of the BiLSTM's LSTM: this package's (spacy_auc_ner.ml.lstm, a correct gradient), as a
config builds it, the registered ``spacy_auc_ner.BiLSTMEncoder.v1`` over inputs given as they are
(a no-op tok2vec), against thinc's LSTM.v1 (NumpyOps' compiled kernels on the CPU), forward and
backward over a batch of 64 sentences of 5-44 tokens (96 inputs, 128 units per direction, both
directions), as in the BiLSTM-CRF. thinc's LSTM is timed on the CPU only: on a GPU it computes only the
first sentence of each batch (see spacy_auc_ner/ml/lstm.py).

    OMP_NUM_THREADS=1 python benchmarks/lstm_speed.py [--gpu]
"""
import sys
import time

import numpy
from spacy.util import registry
from thinc.api import LSTM, CupyOps, NumpyOps, noop, set_current_ops, with_padded

from speed import synchronize  # benchmarks/speed.py: waits for the GPU before a clock is read

REPEATS, ROUNDS = 5, 3


def main(gpu: bool = False) -> None:
    ops = CupyOps() if gpu else NumpyOps()
    set_current_ops(ops)
    rng = numpy.random.default_rng(0)
    Xs = [ops.asarray2f(rng.normal(size=(int(n), 96)).astype("f")) for n in rng.integers(5, 45, size=64)]
    tokens = sum(len(x) for x in Xs)
    encoder = registry.architectures.get("spacy_auc_ner.BiLSTMEncoder.v1")
    ours = {"spacy_auc_ner.BiLSTMEncoder.v1": lambda: encoder(noop(), hidden_width=128, depth=1)}
    theirs = {"thinc LSTM.v1 (compiled)": lambda: with_padded(LSTM(nO=256, bi=True, depth=1))}
    layers = ours if gpu else {**theirs, **ours}
    best = {}
    for _ in range(ROUNDS):  # interleaved rounds, the best of each kept
        for name, make in layers.items():
            model = make()
            model.initialize(X=Xs)
            Y, backprop = model(Xs, is_train=True)
            backprop(Y)  # warm-up
            synchronize()
            start = time.perf_counter()
            for _ in range(REPEATS):
                Y, backprop = model(Xs, is_train=True)
                backprop(Y)
            synchronize()
            ms = (time.perf_counter() - start) / REPEATS * 1000
            best[name] = min(ms, best.get(name, ms))
    print(f"{'GPU' if gpu else 'CPU'}: 64 sentences, {tokens} tokens, forward + backward")
    for name, ms in best.items():
        print(f"{name:32s} {ms:8.1f} ms/batch  {tokens / ms * 1000:10.0f} tokens/s")


if __name__ == "__main__":
    main("--gpu" in sys.argv)
