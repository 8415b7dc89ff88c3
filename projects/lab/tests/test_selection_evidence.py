"""The sentences of the annotation loop's evidence (auc_ner_lab/evidence/selection.py), on
hand-made rows."""
import math
from types import SimpleNamespace

import pytest

from auc_ner_lab.evidence.selection import equivalent_sentences, guard_text, pairs_50, random_curve, readme_short, readme_text


def _results(scores):
    """{(method, corpus, size): result} from {(method, corpus, size): {partition: F1}}."""
    return {key: SimpleNamespace(scores=dict(by)) for key, by in scores.items()}


def test_no_rows_yet_says_so():
    assert readme_text({}, _results({("lowres_best_trf", "c", 50): {0: 0.5}}), ["c"]) == (
        "no rows yet (0 of 90 cells of studies/campaign_selection.yaml).\n")


def test_pairs_are_the_draws_both_have_at_50_random_sentences():
    loop = _results({("mnlp_30", "c", 20): {0: 0.6, 1: 0.7, 2: 0.8}, ("entropy_30", "c", 20): {0: 0.1}})
    random = _results({("lowres_best_trf", "c", 50): {0: 0.5, 1: 0.4}, ("lowres_best_trf", "c", 20): {0: 0.3, 1: 0.3, 2: 0.3},
                       ("crf", "c", 50): {2: 0.9}})
    assert pairs_50(loop, "mnlp_30", random) == ([0.6, 0.7], [0.5, 0.4])
    assert pairs_50(loop, "mnlp_30", random, corpus="d") == ([], [])


def test_the_random_curve_and_its_log_interpolation():
    random = _results({("lowres_best_trf", "c", 20): {0: 0.2, 1: 0.4}, ("lowres_best_trf", "c", 50): {0: 0.5, 1: 0.5},
                       ("lowres_best_trf", "c", 100): {0: 0.6}})
    assert random_curve(random, "c", [0, 1]) == [(20, pytest.approx(0.3)), (50, 0.5)]  # 100 lacks partition 1
    assert random_curve(random, "c", [0]) == [(20, 0.2), (50, 0.5), (100, 0.6)]
    curve = [(20, 0.3), (50, 0.5)]
    # halfway in F1 is halfway in log n: sqrt(20 * 50)
    how, n = equivalent_sentences(0.4, curve)
    assert how == "=" and n == pytest.approx(math.sqrt(20 * 50))
    assert equivalent_sentences(0.5, curve) == ("=", pytest.approx(50.0))
    assert equivalent_sentences(0.2, curve) == ("<", 20)
    assert equivalent_sentences(0.6, curve) == (">", 50)
    assert equivalent_sentences(0.4, []) == ("?", None)


def test_the_sentence_by_hand():
    """Two draws of corpus c: mnlp_30 0.55 and 0.60 against 50 random 0.50 and 0.50: +7.5 points,
    differences 0.05 and 0.10, t = 0.075 / (0.025 sqrt 2 / sqrt 2) = 3 on 1 degree of freedom:
    p = 1 - 2 atan(3) / pi = 0.205; its mean 0.575 on the random curve (20: 0.30, 50: 0.50,
    100: 0.60 on both draws) is 3/4 of the way from 50 to 100 in log n: 50 * 2 ** 0.75 = 84;
    random_30's 0.48 is 9/10 of the way from 20 to 50: 20 * 2.5 ** 0.9 = 46."""
    loop = _results({("mnlp_30", "c", 20): {0: 0.55, 1: 0.60}, ("random_30", "c", 20): {0: 0.50, 1: 0.46}})
    random = _results({("lowres_best_trf", "c", 20): {0: 0.30, 1: 0.30}, ("lowres_best_trf", "c", 50): {0: 0.50, 1: 0.50},
                       ("lowres_best_trf", "c", 100): {0: 0.60, 1: 0.60}})
    text = readme_text(loop, random, ["c"])
    assert text.startswith("4 of 90 cells have rows. 20 drawn + 30 chosen sentences")
    # against its own control random_30: differences 0.05 and 0.14, mean 0.095, their sd 0.045 sqrt 2,
    # t = 0.095 / 0.045 = 2.11: p = 1 - 2 atan(2.11) / pi = 0.282; the interval 0.095 +- 12.706 * 0.045
    assert ("\n| `mnlp_30` | 2 | +7.5 [-24.3, +39.3] points (p = 0.205, 2 draws) | `random_30`: +9.5 [-47.7, +66.7] points "
            "(p = 0.282, 2 draws) | – |\n") in text
    assert "\n| `random_30` | 2 | -2.0 [-27.4, +23.4] points (p = 0.500, 2 draws) | (a random control) | – |\n" in text
    # by corpus: mnlp_30's mean 57.5 is worth 84 random sentences, random_30's 48.0 is worth 46
    assert "\n| `mnlp_30` | c | 57.5 | ≈ 84 random sentences | +9.5 points (p = 0.282, 2 draws) |\n" in text
    assert "\n| `random_30` | c | 48.0 | ≈ 46 random sentences | – |\n" in text
    # neither reference is beaten with p < 0.05: the paper's claim is read against the rows
    assert text.rstrip().endswith("on these rows no strategy beats random choice (none lies above the random references it has, "
                                  "50 random sentences and its own random control, with p < 0.05).")
    assert "Goal (+3 points, p < 0.05) for the best strategy, `mnlp_30`: not met; the F1 of 100 random sentences on at least one corpus: not met" in text
    assert "nan" not in text.lower()


def test_without_100_sentence_rows_the_second_goal_waits():
    loop = _results({("mnlp_30", "c", 20): {0: 0.70, 1: 0.72, 2: 0.74}})
    random = _results({("lowres_best_trf", "c", 20): {0: 0.3, 1: 0.3, 2: 0.3}, ("lowres_best_trf", "c", 50): {0: 0.50, 1: 0.51, 2: 0.52}})
    text = readme_text(loop, random, ["c"])
    assert "| `mnlp_30` | c | 72.0 | more than 50 random sentences | – |" in text
    assert "`mnlp_30`: met; the F1 of 100 random sentences: no 100-sentence rows of its draws yet on these rows.\n" in text


def test_a_method_without_its_50_random_twin_says_so():
    loop = _results({("entropy_30", "c", 20): {3: 0.5}})
    random = _results({("lowres_best_trf", "c", 50): {0: 0.5}})
    text = readme_text(loop, random, ["c"])
    assert "\n| `entropy_30` | 1 | no 50-random row of its draws yet | `random_30`: no rows of its draws yet | – |\n" in text
    assert "\n| `entropy_30` | c | 50.0 | no random curve of its draws yet | – |\n" in text
    assert text.endswith("\nNo strategy has a 50-random row of its draws yet.\n")


def test_the_readmes_short_sentence_names_the_best_with_its_test_and_the_goal():
    """`readme_short` on `test_the_sentence_by_hand`'s rows: the best, `mnlp_30`, +7.5 points
    (p = 0.205, 2 draws); goal not met; interim (4 of 90 cells)."""
    loop = _results({("mnlp_30", "c", 20): {0: 0.55, 1: 0.60}, ("random_30", "c", 20): {0: 0.50, 1: 0.46}})
    random = _results({("lowres_best_trf", "c", 50): {0: 0.50, 1: 0.50}})
    assert readme_short(loop, random) == ("interim, 4 of 90 cells so far: the best strategy, `mnlp_30`, +7.5 points (p = 0.205, "
                                          "2 draws) against 50 random sentences (test F1, paired by draw), +9.5 points (p = 0.282, "
                                          "2 draws) against the loop's own random `random_30`; goal +3 points with p < 0.05: "
                                          "not met so far; no strategy beats random choice on these rows (none lies above both "
                                          "random references with p < 0.05), so `suggest` is a tool here, not a measured gain\n")
    assert readme_short({}, random) == "no rows yet (0 of 90 cells of studies/campaign_selection.yaml)\n"
    assert readme_short(_results({("entropy_30", "c", 20): {3: 0.5}}), random) == (
        "interim, 1 of 90 cells so far; no strategy has a 50-random row of its draws yet\n")


def test_a_random_control_is_never_the_best_strategy_and_device_mixes_are_counted():
    """random_30 lies furthest above 50 random sentences here, yet the best strategy is
    entropy_30 (the controls are not strategies); entropy_30's two draws trained on the GPU
    against CPU 50-random rows, one of them against a CPU random_30 row. Against random_30: the
    differences -0.18 and -0.10, mean -0.14, their sd 0.04 sqrt 2, t = -3.5 on 1 degree of freedom:
    p = 1 - 2 atan(3.5) / pi = 0.177, the interval -0.14 +- 12.706 * 0.04."""
    gpu = {0: "GPU", 1: "GPU"}
    loop = {("entropy_30", "c", 20): SimpleNamespace(scores={0: 0.52, 1: 0.50}, devices=gpu),
            ("random_30", "c", 20): SimpleNamespace(scores={0: 0.70, 1: 0.60}, devices={0: "CPU", 1: "GPU"}),
            ("mnlp_10x3", "c", 20): SimpleNamespace(scores={0: 0.40, 1: 0.40}, devices=gpu)}  # no random_10x3 rows yet
    random = _results({("lowres_best_trf", "c", 50): {0: 0.50, 1: 0.50}})
    short = readme_short(loop, random)
    assert "the best strategy, `entropy_30`, +1.0 points (p = 0.500, 2 draws) against 50 random sentences (test F1, paired by " \
           "draw; 2 of the 2 pairs mix a GPU row with a CPU one), -14.0 points (p = 0.177, 2 draws) against the loop's own " \
           "random `random_30`;" in short
    text = readme_text(loop, random, ["c"])
    assert "| `random_30`: -14.0 [-64.8, +36.8] points (p = 0.177, 2 draws; 1 of the 2 pairs mix a GPU row with a CPU one) |" in text
    assert "| `mnlp_10x3` | 2 | -10.0 [-10.0, -10.0] points (p < 0.001, 2 draws; 2 of the 2 pairs mix a GPU row with a CPU one) | " \
           "`random_10x3`: no rows of its draws yet |" in text
    assert "the best strategy, `entropy_30`" in text


def test_the_100_sentence_random_side_is_nodevs_recipe_at_100():
    """campaign_trf_nodev100: each cell is campaign_trf_nodev's n=50 lowres_best_trf cell of its
    corpus and partition at n = 100 (the same config, seed, learn rate, no dev set); the step
    settings nodev's spec writes per size are the budget's own, which the orchestrator counts."""
    from pathlib import Path

    from auc_ner_lab.spec import load_spec

    lab = Path(__file__).resolve().parents[1]
    hundred = load_spec(lab / "studies" / "campaign_trf_nodev100.yaml", configs_dir=lab / "configs").cells()
    nodev = load_spec(lab / "studies" / "campaign_trf_nodev.yaml", configs_dir=lab / "configs").cells()
    twins = {(c.corpus, c.partition): c for c in nodev if c.method == "lowres_best_trf" and c.size == 50}
    steps = {"training.max_steps", "training.optimizer.learn_rate.warmup_steps", "training.optimizer.learn_rate.total_steps"}
    assert len(hundred) == 15 and {c.size for c in hundred} == {100}
    for cell in hundred:
        twin = twins[(cell.corpus, cell.partition)]
        assert (cell.method, cell.config, cell.seed) == (twin.method, twin.config, twin.seed)
        theirs = {k: v for k, v in twin.overrides.items() if k not in steps}
        theirs["corpora.train"] = {**theirs["corpora.train"], "n": 100}
        assert cell.overrides == theirs, cell.id


def test_rounds_of_ten_are_read_against_the_one_batch_twin():
    """mnlp_10x3 0.60 and 0.50 against mnlp_30 0.55 and 0.40 on the same draws: differences 0.05
    and 0.10, +7.5 points, t = 3 on 1 degree of freedom, p = 1 - 2 atan(3) / pi = 0.205; the
    one-batch methods and a schedule whose twin has no rows say so."""
    from auc_ner_lab.evidence.selection import one_batch_of

    assert one_batch_of("mnlp_10x3") == "mnlp_30" and one_batch_of("random_10x3") == "random_30"
    assert one_batch_of("mnlp_30") is None and one_batch_of("entropy_30") is None
    loop = _results({("mnlp_30", "c", 20): {0: 0.55, 1: 0.40}, ("mnlp_10x3", "c", 20): {0: 0.60, 1: 0.50},
                     ("entropy_10x3", "c", 20): {0: 0.5}})
    random = _results({("lowres_best_trf", "c", 50): {0: 0.50, 1: 0.50}})
    text = readme_text(loop, random, ["c"])
    assert "| `mnlp_30`: +7.5 [-24.3, +39.3] points (p = 0.205, 2 draws) |\n" in text
    assert text.count("| – |\n") >= 1  # mnlp_30 itself chooses in one batch
    assert "| `entropy_30`: no rows of its draws yet |\n" in text


def test_the_readme_says_no_strategy_beats_random_only_when_none_does():
    """mnlp_30 lies 20-22 points above 50 random sentences and 20-24 above random_30 on three
    draws (both p < 0.05): the README's sentence then carries no "no strategy beats" clause;
    with random_30 above it on every draw, it does."""
    random = _results({("lowres_best_trf", "c", 50): {0: 0.50, 1: 0.51, 2: 0.52}})
    winner = _results({("mnlp_30", "c", 20): {0: 0.70, 1: 0.72, 2: 0.74}, ("random_30", "c", 20): {0: 0.50, 1: 0.51, 2: 0.50}})
    assert "goal +3 points with p < 0.05: met so far\n" in readme_short(winner, random)
    loser = _results({("mnlp_30", "c", 20): {0: 0.70, 1: 0.72, 2: 0.74}, ("random_30", "c", 20): {0: 0.80, 1: 0.81, 2: 0.84}})
    assert readme_short(loser, random).endswith("; no strategy beats random choice on these rows (none lies above both random "
                                                "references with p < 0.05), so `suggest` is a tool here, not a measured gain\n")


def test_what_the_methods_chose_by_hand():
    """Two mnlp_30 rows on c: batches of 2 sentences (3 tokens, 1 entity) and 1 + 1 sentences
    (5 and 4 tokens, 0 and 2 entities): 4 sentences, 12 / 4 = 3.0 tokens, 3 / 4 = 0.75 entities;
    no row on d; a row without a selection record adds nothing."""
    from auc_ner_lab.evidence.selection import chosen_table

    rows = [{"method": "mnlp_30", "corpus": "c", "scores": {"selection": {"batches": [{"selected": [4, 9], "tokens": 3, "entities": 1}]}}},
            {"method": "mnlp_30", "corpus": "c", "scores": {"selection": {"batches": [{"selected": [1], "tokens": 5, "entities": 0},
                                                                                      {"selected": [7], "tokens": 4, "entities": 2}]}}},
            {"method": "random_30", "corpus": "c", "scores": {}}]
    table = chosen_table(rows, ["c", "d"])
    assert "\n| `mnlp_30` | 4, 3.0, 0.75 | – |\n" in table and "random_30" not in table
    assert chosen_table(rows[2:], ["c"]) == ""
    loop = _results({("mnlp_30", "c", 20): {0: 0.55}})
    assert "| `mnlp_30` | 4, 3.0, 0.75 | – |" in readme_text(loop, _results({}), ["c", "d"], rows)


def test_the_figure_points_by_hand(tmp_path):
    """The random curve at each size and each method at its 50 sentences, in points: two draws
    40 and 60 are a mean of 50, sd 10 sqrt 2, so the 95 % half width is t(0.975, 1) * sd / sqrt 2
    = 12.706 * 10 points; one draw has no interval; another method's row and a corpus without
    rows are left out; the figure is written whole, the same bytes twice."""
    from auc_ner_lab.evidence.selection import figure_points
    from auc_ner_lab.plots import plot_selection

    loop = _results({("mnlp_30", "c", 20): {0: 0.4, 1: 0.6}, ("random_30", "c", 20): {0: 0.3}})
    random = _results({("lowres_best_trf", "c", 50): {0: 0.5, 1: 0.5}, ("lowres_best_trf", "c", 20): {0: 0.2},
                       ("crf", "c", 50): {0: 0.9}})
    points = figure_points(loop, random, ["c", "d"])
    assert list(points) == ["c"]
    curve, chosen = points["c"]
    assert curve == [(20, (pytest.approx(20.0), None, None)), (50, (pytest.approx(50.0), pytest.approx(50.0), pytest.approx(50.0)))]
    (method, (mean, low, high)), control = chosen
    assert method == "mnlp_30" and mean == pytest.approx(50.0)
    assert (low, high) == (pytest.approx(50.0 - 12.7062 * 10), pytest.approx(50.0 + 12.7062 * 10))
    assert control == ("random_30", (pytest.approx(30.0), None, None))
    written = plot_selection(points, tmp_path, "fig", 50, formats=("svg",))
    first = written[0].read_bytes()
    assert [p.name for p in written] == ["fig.svg"] and plot_selection(points, tmp_path, "fig", 50, formats=("svg",))[0].read_bytes() == first
    assert plot_selection({}, tmp_path, "none", 50) == [] and not (tmp_path / "none.png").exists()


def test_the_length_guards_sentence_by_hand():
    """mnlp_30_min5 0.60 and 0.70 on two draws of corpus c: against its twin mnlp_30 (0.55, 0.60)
    the differences 0.05 and 0.10, t = 3 on 1 degree of freedom, p = 1 - 2 atan(3) / pi = 0.205,
    +7.5 +- 12.706 * 2.5 points; against 50 random sentences (0.50, 0.50) 0.10 and 0.20, again
    t = 3, +15.0 +- 12.706 * 5 points. entropy_30_min5 has a row on corpus d only, which nothing
    pairs with; 3 of 30 cells so far."""
    guard = _results({("mnlp_30_min5", "c", 20): {0: 0.60, 1: 0.70}, ("entropy_30_min5", "d", 20): {0: 0.4}})
    loop = _results({("mnlp_30", "c", 20): {0: 0.55, 1: 0.60}, ("entropy_30", "c", 20): {0: 0.5, 1: 0.5}})
    random = _results({("lowres_best_trf", "c", 50): {0: 0.50, 1: 0.50}})
    assert guard_text(guard, loop, random, 30) == (
        "The length guard (`suggest --min-tokens 5`, studies/campaign_selection_guard.yaml, fixed before its rows): 3 of 30 cells "
        "so far: `mnlp_30_min5` against `mnlp_30` +7.5 [-24.3, +39.3] points (p = 0.205, 2 draws); against 50 random sentences "
        "+15.0 [-48.5, +78.5] points (p = 0.205, 2 draws); `entropy_30_min5` has no pairs yet.\n")
    assert guard_text({}, loop, random, 30).endswith(": 0 of 30 cells so far; the comparisons follow when it has rows.\n")
