"""The entity bias: the schemes' entity columns and margins, the component's shifted decoding,
and its choice on dev (spacy_auc_ner.pipeline.calibration)."""
import numpy
import pytest
import spacy
from spacy.training import Example

from spacy_auc_ner.labels import LabelSet
from spacy_auc_ner.pipeline.calibration import bias_candidates, calibrate_entity_bias, choose_bias, make_calibrate_entity_bias
from spacy_auc_ner.pipeline.scoring import score_entities
from spacy_auc_ner.schemes import make_scheme
from toy_data import make_examples


def test_entity_columns_and_margins_by_hand():
    labels = LabelSet(("X",))  # bio: O, B-X, I-X
    scores = numpy.asarray([[2.0, 0.5, 1.0], [-1.0, 3.0, 0.0]], dtype="f")
    for name in ("ova", "softmax", "crf"):
        scheme = make_scheme(name)
        assert scheme.entity_columns(labels) == [1, 2]
        numpy.testing.assert_allclose(scheme.entity_margin(scores, labels), [1.0 - 2.0, 3.0 + 1.0])
    two = make_scheme("two_task", threshold=0.8)  # logit(0.8) = log 4
    assert two.entity_columns(labels) == [0, 1]
    numpy.testing.assert_allclose(two.entity_margin(scores, labels), [2.0 - numpy.log(4.0), -1.0 - numpy.log(4.0)], rtol=1e-6)


def test_bias_candidates_by_hand():
    margins = numpy.arange(-9.0, 1.0)  # -9 .. 0, ten tokens
    # rate 0.1: the 0.9 quantile is -0.9 -> bias 0.901; rate 0.3: the 0.7 quantile -2.7 -> 2.701
    assert bias_candidates(margins, rates=(0.1, 0.3)) == [0.0, 0.901, 2.701]
    assert bias_candidates(numpy.zeros(0), rates=(0.1,)) == [0.0]
    # a bias that equals another is kept once; order: nearest 0 first
    assert bias_candidates(numpy.asarray([5.0, 5.0]), rates=(0.1, 0.2)) == [0.0, -4.999]


def test_choose_bias_takes_the_best_and_the_first_of_ties():
    table = {0.0: 0.1, 1.0: 0.3, -1.0: 0.3, 2.0: 0.2}
    assert choose_bias([0.0, 1.0, -1.0, 2.0], table.__getitem__) == (1.0, 0.3)
    assert choose_bias([0.0, 2.0], {0.0: 0.0, 2.0: 0.0}.__getitem__) == (0.0, 0.0)


def _pipe(scheme="ova", **config):
    nlp = spacy.blank("en")
    pipe = nlp.add_pipe("auc_ner", config={"scheme": scheme, **config})
    examples = make_examples(nlp)
    nlp.initialize(lambda: examples)
    return nlp, pipe, examples


@pytest.mark.parametrize("scheme", ["ova", "softmax", "crf", "two_task"])
def test_a_large_entity_bias_labels_every_token_and_a_small_one_none(scheme):
    nlp, pipe, examples = _pipe(scheme)
    docs = [eg.predicted for eg in examples]
    scores = pipe.predict(docs)
    n_tokens = sum(len(d) for d in docs)
    pipe.set_annotations(docs, scores, entity_bias=1e4)
    assert sum(t.ent_iob_ != "O" for d in docs for t in d) == n_tokens
    pipe.set_annotations(docs, scores, entity_bias=-1e4)
    assert sum(len(d.ents) for d in docs) == 0
    pipe.cfg["entity_bias"] = 1e4  # the pipe's own setting is the default
    pipe.set_annotations(docs, scores)
    assert sum(t.ent_iob_ != "O" for d in docs for t in d) == n_tokens


def test_the_ova_decision_moves_by_the_bias_by_hand():
    nlp, pipe, examples = _pipe("ova")
    # one token; columns O, B-Disease, I-Disease, B-LOC, ... : O's logit 1, B-Disease's -1
    K = len(pipe.columns)
    scores = numpy.full((1, K), -5.0, dtype="f")
    scores[0, 0], scores[0, 1] = 1.0, -1.0
    assert len(pipe.decode([scores], entity_bias=1.9).start) == 0  # -1 + 1.9 < 1
    spans = pipe.decode([scores], entity_bias=2.1)  # -1 + 2.1 > 1
    assert spans.start.tolist() == [0] and pipe.labels[spans.type[0]] == pipe.columns[1][2:]


def test_entity_bias_is_a_setting_that_round_trips(tmp_path):
    nlp, pipe, examples = _pipe("crf", entity_bias=1.5)
    assert pipe.cfg["entity_bias"] == 1.5
    pipe.set_entity_bias(2.5, nlp.get_pipe_config("auc_ner"))  # as calibration sets it
    assert nlp.config["components"]["auc_ner"]["entity_bias"] == 2.5
    nlp.to_disk(tmp_path)
    assert spacy.load(tmp_path).get_pipe("auc_ner").cfg["entity_bias"] == 2.5
    assert spacy.util.load_config(tmp_path / "config.cfg")["components"]["auc_ner"]["entity_bias"] == 2.5


def test_the_config_a_pipeline_is_loaded_with_is_what_runs(tmp_path):
    nlp, pipe, examples = _pipe("ova", entity_bias=2.5)
    nlp.to_disk(tmp_path)
    for key, value in (("decoder", "viterbi"), ("entity_bias", -3.0), ("spans_key", "mine")):
        loaded = spacy.load(tmp_path, config={f"components.auc_ner.{key}": value})
        assert loaded.get_pipe("auc_ner").cfg[key] == value
    doc = spacy.load(tmp_path, config={"components.auc_ner.spans_key": "mine"})("Germline mutations of BRCA1.")
    assert "mine" in doc.spans and "auc_ner" not in doc.spans
    # the decoder runs: a score table whose greedy and Viterbi readings differ
    loaded = spacy.load(tmp_path, config={"components.auc_ner.decoder": "viterbi", "components.auc_ner.entity_bias": 0.0})
    columns = pipe.columns  # O, B-t, I-t per type
    scores = numpy.full((2, len(columns)), -5.0, dtype="f")
    scores[0, columns.index(f"I-{pipe.labels[0]}")] = 1.0  # greedy: I-t alone, repaired into an entity;
    scores[1, columns.index("O")] = 1.0  # Viterbi: a valid sequence starts with O or B, and O wins
    assert loaded.get_pipe("auc_ner").decode([scores]).start.tolist() == []
    pipe.cfg["entity_bias"] = 0.0
    assert pipe.decode([scores]).start.tolist() == [0]


def test_the_config_holds_the_bias_a_saved_pipeline_runs_with(tmp_path):
    nlp, pipe, examples = _pipe("crf")
    pipe.set_entity_bias(2.5)  # without the pipeline's config: for this process only
    assert pipe.cfg["entity_bias"] == 2.5 and nlp.config["components"]["auc_ner"]["entity_bias"] == 0.0
    nlp.to_disk(tmp_path)
    assert spacy.load(tmp_path).get_pipe("auc_ner").cfg["entity_bias"] == 0.0  # the saved config's, not cfg's copy
    assert spacy.load(tmp_path, config={"components.auc_ner.entity_bias": 1.0}).get_pipe("auc_ner").cfg["entity_bias"] == 1.0


@pytest.mark.parametrize("bad", [float("nan"), float("inf")])
def test_a_non_finite_bias_names_its_key(bad):
    # (spaCy itself refuses a NaN in a config, so the pipe is built directly)
    from spacy.util import registry

    from spacy_auc_ner.pipeline.component import AUCNER, DEFAULT_MODEL

    model = registry.resolve({"model": DEFAULT_MODEL})["model"]
    with pytest.raises(ValueError, match=r"^\[components.ner.entity_bias\] must be a finite number"):
        AUCNER(spacy.blank("en").vocab, model, "ner", entity_bias=bad)


def test_calibration_picks_the_candidate_with_the_best_dev_f1():
    nlp, pipe, examples = _pipe("crf")
    docs = [eg.predicted.copy() for eg in examples]
    scores = pipe.predict(docs)
    flat = numpy.vstack([numpy.asarray(s) for s in scores])
    candidates = bias_candidates(pipe.scheme.entity_margin(flat, pipe.label_set))

    def f1(b):
        pipe.set_annotations(docs, scores, entity_bias=b)
        return score_entities([Example(d, eg.reference) for d, eg in zip(docs, examples)])["ents_f"]

    expected = max(f1(b) for b in candidates)
    out = calibrate_entity_bias(pipe, examples)
    assert out["ents_f"] == pytest.approx(expected)
    assert pipe.cfg["entity_bias"] == out["entity_bias"] and f1(out["entity_bias"]) == pytest.approx(expected)
    assert all(not eg.predicted.ents for eg in examples)  # the dev docs are not written


def test_calibration_reads_the_text_of_the_docs_once(monkeypatch):
    import spacy_auc_ner.pipeline.calibration as calibration
    import spacy_auc_ner.pipeline.component as component
    from spacy_auc_ner.ml.decoding import text_arrays as real

    nlp, pipe, examples = _pipe("crf")
    expected = calibrate_entity_bias(pipe, examples)
    calls = []
    monkeypatch.setattr(calibration, "text_arrays", lambda docs: calls.append(len(docs)) or real(docs))
    monkeypatch.setattr(component, "text_arrays", lambda docs: pytest.fail("set_annotations re-read the text"))
    assert calibrate_entity_bias(pipe, examples) == expected and calls == [len(examples)]


def test_set_annotations_with_the_text_given_writes_what_it_writes_without():
    nlp, pipe, examples = _pipe("crf")
    docs = [eg.predicted.copy() for eg in examples]
    twins = [d.copy() for d in docs]
    scores = pipe.predict(docs)
    from spacy_auc_ner.ml.decoding import text_arrays

    pipe.set_annotations(docs, scores, entity_bias=0.5)
    pipe.set_annotations(twins, scores, entity_bias=0.5, text=text_arrays(twins))
    assert [[(e.start, e.end, e.label_) for e in d.ents] for d in docs] == [[(e.start, e.end, e.label_) for e in d.ents] for d in twins]
    assert any(d.ents for d in docs)


def test_the_callback_calibrates_at_evaluation_steps_only(toy_corpus):
    nlp, pipe, examples = _pipe("crf")
    nlp.config["paths"]["dev"] = str(toy_corpus / "dev.spacy")
    nlp.config["corpora"] = {"dev": {"@readers": "spacy.Corpus.v1", "path": "${paths.dev}", "gold_preproc": False}}
    nlp.config["training"]["eval_frequency"] = 10
    callback = make_calibrate_entity_bias()
    pipe.cfg["entity_bias"] = 123.0
    callback(nlp, {"step": 3, "epoch": 0})
    assert pipe.cfg["entity_bias"] == 123.0
    callback(nlp, {"step": 10, "epoch": 0})
    assert pipe.cfg["entity_bias"] != 123.0
    assert nlp.config["components"]["auc_ner"]["entity_bias"] == pipe.cfg["entity_bias"]  # what model-best's config.cfg says


def test_bad_rates_are_refused():
    with pytest.raises(ValueError, match=r"rates\] every rate must be in \(0, 1\)"):
        make_calibrate_entity_bias(rates=[0.1, 1.5])


def test_bad_callback_settings_name_their_key_when_made_or_first_called(toy_corpus):
    """An unknown metric was a KeyError at the first evaluation (ents_per_type, a dict, a
    TypeError), a quoted rate a TypeError, a pipe not in the pipeline spaCy's KeyError."""
    with pytest.raises(ValueError, match=r"^\[training.before_update.metric\] unknown metric 'ents_x'; choose one of ents_p, "):
        make_calibrate_entity_bias(metric="ents_x")
    with pytest.raises(ValueError, match=r"^\[training.before_update.metric\] unknown metric 'ents_per_type'"):
        make_calibrate_entity_bias(metric="ents_per_type")
    with pytest.raises(ValueError, match=r"^\[training.before_update.rates\] every rate must be in \(0, 1\), not '0.5'$"):
        make_calibrate_entity_bias(rates=["0.5"])
    nlp, pipe, examples = _pipe("crf")
    nlp.config["paths"]["dev"] = str(toy_corpus / "dev.spacy")
    nlp.config["corpora"] = {"dev": {"@readers": "spacy.Corpus.v1", "path": "${paths.dev}", "gold_preproc": False}}
    nlp.config["training"]["eval_frequency"] = 10
    with pytest.raises(ValueError, match=r"^\[training.before_update.component\] 'ner' is not an auc_ner pipe of the pipeline \(its auc_ner pipes: auc_ner\)$"):
        make_calibrate_entity_bias(component="ner")(nlp, {"step": 0, "epoch": 0})


def test_an_eval_frequency_of_0_names_its_key(toy_corpus):
    """It was a ZeroDivisionError (step % 0) at the first step."""
    nlp, pipe, examples = _pipe("crf")
    nlp.config["paths"]["dev"] = str(toy_corpus / "dev.spacy")
    nlp.config["corpora"] = {"dev": {"@readers": "spacy.Corpus.v1", "path": "${paths.dev}", "gold_preproc": False}}
    nlp.config["training"]["eval_frequency"] = 0
    with pytest.raises(ValueError, match=r"^\[training.eval_frequency\]: must be 1 or more, not 0$"):
        make_calibrate_entity_bias()(nlp, {"step": 0, "epoch": 0})


def test_the_callback_chooses_on_the_weights_spacy_evaluates(toy_corpus, monkeypatch):
    """With use_averages, spaCy evaluates and saves the averaged weights: the bias is chosen on them."""
    from thinc.api import Adam

    nlp, pipe, examples = _pipe("crf")
    nlp.config["paths"]["dev"] = str(toy_corpus / "dev.spacy")
    nlp.config["corpora"] = {"dev": {"@readers": "spacy.Corpus.v1", "path": "${paths.dev}", "gold_preproc": False}}
    nlp.config["training"]["eval_frequency"] = 10
    optimizer = Adam(0.05, use_averages=True)
    for _ in range(3):
        nlp.update(examples, sgd=optimizer)
    head = pipe.model.get_ref("output")
    raw, averaged = head.get_param("W").copy(), optimizer.averages[(head.id, "W")].copy()
    assert not numpy.allclose(raw, averaged)
    seen = []
    predict = pipe.predict
    monkeypatch.setattr(pipe, "predict", lambda docs: seen.append(head.get_param("W").copy()) or predict(docs))
    make_calibrate_entity_bias()(nlp, {"step": 10, "epoch": 0})
    assert len(seen) == 1 and numpy.allclose(seen[0], averaged)
    numpy.testing.assert_array_equal(head.get_param("W"), raw)  # the raw weights back for the update
