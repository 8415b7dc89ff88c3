"""The ``spacy-auc-ner`` command line: corpus conversion, statistics, low-resource partitions
and fetching the known corpora. Each command is a thin shell over the package's functions;
expected failures end it with one ``Error:`` line (:mod:`.errors`)."""
import json
from pathlib import Path
from typing import List, Optional

import typer

from ..data.columns import TAG_SCHEMES, DataError
from ..study.methods import DEFAULT_CONFIGS_DIR
from .errors import one_line_errors
from .lowres import lowres_app
from .study import study_app

app = typer.Typer(
    name="spacy-auc-ner",
    help="AUC-maximising NER for spaCy: corpora, low-resource training sets, and studies that compare NER objectives.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
)
corpus_app = typer.Typer(help="The known corpora: conll2003, ncbi_disease, s800.", no_args_is_help=True)
app.add_typer(corpus_app, name="corpus")
app.add_typer(study_app, name="study")
app.add_typer(lowres_app)  # pool, self-train, pretrain-config, recipe


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
def convert(
    input_path: Path = typer.Argument(..., help="Token/label column file (BIO, IOB1, BIOES or BILOU; tab or space separated)."),
    output_path: Path = typer.Argument(..., help="Output file: .spacy (one Doc per sentence) or a token<TAB>BIO column file; a folder gets INPUT_STEM.spacy."),
    scheme: str = typer.Option("auto", "--scheme", "-s", help=f"Label scheme of the input: {', '.join(TAG_SCHEMES)}."),
    token_column: int = typer.Option(0, help="Column of the token (0-based; negative counts from the end)."),
    label_column: int = typer.Option(-1, help="Column of the label (CoNLL-2003: -1 or 3)."),
    untyped_type: Optional[str] = typer.Option(None, help="Entity type for bare B/I/E/S tags (e.g. Species)."),
    overwrite: bool = typer.Option(False, "--overwrite", help="Replace an existing OUTPUT_PATH (never the input itself)."),
):
    """Convert a column file to .spacy or token<TAB>BIO, normalising labels to BIO.

    -DOCSTART- lines are dropped. A malformed line stops with its file and line, writing nothing.
    An existing output file is kept unless --overwrite; the input is never written over.
    """
    from ..data.columns import read_columns, write_sentences
    from ..outputs import check_output_file

    sentences = read_columns(input_path, scheme=scheme, token_column=token_column, label_column=label_column, untyped_type=untyped_type)
    if output_path.is_dir():
        output_path = output_path / f"{input_path.stem}.spacy"
    check_output_file(output_path, [input_path], overwrite)
    n = write_sentences(output_path, sentences)
    typer.echo(f"Wrote {n} sentences to {output_path}", err=True)


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
    from ..data.corpora import CORPORA, locate
    from ..data.statistics import corpus_statistics, to_markdown

    results = []
    for p in paths:
        path = Path(p)
        if not path.exists() and p in CORPORA:
            found = locate(p, data_dir)
            if found is None:
                raise DataError(f"{p}: no local copy found; fetch it with 'spacy-auc-ner corpus get {p} DIR'")
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
):
    """Write low-resource training sets (sizes x partitions) and a JSON manifest.

    Seeded and reproducible: file n{size}-p{p} holds what the reader spacy_auc_ner.LowResource.v1
    yields with n = size and seed = seed + p (EntityRatio.v1 with --entity-percent).
    """
    from ..training.partitions import write_partitions

    size_list = _ints(sizes, "--sizes")
    if partitions < 1:
        raise DataError(f"--partitions: expected a positive integer, got {partitions}")
    if fmt not in ("spacy", "tsv"):
        raise DataError(f"--format: expected spacy or tsv, got {fmt!r}")
    manifest = write_partitions(input_path, output_dir, size_list, partitions, seed, entity_percent, tolerance, fmt)
    typer.echo(f"Wrote {len(manifest['files'])} partitions and {output_dir / 'manifest.json'}", err=True)


@app.command()
@one_line_errors
def config(
    name: Optional[str] = typer.Argument(None, help="Method: a file name of CONFIGS_DIR/methods/ (e.g. ova_auc); leave out with --all or --list."),
    encoder: str = typer.Option("cpu", "--encoder", "-e", help="Encoder family: cpu (configs/base_cpu.cfg) or trf (configs/base_trf.cfg)."),
    output: Optional[Path] = typer.Option(None, "--output", "-o", help="File to write (default: print); with --all, a folder."),
    all_methods: bool = typer.Option(False, "--all", help="Write every method on both encoders to the --output folder: NAME.cfg and NAME_trf.cfg."),
    list_methods: bool = typer.Option(False, "--list", help="List the methods with what each is, and stop."),
    configs_dir: Path = typer.Option(DEFAULT_CONFIGS_DIR, "--configs-dir", help="Folder of the bases and methods/ (default: the package's configs).", show_default=False),
    overwrite: bool = typer.Option(False, "--overwrite", help="Replace existing output files (never a base or method file read)."),
):
    """Write the full training config of a method: its partial config merged onto the base of
    the encoder, ready for `spacy train`.

    The config is built (not trained) before it is written, so a wrong key in a method file
    stops here with one line naming the file; nothing is written on an error. An existing
    output file is kept unless --overwrite; a file the command reads is never written over.
    """
    from ..data.files import write_text
    from ..outputs import check_output_file
    from ..study.methods import ENCODERS, MethodError, base_path, check_config, describe, method_config, method_names, method_path, methods_dir

    if list_methods:
        typer.echo(f"methods of {methods_dir(configs_dir)} (to use your own, copy {configs_dir} and give --configs-dir):", err=True)
        for method in method_names(configs_dir):
            typer.echo(f"{method}\t{describe(method, configs_dir)}")
        return
    if all_methods == (name is not None):
        raise MethodError("name one method, or give --all (with an --output folder)")
    if all_methods and output is None:
        raise MethodError("--all writes one file per method and encoder: give an --output folder")
    jobs = [(m, e) for m in method_names(configs_dir) for e in ENCODERS] if all_methods else [(name, encoder)]
    texts = {}
    for method, enc in jobs:
        cfg = method_config(method, enc, configs_dir)
        where = f"{method_path(method, configs_dir)} on {base_path(enc, configs_dir)}"
        check_config(cfg, where)
        header = (
            f"# Written by `spacy-auc-ner config {method} --encoder {enc}` from {base_path(enc, configs_dir)}\n"
            f"# and {method_path(method, configs_dir)}: edit those (or a copy, with --configs-dir), not this file.\n"
            f"# {describe(method, configs_dir)}\n"
        )
        filename = f"{method}.cfg" if enc == "cpu" else f"{method}_trf.cfg"
        texts[filename] = header + cfg.to_str(interpolate=False) + "\n"
    if output is None:
        typer.echo("".join(texts.values()), nl=False)
        return
    targets = {output / f: t for f, t in texts.items()} if all_methods else {output: next(iter(texts.values()))}
    inputs = {p for m, e in jobs for p in (method_path(m, configs_dir), base_path(e, configs_dir))}
    for path in targets:
        check_output_file(path, inputs, overwrite)
    for path, text in targets.items():
        write_text(path, text)
    typer.echo(f"Wrote {len(texts)} config(s) to {output}", err=True)


@corpus_app.command("get")
@one_line_errors
def corpus_get(
    name: str = typer.Argument(..., help="Corpus: conll2003, ncbi_disease or s800."),
    output_dir: Path = typer.Argument(..., help="Folder for train/dev/test."),
    data_dir: Optional[Path] = typer.Option(None, help="Folder searched first for NAME/{train,dev,test}.tsv (then $SPACY_AUC_NER_DATA, assets/, data/, ../shared/data)."),
    fmt: str = typer.Option("spacy", "--format", help="Output format: spacy or tsv."),
):
    """Write a known corpus's train/dev/test to OUTPUT_DIR.

    From a local copy (NAME/{train,dev,test}.tsv) when found; else the original files are
    downloaded at their pinned commits, checked against their git blob ids and converted.
    """
    from ..data.corpora import get_corpus

    summary = get_corpus(name, output_dir, data_dir=data_dir, fmt=fmt)
    counts = ", ".join(f"{s} {f['sentences']}" for s, f in summary["files"].items())
    typer.echo(f"{name} from {summary['origin']}: {counts} sentences -> {output_dir}", err=True)


@corpus_app.command("list")
@one_line_errors
def corpus_list(data_dir: Optional[Path] = typer.Option(None, help="Folder to look in first.")):
    """List the known corpora and where a local copy was found."""
    from ..data.corpora import CORPORA, locate

    for name, source in CORPORA.items():
        found = locate(name, data_dir)
        typer.echo(f"{name}\t{source.description}\t{found or 'not found locally (download from github.com/' + source.repo + ')'}")
