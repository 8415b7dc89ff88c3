"""benchmarks/trf_recipe_cost.py's tables from made-up rows (nothing trains): the seconds a row
splits into, the ratios to the peer, the work behind them, the verdict on the 3x target, and
the command's --rows / --from-rows files."""
import importlib.util
import json
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
_spec = importlib.util.spec_from_file_location("trf_recipe_cost", ROOT / "benchmarks" / "trf_recipe_cost.py")
cost = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(cost)

DEV = {"sentences": 200, "words": 5000}
BUDGET = {"max_steps": 210, "student_steps": 210, "eval_frequency": 14, "batch_size": 8, "calibrates": True}
PEER_BUDGET = {**BUDGET, "calibrates": False}


def peer_row(wall=100.0, train=80.0):
    evaluations = [{"step": s} for s in range(0, 211, 14)]  # 16
    return {"seconds": wall, "scores": {"train_seconds": train, "test_words": 20000, "test_words_per_second": 2000.0,
                                        "peer": {"steps": 211, "evaluations": evaluations}}}


def recipe_row(wall=320.0, train=300.0, label_seconds=True):
    rounds = [{"round": 0, "train_seconds": 120.0, "label_seconds": 0.0}, {"round": 1, "train_seconds": 130.0, "label_seconds": 40.0}]
    if not label_seconds:  # a row written before rounds kept them
        rounds = [{k: v for k, v in r.items() if k != "label_seconds"} for r in rounds]
    return {"seconds": wall, "scores": {"train_seconds": train, "test_words": 20000, "test_words_per_second": 2000.0,
                                        "extras": {"pool_sentences": 1000, "rounds": rounds}}}


def test_a_recipe_row_splits_into_teacher_labelling_student_and_the_rest():
    assert cost.seconds_parts(recipe_row()) == {"wall": 320.0, "training": 300.0, "teacher": 120.0, "labelling": 40.0,
                                                "student": 130.0, "other": 10.0, "after": 20.0}
    # without the labelling seconds it is counted in "other", not lost
    old = cost.seconds_parts(recipe_row(label_seconds=False))
    assert old["labelling"] is None and old["other"] == 50.0
    # a plain cell has no parts; a row without seconds gives no ratio rather than an error
    assert cost.seconds_parts(peer_row()) == {"wall": 100.0, "training": 80.0, "teacher": None, "labelling": None,
                                              "student": None, "other": None, "after": 20.0}
    assert cost.seconds_parts({"scores": {}})["after"] is None


def test_the_seconds_table_gives_each_run_its_ratio_to_the_peer_of_the_same_run_and_the_means():
    runs = [{"method": "peer", "run": 1, "row": peer_row()}, {"method": "recipe", "run": 1, "row": recipe_row()}]
    lines = cost.seconds_table(runs, "peer")
    assert lines[2] == "| peer | 1 | 100 | 80 | - | - | - | - | 20 | 1.00 | 1.00 |"
    assert lines[3] == "| recipe | 1 | 320 | 300 | 120 | 40 | 130 | 10 | 20 | 3.20 | 3.75 |"
    assert len(lines) == 4  # one run: no mean lines
    runs += [{"method": "peer", "run": 2, "row": peer_row(140.0, 120.0)}, {"method": "recipe", "run": 2, "row": recipe_row(280.0, 260.0)}]
    lines = cost.seconds_table(runs, "peer")
    assert lines[5] == "| recipe | 2 | 280 | 260 | 120 | 40 | 130 | -30 | 20 | 2.00 | 2.17 |"
    # means: peer 120 / 100, recipe 300 / 280: x2.50 and x2.80
    assert lines[-2:] == ["| peer | mean | 120 | 100 | - | - | - | - | 20 | 1.00 | 1.00 |",
                          "| recipe | mean | 300 | 280 | 120 | 40 | 130 | -10 | 20 | 2.50 | 2.80 |"]


def test_the_work_counts_follow_the_budget_and_the_peers_own_counts():
    recipe = cost.work(recipe_row(), BUDGET, DEV)
    # two trainings of 211 updates; 16 evaluations each, the dev sample predicted twice per evaluation
    assert (recipe["trainings"], recipe["updates"], recipe["sentences_trained"], recipe["evaluations"], recipe["passes"]) == (2, 422, 3376, 32, 2)
    assert recipe["dev_sentences"] == 12800 and recipe["pool_sentences"] == 1000 and not recipe["exact"]
    assert recipe["dev_seconds"] == pytest.approx(12800 * 25 / 2000.0)  # 25 words a dev sentence at 2000 words/s: 160 s
    peer = cost.work(peer_row(), PEER_BUDGET, DEV)
    assert (peer["trainings"], peer["updates"], peer["evaluations"], peer["passes"], peer["dev_sentences"]) == (1, 211, 16, 1, 3200)
    assert peer["exact"] and peer["dev_seconds"] == pytest.approx(3200 * 25 / 2000.0)
    # a student with its own step budget
    assert cost.work(recipe_row(), {**BUDGET, "student_steps": 69}, DEV)["updates"] == 211 + 70
    lines = cost.work_table([{"method": "peer", "run": 1, "row": peer_row()}, {"method": "recipe", "run": 1, "row": recipe_row()}],
                            {"peer": PEER_BUDGET, "recipe": BUDGET}, DEV)
    assert lines[2] == "| peer | 1 | 211 x 8 | 16 x 1 x 200 | 0 | 20,000 | 2,000 | 40 | 40% |"
    assert lines[3] == "| recipe | 2 | <= 422 x 8 | <= 32 x 2 x 200 | 1,000 | 20,000 | 2,000 | <= 160 | <= 50% |"


def test_the_verdict_names_the_ratio_and_whether_the_target_holds():
    runs = [{"method": "peer", "run": 1, "row": peer_row()}, {"method": "recipe", "run": 1, "row": recipe_row()}]
    assert cost.verdict(runs, "peer", "recipe") == (
        "recipe / peer: x3.20 in wall time, x3.75 in training time; the target (at most x3 in wall time) does NOT hold")
    assert cost.verdict(runs, "peer", "recipe", target=3.5).endswith("(at most x3.5 in wall time) holds")
    assert cost.verdict([{"method": "peer", "run": 1, "row": {}}, *runs[1:]], "peer", "recipe").endswith("no ratio (a row lacks its seconds)")


def test_from_rows_prints_a_kept_measurement_and_rows_never_overwrites(tmp_path, capsys):
    record = {"settings": {"corpus": "ncbi_disease", "size": 50, "partition": 0, "methods": ["peer", "recipe"], "learn_rate": 1e-4,
                           "repeats": 1, "target": 3.0},
              "host": "vm", "started": "2026-11-26T07:00:00+00:00", "finished": "2026-11-26T07:20:00+00:00", "load": [4.1, 3.9],
              "budgets": {"peer": PEER_BUDGET, "recipe": BUDGET}, "dev": DEV,
              "runs": [{"method": "peer", "run": 1, "row": peer_row()}, {"method": "recipe", "run": 1, "row": recipe_row()}]}
    kept = tmp_path / "cost.json"
    kept.write_text(json.dumps(record))
    assert cost.main(["--from-rows", str(kept)]) == 0
    out = capsys.readouterr().out
    assert out.startswith("ncbi_disease, 50 sentences, partition 0, learn rate 0.0001 for every method")
    assert "| recipe | 1 | 320 | 300 | 120 | 40 | 130 | 10 | 20 | 3.20 | 3.75 |" in out
    assert out.rstrip().endswith("does NOT hold")
    before = kept.read_text()
    with pytest.raises(SystemExit):
        cost.main(["--rows", str(kept)])
    assert kept.read_text() == before
    assert "exists; nothing is overwritten" in capsys.readouterr().err


def test_every_kept_measurement_is_in_the_benchmarks_doc_as_the_script_prints_it():
    """docs/benchmarks.md's cost tables are the printout of a committed --rows file, not typed."""
    kept = sorted((ROOT / "benchmarks" / "measurements").glob("trf_recipe_cost_*.json"))
    assert kept
    doc = (ROOT / "docs" / "benchmarks.md").read_text(encoding="utf8")
    for path in kept:
        assert cost.report(json.loads(path.read_text(encoding="utf8"))) in doc, path.name
        assert f"--from-rows benchmarks/measurements/{path.name}" in doc
