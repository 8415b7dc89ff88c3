"""The entity scorer: hand-computed typed, untyped and seqeval scores; never None or NaN."""
import json
import math
import os
import warnings

import pytest
import spacy
from hypothesis import given, settings
from hypothesis import strategies as st
from spacy.tokens import Doc, DocBin, Span
from spacy.training import Example

from spacy_auc_ner.pipeline.scoring import METRICS, score_entities

VOCAB = spacy.blank("en").vocab


def _doc(words, ents):
    """A Doc with entities (start, end, label); other tokens O."""
    tags = ["O"] * len(words)
    for start, end, label in ents:
        tags[start : end] = [f"B-{label}"] + [f"I-{label}"] * (end - start - 1)
    return Doc(VOCAB, words=words, ents=tags)


def _example(words, pred, gold):
    return Example(_doc(words, pred), _doc(words, gold))


def _scalars(scores):
    return {k: v for k, v in scores.items() if k != "ents_per_type"}


# doc 1: gold PER a-b, LOC d, ORG f; predicted LOC a-b (span right, type wrong), LOC d (right),
#        ORG e-f (span wrong). doc 2: no gold; predicted PER b (wrong).
# typed:   tp 1 (LOC d), fp 3, fn 2 -> P 1/4, R 1/3, F 2PR/(P+R) = (1/6)/(7/12) = 2/7
# untyped: tp 2 (a-b, d), fp 2, fn 1 -> P 1/2, R 2/3, F (2/3)/(7/6) = 4/7
# seqeval macro over LOC, ORG, PER: LOC P 1/2 R 1 F 2/3; ORG and PER 0 -> P 1/6, R 1/3, F 2/9
HAND = [
    _example(list("abcdef"), pred=[(0, 2, "LOC"), (3, 4, "LOC"), (4, 6, "ORG")],
             gold=[(0, 2, "PER"), (3, 4, "LOC"), (5, 6, "ORG")]),
    _example(list("abc"), pred=[(1, 2, "PER")], gold=[]),
]


def test_hand_computed_typed_untyped_and_seqeval():
    scores = score_entities(HAND)
    expected = {
        "ents_p": 1 / 4, "ents_r": 1 / 3, "ents_f": 2 / 7,
        "ents_untyped_p": 1 / 2, "ents_untyped_r": 2 / 3, "ents_untyped_f": 4 / 7,
        "ents_seqeval_micro_p": 1 / 4, "ents_seqeval_micro_r": 1 / 3, "ents_seqeval_micro_f": 2 / 7,
        "ents_seqeval_macro_p": 1 / 6, "ents_seqeval_macro_r": 1 / 3, "ents_seqeval_macro_f": 2 / 9,
    }
    assert _scalars(scores) == pytest.approx(expected)
    assert set(_scalars(scores)) == set(METRICS)
    assert scores["ents_per_type"]["LOC"] == pytest.approx({"p": 1 / 2, "r": 1.0, "f": 2 / 3})
    assert scores["ents_per_type"]["PER"] == pytest.approx({"p": 0.0, "r": 0.0, "f": 0.0})


def test_untyped_ignores_predictions_over_missing_gold_like_spacy():
    words = list("abcd")
    gold = Doc(VOCAB, words=words, ents=["B-X", "O", None, "O"])  # token c: no annotation
    pred = _doc(words, [(0, 1, "Y"), (2, 3, "X")])  # a: span right, type wrong; c: not scored
    scores = score_entities([Example(pred, gold)])
    assert (scores["ents_p"], scores["ents_r"]) == (0.0, 0.0)  # spaCy: c ignored, a wrong type
    assert (scores["ents_untyped_p"], scores["ents_untyped_r"], scores["ents_untyped_f"]) == (1.0, 1.0, 1.0)


@pytest.mark.parametrize(
    "examples",
    [
        [],  # nothing to score
        [_example([], [], [])],  # an empty Doc
        [_example(list("ab"), [], [])],  # tokens, no entity in gold or prediction
    ],
    ids=["no-examples", "empty-doc", "no-entities"],
)
def test_empty_cases_are_zero_never_none_or_nan(examples):
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # seqeval's macro average over no type warned and gave NaN
        scores = score_entities(examples)
    assert _scalars(scores) == {name: 0.0 for name in METRICS}
    assert scores["ents_per_type"] == {}


def test_prediction_without_gold_and_gold_without_prediction():
    only_pred = score_entities([_example(list("ab"), [(0, 1, "X")], [])])
    assert (only_pred["ents_p"], only_pred["ents_r"], only_pred["ents_seqeval_macro_p"]) == (0.0, 0.0, 0.0)
    only_gold = score_entities([_example(list("ab"), [], [(0, 1, "X")])])
    assert (only_gold["ents_untyped_p"], only_gold["ents_untyped_r"], only_gold["ents_seqeval_macro_r"]) == (0.0, 0.0, 0.0)


@st.composite
def _spans(draw, n, types):
    spans, i = [], 0
    while i < n:
        if draw(st.booleans()):
            end = draw(st.integers(i + 1, min(n, i + 3)))
            spans.append((i, end, draw(st.sampled_from(types))))
            i = end
        else:
            i += 1
    return spans


@st.composite
def _examples(draw, types=("A", "B")):
    out = []
    for _ in range(draw(st.integers(0, 3))):
        n = draw(st.integers(0, 6))
        out.append(_example([f"w{i}" for i in range(n)], draw(_spans(n, types)), draw(_spans(n, types))))
    return out


@settings(max_examples=60, deadline=None)
@given(_examples())
def test_scores_are_finite_fractions_and_untyped_is_never_below_typed(examples):
    scores = score_entities(examples)
    assert all(isinstance(v, float) and 0.0 <= v <= 1.0 and not math.isnan(v) for v in _scalars(scores).values())
    for m in "prf":
        assert scores[f"ents_untyped_{m}"] >= scores[f"ents_{m}"] - 1e-12
    assert scores["ents_seqeval_micro_f"] == pytest.approx(scores["ents_f"])


@settings(max_examples=30, deadline=None)
@given(_examples(types=("A",)))
def test_with_one_type_untyped_equals_typed(examples):
    scores = score_entities(examples)
    for m in "prf":
        assert scores[f"ents_untyped_{m}"] == pytest.approx(scores[f"ents_{m}"])


def test_spacy_evaluate_output_on_gold_without_entities(tmp_path):
    """`spacy evaluate --output` wrote NaN macro scores here, which srsly refused (issue 13.2)."""
    from spacy.cli.evaluate import evaluate

    nlp = spacy.blank("en")
    ruler = nlp.add_pipe("entity_ruler", config={"scorer": {"@scorers": "spacy_auc_ner.entity_scorer.v1"}})
    ruler.add_patterns([{"label": "X", "pattern": "zzz"}])  # predicts nothing here
    nlp.to_disk(tmp_path / "model")
    DocBin(docs=[Doc(nlp.vocab, words="nothing to see".split(), ents=["O"] * 3)]).to_disk(tmp_path / "dev.spacy")
    with warnings.catch_warnings():
        warnings.simplefilter("error", RuntimeWarning)
        evaluate(str(tmp_path / "model"), tmp_path / "dev.spacy", output=tmp_path / "scores.json")
    scores = json.loads((tmp_path / "scores.json").read_text())
    assert {name: scores[name] for name in METRICS} == {name: 0.0 for name in METRICS}


TRAIN_CONFIG = """
[paths]
train = null
dev = null

[nlp]
lang = "en"
pipeline = ["auc_ner"]

[components]

[components.auc_ner]
factory = "auc_ner"

[components.auc_ner.scheme]
@misc = "spacy_auc_ner.TwoTask.v1"
threshold = 0.999

[corpora]

[corpora.train]
@readers = "spacy.Corpus.v1"
path = ${paths.train}

[corpora.dev]
@readers = "spacy.Corpus.v1"
path = ${paths.dev}

[training]
max_steps = 4
eval_frequency = 2
"""


@pytest.mark.slow
def test_training_with_a_dev_set_without_entities_warns_nothing(tmp_path):
    """A dev set with no entity, and a pipeline that predicts none: spaCy's scorer gave
    ents_f = None there, which stopped training (E915)."""
    from spacy.training.initialize import init_nlp
    from spacy.training.loop import train
    from spacy.util import load_config_from_str, load_model_from_config

    from toy_data import TOY

    vocab = spacy.blank("en").vocab
    DocBin(docs=[Doc(vocab, words=w, ents=t) for w, t in TOY]).to_disk(tmp_path / "train.spacy")
    DocBin(docs=[Doc(vocab, words=w, ents=["O"] * len(w)) for w, _ in TOY]).to_disk(tmp_path / "dev.spacy")
    paths = {"paths.train": str(tmp_path / "train.spacy"), "paths.dev": str(tmp_path / "dev.spacy")}
    config = load_model_from_config(load_config_from_str(TRAIN_CONFIG, overrides=paths), auto_fill=True).config
    (tmp_path / "out").mkdir()
    with warnings.catch_warnings(record=True) as caught, open(os.devnull, "w") as sink:
        warnings.simplefilter("always")
        nlp = init_nlp(config)
        train(nlp, tmp_path / "out", stdout=sink, stderr=sink)
    ours = [w for w in caught if issubclass(w.category, RuntimeWarning) or "seqeval" in w.filename or "spacy_auc_ner" in w.filename]
    assert ours == [], [str(w.message) for w in ours]
    meta = json.loads((tmp_path / "out" / "model-last" / "meta.json").read_text())
    assert meta["performance"]["ents_f"] == 0.0


def test_strict_iob2_entities_by_hand():
    from spacy_auc_ner.pipeline.scoring import iob2_entities

    # I-A after O and I-B after A begin nothing (strict); B-A B-A are two entities
    tags = ["I-A", "B-A", "I-A", "I-B", "O", "B-A", "B-A", "I-A", "B-B"]
    assert iob2_entities(tags) == [("A", 1, 3), ("A", 5, 6), ("A", 6, 8), ("B", 8, 9)]
    assert iob2_entities([]) == [] and iob2_entities(["O", "I-A"]) == []
    with pytest.raises(ValueError, match="not an IOB2 tag: 'U-A'"):
        iob2_entities(["U-A"])


_TAG = st.sampled_from(["O", "B-A", "I-A", "B-B", "I-B"])


@settings(max_examples=200, deadline=None)
@given(st.lists(st.integers(0, 7), min_size=1, max_size=4).flatmap(
    lambda ns: st.tuples(*[st.tuples(st.lists(_TAG, min_size=n, max_size=n), st.lists(_TAG, min_size=n, max_size=n)) for n in ns])))
def test_seqeval_scores_equal_seqeval_strict_iob2_also_on_ill_formed_tags(pairs):
    """The package scores seqeval's strict IOB2 without depending on seqeval (whose
    scikit-learn would bring scipy into a plain install); seqeval itself is a test extra."""
    from seqeval.metrics.v1 import precision_recall_fscore_support
    from seqeval.scheme import IOB2, Tokens

    from spacy_auc_ner.pipeline.scoring import iob2_entities, seqeval_scores

    y_true, y_pred = [list(t) for t, _ in pairs], [list(p) for _, p in pairs]
    for tags in y_true + y_pred:
        assert iob2_entities(tags) == [(e.tag, e.start, e.end) for e in Tokens(tags, IOB2).entities]
    ours = seqeval_scores(y_true, y_pred)
    kept = [(t, p) for t, p in zip(y_true, y_pred) if t or p]
    if not any(iob2_entities(t) or iob2_entities(p) for t, p in kept):
        assert set(ours.values()) == {0.0}  # seqeval's macro average over no type is NaN
        return
    t, p = [a for a, _ in kept], [b for _, b in kept]
    kw = dict(mode="strict", scheme=IOB2, zero_division=0)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        micro = precision_recall_fscore_support(t, p, average="micro", **kw)[:3]
        macro = [float(v.mean()) for v in precision_recall_fscore_support(t, p, average=None, **kw)[:3]]
    assert [ours[f"ents_seqeval_micro_{m}"] for m in "prf"] == pytest.approx([float(v) for v in micro], abs=1e-12)
    assert [ours[f"ents_seqeval_macro_{m}"] for m in "prf"] == pytest.approx(macro, abs=1e-12)


def _partly_annotated():
    """Doc 1, words a-i: gold PER a, LOC e-f, ORG h, O elsewhere but c-d, whose annotation is
    missing; predicted PER a (right), PER b-c and LOC d (over missing gold: not scored), LOC e-f
    (right), MISC g and LOC i (wrong). Doc 2, words x-z: no annotation at all (not scored),
    predicted PER x and LOC y-z."""
    gold = Doc(VOCAB, words=list("abcdefghi"))
    gold.set_ents([Span(gold, 0, 1, "PER"), Span(gold, 4, 6, "LOC"), Span(gold, 7, 8, "ORG")],
                  missing=[Span(gold, 2, 4)], default="outside")
    pred = _doc(list("abcdefghi"), [(0, 1, "PER"), (1, 3, "PER"), (3, 4, "LOC"), (4, 6, "LOC"), (6, 7, "MISC"), (8, 9, "LOC")])
    unannotated = Doc(VOCAB, words=list("xyz"))
    return [Example(pred, gold), Example(_doc(list("xyz"), [(0, 1, "PER"), (1, 3, "LOC")]), unannotated)]


def test_seqeval_scores_what_spacy_scores_on_missing_annotation():
    """Scored: tp 2 (PER a, LOC e-f), fp 2 (MISC g, LOC i), fn 1 (ORG h): micro P 2/4, R 2/3,
    F (2/3)/(7/6) = 4/7, as spaCy's ents_*. Macro over PER (1, 1, 1), LOC (1/2, 1, 2/3), ORG and
    MISC (0, 0, 0): P 3/8, R 2/4, F (5/3)/4 = 5/12. The old rule (missing gold as O, every doc)
    counted the 4 unscored predictions as wrong: micro P 2/8."""
    from spacy.scorer import get_ner_prf

    examples = _partly_annotated()
    assert [t.ent_iob for t in examples[0].reference] == [3, 2, 0, 0, 3, 1, 2, 3, 2]
    assert not examples[1].reference.has_annotation("ENT_IOB")
    scores = score_entities(examples)
    assert _scalars(scores) == pytest.approx({
        "ents_p": 1 / 2, "ents_r": 2 / 3, "ents_f": 4 / 7,
        "ents_untyped_p": 1 / 2, "ents_untyped_r": 2 / 3, "ents_untyped_f": 4 / 7,
        "ents_seqeval_micro_p": 1 / 2, "ents_seqeval_micro_r": 2 / 3, "ents_seqeval_micro_f": 4 / 7,
        "ents_seqeval_macro_p": 3 / 8, "ents_seqeval_macro_r": 1 / 2, "ents_seqeval_macro_f": 5 / 12,
    })
    spacy_scores = get_ner_prf(examples)
    for m in "prf":
        assert scores[f"ents_seqeval_micro_{m}"] == pytest.approx(spacy_scores[f"ents_{m}"])


def test_a_doc_without_annotation_changes_no_score():
    """As spaCy's scorer: doc 2's 2 predictions count neither way (the old rule took them as
    wrong: micro P 2/8 with doc 2, 2/6 without)."""
    examples = _partly_annotated()
    assert _scalars(score_entities(examples)) == _scalars(score_entities(examples[:1]))
    assert _scalars(score_entities(examples[1:])) == {name: 0.0 for name in METRICS}


@st.composite
def _partly_annotated_examples(draw, types=("A", "B")):
    """Examples whose gold leaves some tokens outside its entities unannotated, or a whole doc."""
    out = []
    for _ in range(draw(st.integers(1, 3))):
        n = draw(st.integers(1, 6))
        words = [f"w{i}" for i in range(n)]
        tags = [t.ent_iob_ + (f"-{t.ent_type_}" if t.ent_type_ else "") for t in _doc(words, draw(_spans(n, types)))]
        missing = draw(st.lists(st.booleans(), min_size=n, max_size=n))
        ents = [None if m and t == "O" else t for t, m in zip(tags, missing)]
        reference = Doc(VOCAB, words=words) if draw(st.booleans()) else Doc(VOCAB, words=words, ents=ents)
        out.append(Example(_doc(words, draw(_spans(n, types))), reference))
    return out


@settings(max_examples=60, deadline=None)
@given(_partly_annotated_examples())
def test_seqeval_micro_equals_spacys_scores_on_missing_annotation(examples):
    scores = score_entities(examples)
    for m in "prf":
        assert scores[f"ents_seqeval_micro_{m}"] == pytest.approx(scores[f"ents_{m}"])
