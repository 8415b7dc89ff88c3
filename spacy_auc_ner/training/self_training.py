"""Self-training rounds: round 0 is the teacher (a given pipeline, or the config trained on
gold); round k labels the pool with round k - 1's best pipeline (:mod:`.pseudo_labels`) and
trains the same config on gold plus pseudo-labels (spaCy's loop): its own training corpus
with the round's pseudo-labels added by a reader (`with_pseudo_labels`), so the gold sentences
are never written out. The settings are the
config's ``[self_training]`` block and the pool its ``[corpora.pool]`` reader
(``configs/self_training.cfg`` holds both, with the defaults). Rounds are built in hidden
``.round-K.partial`` folders and renamed when complete; ``model-best`` is a copy of the round
with the best dev F1 (:func:`best_round`). A round whose teacher keeps no pool sentence ends the
rounds: it would train on the gold alone, as round 0 did.
"""
import functools
import json
import os
import shutil
import sys
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable, Dict, List, Optional, Sequence, Tuple

from spacy.language import Language
from spacy.tokens import Doc
from spacy.training import Example
from thinc.api import Config

from ..data.columns import DataError, write_docs
from ..data.config_files import load_config_file
from ..data.files import PathLike
from ..outputs import OutputFolder
from ..pipeline.scoring import dev_scores
from .confidences import beam_width_error, find_recognizer, load_pipeline, pipe_factories
from .no_dev import has_dev
from .pseudo_labels import LOW_CONFIDENCE, label_pool
from .spacy_training import checked_block, train_config, with_settings
from .unlabeled import PoolItem

SETTINGS_FILE = Path(__file__).parents[1] / "configs" / "self_training.cfg"
BLOCK = "self_training"


@dataclass(frozen=True)
class Labelled:
    """What a round's teacher made of the pool: the pseudo-labelled Docs it kept, the counts of
    `label_pool`, and the seconds the labelling took."""

    teacher: str  # the teacher pipeline's path
    docs: List[Doc]
    counts: Dict[str, int]
    seconds: float


def _log(text: str) -> None:
    print(f"[self-train] {text}", file=sys.stderr, flush=True)


def _whole(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


# each setting of [self_training]: what it must be (the values are configs/self_training.cfg's)
CHECKS: Dict[str, Any] = {
    "rounds": (lambda v: _whole(v) and v >= 0, "must be a whole number >= 0 (0: train once)"),
    "threshold": (lambda v: isinstance(v, (int, float)) and not isinstance(v, bool) and 0 <= v <= 1, "must be a confidence in [0, 1]"),
    "low_confidence": (lambda v: v in LOW_CONFIDENCE, "must be " + " or ".join(f'"{v}"' for v in LOW_CONFIDENCE)),
    "keep_empty": (lambda v: isinstance(v, bool), "must be true or false"),
    "component": (lambda v: v is None or (isinstance(v, str) and bool(v)), "must be the name of a pipe, or null"),
    "beam_width": (lambda v: not beam_width_error(v), beam_width_error(None)),
    "max_steps": (lambda v: v is None or (_whole(v) and v >= 1), "must be a whole number >= 1, or null"),
}


@dataclass(frozen=True)
class SelfTrainingSettings:
    """The ``[self_training]`` block of a config, checked (`from_config`)."""

    rounds: int
    threshold: float
    low_confidence: str
    keep_empty: bool
    component: Optional[str]
    beam_width: int
    max_steps: Optional[int]

    @classmethod
    def from_config(cls, config: Config) -> "SelfTrainingSettings":
        """The settings of ``config``'s block (`with_self_training` fills what it leaves out); a
        wrong one is one line naming its full key: ``[self_training.threshold] must be ...``."""
        return cls(**checked_block(with_self_training(config)[BLOCK], BLOCK, "self-training", CHECKS))


def with_self_training(config: Config) -> Config:
    """``config`` with what it leaves out of ``configs/self_training.cfg`` (``[self_training]``
    settings, the ``[corpora.pool]`` reader, ``[paths] raw_text``) filled in: one source of
    the defaults, for a recipe (which holds the file) and any config of the user's alike."""
    defaults = load_config_file(SETTINGS_FILE)
    config = config.copy()
    config[BLOCK] = {**defaults[BLOCK], **(config.get(BLOCK) or {})}
    corpora = config.setdefault("corpora", {})
    if "pool" not in corpora:
        corpora["pool"] = defaults["corpora"]["pool"]
    config.setdefault("paths", {}).setdefault("raw_text", None)
    return config


def read_pool_config(config: Config, where: PathLike) -> List[PoolItem]:
    """The sentences of the config's ``[corpora.pool]`` (tokens and spaces), read now: a missing
    file, a bad line or an empty pool is one line naming the file."""
    import spacy
    from spacy.util import resolve_dot_names

    interpolated = config.interpolate()
    if interpolated["corpora"]["pool"].get("path") is None:
        raise DataError(f"{where}: [corpora.pool] reads no file: give the unlabeled text with --paths.raw_text")
    (reader,) = resolve_dot_names(interpolated, ["corpora.pool"])
    nlp = spacy.blank(interpolated["nlp"]["lang"])
    items: List[PoolItem] = [([t.text for t in eg.reference], [bool(t.whitespace_) for t in eg.reference]) for eg in reader(nlp)]
    if not items:
        raise DataError(f"{interpolated['corpora']['pool']['path']}: the pool holds no text")
    return items


def dev_examples(nlp: Language, interpolated: Config) -> List[Example]:
    """The dev examples as `spacy train` scores them while it trains: read by the reader that
    the interpolated config's ``training.dev_corpus`` names (for spaCy's Corpus.v1,
    ``gold_preproc`` keeps the annotated tokens or has ``nlp`` tokenize the text again), so that
    the round is chosen on the examples that chose each round's model-best."""
    from spacy.util import dot_to_object, registry

    section = dot_to_object(interpolated, interpolated["training"]["dev_corpus"])
    return list(registry.resolve({"reader": section})["reader"](nlp))


# the readers that transform the examples of the corpus they wrap: a round's pseudo-labelled
# sentences go beneath them, so that they are augmented, resampled or masked as the gold ones,
# as when a round's training file held both
WRAPPERS = ("spacy_auc_ner.Augmented.v1", "spacy_auc_ner.Resampled.v1", "spacy_auc_ner.MaskedEntities.v1")
PSEUDO_LABELLED = "spacy_auc_ner.PseudoLabelled.v1"


def _gold_block(block: Dict[str, Any]) -> Dict[str, Any]:
    """The reader block beneath the `WRAPPERS` of a training corpus block: the one that reads
    the gold sentences."""
    return _gold_block(block["corpus"]) if block.get("@readers") in WRAPPERS else block


def with_pseudo_labels(block: Dict[str, Any], path: PathLike) -> Dict[str, Any]:
    """The training corpus block ``block`` with the pseudo-labelled sentences of ``path`` added
    after its gold sentences (``PseudoLabelled.v1``, beneath its `WRAPPERS`), read on their
    own tokens unless the gold reader is spaCy's ``Corpus.v1`` without ``gold_preproc``."""
    if block.get("@readers") in WRAPPERS:
        return {**block, "corpus": with_pseudo_labels(block["corpus"], path)}
    gold_preproc = bool(block.get("gold_preproc", False)) if block.get("@readers") == "spacy.Corpus.v1" else True
    return {"@readers": PSEUDO_LABELLED, "corpus": block, "path": str(path), "gold_preproc": gold_preproc}


def _train_corpus_key(config: Config) -> Tuple[str, str]:
    """(section, key) of the block that ``[training] train_corpus`` names (corpora, train)."""
    section, _, key = str(config["training"].get("train_corpus", "corpora.train")).rpartition(".")
    return section, key


def gold_sentences(interpolated: Config) -> int:
    """The sentences that the gold reader of the interpolated config's training corpus yields
    (`_gold_block`)."""
    import spacy
    from spacy.util import registry

    section, key = _train_corpus_key(interpolated)
    reader = registry.resolve({"reader": _gold_block(interpolated[section][key])})["reader"]
    return sum(1 for _ in reader(spacy.blank(interpolated["nlp"]["lang"])))


def _moved(config_file: Path, old: Path, new: Path) -> None:
    """Rewrite a saved config's settings that name ``old`` (a file of a round's hidden folder)
    to name ``new``, where the file is once the round is complete."""
    from spacy.util import load_config

    def swap(node: Any) -> Any:
        if isinstance(node, dict):
            return {k: swap(v) for k, v in node.items()}
        return str(new) if node == str(old) else node

    if config_file.exists():
        Config(swap(load_config(config_file, interpolate=False))).to_disk(config_file)


def best_round(records: Sequence[Dict[str, Any]]) -> int:
    """The index of the round with the best dev F1 (no score counts as 0; the earliest of
    equal rounds, so a pseudo-labelled round must beat its teacher to be kept)."""
    if not records:
        raise ValueError("no self-training round to choose from")
    return max(range(len(records)), key=lambda i: (records[i]["dev"]["ents_f"] or 0.0, -i))


def kept_round(records: Sequence[Dict[str, Any]]) -> int:
    """The round a run keeps: the best on dev (`best_round`), or without a dev set (rounds
    scored None) the last: the lab's ablation found one round of self-training a gain on dev
    and on test (projects/lab/docs/evidence/campaign_trf_ablation/parts.md), so the student
    is kept without asking a dev set."""
    if not records:
        raise ValueError("no self-training round to choose from")
    if all(record["dev"] is None for record in records):
        return len(records) - 1
    return best_round(records)


def run_names(rounds: int) -> List[str]:
    """The entries a self-training run of ``rounds`` rounds writes in its output folder."""
    rounds_ = [name for k in range(rounds + 1) for name in (f"round-{k}", f".round-{k}.partial")]
    return ["rounds.jsonl", "model-best", ".model-best.partial", *rounds_]


def check_teacher(config: Config, where: PathLike, settings: SelfTrainingSettings, teacher: Optional[PathLike] = None) -> Optional[Language]:
    """The given teacher pipeline loaded, or None; either way the pipe whose entities label the
    pool must exist (refused now, not once round 0 has trained)."""
    if teacher is None:
        find_recognizer(pipe_factories(config), settings.component, f"the pipeline of {where}")
        return None
    first_teacher = load_pipeline(teacher)  # suggest's MODEL is loaded, and refused, the same
    find_recognizer(pipe_factories(first_teacher), settings.component)
    return first_teacher


def run_rounds(
    out: OutputFolder,
    config: Config,
    where: PathLike,
    settings: SelfTrainingSettings,
    *,
    teacher: Optional[PathLike] = None,
    gpu_id: int = -1,
    log: Callable[[str], None] = _log,
    progress: bool = True,
    items: List[PoolItem],
    first_teacher: Optional[Language] = None,
) -> List[Dict[str, Any]]:
    """Round 0 and the self-training rounds into ``out`` (inputs checked, ``out`` claimed), each
    entry recorded before it is written; every round trains ``config`` (its dev set, if any, in
    it): round 0 on its own training corpus, round k on it plus round k's pseudo-labels (written to
    ``round-K/pseudo.spacy`` and read through `with_pseudo_labels`) with ``[self_training]
    max_steps`` as its step budget when it is set."""
    import spacy

    output_dir = out.folder
    output_dir.mkdir(parents=True, exist_ok=True)
    interpolated = config.interpolate()  # what every round reads
    scored = has_dev(config)  # without a dev set: no scores, the last round kept
    gold = gold_sentences(interpolated)
    section, key = _train_corpus_key(config)
    records: List[Dict[str, Any]] = []

    def scores(nlp: Language) -> Optional[Dict[str, float]]:
        return dev_scores(nlp, dev_examples(nlp, interpolated)) if scored else None

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
        dev_f = (record["dev"] or {}).get("ents_f")
        # spaCy's own log named the hidden folder the round trained in, renamed since
        kept = f", kept in {output_dir / f'round-{k}'}" if (output_dir / f"round-{k}").exists() else ""
        log((f"round {k}: dev F1 {100 * dev_f:.2f}" if dev_f is not None else f"round {k}: no dev F1") + kept)

    # round 0: the teacher
    def round_zero(partial: Path) -> Dict[str, Any]:
        start = time.perf_counter()
        if teacher is not None:
            log(f"round 0: the teacher is {teacher}")
            model, trained = str(teacher), None
        else:
            log(f"round 0: training {where} on its {gold} gold sentences")
            train_config(config, partial, None, gpu_id)
            model, trained = str(output_dir / "round-0" / "model-best"), time.perf_counter() - start
        nlp = first_teacher if first_teacher is not None else spacy.load(teacher if teacher is not None else partial / "model-best")
        find_recognizer(pipe_factories(nlp), settings.component)
        return {
            "round": 0, "model": model, "teacher": None, "threshold": settings.threshold, "gold_sentences": gold,
            "pool_sentences": 0, "pseudo_sentences": 0, "predicted_entities": 0, "kept_entities": 0, "dropped_entities": 0,
            "train_sentences": gold, "dev": scores(nlp), "label_seconds": 0.0, "train_seconds": trained,
        }

    def round_k(partial: Path, k: int, labelled: Labelled) -> Dict[str, Any]:
        write_docs(partial / "pseudo.spacy", labelled.docs)  # read after the gold sentences by the round's training corpus
        start = time.perf_counter()
        budget = {} if settings.max_steps is None else {"training.max_steps": settings.max_steps}
        corpus = with_pseudo_labels(config[section][key], partial / "pseudo.spacy")
        train_config(with_settings(config, {**budget, f"{section}.{key}": corpus}), partial, None, gpu_id)
        train_seconds = time.perf_counter() - start
        # the saved configs name the pseudo-labels where they will be once the round is complete
        final_pseudo = output_dir / f"round-{k}" / "pseudo.spacy"
        for saved in ("model-best", "model-last"):
            _moved(partial / saved / "config.cfg", partial / "pseudo.spacy", final_pseudo)
        best = spacy.load(partial / "model-best")
        return {
            "round": k, "model": str(output_dir / f"round-{k}" / "model-best"), "teacher": labelled.teacher,
            "threshold": settings.threshold, "gold_sentences": gold, **labelled.counts, "train_sentences": gold + len(labelled.docs),
            "pseudo_file": str(final_pseudo), "dev": scores(best), "label_seconds": labelled.seconds, "train_seconds": train_seconds,
        }

    run_round(0, round_zero)
    rounds, threshold = settings.rounds, settings.threshold
    for k in range(1, rounds + 1):
        teacher_path = records[-1]["model"]
        log(f"round {k}/{rounds}: labelling {len(items)} pool sentences with {teacher_path} (threshold {threshold})")
        start = time.perf_counter()
        pseudo, counts = label_pool(
            spacy.load(teacher_path), items, threshold, low_confidence=settings.low_confidence, keep_empty=settings.keep_empty,
            component=settings.component, beam_width=settings.beam_width, progress=progress,
        )
        labelled = Labelled(teacher_path, pseudo, counts, time.perf_counter() - start)
        if not pseudo:
            # round k would train on the gold sentences alone, as round 0 did, and its teacher
            # would label the pool as round 0's did: every round left would repeat the ones before
            log(f"round {k}/{rounds}: no pool sentence kept ({counts['predicted_entities']} predicted entities, none with confidence >= {threshold}): "
                f"self-training stops after round {k - 1}")
            break
        log(
            f"round {k}/{rounds}: kept {counts['kept_entities']} of {counts['predicted_entities']} predicted entities "
            f"in {counts['pseudo_sentences']} sentences; training on {gold} gold + {len(pseudo)} pseudo-labelled sentences"
        )
        run_round(k, functools.partial(round_k, k=k, labelled=labelled))
    best = kept_round(records)
    partial = out.record(".model-best.partial", "model-best")
    shutil.copytree(records[best]["model"], partial)
    os.replace(partial, output_dir / "model-best")
    log(f"model-best: round {best} (dev F1 {100 * (records[best]['dev']['ents_f'] or 0.0):.2f})" if scored else f"model-best: round {best}, the last (no dev set)")
    return records
