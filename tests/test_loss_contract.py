"""The contract every registered loss keeps, read from the registries (no hand table): for each
``spacy_auc_ner.*`` entry of thinc's ``registry.losses`` and each of the package's registered
schemes whose capabilities meet the loss's ``needs`` (a wrapper's own needs, with the scheme's
default loss inside where its default inner loss cannot train the scheme):

- finite values and gradients on a batch and on degenerate ones (empty, no entity, one class,
  all masked, an empty doc, extreme scores);
- the gradient of the scores equals central finite differences;
- on the emulated device (tests/emulated_device.py; and on CUDA where there is a GPU) the
  same numbers without mixing host and device arrays;
- through the ``auc_ner`` pipe, a few training steps lower the loss, and the trained pipeline
  saved and loaded gives the same scores and the same loss;
- docs/reference.md's Losses table names every registered loss and, per loss, the schemes it declares.

The hand-computed values, each loss's settings and its own derivations stay in the test file
of each loss."""
import dataclasses
import re
from pathlib import Path

import numpy
import pytest
import spacy
from spacy.training import Example
from spacy.util import registry

from _loss_checks import assert_finite, check_score_grad, degenerate_cases
from spacy_auc_ner.capabilities import unmet
from spacy_auc_ner.labels import LabelSet
from spacy_auc_ner.losses import Truth
from spacy_auc_ner.schemes import scheme_names
from test_device_mixing import DEVICES, TOLERANCE, on_device, to_device, to_host
from toy_data import TEXTS

REFERENCE = Path(__file__).resolve().parents[1] / "docs" / "reference.md"
LOSSES = sorted(name for name in registry.losses.get_all() if name.startswith("spacy_auc_ner."))


# the package's schemes, by short name (ova, two_task, ...) -> registered name
SCHEMES = {registry.resolve({"s": {"@misc": n}})["s"].name: n for n in scheme_names() if n.startswith("spacy_auc_ner.")}


def make_scheme(scheme: str):
    """The package's scheme of short name `scheme`, built from its registered block."""
    return registry.resolve({"s": {"@misc": SCHEMES[scheme]}})["s"]


def declared_schemes(name: str) -> tuple:
    """The schemes whose capabilities meet the registered loss's needs (a wrapper's own needs:
    given fitting inner losses)."""
    needs = registry.losses.get(name).needs
    return tuple(s for s in SCHEMES if unmet(needs, make_scheme(s).capabilities) is None)


CASES = [(name, scheme) for name in LOSSES for scheme in declared_schemes(name)]
IDS = [f"{name.split('.')[1]}-{scheme}" for name, scheme in CASES]


def loss_config(name: str, scheme: str) -> dict:
    """The loss's block with its defaults; a wrapper's inner losses that cannot train `scheme`
    become the scheme's default loss (MoM and NegativeSampling wrap SoftmaxCE by default)."""
    config = {"@losses": name}
    loss = registry.resolve({"loss": config})["loss"]
    offers = make_scheme(scheme).capabilities
    if not loss.trains(offers):
        for slot, inner in loss.inner.items():
            if not inner.trains(loss.inner_offers(slot, offers)):
                config[slot] = dict(make_scheme(scheme).default_loss)
    return config


def build(name: str, scheme: str):
    loss = registry.resolve({"loss": loss_config(name, scheme)})["loss"]
    assert loss.unmet_need(make_scheme(scheme).capabilities) is None
    loss.validate()
    return loss


# ---- the loss as a function of (scores, truth) -----------------------------------------------
GOLD = numpy.asarray([0, 1, 2, 0, 3, 4, 0, -1, 1, 0], dtype="i")  # 2 types, one missing token
LENGTHS = numpy.asarray([4, 0, 6], dtype="i")
COUNTS = numpy.asarray([60, 8, 9, 5, 7], dtype="f8")


def batch(loss, scheme: str, dtype: str = "f8", step: int = 0):
    """(scores, truth) of a 10-token batch laid out as the pipe lays it out for `scheme`:
    targets and columns from the scheme, the loss's learned parameters at random values."""
    sch = make_scheme(scheme)
    labels = LabelSet(["A", "B"])
    K = sch.loss_columns(labels)
    rng = numpy.random.default_rng(7)
    targets = sch.targets(GOLD, labels, numpy)[:, :K].astype(dtype)
    columns = numpy.asarray([1.0, 100.0] if scheme == "two_task" else [1.0] * K, dtype=dtype)
    params = {p.name: rng.uniform(0.1, 0.9, size=p.shape(K)).astype(dtype) for p in loss.params} or None
    truth = Truth(targets, (GOLD >= 0).astype(dtype), columns, LENGTHS, sch.multilabel, params, sch.o_column, step)
    return rng.normal(size=(len(GOLD), K)).astype(dtype), truth


@pytest.mark.parametrize("name, scheme", CASES, ids=IDS)
def test_values_and_gradients_are_finite_even_on_degenerate_batches(name, scheme):
    loss = build(name, scheme)
    loss.initialize(COUNTS[: batch(loss, scheme)[0].shape[1]])
    scores, truth = batch(loss, scheme)
    assert_finite(loss(scores, truth), scores.shape)
    sch = make_scheme(scheme)
    for case, scores, truth in degenerate_cases(sch.multilabel):
        K = scores.shape[1]
        if scheme == "crf" and K % 2 == 0:
            continue
        params = {p.name: numpy.full(p.shape(K), 0.5) for p in loss.params} or None
        truth = dataclasses.replace(truth, params=params, o_column=sch.o_column if sch.o_column < K else -1)
        fresh = build(name, scheme)
        fresh.initialize(numpy.full(K, 3.0))
        assert_finite(fresh(scores, truth), scores.shape)


@pytest.mark.parametrize("name, scheme", CASES, ids=IDS)
@pytest.mark.parametrize("step", [0, 1])  # Compositional switches loss at step 1 (k = 1)
def test_score_gradient_is_the_finite_difference(name, scheme, step):
    loss = build(name, scheme)
    scores, truth = batch(loss, scheme, step=step)
    loss.initialize(COUNTS[: scores.shape[1]])
    check_score_grad(loss, scores, truth, rtol=1e-5, atol=1e-7)


@pytest.mark.parametrize("kind", DEVICES)
@pytest.mark.parametrize("name, scheme", CASES, ids=IDS)
def test_the_device_gives_the_same_numbers_without_mixing(name, scheme, kind, monkeypatch):
    host_loss = build(name, scheme)
    scores, truth = batch(host_loss, scheme, dtype="f")
    host_loss.initialize(COUNTS[: scores.shape[1]].astype("f"))
    expected = {step: host_loss(scores, dataclasses.replace(truth, step=step)) for step in (0, 1)}
    tol = TOLERANCE[kind]
    with on_device(kind, monkeypatch) as ops:
        loss = build(name, scheme)
        loss.initialize(ops.asarray1f(COUNTS[: scores.shape[1]].astype("f")))
        for step in (0, 1):
            fields = {f: to_device(getattr(truth, f), ops.xp) for f in ("targets", "mask", "columns", "lengths", "params")}
            out = loss(ops.asarray2f(scores), dataclasses.replace(truth, step=step, **fields))
            assert isinstance(out.loss, float)
            assert out.loss == pytest.approx(expected[step].loss, rel=tol["rtol"] / 10, abs=tol["atol"])
            numpy.testing.assert_allclose(to_host(out.d_scores), expected[step].d_scores, **tol)
            for got, want in ((out.d_params, expected[step].d_params), (out.new_params, expected[step].new_params)):
                assert (got is None) == (want is None)
                for k in want or {}:
                    numpy.testing.assert_allclose(to_host(got[k]), want[k], **tol)


# ---- the loss inside the auc_ner pipe ----------------------------------------------------------
SMALL_MODEL = {
    "@architectures": "spacy_auc_ner.TokenScorer.v2",
    "tok2vec": {"@architectures": "spacy.HashEmbedCNN.v2", "width": 16, "depth": 1, "embed_size": 300, "window_size": 1,
                "maxout_pieces": 2, "subword_features": True, "pretrained_vectors": None},
}
STEPS, WINDOW = 24, 4  # WINDOW even: a window holds as many CE as AUC steps of Compositional (k = 1)


@pytest.mark.parametrize("name, scheme", CASES, ids=IDS)
def test_the_pipe_trains_with_it_and_round_trips(name, scheme, tmp_path):
    nlp = spacy.blank("en")
    nlp.add_pipe("auc_ner", config={"scheme": {"@misc": SCHEMES[scheme]}, "loss": loss_config(name, scheme), "model": SMALL_MODEL})
    examples = [Example.from_dict(nlp.make_doc(text), {"entities": ents}) for text, ents in TEXTS]
    optimizer = nlp.initialize(lambda: examples)
    optimizer.learn_rate = 0.01
    seen = [nlp.update(examples, sgd=optimizer)["auc_ner"] for _ in range(STEPS)]
    assert numpy.isfinite(seen).all()
    assert numpy.mean(seen[-WINDOW:]) < numpy.mean(seen[:WINDOW]), seen
    pipe = nlp.get_pipe("auc_ner")
    assert nlp.config["components"]["auc_ner"]["loss"]["@losses"] == name

    nlp.to_disk(tmp_path / "pipe")
    loaded = spacy.load(tmp_path / "pipe")
    again = loaded.get_pipe("auc_ner")
    docs = [eg.predicted for eg in examples]
    scores, scores_again = pipe.predict(docs), again.predict(docs)
    for a, b in zip(scores, scores_again):
        numpy.testing.assert_allclose(a, b, rtol=1e-6)
    assert pipe.get_loss(examples, scores)[0] == pytest.approx(again.get_loss(examples, scores_again)[0], rel=1e-6)
    def entities(pipeline):
        return [[(e.start, e.end, e.label_) for e in doc.ents] for doc in pipeline.pipe(t for t, _ in TEXTS)]

    assert entities(nlp) == entities(loaded)


# ---- the reference's table -----------------------------------------------------------------------
def readme_schemes() -> dict:
    """{loss: {schemes}} from docs/reference.md's Losses table (column 'schemes'; remarks in parentheses)."""
    text = REFERENCE.read_text(encoding="utf8")
    table = text[text.index("## Losses"):].split("\n\n")[1]
    rows = [[cell.strip() for cell in line.strip("|").split("|")] for line in table.splitlines()[2:]]
    return {row[0].strip("`"): {s.strip() for s in re.sub(r"\(.*?\)", "", row[2]).split(",")} for row in rows}


def test_readme_losses_table_matches_the_registry_and_the_declared_schemes():
    table = readme_schemes()
    assert sorted(table) == LOSSES
    assert {name: set(declared_schemes(name)) for name in LOSSES} == table
