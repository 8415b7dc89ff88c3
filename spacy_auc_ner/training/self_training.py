"""Self-training: round 0 is the teacher (a given pipeline, or the config trained on gold);
round k labels the pool with round k - 1's best pipeline, keeps each entity whose confidence
reaches ``threshold`` and trains the same config on gold plus pseudo-labels (spaCy's loop).
Below-threshold entities become missing annotation (the model was unsure, so nothing is
taught there); pool sentences with no kept entity are dropped unless ``keep_empty``, since a
model that misses entities would learn to miss them. spaCy's ``ner`` has no confidences: an
entity's is the mass of the beam parses that hold it. Rounds are built in hidden
``.round-K.partial`` folders and renamed when complete; ``model-best`` is a copy of the round
with the best dev F1 (:func:`best_round`).
"""
import json
import os
import shutil
import sys
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable, Dict, Iterable, List, Optional, Sequence, Tuple, Union

import numpy
from spacy.language import Language
from spacy.tokens import Doc, Span
from spacy.training import Example
from spacy.vocab import Vocab
from thinc.api import Config, ConfigValidationError
from tqdm import tqdm

from ..data.columns import DataError, read_docs, tokens_only, write_docs
from ..data.files import PathLike, config_error_text, read_text, write_text
from ..outputs import OutputFolder, check_output_file
from ..pipeline.component import AUCNER
from ..pipeline.scoring import dev_scores
from .readers import draw_indices

PoolItem = Union[str, Tuple[List[str], List[bool]]]
POOL_SUFFIXES = (".txt", ".jsonl", ".spacy")
LOW_CONFIDENCE = ("missing", "outside")
RECOGNIZERS = ("auc_ner", "ner", "beam_ner")  # the factories of pipes whose entities have confidences


def _log(text: str) -> None:
    print(f"[self-train] {text}", file=sys.stderr, flush=True)


# ---------------------------------------------------------------------------------------------
# The unlabeled pool


def read_pool(path: PathLike) -> List[PoolItem]:
    """The texts of an unlabeled pool (``.txt``: a text a line; ``.jsonl``: ``{"text": ...}`` a
    line; ``.spacy``: tokens and spaces); blank lines are skipped, a bad line is ``file:line: ...``."""
    path = Path(path)
    if path.suffix not in POOL_SUFFIXES:
        raise DataError(f"{path}: an unlabeled pool must be a .txt, .jsonl or .spacy file")
    if not path.is_file():
        raise DataError(f"{path}: no such file")
    items: List[PoolItem] = []
    if path.suffix == ".spacy":
        for doc in read_docs(path, Vocab()):
            items.append(([t.text for t in doc], [bool(t.whitespace_) for t in doc]))
    else:
        for i, line in enumerate(read_text(path).splitlines(), 1):
            if not line.strip():
                continue
            if path.suffix == ".txt":
                items.append(line)
                continue
            try:
                record = json.loads(line)
            except json.JSONDecodeError as err:
                raise DataError(f"{path}:{i}: not a JSON line ({err.msg})") from None
            if not isinstance(record, dict) or not isinstance(record.get("text"), str):
                raise DataError(f"{path}:{i}: expected a JSON object with a \"text\" string")
            items.append(record["text"])
    items = [it for it in items if (it.strip() if isinstance(it, str) else it[0])]
    if not items:
        raise DataError(f"{path}: the pool holds no text")
    return items


def pool_docs(nlp: Language, items: Sequence[PoolItem]) -> List[Doc]:
    """Unannotated Docs of the pool: texts through the tokenizer, token lists as they are."""
    return [nlp.make_doc(it) if isinstance(it, str) else Doc(nlp.vocab, words=it[0], spaces=it[1]) for it in items]


def write_pool(input_path: PathLike, output_path: PathLike, size: int, seed: int, limit: Optional[int] = None, overwrite: bool = False) -> int:
    """Write the sentences of a corpus that the ``LowResource.v1`` draw of ``size`` with ``seed``
    leaves out, without entities (the experiments' pool; ``limit``: the first of them in the
    draw's order), in the format of the suffix. Returns the number written."""
    input_path, output_path = Path(input_path), Path(output_path)
    if output_path.suffix not in POOL_SUFFIXES:
        raise DataError(f"{output_path}: the pool is written as .spacy, .jsonl or .txt")
    if size < 0:
        raise DataError(f"--size: expected 0 or more sentences, got {size}")
    if limit is not None and limit < 1:
        raise DataError(f"--limit: expected a positive number of sentences, got {limit}")
    vocab = Vocab()
    docs = read_docs(input_path, vocab)
    order = draw_indices(len(docs), len(docs), seed, where=input_path)
    if size >= len(docs):
        raise DataError(f"{input_path}: a draw of {size} sentences leaves none of its {len(docs)} for the pool")
    rest = sorted(order[size:] if limit is None else order[size : size + limit])
    check_output_file(output_path, [input_path], overwrite)
    return write_unlabeled(output_path, [docs[i] for i in rest])


def write_unlabeled(output_path: PathLike, docs: Iterable[Doc]) -> int:
    """Write ``docs`` without entities as ``.spacy``, ``.jsonl`` (``{"text": ...}``, what
    ``spacy.JsonlCorpus.v1`` reads) or ``.txt`` by the suffix; returns the number written."""
    output_path = Path(output_path)
    if output_path.suffix not in POOL_SUFFIXES:
        raise DataError(f"{output_path}: unlabeled text is written as .spacy, .jsonl or .txt")
    plain = [tokens_only(doc) for doc in docs]
    if output_path.suffix == ".spacy":
        write_docs(output_path, plain)  # no entity annotation to write: every token stays unannotated
    else:
        texts = [" ".join(doc.text.split()) for doc in plain]
        lines = [json.dumps({"text": t}, ensure_ascii=False) for t in texts] if output_path.suffix == ".jsonl" else texts
        write_text(output_path, "".join(line + "\n" for line in lines))
    return len(plain)


# ---------------------------------------------------------------------------------------------
# Entities and their confidences


def find_recognizer(factories: Dict[str, Optional[str]], component: Optional[str] = None, where: str = "the pipeline") -> str:
    """The pipe whose entities are pseudo-labels, from each pipe's factory (of a pipeline or of a
    config before it trains): ``component`` if given, else the last ``auc_ner`` or ``ner`` pipe."""
    names = ", ".join(factories) or "no pipes"
    if component is not None:
        if component not in factories:
            raise DataError(f"--component: {where} has no pipe {component!r} (it has {names})")
        if factories[component] not in RECOGNIZERS:
            raise DataError(f"--component: {component!r} is neither an auc_ner nor a spaCy ner pipe, so its entities have no confidence")
        return component
    found = [name for name, factory in factories.items() if factory in RECOGNIZERS]
    if not found:
        raise DataError(f"{where} ({names}) has no auc_ner or ner pipe to label the pool")
    return found[-1]


def pipe_factories(pipeline: Union[Language, Config]) -> Dict[str, Optional[str]]:
    """Each pipe of a pipeline, or of a config's pipeline, with the name of its factory."""
    if isinstance(pipeline, Language):
        return {name: pipeline.get_pipe_meta(name).factory for name in pipeline.pipe_names}
    components = pipeline.get("components", {})
    return {name: (components.get(name) or {}).get("factory") for name in pipeline.get("nlp", {}).get("pipeline", [])}


def scored_entities(
    nlp: Language,
    docs: Sequence[Doc],
    component: Optional[str] = None,
    beam_width: int = 16,
    batch_size: int = 256,
    progress: bool = True,
) -> List[Tuple[Doc, List[Span], numpy.ndarray]]:
    """Each doc with its predicted entities and a confidence in [0, 1] each (module docstring)."""
    name = find_recognizer(pipe_factories(nlp), component)
    pipe = nlp.get_pipe(name)
    out: List[Tuple[Doc, List[Span], numpy.ndarray]] = []
    bar = tqdm(total=len(docs), desc="labelling the pool", unit="sent", disable=None if progress else True, file=sys.stderr)
    for start in range(0, len(docs), batch_size):
        batch = list(docs[start : start + batch_size])
        if isinstance(pipe, AUCNER):
            key = pipe.cfg["spans_key"]
            for doc in nlp.pipe(batch, batch_size=batch_size):
                group = doc.spans[key]
                out.append((doc, list(group), numpy.asarray(group.attrs["scores"], dtype="f8")))
        else:
            # the components before the ner, then the beam and the greedy parse of the same docs
            before = nlp.pipe_names[: nlp.pipe_names.index(name)]
            with nlp.select_pipes(enable=before):
                plain = list(nlp.pipe(batch, batch_size=batch_size))
            beams = pipe.beam_parse(plain, beam_width=beam_width, beam_density=0.0001)
            marginals = pipe.scored_ents(beams)
            for doc, scores in zip(pipe.pipe(plain, batch_size=batch_size), marginals):
                ents = list(doc.ents)
                conf = [min(1.0, scores.get((e.start, e.end, e.label_), 0.0)) for e in ents]
                out.append((doc, ents, numpy.asarray(conf, dtype="f8")))
        bar.update(len(batch))
    bar.close()
    return out


def pseudo_label(doc: Doc, spans: Sequence[Span], scores: numpy.ndarray, threshold: float, low_confidence: str = "missing") -> Tuple[Doc, int, int]:
    """A gold-like Doc of ``doc``'s tokens: spans scoring at least ``threshold`` as entities, the
    others missing (or O with ``low_confidence = "outside"``); with the kept and dropped counts."""
    keep = numpy.asarray(scores) >= threshold
    ref = tokens_only(doc)
    kept = [Span(ref, s.start, s.end, label=s.label_) for s, k in zip(spans, keep) if k]
    dropped = [Span(ref, s.start, s.end) for s, k in zip(spans, keep) if not k]
    if low_confidence == "missing":
        ref.set_ents(kept, missing=dropped, default="outside")
    else:
        ref.set_ents(kept, default="outside")
    return ref, len(kept), len(dropped)


def label_pool(
    nlp: Language,
    items: Sequence[PoolItem],
    threshold: float,
    *,
    low_confidence: str = "missing",
    keep_empty: bool = False,
    component: Optional[str] = None,
    beam_width: int = 16,
    progress: bool = True,
) -> Tuple[List[Doc], Dict[str, int]]:
    """Pseudo-labelled Docs of the pool, and counts of its sentences and entities."""
    docs, counts = [], {"pool_sentences": len(items), "pseudo_sentences": 0, "predicted_entities": 0, "kept_entities": 0, "dropped_entities": 0}
    for doc, spans, scores in scored_entities(nlp, pool_docs(nlp, items), component, beam_width, progress=progress):
        ref, n_kept, n_dropped = pseudo_label(doc, spans, scores, threshold, low_confidence)
        counts["predicted_entities"] += len(spans)
        counts["dropped_entities"] += n_dropped
        if n_kept or keep_empty:
            docs.append(ref)
            counts["kept_entities"] += n_kept
    counts["pseudo_sentences"] = len(docs)
    return docs, counts


# ---------------------------------------------------------------------------------------------
# Training rounds


def load_training_config(config: Union[PathLike, Config], overrides: Optional[Dict[str, Any]] = None, where: Optional[PathLike] = None) -> Config:
    """``config`` (a file or a Config) with ``overrides``, not interpolated; a missing file, one
    not UTF-8 or an override naming no section is one line naming the file (or ``where``)."""
    from spacy.util import load_config_from_str

    if isinstance(config, Config):
        text = config.to_str(interpolate=False)
        where = where if where is not None else "the config"
    elif not Path(config).is_file():
        raise DataError(f"{config}: no such config file")
    else:
        text = read_text(config)
        where = config
    try:
        return load_config_from_str(text, overrides=overrides or {}, interpolate=False)
    except ConfigValidationError as err:
        raise DataError(f"{where}: {config_error_text(err)}") from None


def train_config(config: Union[PathLike, Config], output_dir: Path, overrides: Optional[Dict[str, Any]] = None, gpu_id: int = -1) -> Path:
    """``spacy train`` in-process, the package's one: ``config`` with ``overrides`` trained into
    ``output_dir``, its log on stderr; returns ``output_dir / "model-best"``."""
    import spacy
    from spacy.training.initialize import init_nlp
    from spacy.training.loop import train as train_loop

    if gpu_id >= 0:  # as `spacy train` does before it builds the pipeline
        spacy.require_gpu(gpu_id)
    nlp = init_nlp(load_training_config(config, overrides), use_gpu=gpu_id)
    Path(output_dir).mkdir(parents=True, exist_ok=True)
    train_loop(nlp, output_dir, use_gpu=gpu_id, stdout=sys.stderr, stderr=sys.stderr)
    return output_dir / "model-best"


def _dev_scores(nlp: Language, dev: PathLike) -> Dict[str, float]:
    """The package's dev scores of ``nlp`` on the gold Docs of ``dev``, on their own tokens."""
    return dev_scores(nlp, [Example(tokens_only(d), d) for d in read_docs(dev, nlp.vocab)])


def _set_train_path(config_file: Path, train_path: Path) -> None:
    from spacy.util import load_config

    if config_file.exists():
        config = load_config(config_file, interpolate=False)
        config["paths"]["train"] = str(train_path)
        config.to_disk(config_file)


def best_round(records: Sequence[Dict[str, Any]]) -> int:
    """The index of the round with the best dev F1 (no score counts as 0; the earliest of
    equal rounds, so a pseudo-labelled round must beat its teacher to be kept)."""
    if not records:
        raise ValueError("no self-training round to choose from")
    return max(range(len(records)), key=lambda i: (records[i]["dev"]["ents_f"] or 0.0, -i))


def run_names(rounds: int) -> List[str]:
    """The entries a self-training run of ``rounds`` rounds writes in its output folder."""
    rounds_ = [name for k in range(rounds + 1) for name in (f"round-{k}", f".round-{k}.partial")]
    return ["rounds.jsonl", "model-best", ".model-best.partial", *rounds_]


@dataclass(frozen=True)
class Settings:
    """The options of ``spacy-auc-ner self-train``, refused when made, naming the option."""

    rounds: int = 2
    threshold: float = 0.9
    low_confidence: str = "missing"
    keep_empty: bool = False
    component: Optional[str] = None
    beam_width: int = 16

    def __post_init__(self) -> None:
        if self.rounds < 1:
            raise DataError(f"--rounds: expected 1 or more, got {self.rounds}")
        if not 0.0 <= self.threshold <= 1.0:
            raise DataError(f"--threshold: expected a confidence in [0, 1], got {self.threshold}")
        if self.low_confidence not in LOW_CONFIDENCE:
            raise DataError(f"--low-confidence: expected one of {', '.join(LOW_CONFIDENCE)}, got {self.low_confidence!r}")
        if self.beam_width < 2:
            raise DataError(f"--beam-width: expected 2 or more, got {self.beam_width}")


def self_train(
    config_path: PathLike,
    output_dir: PathLike,
    *,
    train: PathLike,
    dev: PathLike,
    pool: PathLike,
    rounds: int = 2,
    threshold: float = 0.9,
    teacher: Optional[PathLike] = None,
    low_confidence: str = "missing",
    keep_empty: bool = False,
    component: Optional[str] = None,
    beam_width: int = 16,
    overrides: Optional[Dict[str, Any]] = None,
    gpu_id: int = -1,
    overwrite: bool = False,
    log: Callable[[str], None] = _log,
    progress: bool = True,
) -> List[Dict[str, Any]]:
    """Round 0 (the teacher) and ``rounds`` self-training rounds; returns the records of
    ``rounds.jsonl``. Every input is checked before anything is written, and ``overwrite``
    removes only what an earlier run recorded (:mod:`spacy_auc_ner.outputs`)."""
    settings = Settings(rounds, threshold, low_confidence, keep_empty, component, beam_width)
    config = load_training_config(config_path, overrides)
    checked = check_self_train(config, config_path, settings, train=train, dev=dev, pool=pool, teacher=teacher, gpu_id=gpu_id)
    out = OutputFolder(output_dir, "self-train")
    out.claim(run_names(rounds), [config_path, train, dev, pool, teacher], overwrite, "a self-training run")
    out.clear()
    return run_rounds(out, config, config_path, settings, train=Path(train), dev=dev, teacher=teacher, gpu_id=gpu_id, log=log, progress=progress, **checked)


def check_self_train(
    config: Config,
    where: PathLike,
    settings: Settings,
    *,
    train: Optional[PathLike],
    dev: PathLike,
    pool: PathLike,
    teacher: Optional[PathLike] = None,
    gpu_id: int = -1,
    gold: Optional[List[Doc]] = None,
) -> Dict[str, Any]:
    """Read and check every input of a self-training run, writing nothing; returns what the rounds
    need (``gold``, ``items``, ``first_teacher``). ``gold`` given (by the recipe, which read its
    files itself) stands for ``train``, which need not exist yet."""
    import spacy

    for path in ((train, dev) if gold is None else ()) + ((teacher,) if teacher is not None else ()):
        if not Path(path).exists():
            raise DataError(f"{path}: no such file or folder")
    items = read_pool(pool)
    if gold is None:
        gold = read_docs(train, Vocab())
        read_docs(dev, Vocab())  # a bad dev file fails now, not after round 0
    load_training_config(config, {"paths.train": str(train), "paths.dev": str(dev)}, where)  # a config without [paths] fails now
    if gpu_id >= 0:
        spacy.require_gpu(gpu_id)
    first_teacher = None
    if teacher is not None:
        first_teacher = spacy.load(teacher)
        find_recognizer(pipe_factories(first_teacher), settings.component)
    else:  # refused now, not once round 0 has trained
        find_recognizer(pipe_factories(config), settings.component, f"the pipeline of {where}")
    return {"gold": gold, "items": items, "first_teacher": first_teacher}


def run_rounds(
    out: OutputFolder,
    config: Config,
    where: PathLike,
    settings: Settings,
    *,
    train: Path,
    dev: PathLike,
    teacher: Optional[PathLike] = None,
    overrides: Optional[Dict[str, Any]] = None,
    gpu_id: int = -1,
    log: Callable[[str], None] = _log,
    progress: bool = True,
    gold: List[Doc],
    items: List[PoolItem],
    first_teacher: Optional[Language] = None,
) -> List[Dict[str, Any]]:
    """Round 0 and the self-training rounds into ``out`` (inputs checked, ``out`` claimed), each
    entry recorded before it is written; every round trains ``config`` with ``overrides`` and
    its own ``paths.train``."""
    import spacy

    output_dir = out.folder
    output_dir.mkdir(parents=True, exist_ok=True)
    overrides = {**(overrides or {}), "paths.dev": str(dev)}
    records: List[Dict[str, Any]] = []

    def run_round(k: int, body: Callable[[Path], Dict[str, Any]]) -> None:
        """Build round k in a hidden folder, rename it when complete (a given teacher leaves
        it empty: nothing to keep), then add its line to rounds.jsonl."""
        partial = out.record(f".round-{k}.partial", f"round-{k}")
        if partial.exists():
            shutil.rmtree(partial)
        partial.mkdir()
        try:
            record = body(partial)
            if any(partial.iterdir()):
                os.replace(partial, output_dir / f"round-{k}")
        finally:
            if partial.exists():
                shutil.rmtree(partial)
        with out.record("rounds.jsonl").open("a", encoding="utf8") as f:
            f.write(json.dumps(record) + "\n")
        records.append(record)
        dev_f = record["dev"]["ents_f"]
        log(f"round {k}: dev F1 {dev_f:.3f}" if dev_f is not None else f"round {k}: no dev F1")

    # round 0: the teacher
    def round_zero(partial: Path) -> Dict[str, Any]:
        start = time.perf_counter()
        if teacher is not None:
            log(f"round 0: the teacher is {teacher}")
            model, trained = str(teacher), None
        else:
            log(f"round 0: training {where} on the {len(gold)} gold sentences of {train}")
            train_config(config, partial, {**overrides, "paths.train": str(train)}, gpu_id)
            model, trained = str(output_dir / "round-0" / "model-best"), time.perf_counter() - start
        nlp = first_teacher if first_teacher is not None else spacy.load(partial / "model-best")
        find_recognizer(pipe_factories(nlp), settings.component)
        return {
            "round": 0, "model": model, "teacher": None, "threshold": settings.threshold, "gold_sentences": len(gold),
            "pool_sentences": 0, "pseudo_sentences": 0, "predicted_entities": 0, "kept_entities": 0, "dropped_entities": 0,
            "train_sentences": len(gold), "dev": _dev_scores(nlp, dev), "label_seconds": 0.0, "train_seconds": trained,
        }

    run_round(0, round_zero)
    rounds, threshold = settings.rounds, settings.threshold
    for k in range(1, rounds + 1):
        def round_k(partial: Path, k: int = k) -> Dict[str, Any]:
            teacher_path = records[-1]["model"]
            log(f"round {k}/{rounds}: labelling {len(items)} pool sentences with {teacher_path} (threshold {threshold})")
            start = time.perf_counter()
            nlp = spacy.load(teacher_path)
            pseudo, counts = label_pool(
                nlp, items, threshold, low_confidence=settings.low_confidence, keep_empty=settings.keep_empty,
                component=settings.component, beam_width=settings.beam_width, progress=progress,
            )
            label_seconds = time.perf_counter() - start
            log(
                f"round {k}/{rounds}: kept {counts['kept_entities']} of {counts['predicted_entities']} predicted entities "
                f"in {counts['pseudo_sentences']} sentences; training on {len(gold)} gold + {len(pseudo)} pseudo-labelled sentences"
            )
            if pseudo:
                write_docs(partial / "pseudo.spacy", pseudo)
            train_path = partial / "train.spacy"
            write_docs(train_path, gold + pseudo)
            start = time.perf_counter()
            train_config(config, partial, {**overrides, "paths.train": str(train_path)}, gpu_id)
            train_seconds = time.perf_counter() - start
            # the saved configs name the training file where it will be once the round is complete
            final_train = output_dir / f"round-{k}" / "train.spacy"
            for saved in ("model-best", "model-last"):
                _set_train_path(partial / saved / "config.cfg", final_train)
            best = spacy.load(partial / "model-best")
            return {
                "round": k, "model": str(output_dir / f"round-{k}" / "model-best"), "teacher": teacher_path,
                "threshold": threshold, "gold_sentences": len(gold), **counts, "train_sentences": len(gold) + len(pseudo),
                "train_file": str(final_train), "dev": _dev_scores(best, dev), "label_seconds": label_seconds, "train_seconds": train_seconds,
            }

        run_round(k, round_k)
    best = best_round(records)
    partial = out.record(".model-best.partial", "model-best")
    shutil.copytree(records[best]["model"], partial)
    os.replace(partial, output_dir / "model-best")
    log(f"model-best: round {best} (dev F1 {records[best]['dev']['ents_f'] or 0.0:.3f})")
    return records
