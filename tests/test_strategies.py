import numpy
import pytest

from spacy_auc_ner.pipeline.component import check_trains
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
    assert SampledClassifiers(m=9).plan(COLUMNS, 0)[0].sum() == 5


def test_strategies_refuse_other_schemes():
    with pytest.raises(ValueError, match=r"^\[strategy\] 'grouped' \(it picks OVA classifiers\) cannot train scheme 'two_task': it needs bio columns"):
        check_trains(make_scheme("two_task"), GroupedByPrefix(), "strategy", "scheme")
    for name in ("softmax", "crf", "two_task"):
        check_trains(make_scheme(name), UpdateStrategy(), "strategy", "scheme")
        assert SampledClassifiers().unmet_need(make_scheme(name).capabilities) is not None
    assert GroupedByPrefix().unmet_need(make_scheme("ova").capabilities) is None


def test_settings_are_checked_under_the_given_key():
    with pytest.raises(ValueError, match=r"^\[components.ner.strategy.m\] must be >= 1, not 0$"):
        SampledClassifiers(m=0).validate("components.ner.strategy")
    with pytest.raises(ValueError, match=r"^\[components.ner.strategy.seed\] must be >= 0"):
        SampledClassifiers(m=2, seed=-1).validate("components.ner.strategy")
    with pytest.raises(ValueError, match=r"^\[components.ner.strategy\] 'sampled' \(it picks OVA classifiers\) cannot train scheme 'crf'"):
        check_trains(make_scheme("crf"), SampledClassifiers(m=2), "components.ner.strategy", "components.ner.scheme")
    SampledClassifiers(m=1).validate()
