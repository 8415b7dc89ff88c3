"""Per-step work a review found looping or rebuilt (each test failed on the code before its fix):
the LSTM's packing of padded sequences is one array operation whatever the number of steps, and
the CRF's BIO constraints, fixed by the pipe's labels, are built once, not at every step."""
import numpy
import pytest

import spacy_auc_ner.ml.crf as ml_crf
from _loss_checks import make_truth
from spacy_auc_ner.losses import CRFLoss
from spacy_auc_ner.ml.lstm import _pack, _unpack


class Counted(numpy.ndarray):
    """An array that counts the Python-level reads and writes of its items (a slice per step is
    a kernel launch per step on a GPU)."""

    reads = 0
    writes = 0

    def __getitem__(self, key):
        Counted.reads += 1
        return numpy.asarray(super().__getitem__(key))

    def __setitem__(self, key, value):
        Counted.writes += 1
        super().__setitem__(key, value)


class CountingXp:
    """numpy, whose zeros are Counted (what `_unpack` writes into)."""

    def __getattr__(self, name):
        return getattr(numpy, name)

    @staticmethod
    def zeros(*args, **kwargs):
        return numpy.zeros(*args, **kwargs).view(Counted)


@pytest.mark.parametrize("steps", [3, 40])
def test_packing_and_unpacking_take_one_array_operation_whatever_the_steps(steps):
    batch, width = 4, 3
    sizes = numpy.sort(numpy.random.default_rng(steps).integers(1, batch + 1, size=steps))[::-1].copy()
    sizes[0] = batch
    data = numpy.random.default_rng(0).normal(size=(steps, batch, width)).astype("f")
    expected = numpy.concatenate([data[t, :n] for t, n in enumerate(sizes)])
    Counted.reads = Counted.writes = 0
    packed = _pack(numpy, data.view(Counted), sizes)
    assert Counted.reads == 1
    numpy.testing.assert_array_equal(packed, expected)
    Counted.reads = Counted.writes = 0
    unpacked = _unpack(CountingXp(), numpy.asarray(packed), sizes, batch)
    assert Counted.writes == 1
    live = numpy.arange(batch)[None, :] < sizes[:, None]
    numpy.testing.assert_array_equal(numpy.asarray(unpacked)[live], expected)
    assert (numpy.asarray(unpacked)[~live] == 0).all()


def test_the_crf_loss_builds_its_bio_constraints_once(monkeypatch):
    built = []
    original = ml_crf.bio_constraints

    def counting(*args):
        built.append(len(args[0]))
        return original(*args)

    monkeypatch.setattr(ml_crf, "bio_constraints", counting)
    ml_crf.bio_constraints_of.cache_clear()
    K = 7
    loss = CRFLoss()
    params = {p.name: numpy.zeros(p.shape(K), dtype="f8") for p in loss.params}
    gold = [0, 1, 2, 0, 3, 4, 5, 6, 0]
    for step in range(3):
        scores = numpy.random.default_rng(step).normal(size=(len(gold), K))
        loss(scores, make_truth(gold, K, lengths=[4, 5], multilabel=False, params=params, step=step))
    assert built == [K]
    constraints = ml_crf.bio_constraints_of(K)
    assert not any(a.flags.writeable for a in constraints)  # shared by every step: read-only


def test_the_weighted_sampling_distribution_stays_on_the_device(monkeypatch):
    from dataclasses import replace

    from emulated_device import DeviceArray, emulate_device
    from spacy_auc_ner.losses import NegativeSampling, SoftmaxCE

    K, gold = 5, [0, 1, 0, 0, 2, 0, 0, -1]
    scores = numpy.random.default_rng(3).normal(size=(len(gold), K))
    truth = make_truth(gold, K, lengths=[3, 0, 5], multilabel=False)
    loss = NegativeSampling(SoftmaxCE(), distribution="weighted", temperature=1e-3)
    host = loss.sampling_distribution(scores, truth)
    with emulate_device(monkeypatch) as ops:
        on_device = replace(truth, **{f: ops.xp.asarray(getattr(truth, f)) for f in ("targets", "mask", "columns", "lengths")})
        q = loss.sampling_distribution(ops.xp.asarray(scores), on_device)
    assert isinstance(q, DeviceArray)
    numpy.testing.assert_allclose(q.get(), host)
