"""The training budget in epochs of the user's own sentences.

spaCy's ``[training]`` counts the budget, the learn rate's schedule and the evaluation rhythm in
steps, which a config cannot derive from a training set it has not read: 210 steps are 30 epochs
of 50 sentences in batches of 8, and 70 epochs of 20. A config's ``[budget]`` block says it in
epochs (``configs/budget.cfg`` holds the settings and their defaults); the orchestrator counts
the batches of one epoch of ``[corpora.train]`` (`epoch_steps`) and writes the steps
(`step_settings`), for ``spacy-auc-ner recipe`` and the lab's cells alike (`budgeted`).

Without a dev set (:mod:`.no_dev`) the steps are one evaluation, at the last step, and no early
stopping.
"""
import json
import math
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Dict, List, Mapping, Optional, Tuple

from spacy.language import Language
from spacy.training import Example
from spacy.util import registry
from thinc.api import Config

from ..data.columns import DataError
from ..data.config_files import load_config_file
from ..data.files import PathLike
from .no_dev import has_dev
from .spacy_training import checked_block, with_settings

SETTINGS_FILE = Path(__file__).parents[1] / "configs" / "budget.cfg"
BLOCK = "budget"
# the step settings `step_settings` writes: a config with [budget] epochs >= 1 leaves them to it
STEP_KEYS = ("training.max_steps", "training.eval_frequency", "training.patience",
             "training.optimizer.learn_rate.warmup_steps", "training.optimizer.learn_rate.total_steps")


# the largest budget a run takes: a typo such as 1000000000 epochs started 4 billion steps
MAX_EPOCHS = 10_000
MAX_STEPS = 10_000_000


def _whole(value: Any, low: int) -> bool:
    return isinstance(value, int) and not isinstance(value, bool) and value >= low


CHECKS: Dict[str, Tuple[Any, str]] = {
    "epochs": (lambda v: _whole(v, 0) and v <= MAX_EPOCHS, f"must be a whole number >= 0, at most {MAX_EPOCHS:,} (0: the [training] block's own steps)"),
    "warmup": (lambda v: isinstance(v, (int, float)) and not isinstance(v, bool) and 0 <= v < 1, "must be a share in [0, 1)"),
    "eval_epochs": (lambda v: _whole(v, 1), "must be a whole number >= 1"),
    "patience_epochs": (lambda v: _whole(v, 0), "must be a whole number >= 0 (0: no early stopping)"),
}


@dataclass(frozen=True)
class Budget:
    """The ``[budget]`` block of a config, checked (`from_config`)."""

    epochs: int
    warmup: float
    eval_epochs: int
    patience_epochs: int

    @classmethod
    def from_config(cls, config: Mapping[str, Any]) -> "Budget":
        """The block's settings, with configs/budget.cfg's defaults for what it leaves out; a
        wrong one is one line naming its full key."""
        return cls(**checked_block(with_budget(config)[BLOCK], BLOCK, "the budget", CHECKS))


def with_budget(config: Mapping[str, Any]) -> Config:
    """``config`` with the ``[budget]`` settings it leaves out filled from configs/budget.cfg."""
    defaults = load_config_file(SETTINGS_FILE)
    filled = Config(config).copy()
    filled[BLOCK] = {**defaults[BLOCK], **(filled.get(BLOCK) or {})}
    return filled


def step_settings(budget: Budget, epoch_steps: int, learn_rate: Mapping[str, Any], *, dev: bool) -> Dict[str, Any]:
    """spaCy's step settings for ``budget`` when one epoch is ``epoch_steps`` batches: the budget
    ``epochs * epoch_steps`` steps, evaluation and patience in whole epochs, the learn rate's
    warm-up the ``warmup`` share of the steps and its decay over all of them (for a schedule that
    has those settings, ``learn_rate``); dev scored every ``eval_epochs`` epochs, or more often
    where that would leave the last epochs unscored. Without a dev set: one evaluation, at the last step,
    and no early stopping. Pure: the lab's tests compute it by hand."""
    if epoch_steps < 1:
        raise ValueError(f"an epoch of {epoch_steps} steps")
    max_steps = budget.epochs * epoch_steps
    # spaCy scores at the multiples of eval_frequency only: every gcd(epochs, eval_epochs)
    # epochs, the last step is one of them (2 epochs of 5 left the fifth unscored, and
    # 2 of 1 scored step 0 alone, so model-best was the untrained pipeline)
    eval_epochs = math.gcd(budget.epochs, budget.eval_epochs)
    out: Dict[str, Any] = {
        "training.max_steps": max_steps,
        "training.eval_frequency": eval_epochs * epoch_steps if dev else max_steps,
        "training.patience": budget.patience_epochs * epoch_steps if dev else 0,
    }
    if isinstance(learn_rate, Mapping):
        if "warmup_steps" in learn_rate:
            out["training.optimizer.learn_rate.warmup_steps"] = round(budget.warmup * max_steps)
        if "total_steps" in learn_rate:
            out["training.optimizer.learn_rate.total_steps"] = max_steps
    return out


def epoch_steps(config: Config, nlp: Language) -> Tuple[int, int]:
    """The batches of one epoch of the config's training corpus (``[training] train_corpus``) as
    its ``[training] batcher`` makes them, and the examples in it. For a batcher whose size grows
    (compounding.v1) this is the first epoch's count."""
    from spacy.util import dot_to_object

    interpolated = config.interpolate()
    # this block alone: resolving its section would build the dev reader too, which may read no file
    corpus = registry.resolve({"corpus": dot_to_object(interpolated, interpolated["training"]["train_corpus"])})["corpus"]
    examples: List[Example] = list(corpus(nlp))
    if not examples:
        raise DataError(f"{interpolated['paths'].get('train')}: the training corpus holds no sentence")
    batcher = registry.resolve({"batcher": dot_to_object(interpolated, "training.batcher")})["batcher"]
    return sum(1 for _ in batcher(examples)), len(examples)


def budgeted(config: Config, *, where: PathLike = "the config", overrides: Optional[Mapping[str, Any]] = None) -> Tuple[Config, Dict[str, Any]]:
    """The config with its step settings written: from ``[budget]`` when ``epochs`` >= 1 (an
    override of a step setting, ``overrides``, is refused then), and without a dev set one
    evaluation at the last step and no early stopping. Returns it (not interpolated) and what
    was derived, for the log: ``epoch_steps``, ``examples`` and the step settings."""
    import spacy

    budget = Budget.from_config(config)
    dev = has_dev(config)
    derived: Dict[str, Any]
    clash = [key for key in (overrides or {}) if key in STEP_KEYS]
    if budget.epochs >= 1 and clash:
        raise DataError(f"--{clash[0]}: [budget] epochs = {budget.epochs} sets it from the training set's size "
                        f"(give --budget.epochs, or --budget.epochs 0 to train [training]'s own steps)")
    if budget.epochs == 0:
        steps = config["training"].get("max_steps") or 0
        if _whole(steps, MAX_STEPS + 1):
            raise DataError(f"[training.max_steps] = {steps:,} is above the most a run trains, {MAX_STEPS:,} steps ({where})")
        if not dev and not _whole(steps, 1):
            # with a dev set 0 is spaCy's 'no limit' (spacy_training.TRAINING_CHECKS); without one
            # the model kept is the last step's, so the training must have a last step
            raise DataError(f"[training.max_steps]: must be 1 or more without a dev set (0, no limit, only with --paths.dev: "
                            f"the last step's model is kept), not {json.dumps(steps)}; or give [budget] epochs >= 1 ({where})")
        every = config["training"].get("eval_frequency")
        if dev and _whole(steps, 1) and _whole(every, steps + 1):
            # spaCy would score step 0 alone and keep the untrained pipeline as model-best
            derived = {"training.eval_frequency": steps}
            return with_settings(config, derived), derived
        if dev:
            return config, {}
        derived = {"training.eval_frequency": steps, "training.patience": 0}
    else:
        nlp = spacy.blank(config["nlp"]["lang"])
        n_steps, n_examples = epoch_steps(config, nlp)
        learn_rate = config["training"].get("optimizer", {}).get("learn_rate")
        derived = {"epoch_steps": n_steps, "examples": n_examples}
        if budget.epochs * n_steps > MAX_STEPS:
            raise DataError(f"[budget] epochs = {budget.epochs:,} of {n_steps} steps an epoch would train {budget.epochs * n_steps:,} steps, "
                            f"above the most a run trains, {MAX_STEPS:,} steps ({where})")
        derived.update(step_settings(budget, n_steps, learn_rate, dev=dev))
        derived["training.max_epochs"] = 0
    settings = {k: v for k, v in derived.items() if k.startswith("training.")}
    return with_settings(config, settings), derived


def check_no_epoch_bound(config: Mapping[str, Any]) -> None:
    """Refuse ``[training] max_epochs`` other than 0, for the recipe's spaCy trainings: spaCy
    ends its loop after that many epochs, which can come before the last step the schedule
    scores, and keeps the step-0 checkpoint as model-best while the log names the last step.
    (The lab's Hugging Face peer counts epochs in its own loop, and takes them.)"""
    max_epochs = config["training"].get("max_epochs", 0)
    if max_epochs == 0:
        return
    budget = Budget.from_config(config)
    ends = f"[budget] epochs = {budget.epochs}" if budget.epochs >= 1 else f"[training.max_steps] = {json.dumps(config['training'].get('max_steps'))}"
    raise DataError(f"[training.max_epochs] = {json.dumps(max_epochs)}: the recipe counts its training once, by {ends}, and an epoch bound "
                    f"can end it before the last scored step, keeping an early checkpoint as model-best; leave [training.max_epochs] at 0 "
                    f"and give --budget.epochs (epochs of your training file) or, with --budget.epochs 0, --training.max_steps")


def budget_text(derived: Mapping[str, Any]) -> str:
    """One line on what `budgeted` derived, for the log."""
    if "training.max_steps" not in derived and "training.patience" not in derived:
        return f"dev scored at the last step, {derived['training.eval_frequency']}, as [training] eval_frequency would score step 0 alone"
    if "epoch_steps" not in derived:
        return f"no dev set: the model of step {derived['training.eval_frequency']} is kept"
    steps = derived["training.max_steps"]
    text = f"{derived['examples']} training examples, {derived['epoch_steps']} steps an epoch: {steps} steps"
    if "training.optimizer.learn_rate.warmup_steps" in derived:
        text += f", {derived['training.optimizer.learn_rate.warmup_steps']} of warm-up"
    if derived["training.eval_frequency"] == steps and derived["training.patience"] == 0:
        return text + "; no dev set: the last step's model is kept"
    return text + f", dev scored every {derived['training.eval_frequency']}, patience {derived['training.patience']}"
