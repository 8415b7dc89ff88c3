"""Train one config on given corpora and evaluate it on a held-out split.

The unit of work of a study cell: `spacy train` semantics (dev-set early stopping, the best
model kept), then scoring of the best model on the test split with the same scorer for every
pipeline (spaCy's entity P/R/F and strict-IOB2 seqeval), whatever component produced the
entities.
"""
import json
import os
import tempfile
import time
from contextlib import redirect_stderr, redirect_stdout
from pathlib import Path
from typing import Any, Dict, Optional, Union

import spacy
from spacy.training import Corpus, Example
from spacy.util import load_config, load_config_from_str
from thinc.api import Config

from spacy_auc_ner.data.files import PathLike
from spacy_auc_ner.pipeline.scoring import score_entities
from spacy_auc_ner.training.self_training import train_config


def train_and_evaluate(
    config: Union[Config, PathLike],
    *,
    train: PathLike,
    dev: PathLike,
    test: Optional[PathLike],
    overrides: Optional[Dict[str, Any]] = None,
    output_dir: Optional[PathLike] = None,
    gpu_id: int = -1,
    quiet: bool = True,
) -> Dict[str, Any]:
    """Train `config` (a config or its file, with `overrides`) on `train`, early-stop on
    `dev`, score the best model on `test` (None: no test scores, for tuning). Returns test
    scores plus timing, the best dev score (``dev_score``: early stopping's ents_f) and
    ``dev_scores``: every score of the same scorer on the dev corpus early stopping used, to
    select runs on."""
    all_overrides = dict(overrides or {})
    all_overrides.setdefault("paths.train", str(train))
    all_overrides.setdefault("paths.dev", str(dev))
    if isinstance(config, Config):
        config = load_config_from_str(config.to_str(interpolate=False), overrides=all_overrides, interpolate=False)
    else:
        config = load_config(config, overrides=all_overrides, interpolate=False)
    if gpu_id >= 0:
        spacy.require_gpu(gpu_id)
    with tempfile.TemporaryDirectory() as tmp:
        out = Path(output_dir) if output_dir is not None else Path(tmp) / "out"
        out.mkdir(parents=True, exist_ok=True)
        config_path = Path(tmp) / "config.cfg"
        config.to_disk(config_path, interpolate=False)
        sink = open(os.devnull, "w") if quiet else None
        start = time.perf_counter()
        try:  # the package's one in-process `spacy train`; its log goes to stderr
            if quiet:
                with redirect_stdout(sink), redirect_stderr(sink):
                    train_config(config_path, out, {}, gpu_id)
            else:
                train_config(config_path, out, {}, gpu_id)
        finally:
            if sink is not None:
                sink.close()
        train_seconds = time.perf_counter() - start
        best_path = out / "model-best"
        meta = json.loads((best_path / "meta.json").read_text(encoding="utf8"))
        best = spacy.load(best_path)
    result = evaluate(best, test) if test is not None else {}
    result.update(
        train_seconds=train_seconds,
        dev_score=meta.get("performance", {}).get("ents_f"),
        dev_scores=dev_scores(best, config),
    )
    return result


def dev_scores(nlp, config) -> Dict[str, float]:
    """The numeric scores of `score_entities` on the config's dev corpus (``[training]
    dev_corpus``, e.g. a fixed sample of the dev file): the same scorer for every pipeline, so
    a run can be chosen by any metric (spaCy's meta keeps only the score_weights' keys)."""
    from spacy.util import resolve_dot_names

    interpolated = config.interpolate()
    (corpus,) = resolve_dot_names(interpolated, [interpolated["training"]["dev_corpus"]])
    examples = list(corpus(nlp))
    docs = nlp.pipe(eg.predicted for eg in examples)
    scores = score_entities([Example(doc, eg.reference) for doc, eg in zip(docs, examples)])
    return {k: float(v) for k, v in scores.items() if isinstance(v, (int, float)) and not isinstance(v, bool)}


def evaluate(nlp, path: PathLike) -> Dict[str, Any]:
    """Entity scores of `nlp` on the gold corpus at `path` (.spacy), plus inference speed."""
    examples = list(Corpus(str(path))(nlp))
    start = time.perf_counter()
    docs = list(nlp.pipe(eg.predicted for eg in examples))
    seconds = time.perf_counter() - start
    scored = [Example(doc, eg.reference) for doc, eg in zip(docs, examples)]
    scores = score_entities(scored)
    n_words = sum(len(doc) for doc in docs)
    scores["test_words"] = n_words
    scores["test_words_per_second"] = n_words / seconds if seconds > 0 else None
    return scores
