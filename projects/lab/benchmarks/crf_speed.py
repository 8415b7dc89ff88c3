"""Speed sanity check of the CRF, reached as a config reaches it, through spaCy's registry: the
loss ``spacy_auc_ner.CRFLoss.v1`` (NLL and its gradients: forward-backward twice) and the scheme
``spacy_auc_ner.CRF.v1`` (marginals; Viterbi decoding into spans), on a batch of 64 sentences x
40 tokens x 9 BIO labels (4 types).

    OMP_NUM_THREADS=1 python benchmarks/crf_speed.py [--gpu]

(Before 2026-11-27 it timed the array functions themselves, with plain Viterbi where the
scheme's decoding also computes the marginals and the spans; docs/gpu.md's CRF numbers are
from then.)
"""
import sys
import time
from types import SimpleNamespace

import numpy
from spacy.util import registry

from spacy_auc_ner.api import bio_layout

B, T, K, REPEATS = 64, 40, 9, 20


def main(gpu: bool = False) -> None:
    xp = numpy
    if gpu:
        import cupy as xp  # noqa: F811
    rng = numpy.random.default_rng(0)
    lengths = numpy.full(B, T, dtype="i")
    flat = xp.asarray(rng.normal(size=(B * T, K)).astype("f"))
    loss = registry.losses.get("spacy_auc_ner.CRFLoss.v1")()
    scheme = registry.misc.get("spacy_auc_ner.CRF.v1")()
    # the loss's learned transitions, start and end scores, by the names the pipe's head keeps them under
    params = {p.name: xp.asarray(rng.normal(size=p.shape(K)).astype("f")) for p in loss.params}
    # what the loss and the scheme read of a pipe's gold (Truth) and of its label set (LabelSet)
    gold = rng.integers(0, K, size=B * T)
    truth = SimpleNamespace(targets=xp.asarray(numpy.eye(K, dtype="f")[gold]), mask=xp.ones(B * T, dtype="f"), lengths=lengths, params=params)
    bio_type, bio_begin = bio_layout(K)
    labels = SimpleNamespace(bio_type=bio_type, bio_begin=bio_begin)
    sync = (lambda: xp.cuda.Stream.null.synchronize()) if gpu else (lambda: None)
    for name, fn in (
        ("CRFLoss.v1 (NLL + grads)", lambda: loss(flat, truth)),
        ("CRF.v1 label_distribution (marginals)", lambda: scheme.label_distribution(flat, lengths, labels, params)),
        ("CRF.v1 decode_spans (viterbi)", lambda: scheme.decode_spans(flat, lengths, labels, "viterbi", params)),
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
