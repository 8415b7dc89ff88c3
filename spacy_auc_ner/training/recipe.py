"""The low-resource recipe end to end on your own files: pretraining of the encoder on raw
text, training, self-training on the raw text, the round with the best dev F1 kept.

A recipe (``configs/recipes/<name>.cfg`` on the CPU base) trains alone with ``spacy train``;
`train_steps` chains the steps around it, for `run_recipe` (``spacy-auc-ner recipe``) and the
lab's study cells alike. `run_recipe` writes::

    OUTPUT/pretrain/model-last.bin   spacy pretrain of the config's [pretraining] block on the
                                     raw text (or the training file's own text)
    OUTPUT/round-K/model-best        with raw text: round 0 trains on the gold sentences from
                                     the pretrained encoder, each round K retrains on gold +
                                     the entities round K-1 labels with confidence >= threshold
    OUTPUT/rounds.jsonl              each round's pseudo-label counts and dev scores
    OUTPUT/model-best                the round with the best dev F1 (without raw text: the
                                     one training run's best model)
    OUTPUT/data/{train,dev}.spacy    column files given as --train / --dev, converted
    OUTPUT/.spacy-auc-ner-outputs.json  the record of the above: all that --overwrite removes

The raw text doubles as the self-training pool (the ablation's pool is the rest of the
training split); without it the recipe pretrains on the training text and trains once.
"""
import sys
import time
from pathlib import Path
from typing import Any, Callable, Dict, List, Optional, Tuple

from spacy.vocab import Vocab
from thinc.api import Config

from ..data.columns import DataError, is_docbin, read_docs, write_docs
from ..data.files import PathLike
from ..methods import DEFAULT_RECIPE, assemble, recipe_files, recipe_names
from ..outputs import OutputFolder
from .self_training import Settings, best_round, check_self_train, load_training_config, read_pool, run_names, run_rounds, train_config

PRETRAIN_DIR = "pretrain"
DATA_DIR = "data"  # column files given as --train / --dev, converted to .spacy for spacy train
TRAIN_DIRS = ("model-best", "model-last")  # a run without self-training, as spacy train writes it


def _log(text: str) -> None:
    print(f"[recipe] {text}", file=sys.stderr, flush=True)


def _pretraining_config(config: Config, where: PathLike, raw_text: str) -> Config:
    """The config with spaCy's defaults filled in (spacy pretrain reads only a filled config)
    and its [pretraining] block checked."""
    from spacy.util import load_model_from_config

    block = config.get("pretraining") or {}
    if not block.get("component"):
        raise DataError(
            f"{where}: [pretraining] names no component to pretrain; use a recipe (--config {DEFAULT_RECIPE}), "
            "merge a block in with 'spacy-auc-ner pretrain-config', or pass --no-pretrain"
        )
    filled = load_model_from_config(config, auto_fill=True, validate=True).config
    reader = filled.get("corpora", {}).get("pretrain", {}).get("@readers")
    if reader == "spacy.JsonlCorpus.v1" and not raw_text.endswith(".jsonl"):
        raise DataError(f"{where}: [corpora.pretrain] is spacy.JsonlCorpus.v1, which reads .jsonl only, not {raw_text}; use spacy_auc_ner.RawText.v1")
    return filled


def recipe_source(recipe: PathLike, overrides: Optional[Dict[str, Any]] = None) -> Tuple[Config, List[Path], str]:
    """``recipe``, a config file or the name of a recipe of the package (`methods.recipe_names`),
    as `run_recipe` reads it: the config with ``overrides`` (not interpolated), the files it
    comes from and how messages name it."""
    path = Path(recipe)
    names = recipe_names()
    if not path.is_file() and path.suffix == ".cfg" and path.stem in names:  # configs/<recipe>.cfg until 2026-11-24
        raise DataError(f"{path}: no such config file; the recipes are assembled now: give --config {path.stem}, "
                        f"or write the file with 'spacy-auc-ner config {path.stem} --output {path.name}'")
    if path.is_file() or path.suffix or len(path.parts) > 1:
        return load_training_config(path, overrides), [path], str(path)
    if str(recipe) not in names:
        raise DataError(f"{recipe}: neither a config file nor a recipe ({', '.join(names)})")
    base, partials = recipe_files(str(recipe))
    where = f"recipe {recipe} ({partials[-1]})"
    return load_training_config(assemble(base, partials), overrides, where), [base, *partials], where


def step_names(pretrain: bool, self_train: bool, rounds: int) -> List[str]:
    """The entries `train_steps` writes in its output folder."""
    return ([PRETRAIN_DIR] if pretrain else []) + (run_names(rounds) if self_train else list(TRAIN_DIRS))


def run_recipe(
    recipe: PathLike,
    output_dir: PathLike,
    *,
    train: PathLike,
    dev: PathLike,
    raw: Optional[PathLike] = None,
    pretrain: bool = True,
    pretrain_epochs: int = 2,
    rounds: int = 2,
    threshold: float = 0.9,
    overrides: Optional[Dict[str, Any]] = None,
    gpu_id: int = -1,
    overwrite: bool = False,
    log: Callable[[str], None] = _log,
    progress: bool = True,
) -> Dict[str, Any]:
    """Pretrain, train and self-train ``recipe`` (a recipe's name or a config file,
    `recipe_source`) into ``output_dir`` on a user's files (`train_steps`); returns its
    summary, plus the config and the raw text. Every input is read and checked before
    anything is written, removed or trained; a previous run in ``output_dir`` is refused, or
    with ``overwrite`` removed as far as its record in the folder goes
    (:mod:`spacy_auc_ner.outputs`): the user's own files there are never removed."""
    output_dir = Path(output_dir)
    config, config_files, where = recipe_source(recipe, overrides)  # a missing or bad config, or a bad override, fails now
    for path in (train, dev) + ((raw,) if raw is not None else ()):
        if not Path(path).is_file():
            raise DataError(f"{path}: no such file")
    if pretrain and pretrain_epochs < 1:
        raise DataError(f"--pretrain-epochs: expected 1 or more, got {pretrain_epochs}")
    # every input is read now, so that a bad file or line fails before anything is removed,
    # written or trained; column files (token<TAB>BIO) become .spacy files in OUTPUT/data
    docs = {"train": read_docs(train, Vocab()), "dev": read_docs(dev, Vocab())}
    columns = {role: docs[role] for role, path in (("train", train), ("dev", dev)) if not is_docbin(path)}
    inputs = [*config_files, train, dev, raw]
    train, dev = (output_dir / DATA_DIR / f"{role}.spacy" if role in columns else Path(path) for role, path in (("train", train), ("dev", dev)))
    config = load_training_config(config, {"paths.train": str(train), "paths.dev": str(dev)}, where)
    raw_text = str(raw if raw is not None else train)
    if pretrain:
        config = _pretraining_config(config, where, raw_text)
    settings = Settings(rounds, threshold) if raw is not None else Settings()  # no raw text: no rounds to check
    if raw is not None:
        check_self_train(config, where, settings, train=train, dev=dev, pool=raw, gpu_id=gpu_id, gold=docs["train"])
    out = OutputFolder(output_dir, "recipe")
    out.claim([f"{DATA_DIR}/{role}.spacy" for role in columns] + step_names(pretrain, raw is not None, rounds), inputs, overwrite, "a recipe run")
    out.clear()
    for role, role_docs in columns.items():
        write_docs(out.record(f"{DATA_DIR}/{role}.spacy"), role_docs)
        log(f"--{role}: {len(role_docs)} sentences of a column file written to {output_dir / DATA_DIR / f'{role}.spacy'}")
    summary = train_steps(
        out, config, where=where, train=train, dev=dev, raw_text=raw_text if pretrain else None,
        pretrain_epochs=pretrain_epochs, pool=raw, settings=settings, gpu_id=gpu_id, log=log, progress=progress,
    )
    return {"config": where, "raw_text": raw_text, **summary}


def train_steps(
    out: OutputFolder,
    config: Config,
    *,
    train: PathLike,
    dev: PathLike,
    where: PathLike = "the config",
    raw_text: Optional[PathLike] = None,
    pretrain_epochs: int = 2,
    pool: Optional[PathLike] = None,
    settings: Settings = Settings(),
    overrides: Optional[Dict[str, Any]] = None,
    gpu_id: int = -1,
    log: Callable[[str], None] = _log,
    progress: bool = True,
) -> Dict[str, Any]:
    """Pretrain -> train -> self-train ``config`` into ``out``, claimed by the caller for
    `step_names` once every input was checked: with ``raw_text``, spacy pretrain on it into
    ``out/pretrain`` and every training from its weights; without ``pool``, one training;
    with ``pool``, round 0 then the rounds ``settings`` asks for (`run_rounds`), the best on
    dev kept. Every training reads ``paths.train``/``paths.dev`` with ``overrides``. Returns
    ``weights``, ``pretrain_seconds``, ``pretrain_sentences``, ``pool_sentences``, ``rounds``
    (rounds.jsonl), ``chosen_round`` and ``model``; None (``[]``) for what did not run."""
    from spacy.training.pretrain import pretrain as spacy_pretrain

    config = config.copy()
    out.folder.mkdir(parents=True, exist_ok=True)
    summary: Dict[str, Any] = {"weights": None, "pretrain_seconds": None, "pretrain_sentences": None, "pool_sentences": None,
                               "rounds": [], "chosen_round": None, "model": str(out.folder / "model-best")}
    if raw_text is not None:
        config["paths"]["raw_text"] = str(raw_text)
        config["pretraining"]["max_epochs"] = pretrain_epochs
        weights_dir = out.record(PRETRAIN_DIR)
        weights_dir.mkdir()
        log(f"pretraining the encoder ({config['pretraining']['component']}) on {raw_text}, {pretrain_epochs} epoch(s)")
        start = time.perf_counter()
        spacy_pretrain(config.interpolate(), weights_dir, use_gpu=gpu_id, silent=not progress)
        summary["pretrain_seconds"] = time.perf_counter() - start
        summary["pretrain_sentences"] = len(read_pool(raw_text))
        summary["weights"] = str(weights_dir / "model-last.bin")
        config["paths"]["init_tok2vec"] = summary["weights"]
    if pool is None:
        log(f"training {where} on {train} (no raw text: nothing to self-train on)")
        out.record(*TRAIN_DIRS)
        train_config(config, out.folder, {**(overrides or {}), "paths.train": str(train), "paths.dev": str(dev)}, gpu_id)
        return summary
    checked = check_self_train(config, where, settings, train=train, dev=dev, pool=pool, gpu_id=gpu_id)
    records = run_rounds(out, config, where, settings, train=Path(train), dev=dev, overrides=overrides, gpu_id=gpu_id, log=log, progress=progress, **checked)
    summary.update(rounds=records, chosen_round=best_round(records), pool_sentences=len(checked["items"]))
    return summary
