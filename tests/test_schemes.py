"""The component schemes: targets, default loss and decoder, the two_task loss terms by hand,
and decoding with no entity type."""
import math

import numpy
import pytest
import spacy

from _loss_checks import make_truth
from spacy_auc_ner.labels import MISSING, LabelSet
from spacy_auc_ner.losses import AUCMargin, BinaryCE, SoftmaxCE, Truth
from spacy_auc_ner.schemes import NAMED_SCHEMES, Targets, TwoTaskScheme, make_scheme, scheme_names
from toy_data import fit_toy

LABELS = LabelSet(["LOC", "PER"])
GOLD = numpy.asarray([0, 1, 2, 3, MISSING])


def test_targets():
    Y = make_scheme("ova").targets(GOLD, LABELS, numpy)
    assert Y.tolist() == [[1, 0, 0, 0, 0], [0, 1, 0, 0, 0], [0, 0, 1, 0, 0], [0, 0, 0, 1, 0], [0, 0, 0, 0, 0]]
    two = make_scheme("two_task")
    assert two.columns(LABELS) == ["ENTITY", "BEGIN", "TYPE-LOC", "TYPE-PER"]
    Y2 = two.targets(GOLD, LABELS, numpy)
    assert Y2.tolist() == [[0, 0, 0, 0], [1, 1, 1, 0], [1, 0, 1, 0], [1, 1, 0, 1], [0, 0, 0, 0]]
    assert two.columns(LabelSet(["Disease"])) == ["ENTITY", "BEGIN"]
    assert two.targets(numpy.asarray([0, 1, 2]), LabelSet(["Disease"]), numpy).tolist() == [[0, 0], [1, 1], [1, 0]]


def test_defaults_per_scheme():
    assert sorted(NAMED_SCHEMES) == ["crf", "ova", "softmax", "two_task"]
    defaults = {name: (make_scheme(name).default_loss["@losses"], make_scheme(name).default_decoder) for name in NAMED_SCHEMES}
    assert defaults == {
        "ova": ("spacy_auc_ner.AUCMargin.v1", "greedy"),
        "two_task": ("spacy_auc_ner.AUCMargin.v1", "greedy"),
        "softmax": ("spacy_auc_ner.SoftmaxCE.v1", "greedy"),
        "crf": ("spacy_auc_ner.CRFLoss.v1", "viterbi"),
    }
    assert [make_scheme(n).loss_columns(LABELS) for n in ("ova", "two_task", "softmax", "crf")] == [5, 2, 5, 5]
    with pytest.raises(KeyError):
        make_scheme("crf2")


def test_two_task_loss_is_auc_en_plus_lambda_auc_be_plus_the_type_head():
    rng = numpy.random.default_rng(0)
    scores = rng.normal(size=(5, 4))
    Y = make_scheme("two_task").targets(GOLD, LABELS, numpy).astype("f8")
    mask = (GOLD >= 0).astype("f8")
    lengths = numpy.asarray([5], "i")
    scheme = TwoTaskScheme(lam=3.0)
    out = scheme.get_loss(AUCMargin(mode="batch"), scores, Targets(Y, mask), numpy.ones(4), lengths, None, 0)
    # by hand from the single-column losses
    auc = AUCMargin(mode="batch")
    column = lambda k: auc(scores[:, k : k + 1], make_truth(numpy.where(mask > 0, 1 - Y[:, k], -1), 1)).loss  # noqa: E731
    logp = scores[:, 2:] - numpy.log(numpy.exp(scores[:, 2:]).sum(axis=1, keepdims=True))
    entity = (mask * Y[:, 0]) > 0
    type_ce = -(Y[entity, 2:] * logp[entity]).sum() / entity.sum()
    assert out.loss == pytest.approx(column(0) + 3.0 * column(1) + type_ce, rel=1e-9)
    # the type head's gradient only on gold entity tokens
    assert (out.d_scores[~entity, 2:] == 0).all() and (out.d_scores[entity, 2:] != 0).all()


def test_two_task_parameters_and_lambda_reach_the_loss():
    scores = numpy.random.default_rng(1).normal(size=(5, 4))
    Y = make_scheme("two_task").targets(GOLD, LABELS, numpy).astype("f8")
    mask = (GOLD >= 0).astype("f8")
    params = {"dam_a": numpy.asarray([0.9, 0.8]), "dam_b": numpy.asarray([0.1, 0.2]), "dam_alpha": numpy.asarray([0.3, 0.4])}
    scheme = TwoTaskScheme(lam=2.0)
    out = scheme.get_loss(AUCMargin(), scores, Targets(Y, mask), numpy.ones(4), numpy.asarray([5]), params, 0)
    # the loss's parameters cover the two task columns only
    assert set(out.d_params) == set(params) and all(v.shape == (2,) for v in out.d_params.values())
    # lambda weighs the BEGIN column: the same as a loss with column weights (1, lambda)
    untyped = Targets(Y[:, :2], mask)
    got = scheme.get_loss(BinaryCE(), scores[:, :2], untyped, numpy.ones(2), numpy.asarray([5]), None, 0).loss
    expected = BinaryCE()(scores[:, :2], Truth(Y[:, :2], mask, numpy.asarray([1.0, 2.0]), numpy.asarray([5]), True)).loss
    assert got == pytest.approx(expected, rel=1e-12)


def test_softmax_and_ova_losses_see_the_whole_row():
    scores = numpy.random.default_rng(2).normal(size=(5, 5))
    targets = Targets(make_scheme("softmax").targets(GOLD, LABELS, numpy).astype("f8"), (GOLD >= 0).astype("f8"))
    out = make_scheme("softmax").get_loss(SoftmaxCE(), scores, targets, numpy.ones(5), numpy.asarray([5]), None, 0)
    logp = scores - numpy.log(numpy.exp(scores).sum(axis=1, keepdims=True))
    assert out.loss == pytest.approx(-sum(logp[i, GOLD[i]] for i in range(4)) / 4)


def test_two_task_bio_probabilities_sum_to_one():
    scores = numpy.random.default_rng(0).normal(size=(6, 4)).astype("f")
    p = make_scheme("two_task").bio_probabilities(scores, LABELS)
    assert numpy.allclose(p.sum(axis=1), 1.0, atol=1e-5)


def test_two_task_bio_probabilities_by_hand_with_two_types():
    # p_en = sigmoid(0) = .5, p_be = sigmoid(log 3) = .75, type head softmax = (.3, .7):
    # O = 1 - p_en, B-t = p_en p_be p_t, I-t = p_en (1 - p_be) p_t, in LABELS.bio's order
    scores = numpy.asarray([[0.0, math.log(3.0), math.log(0.3), math.log(0.7)]], dtype="f")
    p = make_scheme("two_task").bio_probabilities(scores, LABELS)
    assert LABELS.bio == ("O", "B-LOC", "I-LOC", "B-PER", "I-PER")
    numpy.testing.assert_allclose(p, [[0.5, 0.5 * 0.75 * 0.3, 0.5 * 0.25 * 0.3, 0.5 * 0.75 * 0.7, 0.5 * 0.25 * 0.7]], rtol=1e-6)


# ---- the crf scheme decodes under its learned transitions --------------------------------
ONE = LabelSet(["X"])  # O, B-X, I-X


def crf_params(trans, start=(0.0, 0.0, 0.0), end=(0.0, 0.0, 0.0)):
    return {"crf_trans": numpy.asarray(trans, "f8"), "crf_start": numpy.asarray(start, "f8"), "crf_end": numpy.asarray(end, "f8")}


def valid_bio_paths(n):
    """Every label sequence of one type that BIO allows (no I first, none after O)."""
    import itertools

    return [q for q in itertools.product(range(3), repeat=n) if q[0] != 2 and all(not (a == 0 and b == 2) for a, b in zip(q, q[1:]))]


def crf_by_enumeration(E, p):
    """The best valid path and the (n, 3) posterior marginals by enumerating the paths."""
    def score(q):
        return p["crf_start"][q[0]] + p["crf_end"][q[-1]] + sum(E[t][y] for t, y in enumerate(q)) + sum(p["crf_trans"][a][b] for a, b in zip(q, q[1:]))

    paths = valid_bio_paths(len(E))
    w = numpy.exp([score(q) for q in paths])
    marginals = sum(wi * (numpy.asarray(q)[:, None] == numpy.arange(3)) for wi, q in zip(w, paths)) / w.sum()
    return max(paths, key=score), marginals


def test_crf_viterbi_decoding_uses_the_learned_transitions_by_hand():
    # emissions O, B, I: token 0 (1, .8, 0), token 1 (1, 0, .9). Valid paths: OO 2, OB 1, BO 1.8,
    # BB .8, BI 1.7. Without transitions O O wins (no entity); trans[B, I] = 1 makes BI 2.7 the
    # best: one entity over both tokens, its score the mean of P(B at 0) and P(I at 1).
    E = numpy.asarray([[1.0, 0.8, 0.0], [1.0, 0.0, 0.9]])
    scheme = make_scheme("crf")
    flat = scheme.decode(E, numpy.asarray([2]), ONE, "viterbi", crf_params(numpy.zeros((3, 3))))
    assert flat.start.size == 0
    trans = numpy.zeros((3, 3))
    trans[1, 2] = 1.0
    spans = scheme.decode(E, numpy.asarray([2]), ONE, "viterbi", crf_params(trans))
    assert list(zip(spans.start.tolist(), spans.end.tolist(), spans.type.tolist())) == [(0, 2, 0)]
    e = math.exp
    Z = e(2.0) + e(1.0) + e(1.8) + e(0.8) + e(2.7)
    p_b0, p_i1 = (e(1.8) + e(0.8) + e(2.7)) / Z, e(2.7) / Z
    assert spans.score[0] == pytest.approx((p_b0 + p_i1) / 2, rel=1e-5)
    # start and end scores count too: start[B] = .5, end[I] = -1 make B O 2.3 beat B I 2.2 and O O 2
    ended = scheme.decode(E, numpy.asarray([2]), ONE, "viterbi", crf_params(trans, start=(0.0, 0.5, 0.0), end=(0.0, 0.0, -1.0)))
    assert list(zip(ended.start.tolist(), ended.end.tolist())) == [(0, 1)]


@pytest.mark.parametrize("seed", range(12))
def test_crf_decoders_are_the_best_path_and_the_posterior_argmax(seed):
    # random emissions and transitions, two sentences: Viterbi gives the best valid path by
    # enumeration, greedy the argmax of the enumerated marginals; span scores average those marginals
    from spacy_auc_ner.ml.decoding import bio_spans

    rng = numpy.random.default_rng(seed)
    lengths = numpy.asarray([4, 3])
    E = rng.normal(scale=2.0, size=(7, 3))
    p = crf_params(rng.normal(size=(3, 3)), rng.normal(size=3), rng.normal(size=3))
    scheme = make_scheme("crf")
    tags, marginals = [], []
    for sl in (slice(0, 4), slice(4, 7)):
        best, m = crf_by_enumeration(E[sl], p)
        tags.extend(best)
        marginals.append(m)
    marginals = numpy.concatenate(marginals)
    tags = numpy.asarray(tags)
    for decoder, labels in (("viterbi", tags), ("greedy", marginals.argmax(axis=1))):
        conf = marginals[numpy.arange(7), labels]
        want = bio_spans(labels > 0, labels == 1, numpy.zeros(7, "i"), conf, lengths)
        got = scheme.decode(E, lengths, ONE, decoder, p)
        for field in ("doc", "start", "end", "type"):
            assert getattr(got, field).tolist() == getattr(want, field).tolist(), (decoder, field)
        numpy.testing.assert_allclose(got.score, want.score, rtol=1e-5)


@pytest.mark.parametrize("name", ["ova", "two_task", "softmax", "crf"])
@pytest.mark.parametrize("decoder", ["greedy", "viterbi"])
def test_no_entity_type_decodes_to_nothing(name, decoder):
    labels = LabelSet([])
    scheme = make_scheme(name)
    K = len(scheme.columns(labels))
    scores = numpy.full((4, K), 5.0, dtype="f")  # every column confident
    params = {"crf_trans": numpy.zeros((K, K), "f"), "crf_start": numpy.zeros(K, "f"), "crf_end": numpy.zeros(K, "f")}
    spans = scheme.decode(scores, numpy.asarray([3, 1]), labels, decoder, params)
    assert spans.start.size == 0 and spans.score.dtype == numpy.float32


def test_threshold_is_the_two_task_decision_threshold():
    labels = LabelSet(["X"])
    p_en, p_be = 0.7, 0.9
    scores = numpy.asarray([[math.log(p_en / (1 - p_en)), math.log(p_be / (1 - p_be))]], dtype="f")
    lengths = numpy.asarray([1])
    assert TwoTaskScheme(threshold=0.5).decode(scores, lengths, labels, "greedy").start.tolist() == [0]
    assert TwoTaskScheme(threshold=0.8).decode(scores, lengths, labels, "greedy").start.tolist() == []


# ---- a name is its block ------------------------------------------------------------------
SAME = [
    ({"scheme": "ova"}, {"scheme": {"@misc": "spacy_auc_ner.OVA.v1"}}),
    ({"scheme": "softmax"}, {"scheme": {"@misc": "spacy_auc_ner.Softmax.v1"}}),
    ({"scheme": "crf"}, {"scheme": {"@misc": "spacy_auc_ner.CRF.v1"}}),
    ({"scheme": "two_task"}, {"scheme": {"@misc": "spacy_auc_ner.TwoTask.v1"}}),
]


@pytest.mark.parametrize("named, block", SAME, ids=["ova", "softmax", "crf", "two_task"])
def test_a_scheme_name_trains_and_predicts_as_its_block_and_keeps_its_written_form(named, block, tmp_path):
    nlp_named, examples, losses_named = fit_toy(named, n_iter=6)
    nlp_block, _, losses_block = fit_toy(block, n_iter=6)
    assert losses_named == losses_block
    a, b = nlp_named.get_pipe("auc_ner"), nlp_block.get_pipe("auc_ner")
    assert a.cfg == b.cfg and a.columns == b.columns
    texts = [eg.reference.text for eg in examples]
    def entities(nlp):
        return [[(e.start, e.end, e.label_) for e in d.ents] for d in nlp.pipe(texts)]

    assert entities(nlp_named) == entities(nlp_block) and any(entities(nlp_named))
    # the config is written as it was given: a saved pipeline keeps its name, or its block
    nlp_named.to_disk(tmp_path / "named")
    assert spacy.load(tmp_path / "named").config["components"]["auc_ner"]["scheme"] == named["scheme"]
    assert nlp_block.config["components"]["auc_ner"]["scheme"] == block["scheme"] | (
        {"lam": 100.0, "threshold": 0.5} if block["scheme"]["@misc"].endswith("TwoTask.v1") and len(block["scheme"]) == 1 else {}
    )


def test_every_name_is_a_registered_scheme():
    assert sorted(NAMED_SCHEMES) == ["crf", "ova", "softmax", "two_task"]
    for name, registered in NAMED_SCHEMES.items():
        assert registered in scheme_names() and make_scheme(name).name == name
    assert isinstance(make_scheme("two_task", lam=3.0, threshold=0.7), TwoTaskScheme)
    assert (make_scheme("two_task", lam=3.0).lam, make_scheme("two_task", threshold=0.7).threshold) == (3.0, 0.7)
    assert (make_scheme("two_task").lam, make_scheme("two_task").threshold) == (100.0, 0.5)  # the block's defaults
