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

The raw text doubles as the self-training pool, as in the ablation
(``studies/lowres_recipe.yaml``), where it is the rest of the training split. Without raw text
there is nothing to pseudo-label, so the recipe pretrains on the training file's own text
and trains once.
"""
import sys
import time
from pathlib import Path
from typing import Any, Callable, Dict, List, Optional, Union

from spacy.vocab import Vocab

from ..data.columns import DataError, is_docbin, read_docs, write_docs
from .self_training import check_settings, previous_run, read_pool, remove_run, self_train, train_config

PathLike = Union[str, Path]
PRETRAIN_DIR = "pretrain"
DATA_DIR = "data"  # column files given as --train / --dev, converted to .spacy for spacy train
TRAIN_DIRS = ("model-best", "model-last")  # a run without self-training, as spacy train writes it


def _log(text: str) -> None:
    print(f"[recipe] {text}", file=sys.stderr, flush=True)


def _previous(output_dir: Path) -> List[Path]:
    found = previous_run(output_dir)
    for name in (PRETRAIN_DIR, DATA_DIR, *TRAIN_DIRS):
        path = output_dir / name
        if path.exists() and path not in found:
            found.append(path)
    return sorted(found)


def _pretraining_config(config_path: Path, overrides: Dict[str, Any]):
    """The config with spaCy's defaults filled in (spacy pretrain reads only a filled config)
    and its [pretraining] block checked."""
    from spacy.util import load_config, load_model_from_config

    config = load_config(config_path, overrides=overrides, interpolate=False)
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
    checked before anything is trained; a previous run in ``output_dir`` is refused, or
    removed with ``overwrite``."""
    from spacy.training.pretrain import pretrain as spacy_pretrain

    config_path, output_dir = Path(config_path), Path(output_dir)
    if not config_path.is_file():
        raise DataError(f"{config_path}: no such config file")
    for path in (train, dev) + ((raw,) if raw is not None else ()):
        if not Path(path).is_file():
            raise DataError(f"{path}: no such file")
    if pretrain and pretrain_epochs < 1:
        raise DataError(f"--pretrain-epochs: expected 1 or more, got {pretrain_epochs}")
    if raw is not None:
        check_settings(rounds, threshold)
        read_pool(raw)  # a bad line fails now, not after pretraining
    # column files (token<TAB>BIO) become .spacy files in OUTPUT/data: read now, so that a bad
    # line fails before anything trains, written once the output folder is checked
    columns = {role: read_docs(path, Vocab()) for role, path in (("train", train), ("dev", dev)) if not is_docbin(path)}
    train, dev = (output_dir / DATA_DIR / f"{role}.spacy" if role in columns else Path(path) for role, path in (("train", train), ("dev", dev)))
    overrides = {**(overrides or {}), "paths.train": str(train), "paths.dev": str(dev)}
    raw_text = str(raw if raw is not None else train)
    filled = _pretraining_config(config_path, {**overrides, "paths.raw_text": raw_text, "pretraining.max_epochs": pretrain_epochs}) if pretrain else None
    previous = _previous(output_dir)
    if previous and not overwrite:
        names = ", ".join(p.name for p in previous)
        raise DataError(f"{output_dir}: already holds a recipe run ({names}); choose another output folder or overwrite it")
    remove_run(previous)
    output_dir.mkdir(parents=True, exist_ok=True)
    for role, docs in columns.items():
        write_docs(output_dir / DATA_DIR / f"{role}.spacy", docs)
        log(f"--{role}: {len(docs)} sentences of a column file written to {output_dir / DATA_DIR / f'{role}.spacy'}")

    summary: Dict[str, Any] = {"config": str(config_path), "raw_text": raw_text, "weights": None, "rounds": [], "pretrain_seconds": None}
    if filled is not None:
        weights_dir = output_dir / PRETRAIN_DIR
        weights_dir.mkdir()
        log(f"pretraining the encoder ({filled['pretraining']['component']}) on {raw_text}, {pretrain_epochs} epoch(s)")
        start = time.perf_counter()
        spacy_pretrain(filled.interpolate(), weights_dir, use_gpu=gpu_id, silent=not progress)
        summary["pretrain_seconds"] = time.perf_counter() - start
        summary["weights"] = str(weights_dir / "model-last.bin")
        overrides["paths.init_tok2vec"] = summary["weights"]
    if raw is None:
        log(f"training {config_path} on {train} (no raw text: nothing to self-train on)")
        train_config(config_path, output_dir, overrides, gpu_id)
        summary["model"] = str(output_dir / "model-best")
        return summary
    records = self_train(
        config_path, output_dir, train=train, dev=dev, pool=raw, rounds=rounds, threshold=threshold,
        overrides=overrides, gpu_id=gpu_id, overwrite=True, log=log, progress=progress,
    )
    summary["rounds"] = records
    summary["model"] = str(output_dir / "model-best")
    return summary
