"""GPU readiness: the losses, the CRF, the decoders, the schemes and the auc_ner pipe run on
device arrays without mixing host and device arrays, and give the numbers they give on numpy.

Each check runs on two devices: "emulated" (tests/emulated_device.py: CPU arrays that refuse
any mixing, stricter than cupy; runs everywhere, and is shown below to catch seeded mixing
bugs that run fine on numpy) and "cuda" (cupy through thinc's CupyOps on a real GPU; skipped
where thinc finds none, as in CI). On a GPU the float32 kernels sum in other orders, so the
comparisons with numpy there allow float32 rounding (TOLERANCE)."""
import contextlib

import numpy
import pytest
import spacy
from spacy.util import registry
from thinc.api import Model, get_current_ops, set_current_ops
from thinc.util import has_cupy_gpu

from emulated_device import DeviceArray, HostDeviceMixing, emulate_device
from spacy_auc_ner.labels import LabelSet, bio_layout
from spacy_auc_ner.losses import (
    AUCMargin,
    BinaryCE,
    Compositional,
    CRFLoss,
    Dice,
    Focal,
    MoM,
    NegativeSampling,
    Truth,
    WeightedCE,
)
from spacy_auc_ner.ml.activations import sigmoid
from spacy_auc_ner.ml.crf import bio_constraints, constrain, crf_nll, pad, posteriors, viterbi
from spacy_auc_ner.ml.decoding import viterbi_bio
from spacy_auc_ner.schemes import make_scheme
from toy_data import TOY, fit_toy, make_examples

NO_GPU = "no CUDA GPU here (thinc.util.has_cupy_gpu is False): runs where cupy finds one"
DEVICES = ["emulated", pytest.param("cuda", marks=pytest.mark.skipif(not has_cupy_gpu, reason=NO_GPU))]
TOLERANCE = {"emulated": dict(rtol=1e-4, atol=1e-6), "cuda": dict(rtol=1e-3, atol=1e-5)}


@contextlib.contextmanager
def on_device(kind, monkeypatch):
    """The current ops are the device's within the block, so new models allocate there."""
    if kind == "emulated":
        with emulate_device(monkeypatch) as ops:
            yield ops
        return
    from thinc.api import CupyOps

    previous = get_current_ops()
    ops = CupyOps()
    set_current_ops(ops)
    try:
        yield ops
    finally:
        set_current_ops(previous)


def tolerance(ops) -> dict:
    return TOLERANCE["cuda" if ops.name == "cupy" else "emulated"]


def is_device_array(value) -> bool:
    return isinstance(value, DeviceArray) or type(value).__module__.split(".")[0] == "cupy"


@pytest.fixture(params=DEVICES)
def device(request, monkeypatch):
    with on_device(request.param, monkeypatch) as ops:
        yield ops


@pytest.fixture
def emulated(monkeypatch):
    with emulate_device(monkeypatch) as ops:
        yield ops


def to_device(value, xp):
    if isinstance(value, numpy.ndarray):
        return xp.asarray(value)
    if isinstance(value, dict):
        return {k: to_device(v, xp) for k, v in value.items()}
    return value


def to_host(value):
    """Device arrays back to numpy; a numpy array where a device array should be is a leak."""
    if is_device_array(value):
        return value.get()
    if isinstance(value, numpy.ndarray):
        raise AssertionError(f"a host array {value.shape} came out of device code")
    if isinstance(value, dict):
        return {k: to_host(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [to_host(v) for v in value]
    return value


# ---- the harness catches seeded mixing --------------------------------------------------
def leaky_sigmoid(scores, lengths):
    return 1.0 / (1.0 + numpy.exp(-scores))  # numpy on a model array


def leaky_mask(scores, lengths):
    mask = numpy.arange(scores.shape[0]) < int(lengths.sum()) - 1  # a host mask...
    return scores * mask[:, None]  # ...applied to device scores


def leaky_argmax(scores, lengths):
    return numpy.asarray(scores).argmax(axis=1)  # implicit device-to-host copy


def leaky_index(scores, lengths):
    rows = numpy.cumsum(numpy.asarray(lengths.tolist())) - 1  # host indices
    return scores[rows]  # fancy-indexing device memory with them


def leaky_concat(scores, lengths):
    return numpy.concatenate([scores, scores])


SEEDED = [leaky_sigmoid, leaky_mask, leaky_argmax, leaky_index, leaky_concat]


@pytest.mark.parametrize("bug", SEEDED, ids=lambda f: f.__name__)
def test_seeded_mixing_runs_on_numpy_and_fails_on_the_emulated_device(bug, emulated):
    scores = numpy.random.default_rng(0).normal(size=(5, 3)).astype("f")
    lengths = numpy.asarray([2, 3], dtype="i")
    bug(scores, lengths)  # plain numpy: no error, the bug is invisible on CPU
    with pytest.raises(HostDeviceMixing):
        bug(emulated.asarray(scores), emulated.asarray(lengths))


def test_explicit_transfers_and_host_scalars_are_fine(emulated):
    device = emulated
    x = device.asarray2f(numpy.arange(6, dtype="f").reshape(2, 3))
    assert isinstance(x, DeviceArray) and isinstance(x.sum(), DeviceArray)
    assert float(x.sum()) == 15.0 and x.max(axis=1).tolist() == [2.0, 5.0]
    numpy.testing.assert_array_equal(device.to_numpy(device.xp.exp(x) * 2.0), numpy.exp(numpy.arange(6, dtype="f").reshape(2, 3)) * 2.0)
    assert device.unflatten(device.flatten([x, x]), device.asarray1i([2, 2]))[1].shape == (2, 3)


# ---- losses --------------------------------------------------------------------------------
RNG = numpy.random.default_rng(7)
GOLD = numpy.asarray([0, 1, 2, 0, 3, 4, 0, -1, 1, 0], dtype="i")  # 2 types, one missing token
LENGTHS = numpy.asarray([4, 0, 6], dtype="i")
K_BIO = 5


def _truth(scheme: str, K: int, params=None, step=0):
    labels = LabelSet(["A", "B"])
    sch = make_scheme(scheme)
    targets = sch.targets(GOLD, labels, numpy)[:, :K].astype("f")
    mask = (GOLD >= 0).astype("f")
    multilabel = scheme in ("ova", "two_task")
    columns = numpy.asarray([1.0, 100.0], dtype="f") if scheme == "two_task" else numpy.ones(K, dtype="f")
    return Truth(targets, mask, columns, LENGTHS, multilabel, params, sch.o_column, step)


def _params(loss, K):
    """Random values of the loss's learned parameters (AUC a, b, alpha; CRF transitions)."""
    return {p.name: RNG.uniform(0.1, 0.9, size=p.shape(K)).astype("f") for p in loss.params} or None


COUNTS = numpy.asarray([60, 8, 9, 5, 7], dtype="f")
# settings other than the defaults (every registered loss with its defaults on every scheme it
# declares: tests/test_loss_contract.py)
LOSSES = [
    ("auc_batch", lambda: AUCMargin(mode="batch"), ["ova", "two_task"]),
    ("auc_pesg", lambda: AUCMargin(alpha_update="pesg"), ["ova"]),
    ("auc_libauc", lambda: AUCMargin(weighting="libauc"), ["ova", "two_task"]),
    ("comauc_k2", lambda: Compositional(BinaryCE(), AUCMargin(mode="batch"), k=2), ["ova", "two_task"]),
    ("dice_token", lambda: Dice(alpha=1.0, level="token"), ["ova", "softmax"]),
    ("focal_half", lambda: Focal(gamma=0.5), ["ova", "softmax", "two_task"]),
    ("mom_mean", lambda: MoM(BinaryCE(), o_term="mean"), ["ova"]),
    ("wce_log", lambda: WeightedCE(form="log"), ["softmax"]),
    ("ns_weighted", lambda: NegativeSampling(BinaryCE(), distribution="weighted"), ["ova"]),
]
CASES = [(name, make, scheme) for name, make, schemes in LOSSES for scheme in schemes]


@pytest.mark.parametrize("kind", DEVICES)
@pytest.mark.parametrize("name,make,scheme", CASES, ids=[f"{n}-{s}" for n, _, s in CASES])
def test_every_loss_stays_on_the_device(name, make, scheme, kind, monkeypatch):
    K = 2 if scheme == "two_task" else K_BIO
    scores = RNG.normal(size=(len(GOLD), K)).astype("f")
    host_loss = make()
    params = _params(host_loss, K)
    if hasattr(host_loss, "weights") or name.startswith("wce"):
        host_loss.initialize(COUNTS[:K])
    outputs = {}
    for step in (0, 1):  # Compositional switches loss at step 1
        outputs[step] = host_loss(scores, _truth(scheme, K, params, step))
    tol = TOLERANCE[kind]
    with on_device(kind, monkeypatch) as ops:
        loss = make()
        if name.startswith("wce"):
            loss.initialize(ops.asarray1f(COUNTS[:K]))
        for step in (0, 1):
            truth = _truth(scheme, K, params, step)
            truth = Truth(*(to_device(getattr(truth, f), ops.xp) for f in ("targets", "mask", "columns", "lengths")), truth.multilabel, to_device(params, ops.xp), truth.o_column, step)
            out = loss(ops.asarray2f(scores), truth)
            assert isinstance(out.loss, float)
            expected = outputs[step]
            assert out.loss == pytest.approx(expected.loss, rel=tol["rtol"] / 10, abs=tol["atol"])
            numpy.testing.assert_allclose(to_host(out.d_scores), expected.d_scores, **tol)
            for got, want in ((out.d_params, expected.d_params), (out.new_params, expected.new_params)):
                assert (got is None) == (want is None)
                for k in want or {}:
                    numpy.testing.assert_allclose(to_host(got[k]), want[k], **tol)


# ---- CRF maths, decoders, schemes ---------------------------------------------------------------
def test_crf_and_viterbi_stay_on_the_device(device):
    types_, begin = bio_layout(K_BIO)
    flat = RNG.normal(size=(len(GOLD), K_BIO)).astype("f")
    trans, start, end = (RNG.normal(size=s).astype("f") for s in [(K_BIO, K_BIO), K_BIO, K_BIO])
    constraints = bio_constraints(types_, begin)

    def run(xp_asarray, lengths):
        E, mask = pad(xp_asarray(flat), lengths)
        gold, _ = pad(xp_asarray(GOLD[:, None]), lengths)
        t, s, e = constrain(xp_asarray(trans), xp_asarray(start), xp_asarray(end), constraints)
        nll = crf_nll(E, mask, gold[:, :, 0], t, s, e)
        path, score = viterbi(E, mask, t, s, e)
        probs = posteriors(xp_asarray(flat), lengths, xp_asarray(trans), xp_asarray(start), xp_asarray(end), constraints)
        spans = viterbi_bio(xp_asarray(flat), lengths, types_, begin, probs, xp_asarray(trans), xp_asarray(start), xp_asarray(end))
        return nll, path, score, probs, spans

    host = run(numpy.asarray, LENGTHS)
    tol = tolerance(device)
    for lengths in (LENGTHS, device.asarray1i(LENGTHS)):  # host lengths (decoding) or device (losses)
        got = run(device.xp.asarray, lengths)
        for g, h in zip(to_host(got[0]), host[0]):
            numpy.testing.assert_allclose(g, h, **tol)
        numpy.testing.assert_array_equal(to_host(got[1]), host[1])
        numpy.testing.assert_allclose(to_host(got[3]), host[3], **tol)
        for g, h in zip(got[4], host[4]):  # spans come back to the host by design
            assert isinstance(g, numpy.ndarray)
            numpy.testing.assert_allclose(g, h, **tol)


@pytest.mark.parametrize("scheme", ["ova", "softmax", "crf", "two_task"])
def test_schemes_stay_on_the_device(scheme, device):
    labels = LabelSet(["A", "B"])
    sch = make_scheme(scheme)
    tol = tolerance(device)
    K = len(sch.columns(labels))
    scores = RNG.normal(size=(len(GOLD), K)).astype("f")
    host = (sch.targets(GOLD, labels, numpy), sch.bio_probabilities(scores, labels), sch.bio_log_scores(scores, labels))
    got = (sch.targets(device.asarray1i(GOLD), labels, device.xp), sch.bio_probabilities(device.asarray2f(scores), labels), sch.bio_log_scores(device.asarray2f(scores), labels))
    for g, h in zip(got, host):
        numpy.testing.assert_allclose(to_host(g), h, **tol)
    numpy.testing.assert_allclose(to_host(sigmoid(device.asarray2f(scores))), sigmoid(scores), **tol)
    params = {p.name: RNG.normal(size=p.shape(K_BIO)).astype("f") for p in CRFLoss.params} if scheme == "crf" else None
    for decoder in ("greedy", "viterbi"):
        host_spans = sch.decode(scores, LENGTHS, labels, decoder, params)
        spans = sch.decode(device.asarray2f(scores), LENGTHS, labels, decoder, to_device(params, device.xp))
        for g, h in zip(spans, host_spans):  # spans come back to the host by design
            assert isinstance(g, numpy.ndarray)
            numpy.testing.assert_allclose(g, h, **tol)


# ---- the auc_ner pipe end to end ------------------------------------------------------------------
ROWS, WIDTH = 97, 8


@registry.architectures("spacy_auc_ner_tests.DeviceEmbed.v1")
def device_embed() -> Model:
    """A fixed random embedding of each token's text: a tok2vec that runs on any ops."""

    def init(model, X=None, Y=None):
        table = numpy.random.default_rng(0).normal(size=(ROWS, WIDTH)).astype("f")
        model.set_param("E", model.ops.asarray2f(table))

    def forward(model, docs, is_train):
        table = model.get_param("E")
        rows = [model.ops.asarray1i((doc.to_array("ORTH") % ROWS).astype("i")) for doc in docs]
        return [table[r] for r in rows], lambda dY: []

    return Model("device_embed", forward, init=init, params={"E": None}, dims={"nO": WIDTH})


PIPES = [
    {"scheme": "ova"},
    {"scheme": "ova", "decoder": "viterbi"},
    {"scheme": "ova", "strategy": {"@misc": "spacy_auc_ner.GroupedByPrefix.v1"}},
    {"scheme": "ova", "strategy": {"@misc": "spacy_auc_ner.SampledClassifiers.v1", "m": 2}},
    {"scheme": "two_task"},
    {"scheme": "two_task", "decoder": "viterbi"},
    {"scheme": "softmax", "loss": {"@losses": "spacy_auc_ner.NegativeSampling.v1"}},
    {"scheme": "crf"},
    {"scheme": "crf", "decoder": "greedy"},
    {"scheme": "crf", "model": "bilstm"},
]
def _pipe_id(config):
    return "-".join(str(v) if not isinstance(v, dict) else v.get("@misc", v.get("@losses")).split(".")[-2] for v in config.values())


def _pipeline(config):
    config = dict(config)
    tok2vec = {"@architectures": "spacy_auc_ner_tests.DeviceEmbed.v1"}
    if config.pop("model", None) == "bilstm":
        config["model"] = {"@architectures": "spacy_auc_ner.BiLSTMTokenScorer.v2", "tok2vec": tok2vec, "hidden_width": 4}
    else:
        config["model"] = {"@architectures": "spacy_auc_ner.TokenScorer.v2", "tok2vec": tok2vec}
    nlp, _, losses = fit_toy(config, 3)
    docs = list(nlp.pipe([" ".join(w) for w, _ in TOY]))
    return nlp, losses, [[(e.start, e.end, e.label_) for e in d.ents] for d in docs], [d.spans["auc_ner"].attrs["scores"] for d in docs]


@pytest.mark.parametrize("kind", DEVICES)
@pytest.mark.parametrize("config", PIPES, ids=_pipe_id)
def test_the_pipe_trains_and_predicts_on_the_device(config, kind, monkeypatch):
    _, host_losses, host_ents, host_scores = _pipeline(config)
    with on_device(kind, monkeypatch) as ops:
        nlp, losses, ents, scores = _pipeline(config)
        head = nlp.get_pipe("auc_ner").model.get_ref("output")
        assert is_device_array(head.get_param("W"))
    tol = tolerance(ops)
    numpy.testing.assert_allclose(losses, host_losses, rtol=tol["rtol"])
    assert ents == host_ents
    for g, h in zip(scores, host_scores):
        numpy.testing.assert_allclose(g, h, **tol)


@pytest.mark.parametrize("kind", DEVICES)
def test_the_cached_frozen_encoder_keeps_device_arrays(kind, monkeypatch):
    with on_device(kind, monkeypatch):
        spacy.util.fix_random_seed(0)
        nlp = spacy.blank("en")
        tok2vec = {"@architectures": "spacy_auc_ner.CachedFrozenEncoder.v1", "encoder": {"@architectures": "spacy_auc_ner_tests.DeviceEmbed.v1"}}
        nlp.add_pipe("auc_ner", config={"scheme": "crf", "model": {"@architectures": "spacy_auc_ner.TokenScorer.v2", "tok2vec": tok2vec}})
        examples = make_examples(nlp)
        optimizer = nlp.initialize(lambda: examples)
        for _ in range(2):
            nlp.update(examples, sgd=optimizer)
        encoder = nlp.get_pipe("auc_ner").model.get_ref("tok2vec")
        outputs, _ = encoder([eg.predicted for eg in examples], is_train=True)
        assert all(is_device_array(y) for y in outputs)
        assert encoder.attrs["cache"].misses == len(examples)
        assert len(list(nlp.pipe(["Anna lives in Paris"]))) == 1
