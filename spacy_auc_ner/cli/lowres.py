"""`spacy-auc-ner pool | self-train | pretrain-config | recipe`: the low-resource extras that
`spacy train` cannot do alone (a typer app whose commands are mounted at the top level).

Thin shells over :mod:`spacy_auc_ner.training.self_training`,
:mod:`spacy_auc_ner.training.pretraining` and :mod:`spacy_auc_ner.training.recipe`; bad input
stops with one line and a non-zero exit.
"""
from pathlib import Path
from typing import Optional

import typer

from ..methods import DEFAULT_RECIPE
from .errors import one_line_errors

lowres_app = typer.Typer(add_completion=False)


@lowres_app.command("pool")
@one_line_errors
def pool_command(
    input_path: Path = typer.Argument(..., help="Training corpus: a .spacy or column file."),
    output_path: Path = typer.Argument(..., help="The pool: .spacy (tokens kept), .jsonl ({\"text\": ...} a line, for spacy pretrain) or .txt (a text a line)."),
    size: int = typer.Option(..., help="Size of the low-resource draw the pool complements (as 'partition --sizes')."),
    seed: int = typer.Option(0, help="Seed of that draw: partition file n{size}-p{p} of 'partition --seed S' used S + p."),
    limit: Optional[int] = typer.Option(None, help="Keep at most this many sentences (the first in the draw's seeded order)."),
    overwrite: bool = typer.Option(False, "--overwrite", help="Replace an existing OUTPUT_PATH (never the input itself)."),
):
    """Write the unlabeled pool of a low-resource experiment.

    The pool is the sentences of the training corpus that the draw of SIZE sentences with SEED
    did not take, their entities removed. An existing output file is kept unless --overwrite;
    the input is never written over.
    """
    from ..training.self_training import write_pool

    n = write_pool(input_path, output_path, size, seed, limit, overwrite=overwrite)
    typer.echo(f"Wrote {n} unlabeled sentences to {output_path}", err=True)


@lowres_app.command(
    "self-train",
    context_settings={"allow_extra_args": True, "ignore_unknown_options": True},
)
@one_line_errors
def self_train_command(
    ctx: typer.Context,
    config_path: Path = typer.Argument(..., help="Training config (the same one every round)."),
    output_dir: Path = typer.Argument(..., help="Folder for round-K/model-best and rounds.jsonl (must not hold a run, unless --overwrite)."),
    train: Path = typer.Option(..., "--train", help="Gold training sentences (.spacy)."),
    dev: Path = typer.Option(..., "--dev", help="Dev sentences (.spacy): early stopping and each round's score."),
    pool: Path = typer.Option(..., "--pool", help="Unlabeled text: .txt (a text a line), .jsonl ({\"text\": ...}) or .spacy."),
    model: Optional[Path] = typer.Option(None, "--model", help="A trained pipeline as round 0 (default: train the config on --train)."),
    rounds: int = typer.Option(2, "--rounds", help="Self-training rounds after round 0."),
    threshold: float = typer.Option(0.9, "--threshold", help="Keep a predicted entity whose confidence is at least this."),
    low_confidence: str = typer.Option("missing", "--low-confidence", help="Tokens of entities below the threshold: missing (no gradient) or outside (O)."),
    keep_empty: bool = typer.Option(False, "--keep-empty/--skip-empty", help="Keep pool sentences with no kept entity (all O)."),
    component: Optional[str] = typer.Option(None, "--component", help="The pipe whose entities are used (default: the last auc_ner or ner)."),
    beam_width: int = typer.Option(16, "--beam-width", help="spaCy ner only: beam width of the confidence estimate."),
    gpu_id: int = typer.Option(-1, "--gpu-id", "-g", help="GPU to use (-1: CPU)."),
    overwrite: bool = typer.Option(False, "--overwrite", help="Replace the previous self-train run in OUTPUT_DIR, as far as its record there goes (once every input is checked); nothing else is removed."),
):
    """Self-training with the recogniser's confidences.

    Label the pool with the round's pipeline, keep the confident entities, retrain the config
    on gold + pseudo-labels, repeat.

    Extra options override the config as in 'spacy train', e.g. --training.max_steps 600; [pretraining] max_epochs is the one exception: --pretrain-epochs sets it.
    Confidences: the "scores" of the auc_ner pipe's span group (doc.spans), or beam search for
    spaCy's ner. Every round's pipeline is kept in OUTPUT_DIR/round-K/model-best, its counts
    and dev scores in OUTPUT_DIR/rounds.jsonl.

    Safety: every input is read first; what the run writes is recorded in
    OUTPUT_DIR/.spacy-auc-ner-outputs.json, and --overwrite removes only that (never your own
    files, never an input such as --model OUTPUT_DIR/model-best).
    """
    from spacy.cli._util import parse_config_overrides

    from ..training.self_training import self_train

    overrides = parse_config_overrides(ctx.args)
    records = self_train(
        config_path, output_dir, train=train, dev=dev, pool=pool, rounds=rounds, threshold=threshold,
        teacher=model, low_confidence=low_confidence, keep_empty=keep_empty, component=component,
        beam_width=beam_width, overrides=overrides, gpu_id=gpu_id, overwrite=overwrite,
    )
    for r in records:
        f = r["dev"]["ents_f"]
        typer.echo(f"round {r['round']}\tdev F1 {f:.4f}\tpseudo sentences {r['pseudo_sentences']}\tkept entities {r['kept_entities']}\t{r['model']}")


@lowres_app.command("pretrain-config")
@one_line_errors
def pretrain_config_command(
    base: Path = typer.Argument(..., help="Full training config whose tok2vec is pretrained, e.g. configs/full/spacy_ner.cfg."),
    fragment: Path = typer.Argument(..., help="Pretraining settings: configs/pretrain/characters.cfg or configs/pretrain/vectors.cfg."),
    output_path: Path = typer.Argument(..., help="The merged config, for both 'spacy pretrain' and 'spacy train'."),
    component: Optional[str] = typer.Option(None, "--component", help="Pipe whose tok2vec to pretrain (default: found in the pipeline)."),
    overwrite: bool = typer.Option(False, "--overwrite", help="Replace an existing OUTPUT_PATH (never BASE or FRAGMENT)."),
):
    """Merge pretraining settings into a training config, for spacy pretrain and spacy train.

    Writes BASE with FRAGMENT's pretraining block merged in and its component and layer named,
    so that 'spacy pretrain' trains that tok2vec and 'spacy train ... --paths.init_tok2vec
    WEIGHTS' loads the weights (spaCy ignores init_tok2vec while the block is empty).
    An existing output file is kept unless --overwrite.
    """
    from ..data.files import check_utf8, write_text
    from ..outputs import check_output_file
    from ..training.pretraining import pretraining_config

    for path in (base, fragment):
        check_utf8(path)
    config = pretraining_config(base, fragment, component)
    check_output_file(output_path, [base, fragment], overwrite)
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
    output_dir: Path = typer.Argument(..., help="Folder for pretrain/, round-K/, rounds.jsonl and model-best (must not hold a run, unless --overwrite)."),
    train: Path = typer.Option(..., "--train", help="Gold training sentences: .spacy, or a token<TAB>BIO column file (converted into OUTPUT_DIR/data)."),
    dev: Path = typer.Option(..., "--dev", help="Dev sentences (.spacy or columns): early stopping and the choice of the round."),
    raw: Optional[Path] = typer.Option(None, "--raw", help="Unlabeled text of your domain: .txt (a text a line), .jsonl ({\"text\": ...}) or .spacy; pretraining and self-training read it. Without it: pretraining on the training file's text, no self-training."),
    recipe: str = typer.Option(DEFAULT_RECIPE, "--config", "-c", help="The recipe: a name of the package's configs/recipes/ (lowres_best, the default: its BiLSTM-CRF head; lowres_spacy_ner: spaCy's ner; lowres_crf_auc: the CRF + AUC head; 'spacy-auc-ner config --list' says what each is) or a config file with a pretraining block."),
    pretrain: bool = typer.Option(True, "--pretrain/--no-pretrain", help="Pretrain the encoder first (spacy pretrain of the config's pretraining block)."),
    pretrain_epochs: int = typer.Option(2, "--pretrain-epochs", help="Epochs of spacy pretrain over the raw text."),
    rounds: int = typer.Option(2, "--rounds", help="Self-training rounds after round 0 (with --raw); the round with the best dev F1 is kept. 2 is the default; projects/lab/docs/recipe.md has the ablation and how the default was chosen."),
    threshold: float = typer.Option(0.9, "--threshold", help="Keep a pseudo-labelled entity whose confidence is at least this."),
    gpu_id: int = typer.Option(-1, "--gpu-id", "-g", help="GPU to use (-1: CPU)."),
    overwrite: bool = typer.Option(False, "--overwrite", help="Replace the previous recipe run in OUTPUT_DIR, as far as its record there goes (once every input is checked); nothing else is removed."),
):
    """Train the low-resource recipe on your files: pretraining, training, self-training.

    Pretrains the config's encoder on the raw text (spacy pretrain), trains from those weights, then self-trains on the raw text and keeps the round with the best dev F1 in OUTPUT_DIR/model-best.

    Extra options override the config as in 'spacy train', e.g. --training.max_steps 600.

    Safety: every input is read first; what the run writes is recorded in
    OUTPUT_DIR/.spacy-auc-ner-outputs.json, and --overwrite removes only that: your own files
    in OUTPUT_DIR (a data/ folder, a model-best of 'spacy train') are never removed.
    """
    from spacy.cli._util import parse_config_overrides

    from ..training.recipe import run_recipe

    summary = run_recipe(
        recipe, output_dir, train=train, dev=dev, raw=raw, pretrain=pretrain, pretrain_epochs=pretrain_epochs,
        rounds=rounds, threshold=threshold, overrides=parse_config_overrides(ctx.args), gpu_id=gpu_id, overwrite=overwrite,
    )
    for r in summary["rounds"]:
        f = r["dev"]["ents_f"]
        typer.echo(f"round {r['round']}\tdev F1 {f:.4f}\tpseudo sentences {r['pseudo_sentences']}\tkept entities {r['kept_entities']}\t{r['model']}")
    typer.echo(f"model-best: {summary['model']}")
