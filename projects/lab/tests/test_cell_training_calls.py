"""What a study cell with training extras hands to spaCy is frozen: ~900 committed rows were
trained by it and their cells' keys must keep meaning the same training.

Every cell below runs through the real runner with spaCy's training stood in for: the
stand-ins record each config handed to ``spacy pretrain`` and to ``spacy train``
(``init_nlp``), then build the pipeline untrained (the seeded initial weights, no
pretrained weights loaded), so that labelling, pool files and scores are reproducible
without training. A path in a config is recorded as the content of its file (``.spacy``:
the words and entity tags of every sentence), so that temporary folders and file names may
change, the files' contents may not.

``data/cell_training_calls.json`` was written by ``REGENERATE_CELL_CALLS=1 pytest`` on
commit c5d57ee, before the cell ran its steps through the package's
``spacy_auc_ner.training.recipe.train_steps``, when the methods below gave pretraining and
self-training as extras (``pretrain: {epochs: 1, pool: 4}``, ``self_train: {threshold: 0.0,
pool: 3}``, ...; config since 2026-11-26); regenerate it only for a change meant to change
what cells train, and then their keys with it, or, for a fix of the code they ran, with the rows
it supersedes named in `store.superseded`. Regenerated once so far, for such a fix (2026-11-26):
the self-training cells' readers gained ``gold_preproc = true`` (their draw, pseudo-labelled
sentences and dev sample read on the annotated tokens, not re-tokenized) and their rows
``extras.tokens``; nothing else differed. The blocks spaCy never reads are left out of the
recorded configs (`_read_by_spacy`). Since 2026-11-27 each call also records what its corpora
yield (``reads``: every example's tokens and tags, hashed; `_reads`), added to the record
without changing any other entry, so that a change of readers (a file replaced by the reader
that yields its sentences) shows whether spaCy still gets the same examples.
"""
import hashlib
import json
import os
import sys
from pathlib import Path

import pytest
import spacy
from spacy.tokens import DocBin

from auc_ner_lab.execution import run_cell
from auc_ner_lab.spec import parse_spec

ROOT = Path(__file__).parents[1]
CONFIGS = ROOT / "configs"
GOLDEN = Path(__file__).parent / "data" / "cell_training_calls.json"
sys.path.insert(0, str(Path(__file__).parent))
from lab_data import write_toy_corpus  # noqa: E402

FAST = {"training.max_steps": 4, "training.eval_frequency": 2}
LIMITS = {"corpora.pretrain.limit": 4, "corpora.pool.limit": 3}
METHODS = {
    # spaCy's ner recipe: augmentation, pretraining on the pool, one self-training round
    "recipe_ner": {"recipe": "lowres_spacy_ner", "augment": {"copies": 1},
                   "overrides": {**LIMITS, "pretraining.max_epochs": 1, "self_training.rounds": 1, "self_training.threshold": 0.0}},
    # the package's head: pretraining on the draw, two rounds
    "recipe_head": {"recipe": "lowres_best", "pretrain_text": "draw",
                    "overrides": {"corpora.pool.limit": 3, "pretraining.max_epochs": 1, "self_training.threshold": 0.0}},
    # pretraining alone: the cell trains once from the weights
    "ce_pretrain": {"base": "ce", "layers": ["pretrain/characters.cfg"], "overrides": {"corpora.pretrain.limit": 4, "pretraining.max_epochs": 1}},
    # no pool step: the plain path of a cell (augmentation is a reader, so it is a plain cell)
    "crf_augment": {"base": "crf", "augment": {"copies": 1}},
    # self-training alone, no augmentation
    "crf_self_train": {"base": "crf", "layers": ["self_training.cfg"],
                       "overrides": {"corpora.pool.limit": 3, "self_training.rounds": 1, "self_training.threshold": 0.0,
                                     "self_training.low_confidence": "outside"}},
}


def _file_content(path: Path) -> str:
    """A file as the test compares it: a .spacy file's sentences (words, spaces, entity
    tags with missing ones as '-'), any other file's bytes; hashed."""
    if path.suffix == ".spacy":
        docs = DocBin().from_disk(path).get_docs(spacy.blank("en").vocab)
        text = json.dumps([[[t.text, t.whitespace_, t.ent_iob_ and f"{t.ent_iob_}-{t.ent_type_}" or "-"] for t in doc] for doc in docs])
        data = text.encode("utf8")
    else:
        data = path.read_bytes()
    return f"<{path.suffix} file {hashlib.sha1(data).hexdigest()[:16]}>"


def _normal(value):
    """A config (or any value in it) with every absolute path replaced by its content."""
    if isinstance(value, dict):
        return {k: _normal(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_normal(v) for v in value]
    if isinstance(value, str) and value.startswith(os.sep):
        path = Path(value)
        return _file_content(path) if path.is_file() else f"<no file: {path.name}>"
    return value


def _read_by_spacy(config) -> dict:
    """The config without what spaCy never reads, recorded since the self-training settings
    became config blocks (2026-11-26): ``[self_training]``, ``[corpora.pool]`` (spacy train
    makes every reader of [corpora] and reads only its train and dev corpora; spacy pretrain
    only its own) and a null ``paths.raw_text`` (a variable nothing else names)."""
    config = dict(config)
    config.pop("self_training", None)
    config["corpora"] = {k: v for k, v in config["corpora"].items() if k != "pool"}
    if config["paths"].get("raw_text", "") is None:
        config["paths"] = {k: v for k, v in config["paths"].items() if k != "raw_text"}
    return config


def _tags(doc) -> list:
    return [[t.text, t.whitespace_, t.ent_iob_ and f"{t.ent_iob_}-{t.ent_type_}" or "-"] for t in doc]


def _reads(config, keys, nlp) -> dict:
    """What each corpus of ``config`` named by ``keys`` (dot names) yields, hashed: every
    example's predicted tokens and reference tokens and entity tags, in order. The configs
    record how a corpus is read (which reader, which file); this, what it gives spaCy, so
    that a change of readers that hands spaCy the same examples shows as such."""
    from spacy.util import dot_to_object, registry
    from thinc.api import Config

    interpolated = Config(config).interpolate()
    out = {}
    for key in keys:
        reader = registry.resolve({"reader": dot_to_object(interpolated, key)})["reader"]
        rows = [[_tags(eg.predicted), _tags(eg.reference)] for eg in reader(nlp)]
        out[key] = f"<{len(rows)} examples {hashlib.sha1(json.dumps(rows).encode('utf8')).hexdigest()[:16]}>"
    return out


@pytest.fixture
def recorded(monkeypatch):
    """Stand-ins for spacy pretrain, init_nlp and the training loop; the list of calls."""
    from spacy.training import initialize, loop, pretrain

    calls = []
    real_init = initialize.init_nlp

    def fake_pretrain(config, output_dir, resume_path=None, epoch_resume=None, use_gpu=-1, silent=True, skip_last=False):
        calls.append({"pretrain": _normal(_read_by_spacy(config)), "use_gpu": use_gpu,
                      "reads": _reads(config, [config["pretraining"]["corpus"]], spacy.blank(config["nlp"]["lang"]))})
        (Path(output_dir) / "model-last.bin").write_bytes(b"pretrained weights")

    def fake_init(config, *, use_gpu=-1):
        call = {"train": _normal(_read_by_spacy(config)), "use_gpu": use_gpu}
        calls.append(call)
        untrained = config.copy()
        untrained["paths"]["init_tok2vec"] = None
        nlp = real_init(untrained, use_gpu=use_gpu)
        call["reads"] = _reads(config, [config["training"]["train_corpus"], config["training"]["dev_corpus"]], nlp)
        return nlp

    def fake_loop(nlp, output_path=None, *, use_gpu=-1, stdout=None, stderr=None):
        for name in ("model-best", "model-last"):
            nlp.to_disk(Path(output_path) / name)
        return nlp, Path(output_path) / "model-best"

    monkeypatch.setattr(pretrain, "pretrain", fake_pretrain)
    monkeypatch.setattr(initialize, "init_nlp", fake_init)
    monkeypatch.setattr(loop, "train", fake_loop)
    return calls


def _run(method: str, tmp_path: Path, calls: list) -> dict:
    corpora = write_toy_corpus(tmp_path / "corpus")
    spec = parse_spec(
        {"name": "calls", "corpora": ["toy"], "sizes": [5], "partitions": 1,
         "methods": [{"name": method, **METHODS[method]}], "overrides": FAST},
        corpora_dir=corpora, configs_dir=CONFIGS,
    )
    (cell,) = spec.cells()
    scores = run_cell(cell)
    extras = scores.pop("extras", {})
    rounds = [{k: v for k, v in r.items() if "seconds" not in k} for r in extras.pop("rounds", [])]
    kept = {k: v for k, v in scores.items() if "second" not in k}
    return {
        # the key its rows are stored under: a hash of what it trains (until 2026-11-27 the id the
        # rows had when they were trained, computed by the migration code deleted then)
        "key": cell.key,
        "calls": calls,
        "extras": {**{k: v for k, v in extras.items() if "second" not in k}, "rounds": rounds},
        "scores": json.loads(json.dumps(kept)),
    }


def _kind(call: dict) -> str:
    """"pretrain" or "train": which of spaCy's functions a recorded call is (the record is
    read back with sorted keys, so not necessarily its first)."""
    return "pretrain" if "pretrain" in call else "train"


@pytest.mark.parametrize("method", sorted(METHODS))
def test_a_cell_hands_spacy_what_it_handed_when_its_rows_were_trained(method, tmp_path, recorded):
    got = _run(method, tmp_path, recorded)
    golden = json.loads(GOLDEN.read_text(encoding="utf8")) if GOLDEN.exists() else {}
    if os.environ.get("REGENERATE_CELL_CALLS") == "1":
        golden[method] = got
        GOLDEN.parent.mkdir(exist_ok=True)
        GOLDEN.write_text(json.dumps(golden, indent=1, sort_keys=True) + "\n", encoding="utf8")
    expected = golden[method]
    assert got["key"] == expected["key"]
    assert [_kind(c) for c in got["calls"]] == [_kind(c) for c in expected["calls"]]
    for i, (call, old) in enumerate(zip(got["calls"], expected["calls"])):
        assert call == old, f"call {i} ({_kind(old)})"
    assert got["extras"] == expected["extras"]
    assert got["scores"] == expected["scores"]
