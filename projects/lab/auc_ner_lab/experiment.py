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
from contextlib import contextmanager, redirect_stderr, redirect_stdout
from pathlib import Path
from typing import Any, Dict, Iterator, Optional

import spacy
from spacy.training import Corpus
from thinc.api import Config

from spacy_auc_ner.api import PathLike, budgeted, has_dev, predict, score_entities, train_config
from spacy_auc_ner.api import dev_scores as package_dev_scores


@contextmanager
def quiet() -> Iterator[None]:
    """Nothing printed: spaCy's training log, progress bars and warnings go to /dev/null."""
    with open(os.devnull, "w") as sink, redirect_stdout(sink), redirect_stderr(sink):
        yield


def cell_config(cell) -> Config:
    """The training config of ``cell`` on its own files (``paths.train`` and ``paths.dev``, which
    its readers draw from); every cell function trains from it."""
    config = cell.training_config()
    config["paths"]["train"], config["paths"]["dev"] = str(cell.train), str(cell.dev)
    return config


def train_and_evaluate(config: Config, *, test: Optional[PathLike], gpu_id: int = -1, dev_sample: Optional[Dict[str, Any]] = None) -> Dict[str, Any]:
    """Train `config` (`cell_config`) quietly with the step settings of its ``[budget]``,
    early-stopping on its dev corpus, and return the best model's `trained_scores` plus the
    training time."""
    config, _ = budgeted(config)
    with tempfile.TemporaryDirectory() as tmp:
        start = time.perf_counter()
        with quiet():  # the package's one in-process `spacy train`
            train_config(config, Path(tmp), {}, gpu_id)
        train_seconds = time.perf_counter() - start
        result = trained_scores(Path(tmp) / "model-best", config, test, dev_sample)
    result["train_seconds"] = train_seconds
    return result


def trained_scores(model: PathLike, config: Config, test: Optional[PathLike], dev_sample: Optional[Dict[str, Any]] = None) -> Dict[str, Any]:
    """The scores of a trained pipeline: on `test` (None: none), the best dev score of its early
    stopping (``dev_score``, from its meta; None without a dev set) and ``dev_scores``, every
    score of the same scorer on the config's dev corpus, or on `dev_sample` when given (a reader
    block of sentences its training never saw; {} without a dev set or sample)."""
    meta = json.loads((Path(model) / "meta.json").read_text(encoding="utf8"))
    best = spacy.load(model)
    result = evaluate(best, test) if test is not None else {}
    chose = has_dev(config)  # without a dev set nothing was chosen on dev
    if dev_sample is not None:
        scores = sample_scores(best, dev_sample)
    else:
        scores = dev_scores(best, config) if chose else {}
    result.update(dev_score=meta.get("performance", {}).get("ents_f") if chose else None, dev_scores=scores)
    return result


def dev_scores(nlp, config) -> Dict[str, float]:
    """The package's dev scores on the config's ``[training] dev_corpus``, so that a run can be
    chosen by any metric (spaCy's meta keeps only the score_weights' keys)."""
    from spacy.util import dot_to_object

    interpolated = config.interpolate()
    return sample_scores(nlp, dot_to_object(interpolated, interpolated["training"]["dev_corpus"]))


def sample_scores(nlp, block: Dict[str, Any]) -> Dict[str, float]:
    """The package's dev scores of `nlp` on the examples of the reader block `block`."""
    from spacy.util import registry

    corpus = registry.resolve({"corpus": block})["corpus"]
    return package_dev_scores(nlp, corpus(nlp))


def evaluate(nlp, path: PathLike) -> Dict[str, Any]:
    """Entity scores of `nlp` on the gold corpus at `path` (.spacy), plus inference speed."""
    examples = list(Corpus(str(path))(nlp))
    start = time.perf_counter()
    scored = predict(nlp, examples)
    seconds = time.perf_counter() - start
    scores = score_entities(scored)
    n_words = sum(len(eg.predicted) for eg in scored)
    scores.update(test_words=n_words, test_words_per_second=n_words / seconds if seconds > 0 else None)
    return scores
