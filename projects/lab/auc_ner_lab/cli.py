"""The lab's command line, ``python -m auc_ner_lab`` (run from projects/lab): studies
(``study run|report|status|verdicts|figure1``), the known corpora (``corpus get|list``), their
statistics (``stats``, Table I), low-resource partitions (``partition``) and the documents'
generated figures (``docs [--check]``). Expected failures
end a command with one ``Error:`` line, as in the package's own command line."""
import json
from pathlib import Path
from typing import List, Optional

import typer

from spacy_auc_ner.api import DataError
from spacy_auc_ner.api import main as package_main

from .command_errors import one_line_errors
from .study_cli import study_app

app = typer.Typer(
    name="auc-ner-lab",
    help="The lab of spacy-auc-ner: studies that compare NER objectives, the known corpora, their statistics and low-resource partitions.",
    no_args_is_help=True, add_completion=False, pretty_exceptions_enable=False,
)
corpus_app = typer.Typer(help="The known corpora: conll2003, ncbi_disease, s800.", no_args_is_help=True)
app.add_typer(corpus_app, name="corpus")
app.add_typer(study_app, name="study")


@app.command("docs")
@one_line_errors
def docs_command(
    check: bool = typer.Option(False, "--check", help="Write nothing: exit 1, naming each file and block, when a printed figure differs from what the rows give"),
):
    """The documents' figures from the committed rows: every generated file of docs/evidence/
    and every generated block of README.md, projects/lab/README.md, docs/*.md and
    docs/evidence/*.md (auc_ner_lab.evidence.docs), without the plots (scripts/evidence.py adds them)."""
    from .evidence.docs import docs

    status = docs(check=check, say=typer.echo)
    if check and not status:
        typer.echo("every generated figure matches the rows")
    raise typer.Exit(status)


def _ints(text: str, option: str) -> List[int]:
    try:
        values = [int(x) for x in text.replace(" ", ",").split(",") if x]
    except ValueError:
        raise DataError(f"{option}: expected comma-separated integers, got {text!r}") from None
    if not values or min(values) < 1:
        raise DataError(f"{option}: expected positive integers, got {text!r}")
    return values


@app.command()
@one_line_errors
def stats(
    paths: List[str] = typer.Argument(..., help="Corpus folders (with train/dev/test .spacy or .tsv), files, or known corpus names."),
    as_json: bool = typer.Option(False, "--json", help="Print JSON instead of markdown tables."),
    base: float = typer.Option(2.0, help="Log base of the rareness r_t = -log(share of tokens of type t)."),
    data_dir: Optional[Path] = typer.Option(None, help="Folder searched first for known corpus names (then $SPACY_AUC_NER_DATA, assets/, data/, ../shared/data)."),
):
    """Corpus statistics (Table I of the papers) as markdown, or JSON.

    Sentences and tokens per split, entity types, % of B/I/O tokens, % of sentences with an
    entity, and each type's token share and rareness r_t.
    """
    from .corpora import CORPORA, locate
    from .corpus_stats import corpus_statistics, to_markdown

    results = []
    for p in paths:
        path = Path(p)
        if not path.exists() and p in CORPORA:
            found = locate(p, data_dir)
            if found is None:
                raise DataError(f"{p}: no local copy found; fetch it with 'python -m auc_ner_lab corpus get {p} DIR'")
            path = found
        results.append(corpus_statistics(path, name=path.name if path.is_dir() else None, base=base))
    typer.echo(json.dumps(results, indent=2) if as_json else to_markdown(results))

@app.command()
@one_line_errors
def partition(
    input_path: Path = typer.Argument(..., help="Training corpus: a .spacy or column file."),
    output_dir: Path = typer.Argument(..., help="Folder for the partitions and manifest.json."),
    sizes: str = typer.Option("20,50,100,200,300,400,500", help="Comma-separated training set sizes (sentences)."),
    partitions: int = typer.Option(10, help="Random partitions per size."),
    seed: int = typer.Option(0, help="Base seed: partition p of every size uses seed + p."),
    entity_percent: Optional[float] = typer.Option(None, help="Draw with the imbalance generator instead: this % of entity tokens."),
    tolerance: float = typer.Option(0.1, help="With --entity-percent: allowed relative miss of the target."),
    fmt: str = typer.Option("spacy", "--format", help="Output format: spacy or tsv."),
    overwrite: bool = typer.Option(False, "--overwrite", help="Replace partition files and a manifest already in OUTPUT_DIR."),
):
    """Write low-resource training sets (sizes x partitions) and a JSON manifest; never over
    the input, nor over an existing file without --overwrite.

    Seeded and reproducible: file n{size}-p{p} holds what the reader spacy_auc_ner.LowResource.v1
    yields with n = size and seed = seed + p (EntityRatio.v1 with --entity-percent).
    """
    from .partitions import write_partitions

    size_list = _ints(sizes, "--sizes")
    if partitions < 1:
        raise DataError(f"--partitions: expected a positive integer, got {partitions}")
    if fmt not in ("spacy", "tsv"):
        raise DataError(f"--format: expected spacy or tsv, got {fmt!r}")
    manifest = write_partitions(input_path, output_dir, size_list, partitions, seed, entity_percent, tolerance, fmt, overwrite=overwrite)
    typer.echo(f"Wrote {len(manifest['files'])} partitions and {output_dir / 'manifest.json'}", err=True)

@corpus_app.command("get")
@one_line_errors
def corpus_get(
    name: str = typer.Argument(..., help="Corpus: conll2003, ncbi_disease or s800."),
    output_dir: Path = typer.Argument(..., help="Folder for train/dev/test."),
    data_dir: Optional[Path] = typer.Option(None, help="Folder searched first for NAME/{train,dev,test}.tsv (then $SPACY_AUC_NER_DATA, assets/, data/, ../shared/data)."),
    fmt: str = typer.Option("spacy", "--format", help="Output format: spacy or tsv."),
    overwrite: bool = typer.Option(False, "--overwrite", help="Replace train/dev/test files already in OUTPUT_DIR (never the local copy read)."),
):
    """Write a known corpus's train/dev/test to OUTPUT_DIR (never over the local copy it
    reads, nor over an existing file without --overwrite).

    From a local copy (NAME/{train,dev,test}.tsv) when found; else the original files are
    downloaded at their pinned commits, checked against their git blob ids and converted.
    """
    from .corpora import get_corpus

    summary = get_corpus(name, output_dir, data_dir=data_dir, fmt=fmt, overwrite=overwrite)
    counts = ", ".join(f"{s} {f['sentences']}" for s, f in summary["files"].items())
    typer.echo(f"{name} from {summary['origin']}: {counts} sentences -> {output_dir}", err=True)

@corpus_app.command("list")
@one_line_errors
def corpus_list(data_dir: Optional[Path] = typer.Option(None, help="Folder to look in first.")):
    """List the known corpora and where a local copy was found."""
    from .corpora import CORPORA, locate

    for name, source in CORPORA.items():
        found = locate(name, data_dir)
        typer.echo(f"{name}\t{source.description}\t{found or 'not found locally (download from github.com/' + source.repo + ')'}")


def main(argv: Optional[List[str]] = None) -> int:
    """Run the lab's command line on `argv` (None: ``sys.argv[1:]``); returns the exit status."""
    return package_main(argv, app=app, prog_name="auc-ner-lab")
