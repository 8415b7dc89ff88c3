"""The ``spacy-auc-ner`` command line: corpus conversion, method configs, the low-resource
recipe (:mod:`.lowres`) and the sentences to annotate next (:mod:`.suggest`). Each command is a thin shell over the package's functions; expected
failures end it with one ``Error:`` line (:mod:`.errors`). The studies, corpora download,
statistics and partitions are the lab's (``projects/lab``: ``python -m auc_ner_lab``)."""
import os
from pathlib import Path
from typing import Optional

import typer

from ..data.columns import TAG_SCHEMES
from ..methods import DEFAULT_CONFIGS_DIR
from .errors import one_line_errors
from .lowres import lowres_app
from .suggest import suggest_app

app = typer.Typer(
    name="spacy-auc-ner",
    help="AUC-maximising NER for spaCy: corpus conversion, method configs and the low-resource recipe.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
)
app.add_typer(lowres_app)  # pool, self-train, pretrain-config, recipe
app.add_typer(suggest_app)  # suggest: the sentences to annotate next


@app.command()
@one_line_errors
def convert(
    input_path: Path = typer.Argument(..., help="Annotated sentences: a .spacy file, an annotation tool's .jsonl or .json export (spaCy, Prodigy, doccano, Label Studio), or a token/label column file (BIO, IOB1, BIOES or BILOU)."),
    output_path: str = typer.Argument(..., help="Output file: .spacy, .jsonl (spaCy/Prodigy records with tokens) or a token<TAB>BIO column file (.tsv, .conll, .txt, .iob, .iob2, .bio, .tab); a folder gets INPUT_STEM.spacy."),
    scheme: str = typer.Option("auto", "--scheme", "-s", help=f"Column files: the label scheme, {', '.join(TAG_SCHEMES)}."),
    token_column: int = typer.Option(0, help="Column files: the token's column (0-based; negative counts from the end)."),
    label_column: int = typer.Option(-1, help="Column files: the label's column (CoNLL-2003: -1 or 3)."),
    untyped_type: Optional[str] = typer.Option(None, help="Column files: the entity type of bare B/I/E/S tags (e.g. Species)."),
    alignment: str = typer.Option("strict", "--alignment", help="JSON files: a span off token boundaries is strict (refused), expand (widened to whole tokens) or contract (narrowed to them)."),
    lang: str = typer.Option("en", "--lang", help="JSON files: the language whose tokenizer splits texts given without tokens."),
    overwrite: bool = typer.Option(False, "--overwrite", help="Replace an existing OUTPUT_PATH (never the input itself)."),
):
    """Convert annotated sentences between formats, entities as BIO.

    Example: spacy-auc-ner convert prodigy.jsonl train.spacy

    Character spans become token spans as Doc.char_span makes them. Rejected and ignored
    Prodigy answers are left out, and counted. A bad record or line stops with its file and
    line, writing nothing; an existing output is kept unless --overwrite. Formats: docs/formats.md.
    """
    from ..data.annotation_json import left_out_text
    from ..data.convert import convert as convert_file

    target = _in_folder(output_path, f"{input_path.stem}.spacy")
    done = convert_file(input_path, target, scheme=scheme, token_column=token_column, label_column=label_column,
                        untyped_type=untyped_type, alignment=alignment, lang=lang, overwrite=overwrite)
    said = f" ({left_out_text(done.left_out)})" if done.left_out else ""
    typer.echo(f"Wrote {done.written} sentence{'' if done.written == 1 else 's'} to {target}{said}", err=True)


def _in_folder(output: str, name: str) -> Path:
    """``output`` as the file to write: a folder, one that exists or a path ending in a
    separator (``out/``: pathlib drops the slash, and the file would take the folder's name),
    gets ``name`` inside it."""
    path = Path(output)
    return path / name if path.is_dir() or output.endswith(("/", os.sep)) else path


@app.command()
@one_line_errors
def config(
    name: Optional[str] = typer.Argument(None, help="Method (a file name of CONFIGS_DIR/methods/, e.g. ova_auc) or recipe (of CONFIGS_DIR/recipes/, e.g. lowres_best); leave out with --all or --list."),
    encoder: Optional[str] = typer.Option(None, "--encoder", "-e", help="Encoder family of a method: cpu (configs/base_cpu.cfg, the default) or trf (configs/base_trf.cfg); a recipe is on its own (trf for a name ending in _trf, else cpu).", show_default=False),
    output: Optional[str] = typer.Option(None, "--output", "-o", help="File to write (default: print; a folder, or a path ending in /, gets NAME.cfg); with --all, a folder."),
    all_methods: bool = typer.Option(False, "--all", help="Write every method on both encoders (NAME.cfg, NAME_trf.cfg) and every recipe (NAME.cfg) to the --output folder."),
    list_methods: bool = typer.Option(False, "--list", help="List the methods and recipes with what each is, and stop."),
    configs_dir: Path = typer.Option(DEFAULT_CONFIGS_DIR, "--configs-dir", help="Folder of the bases, methods/ and recipes/ (default: the package's configs).", show_default=False),
    overwrite: bool = typer.Option(False, "--overwrite", help="Replace existing output files (never a config file read)."),
):
    """Write the full training config of a method or a recipe, ready for spacy train.

    Example: spacy-auc-ner config ova_auc --output ova_auc.cfg

    A method is its partial config merged onto the encoder's base. A CPU recipe is merged onto the
    CPU base after the partials every CPU recipe shares (pretrain/characters.cfg, self_training.cfg,
    lowres_extras.cfg); a name ending in _trf onto the transformer base after self_training.cfg.
    With --all, the configs that need an extra that is not installed (the *_trf ones without
    \\[transformers]) are skipped, and one line says so. More: docs/reference.md#configs.
    """
    # "\\[" above: the help is Rich markup, where a bare [transformers] is a style tag and vanishes
    from ..extras import install_command
    from ..full_configs import full_configs, write_configs
    from ..methods import MethodError, describe, method_names, methods_dir, recipe_names

    if output is not None and not output.strip():  # an unset shell variable: Path("") would be the current folder
        raise MethodError("--output is an empty path: name a file or folder ('.' for the current one), or leave it out to print")
    if list_methods and (name is not None or all_methods or output is not None):
        given = name if name is not None else "--all" if all_methods else "--output"
        raise MethodError(f"--list lists every method and recipe: give it alone, without {given}")
    if list_methods:
        typer.echo(f"methods of {methods_dir(configs_dir)}, then recipes of {configs_dir / 'recipes'} "
                   f"(to use your own, copy {configs_dir} and give --configs-dir):", err=True)
        for method in method_names(configs_dir) + recipe_names(configs_dir):
            typer.echo(f"{method}\t{describe(method, configs_dir)}")
        return
    if all_methods and name is not None:
        raise MethodError(f"give a method or recipe ({name}) or --all, not both")
    if not all_methods and name is None:
        raise MethodError("name one method or recipe, or give --all (with an --output folder)")
    if all_methods and output is None:
        raise MethodError("--all writes one file per method and encoder and per recipe: give an --output folder")
    if all_methods and Path(str(output)).is_file():
        raise MethodError(f"--output {output} is a file: --all writes one file per method and encoder and per recipe into a folder")
    texts, inputs, skipped = full_configs(name, encoder, configs_dir, every_one=all_methods)
    if output is None:
        typer.echo("".join(texts.values()), nl=False)
        return
    if all_methods:
        targets = {Path(output) / f: t for f, t in texts.items()}
    else:
        ((filename, text),) = texts.items()
        targets = {_in_folder(output, filename): text}
    write_configs(targets, inputs, overwrite)
    typer.echo(f"Wrote {len(texts)} config(s) to {output}" if all_methods else f"Wrote {next(iter(targets))}", err=True)
    for extra, names in skipped.items():
        typer.echo(f"Skipped {len(names)} config(s) that need the {extra!r} extra, which is not installed "
                   f"({', '.join(names[:2])}{', ...' if len(names) > 2 else ''}): {install_command(extra)}", err=True)
