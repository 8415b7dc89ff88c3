"""`spacy-auc-ner suggest`: the sentences of raw text to annotate next (a typer app whose
command is mounted at the top level); a thin shell over
:mod:`spacy_auc_ner.annotation.suggestions`."""
from pathlib import Path
from typing import Optional

import typer

from ..annotation.selection import DEFAULT_MAX_SIMILARITY, DEFAULT_MIN_TOKENS, STRATEGIES
from .errors import one_line_errors

suggest_app = typer.Typer(add_completion=False)


@suggest_app.command("suggest")
@one_line_errors
def suggest_command(
    model: Path = typer.Argument(..., help="A trained pipeline folder (model-best) with an auc_ner or a spaCy ner pipe."),
    raw: Path = typer.Argument(..., help="Raw text, as RawText.v1 reads it: .txt (a sentence a line), .jsonl ({\"text\": ...} a line) or .spacy."),
    out: Path = typer.Argument(..., help="The suggestions as a .spacy file; the JSONL goes beside it with the same name (batch.spacy -> batch.jsonl)."),
    n: int = typer.Option(30, "--n", help="How many sentences to suggest."),
    strategy: str = typer.Option("mnlp", "--strategy", help=f"How to rank them: {', '.join(STRATEGIES)} (described above)."),
    seed: int = typer.Option(0, "--seed", help="Seed of the random strategy (a whole number >= 0)."),
    max_similarity: float = typer.Option(DEFAULT_MAX_SIMILARITY, "--max-similarity", help="Skip a sentence whose lower-cased token set is more alike than this (Jaccard) to one already suggested (1: no guard)."),
    min_tokens: int = typer.Option(DEFAULT_MIN_TOKENS, "--min-tokens", help="Skip a sentence of fewer tokens than this, whatever its score (1: no guard; measured in the lab at 1 only)."),
    component: Optional[str] = typer.Option(None, "--component", help="The recogniser to read (default: the pipeline's last auc_ner or ner pipe)."),
    beam_width: int = typer.Option(16, "--beam-width", help="Beam of a spaCy ner pipe's uncertainty (as self-training's confidences)."),
    overwrite: bool = typer.Option(False, "--overwrite", help="Replace existing output files (never RAW nor MODEL)."),
):
    """Suggest the N sentences of RAW most worth annotating next, pre-annotated by MODEL.

    Example: spacy-auc-ner suggest model/model-best raw.txt batch.spacy --n 30

    Ranks by the model's doubt (mnlp, entropy; random is the control) and skips near-duplicates.
    Writes OUT (.spacy) and OUT's .jsonl, best first: spaCy/Prodigy records with the model's
    entities, which annotation tools load and convert and recipe read back. Each record's meta
    keeps the raw line's meta and names its file, line and sha256. Strategies: docs/recipes.md.
    """
    from ..annotation.suggestions import jsonl_path, shortfall, suggest

    found, pool, too_short = suggest(model, raw, out, n, strategy, seed=seed, max_similarity=max_similarity, min_tokens=min_tokens,
                                     component=component, beam_width=beam_width, overwrite=overwrite)
    short = shortfall(n, len(found), pool, too_short)
    typer.echo(f"Wrote {len(found)} sentence{'' if len(found) == 1 else 's'} to {out} and {jsonl_path(out)}, by {strategy}{f' ({short})' if short else ''}", err=True)
