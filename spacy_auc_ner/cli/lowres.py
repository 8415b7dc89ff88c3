"""`spacy-auc-ner pool | self-train | pretrain-config | recipe`: the low-resource extras that
`spacy train` cannot do alone (a typer app whose commands are mounted at the top level).

Thin shells over :mod:`spacy_auc_ner.training.recipe` (recipe and self-train: one orchestrator,
every setting a config override), :mod:`spacy_auc_ner.training.pretraining` and
:mod:`spacy_auc_ner.training.unlabeled`; bad input stops with one line and a non-zero exit.
"""
from pathlib import Path
from typing import Any, Dict, List, Optional

import typer

from ..methods import DEFAULT_RECIPE, pretrain_names
from .errors import one_line_errors

lowres_app = typer.Typer(add_completion=False)


@lowres_app.command("pool")
@one_line_errors
def pool_command(
    input_path: Path = typer.Argument(..., help="Training corpus: a .spacy or column file."),
    output_path: Path = typer.Argument(..., help="The pool: .spacy (tokens kept), .jsonl ({\"text\": ...} a line, for spacy pretrain) or .txt (a text a line)."),
    size: int = typer.Option(..., help="How many sentences the low-resource draw takes for annotation (the n of the spacy_auc_ner.LowResource.v1 reader): the pool is the rest of the corpus."),
    seed: int = typer.Option(0, help="Seed of that draw (the reader's seed): with the size and seed of the training draw, the pool holds none of its sentences. Partition p of the lab's 'python -m auc_ner_lab partition --seed S' is the draw with seed S + p."),
    limit: Optional[int] = typer.Option(None, help="Keep at most this many sentences (the first in the draw's seeded order)."),
    overwrite: bool = typer.Option(False, "--overwrite", help="Replace an existing OUTPUT_PATH (never the input itself)."),
):
    """Write the unlabeled pool of a low-resource experiment.

    Example: spacy-auc-ner pool train.spacy raw.txt --size 20 --seed 0

    The pool is the sentences of the training corpus that the draw of SIZE sentences with SEED
    did not take, their entities removed. An existing output file is kept unless --overwrite;
    the input is never written over.
    """
    from ..training.unlabeled import write_pool

    n = write_pool(input_path, output_path, size, seed, limit, overwrite=overwrite)
    typer.echo(f"Wrote {n} unlabeled sentence{'' if n == 1 else 's'} to {output_path}", err=True)


def _overrides(command: str, config: str, output_dir: Optional[str], args: List[str]) -> Dict[str, Any]:
    """The config overrides among the extra arguments (``--section.key VALUE``, as spacy train
    takes them); anything else is refused in one line."""
    from spacy.cli._util import parse_config_overrides

    from ..data.columns import DataError
    from ..data.files import check_seed

    # click hands a first --section.key to OUTPUT_DIR when OUTPUT_DIR was left out
    if output_dir is None or str(output_dir).startswith("--"):
        raise DataError(f"{command}: missing OUTPUT_DIR (spacy-auc-ner {command} CONFIG OUTPUT_DIR --paths.train TRAIN [--paths.dev DEV] ...)")
    if args and not args[0].startswith("--"):
        raise DataError(f"{command}: unexpected argument {args[0]!r}; settings are given as --section.key VALUE")
    for arg in args:
        if arg.startswith("--") and "." not in arg.split("=", 1)[0]:
            raise DataError(f"{command}: no option {arg}; settings are given as --section.key VALUE (see --help)")
    overrides = parse_config_overrides(args)
    for key, value in overrides.items():
        # spaCy reads an override as JSON, whose integers end at 2**64 - 1, and keeps a larger one
        # as its text, which was refused as "must be a whole number" (--training.seed 10**41):
        # read as the number it is, for the range of every seed
        if key.rsplit(".", 1)[-1] == "seed" and isinstance(value, str) and value.isascii() and value.isdigit():
            check_seed(int(value), f"[{key}]")
    return overrides


def _print_rounds(summary: Dict[str, Any]) -> None:
    for r in summary["rounds"]:
        f = (r["dev"] or {}).get("ents_f")
        dev = "no dev set" if r["dev"] is None else f"dev F1 {100 * (f or 0.0):.2f}"
        typer.echo(f"round {r['round']}\t{dev}\tpseudo sentences {r['pseudo_sentences']}\tkept entities {r['kept_entities']}\t{r['model']}")
    typer.echo(f"model-best: {summary['model']}")


@lowres_app.command(
    "self-train",
    context_settings={"allow_extra_args": True, "ignore_unknown_options": True},
)
@one_line_errors
def self_train_command(
    ctx: typer.Context,
    config: str = typer.Argument(..., help="Training config: a file, or a recipe's name (lowres_best, ...); the same one every round. Its self_training block holds the settings (configs/self_training.cfg fills what it leaves out)."),
    output_dir: Optional[str] = typer.Argument(None, show_default=False, help="Required. Folder for round-K/model-best, rounds.jsonl and model-best (must not hold a run, unless --overwrite; neither the --model folder nor inside it)."),
    model: Optional[Path] = typer.Option(None, "--model", help="A trained pipeline folder as round 0 (default: train the config on paths.train)."),
    gpu_id: int = typer.Option(-1, "--gpu-id", "-g", help="GPU to use (-1: CPU)."),
    overwrite: bool = typer.Option(False, "--overwrite", help="Replace the previous self-train run in OUTPUT_DIR, as far as its record there goes (once every input is checked); nothing else is removed."),
):
    """Self-train a config on raw text: the recipe's run without pretraining.

    Example: spacy-auc-ner self-train ova_auc.cfg out --paths.train train.spacy --paths.dev dev.spacy --paths.raw_text raw.txt

    Each round labels the raw text with the last round's model, keeps the confident entities and
    retrains on gold plus those. The best round on dev is OUTPUT_DIR/model-best (without --paths.dev:
    the last round). Every config setting is an override, as in spacy train: --self_training.rounds 1.
    More: docs/guide.md.
    """
    from ..training.recipe import self_train

    overrides = _overrides("self-train", config, output_dir, ctx.args)
    assert output_dir is not None  # _overrides refuses a missing OUTPUT_DIR
    records = self_train(config, output_dir, overrides, teacher=model, gpu_id=gpu_id, overwrite=overwrite)
    _print_rounds({"rounds": records, "model": str(Path(output_dir) / "model-best")})




@lowres_app.command("pretrain-config")
@one_line_errors
def pretrain_config_command(
    base: Path = typer.Argument(..., help="Full training config whose tok2vec is pretrained, e.g. one written by 'spacy-auc-ner config spacy_ner --output spacy_ner.cfg'."),
    fragment: str = typer.Argument(..., help=f"Pretraining settings: a fragment of the package's configs/pretrain/ by name ({', '.join(pretrain_names())}; vectors needs --paths.vectors), or a config file of your own."),
    output_path: Path = typer.Argument(..., help="The merged config, for both 'spacy pretrain' and 'spacy train'."),
    component: Optional[str] = typer.Option(None, "--component", help="Pipe whose tok2vec to pretrain (default: found in the pipeline)."),
    overwrite: bool = typer.Option(False, "--overwrite", help="Replace an existing OUTPUT_PATH (never BASE or FRAGMENT)."),
):
    """Merge pretraining settings into a training config, for spacy pretrain and spacy train.

    Example: spacy-auc-ner pretrain-config spacy_ner.cfg characters pretrain.cfg

    Writes BASE with FRAGMENT's pretraining block, its component and layer named, so that spacy
    pretrain trains that tok2vec and spacy train --paths.init_tok2vec loads its weights. The raw
    text (--paths.raw_text) may be .txt, .jsonl or .spacy. More: docs/guide.md.
    """
    from ..data.files import check_utf8, write_text
    from ..methods import pretrain_fragment
    from ..outputs import check_output_file
    from ..training.pretraining import pretraining_config

    fragment_file = pretrain_fragment(fragment)
    for path in (base, fragment_file):
        check_utf8(path)
    config = pretraining_config(base, fragment_file, component)
    check_output_file(output_path, [base, fragment_file], overwrite)
    write_text(output_path, config.to_str(interpolate=False) + "\n")
    p = config["pretraining"]
    typer.echo(f"Wrote {output_path}: pretrains layer {p['layer'] or '(whole model)'!r} of pipe {p['component']!r}", err=True)


@lowres_app.command(
    "recipe",
    context_settings={"allow_extra_args": True, "ignore_unknown_options": True},
)
@one_line_errors
def recipe_command(
    ctx: typer.Context,
    config: str = typer.Argument(..., help=f"The recipe: a name of the package's configs/recipes/ ({DEFAULT_RECIPE}: its BiLSTM-CRF head; lowres_spacy_ner: spaCy's ner; lowres_crf_auc: the CRF + AUC head; lowres_best_trf: the CRF head on the transformer named by --paths.transformer, needs the transformers extra; 'spacy-auc-ner config --list' says what each is) or a config file."),
    output_dir: Optional[str] = typer.Argument(None, show_default=False, help="Required. Folder for pretrain/, round-K/, rounds.jsonl and model-best (must not hold a run, unless --overwrite)."),
    gpu_id: int = typer.Option(-1, "--gpu-id", "-g", help="GPU to use (-1: CPU)."),
    overwrite: bool = typer.Option(False, "--overwrite", help="Replace the previous recipe run in OUTPUT_DIR, as far as its record there goes (once every input is checked); nothing else is removed."),
):
    """Train a recipe on your annotated sentences: pretraining, training, self-training.

    Example: spacy-auc-ner recipe lowres_best_trf model --paths.train train.jsonl --paths.raw_text raw.txt --paths.transformer minilm

    --paths.train and --paths.dev take .spacy, .jsonl, .json or token<TAB>BIO files (docs/formats.md).
    Without --paths.dev nothing is chosen on a dev set: each training runs its whole budget and keeps
    its last step. Every config setting is an override, as in spacy train: --budget.epochs 30. The
    model lands in OUTPUT_DIR/model-best; --overwrite removes only what an earlier run wrote.
    More: docs/recipes.md.
    """
    from ..training.recipe import run_recipe

    overrides = _overrides("recipe", config, output_dir, ctx.args)
    assert output_dir is not None  # _overrides refuses a missing OUTPUT_DIR
    summary = run_recipe(config, output_dir, overrides, gpu_id=gpu_id, overwrite=overwrite)
    _print_rounds(summary)


