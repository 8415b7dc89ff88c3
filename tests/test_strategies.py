import numpy
import pytest

from spacy_auc_ner.pipeline.settings import check_trains
from spacy_auc_ner.pipeline.strategies import GroupedByPrefix, SampledClassifiers, UpdateStrategy
from spacy_auc_ner.schemes import make_scheme

COLUMNS = ["O", "B-LOC", "I-LOC", "B-PER", "I-PER"]


def test_all():
    (plan,) = UpdateStrategy().plan(COLUMNS, 0)
    assert plan.tolist() == [1, 1, 1, 1, 1]


def test_grouped_is_one_step_per_prefix_covering_every_column_once():
    plan = GroupedByPrefix().plan(COLUMNS, 0)
    assert [p.tolist() for p in plan] == [[0, 1, 0, 1, 0], [0, 0, 1, 0, 1], [1, 0, 0, 0, 0]]
    assert (sum(plan) == 1).all()


def test_sampled_draws_m_reproducibly_and_varies_by_step():
    s = SampledClassifiers(m=2, seed=3)
    draws = [s.plan(COLUMNS, step)[0] for step in range(50)]
    assert all(d.sum() == 2 for d in draws)
    assert all((a == b).all() for a, b in zip(draws, [SampledClassifiers(m=2, seed=3).plan(COLUMNS, i)[0] for i in range(50)]))
    # every classifier gets drawn, at about m/K of the steps
    freq = numpy.mean(draws, axis=0)
    assert (freq > 0.2).all() and (freq < 0.6).all()
    assert SampledClassifiers(m=5).plan(COLUMNS, 0)[0].tolist() == [1, 1, 1, 1, 1]  # m = K: every one


def test_strategies_refuse_other_schemes():
    with pytest.raises(ValueError, match=r"^\[strategy\] 'grouped' \(it picks OVA classifiers\) cannot train scheme 'two_task': it needs bio columns"):
        check_trains(make_scheme("two_task"), GroupedByPrefix(), "strategy", "scheme")
    for name in ("softmax", "crf", "two_task"):
        check_trains(make_scheme(name), UpdateStrategy(), "strategy", "scheme")
        assert SampledClassifiers().unmet_need(make_scheme(name).capabilities) is not None
    assert GroupedByPrefix().unmet_need(make_scheme("ova").capabilities) is None


def test_settings_are_checked_under_the_given_key():
    with pytest.raises(ValueError, match=r"^\[components.ner.strategy.m\] must be a whole number >= 1, not 0$"):
        SampledClassifiers(m=0).validate("components.ner.strategy")
    with pytest.raises(ValueError, match=r"^\[components.ner.strategy.seed\] must be a whole number >= 0, not -1$"):
        SampledClassifiers(m=2, seed=-1).validate("components.ner.strategy")
    with pytest.raises(ValueError, match=r"^\[components.ner.strategy\] 'sampled' \(it picks OVA classifiers\) cannot train scheme 'crf'"):
        check_trains(make_scheme("crf"), SampledClassifiers(m=2), "components.ner.strategy", "components.ner.scheme")
    SampledClassifiers(m=1).validate()


def test_an_m_above_the_number_of_classifiers_is_refused_naming_its_key():
    """m = 9 of 5 classifiers was cut down to 5, silently: every classifier at every step."""
    s = SampledClassifiers(m=9)
    s.validate("components.ner.strategy")  # the count is not known yet
    with pytest.raises(ValueError, match=r"^\[components.ner.strategy.m\] must be at most 5, the number of classifiers the pipe has "
                                         r"\(one per BIO label of its entity types\), not 9$"):
        s.plan(COLUMNS, 0)
    with pytest.raises(ValueError, match=r"^\[strategy.m\] must be at most 3, .* not 4$"):
        SampledClassifiers(m=4).plan(COLUMNS[:3], 0)  # never told its key: the block's own


SMALL_MODEL = {
    "@architectures": "spacy_auc_ner.TokenScorer.v2",
    "tok2vec": {"@architectures": "spacy.HashEmbedCNN.v2", "width": 8, "depth": 1, "embed_size": 50, "window_size": 1,
                "maxout_pieces": 2, "subword_features": False, "pretrained_vectors": None},
}


def test_a_pipe_with_fewer_classifiers_than_m_is_refused_at_initialize_or_its_first_update():
    """One entity type, scheme ova: 3 classifiers (O, B-PER, I-PER). m = 99 is refused once the
    pipe knows its count: at initialize (labels may come from the data), or, for a pipe that
    resumes without initialize (sourced), at its first update, before any weight moves; m = 3
    trains."""
    import spacy
    from spacy.tokens import Doc
    from spacy.training import Example

    message = r"^\[components.auc_ner.strategy.m\] must be at most 3, the number of classifiers the pipe has \(one per BIO label of its entity types\), not 99$"

    def pipeline(m):
        nlp = spacy.blank("en")
        strategy = {"@misc": "spacy_auc_ner.SampledClassifiers.v1", "m": m}
        nlp.add_pipe("auc_ner", config={"model": SMALL_MODEL, "strategy": strategy})
        doc = Doc(nlp.vocab, words=["Alice", "sings", "."], ents=["B-PER", "O", "O"])
        examples = [Example(nlp.make_doc(doc.text), doc)]
        return nlp, examples

    nlp, examples = pipeline(99)
    with pytest.raises(ValueError, match=message):
        nlp.initialize(lambda: examples)
    nlp, examples = pipeline(3)
    optimizer = nlp.initialize(lambda: examples)
    ner = nlp.get_pipe("auc_ner")
    assert ner.columns == ["O", "B-PER", "I-PER"]
    nlp.update(examples, sgd=optimizer)
    assert ner.cfg["n_updates"] == 1
    ner.strategy.m = 99  # as a sourced pipe resumed under another strategy setting
    before = ner.model.get_ref("output").get_param("W").copy()
    with pytest.raises(ValueError, match=message):
        nlp.update(examples, sgd=optimizer)
    assert (ner.model.get_ref("output").get_param("W") == before).all() and ner.cfg["n_updates"] == 1


def test_sampled_draws_every_set_of_m_classifiers_with_equal_probability():
    """Algorithm 2 samples m of the K classes: by hand, each of the C(5, 2) = 10 pairs with
    probability 1/10 (and, for m = 1, each classifier with 1/5). Over 3000 steps the count of a
    pair has sd sqrt(3000 .1 .9) = 16.4 around 300; allow 5 sd."""
    from collections import Counter
    from itertools import combinations

    s = SampledClassifiers(m=2, seed=11)
    pairs = Counter(tuple(numpy.flatnonzero(s.plan(COLUMNS, step)[0]).tolist()) for step in range(3000))
    assert set(pairs) == set(combinations(range(5), 2))
    assert all(abs(n - 300) < 5 * 16.4 for n in pairs.values()), pairs
    single = Counter(int(numpy.flatnonzero(SampledClassifiers(m=1, seed=11).plan(COLUMNS, step)[0])[0]) for step in range(3000))
    assert all(abs(n - 600) < 5 * 21.9 for n in single.values()) and len(single) == 5, single
    for step in (0, 1, 2):  # weights are 0/1 only
        assert set(s.plan(COLUMNS, step)[0].tolist()) == {0.0, 1.0}
