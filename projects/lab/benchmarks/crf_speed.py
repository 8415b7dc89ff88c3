"""Speed sanity check of the CRF maths: NLL with gradients, posteriors and Viterbi on a
batch of 64 sentences x 40 tokens x 9 BIO labels (4 types).

    OMP_NUM_THREADS=1 python benchmarks/crf_speed.py [--gpu]
"""
import sys
import time

import numpy

from spacy_auc_ner.api import bio_constraints, bio_layout, constrain, crf_nll, pad, posteriors, viterbi

B, T, K, REPEATS = 64, 40, 9, 20


def main(gpu: bool = False) -> None:
    xp = numpy
    if gpu:
        import cupy as xp  # noqa: F811
    rng = numpy.random.default_rng(0)
    lengths = numpy.full(B, T, dtype="i")
    flat = xp.asarray(rng.normal(size=(B * T, K)).astype("f"))
    c = bio_constraints(*bio_layout(K))
    params = [xp.asarray(rng.normal(size=s).astype("f")) for s in ((K, K), (K,), (K,))]
    trans, start, end = constrain(*params, c)
    gold = xp.asarray(rng.integers(0, K, size=(B, T)).astype("i"))
    E, mask = pad(flat, lengths)
    sync = (lambda: xp.cuda.Stream.null.synchronize()) if gpu else (lambda: None)
    for name, fn in (
        ("crf_nll (forward-backward x2 + grads)", lambda: crf_nll(E, mask, gold, trans, start, end)),
        ("posteriors", lambda: posteriors(flat, lengths, *params, c)),
        ("viterbi", lambda: viterbi(E, mask, trans, start, end)),
    ):
        fn()
        sync()
        t0 = time.perf_counter()
        for _ in range(REPEATS):
            fn()
        sync()
        ms = (time.perf_counter() - t0) / REPEATS * 1000
        print(f"{name:40s} {ms:7.2f} ms/batch  {B * T / ms * 1000:10.0f} tokens/s")


if __name__ == "__main__":
    main("--gpu" in sys.argv)
