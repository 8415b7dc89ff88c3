"""The lab's ``study`` commands: ``run`` a study's cells, ``report`` and ``status`` its results,
the papers' claims' ``verdicts``, and ``figure1`` of the OVA paper."""
from pathlib import Path
from typing import Dict, List, Optional, Tuple

import typer

from spacy_auc_ner.api import DataError

from .command_errors import one_line_errors

study_app = typer.Typer(
    name="study", help="Grids of training runs (methods x sizes x partitions): run them, report them, plot them.",
    no_args_is_help=True, add_completion=False, pretty_exceptions_enable=False,
)


def _err(msg: str) -> None:
    typer.echo(msg, err=True)


@study_app.command("run")
@one_line_errors
def run_command(
    spec: Path = typer.Argument(..., help="Study spec (YAML), e.g. studies/preset_cpu.yaml"),
    results: Optional[Path] = typer.Option(
        None, "--results", "-o", help="Results store (folder) to add rows to (default: results/<study name>)"
    ),
    workers: int = typer.Option(1, "--workers", "-w", help="Cells run at once, each in its own process (0: in this process)"),
    threads_per_worker: int = typer.Option(1, "--threads-per-worker", help="CPU threads per cell (OMP_NUM_THREADS, torch)"),
    corpora_dir: Optional[Path] = typer.Option(None, "--corpora-dir", help="Folder of <corpus>/{train,dev,test}.spacy (overrides the spec)"),
    configs_dir: Optional[Path] = typer.Option(None, "--configs-dir", help="Folder of the methods' configs (overrides the spec)"),
    gpu_id: Optional[int] = typer.Option(None, "--gpu-id", "-g", help="GPU for every cell (overrides the spec; -1: CPU)"),
    set_values: List[str] = typer.Option([], "--set", help="Replace a top-level spec key, KEY=<YAML>, e.g. --set 'sizes=[20, 50]' --set partitions=3"),
    corpus: List[str] = typer.Option([], "--corpus", help="Run only this corpus of the spec (repeatable)"),
    method: List[str] = typer.Option([], "--method", help="Run only this method of the spec, by its name there (repeatable)"),
    cell: List[str] = typer.Option([], "--cell", help="Run only this cell, by its id (as --dry-run lists it) or key (repeatable)"),
    runner: Optional[str] = typer.Option(None, "--runner", help="Cell function 'module:function' (default: train and evaluate)"),
    retry_failed: bool = typer.Option(True, "--retry-failed/--no-retry-failed", help="Rerun cells whose last run failed"),
    again: bool = typer.Option(False, "--again", help="Train the cells again even where they have an ok row (after a fix of the code they ran); reports read each cell's latest ok row, the old rows stay"),
    untraced: bool = typer.Option(False, "--untraced", help="Train again only the cells whose latest ok row came from a working tree with uncommitted changes that no stored diff records (study status counts them), so that every row a report reads traces to a commit"),
    ray: bool = typer.Option(False, "--ray", help="Dispatch cells to a Ray cluster (needs Ray: projects/lab/requirements.txt)"),
    ray_address: Optional[str] = typer.Option(None, "--ray-address", help="Ray cluster address (default: local or RAY_ADDRESS)"),
    dry_run: bool = typer.Option(False, "--dry-run", help="List the cells still to run and stop"),
    strict: bool = typer.Option(True, "--strict/--no-strict", help="Exit with status 1 when a cell failed (--no-strict: 0; failures are in the results either way)"),
    progress: bool = typer.Option(True, "--progress/--no-progress", help="Show the progress bar"),
):
    """Train and evaluate every cell of SPEC not yet in the results store, adding a row (a JSON file) per finished cell.

    The store must be new or a folder 'study run' wrote: anything else is refused before
    anything is written. Exits with status 1 when a cell failed (see --no-strict)."""
    from .execution import StudyError
    from .runner import plan, run_study, untraced_cells
    from .spec import load_spec, only_cells
    from .store import ResultsStore

    if threads_per_worker < 1:
        raise DataError(f"--threads-per-worker: expected 1 or more, got {threads_per_worker}")
    if workers < 0:
        raise DataError(f"--workers: expected 0 or more, got {workers}")
    study = load_spec(spec, corpora_dir=corpora_dir, configs_dir=configs_dir, gpu_id=gpu_id,
                      set_values=set_values, only_corpora=corpus, only_methods=method)
    # the cells' keys hash their configs: a missing one is refused here, by the dry run as by the run
    study.check_configs()
    study.check_overrides()  # an overrides key no config has (a typo): refused before any training
    study.check_tuning()  # a grid key no method's config has: refused before any training
    cells = only_cells(study.cells(), cell)  # --cell: one cell a process on a lent GPU (spec.only_cells)
    results = results or Path("results") / study.name
    store = ResultsStore(results)
    store.check()
    cell_runner = runner or study.runner
    if cell_runner is None:  # spacy train reads the corpus files: the dry run refuses them as the run does
        study.check_files()
    if untraced:
        cells = untraced_cells(cells, store.rows(warn=_err, cells=cells), store)
        again = True
    if dry_run:
        todo = plan(cells, store.rows(warn=_err, cells=cells), retry_failed=retry_failed, again=again)
        for cell in todo:
            typer.echo(cell.id)
        trials = sum(1 for c in todo if c.tuning is not None)
        _err(f"{len(todo)} of {len(cells)} cells to run" + (f" ({trials} tuning trials)" if study.tune else "") + f" -> {results}")
        return
    outcome = run_study(
        cells, results, workers=workers, runner=cell_runner, retry_failed=retry_failed, again=again,
        threads_per_worker=threads_per_worker, use_ray=ray, ray_address=ray_address, progress=progress,
        log=None if progress else _err,
    )
    _err(f"{study.name}: {outcome.ok} ok, {outcome.failed} failed, {outcome.skipped} already done "
         f"of {outcome.total} cells in {outcome.seconds:.0f} s -> {results}")
    if outcome.failed and strict:
        raise StudyError(f"{outcome.failed} of {outcome.total} cells failed; their errors are in {results} (--no-strict: exit 0)")


@study_app.command("report")
@one_line_errors
def report_command(
    results: Path = typer.Argument(..., help="Results store (folder) written by 'study run'"),
    out: Optional[Path] = typer.Option(None, "--out", "-o", help="Output folder (default: <results>_report)"),
    metric: Optional[str] = typer.Option(None, "--metric", help="Score to report, any number in the rows' scores (default: the spec's metric with --spec, else ents_seqeval_micro_f), e.g. ents_untyped_f"),
    baseline: Optional[str] = typer.Option(None, "--baseline", help="What the paired t-tests compare against: a method (ce), or VALUE_NAME=VALUE to pair each method with itself at that value (resampler=none); default: the spec's baseline with --spec, else ce; '' for none"),
    confidence: float = typer.Option(0.95, "--confidence", help="Confidence level of the intervals"),
    title: Optional[str] = typer.Option(None, "--title", help="Title of the markdown report"),
    plots: bool = typer.Option(True, "--plots/--no-plots", help="Write the PNG and SVG plots"),
    spec: Optional[Path] = typer.Option(None, "--spec", help="Report only the cells of this study spec (what they train now), named as it names them"),
    set_values: List[str] = typer.Option([], "--set", help="With --spec: replace a top-level spec key, KEY=<YAML>"),
    corpus: List[str] = typer.Option([], "--corpus", help="With --spec: only this corpus (repeatable)"),
    method: List[str] = typer.Option([], "--method", help="With --spec: only this method (repeatable)"),
    overwrite: bool = typer.Option(False, "--overwrite", help="Replace the files of an earlier report in --out"),
):
    """Mean and confidence interval per method and size, paired tests against the baseline,
    a markdown table (printed and saved as report.md), summary.json and the plots.

    Never writes into a results store, nor over an existing file without --overwrite."""
    from .report import write_report
    from .settings import DEFAULT_BASELINE, DEFAULT_METRIC

    if not 0 < confidence < 1:
        raise DataError(f"--confidence must lie in (0, 1), not {confidence}")
    out = out or results.with_name(results.name + "_report")
    cells, value_order = None, ()
    if spec is not None:
        from .spec import load_spec

        study = load_spec(spec, set_values=set_values, only_corpora=corpus, only_methods=method)
        study.check_configs()
        cells = study.cells()
        value_order = [v for v in study.values if v is not None]
        metric = metric or study.metric
        baseline = study.baseline if baseline is None else baseline
    metric = metric or DEFAULT_METRIC
    baseline = DEFAULT_BASELINE if baseline is None else baseline
    report = write_report(
        results, out, metric=metric, baseline=baseline or None, confidence=confidence,
        title=title, plots=plots, cells=cells, warn=_err, value_order=value_order,
        overwrite=overwrite, inputs=[spec],
    )
    typer.echo(report["markdown"])
    _err(f"wrote {out / 'report.md'}, {out / 'summary.json'}" + "".join(f", {p}" for p in report["plots"]))


@study_app.command("status")
@one_line_errors
def status_command(
    spec: Path = typer.Argument(..., help="Study spec (YAML)"),
    results: Optional[Path] = typer.Option(None, "--results", "-o", help="Results store (default: results/<study name>)"),
    listing: bool = typer.Option(False, "--list", help="Also list the rows its reports do not read"),
):
    """How far a study has got in its store: cells done, failed and to run (tuning trials
    apart), each method's mean wall seconds per finished cell, and the rows its reports do not
    read: those of cells the spec no longer has (a changed config or override) and those of
    the old format that matched no cell."""
    from .spec import load_spec
    from .store import ResultsStore, latest_rows

    study = load_spec(spec)
    study.check_configs()
    results = results or Path("results") / study.name
    store = ResultsStore(results)
    cells = study.cells()
    read = store.read(cells=cells)
    for skipped in read.skipped:
        _err(skipped.warning())
    rows = read.rows
    latest = latest_rows(r for r in rows if r["key"])
    for kind, group in (("reported cells", [c for c in cells if c.tuning is None]), ("tuning trials", [c for c in cells if c.tuning is not None])):
        if group:
            status = [latest[c.key]["status"] if c.key in latest else None for c in group]
            typer.echo(f"{kind}: {status.count('ok')} ok, {len(status) - status.count('ok') - status.count(None)} failed, "
                       f"{status.count(None)} to run, of {len(group)}")
    for line in mean_seconds_lines(cells, latest):
        typer.echo(line)
    finished = [latest[c.key] for c in cells if c.key in latest and latest[c.key]["status"] == "ok"]
    warning = store.untraced_warning(finished)
    if warning:
        _err(warning)
    keys = {c.key for c in cells}
    unread = [r for r in rows if r["key"] not in keys]
    typer.echo(f"rows: {len(rows) + len(read.skipped)} in {results}, {len(unread) + len(read.skipped)} not read by this spec "
               f"({sum(r['key'] is None for r in unread)} of them unmatched rows of the old format, "
               f"{len(read.skipped)} unreadable)")
    if listing:
        for row in unread:
            typer.echo(f"{row['key'] or 'unmatched'}\t{row.get('cell_id')}\t{row['status']}\t{row.get('finished')}")
        for skipped in read.skipped:
            typer.echo(f"{skipped.path.parent.name}\t{skipped.path.name}\tunreadable\t{skipped.reason}")


def mean_seconds_lines(cells, latest) -> List[str]:
    """Per method of the spec (in its order): the mean wall seconds of its finished reported
    cells and of its finished tuning trials, as their rows recorded them."""
    seconds: Dict[str, Tuple[List[float], List[float]]] = {}  # method -> (reported, tuning)
    tuned_as: Dict[str, str] = {}  # a method without trials of its own: whose trials choose its point
    # reported cells first: they list the methods in the spec's order (trials come first in
    # `cells`, and a method tuned_as another has none)
    for cell in sorted(cells, key=lambda c: c.tuning is not None):
        row = latest.get(cell.key)
        by_kind = seconds.setdefault(cell.method, ([], []))
        if cell.selection is not None and "tuned_as" in cell.selection:
            tuned_as[cell.method] = cell.selection["tuned_as"]
        if row is not None and row["status"] == "ok" and isinstance(row.get("seconds"), (int, float)):
            by_kind[0 if cell.tuning is None else 1].append(float(row["seconds"]))
    lines = ["mean seconds per finished cell (reported; tuning trials):"]
    for method, by_kind in seconds.items():
        parts = [f"{sum(v) / len(v):.0f} s (n={len(v)})" if v else "-" for v in by_kind]
        if method in tuned_as:
            parts[1] = f"none, tuned as {tuned_as[method]}"
        lines.append(f"  {method}: {parts[0]}; {parts[1]}")
    return lines


@study_app.command("verdicts")
@one_line_errors
def verdicts_command(
    claims: Path = typer.Argument(..., help="Claims file (YAML), e.g. studies/claims.yaml; its results stores' paths are relative to it"),
    out: Optional[Path] = typer.Option(None, "--out", "-o", help="Also write the markdown table to this file"),
    overwrite: bool = typer.Option(False, "--overwrite", help="Replace the --out file when it exists"),
):
    """A verdict per claim of the papers: the paired difference of its two methods over the
    training draws (a draw's matching cells averaged into one pair), its 95 % interval and
    p-value, Holm's adjustment over every claim, and confirmed / not confirmed / contradicted /
    not measured. Rows that cannot be read are skipped with a warning."""
    from spacy_auc_ner.api import check_output_file, write_text

    from .claims_file import load_claims
    from .store import check_not_in_store
    from .verdict_table import markdown_table
    from .verdicts import inputs, verdicts

    loaded = load_claims(claims)
    if out is not None:  # what it reads (the claims file, the stores, their specs) is never written over
        check_output_file(out, inputs(claims, loaded), overwrite)
        check_not_in_store(out)
    table = markdown_table(verdicts(loaded, warn=_err))
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
    from .figure1 import figure1

    pairs = []
    for item in models:
        title, sep, path = item.partition("=")
        if not sep or not title or not path:
            raise DataError(f"{item!r} is not TITLE=MODEL_PATH")
        pairs.append((title, path))
    if not data.exists():
        raise DataError(f"{data}: no such file")
    shares = figure1(pairs, data, out, pipe_name)
    for title, s in shares.items():
        typer.echo(f"{title}: " + ", ".join(f"{k} {v:.1%}" for k, v in s.items()))
    _err(f"wrote {out.with_suffix('.png')} and {out.with_suffix('.svg')}")
