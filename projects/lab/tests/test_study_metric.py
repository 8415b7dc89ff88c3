"""The metric a study's tables show: `metric:` in the spec (refused when not a score), the
report's default, and rows scored before a metric existed."""
import json

import pytest
import yaml
from typer.testing import CliRunner

from auc_ner_lab.report import write_report
from auc_ner_lab.settings import DEFAULT_METRIC
from auc_ner_lab.spec import SpecError, load_spec, parse_spec
from auc_ner_lab.study_cli import study_app
from lab_helpers import rows as read_results
from lab_helpers import write_rows

SPEC = {"name": "m", "corpora": ["toy"], "methods": ["ce", "ova_auc"], "sizes": [10, 20], "partitions": 2,
        "runner": "lab_helpers:instant_cell"}


def _write_spec(tmp_path, **changes):
    path = tmp_path / "spec.yaml"
    path.write_text(yaml.safe_dump({**SPEC, **changes}))
    return path


def test_metric_key_defaults_and_refusals(tmp_path):
    assert parse_spec(SPEC).metric == DEFAULT_METRIC == "ents_seqeval_micro_f"
    assert parse_spec({**SPEC, "metric": "ents_untyped_f"}).metric == "ents_untyped_f"
    with pytest.raises(SpecError, match=r"spec.yaml: metric: 'ents_f1' is not a score; choose one of ents_p, "):
        load_spec(_write_spec(tmp_path, metric="ents_f1"))
    with pytest.raises(SpecError, match=r"spec.yaml: metric: 'ents_per_type' is not a score"):
        load_spec(_write_spec(tmp_path), set_values=["metric=ents_per_type"])


def test_untyped_study_reports_untyped_scores(tmp_path):
    """fake cells score ents_untyped_f = typed F1 + 0.1: ce at size 10 has 0.41 and 0.42
    typed over its 2 partitions (42 and 43 at size 20), so 51.5 (52.5) untyped."""
    spec = _write_spec(tmp_path, metric="ents_untyped_f")
    runner = CliRunner()
    out = tmp_path / "r"
    ran = runner.invoke(study_app, ["run", str(spec), "--results", str(out), "--workers", "0", "--no-progress"])
    assert ran.exit_code == 0, ran.output
    assert all("ents_untyped_f" in r["scores"] for r in read_results(out))
    report = runner.invoke(study_app, ["report", str(out), "--spec", str(spec), "--out", str(tmp_path / "rep"), "--no-plots"])
    assert report.exit_code == 0, report.output
    md = (tmp_path / "rep" / "report.md").read_text()
    assert "entity F1 without types (span boundaries only) (`ents_untyped_f`)" in md
    assert "| ce | 51.5 ± 6.4 | 52.5 ± 6.4 |" in md
    summary = json.loads((tmp_path / "rep" / "summary.json").read_text())
    assert {s["metric"] for s in summary} == {"ents_untyped_f"}
    typed = runner.invoke(study_app, ["report", str(out), "--spec", str(spec), "--metric", "ents_f", "--out", str(tmp_path / "t"), "--no-plots"])
    assert typed.exit_code == 0 and "| ce | 41.5 ± 6.4 | 42.5 ± 6.4 |" in (tmp_path / "t" / "report.md").read_text()


def test_rows_without_the_metric_are_left_out_with_a_warning(tmp_path):
    base = {"study": "m", "corpus": "toy", "setting": "lowres", "size": 10, "value": None, "seed": 0, "status": "ok"}
    rows = [{**base, "cell_id": f"toy/ce/n=10/p{p}#a", "method": "ce", "partition": p,
             "scores": {"ents_f": 0.5, **({"ents_untyped_f": 0.6} if p else {})}} for p in range(3)]
    warnings = []
    report = write_report(write_rows(tmp_path / "r", rows), tmp_path / "rep", metric="ents_untyped_f", plots=False, warn=warnings.append)
    (summary,) = report["summaries"]
    assert (summary.summary.n, summary.failed) == (2, 0)  # not counted as a failure
    assert warnings == ["1 finished cell(s) have no score 'ents_untyped_f' and are left out (e.g. toy/ce/n=10/p0#a); rerun them to include them"]


def test_a_dev_only_study_is_reported_from_its_dev_scores(tmp_path):
    """Rows of a score_on: dev study keep their scores under dev_scores (their test split is
    none): the report reads those, says that they are dev scores, and is not refused for
    having no test score (it was, so that campaign_trf_ablation had no report)."""
    base = {"study": "m", "corpus": "toy", "setting": "lowres", "size": 10, "value": None, "seed": 0, "status": "ok",
            "scored_on": "dev"}
    rows = [{**base, "cell_id": f"toy/{m}/n=10/p{p}#{m}", "method": m, "partition": p,
             "scores": {"dev_score": 0.0, "dev_scores": {"ents_f": score}}}
            for m, scores in (("ce", (0.40, 0.50)), ("ova_auc", (0.45, 0.60))) for p, score in enumerate(scores)]
    report = write_report(write_rows(tmp_path / "r", rows), tmp_path / "rep", metric="ents_f", baseline="ce", plots=False)
    md = (tmp_path / "rep" / "report.md").read_text()
    assert "Scored on the dev sample, not on test" in md
    assert "| ce | 45.0 ± 63.5 |" in md  # mean of 0.40 and 0.50; half width t(0.975, 1) x 0.05 = 63.5 points
    assert "| ova_auc | +7.5 (×1.17, p=0.205, n=2) |" in md  # differences 5 and 10 points: t = 7.5 / 2.5 = 3
    assert [s.summary.n for s in report["summaries"]] == [2, 2]
    with pytest.raises(ValueError, match="no row has a score 'ents_p'; scores found: ents_f"):
        write_report(tmp_path / "r", tmp_path / "rep2", metric="ents_p", plots=False)
