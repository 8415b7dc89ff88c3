"""Shared helpers for the loss tests: tiny float64 truths, central finite differences, and which
schemes a loss trains (the component's check of its needs against the schemes' capabilities)."""
import numpy

from spacy_auc_ner.losses import Truth
from spacy_auc_ner.pipeline.settings import check_trains
from spacy_auc_ner.schemes import NAMED_SCHEMES, make_scheme


def schemes_of(loss) -> set:
    """The named schemes (ova, two_task, softmax, crf) whose columns `loss` can train."""
    return {name for name in NAMED_SCHEMES if loss.trains(make_scheme(name).capabilities)}


def check_scheme(loss, scheme: str, key: str = "loss") -> None:
    """The component's check of `loss` (at `key`) against the named scheme (at [scheme])."""
    check_trains(make_scheme(scheme), loss, key, "scheme")


def make_truth(gold, K, *, mask=None, columns=None, lengths=None, multilabel=True, params=None, step=0, seed=0):
    """Truth from gold class indices (one-hot targets, column 0 is O); gold -1 = no gold."""
    gold = numpy.asarray(gold, dtype="i")
    targets = (gold[:, None] == numpy.arange(K)[None, :]).astype("f8")
    mask = (gold >= 0).astype("f8") if mask is None else numpy.asarray(mask, dtype="f8")
    columns = numpy.ones(K, dtype="f8") if columns is None else numpy.asarray(columns, dtype="f8")
    lengths = numpy.asarray([len(gold)] if lengths is None else lengths, dtype="i")
    return Truth(targets, mask, columns, lengths, multilabel, params, 0, step, seed)


def numeric_grad(f, x, eps=1e-6):
    """Central finite differences of the scalar f at the float64 array x."""
    x = numpy.array(x, dtype="f8")
    grad = numpy.zeros_like(x)
    for idx in numpy.ndindex(*x.shape):
        old = x[idx]
        x[idx] = old + eps
        up = f(x.copy())
        x[idx] = old - eps
        down = f(x.copy())
        x[idx] = old
        grad[idx] = (up - down) / (2 * eps)
    return grad


def check_score_grad(loss, scores, truth, rtol=1e-5, atol=1e-7):
    out = loss(scores, truth)
    expected = numeric_grad(lambda s: loss(s, truth).loss, scores)
    numpy.testing.assert_allclose(out.d_scores, expected, rtol=rtol, atol=atol)
    return out


def assert_finite(out, shape):
    assert out.d_scores.shape == shape
    assert numpy.isfinite(out.loss)
    assert numpy.isfinite(out.d_scores).all()
    for group in (out.d_params, out.new_params):
        for value in (group or {}).values():
            assert numpy.isfinite(value).all()


def degenerate_cases(multilabel=True, param_names=()):
    """(name, scores, truth) for batches that must not give NaN: empty, no entities, one
    class only, everything masked, an empty doc among others, extreme scores. Three columns
    (one for "one_class"); learned loss parameters, if any, all 0.5."""
    rng = numpy.random.default_rng(0)

    def truth(gold, K, lengths):
        params = {k: numpy.full(K, 0.5) for k in param_names} or None
        return make_truth(gold, K, lengths=lengths, multilabel=multilabel, params=params)

    extreme = numpy.asarray([[60.0, -60.0, 0.0], [-60.0, 60.0, 0.0]])
    return [
        ("empty", numpy.zeros((0, 3)), truth([], 3, [0])),
        ("no_entities", rng.normal(size=(5, 3)), truth([0] * 5, 3, [2, 3])),
        ("one_class", rng.normal(size=(4, 1)), truth([0] * 4, 1, [4])),
        ("all_masked", rng.normal(size=(3, 3)), truth([-1, -1, -1], 3, [3])),
        ("empty_doc", rng.normal(size=(4, 3)), truth([0, 1, 2, 0], 3, [2, 0, 2])),
        ("extreme", extreme, truth([0, 1], 3, [2])),
    ]
