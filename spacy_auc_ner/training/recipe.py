"""The low-resource recipe end to end on your own files: pretraining of the encoder on raw
text, training, self-training on the raw text, the round with the best dev F1 kept.

``configs/lowres_best.cfg`` trains alone with ``spacy train``; what ``spacy train`` cannot do
is the steps around it, which `run_recipe` chains (``spacy-auc-ner recipe``)::

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

The raw text doubles as the self-training pool, as in the ablation
(``studies/lowres_recipe.yaml``), where it is the rest of the training split. Without raw text
there is nothing to pseudo-label, so the recipe pretrains on the training file's own text
and trains once.
"""
import sys
import time
from pathlib import Path
from typing import Any, Callable, Dict, Optional, Union

from spacy.vocab import Vocab

from ..data.columns import DataError, is_docbin, read_docs, write_docs
from ..outputs import OutputFolder
from .self_training import check_self_train, load_training_config, run_names, run_rounds, train_config

PathLike = Union[str, Path]
PRETRAIN_DIR = "pretrain"
DATA_DIR = "data"  # column files given as --train / --dev, converted to .spacy for spacy train
TRAIN_DIRS = ("model-best", "model-last")  # a run without self-training, as spacy train writes it


def _log(text: str) -> None:
    print(f"[recipe] {text}", file=sys.stderr, flush=True)


def _pretraining_config(config_path: Path, overrides: Dict[str, Any]):
    """The config with spaCy's defaults filled in (spacy pretrain reads only a filled config)
    and its [pretraining] block checked."""
    from spacy.util import load_model_from_config

    config = load_training_config(config_path, overrides)
    block = config.get("pretraining") or {}
    if not block.get("component"):
        raise DataError(
            f"{config_path}: [pretraining] names no component to pretrain; use configs/lowres_best.cfg, "
            "merge a block in with 'spacy-auc-ner pretrain-config', or pass --no-pretrain"
        )
    filled = load_model_from_config(config, auto_fill=True, validate=True).config
    reader = filled.get("corpora", {}).get("pretrain", {}).get("@readers")
    raw_text = str(filled["paths"].get("raw_text"))
    if reader == "spacy.JsonlCorpus.v1" and not raw_text.endswith(".jsonl"):
        raise DataError(f"{config_path}: [corpora.pretrain] is spacy.JsonlCorpus.v1, which reads .jsonl only, not {raw_text}; use spacy_auc_ner.RawText.v1")
    return filled


def run_recipe(
    config_path: PathLike,
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
    """Pretrain, train and self-train ``config_path`` into ``output_dir``; returns a summary:
    the weights, the rounds (as ``rounds.jsonl`` holds them) and the kept model. Every input is
    read and checked before anything is written, removed or trained; a previous run in
    ``output_dir`` is refused, or with ``overwrite`` removed as far as its record in the folder
    goes (:mod:`spacy_auc_ner.outputs`): the user's own files there are never removed."""
    from spacy.training.pretrain import pretrain as spacy_pretrain

    config_path, output_dir = Path(config_path), Path(output_dir)
    if not config_path.is_file():
        raise DataError(f"{config_path}: no such config file")
    for path in (train, dev) + ((raw,) if raw is not None else ()):
        if not Path(path).is_file():
            raise DataError(f"{path}: no such file")
    if pretrain and pretrain_epochs < 1:
        raise DataError(f"--pretrain-epochs: expected 1 or more, got {pretrain_epochs}")
    # every input is read now, so that a bad file or line fails before anything is removed,
    # written or trained; column files (token<TAB>BIO) become .spacy files in OUTPUT/data
    docs = {"train": read_docs(train, Vocab()), "dev": read_docs(dev, Vocab())}
    columns = {role: docs[role] for role, path in (("train", train), ("dev", dev)) if not is_docbin(path)}
    inputs = [config_path, train, dev, raw]
    train, dev = (output_dir / DATA_DIR / f"{role}.spacy" if role in columns else Path(path) for role, path in (("train", train), ("dev", dev)))
    overrides = {**(overrides or {}), "paths.train": str(train), "paths.dev": str(dev)}
    load_training_config(config_path, overrides)  # a bad override fails now
    raw_text = str(raw if raw is not None else train)
    filled = _pretraining_config(config_path, {**overrides, "paths.raw_text": raw_text, "pretraining.max_epochs": pretrain_epochs}) if pretrain else None
    checked = None
    if raw is not None:
        checked = check_self_train(config_path, train=train, dev=dev, pool=raw, rounds=rounds, threshold=threshold,
                                   overrides=overrides, gpu_id=gpu_id, gold=docs["train"])
    names = [f"{DATA_DIR}/{role}.spacy" for role in columns] + ([PRETRAIN_DIR] if pretrain else [])
    names += run_names(rounds) if raw is not None else list(TRAIN_DIRS)
    out = OutputFolder(output_dir, "recipe")
    out.claim(names, inputs, overwrite, "a recipe run")
    out.clear()
    output_dir.mkdir(parents=True, exist_ok=True)
    for role, role_docs in columns.items():
        write_docs(out.record(f"{DATA_DIR}/{role}.spacy"), role_docs)
        log(f"--{role}: {len(role_docs)} sentences of a column file written to {output_dir / DATA_DIR / f'{role}.spacy'}")

    summary: Dict[str, Any] = {"config": str(config_path), "raw_text": raw_text, "weights": None, "rounds": [], "pretrain_seconds": None}
    if filled is not None:
        weights_dir = out.record(PRETRAIN_DIR)
        weights_dir.mkdir()
        log(f"pretraining the encoder ({filled['pretraining']['component']}) on {raw_text}, {pretrain_epochs} epoch(s)")
        start = time.perf_counter()
        spacy_pretrain(filled.interpolate(), weights_dir, use_gpu=gpu_id, silent=not progress)
        summary["pretrain_seconds"] = time.perf_counter() - start
        summary["weights"] = str(weights_dir / "model-last.bin")
        overrides["paths.init_tok2vec"] = summary["weights"]
    if raw is None:
        log(f"training {config_path} on {train} (no raw text: nothing to self-train on)")
        out.record(*TRAIN_DIRS)
        train_config(config_path, output_dir, overrides, gpu_id)
        summary["model"] = str(output_dir / "model-best")
        return summary
    checked["overrides"] = {**checked["overrides"], **overrides}  # with the pretrained weights
    records = run_rounds(
        out, config_path, train=train, dev=dev, rounds=rounds, threshold=threshold, teacher=None, low_confidence="missing",
        keep_empty=False, component=None, beam_width=16, gpu_id=gpu_id, log=log, progress=progress, **checked,
    )
    summary["rounds"] = records
    summary["model"] = str(output_dir / "model-best")
    return summary
