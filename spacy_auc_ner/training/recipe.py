"""The low-resource recipe end to end on your own files, ``spacy-auc-ner recipe CONFIG OUT``
and ``self-train``: the one orchestrator of the steps that ``spacy train`` cannot do alone.
The procedure is the config (`Steps`): pretraining when ``[pretraining]`` has an objective and
``max_epochs`` >= 1 (that many epochs of ``spacy pretrain`` on ``[corpora.pretrain]``; a null
component and layer are named, `named_pretraining`), training, then self-training when
``[self_training] rounds`` is 1 or more and ``[corpora.pool]`` reads a file (by default
``paths.raw_text``). Its budget is ``[budget]``, in epochs of the
training file (:mod:`.budget`); without ``paths.dev`` nothing is chosen on a dev set (the dev
corpus is ``NoDev.v1``, each training keeps its last step, self-training its last round).
`run_recipe` writes::

    OUTPUT/pretrain/model-last.bin   spacy pretrain of the config's [pretraining] block on the
                                     raw text (without it: the training file's own text)
    OUTPUT/round-K/model-best        with raw text: round 0 trains on the gold sentences from
                                     the pretrained encoder, each round K retrains on gold +
                                     the entities round K-1 labels with confidence >= threshold
    OUTPUT/round-K/pseudo.spacy      those pseudo-labels, which round K's [corpora.train] reads
                                     after the gold sentences (PseudoLabelled.v1)
    OUTPUT/rounds.jsonl              each round's pseudo-label counts and dev scores
    OUTPUT/model-best                the round with the best dev F1, or without a dev set the
                                     last round, each round's last step (without self-training:
                                     the one training run's best model, and model-last)
    OUTPUT/data/{train,dev}.spacy    column files given as paths.train / paths.dev, converted
    OUTPUT/.spacy-auc-ner-outputs.json  the record of the above: all that --overwrite removes

`prepare` reads and checks a run's inputs into a `Run`; `train_steps` runs a config's steps
into a claimed folder, for `run_recipe` and the lab's study cells alike.
"""
import contextlib
import json
import sys
import tempfile
import threading
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable, Dict, Iterator, List, Mapping, Optional, Tuple

from spacy.language import Language
from spacy.tokens import Doc
from spacy.vocab import Vocab
from thinc.api import Config

from ..data.columns import DataError, is_docbin, read_docs, write_docs
from ..data.files import PathLike
from ..methods import MethodError, assemble, check_config_keys, recipe_files, recipe_names
from ..outputs import OutputFolder, config_inputs, same_or_inside
from .budget import budget_text, budgeted, check_no_epoch_bound, with_budget
from .no_dev import dev_file_in_config, without_dev
from .pretraining import check_pretraining_text, named_pretraining, pretrains
from .self_training import SelfTrainingSettings, check_teacher, kept_round, read_pool_config, run_names, run_rounds, with_self_training
from .spacy_training import check_overrides, check_training_blocks, load_training_config, train_config, validate_training_config, with_settings
from .unlabeled import PoolItem, read_pool

PRETRAIN_DIR = "pretrain"
DATA_DIR = "data"  # column files given as paths.train / paths.dev, converted to .spacy for spacy train
TRAIN_DIRS = ("model-best", "model-last")  # a run without self-training, as spacy train writes it


def _log(text: str, command: str = "recipe") -> None:
    print(f"[{command}] {text}", file=sys.stderr, flush=True)


def _self_train_log(text: str) -> None:
    _log(text, "self-train")


def recipe_source(recipe: PathLike) -> Tuple[Config, List[Path], str]:
    """``recipe``, a config file or the name of a recipe of the package (`methods.recipe_names`):
    the config (not interpolated), the files it comes from and how messages name it."""
    path = Path(recipe)
    names = recipe_names()
    if not path.is_file() and path.suffix == ".cfg" and path.stem in names:  # configs/<recipe>.cfg until 2026-11-24
        raise DataError(f"{path}: no such config file; the recipes are assembled now: give {path.stem} as CONFIG, "
                        f"or write the file with 'spacy-auc-ner config {path.stem} --output {path.name}'")
    if path.is_file() or path.suffix or len(path.parts) > 1:
        config = load_training_config(path)
        try:
            check_config_keys(config, path)  # a typo such as [training] max_step trains as if absent
        except MethodError as err:
            raise DataError(str(err)) from None
        return config, [path], str(path)
    if str(recipe) not in names:
        raise DataError(f"{recipe}: neither a config file nor a recipe ({', '.join(names)})")
    base, partials = recipe_files(str(recipe))
    where = f"recipe {recipe} ({partials[-1]})"
    return assemble(base, partials), [base, *partials], where


def _initial_labels(config: Mapping[str, Any]) -> bool:
    """Whether [initialize.components] gives some pipe its labels (then data without entities
    still trains a pipeline that knows them)."""
    components = ((config.get("initialize") or {}).get("components") or {})
    return any(isinstance(block, Mapping) and block.get("labels") for block in components.values())


def _pretraining_done(log_file: Path, epochs: int, sentences: Optional[int]) -> str:
    """What pretraining did, from spaCy's ``log.jsonl`` (each line: the words so far, the
    total loss so far; the last written after the last epoch)."""
    lines = log_file.read_text(encoding="utf8").splitlines() if log_file.is_file() else []
    if not lines:
        return f"pretraining done, {epochs} epoch(s); spaCy wrote no {log_file}"
    last = json.loads(lines[-1])
    return (f"pretraining done: {epochs} epoch(s) of {sentences} sentences, {last.get('nr_word')} words "
            f"in all, total loss {float(last.get('loss') or 0.0):.2f} (its log: {log_file})")


def _pretraining_config(config: Config, where: PathLike) -> Config:
    """The config as spacy pretrain reads it (`named_pretraining`), its raw-text reader checked."""
    named = named_pretraining(config)
    reader = named.get("corpora", {}).get("pretrain", {}).get("@readers")
    raw_text = str(named.interpolate()["paths"]["raw_text"])
    if reader == "spacy.JsonlCorpus.v1" and not raw_text.endswith(".jsonl"):
        raise DataError(f"{where}: [corpora.pretrain] is spacy.JsonlCorpus.v1, which reads .jsonl only, not {raw_text}; use spacy_auc_ner.RawText.v1")
    return named


@contextlib.contextmanager
def _epoch_bar(log_file: Path, epochs: int, progress: bool) -> Iterator[None]:
    """A progress bar of pretraining's epochs on stderr while the block runs: spacy pretrain
    writes a line to ``log_file`` after each epoch (its words so far and total loss), which a
    thread reads twice a second; spaCy's own table prints a row only every 10,000 words."""
    from tqdm import tqdm

    bar = tqdm(total=epochs, desc="pretraining", unit="epoch", disable=None if progress else True, file=sys.stderr)
    if bar.disable:  # no bar (progress off, or stderr no terminal): nothing to follow
        yield
        return
    stop = threading.Event()

    def follow() -> None:
        while True:
            stopped = stop.wait(0.5)
            lines = log_file.read_text(encoding="utf8").splitlines() if log_file.is_file() else []
            if lines and len(lines) > bar.n:
                last = json.loads(lines[-1])
                bar.set_postfix(words=last.get("nr_word"), loss=f"{float(last.get('loss') or 0.0):.1f}", refresh=False)
                bar.update(min(len(lines), epochs) - bar.n)
            if stopped:
                return

    watcher = threading.Thread(target=follow, daemon=True)
    watcher.start()
    try:
        yield
    finally:
        stop.set()
        watcher.join()
        bar.close()


@dataclass(frozen=True)
class Steps:
    """What a config asks beyond ``spacy train``, read from it once (`from_config`): pretraining
    (`pretrains`) and self-training (``[self_training]``, `SelfTrainingSettings`; None: one
    training)."""

    pretrain: bool
    self_training: Optional[SelfTrainingSettings]

    @classmethod
    def from_config(cls, config: Config, where: PathLike = "the config", *, pretrain: bool = True, self_train: Optional[bool] = None) -> "Steps":
        """The steps of ``config``: it pretrains by `pretrains` (never without ``pretrain``) and
        self-trains when its ``[self_training] rounds`` is 1 or more and its ``[corpora.pool]``
        reads a file (by default ``paths.raw_text``); ``self_train`` True or False decides that
        instead (``self-train`` always self-trains, round 0 alone with ``rounds = 0``)."""
        settings = SelfTrainingSettings.from_config(config)
        if self_train is None:
            self_train = settings.rounds >= 1 and with_self_training(config).interpolate()["corpora"]["pool"].get("path") is not None
        return cls(pretrains(config, where) and pretrain, settings if self_train else None)

    def names(self) -> List[str]:
        """The entries `train_steps` writes in its output folder."""
        trained = list(TRAIN_DIRS) if self.self_training is None else run_names(self.self_training.rounds)
        return ([PRETRAIN_DIR] if self.pretrain else []) + trained


@dataclass(frozen=True)
class Run:
    """Every input of a run, read and checked by `prepare` before anything is written."""

    config: Config  # what `train_steps` trains: overrides, budget and dev set written in
    where: str  # how messages name the config
    steps: Steps
    inputs: Tuple[Any, ...]  # every file the run reads (a path, or (config key, path)), which its output folder may not hold
    columns: Mapping[str, List[Doc]]  # column files given as paths.train / paths.dev, to write as OUTPUT/data/<role>.spacy
    raw_text: str  # what pretraining reads: paths.raw_text, or the training file
    notes: Tuple[str, ...]  # what the log says before the steps
    teacher: Optional[Path] = None  # a trained pipeline as round 0 (``self-train --model``)
    teacher_nlp: Optional[Language] = None  # it, loaded to be checked
    pool: Optional[List[PoolItem]] = None  # the [corpora.pool] sentences self-training labels, read once


def _path(paths: Dict[str, Any], key: str, where: str) -> Optional[Path]:
    value = paths.get(key)
    if value is None:
        return None
    if not isinstance(value, str):  # an override with no value (true), a number, a list
        raise DataError(f"[paths.{key}] of {where} must be the name of a file, not {json.dumps(value)}")
    if Path(value).is_dir():
        raise DataError(f"{value}: is a folder; give a file ([paths.{key}] of {where})")
    if not Path(value).is_file():
        raise DataError(f"{value}: no such file ([paths.{key}] of {where})")
    return Path(value)


def _dev_named(config: Config, notes: List[str]) -> Tuple[Config, Optional[str], Dict[str, Any]]:
    """The config with its dev set as ``paths.dev`` where another key names it, that key
    (``paths.dev`` when it is set; None when no key names a dev set), and its ``[paths]``
    interpolated: a dev file given by ``--corpora.dev.path`` or written into ``[corpora.dev]``
    is used, not replaced by ``NoDev.v1``, and the log says which key decided. A reader of the
    user's that reads no ``path`` is kept as it is."""
    interpolated = config.interpolate()
    paths = dict(interpolated["paths"])
    if paths.get("dev") is not None:
        notes.append("dev set: [paths.dev]")
        return config, "paths.dev", paths
    found = dev_file_in_config(config, interpolated)
    if found is None:
        return config, None, paths
    key, value = found
    notes.append(f"dev set: [{key}]" + ("" if value is None else f" ({value})"))
    if value is None or not isinstance(value, str):
        return config, key, paths
    paths["dev"] = value
    return with_settings(config, {"paths.dev": value, key: "${paths.dev}"}), key, paths


def prepare(
    recipe: PathLike,
    output_dir: PathLike,
    overrides: Optional[Dict[str, Any]] = None,
    *,
    pretrain: bool = True,
    self_train: Optional[bool] = None,
    teacher: Optional[PathLike] = None,
) -> Run:
    """Read and check every input of a run, writing nothing: the config with the self-training
    defaults and ``overrides`` (a key naming nothing is refused), its train, dev and raw-text
    files, the column files to convert, the pool, the teacher; the config's settings as spaCy
    validates them (`validate_training_config`). The steps are the config's
    (`Steps`), less pretraining without ``pretrain``; ``self_train`` True: self-training
    whatever the rounds, and raw text is required (``self-train``)."""
    if not str(output_dir).strip():  # an unset shell variable: Path("") would be the current folder
        raise DataError("OUTPUT_DIR is an empty path: name a folder ('.' for the current one)")
    output_dir = Path(output_dir)
    # the claim refuses a teacher inside what the run writes; the run's folder inside the
    # teacher's (or the teacher's folder itself) would put round-K, model-best and the record
    # among the user's pipeline files
    if teacher is not None and same_or_inside(output_dir, teacher):
        raise DataError(f"{output_dir}: OUTPUT_DIR is the --model pipeline {teacher} or lies inside it, so the run would write into "
                        f"your pipeline's folder; choose an output folder outside {teacher}")
    overrides = dict(overrides or {})
    config, config_files, where = recipe_source(recipe)
    config = with_budget(with_self_training(config))
    check_overrides(config, overrides, where)
    config = load_training_config(config, overrides, where)
    notes: List[str] = []
    config, dev_key, paths = _dev_named(config, notes)
    if paths.get("train") is None:
        raise DataError(f"[paths.train] of {where} is null: give the file with --paths.train")
    train, dev, raw = (_path(paths, key, where) for key in ("train", "dev", "raw_text"))
    assert train is not None  # checked to be set just above
    if dev is None and dev_key is None:  # the user's n sentences are all they have: nothing is chosen on dev
        config, dropped = without_dev(config)
        why = "no dev set (no --paths.dev, and the dev corpus reads no file)"
        notes += [f"{why}: {text} dropped" for text in dropped]
        notes.append(f"{why}: nothing is scored while training (spaCy's SCORE column stays 0.00), the last step is kept")
    check_training_blocks(config, where)  # without a dev file, the dev corpus is NoDev.v1's
    # spaCy's validation and the package's checks of the settings now, not once the folder is
    # claimed and pretraining has run (a wrong type was spaCy's dump after the claim)
    validate_training_config(config)
    if self_train and raw is None:
        raise DataError(f"[paths.raw_text] of {where} is null: give the unlabeled text to self-train on with --paths.raw_text")
    steps = Steps.from_config(config, where, pretrain=pretrain, self_train=self_train)  # the one reading of both blocks
    # every input is read now, so that a bad file or line fails before anything is removed,
    # written or trained; column files (token<TAB>BIO) and annotation tools' JSON become .spacy files in OUTPUT/data
    given = {role: path for role, path in (("train", train), ("dev", dev)) if path is not None}
    docs = {role: read_docs(path, Vocab(), lang=config["nlp"]["lang"]) for role, path in given.items()}
    if teacher is None and not any(doc.ents for doc in docs["train"]) and not _initial_labels(config):
        # spaCy's ner and auc_ner would train and warn, and the pipeline would predict nothing
        raise DataError(f"{train}: none of its {len(docs['train'])} sentences has an entity, and no [initialize.components] "
                        f"labels are given: there is nothing to learn (a column file's labels in another column? see convert --help)")
    if dev is not None and not any(doc.ents for doc in docs["dev"]):
        # every dev F1 would be 0: the steps, the entity bias and the rounds chosen on nothing
        # (the teacher always kept, as no student beats 0), all logged as if scored
        raise DataError(f"{dev}: none of its {len(docs['dev'])} sentences has an entity, so every dev score would be 0 and nothing "
                        f"chosen on it (the step, the entity bias, the self-training round) would be chosen; give a dev file with "
                        f"entities, or leave --paths.dev out (a column file's labels in another column? see convert --help)")
    if dev is not None and same_sentences(docs["train"], docs["dev"]):
        same = "is the training file" if dev.resolve() == train.resolve() else f"holds the training file's sentences ({train})"
        notes.append(f"--paths.dev {same} ({dev}): what is chosen on dev (the round, the step, the entity bias) is chosen on the training sentences")
    columns = {role: docs[role] for role, path in given.items() if not is_docbin(path)}
    # every file the config names, whatever its key (paths.init_tok2vec, corpora.train.path,
    # ...), before the column files' paths below point into the output folder
    inputs = [*config_inputs(config.interpolate()), *config_files, train, dev, raw, teacher]
    check_no_epoch_bound(config)
    config, derived = _budgeted(config, train, docs["train"], where, overrides)
    if derived:
        notes.append(f"the budget: {budget_text(derived)}")
    for role in columns:
        config["paths"][role] = str(output_dir / DATA_DIR / f"{role}.spacy")
    if steps.pretrain:
        if raw is not None:
            read_pool(raw)  # a bad line fails now, named
        config = _pretraining_config(_with_raw_text(config, raw, config["paths"]["train"]), where)
        validate_training_config(config, sections=("pretraining",))
        check_pretraining_text(config, where)  # bounds that leave no text fail now, with the count
        config["paths"]["raw_text"] = None if raw is None else str(raw)
    teacher_nlp, pool = None, None
    if steps.self_training is not None:
        pool = read_pool_config(config, where)
        teacher_nlp = check_teacher(config, where, steps.self_training, teacher)
    return Run(config=config, where=where, steps=steps, inputs=tuple(p for p in inputs if p is not None), columns=columns,
               raw_text=str(raw if raw is not None else config["paths"]["train"]), notes=tuple(notes),
               teacher=None if teacher is None else Path(teacher), teacher_nlp=teacher_nlp, pool=pool)


def same_sentences(a: List[Doc], b: List[Doc]) -> bool:
    """Whether two files hold the same sentences, tokens and entity labels, in any order: a copy
    of the training file, or its .tsv twin of a .spacy file, is the training file as a dev set."""
    def content(docs: List[Doc]) -> List[Tuple[Tuple[str, ...], Tuple[str, ...]]]:
        return sorted((tuple(t.text for t in d), tuple(f"{t.ent_iob_}-{t.ent_type_}" for t in d)) for d in docs)

    return len(a) == len(b) and content(a) == content(b)


def _budgeted(config: Config, train: Path, train_docs: List[Doc], where: str, overrides: Dict[str, Any]) -> Tuple[Config, Dict[str, Any]]:
    """The config with the step settings of its ``[budget]`` and dev set (`budget.budgeted`),
    counted on the training file (a column file through a temporary .spacy copy, as spaCy's
    reader reads only .spacy)."""
    with tempfile.TemporaryDirectory() as tmp:
        counted = config.copy()
        if not is_docbin(train):
            train = Path(tmp) / "train.spacy"
            write_docs(train, train_docs)
        counted["paths"]["train"] = str(train)
        _, derived = budgeted(counted, where=where, overrides=overrides)
    settings = {key: value for key, value in derived.items() if key.startswith("training.")}
    return with_settings(config, settings), derived


def _corpus_size(interpolated: Config, key: str) -> int:
    """The examples that the reader block ``key`` (a dot name) of an interpolated config yields."""
    import spacy
    from spacy.util import dot_to_object, registry

    reader = registry.resolve({"reader": dot_to_object(interpolated, key)})["reader"]
    return sum(1 for _ in reader(spacy.blank(interpolated["nlp"]["lang"])))


def _with_raw_text(config: Config, raw: Optional[PathLike], train: PathLike) -> Config:
    """The config whose ``paths.raw_text`` is the raw text, or the training file without one:
    what spacy pretrain reads."""
    config = config.copy()
    config["paths"]["raw_text"] = str(raw if raw is not None else train)
    return config


def run_recipe(
    recipe: PathLike,
    output_dir: PathLike,
    overrides: Optional[Dict[str, Any]] = None,
    *,
    pretrain: bool = True,
    self_train: Optional[bool] = None,
    teacher: Optional[PathLike] = None,
    gpu_id: int = -1,
    overwrite: bool = False,
    command: str = "recipe",
    log: Callable[[str], None] = _log,
    progress: bool = True,
) -> Dict[str, Any]:
    """Pretrain, train and self-train ``recipe`` (a recipe's name or a config file,
    `recipe_source`) with ``overrides`` into ``output_dir`` (`prepare`, then the steps of
    `train_steps`); returns its summary, plus the config's name and the raw text. Every input
    is read and checked before anything is written, removed or trained; a previous run in
    ``output_dir`` is refused, or with ``overwrite`` removed as far as its record in the
    folder goes (:mod:`spacy_auc_ner.outputs`): the user's own files there are never removed.
    A run that fails once it has claimed the folder removes what it wrote (`OutputFolder.discard`),
    so that the corrected command needs no ``overwrite``."""
    run = prepare(recipe, output_dir, overrides, pretrain=pretrain, self_train=self_train, teacher=teacher)
    if gpu_id >= 0:  # as spacy train does first; here before the folder is claimed
        import spacy

        spacy.require_gpu(gpu_id)
    out = OutputFolder(output_dir, command)
    names = [f"{DATA_DIR}/{role}.spacy" for role in run.columns]
    what = "a self-training run" if command == "self-train" else f"a {command} run"
    out.claim(names + run.steps.names(), list(run.inputs), overwrite, what)
    try:  # the folder is this run's until it ends, failed or not
        out.clear()
        for note in run.notes:
            log(note)
        for role, role_docs in run.columns.items():
            write_docs(out.record(f"{DATA_DIR}/{role}.spacy"), role_docs)
            log(f"paths.{role}: {len(role_docs)} sentences of a column file written to {Path(output_dir) / DATA_DIR / f'{role}.spacy'}")
        summary = _train_steps(out, run.config, run.steps, where=run.where, teacher=run.teacher, teacher_nlp=run.teacher_nlp, pool=run.pool,
                               gpu_id=gpu_id, log=log, progress=progress)
    except Exception:
        # a run that failed before any self-training round finished (no GPU, a transformer that
        # cannot be loaded, ...) takes back what it wrote, so that the corrected command runs
        # again without --overwrite; one with finished rounds keeps them (hours of training,
        # perhaps), as an interrupted one (Ctrl-C) does: its record lets --overwrite remove them
        if not any((Path(output_dir) / name).is_dir() for name in run.steps.names() if name.startswith("round-")):
            out.discard()
        raise
    finally:
        out.release()
    return {"config": run.where, "raw_text": run.raw_text, **summary}


def self_train(
    config: PathLike,
    output_dir: PathLike,
    overrides: Optional[Dict[str, Any]] = None,
    *,
    teacher: Optional[PathLike] = None,
    gpu_id: int = -1,
    overwrite: bool = False,
    log: Callable[[str], None] = _self_train_log,
    progress: bool = True,
) -> List[Dict[str, Any]]:
    """``spacy-auc-ner self-train``: `run_recipe` without pretraining, always self-training
    (``teacher``: a trained pipeline as round 0); returns the records of ``rounds.jsonl``."""
    summary = run_recipe(config, output_dir, overrides, pretrain=False, self_train=True, teacher=teacher, gpu_id=gpu_id,
                         overwrite=overwrite, command="self-train", log=log, progress=progress)
    return summary["rounds"]


def train_steps(
    config: Config,
    out: OutputFolder,
    *,
    where: PathLike = "the config",
    gpu_id: int = -1,
    log: Callable[[str], None] = _log,
    progress: bool = True,
) -> Dict[str, Any]:
    """Pretrain -> train -> self-train ``config`` into ``out`` as the config says: its step
    settings from its ``[budget]`` and dev set (`budgeted`), its steps (`Steps`). ``out`` is
    claimed by the caller for ``Steps.from_config(config).names()`` once every input was
    checked. Returns ``weights``, ``pretrain_seconds``, ``pretrain_sentences``,
    ``pool_sentences``, ``rounds`` (rounds.jsonl), ``chosen_round`` and ``model``; None
    (``[]``) for what did not run."""
    config, _ = budgeted(config, where=where)
    steps = Steps.from_config(config, where)
    if steps.pretrain:
        config = named_pretraining(config)  # a null component and layer named; spaCy's defaults filled in
    return _train_steps(out, config, steps, where=where, gpu_id=gpu_id, log=log, progress=progress)


def _train_steps(
    out: OutputFolder,
    config: Config,
    steps: Steps,
    *,
    where: PathLike,
    teacher: Optional[PathLike] = None,
    teacher_nlp: Optional[Language] = None,
    pool: Optional[List[PoolItem]] = None,
    gpu_id: int = -1,
    log: Callable[[str], None] = _log,
    progress: bool = True,
) -> Dict[str, Any]:
    """`train_steps` with its ``steps`` read (the pool too, ``pool``, where it was): with
    ``steps.pretrain``, spacy pretrain of the config (named by `named_pretraining`) on its
    ``[corpora.pretrain]`` into ``out/pretrain`` (``paths.raw_text``, or the training file when
    that is null) and every training from its weights; without ``steps.self_training``, one
    training; with it, round 0 (``teacher``, or the config trained) then the rounds on the pool
    (`run_rounds`), the best on dev kept."""
    from spacy.training.pretrain import pretrain as spacy_pretrain
    from spacy.util import dot_to_object

    config = config.copy()
    paths = config.interpolate()["paths"]  # what every training reads
    train = Path(paths["train"])
    out.folder.mkdir(parents=True, exist_ok=True)
    summary: Dict[str, Any] = {"weights": None, "pretrain_seconds": None, "pretrain_sentences": None, "pool_sentences": None,
                               "rounds": [], "chosen_round": None, "model": str(out.folder / "model-best")}
    if steps.pretrain:
        weights_dir = out.record(PRETRAIN_DIR)
        weights_dir.mkdir()
        pretrained = _with_raw_text(config, paths.get("raw_text"), train).interpolate()
        p = pretrained["pretraining"]
        corpus = dot_to_object(pretrained, p["corpus"])
        log(f"pretraining the encoder ({p['component']}) on [{p['corpus']}] ({corpus.get('@readers')}, {corpus.get('path')}), {p['max_epochs']} epoch(s)")
        start = time.perf_counter()
        with _epoch_bar(weights_dir / "log.jsonl", p["max_epochs"], progress):
            spacy_pretrain(pretrained, weights_dir, use_gpu=gpu_id, silent=True)
        summary["pretrain_seconds"] = time.perf_counter() - start
        summary["pretrain_sentences"] = _corpus_size(pretrained, pretrained["pretraining"]["corpus"])
        summary["weights"] = str(weights_dir / "model-last.bin")
        config["paths"]["init_tok2vec"] = summary["weights"]
        log(_pretraining_done(weights_dir / "log.jsonl", p["max_epochs"], summary["pretrain_sentences"]))
    if steps.self_training is None:
        log(f"training {where} on {train}")
        out.record(*TRAIN_DIRS)
        train_config(config, out.folder, None, gpu_id)
        out.finish()
        return summary
    items = pool if pool is not None else read_pool_config(config, where)
    records = run_rounds(out, config, where, steps.self_training, teacher=teacher, gpu_id=gpu_id, log=log, progress=progress, items=items, first_teacher=teacher_nlp)
    summary.update(rounds=records, chosen_round=kept_round(records), pool_sentences=len(items))
    out.finish()
    return summary
