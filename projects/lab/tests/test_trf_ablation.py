"""auc_ner_lab/evidence/trf_rule.py: the rule that chooses lowres_best_trf's parts from the dev
ablation, on hand-computed cases, and its table from hand-made rows."""
from types import SimpleNamespace as R

import pytest

from auc_ner_lab.evidence.trf_checks import device_mix, differs, repeat_check, round_zero_check, round_zero_pairs
from auc_ner_lab.evidence.trf_rule import PARTS, chosen, parts_table, verdict


def _hand_made_ablation():
    """The ablation the README phrases are tested on: each part's variant of one cell at two
    draws, the recipe at 0.50 / 0.60 and a part that loses 0.49 / 0.57; and the same with the
    CRF head's second draw missing (an interim ablation)."""
    recipe = {0: 0.50, 1: 0.60}
    minus = {0: 0.49, 1: 0.57}
    by = {(m, "c", 20): R(scores=dict(s)) for m, s in [("lowres_best_trf", recipe), ("no_bias", minus), ("no_augment", minus),
                                                      ("no_self_train", minus), ("self_train_rounds2", recipe),
                                                      ("top3_layers", recipe), ("piece_dropout", minus), ("crf", minus)]}
    return by, {**by, ("crf", "c", 20): R(scores={0: 0.4})}


def test_each_rule_by_hand():
    assert chosen([0.01, -0.005], None, "gain")  # mean +0.0025
    assert not chosen([0.0, 0.0], None, "gain") and chosen([0.0, 0.0], None, "no loss")
    assert not chosen([-0.01, 0.005], None, "no loss")
    assert chosen([0.02, 0.03], 0.04, "significant gain") and not chosen([0.02, 0.03], 0.06, "significant gain")
    assert not chosen([-0.02, -0.03], 0.01, "significant gain")  # significant, but a loss
    assert not chosen([0.02, 0.03], None, "significant gain")  # one pair: no test, no choice for it
    with pytest.raises(ValueError, match="unknown rule 'best'"):
        chosen([0.1], None, "best")


def test_a_part_is_kept_or_dropped_a_change_adopted_or_not_and_only_once_every_cell_is_in():
    part, change, shown = (next(p for p in PARTS if p.variant == v) for v in ("no_augment", "top3_layers", "crf"))
    assert verdict(part, [0.01], None, True) == "**keep**" and verdict(part, [-0.01], None, True) == "**drop**"
    assert verdict(change, [0.0], None, True) == "**adopt**" and verdict(change, [-0.01], None, True) == "**not adopted**"
    assert verdict(part, [0.01], None, False) == "waits for every cell"
    assert verdict(shown, [0.2], 0.001, True) == "(not a choice)"


def test_parts_table_by_hand():
    """One corpus at 20 sentences, 3 partitions. The bias: recipe - no_bias = 0.10, 0.10, 0.05:
    mean 8.3 points, sd 2.89, t = 5.0 on 2 df, p = 0.038, 95 % interval 8.33 -/+ 4.303 x 1.667
    = [+1.2, +15.5]: significant, kept. Partial fine-tuning: top3 - recipe = 0, 0, -0.01:
    mean -0.3, not adopted. Augmentation: one cell of three, no choice yet."""
    by = {("lowres_best_trf", "c", 20): R(scores={0: 0.5, 1: 0.6, 2: 0.7}),
          ("no_bias", "c", 20): R(scores={0: 0.4, 1: 0.5, 2: 0.65}),
          ("top3_layers", "c", 20): R(scores={0: 0.5, 1: 0.6, 2: 0.69}),
          ("no_augment", "c", 20): R(scores={0: 0.55})}
    table = parts_table(by, ["c"], [20], partitions=3)

    def row(variant):
        line = next(x for x in table.splitlines() if f"(`{variant}`)" in x)
        return [c.strip() for c in line.strip("|").split("|")]

    assert row("no_bias")[1:] == ["significant gain", "+8.3 [+1.2, +15.5]", "p=0.038 (n=3)", "+8.3 (n=3)", "+8.3 (n=3)", "**keep**"]
    assert row("top3_layers")[-1] == "**not adopted**" and row("top3_layers")[4] == "-0.3 (n=3)"
    assert row("no_augment")[-1] == "waits for every cell" and row("no_augment")[3] == "– (n=1)"
    assert row("crf")[-1] == "(not a choice)"
    assert "`lowres_best_trf` 3 of 3" in table and "`no_augment` 1" in table


def test_round_zero_check_by_hand():
    def row(partition, dev_f, chosen_round):
        return {"method": "lowres_best_trf", "corpus": "c", "size": 20, "partition": partition,
                "scores": {"extras": {"rounds": [{"round": 0, "dev_f": dev_f}], "chosen_round": chosen_round}}}

    def alone(partition, dev_f):  # trains once: no rounds, its dev score is its row's
        return {"method": "no_self_train", "corpus": "c", "size": 20, "partition": partition,
                "scores": {"dev_scores": {"ents_f": dev_f}, "extras": {}}}

    rows = [row(0, 0.4, 0), row(1, 0.5, 1), row(2, 0.6, 1), alone(0, 0.4), alone(1, 0.45)]
    text = round_zero_check(rows)
    assert "equal in 1 of the 2 cells both have on the CPU (the others 5.0 to 5.0 points apart)" in text
    assert "kept round 0 in 1 of its 3 cells, round 1 in 2" in text


def test_ablation_sentence_waits_for_every_cell_then_names_what_the_rule_chose():
    """One corpus at 20 sentences, 2 partitions (2 cells a method, 16 in all). With every cell:
    augmentation's d = +1, +3 points (mean above 0: kept); the bias's +1, +3 (p = 0.295: not
    significant, dropped); partial fine-tuning's 0, 0 (no loss: adopted); word-piece dropout's
    -1, -3 (not adopted)."""
    from auc_ner_lab.evidence.trf_rule import ablation_sentence

    by, partial = _hand_made_ablation()
    fixed = ("fixed in commit 486802e1, whose tree holds 6 reported rows of its then 126 cells; word-piece dropout's part "
             "added in e52955ec, when 90 other cells had rows and none of its own")
    assert ablation_sentence(partial, planned=2) == (f"its parts are chosen on dev once its ablation is in, by a rule {fixed} "
                                                   "(15 of 16 dev cells so far)")
    text = ablation_sentence(by, planned=2)
    assert text.startswith(f"its parts chosen on dev by a rule {fixed}, 16 dev cells: kept or adopted augmentation (+2.0 [")
    assert "(why self-training stands)" in ablation_sentence(by, planned=2, guard="why self-training stands")
    assert "partial fine-tuning (the top 3 of MiniLM's 6 layers) (+0.0 [+0.0, +0.0] points, p=1.000, 2 draws)" in text.split("; dropped")[0]
    assert "the calibrated entity bias (+2.0 [-10.7, +14.7] points, p=0.295, 2 draws)" in text
    dropped = text.split("; dropped or not adopted ")[1]
    assert dropped.startswith("the calibrated entity bias (+2.0 [") and "a second self-training round (+0.0" in dropped
    assert "self-training (one round on the pool)" in dropped and "CRF head" not in text
    assert "word-piece dropout (15 % of pieces masked) (-2.0 [" in dropped


def test_rows_of_self_training_cells_on_retokenized_text_are_superseded():
    from auc_ner_lab.store import superseded

    rows = [{"method": "a", "scores": {"extras": {"rounds": [{"round": 0}]}}},  # before the fix
            {"method": "b", "scores": {"extras": {"rounds": [{"round": 0}], "tokens": "annotated"}}},
            {"method": "c", "scores": {"extras": {}}}, {"method": "d", "scores": None},  # no self-training: always annotated
            {"method": "e", "tuning": {"point": {}}, "scores": {"extras": {"rounds": [{"round": 0}]}}}]  # a trial stands
    assert [r["method"] for r in rows if not superseded(r)] == ["b", "c", "d", "e"]


def test_round_zero_check_counts_each_device_kind_apart():
    def row(method, device, partition, dev_f):
        scores = ({"extras": {"rounds": [{"round": 0, "dev_f": dev_f}], "chosen_round": 0}} if method == "lowres_best_trf"
                  else {"dev_scores": {"ents_f": dev_f}, "extras": {}})
        return {"method": method, "device": device, "corpus": "c", "size": 20, "partition": partition, "scores": scores}

    rows = [row("lowres_best_trf", "cpu", 0, 0.4), row("no_self_train", "cpu", 0, 0.4),
            row("lowres_best_trf", "cuda:0 NVIDIA H100", 0, 0.41), row("no_self_train", "cuda:0 NVIDIA H100", 0, 0.44),
            row("lowres_best_trf", "cuda:0 NVIDIA H100", 1, 0.5)]  # its no_self_train only on the CPU: no pair
    text = round_zero_check(rows)
    assert "equal in 1 of the 1 cells both have on the CPU and in 0 of the 1 cells both have on the GPU (the others 3.0 to 3.0 points apart)" in text
    assert not differs(round_zero_pairs(rows)["CPU"]) and differs(round_zero_pairs(rows)["GPU"])


def test_repeat_check_pairs_the_same_cell_of_two_studies_by_device_kind():
    def row(device, partition, dev_f, lr=1e-4, method="lowres_best_trf"):
        return {"method": method, "device": device, "corpus": "c", "size": 20, "partition": partition,
                "overrides": {"lr": lr}, "scores": {"dev_scores": {"ents_f": dev_f}}}

    here = [row("cuda:0 X", 0, 0.5), row("cuda:0 X", 1, 0.6), row("cpu", 2, 0.3), row("cuda:0 X", 3, 0.7, lr=2e-4)]
    there = [row("cuda:0 Y", 0, 0.5), row("cuda:0 Y", 1, 0.62), row("cpu", 2, 0.3), row("cuda:0 X", 3, 0.7),  # other settings: no pair
             row("cpu", 0, 0.5), row("cuda:0 X", 0, 0.5, method="crf")]  # other device kind, other method: no pair
    text = repeat_check(here, there, "other")
    assert "the same dev F1 in 1 of the 1 cells on the CPU and 1 of the 2 cells on the GPU (the others 2.0 to 2.0 points apart)" in text
    assert repeat_check(here, [], "other") == ""


def test_device_mix_counts_draws_by_the_device_kinds_of_their_rows():
    def row(corpus, partition, device):
        return {"corpus": corpus, "partition": partition, "device": device}

    rows = [row("a", 0, "cpu"), row("a", 0, "cpu"), row("a", 1, "cuda:0 H100"), row("b", 0, "cpu"), row("b", 0, "cuda:0 H200")]
    text = device_mix(rows)
    assert "of the 3 draws with rows, 1 trained on the CPU only, 1 on the GPU only and 1 on both" in text
    assert "rows: 3 on the CPU, 2 on the GPU" in text


def test_device_kind_reads_the_rows_device():
    from auc_ner_lab.store import device_kind

    assert device_kind({"device": "cuda:0 NVIDIA H100 80GB HBM3"}) == "GPU"
    assert [device_kind(r) for r in ({"device": "cpu"}, {"device": None}, {})] == ["CPU"] * 3


def _placed(method, partition, pid, finished, seconds, dev_f, device="cuda:0 H100", study="campaign_trf_ablation"):
    scores = ({"extras": {"rounds": [{"round": 0, "dev_f": dev_f}], "chosen_round": 0}, "dev_scores": {"ents_f": dev_f}}
              if method == "lowres_best_trf" else {"dev_scores": {"ents_f": dev_f}, "extras": {}})
    return {"method": method, "device": device, "corpus": "c", "size": 20, "partition": partition, "host": "vm", "pid": pid,
            "study": study, "key": f"{study}-{method}-{partition}", "finished": f"2026-11-26T10:{finished}:00+00:00",
            "seconds": seconds, "status": "ok", "scores": scores}


def test_process_positions_count_the_rows_a_worker_wrote_before_and_split_reused_pids():
    from auc_ner_lab.evidence.trf_checks import process_positions

    rows = [_placed("lowres_best_trf", 0, 7, "10", 300, 0.5),  # 10:05-10:10: first of pid 7
            _placed("no_self_train", 0, 7, "12", 100, 0.5),  # 10:10:20-10:12: second
            _placed("crf", 0, 7, "58", 60, 0.5),  # starts 10:57, 45 min after: the same process
            _placed("crf", 1, 7, "11", 60, 0.5, device="cpu"),  # another device kind: another worker
            _placed("crf", 2, 8, "11", 60, 0.5)]
    where = process_positions(rows + [dict(rows[0])])  # a row copied into another store: the same training
    assert [where[(r["key"], r["finished"])][1] for r in rows] == [0, 1, 2, 0, 0]
    # a row that starts before the previous one ended is another process of a recurring pid
    again = rows[:2] + [_placed("crf", 3, 7, "11", 120, 0.5)]  # 10:09-10:11, overlaps the first
    where = process_positions(again)
    assert where[(again[2]["key"], again[2]["finished"])][0] != where[(again[0]["key"], again[0]["finished"])][0]


def test_position_check_says_where_the_pairs_trained_and_when_path_and_position_go_together():
    from auc_ner_lab.evidence.trf_checks import position_check, process_positions

    ablation = [_placed("lowres_best_trf", 0, 7, "10", 300, 0.5), _placed("no_self_train", 0, 7, "12", 100, 0.47),
                _placed("lowres_best_trf", 1, 9, "10", 300, 0.6), _placed("no_self_train", 1, 9, "12", 100, 0.6)]
    recipe = [_placed("lowres_best_trf", 0, 3, "10", 300, 0.5, study="campaign_trf_recipe")]
    text, confounded = position_check(ablation, recipe, process_positions(ablation + recipe))
    assert "round 0 and `no_self_train` on the GPU: (0, 1) x2; 2 of 2 in one process" in text
    assert "the repeated `lowres_best_trf` cells on the GPU: (0, 0) x1; 0 of 1 in one process" in text
    assert confounded  # the pair that differs ran at positions 0 and 1, the repeat that agrees at 0 and 0
    # a pair at one position that still differs: the position cannot explain it
    ablation[1] = _placed("no_self_train", 0, 8, "05", 100, 0.47)
    text, confounded = position_check(ablation, recipe, process_positions(ablation + recipe))
    assert "(0, 0) x1, (0, 1) x1; 1 of 2 in one process" in text and not confounded
    assert position_check([], [], {}) == ("", False)


def test_gpu_repeats_counts_cells_trained_twice_and_which_followed_another_history():
    from auc_ner_lab.evidence.trf_checks import gpu_repeats, process_positions

    # crf p0 twice: after the recipe in pid 7, after nothing in pid 9 (another history), equal;
    # the recipe p1 twice, both first in their processes, apart; a CPU repeat is not counted
    rows = [_placed("lowres_best_trf", 0, 7, "10", 300, 0.5), _placed("crf", 0, 7, "12", 100, 0.3),
            _placed("crf", 0, 9, "12", 100, 0.3, study="other"),
            _placed("lowres_best_trf", 1, 11, "10", 300, 0.6), _placed("lowres_best_trf", 1, 12, "10", 300, 0.62, study="other"),
            _placed("crf", 2, 13, "10", 60, 0.3, device="cpu"), _placed("crf", 2, 14, "10", 60, 0.3, device="cpu", study="other")]
    text, agreeing = gpu_repeats(rows, process_positions(rows))
    assert text == ("Every cell trained more than once on the GPU, in any study (2): the same dev F1 in 1 of them; positions "
                    "(0, 1) x1, (0, 0) x1; 1 of them after different cells in each of its processes (crf), the same dev F1 in 1.\n")
    assert agreeing == 1
    assert gpu_repeats(rows[:2], process_positions(rows[:2])) == ("", 0)


def _config(bias=True, augment=True, rounds=1, layers=None, pieces=None):
    """A recipe config as the ablation's variants change it (the keys `in_config` reads)."""
    tok2vec = {"trainable_layers": layers, **({} if pieces is None else {"piece_dropout": pieces})}
    return {"training": {"before_update": {"@callbacks": "spacy_auc_ner.calibrate_entity_bias.v1"} if bias else None},
            "corpora": {"train": {"@readers": "spacy_auc_ner.Augmented.v1" if augment else "spacy.Corpus.v1"}},
            "self_training": {"rounds": rounds},
            "components": {"auc_ner": {"model": {"tok2vec": tok2vec}}}}


def test_in_config_reads_each_part_as_its_variant_changes_it():
    has = lambda config: {p.variant: p.in_config(config) for p in PARTS if p.in_config}  # noqa: E731
    assert has(_config()) == {"no_bias": True, "no_augment": True, "no_self_train": True, "self_train_rounds2": False,
                              "top3_layers": False, "piece_dropout": False}
    assert has(_config(bias=False, augment=False, rounds=0)) == {"no_bias": False, "no_augment": False, "no_self_train": False,
                                                                "self_train_rounds2": False, "top3_layers": False, "piece_dropout": False}
    assert has(_config(rounds=2, layers=3, pieces=0.15)) == {"no_bias": True, "no_augment": True, "no_self_train": True,
                                                             "self_train_rounds2": True, "top3_layers": True, "piece_dropout": True}


def test_each_part_is_read_from_the_shipped_recipe_and_the_frozen_hypothesis():
    """recipes/lowres_best_trf.cfg as the ablation chose (one self-training round, no bias, no
    augmentation) and the hypothesis the ablation trains (bias, augmentation, one round)."""
    from auc_ner_lab.cells import assembled_config
    from lab_helpers import LAB
    from spacy_auc_ner.api import recipe_config

    def parts(config):
        return {p.variant for p in PARTS if p.in_config and p.in_config(config)}

    assert parts(recipe_config("lowres_best_trf")) == {"no_self_train"}
    hypothesis = assembled_config(None, [LAB / "studies" / "configs" / "lowres_best_trf_hypothesis.cfg"])
    assert parts(hypothesis) == {"no_bias", "no_augment", "no_self_train"}


def test_shipped_check_waits_then_agrees_or_names_each_part_it_disagrees_on():
    from auc_ner_lab.evidence.trf_rule import Judged, shipped_check

    def judged(choices, complete=True):
        return [Judged(p, [0.0], None, "", complete, choices.get(p.variant, "(not a choice)")) for p in PARTS]

    rule = {"no_bias": "**drop**", "no_augment": "**keep**", "no_self_train": "**keep**",
            "self_train_rounds2": "**not adopted**", "top3_layers": "**adopt**", "piece_dropout": "**not adopted**"}
    text, wrong = shipped_check(judged(rule, complete=False), _config(), name="r.cfg")
    assert wrong == [] and text.startswith("`r.cfg` now (the hypothesis, until the rule has chosen every part): "
                                           "the calibrated entity bias: yes; augmentation: yes;")
    text, wrong = shipped_check(judged(rule), _config(bias=False, layers=3), name="r.cfg")
    assert wrong == [] and text.startswith("`r.cfg` has the parts the rule chose: the calibrated entity bias: no;")
    text, wrong = shipped_check(judged(rule), _config(), name="r.cfg")
    assert wrong == ["the calibrated entity bias (in the config, the rule: drop)",
                     "partial fine-tuning (the top 3 of MiniLM's 6 layers) (not in the config, the rule: adopt)"]
    assert text.startswith("**`r.cfg` differs from the rule's choice**: the calibrated entity bias (in the config")


def test_the_shipped_recipe_has_what_the_committed_rows_chose():
    """Live once every cell of the ablation has its row: recipes/lowres_best_trf.cfg must then
    be edited as the rule chose (before, the config is the hypothesis and nothing disagrees)."""
    from lab_helpers import LAB

    text = (LAB / "docs" / "evidence" / "campaign_trf_ablation" / "parts.md").read_text()
    assert "differs from the rule's choice" not in text



def _check_log(*processes):
    """A process_check.py log: each process's runs (dev F1, weights, poisoned), then its verdict line."""
    import json

    lines = []
    for runs in processes:
        lines += [json.dumps({"run": i + 1, "poisoned": p, "device": "cuda:0", "dev_f": f, "weights": w, "seconds": 1.0})
                  for i, (f, w, p) in enumerate(runs)]
        lines.append("filled empty arrays: {}")
        lines.append("1 of 1 runs equal to run 1 (dev F1 and weights; the poisoned one last)")
    return "\n".join(lines) + "\n"


def test_the_process_check_tells_position_from_path():
    from auc_ner_lab.evidence.trf_checks import process_check

    position = _check_log([(0.011, 10.0, False), (0.043, 12.0, False), (0.043, 12.0, False), (0.043, 12.0, True)],
                          [(0.011, 10.0, False)])
    text = process_check(position, "p.log")
    assert "run 1 dev F1 0.011, runs 2-4 0.043 each, equal to each other (weights too), unlike run 1" in text
    assert "the fresh process's run 1 repeated run 1" in text and "the position in the process is enough" in text
    assert "the poisoned run equals its neighbours" in text
    # the same dev F1 with other weights is another training
    poisoned_differs = _check_log([(0.011, 10.0, False), (0.043, 12.0, False), (0.043, 12.5, True)], [(0.011, 10.0, False)])
    assert "not all equal" in process_check(poisoned_differs, "p.log") and "It does not separate" in process_check(poisoned_differs, "p.log")
    every_run_equal = _check_log([(0.2, 10.0, False)] * 3, [(0.2, 10.0, False)])
    assert "history does not change a training: the two paths differ" in process_check(every_run_equal, "p.log")
    # a log cut short (no fresh process) says nothing
    assert process_check(_check_log([(0.2, 10.0, False)] * 3), "p.log") == ""


def _dev_row(method, partition, dev, finished, tuning=None, size=20):
    return {"method": method, "corpus": "c", "size": size, "partition": partition, "status": "ok", "finished": finished,
            "scored_on": "dev", "scores": {"dev_scores": {"ents_seqeval_micro_f": dev}}, "tuning": tuning}


def test_rule_fixed_counts_the_rows_finished_before_the_rule_and_what_they_leaned_toward():
    """Issue 45: the rule was said to be fixed "when 5 of its then 126 cells had rows"; its commit
    holds 6 and 8 had finished. Rows finished before the commit's time count (tuning trials and
    later rows do not), and each part's d on them is the rule's (recipe - variant, a draw's sizes
    averaged): the bias -1.0 and -3.0 points over 2 draws, -2.0 (toward dropping it)."""
    from auc_ner_lab.evidence.trf_rule import RULE_TIME, rule_fixed

    before, after = "2026-11-26T12:00:00+00:00", "2026-11-26T14:00:00+00:00"
    assert RULE_TIME[:13] == "2026-11-26T13"
    rows = [_dev_row("lowres_best_trf", 0, 0.50, before), _dev_row("lowres_best_trf", 1, 0.40, before),
            _dev_row("no_bias", 0, 0.51, before), _dev_row("no_bias", 1, 0.43, before),
            _dev_row("no_augment", 0, 0.10, after),  # after the rule: not counted
            _dev_row("lowres_best_trf", 0, 0.9, before, tuning={"partition": 0})]  # a tuning trial: not counted
    text = rule_fixed(rows)
    assert text.startswith("fixed in commit 486802e1, whose tree holds 6 reported rows of its then 126 cells (4 had finished by then; "
                           "d on them: the calibrated entity bias -2.0 points over 2 draws, toward dropping it)"), text
    assert "augmentation" not in text and "e52955ec, when 90 other cells had rows" in text


def _git(*args):
    import subprocess
    from pathlib import Path

    repo = Path(__file__).resolve().parents[3]
    try:
        out = subprocess.run(["git", "-C", str(repo), *args], capture_output=True, text=True, timeout=60)
    except (OSError, subprocess.SubprocessError):
        pytest.skip("no git")
    if out.returncode != 0:
        pytest.skip(f"git {' '.join(args)}: {out.stderr.strip()[:80]} (a shallow clone?)")
    return out.stdout


def test_the_rule_constants_are_what_git_holds():
    """RULE_ROWS, RULE_CELLS, RULE_TIME and PIECE_CELLS are typed, as the rows do not hold git:
    checked here against the commits they name where the history is there."""
    import json

    import yaml

    from auc_ner_lab.evidence import trf_rule as ta

    for commit, time in ((ta.RULE_COMMIT, ta.RULE_TIME), (ta.PIECE_COMMIT, ta.PIECE_TIME)):
        assert _git("show", "-s", "--format=%cI", commit).strip() == time
    store = "projects/lab/results/campaign_trf_ablation"

    def reported(commit):
        names = [n for n in _git("ls-tree", "-r", "--name-only", commit, store).split() if n.endswith(".json")]
        return [r for r in (json.loads(_git("show", f"{commit}:{n}")) for n in names) if not r.get("tuning")]

    assert len(reported(ta.RULE_COMMIT)) == ta.RULE_ROWS
    spec = yaml.safe_load(_git("show", f"{ta.RULE_COMMIT}:projects/lab/studies/campaign_trf_ablation.yaml"))
    assert len(spec["methods"]) * len(spec["corpora"]) * len(spec["sizes"]) * spec["partitions"] == ta.RULE_CELLS
    piece = reported(ta.PIECE_COMMIT)
    assert len({r["key"] for r in piece}) == ta.PIECE_CELLS and not any(r["method"] == "piece_dropout" for r in piece)


def test_the_self_training_guard_cannot_fail_on_cpu_pairs_and_says_what_test_shows():
    """With no effect, a student replaces its teacher only when better on dev, so d >= 0 in every
    CPU cell and the p < 0.05 rule keeps self-training in most simulated ablations (issue 45: about
    84 % at 9 draws of 2 sizes); the sentence counts the CPU pairs with d >= 0 and carries the test."""
    from auc_ner_lab.evidence.trf_checks import self_training_guard
    from auc_ner_lab.evidence.trf_rule import null_keep_rate

    rate = null_keep_rate(9, 2)
    assert rate == null_keep_rate(9, 2) and 0.80 < rate < 0.88  # seeded; issue 45's simulation gave 84 %
    assert null_keep_rate(9, 1) < rate  # one size a draw: a draw's d is 0 half the time

    def recipe(p, dev, r0):
        return {"method": "lowres_best_trf", "corpus": "c", "size": 20, "partition": p, "device": "cpu",
                "scores": {"dev_scores": {"ents_f": dev}, "extras": {"rounds": [{"round": 0, "dev_f": r0}]}}}

    def alone(p, dev):
        return {"method": "no_self_train", "corpus": "c", "size": 20, "partition": p, "device": "cpu",
                "scores": {"dev_scores": {"ents_f": dev}, "extras": {}}}

    text = self_training_guard([recipe(0, 0.5, 0.5), recipe(1, 0.6, 0.55), alone(0, 0.5), alone(1, 0.55)], 9, 2, "TEST")
    assert "d is at least 0 there (2 of the 2 CPU cell pairs)" in text
    assert f"in {100 * rate:.0f} % of ablations of 9 draws of 2 sizes" in text and text.endswith("stands on test instead: TEST")


def test_device_gap_is_the_mean_difference_of_a_cell_trained_on_both_kinds():
    from auc_ner_lab.evidence.trf_checks import device_gap

    def row(dev, device, partition=0):
        return {"method": "crf", "corpus": "c", "size": 20, "partition": partition, "status": "ok", "device": device,
                "scores": {"dev_scores": {"ents_f": dev}}}

    rows = [row(0.50, "cpu"), row(0.53, "cuda:0 H200"), row(0.40, "cpu", 1), row(0.39, None, 1), row(0.30, "cuda:0 H200", 2)]
    gap, cells = device_gap(rows)  # cell 0: 3 points; cell 1: CPU only; cell 2: GPU only
    assert cells == 1 and gap == pytest.approx(0.03)
    assert device_gap(rows[2:]) == (None, 0)
