"""Training extras of a study method: data augmentation of its draw, and the pretraining and
self-training steps of its config, run on the rest of the training split, so that a study
measures spaCy's ``ner``, the low-resource recipes (``configs/recipes/``) and each of their
parts removed in turn on the same draws as every other method, with the same scorer.

Pretraining and self-training are config, as in ``spacy-auc-ner recipe``: a cell pretrains when
its ``[pretraining]`` block has an objective and ``max_epochs`` >= 1 (a recipe's, or a base
method's with the layer ``pretrain/characters.cfg``) and self-trains when its ``[self_training]
rounds`` is 1 or more; a spec sets them with overrides, so that a cell's key hashes the whole
procedure::

    - {name: lowres_spacy_ner_rounds1, recipe: lowres_spacy_ner, overrides: {self_training.rounds: 1}}
    - {name: ce_pretrain, base: ce, layers: [pretrain/characters.cfg], overrides: {pretraining.max_epochs: 2}}

Augmentation is a reader, so it only changes the cell's ``[corpora.train]`` block
(`augmented_block`): a method whose config wraps its corpus in ``Augmented.v1`` gets the same
wrapper around the study's draw unless the spec says ``augment: false``.

A cell with a step runs in a temporary folder with the package's orchestrator, the one of
``spacy-auc-ner recipe`` (`train_steps`), handed the cell's config with its pools: the
sentences of the training split that the draw leaves out, unannotated, the first ``limit``
in the draw's seeded order (`pool_block`, the reader ``spacy_auc_ner.Pool.v1``;
``[corpora.pool] limit`` for self-training, ``[corpora.pretrain] limit`` for pretraining,
which reads a .jsonl file; with ``pretrain_text: draw`` it reads the cell's drawn sentences
instead, as ``spacy-auc-ner recipe`` does for a user without raw text). Self-training keeps
the round with the best dev F1 on the cell's dev sample: chosen on dev, never on test. The
draw and the dev sample are read on their annotated tokens (`on_annotated_tokens`).

The row's scores add ``extras``: pool size, pretraining seconds, each round's dev F1, pseudo
entities and seconds, the chosen round; their ``train_seconds`` is everything up to the cell's
model, so that a recipe's cost compares with a plain cell's (``benchmarks/trf_recipe_cost.py``).
"""
import inspect
import tempfile
import time
from pathlib import Path
from typing import Any, Callable, ClassVar, Dict, Iterator, Optional, Tuple

from pydantic import create_model
from spacy.util import registry
from thinc.api import Config

from .validation import Section

AUGMENTED = "spacy_auc_ner.Augmented.v1"
POOL_READER = "spacy_auc_ner.Pool.v1"  # the rest of a draw's split, entities removed
# the settings of Augmented.v1 a spec may give (the wrapped corpus and the seed are the cell's)
AUGMENT_KEYS = tuple(p for p in inspect.signature(registry.readers.get(AUGMENTED)).parameters if p not in ("corpus", "seed"))


class Extra(Section):
    """The settings of one extra in a spec's method entry: ``true`` for the defaults, ``false``
    (or leaving it out) for none."""

    noun: ClassVar[str] = "setting(s)"
    what: ClassVar[str] = "a mapping of settings"

    @classmethod
    def given(cls, value: Any) -> Any:
        if value is True:
            return {}
        if value is False or value is None:
            return None
        if not isinstance(value, dict):
            raise ValueError(f"{cls.what}, true or false is expected, not {value!r}")
        return value

    def settings(self) -> Dict[str, Any]:
        """What a cell's extras hold: the settings, defaults filled in."""
        return self.model_dump()


class _Augment(Extra):
    what: ClassVar[str] = "a mapping of Augmented.v1 settings"

    def settings(self) -> Dict[str, Any]:
        return self.model_dump(exclude_unset=True)  # the reader fills the rest


# Augmented.v1's own settings and their types, read from its signature as spaCy reads a
# registered function's
AugmentSettings = create_model("AugmentSettings", __base__=_Augment, **{
    name: (p.annotation, p.default) for name, p in inspect.signature(registry.readers.get(AUGMENTED)).parameters.items() if name in AUGMENT_KEYS})


PRETRAIN_TEXTS = ("pool", "draw")  # what a cell's pretraining reads: the rest of the split, or its drawn sentences


def resolve_extras(entry, config_augment: Optional[Dict[str, Any]]) -> Dict[str, Any]:
    """The extras of a method entry as its cells hold them: ``selection`` and ``augment`` (the
    entry's; where it says nothing, those of the method's own config, `config_augment`)."""
    extras: Dict[str, Any] = {}
    if entry.selection is not None:  # the annotation loop's (selection_loop.py)
        extras["selection"] = entry.selection.settings()
    if "augment" in entry.model_fields_set:
        if entry.augment is not None:
            extras["augment"] = entry.augment.settings()
    elif config_augment is not None:
        extras["augment"] = dict(config_augment)
    return extras


def config_augment(config: Config) -> Optional[Dict[str, Any]]:
    """The Augmented.v1 settings of a config's training corpus (its seed and corpus left out),
    or None when the corpus is not wrapped."""
    block = config.get("corpora", {}).get("train", {})
    if block.get("@readers") != AUGMENTED:
        return None
    return {k: v for k, v in block.items() if k in AUGMENT_KEYS}


def augmented_block(draw: Dict[str, Any], settings: Dict[str, Any], seed: int) -> Dict[str, Any]:
    """The ``[corpora.train]`` block that augments the sentences of reader block ``draw``."""
    return {"@readers": AUGMENTED, **settings, "seed": seed, "corpus": draw}


def file_block(block: Dict[str, Any]) -> Dict[str, Any]:
    """The ``[corpora.train]`` block that reads the .spacy file ``paths.train`` on its annotated
    tokens, inside ``block``'s augmentation wrapper when it has one."""
    corpus = {"@readers": "spacy.Corpus.v1", "path": "${paths.train}", "gold_preproc": True}
    return {**block, "corpus": corpus} if block.get("@readers") == AUGMENTED else corpus


def hashable(extras: Dict[str, Any]) -> Dict[str, Any]:
    """The extras as a cell id hashes them: file paths by name only."""
    return {step: {k: (Path(v).name if k == "fragment" else v) for k, v in settings.items()} for step, settings in extras.items()}


# ---------------------------------------------------------------------------------------------
# Running a cell with extras


def _reader_docs(config: Config, dot_name: str) -> Iterator:
    """The reference Docs that the config's reader ``dot_name`` yields."""
    import spacy
    from spacy.util import resolve_dot_names

    interpolated = config.interpolate()
    (reader,) = resolve_dot_names(interpolated, [dot_name])
    nlp = spacy.blank(interpolated["nlp"]["lang"])
    return (eg.reference for eg in reader(nlp))


def pretrains(config: Config) -> bool:
    """Whether a cell's config pretrains: an objective in ``[pretraining]`` and 1 or more epochs
    (the library's rule, `spacy_auc_ner.training.pretraining.pretrains`)."""
    block = config.get("pretraining") or {}
    return bool(block.get("objective")) and (block.get("max_epochs") or 0) > 0


def self_trains(config: Config) -> bool:
    """Whether a cell's config self-trains: ``[self_training] rounds`` of 1 or more."""
    return ((config.get("self_training") or {}).get("rounds") or 0) > 0


# steps by cell key: what decides them ([pretraining], [self_training] and their overrides) is
# part of the training config the key hashes, and reading a store describes every row's cell
# (Cell.describe), which assembled its config each time: 9 of every 10 seconds of `lab.py docs`
_STEPS: Dict[str, Tuple[str, ...]] = {}


def steps(cell) -> list:
    """The steps of ``cell`` (a `spec.Cell`) that ``spacy train`` cannot do: pretrain, self_train."""
    found = _STEPS.get(cell.key)
    if found is None:
        config = cell.training_config()
        found = _STEPS[cell.key] = tuple(name for name, runs in (("pretrain", pretrains(config)), ("self_train", self_trains(config))) if runs)
    return list(found)


OBJECTIVES = {"spacy.PretrainCharacters.v1": "characters", "spacy.PretrainVectors.v1": "vectors"}  # -> configs/pretrain/<name>.cfg


def with_pretraining(config: Config) -> Config:
    """``config`` (a cell's) with its objective's fragment (``configs/pretrain/``, whose
    [corpora.pretrain] reads the cell's .jsonl pool) merged in and its own ``max_epochs`` kept,
    as the cells whose rows stand were pretrained; the orchestrator names the component."""
    from spacy.util import load_config

    from spacy_auc_ner.api import DEFAULT_CONFIGS_DIR

    block = config["pretraining"]
    objective = OBJECTIVES.get(block["objective"].get("@architectures"))
    if objective is None:
        raise ValueError(f"[pretraining.objective] {block['objective'].get('@architectures')!r} has no fragment in configs/pretrain ({', '.join(OBJECTIVES)})")
    merged = config.merge(load_config(DEFAULT_CONFIGS_DIR / "pretrain" / f"{objective}.cfg", interpolate=False))
    merged["pretraining"]["max_epochs"] = block["max_epochs"]
    return merged


def on_annotated_tokens(config: Config) -> Config:
    """``config`` whose dev corpus, when it is spaCy's ``Corpus.v1``, reads the dev sentences on
    their annotated tokens (``gold_preproc``), as LowResource.v1 and the self-training rounds
    read theirs. Corpus.v1 without gold_preproc re-tokenizes each sentence: until 2026-11-26
    the self-training cells were stopped early and scored on dev that way (29 % of CoNLL
    2003's dev sentences tokenize differently, 1-2 % of NCBI-disease's and S800's)."""
    config = config.copy()
    section, _, key = str(config["training"].get("dev_corpus", "corpora.dev")).rpartition(".")
    block = config[section][key]
    if block.get("@readers") == "spacy.Corpus.v1":
        config[section][key] = {**block, "gold_preproc": True}
    return config


PoolWriter = Callable[[Path, Optional[int]], int]  # (file, limit or None for all) -> sentences written


def run_cell_with_extras(cell, config: Optional[Config] = None, dev_sample: Optional[Dict[str, Any]] = None) -> Dict[str, Any]:
    """Pretrain and/or self-train around the training of ``cell`` (`steps`) with the package's
    `train_steps`, then score it like any cell, adding the row's ``extras``. ``config``: the
    cell's own unless a cell function changed it; ``dev_sample``: a reader block to take the dev
    scores on instead of the config's dev corpus (`experiment.trained_scores`)."""
    from .experiment import cell_config

    if cell.size is None:
        raise ValueError("pretraining and self-training use the rest of the training split as their pool: give the study sizes")
    start = time.perf_counter()
    with tempfile.TemporaryDirectory() as tmp:  # train_steps writes the steps of its [budget] on the draw and dev set
        summary, dev_config, info = train_with_extras(cell, cell_config(cell) if config is None else config, Path(tmp))
        train_seconds = time.perf_counter() - start
        result = extras_scores(summary, dev_config, cell.test_split(), dev_sample)
    result.update(train_seconds=train_seconds, extras=info)
    return result


def extras_scores(summary: Dict[str, Any], dev_config: Config, test: Optional[str], dev_sample: Optional[Dict[str, Any]] = None) -> Dict[str, Any]:
    """The scores of `train_with_extras`' model (`experiment.trained_scores`, on `dev_sample`
    when given), its ``dev_score`` that of the self-training round kept (when it self-trained)."""
    from .experiment import trained_scores

    result = trained_scores(summary["model"], dev_config, test, dev_sample)
    if summary["rounds"]:
        chosen = summary["rounds"][summary["chosen_round"]]["dev"]
        result["dev_score"] = None if chosen is None else chosen["ents_f"]
    return result


def pool_block(cell, limit: Optional[int]) -> Dict[str, Any]:
    """The reader of ``cell``'s pool: the rest of its training split, entities removed, the first
    ``limit`` sentences in the draw's seeded order (None: all; the smaller within the larger)."""
    return {"@readers": POOL_READER, "path": str(cell.train), "n": cell.size, "seed": cell.seed, "limit": limit or 0}


def train_with_extras(cell, config: Config, tmp: Path, pool: Optional[PoolWriter] = None) -> Tuple[Dict[str, Any], Config, Dict[str, Any]]:
    """Train ``config`` (``cell``'s) in the folder ``tmp`` with `train_steps`, pretraining and
    self-training as it says, on the pools of `pool_block` or what ``pool`` writes for each
    step (the selection loop's). Returns `train_steps`' summary (its ``model`` lives in
    ``tmp``), the config that model's dev scores read and the row's ``extras``."""
    from spacy_auc_ner.api import OutputFolder, train_steps, write_unlabeled

    from .experiment import quiet

    written_pool = pool is not None
    if pool is None:
        def pool(path: Path, limit: Optional[int]) -> int:
            import spacy

            settings = {k: v for k, v in pool_block(cell, limit).items() if k != "@readers"}
            examples = registry.readers.get(POOL_READER)(**settings)(spacy.blank(config["nlp"]["lang"]))
            return write_unlabeled(path, (eg.reference for eg in examples))

    pretrain, self_train = pretrains(config), self_trains(config)
    draw_text = cell.pretrain_text == "draw"
    info: Dict[str, Any] = {}
    limits = {block: config["corpora"][block].get("limit") or None for block in ("pool", "pretrain") if block in config["corpora"]}
    # each step's pool: the first `limit` sentences of the same order (the smaller within the larger)
    pools = [("pool", ".spacy")] if self_train and written_pool else []
    pools += [("pretrain", ".jsonl")] if pretrain and not draw_text else []
    written = [pool(tmp / f"pool{suffix}", limits[block]) for block, suffix in pools]
    if pretrain:
        raw_text = tmp / "pool.jsonl"
        if draw_text:  # the drawn sentences as they are, not augmented
            raw_text = tmp / "draw.jsonl"
            drawn = config.copy()
            if drawn["corpora"]["train"].get("@readers") == AUGMENTED:
                drawn["corpora"]["train"] = drawn["corpora"]["train"]["corpus"]
            write_unlabeled(raw_text, _reader_docs(drawn, "corpora.train"))
        config = with_pretraining(config)
        config["paths"]["raw_text"] = str(raw_text)
    if self_train:
        config = on_annotated_tokens(config)
        if written_pool:
            config["corpora"]["pool"]["path"] = str(tmp / "pool.spacy")
        else:
            config["corpora"]["pool"] = pool_block(cell, limits["pool"])
    else:  # the library gives a config without the block configs/self_training.cfg's rounds
        config["self_training"] = {"rounds": 0}
    with quiet():
        summary = train_steps(config, OutputFolder(tmp / "steps", "study cell"), gpu_id=cell.gpu_id, log=lambda text: None, progress=False)
    if self_train and not written_pool:
        written.append(summary["pool_sentences"])
    if written:
        info["pool_sentences"] = max(written)
    if summary["pretrain_seconds"] is not None:
        info["pretrain_seconds"] = summary["pretrain_seconds"]
    if pretrain and draw_text:
        info["pretrain_sentences"] = summary["pretrain_sentences"]
    if summary["rounds"]:
        info["rounds"] = [{"round": r["round"], "dev_f": (r["dev"] or {}).get("ents_f"), "kept_entities": r["kept_entities"],
                           "pseudo_sentences": r["pseudo_sentences"], "label_seconds": r["label_seconds"],
                           "train_seconds": r["train_seconds"]} for r in summary["rounds"]]
        info["chosen_round"] = summary["chosen_round"]
        info["tokens"] = "annotated"  # rows without it re-tokenized their draw and dev sample (on_annotated_tokens)
    # scored on the dev set early stopping used
    return summary, config, info
