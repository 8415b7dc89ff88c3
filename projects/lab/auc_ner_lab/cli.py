"""`spacy-auc-ner study run|report|figure1`: the study's command line (a typer sub-app).

Mounted into the main app as ``study``; also runnable alone: ``python -m spacy_auc_ner.cli.study``.
"""
from pathlib import Path
from typing import List, Optional

import typer

from .errors import fail, one_line_errors

study_app = typer.Typer(
    name="study",
    help="Grids of training runs (methods x sizes x partitions): run them, report them, plot them.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
)


def _err(msg: str) -> None:
    typer.echo(msg, err=True)


@study_app.command("run")
@one_line_errors
def run_command(
    spec: Path = typer.Argument(..., help="Study spec (YAML), e.g. studies/preset_cpu.yaml"),
    results: Optional[Path] = typer.Option(
        None, "--results", "-o", help="JSONL results file to append to (default: results/<study name>.jsonl)"
    ),
    workers: int = typer.Option(1, "--workers", "-w", help="Cells run at once, each in its own process (0: in this process)"),
    threads_per_worker: int = typer.Option(1, "--threads-per-worker", help="CPU threads per cell (OMP_NUM_THREADS, torch)"),
    corpora_dir: Optional[Path] = typer.Option(None, "--corpora-dir", help="Folder of <corpus>/{train,dev,test}.spacy (overrides the spec)"),
    configs_dir: Optional[Path] = typer.Option(None, "--configs-dir", help="Folder of the methods' configs (overrides the spec)"),
    gpu_id: Optional[int] = typer.Option(None, "--gpu-id", "-g", help="GPU for every cell (overrides the spec; -1: CPU)"),
    set_values: List[str] = typer.Option([], "--set", help="Replace a top-level spec key, KEY=<YAML>, e.g. --set 'sizes=[20, 50]' --set partitions=3"),
    corpus: List[str] = typer.Option([], "--corpus", help="Run only this corpus of the spec (repeatable)"),
    method: List[str] = typer.Option([], "--method", help="Run only this method of the spec, by its name there (repeatable)"),
    runner: Optional[str] = typer.Option(None, "--runner", help="Cell function 'module:function' (default: train and evaluate)"),
    retry_failed: bool = typer.Option(True, "--retry-failed/--no-retry-failed", help="Rerun cells whose last run failed"),
    ray: bool = typer.Option(False, "--ray", help="Dispatch cells to a Ray cluster (needs the 'ray' extra)"),
    ray_address: Optional[str] = typer.Option(None, "--ray-address", help="Ray cluster address (default: local or RAY_ADDRESS)"),
    dry_run: bool = typer.Option(False, "--dry-run", help="List the cells still to run and stop"),
    strict: bool = typer.Option(False, "--strict", help="Exit with status 1 when a cell failed (default: 0, failures are in the results)"),
    progress: bool = typer.Option(True, "--progress/--no-progress", help="Show the progress bar"),
):
    """Train and evaluate every cell of SPEC not yet in the results file, appending a JSON line per finished cell."""
    from ..study.runner import plan, read_results, run_study
    from ..study.spec import load_spec

    study = load_spec(
        spec, corpora_dir=corpora_dir, configs_dir=configs_dir, gpu_id=gpu_id,
        set_values=set_values, only_corpora=corpus, only_methods=method,
    )
    study.check_tuning()  # a grid key no method's config has: refused before any training
    cells = study.cells()
    results = results or Path("results") / f"{study.name}.jsonl"
    if dry_run:
        todo = plan(cells, read_results(results), retry_failed=retry_failed)
        for cell in todo:
            typer.echo(cell.id)
        trials = sum(1 for c in todo if c.tuning is not None)
        _err(f"{len(todo)} of {len(cells)} cells to run" + (f" ({trials} tuning trials)" if study.tune else "") + f" -> {results}")
        return
    cell_runner = runner or study.runner
    if cell_runner is None:
        study.check_files()
    outcome = run_study(
        cells,
        results,
        workers=workers,
        runner=cell_runner,
        retry_failed=retry_failed,
        threads_per_worker=threads_per_worker,
        use_ray=ray,
        ray_address=ray_address,
        progress=progress,
        log=None if progress else _err,
    )
    _err(
        f"{study.name}: {outcome.ok} ok, {outcome.failed} failed, {outcome.skipped} already done "
        f"of {outcome.total} cells in {outcome.seconds:.0f} s -> {results}"
    )
    if outcome.failed and strict:
        raise typer.Exit(1)


@study_app.command("report")
@one_line_errors
def report_command(
    results: Path = typer.Argument(..., help="JSONL results file written by 'study run'"),
    out: Optional[Path] = typer.Option(None, "--out", "-o", help="Output folder (default: <results without .jsonl>_report)"),
    metric: Optional[str] = typer.Option(None, "--metric", help="Score to report, any number in the rows' scores (default: the spec's metric with --spec, else ents_seqeval_micro_f), e.g. ents_untyped_f"),
    baseline: Optional[str] = typer.Option(None, "--baseline", help="What the paired t-tests compare against: a method (ce), or VALUE_NAME=VALUE to pair each method with itself at that value (resampler=none); default: the spec's baseline with --spec, else ce; '' for none"),
    confidence: float = typer.Option(0.95, "--confidence", help="Confidence level of the intervals"),
    title: Optional[str] = typer.Option(None, "--title", help="Title of the markdown report"),
    plots: bool = typer.Option(True, "--plots/--no-plots", help="Write the PNG and SVG plots"),
    spec: Optional[Path] = typer.Option(None, "--spec", help="Report only the cells of this study spec (its current overrides)"),
    set_values: List[str] = typer.Option([], "--set", help="With --spec: replace a top-level spec key, KEY=<YAML>"),
    corpus: List[str] = typer.Option([], "--corpus", help="With --spec: only this corpus (repeatable)"),
    method: List[str] = typer.Option([], "--method", help="With --spec: only this method (repeatable)"),
):
    """Mean and confidence interval per method and size, paired tests against the baseline,
    a markdown table (printed and saved as report.md), summary.json and the plots."""
    from ..study.report import write_report
    from ..study.spec import DEFAULT_BASELINE, DEFAULT_METRIC

    if not 0 < confidence < 1:
        fail(f"--confidence must lie in (0, 1), not {confidence}")
    out = out or results.with_name(results.stem + "_report")
    cell_ids, value_order = None, ()
    if spec is not None:
        from ..study.spec import load_spec

        study = load_spec(spec, set_values=set_values, only_corpora=corpus, only_methods=method)
        cell_ids = [c.id for c in study.cells()]
        value_order = [v for v in study.values if v is not None]
        metric = metric or study.metric
        baseline = study.baseline if baseline is None else baseline
    metric = metric or DEFAULT_METRIC
    baseline = DEFAULT_BASELINE if baseline is None else baseline
    report = write_report(
        results, out, metric=metric, baseline=baseline or None, confidence=confidence,
        title=title, plots=plots, cell_ids=cell_ids, warn=_err, value_order=value_order,
    )
    typer.echo(report["markdown"])
    _err(f"wrote {out / 'report.md'}, {out / 'summary.json'}" + "".join(f", {p}" for p in report["plots"]))


@study_app.command("verdicts")
@one_line_errors
def verdicts_command(
    claims: Path = typer.Argument(..., help="Claims file (YAML), e.g. studies/claims.yaml; its results paths are relative to it"),
    out: Optional[Path] = typer.Option(None, "--out", "-o", help="Also write the markdown table to this file"),
):
    """A verdict per claim of the papers: the paired difference of its two methods over every
    matching finished cell, its 95 % interval and p-value, and confirmed / not confirmed /
    contradicted / not measured."""
    from ..data.files import write_text
    from ..study.verdicts import load_claims, markdown_table, verdicts

    table = markdown_table(verdicts(load_claims(claims)))
    typer.echo(table, nl=False)
    if out is not None:
        write_text(out, table)
        _err(f"wrote {out}")


@study_app.command("figure1")
@one_line_errors
def figure1_command(
    models: List[str] = typer.Argument(..., help="TITLE=MODEL_PATH pairs, e.g. AUC=training/ova_auc/model-best BCE=training/ova_bce/model-best"),
    data: Path = typer.Option(..., "--data", "-d", help="Gold corpus (.spacy), e.g. the test split"),
    out: Path = typer.Option(Path("figure1"), "--out", "-o", help="Output path without suffix; .png and .svg are written"),
    pipe_name: str = typer.Option("auc_ner", "--pipe", help="Name of the OVA component in the pipelines"),
):
    """Figure 1 of the OVA paper: each token's probability for its gold label against the best other label, one panel per model."""
    from ..study.figure1 import figure1

    pairs = []
    for item in models:
        title, sep, path = item.partition("=")
        if not sep or not title or not path:
            fail(f"{item!r} is not TITLE=MODEL_PATH")
        pairs.append((title, path))
    if not data.exists():
        fail(f"{data}: no such file")
    shares = figure1(pairs, data, out, pipe_name)
    for title, s in shares.items():
        typer.echo(f"{title}: " + ", ".join(f"{k} {v:.1%}" for k, v in s.items()))
    _err(f"wrote {out.with_suffix('.png')} and {out.with_suffix('.svg')}")

