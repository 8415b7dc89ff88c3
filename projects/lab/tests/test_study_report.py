"""The report renders from a tiny results store: markdown content, summary.json, PNG and SVG."""
import json

import pytest
import yaml
from typer.testing import CliRunner

import lab_helpers
from auc_ner_lab.report import write_report
from auc_ner_lab.runner import run_study
from auc_ner_lab.spec import parse_spec
from auc_ner_lab.study_cli import study_app
from lab_helpers import write_rows as _write


def _row(method, partition, f, *, corpus="ncbi", setting="lowres", size=50, value=None, status="ok"):
    row = {"cell_id": f"{corpus}/{method}/{size}/{value}/p{partition}", "study": "t", "corpus": corpus,
           "setting": setting, "size": size, "value": value, "method": method, "partition": partition,
           "status": status, "seed": partition}
    if status == "ok":
        row["scores"] = {"ents_seqeval_micro_f": f, "ents_seqeval_macro_f": f / 2, "ents_f": f}
    else:
        row["error"] = "RuntimeError: out of memory"
    return row


LOWRES = [
    _row("ce", 0, 0.50), _row("ce", 1, 0.55), _row("ce", 2, 0.60),
    _row("ova_auc", 0, 0.60), _row("ova_auc", 1, 0.70), _row("ova_auc", 2, 0.65),
    _row("ce", 0, 0.70, size=100), _row("ce", 1, 0.72, size=100), _row("ce", 2, 0.74, size=100),
    _row("ova_auc", 0, 0.70, size=100), _row("ova_auc", 1, 0.0, size=100, status="failed"),
    _row("ova_auc", 2, 0.73, size=100),
    _row("ce", 0, 0.30, corpus="s800"), _row("ova_auc", 0, 0.35, corpus="s800"),
]


def test_lowres_report_tables_and_plots(tmp_path):
    results = _write(tmp_path / "res", LOWRES)
    report = write_report(results, tmp_path / "out")
    md = report["markdown"]
    for ext in ("png", "svg"):  # the paired differences to the baseline, as a figure
        path = tmp_path / "out" / f"paired_vs_ce.{ext}"
        assert path in report["plots"] and path.stat().st_size > 1000
    assert (tmp_path / "out" / "report.md").read_text() == md
    for ext in ("png", "svg"):
        path = tmp_path / "out" / f"f1_vs_size.{ext}"
        assert path.exists() and path.stat().st_size > 1000
    assert "## ncbi (lowres: size)" in md and "## s800 (lowres: size)" in md
    assert "| method | 50 | 100 |" in md
    # ce at 50: 55.0 ± 4.302653 * 5 / sqrt 3 = 12.4; ova_auc not significant at 50 (p = 0.074);
    # at 100 the pairs are (70, 70) and (73, 74): mean -0.5, t = -1 on 1 df, p = 0.5
    assert "| ce | 55.0 ± 12.4 | 72.0 ± 5.0 |" in md
    assert "| ova_auc | 65.0 ± 12.4 | 71.5 ± 19.1 (n=2, 1 failed) |" in md
    # ratios of the means over the pairs: 65 / 55 = 1.18 and 71.5 / 72 = 0.99
    assert "| ova_auc | +10.0 (×1.18, p=0.074, n=3) | -0.5 (×0.99, p=0.500, n=2) |" in md
    assert "| ce | 30.0 | " not in md and "| ce | 30.0 |" in md  # one partition: no interval
    assert "## Failed cells (1)" in md and "RuntimeError: out of memory" in md
    summary = json.loads((tmp_path / "out" / "summary.json").read_text())
    first = summary[0]
    assert (first["corpus"], first["method"], first["size"], first["n"]) == ("ncbi", "ce", 50, 3)
    assert first["ci_low"] == pytest.approx(0.55 - 0.124209, abs=1e-5)


def test_plots_written_again_from_the_same_results_are_the_same_bytes(tmp_path):
    """Regenerating the evidence leaves a plot's file as it was unless its data changed (no
    date, no random ids), so git shows only the plots whose numbers moved."""
    results = _write(tmp_path / "res", LOWRES)
    first = write_report(results, tmp_path / "a")["plots"]
    second = write_report(results, tmp_path / "b")["plots"]
    assert len(first) == len(second) == 4
    for a, b in zip(first, second):
        assert a.name == b.name and a.read_bytes() == b.read_bytes(), a.name
    changed = write_report(_write(tmp_path / "res2", LOWRES[:-1] + [_row("ova_auc", 0, 0.45, corpus="s800")]), tmp_path / "c")["plots"]
    assert (tmp_path / "c" / "f1_vs_size.svg").read_bytes() != (tmp_path / "a" / "f1_vs_size.svg").read_bytes()
    assert len(changed) == 4


def test_significance_marks(tmp_path):
    rows = [_row("ce", p, 0.5 + 0.01 * p) for p in range(4)] + [_row("ova_auc", p, 0.6 + 0.011 * p) for p in range(4)]
    rows += [_row("ova_bce", p, 0.3 + 0.012 * p) for p in range(4)]
    md = write_report(_write(tmp_path / "r", rows), tmp_path / "o", plots=False)["markdown"]
    auc_line = next(line for line in md.splitlines() if line.startswith("| ova_auc | 6"))
    bce_line = next(line for line in md.splitlines() if line.startswith("| ova_bce | 3"))
    assert auc_line.endswith("▲ |") and bce_line.endswith("▼ |")
    assert not (tmp_path / "o" / "f1_vs_size.png").exists()


def test_pairs_across_device_kinds_are_counted_in_the_paired_table(tmp_path):
    """ce trained partition 1 on a GPU, the others on the CPU; ova_auc partitions 0 and 1 on a
    GPU: only partition 0 joins two kinds (1 mixed); ova_bce, on the GPU exactly where ce is,
    mixes none; the legend appears because a pair mixes."""
    gpu = {"device": "cuda:0 NVIDIA H100 80GB HBM3"}
    rows = [dict(_row("ce", p, 0.5 + 0.01 * p), **(gpu if p == 1 else {})) for p in range(3)]
    rows += [dict(_row("ova_auc", p, 0.6 + 0.01 * p), **(gpu if p < 2 else {})) for p in range(3)]
    rows += [dict(_row("ova_bce", p, 0.3 + 0.02 * p), **(gpu if p == 1 else {})) for p in range(3)]
    md = write_report(_write(tmp_path / "r", rows), tmp_path / "o", plots=False)["markdown"]
    assert "pairs; k mixed: k of the pairs join a GPU row with a CPU one, which train apart numerically):" in md
    auc = next(line for line in md.splitlines() if line.startswith("| ova_auc | +"))
    bce = next(line for line in md.splitlines() if line.startswith("| ova_bce | -"))
    assert auc.endswith("n=3; 1 mixed) |") and bce.endswith("n=3) |")
    plain = write_report(_write(tmp_path / "r2", [_row(m, p, 0.5) for m in ("ce", "ova_auc") for p in range(2)]), tmp_path / "o2",
                         plots=False)["markdown"]
    assert "mixed" not in plain


def test_other_settings_render(tmp_path):
    rows = []
    for setting, values in (("imbalance", [0.01, 0.05]), ("missing", [0.1, 0.5]), ("resampling", ["none", "sCR"])):
        for v in values:
            for p in range(2):
                rows += [_row("ce", p, 0.4 + 0.1 * p, setting=setting, value=v, size=200),
                         _row("ova_auc", p, 0.5 + 0.1 * p, setting=setting, value=v, size=200)]
    report = write_report(_write(tmp_path / "r", rows), tmp_path / "o")
    md = report["markdown"]
    assert "## ncbi, n=200 (imbalance: entity tokens in the training set)" in md
    assert "| method | 1% | 5% |" in md and "| method | p=0.1 | p=0.5 |" in md and "| method | none | sCR |" in md
    for stem in ("f1_vs_share", "f1_vs_mask_p", "f1_by_resampler"):
        assert (tmp_path / "o" / f"{stem}.png").exists() and (tmp_path / "o" / f"{stem}.svg").exists()


def test_report_cli(tmp_path):
    results = _write(tmp_path / "res", LOWRES)
    runner = CliRunner()
    out = runner.invoke(study_app, ["report", str(results), "--metric", "ents_seqeval_macro_f", "--no-plots"])
    assert out.exit_code == 0, out.output
    assert "| ce | 27.5 ± 6.2 |" in out.output  # macro = micro / 2 in the made-up rows
    assert (tmp_path / "res_report" / "report.md").exists()
    missing = runner.invoke(study_app, ["report", str(tmp_path / "nothing")])
    assert missing.exit_code == 1 and "no results rows" in missing.output



def test_a_report_without_matplotlib_is_refused_before_it_writes(tmp_path, monkeypatch):
    """Issue 66 S11: without matplotlib, `study report` wrote report.md, summary.json and
    compute.json, then failed, and its rerun with --no-plots was refused ("already exists"):
    the plotting dependency is checked before anything is written (unless --no-plots)."""
    import sys

    from lab_helpers import invoke, one_error_line

    monkeypatch.setitem(sys.modules, "matplotlib", None)  # import fails as if not installed
    results, out = _write(tmp_path / "res", LOWRES), tmp_path / "out"
    line = one_error_line(invoke(study_app, "report", results, "--out", out))
    assert line.startswith("Error: plotting needs matplotlib, which is not installed ") and "--no-plots" in line
    assert not out.exists() or not any(out.iterdir())
    done = invoke(study_app, "report", results, "--out", out, "--no-plots")
    assert done.exit_code == 0, done.stderr
    assert sorted(p.name for p in out.iterdir()) == ["compute.json", "report.md", "summary.json"]

def test_report_of_one_spec_and_warning_on_changed_overrides(tmp_path):
    base = {"name": "t", "corpora": ["toy"], "methods": ["ce"], "sizes": [10], "partitions": 2}
    out = tmp_path / "r"
    quiet = dict(workers=0, runner=lab_helpers.instant_cell, progress=False, log=lambda m: None)
    run_study(parse_spec(base).cells(), out, **quiet)
    changed = dict(base, overrides={"training.max_steps": 5})
    run_study(parse_spec(changed).cells(), out, **quiet)
    warnings = []
    write_report(out, tmp_path / "all", plots=False, warn=warnings.append)
    assert len(warnings) == 2 and "same cell, other overrides" in warnings[0]
    spec_path = tmp_path / "s.yaml"
    spec_path.write_text(yaml.safe_dump(changed))
    result = CliRunner().invoke(study_app, ["report", str(out), "--spec", str(spec_path), "--no-plots"])
    assert result.exit_code == 0 and "same cell" not in result.output
    assert "| ce | 41.5 ± 6.4 |" in result.output


def test_paired_interval_by_hand(tmp_path):
    """ova_auc - ce at 50 sentences: differences 0.10, 0.15, 0.05 -> mean 0.10, sd 0.05,
    half width t(0.975, 2) 4.302653 * 0.05 / sqrt 3 = 0.12421; one pair: no width."""
    from auc_ner_lab.aggregate import aggregate
    from auc_ner_lab.plots import paired_interval

    by = {(r.method, r.corpus, r.size): r for r in aggregate(LOWRES)}
    mean, low, high = paired_interval(by[("ova_auc", "ncbi", 50)], by[("ce", "ncbi", 50)])
    assert mean == pytest.approx(0.10) and high - mean == pytest.approx(0.124215, abs=1e-5) and mean - low == pytest.approx(high - mean)
    assert paired_interval(by[("ova_auc", "s800", 50)], by[("ce", "s800", 50)]) == pytest.approx((0.05, 0.05, 0.05))


def test_no_paired_figure_without_a_baseline(tmp_path):
    results = _write(tmp_path / "res", LOWRES)
    report = write_report(results, tmp_path / "out", baseline=None)
    assert not list((tmp_path / "out").glob("paired_vs_*")) and report["plots"]


RESAMPLING = [  # ce and ova_auc at 200 sentences, three partitions, resampler none / sCRD / nsCRD
    _row(m, p, f, setting="resampling", value=v, size=200)
    for m, v, scores in (
        ("ce", "none", (0.40, 0.50, 0.45)), ("ce", "sCRD", (0.46, 0.52, 0.49)), ("ce", "nsCRD", (0.38, 0.50, 0.44)),
        ("ova_auc", "none", (0.50, 0.55, 0.60)), ("ova_auc", "sCRD", (0.50, 0.55, 0.60)),
    )
    for p, f in enumerate(scores)
]


def test_a_value_baseline_pairs_each_method_with_itself(tmp_path):
    """`resampler=none`: ce sCRD - ce none = 0.06, 0.02, 0.04: mean 0.04, sd 0.02,
    t = 0.04 / (0.02 / sqrt 3) = 3.4641 on 2 df, p = 0.0742; ce nsCRD - none = -0.02, 0, -0.01;
    ova_auc sCRD - none = 0 three times: no difference. Nothing pairs with the none cells or
    across methods."""
    from auc_ner_lab.aggregate import aggregate

    by = {(r.method, r.value): r for r in aggregate(RESAMPLING, baseline="resampler=none")}
    t = by[("ce", "sCRD")].vs_baseline
    assert t.n == 3 and t.mean_diff == pytest.approx(0.04) and t.p_value == pytest.approx(0.0742, abs=1e-4)
    assert by[("ce", "nsCRD")].vs_baseline.mean_diff == pytest.approx(-0.01)
    assert by[("ova_auc", "sCRD")].vs_baseline.mean_diff == pytest.approx(0.0)
    assert by[("ce", "none")].vs_baseline is None and by[("ova_auc", "none")].vs_baseline is None
    # the same rows against the method ce: ova_auc pairs with ce at its own resampler
    by_method = {(r.method, r.value): r for r in aggregate(RESAMPLING, baseline="ce")}
    assert by_method[("ova_auc", "none")].vs_baseline.mean_diff == pytest.approx(0.10)
    assert by_method[("ce", "sCRD")].vs_baseline is None

    report = write_report(_write(tmp_path / "r", RESAMPLING), tmp_path / "o", baseline="resampler=none")
    md = report["markdown"]
    assert "better / worse than the same method at resampler=none" in md
    assert "Paired difference to the same method at resampler=none" in md
    assert "| method | none | nsCRD | sCRD |" in md  # values in sorted order
    assert "| ce | – | -1.0 (×0.98, p=0.225, n=3) | +4.0 (×1.09, p=0.074, n=3) |" in md
    assert (tmp_path / "o" / "paired_vs_resampler_none.png").stat().st_size > 1000


def test_a_value_baseline_reads_numbers_as_cells_write_them():
    """mask_p=0.70 names the cells of 0.7; a baseline of another setting's values pairs nothing."""
    from auc_ner_lab.aggregate import aggregate
    from auc_ner_lab.baseline import Baseline

    rows = [_row("ce", p, f, setting="missing", value=v, size=500)
            for v, scores in ((0.7, (0.3, 0.4)), (0.9, (0.2, 0.2))) for p, f in enumerate(scores)]
    by = {r.value: r for r in aggregate(rows, baseline="mask_p=0.70")}
    assert Baseline.parse("mask_p=0.70").value == "0.7"
    assert by[0.9].vs_baseline.mean_diff == pytest.approx(-0.15) and by[0.7].vs_baseline is None
    assert all(r.vs_baseline is None for r in aggregate(rows, baseline="resampler=none"))


def test_a_baseline_that_pairs_nothing_is_said(tmp_path):
    warnings = []
    write_report(_write(tmp_path / "r", LOWRES), tmp_path / "o", baseline="resampler=none", plots=False, warn=warnings.append)
    assert len(warnings) == 1 and "no result pairs with the baseline 'resampler=none'" in warnings[0]
    warnings.clear()
    write_report(_write(tmp_path / "r", LOWRES), tmp_path / "o", baseline="ce", plots=False, warn=warnings.append, overwrite=True)
    assert warnings == []


def test_the_spec_baseline_is_the_reports_default(tmp_path):
    spec = {"name": "t", "setting": "resampling", "corpora": ["ncbi"], "methods": ["ce", "ova_auc"],
            "sizes": [200], "resamplers": ["none", "sCRD", "nsCRD"], "partitions": 3, "baseline": "resampler=none"}
    spec_path = tmp_path / "s.yaml"
    spec_path.write_text(yaml.safe_dump(spec))
    cells = parse_spec(spec).cells()
    scores = {(r["method"], r["value"], r["partition"]): r["scores"] for r in RESAMPLING}
    rows = [dict(c.describe(), status="ok", scores=scores[(c.method, c.value, c.partition)])
            for c in cells if (c.method, c.value, c.partition) in scores]
    results = _write(tmp_path / "r", rows)
    out = CliRunner().invoke(study_app, ["report", str(results), "--spec", str(spec_path), "--no-plots"])
    assert out.exit_code == 0, out.output
    assert "Paired difference to the same method at resampler=none" in out.output
    assert "| method | none | sCRD | nsCRD |" in out.output  # the spec's order of the values
    overridden = CliRunner().invoke(study_app, ["report", str(results), "--spec", str(spec_path), "--no-plots", "--baseline", "ce", "--overwrite"])
    assert "Paired difference to `ce`" in overridden.output


@pytest.mark.parametrize(
    "setting,values,baseline,message",
    [
        ("resampling", {"resamplers": ["none", "sC"]}, "resampler=sCRD", "sCRD is not one of the spec's resamplers (none, sC)"),
        ("resampling", {"resamplers": ["none", "sC"]}, "share=0.1", "the values of a resampling study are named resampler, not share"),
        ("lowres", {}, "size=20", "a lowres study has none; name a method"),
        ("missing", {"mask_p": [0.5, 0.9]}, "mask_p=0.7", "0.7 is not one of the spec's mask_p (0.5, 0.9)"),
        ("lowres", {}, "bce", "'bce' is not a method of this spec (ce, ova_auc)"),
        ("lowres", {}, 3, "3 is not a method name"),
    ],
)
def test_a_spec_baseline_that_names_nothing_is_refused(setting, values, baseline, message):
    from auc_ner_lab.spec import SpecError

    spec = dict({"name": "t", "setting": setting, "corpora": ["ncbi"], "methods": ["ce", "ova_auc"], "sizes": [50],
                 "baseline": baseline}, **values)
    with pytest.raises(SpecError, match="baseline: ") as info:
        parse_spec(spec)
    assert message in str(info.value)
