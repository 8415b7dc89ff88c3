"""The sentences of the protocol "n in all" (auc_ner_lab/evidence/nodev.py), on hand-made rows."""
from types import SimpleNamespace

from auc_ner_lab.evidence.nodev import chosen_budget_text, cpu_text, pairs, protocol_text


def _results(scores):
    """{(method, corpus, size): result} from {(method, corpus, size): {partition: F1}}."""
    return {key: SimpleNamespace(scores=dict(by)) for key, by in scores.items()}


def test_pairs_average_a_draws_sizes_and_skip_unmatched_draws():
    a = _results({("m", "c", 20): {0: 0.2, 1: 0.4}, ("m", "c", 50): {0: 0.4}})
    b = _results({("n", "c", 20): {0: 0.1, 1: 0.3}, ("n", "c", 50): {0: 0.3, 2: 0.9}})
    xs, ys = pairs(a, "m", b, "n")
    # draw (c, 0): a (0.2 + 0.4) / 2, b (0.1 + 0.3) / 2; draw (c, 1): one size; draw (c, 2): no a
    assert [round(x, 6) for x in xs] == [0.3, 0.4] and [round(y, 6) for y in ys] == [0.2, 0.3]


def test_no_rows_yet_says_so():
    assert protocol_text({}, {}, ["c"]) == "0 of 120 no-dev cells have rows so far; the comparisons follow when they do.\n"


def test_the_sentence_by_hand():
    """Two draws: the recipe no-dev 0.40 and 0.50, dev-selected 0.50 and 0.50 (kept: 90/100 =
    90 %, dev buys +5.0 points); the peer no-dev 0.20 and 0.25: ratio of pooled means 0.90 /
    0.45 = x2.00, +22.5 points, t = 9 on 1 degree of freedom: p = 1 - 2 atan(9) / pi = 0.070;
    on corpus d alone x2.00."""
    nodev = _results({("lowres_best_trf", "d", 20): {0: 0.40, 1: 0.50}, ("hf_token_classification", "d", 20): {0: 0.20, 1: 0.25}})
    dev = _results({("lowres_best_trf", "d", 20): {0: 0.50, 1: 0.50}})
    text = protocol_text(nodev, dev, ["d"])
    assert text.startswith("4 of 120 no-dev cells have rows so far; ")
    assert "the recipe +5.0 [-58.5, +68.5] points (p = 0.500, 2 draws)" in text
    assert "keeps 90 % of its dev-selected test F1 (pooled over 2 draws; goal 95 %: not met on these rows)" in text
    assert "×2.00 the peer by the ratio of pooled means (d ×2.00), +22.5 [-9.3, +54.3] points (p = 0.070, 2 draws)" in text
    assert "goal ×1.4 with no corpus below ×1.0: met on these rows" in text
    assert "nan" not in text.lower()


def test_the_cpu_recipe_sentence_by_hand():
    """One draw at two sizes: no-dev (0.30 + 0.42) / 2 = 0.36, dev-selected (0.40 + 0.40) / 2
    = 0.40: the dev sample buys +4.0 points, the recipe keeps 90 % (0.36 / 0.40)."""
    nodev = _results({("lowres_best", "ncbi_disease", 20): {0: 0.30}, ("lowres_best", "ncbi_disease", 50): {0: 0.42}})
    dev = _results({("lowres_best", "ncbi_disease", 20): {0: 0.40, 1: 0.2}, ("lowres_best", "ncbi_disease", 50): {0: 0.40}})
    assert cpu_text(nodev, dev) == ("the CPU recipe `lowres_best` on NCBI-disease: 2 of 10 no-dev cells so far; the dev sample buys it "
                                    "+4.0 points (no p-value, 1 draw), keeping 90 % of its dev-selected test F1.\n")
    assert cpu_text({}, dev) == "the CPU recipe `lowres_best` on NCBI-disease: 0 of 10 no-dev cells so far.\n"


def test_the_chosen_budgets_sentence_by_hand():
    """The recipe at 60 epochs 0.45 and 0.60 on two draws; at 30 epochs 0.40 and 0.50: +5 and
    +10 points, +7.5 (t = 0.075 / 0.025 = 3 on 1 degree of freedom: p = 1 - 2 atan(3) / pi =
    0.205); the no-dev peer 0.20 and 0.30: 1.05 / 0.50 = ×2.10 by pooled means, +27.5 points; its
    dev-selected twin 0.50 and 0.60: the dev sample buys +5 and 0, +2.5 points."""
    chosen = _results({("e60", "d", 20): {0: 0.45, 1: 0.60}})
    nodev = _results({("lowres_best_trf", "d", 20): {0: 0.40, 1: 0.50}, ("hf_token_classification", "d", 20): {0: 0.20, 1: 0.30}})
    dev = _results({("lowres_best_trf", "d", 20): {0: 0.50, 1: 0.60}})
    text = chosen_budget_text(chosen, nodev, dev, "e60", 30, ["d"])
    assert text.startswith("the recipe at 60 epochs, 2 of 30 no-dev cells so far (interim): minus the recipe at 30 epochs +7.5 [")
    assert "(p = 0.205, 2 draws)" in text
    assert "×2.10 the no-dev HF peer by the ratio of pooled means (d ×2.10), +27.5 [" in text
    assert "goal ×1.4 with no corpus below ×1.0: met so far" in text
    # 1.05 / 1.10 of the dev-selected twin's pooled F1: 95 %
    assert "the dev sample (the recipe at 30 epochs with it) buys it +2.5 [" in text
    assert text.rstrip().endswith("keeps 95 % of that dev-selected test F1 (goal 95 %: met so far).")
    assert "nan" not in text.lower()
    assert chosen_budget_text({}, nodev, dev, "e60", 30, ["d"]) == "the recipe at 60 epochs, 0 of 30 no-dev cells so far (interim).\n"


def test_the_run_time_is_the_median_of_the_cpu_rows_by_hand():
    """20 sentences: 300, 600 and 900 s on the CPU, median 10 min (the GPU row of 60 s left
    out); 50 sentences: 1200 and 1800 s, median 25 min."""
    from auc_ner_lab.evidence.nodev import run_minutes

    rows = [{"device": "cpu", "size": 20, "seconds": s} for s in (300, 900, 600)] + [{"device": "gpu", "size": 20, "seconds": 60}]
    rows += [{"device": "cpu", "size": 50, "seconds": s} for s in (1200, 1800)]
    assert run_minutes(rows).startswith("on one CPU core, MiniLM: 10 min at 20 sentences, 25 min at 50 sentences (the median wall time of the lab's 5 ")
    assert run_minutes(rows[3:4]) == ""


def test_the_readmes_step_counts_are_the_orchestrators(tmp_path):
    """README's "180 at 20 sentences, 420 at 50" (evidence/readme/trf_steps.md) is what
    `spacy-auc-ner recipe` trains: the library's budget on 20- and 50-sentence training files."""
    import spacy
    from spacy.tokens import DocBin

    from auc_ner_lab.evidence import committed
    from auc_ner_lab.evidence.docs import _budget_texts
    from spacy_auc_ner.api import budgeted, recipe_config

    steps = []
    for n in (20, 50):
        bin_ = DocBin(docs=[spacy.blank("en").make_doc(f"sentence {i}") for i in range(n)])
        bin_.to_disk(tmp_path / f"{n}.spacy")
        config = recipe_config("lowres_best_trf")
        config["paths"]["train"] = config["paths"]["dev"] = str(tmp_path / f"{n}.spacy")
        steps.append(budgeted(config)[0]["training"]["max_steps"])
    text = committed.in_lab(_budget_texts)["evidence/readme/trf_steps.md"]
    assert text == f"{steps[0]} at 20 sentences, {steps[1]} at 50\n"


def test_the_chosen_budgets_readme_phrase_by_hand():
    """The rows of test_the_chosen_budgets_sentence_by_hand: ×2.10 the peer, +27.5 points (the
    differences 0.25 and 0.30: t = 0.275 / 0.025 = 11 on 1 degree of freedom, p = 1 - 2 atan(11) / pi
    = 0.058), +7.5 points over 30 epochs (p = 0.205), 1.05 / 1.10 = 95 % of the dev-selected F1."""
    from auc_ner_lab.evidence.nodev import chosen_budget_short

    chosen = _results({("e60", "d", 20): {0: 0.45, 1: 0.60}})
    nodev = _results({("lowres_best_trf", "d", 20): {0: 0.40, 1: 0.50}, ("hf_token_classification", "d", 20): {0: 0.20, 1: 0.30}})
    dev = _results({("lowres_best_trf", "d", 20): {0: 0.50, 1: 0.60}})
    assert chosen_budget_short(chosen, nodev, dev, "e60", 30, ["d"]) == (
        "×2.10 the no-dev peer by the ratio of pooled means, +27.5 points (p = 0.058, 2 draws; goal ×1.4 with no corpus below ×1.0: met), "
        "+7.5 points (p = 0.205, 2 draws) over the same recipe at 30 epochs, 95 % of the dev-selected recipe's test F1 (goal 95 %: met) (interim, 2 of 30 cells)")
    assert chosen_budget_short({}, nodev, dev, "e60", 30, ["d"]) == "no rows yet (interim, 0 of 30 cells)"
