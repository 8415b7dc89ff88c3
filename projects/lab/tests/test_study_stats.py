"""Student-t intervals and paired tests, checked against hand computation and printed tables."""
import math

import pytest
from scipy import stats as scipy_stats

from auc_ner_lab.aggregate import aggregate
from auc_ner_lab.stats import holm, paired_t_test, summarize, trend_test


@pytest.mark.parametrize(
    "n,expected",
    # two-sided 95% critical values from a printed t table (df = n - 1)
    [(2, 12.7062), (3, 4.3027), (4, 3.1824), (5, 2.7764), (10, 2.2622), (30, 2.0452)],
)
def test_interval_uses_the_printed_t_table(n, expected):
    # values with sample sd 1 (ddof 1): half width = t * 1 / sqrt(n)
    values = [0.0] * (n - 1) + [1.0]
    s = summarize(values)
    assert s.half_width == pytest.approx(expected * s.std / math.sqrt(n), abs=1e-4 * s.std)


def test_paired_t_test_is_scipys_ttest_rel():
    a = [0.31, 0.42, 0.29, 0.50, 0.37, 0.33]
    b = [0.30, 0.35, 0.31, 0.41, 0.30, 0.36]
    ours, theirs = paired_t_test(a, b), scipy_stats.ttest_rel(a, b)
    assert ours.t == pytest.approx(theirs.statistic, rel=1e-12)
    assert ours.p_value == pytest.approx(theirs.pvalue, rel=1e-12)
    low, high = theirs.confidence_interval(0.95)
    s = summarize([x - y for x, y in zip(a, b)])
    assert (s.low, s.high) == (pytest.approx(low, abs=1e-12), pytest.approx(high, abs=1e-12))


def test_summarize_by_hand():
    # mean 0.6, sd 0.1, t(0.975, 2) = 4.302653 -> half width 4.302653 * 0.1 / sqrt(3) = 0.248414
    s = summarize([0.5, 0.6, 0.7])
    assert (s.n, s.mean, s.std) == (3, pytest.approx(0.6), pytest.approx(0.1))
    assert s.half_width == pytest.approx(0.248414, abs=1e-6)
    assert (s.low, s.high) == (pytest.approx(0.6 - 0.248414, abs=1e-6), pytest.approx(0.6 + 0.248414, abs=1e-6))
    # 90%: t(0.95, 2) = 2.919986
    assert summarize([0.5, 0.6, 0.7], 0.90).half_width == pytest.approx(2.919986 * 0.1 / math.sqrt(3), abs=1e-6)
    one = summarize([0.42])
    assert one.mean == 0.42 and one.half_width is None and one.low is None
    with pytest.raises(ValueError):
        summarize([])


def test_paired_t_test_by_hand():
    # d = (0.10, 0.15, 0.05): mean 0.10, sd 0.05, t = 0.10 / (0.05 / sqrt 3) = 2 sqrt 3;
    # df 2 two-sided p = 1 - t / sqrt(2 + t^2) = 1 - sqrt(12 / 14) = 0.0741799
    r = paired_t_test([0.60, 0.70, 0.65], [0.50, 0.55, 0.60])
    assert r.n == 3 and r.mean_diff == pytest.approx(0.10)
    assert r.t == pytest.approx(2 * math.sqrt(3))
    assert r.p_value == pytest.approx(1 - math.sqrt(12 / 14), abs=1e-9)
    flipped = paired_t_test([0.50, 0.55, 0.60], [0.60, 0.70, 0.65])
    assert flipped.t == pytest.approx(-r.t) and flipped.p_value == pytest.approx(r.p_value)
    # ratio of the means: 0.65 / 0.55 and back
    assert r.ratio == pytest.approx(0.65 / 0.55) and flipped.ratio == pytest.approx(0.55 / 0.65)


def test_paired_t_test_degenerate():
    assert paired_t_test([0.5], [0.4]).p_value is None
    assert paired_t_test([0.5], [0.4]).ratio == pytest.approx(1.25)
    assert paired_t_test([0.5, 0.1], [0.0, 0.0]).ratio is None  # no ratio to a zero F1
    same = paired_t_test([0.5, 0.6], [0.5, 0.6])
    assert same.p_value == 1.0 and same.t == 0.0
    shifted = paired_t_test([0.6, 0.7], [0.5, 0.6])
    assert shifted.p_value == 0.0 and shifted.t == math.inf
    with pytest.raises(ValueError):
        paired_t_test([0.1, 0.2], [0.1])


def _row(method, partition, f, size=50, status="ok", corpus="c"):
    row = {"cell_id": f"{corpus}/{method}/n={size}/p{partition}", "corpus": corpus, "setting": "lowres",
           "size": size, "value": None, "method": method, "partition": partition, "status": status}
    if status == "ok":
        row["scores"] = {"ents_seqeval_micro_f": f, "ents_f": f, "ents_per_type": {"X": {"p": f, "r": f, "f": f}}}
    else:
        row["error"] = "ValueError: boom"
    return row


def test_aggregate_made_up_results_by_hand():
    rows = [
        _row("ova_auc", 0, 0.60), _row("ova_auc", 1, 0.70), _row("ova_auc", 2, 0.65),
        _row("ce", 0, 0.50), _row("ce", 1, 0.55), _row("ce", 2, 0.60),
        _row("ova_bce", 0, 0.5), _row("ova_bce", 1, 0.6), _row("ova_bce", 2, 0.0, status="failed"),
        _row("ce", 0, 0.50, size=100),
    ]
    out = aggregate(rows, baseline="ce")
    assert [(r.size, r.method) for r in out] == [(50, "ce"), (50, "ova_auc"), (50, "ova_bce"), (100, "ce")]
    ce, auc, bce, ce100 = out
    assert ce.summary.mean == pytest.approx(0.55) and ce.summary.std == pytest.approx(0.05)
    assert ce.summary.half_width == pytest.approx(4.302653 * 0.05 / math.sqrt(3), abs=1e-6)
    assert ce.vs_baseline is None
    assert auc.vs_baseline.p_value == pytest.approx(1 - math.sqrt(12 / 14), abs=1e-9)
    assert auc.per_type == {"X": pytest.approx(0.65)}
    # the failed partition is left out of the mean and of the pairs, and counted
    assert bce.summary.n == 2 and bce.failed == 1 and bce.vs_baseline.n == 2
    assert bce.summary.half_width == pytest.approx(12.706205 * math.sqrt(0.005) / math.sqrt(2), abs=1e-5)
    assert bce.vs_baseline.mean_diff == pytest.approx(0.0 + 0.025)
    assert ce100.summary.n == 1 and ce100.summary.half_width is None


def test_aggregate_takes_the_last_ok_row_of_a_cell():
    rows = [_row("ce", 0, 0.1, status="failed"), _row("ce", 0, 0.3), _row("ce", 0, 0.9, status="failed")]
    (ce,) = aggregate(rows)
    assert ce.scores == {0: 0.3} and ce.failed == 0


def test_holm_by_hand():
    # m = 3 tests: sorted 0.01, 0.02, 0.04 -> 3 * 0.01 = 0.03, max(0.03, 2 * 0.02) = 0.04,
    # max(0.04, 1 * 0.04) = 0.04; None is no test and stays None
    assert holm([0.04, None, 0.01, 0.02]) == pytest.approx([0.04, None, 0.03, 0.04])
    # monotone: a larger raw p never gets a smaller adjusted one; capped at 1
    assert holm([0.5, 0.3]) == pytest.approx([0.6, 0.6])
    assert holm([0.9, 0.8, 0.7]) == pytest.approx([1.0, 1.0, 1.0])
    assert holm([]) == [] and holm([None]) == [None]


def test_trend_test_by_hand():
    # slopes of the gap on x per unit: 1, 2 and 0 (mean 1, sd 1): t = 1 / (1 / sqrt 3) = sqrt 3,
    # df 2 two-sided p = 1 - t / sqrt(2 + t^2) = 1 - sqrt(3 / 5); a unit with one x has no slope
    gaps = {0: {0.0: 0.0, 1.0: 1.0, 2.0: 2.0}, 1: {0.0: 0.0, 1.0: 2.0, 2.0: 4.0}, 2: {0.0: 1.0, 1.0: 1.0, 2.0: 1.0}, 3: {1.0: 5.0}}
    r = trend_test(gaps)
    assert (r.n, r.points) == (3, 9)
    assert r.mean_slope == pytest.approx(1.0) and r.t == pytest.approx(math.sqrt(3))
    assert r.p_value == pytest.approx(1 - math.sqrt(3 / 5), abs=1e-12)
    # a least-squares slope, not the end points: gaps 0, 3, 0, 3 at x 0..3 -> slope 0.6
    assert trend_test({0: {0: 0.0, 1: 3.0, 2: 0.0, 3: 3.0}, 1: {0: 0.0, 1: 0.0}}).mean_slope == pytest.approx(0.3)
    # the same slope everywhere: no noise, a certain trend (no NaN)
    same = trend_test({0: {0: 0.0, 1: 1.0}, 1: {0: 2.0, 1: 3.0}})
    assert same.p_value == 0.0 and same.t == math.inf
    with pytest.raises(ValueError):
        trend_test({0: {1.0: 0.3}})


def test_a_group_whose_cells_all_failed_has_no_mean_and_no_nan():
    import json

    from auc_ner_lab.report import markdown_report

    out = aggregate([_row("ce", 0, 0.5), _row("ova_auc", 0, 0.0, status="failed")], baseline="ce")
    failed = next(r for r in out if r.method == "ova_auc")
    assert failed.summary.n == 0 and failed.summary.mean is None and failed.failed == 1
    json.dumps([r.to_dict() for r in out], allow_nan=False)  # raises on NaN
    text = markdown_report(out, baseline="ce")
    assert "– (1 failed)" in text and "nan" not in text.lower()


def test_draw_means_by_hand():
    from auc_ner_lab.stats import draw_means

    # draw (c, 0) holds sizes 20 and 50: (0.4, 0.3) and (0.6, 0.2) -> (0.5, 0.25); (c, 1) one pair
    out = draw_means([(("c", 0), 0.4, 0.3), (("c", 1), 0.7, 0.1), (("c", 0), 0.6, 0.2)])
    assert list(out) == [("c", 0), ("c", 1)]
    assert out[("c", 0)] == pytest.approx((0.5, 0.25)) and out[("c", 1)] == pytest.approx((0.7, 0.1))
    assert draw_means([]) == {}
