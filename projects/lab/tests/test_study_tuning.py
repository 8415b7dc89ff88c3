"""Tuning inside studies: trials per method, selection by dev score only, refusals, resume,
the report's chosen values and compute, and one tiny real tuned study."""
import json
import subprocess
from collections import Counter
from pathlib import Path

import pytest
import yaml
from typer.testing import CliRunner

import lab_helpers
from auc_ner_lab.aggregate import aggregate, compute
from auc_ner_lab.report import write_report
from auc_ner_lab.runner import plan, run_study
from auc_ner_lab.spec import SpecError, load_spec, parse_spec
from auc_ner_lab.study_cli import study_app
from auc_ner_lab.tuning import TUNE_SEED_OFFSET, TuningError, choose, known_metrics
from lab_helpers import QUIET, run_killed_midway, study_command, study_env, train_tiny
from lab_helpers import rows as read_results

ROOT = Path(__file__).parents[1]
LR = "training.optimizer.learn_rate"


def _spec(**kw):
    data = {"name": "t", "corpora": ["toy"], "methods": ["ce", "spacy_ner"], "sizes": [10], "partitions": 2,
            "tune": {"grid": {LR: [0.0005, 0.001, 0.003]}}}
    data.update(kw)
    return {k: v for k, v in data.items() if v is not None}


# ---- expansion -----------------------------------------------------------------------------
def test_every_method_gets_the_same_trials_on_unreported_partitions():
    tune = {"grid": {LR: [0.0005, 0.001, 0.003], "training.dropout": [0.1, 0.3]}, "partitions": 2}
    spec = parse_spec(_spec(methods=["ce", "spacy_ner", "ova_auc"], sizes=[10, 20], partitions=3, tune=tune))
    cells = spec.cells()
    trials = [c for c in cells if c.tuning is not None]
    reported = [c for c in cells if c.tuning is None]
    assert len(trials) == 3 * 2 * 6 * 2 and len(reported) == 3 * 2 * 3
    assert cells[: len(trials)] == trials  # the trials come first
    assert set(Counter(c.method for c in trials).values()) == {24}  # spaCy's ner included
    per_group = Counter((c.method, c.size) for c in trials)
    assert set(per_group.values()) == {12}
    # tuning partitions: seeds no reported partition uses, the same sample for every method
    assert {c.seed for c in trials} == {TUNE_SEED_OFFSET, TUNE_SEED_OFFSET + 1}
    assert {c.seed for c in reported} == {0, 1, 2} and {c.partition for c in trials} == {None}
    first = [c for c in trials if c.size == 10 and c.tuning["partition"] == 1]
    assert {json.dumps(c.overrides["corpora.train"], sort_keys=True) for c in first} == {
        json.dumps({"@readers": "spacy_auc_ner.LowResource.v1", "path": "${paths.train}", "n": 10,
                    "seed": TUNE_SEED_OFFSET + 1}, sort_keys=True)}
    assert all(c.overrides["system.seed"] == c.seed for c in trials)
    one = next(c for c in trials if c.tuning == {"partition": 0, "point": {LR: 0.003, "training.dropout": 0.3}})
    assert one.overrides[LR] == 0.003 and one.overrides["training.dropout"] == 0.3
    assert one.id.startswith("toy/ce/n=10/tune0/learn_rate=0.003,dropout=0.3#")
    # a reported cell waits for its own group's 6 points x 2 tuning partitions
    cell = reported[0]
    waits = [key for keys in cell.selection["trials"] for key in keys]
    group = {c.key for c in trials if (c.method, c.size) == (cell.method, cell.size)}
    assert set(waits) == group and len(waits) == 12
    assert LR not in cell.overrides  # until its trials choose


def test_keys_of_tuned_cells_track_the_grid():
    plain = parse_spec(_spec(tune=None)).cells()
    tuned = parse_spec(_spec()).cells()
    reported = [c for c in tuned if c.tuning is None]
    assert [c.id.split("#")[0] for c in reported] == [c.id.split("#")[0] for c in plain]
    assert not {c.key for c in reported} & {c.key for c in plain}
    assert [c.key for c in tuned] == [c.key for c in parse_spec(_spec()).cells()]  # stable
    # one more grid value: the old trials keep their keys (reused), the reported cells change
    wider = parse_spec(_spec(tune={"grid": {LR: [0.0005, 0.001, 0.003, 0.01]}})).cells()
    old_trials = {c.key for c in tuned if c.tuning is not None}
    assert old_trials < {c.key for c in wider if c.tuning is not None}
    assert not {c.key for c in reported} & {c.key for c in wider}


def test_set_and_corpus_keep_working(tmp_path):
    path = tmp_path / "s.yaml"
    path.write_text(yaml.safe_dump(_spec(corpora=["toy", "other"], tune=None)))
    spec = load_spec(path, set_values=["tune={grid: {training.dropout: [0.1, 0.3]}}", "sizes=[5]"], only_corpora=["other"])
    cells = spec.cells()
    assert spec.tune.points() == [{"training.dropout": 0.1}, {"training.dropout": 0.3}]
    assert {c.corpus for c in cells} == {"other"} and len(cells) == 2 * 2 + 2 * 2


# ---- refusals ------------------------------------------------------------------------------
@pytest.mark.parametrize(
    "tune,message",
    [
        ({"grid": {}}, "tune.grid: a non-empty mapping"),
        ({}, "tune.grid: a non-empty mapping"),
        ([LR], "tune: a mapping"),
        ({"grid": {LR: []}}, f"tune.grid.{LR}: a non-empty list"),
        ({"grid": {LR: 0.001}}, f"tune.grid.{LR}: a non-empty list"),
        ({"grid": {LR: [0.001, 0.001]}}, f"tune.grid.{LR}: 0.001 is listed twice"),
        ({"grid": {LR: [[0.001]]}}, "is not a single value"),
        ({"grid": {"dropout": [0.1]}}, "tune.grid.dropout: a dotted config key"),
        ({"grid": {"system.seed": [1, 2]}}, "tune.grid.system.seed: set by each cell"),
        ({"grid": {"corpora.train.n": [1, 2]}}, "tune.grid.corpora.train.n: set by each cell"),
        ({"grid": {LR: [0.001]}, "partitions": 0}, "tune.partitions: 0 is not a positive"),
        ({"grid": {LR: [0.001]}, "metric": "ents_fff"}, "tune.metric: unknown metric 'ents_fff'"),
        ({"grid": {LR: [0.001]}, "trials": 3}, "tune: unknown key(s) trials"),
    ],
)
def test_bad_tune_blocks_are_refused_with_file_and_key(tune, message):
    with pytest.raises(SpecError) as err:
        parse_spec(_spec(tune=tune), source="my.yaml")
    assert str(err.value).startswith("my.yaml: ") and message in str(err.value)


def test_known_metrics_come_from_the_scorer():
    known = known_metrics()
    assert {"ents_f", "ents_p", "ents_r", "ents_seqeval_micro_f", "ents_seqeval_macro_f"} <= set(known)
    assert "ents_per_type" not in known
    spec = parse_spec(_spec(tune={"grid": {LR: [0.001]}, "metric": "ents_seqeval_micro_f"}))
    assert spec.tune.metric == "ents_seqeval_micro_f" and parse_spec(_spec()).tune.metric == "ents_f"


def test_grid_key_missing_from_a_methods_config_is_refused_before_training(tmp_path):
    bad = _spec(tune={"grid": {"components.auc_ner.entity_bias": [0.4, 0.5]}})
    spec = parse_spec(bad, source="my.yaml", configs_dir=ROOT / "configs")
    with pytest.raises(SpecError) as err:
        spec.check_tuning()
    text = str(err.value)
    assert text.startswith("my.yaml: tune.grid.components.auc_ner.entity_bias: names nothing in the config of method 'spacy_ner'")
    assert "pipeline ['ner']" in text and "'ce'" not in text
    parse_spec(_spec(tune={"grid": {LR: [0.001], "training.dropout": [0.1]}}), configs_dir=ROOT / "configs").check_tuning()
    # a key spaCy would silently accept as a new setting is refused too
    typo = parse_spec(_spec(tune={"grid": {"training.droput": [0.1]}}), configs_dir=ROOT / "configs")
    with pytest.raises(SpecError, match="tune.grid.training.droput: names nothing in the config of method 'ce'"):
        typo.check_tuning()
    # through the command line: one line, exit 1, no results file, nothing trained
    path = tmp_path / "bad.yaml"
    path.write_text(yaml.safe_dump({**bad, "configs_dir": str(ROOT / "configs"), "runner": "lab_helpers:tuning_cell"}))
    out = tmp_path / "r"
    for extra in ([], ["--dry-run"]):
        result = CliRunner().invoke(study_app, ["run", str(path), "--results", str(out), "--workers", "0", *extra])
        assert result.exit_code == 1 and "Error: " in result.output and "tune.grid.components.auc_ner.entity_bias" in result.output
    assert not out.exists()


# ---- selection -----------------------------------------------------------------------------
def _ok(dev, **extra):
    return {"status": "ok", "scores": {"dev_scores": {"ents_f": dev, **extra}, "dev_score": dev}}


def test_choose_takes_the_best_mean_dev_score_first_on_ties():
    points = [{LR: 1}, {LR: 2}, {LR: 3}]
    rows = [[_ok(0.5), _ok(0.3)], [_ok(0.45), _ok(0.45)], [_ok(0.2), _ok(0.6)]]
    choice = choose(points, rows, "ents_f")
    assert choice.point == {LR: 2} and choice.dev_score == pytest.approx(0.45)
    assert (choice.candidates, choice.trials, choice.metric) == (3, 6, "ents_f")
    tie = choose(points, [[_ok(0.4)], [_ok(0.4)], [_ok(0.1)]], "ents_f")
    assert tie.point == {LR: 1}


def test_choose_never_reads_test_scores():
    points = [{LR: 1}, {LR: 2}]
    a, b = _ok(0.6), _ok(0.5)
    a["scores"]["ents_f"], b["scores"]["ents_f"] = 0.1, 0.9  # test scores that would pick 2
    assert choose(points, [[a], [b]], "ents_f").point == {LR: 1}


def test_a_point_with_a_failed_trial_is_no_candidate():
    points = [{LR: 1}, {LR: 2}]
    failed = {"status": "failed", "error": "boom"}
    choice = choose(points, [[_ok(0.9), failed], [_ok(0.4), _ok(0.4)]], "ents_f")
    assert choice.point == {LR: 2} and choice.candidates == 1
    with pytest.raises(TuningError, match="no grid point has a dev ents_f on every tuning partition .3 of 4"):
        choose(points, [[_ok(0.9), failed], [failed, None]], "ents_f")


def test_choose_by_the_spec_metric_else_ents_f():
    points = [{LR: 1}, {LR: 2}]
    rows = [[_ok(0.6, ents_seqeval_micro_f=0.2)], [_ok(0.5, ents_seqeval_micro_f=0.3)]]
    choice = choose(points, rows, "ents_seqeval_micro_f")
    assert choice.point == {LR: 2} and choice.metric == "ents_seqeval_micro_f" and choice.dev_score == 0.3
    # runs without that metric (older rows): the whole group falls back to ents_f
    fallback = choose(points, [[_ok(0.6)], [_ok(0.5, ents_seqeval_micro_f=0.9)]], "ents_seqeval_micro_f")
    assert fallback.point == {LR: 1} and fallback.metric == "ents_f"
    legacy = [[{"status": "ok", "scores": {"dev_score": 0.2}}], [{"status": "ok", "scores": {"dev_score": 0.3}}]]
    assert choose(points, legacy, "ents_f").point == {LR: 2}


def _run(tmp_path, spec, **kw):
    out = tmp_path / "r"
    cells = parse_spec(spec).cells()
    outcome = run_study(cells, out, workers=0, runner=lab_helpers.tuning_cell, **QUIET, **kw)
    return cells, outcome, read_results(out), out


def test_study_trains_reported_cells_with_the_dev_best_point_never_the_test_best(tmp_path):
    cells, outcome, rows, _ = _run(tmp_path, _spec())
    assert (outcome.total, outcome.ok, outcome.failed) == (2 * 3 + 2 * 2, 10, 0)
    trials = [r for r in rows if r.get("tuning")]
    reported = [r for r in rows if not r.get("tuning")]
    assert len(trials) == 6 and {r["partition"] for r in trials} == {None}
    assert Counter(r["method"] for r in trials) == {"ce": 3, "spacy_ner": 3}
    dev_best = {m: max(t, key=t.get) for m, t in lab_helpers.DEV_BY_LR.items()}
    test_best = {m: max(t, key=t.get) for m, t in lab_helpers.TEST_BY_LR.items()}
    assert all(dev_best[m] != test_best[m] for m in dev_best)
    assert len(reported) == 4
    for row in reported:
        method = row["method"]
        assert row["tuned"]["point"] == {LR: dev_best[method]}
        assert row["tuned"]["dev_score"] == lab_helpers.DEV_BY_LR[method][dev_best[method]]
        assert (row["tuned"]["metric"], row["tuned"]["trials"], row["tuned"]["partitions"]) == ("ents_f", 3, 1)
        assert row["scores"]["lr"] == dev_best[method] and row["overrides"][LR] == dev_best[method]
        assert "tuning" not in row
    # the summaries are the reported partitions only, with the choice
    results = aggregate(rows, metric="ents_f")
    assert [(r.method, r.summary.n) for r in results] == [("ce", 2), ("spacy_ner", 2)]
    assert results[0].tuned["point"] == {LR: 0.001}
    again = run_study(cells, tmp_path / "r", workers=0, runner=lab_helpers.tuning_cell, **QUIET)
    assert (again.ok, again.skipped) == (0, 10)


def test_failed_trials_exclude_their_point_and_a_group_without_candidates_fails(tmp_path):
    spec = _spec(methods=["ce", {"name": "flaky", "config": "x.cfg"}, {"name": "broken", "config": "y.cfg"}], partitions=1)
    cells, outcome, rows, out = _run(tmp_path, spec)
    by = {(r["method"], bool(r.get("tuning"))): r for r in rows}
    flaky = next(r for r in rows if r["method"] == "flaky" and not r.get("tuning"))
    assert flaky["status"] == "ok" and flaky["tuned"]["point"] == {LR: 0.003} and flaky["tuned"]["candidates"] == 2
    broken = by[("broken", False)]
    assert broken["status"] == "failed" and broken["error"].startswith("tuning: no grid point has a dev ents_f")
    costs = {c.method: c for c in compute(rows)}
    assert (costs["broken"].tuning_runs, costs["broken"].reported_runs) == (3, 0)  # the refusal trained nothing
    assert (costs["flaky"].tuning_runs, costs["flaky"].reported_runs) == (3, 1)
    # a rerun retries the failed trials first, then the refused cell
    todo = plan(cells, rows)
    assert [c.method for c in todo] == ["flaky", "broken", "broken", "broken", "broken"]
    assert todo[0].tuning["point"] == {LR: 0.001}


# ---- resume ----------------------------------------------------------------------------------
def test_resume_after_a_kill_during_tuning(tmp_path):
    spec = _spec(sizes=[10, 20], runner="lab_helpers:sleepy_tuning_cell")
    path, out, log = tmp_path / "spec.yaml", tmp_path / "r", tmp_path / "calls.log"
    path.write_text(yaml.safe_dump(spec))
    env = study_env(STUDY_FAKE_LOG=str(log), STUDY_FAKE_SLEEP="0.4")
    first = run_killed_midway(study_command(path, out, "--workers", "2"), env, out, 3)
    assert 3 <= len(first) < 12 and all(r.get("tuning") for r in first), "not killed during tuning"
    total = 2 * 2 * 3 + 2 * 2 * 2
    dry = subprocess.run(study_command(path, out, "--dry-run"), env=env, capture_output=True, text=True, timeout=60)
    assert dry.returncode == 0, dry.stderr
    listed = dry.stdout.split()
    assert f"{total - len(first)} of {total} cells to run ({12 - len(first)} tuning trials)" in dry.stderr
    assert len(listed) == total - len(first) and not {r["cell_id"] for r in first} & set(listed)
    done = subprocess.run(study_command(path, out, "--workers", "2"), env=env, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    rows = read_results(out)
    counts = Counter(r["cell_id"] for r in rows)
    assert len(counts) == total and set(counts.values()) == {1} and {r["status"] for r in rows} == {"ok"}
    calls = Counter(line.split()[0] for line in log.read_text().splitlines())
    assert all(calls[r["cell_id"]] == 1 for r in first)
    for row in rows:
        if not row.get("tuning"):
            assert row["tuned"]["point"] == {LR: {"ce": 0.001, "spacy_ner": 0.003}[row["method"]]}


# ---- report ----------------------------------------------------------------------------------
def test_report_shows_chosen_values_and_compute(tmp_path):
    _, _, rows, out = _run(tmp_path, _spec(sizes=[10, 20]))
    report = write_report(out, tmp_path / "rep", metric="ents_f", plots=False)
    md = report["markdown"]
    assert "Chosen values (grid point with the best mean dev ents_f over 1 tuning partition(s)" in md
    assert "| ce | learn_rate=0.001 (dev 50.0) | learn_rate=0.001 (dev 50.0) |" in md
    assert "| spacy_ner | learn_rate=0.003 (dev 45.0) | learn_rate=0.003 (dev 45.0) |" in md
    assert "## Compute per method" in md
    seconds = {m: sum(r["seconds"] for r in rows if r["method"] == m) for m in ("ce", "spacy_ner")}
    assert f"| toy | ce | 10 | 6 | 4 | {seconds['ce']:.0f} |" in md
    assert f"| toy | spacy_ner | 10 | 6 | 4 | {seconds['spacy_ner']:.0f} |" in md
    costs = json.loads((tmp_path / "rep" / "compute.json").read_text())
    assert [(c["method"], c["runs"], c["tuning_runs"]) for c in costs] == [("ce", 10, 6), ("spacy_ner", 10, 6)]
    summary = json.loads((tmp_path / "rep" / "summary.json").read_text())
    assert summary[0]["tuned"]["point"] == {LR: 0.001} and summary[0]["n"] == 2


# ---- one tiny real tuned study -------------------------------------------------------------------
@pytest.mark.slow
def test_tiny_real_tuned_study(tmp_path):
    _, outcome, rows = train_tiny(tmp_path, ["ce", "spacy_ner"], steps=12, dev_size=4, tune={"grid": {LR: [0.001, 0.01]}})
    assert outcome.ok == 6
    trials = [r for r in rows if r.get("tuning")]
    assert len(trials) == 4
    for row in trials:  # scored on dev only
        scores = row["scores"]
        assert "ents_f" not in scores and "ents_seqeval_micro_f" not in scores
        assert {"ents_f", "ents_seqeval_micro_f"} <= set(scores["dev_scores"])
        assert scores["dev_scores"]["ents_f"] == pytest.approx(scores["dev_score"], abs=1e-6)
    for row in (r for r in rows if not r.get("tuning")):
        mine = [t for t in trials if t["method"] == row["method"]]
        best = max(mine, key=lambda t: t["scores"]["dev_scores"]["ents_f"])  # first on ties, as choose
        assert row["tuned"]["point"] == best["tuning"]["point"]
        assert row["overrides"][LR] == best["tuning"]["point"][LR]
        assert 0.0 <= row["scores"]["ents_seqeval_micro_f"] <= 1.0 and "dev_scores" in row["scores"]
