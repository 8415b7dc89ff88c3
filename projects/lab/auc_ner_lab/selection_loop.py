"""The annotation loop of issue 47 simulated on a corpus's training split: which sentences a user
at n sentences should annotate next, chosen by the model's uncertainty (``spacy-auc-ner
suggest``'s strategies) or at random, measured by the F1 of the recipe trained on them.

A lab method trained by a Python function (``runner: auc_ner_lab.selection_loop:run_cell``)
with its settings in the method entry's ``selection:`` block (`SelectionSettings`), which the
cell's key hashes. Its config is the method's as any cell has it, so that the loop trains
exactly what the method's plain cells train:

1. round 0 trains the config on the cell's draw (that of the plain cell of the same method,
   corpus, size and partition);
2. the candidates are the rest of the split, the first ``pool`` of them in the draw's seeded
   order (the order of a cell's pool, spacy_auc_ner.Pool.v1; 0: all), their gold hidden;
3. each round ranks the candidates not yet chosen by ``strategy`` with the last model (the
   library's `suggest_docs`; ``random``: a seeded shuffle, seed + round) and takes ``batch``
   of them, as ``suggest`` does (``max_similarity``, ``min_tokens``); their gold is revealed,
   and the config is trained again on the draw plus every sentence chosen so far
   (`train_with_extras`, self-training's pool the rest of the split without them);
4. the last training (draw + rounds x batch sentences) is scored on test as every cell is.

A training whose model nothing reads is not run: with ``random`` only the last one.
The row adds ``selection``: the settings, the draw, the sentences chosen in each round (indices
into the training split) with their strategy scores, tokens and gold entities, each ranking's
and each training's seconds; ``train_seconds`` is everything up to the last model.
"""
import inspect
import tempfile
import time
from pathlib import Path
from typing import Annotated, Any, ClassVar, Dict, List, Optional, Sequence, Tuple

from thinc.api import Config

from spacy_auc_ner.api import DEFAULT_MAX_SIMILARITY, STRATEGIES, suggest_docs

from .training_extras import Extra, extras_scores, file_block, train_with_extras
from .validation import expect, positive, whole

SELECTION = "selection"  # the extras key of a cell of the loop
# suggest's length guard off, as the library defines it (its signature, as spaCy reads a registered function's)
MIN_TOKENS_OFF = inspect.signature(suggest_docs).parameters["min_tokens"].default


class SelectionSettings(Extra):
    """The ``selection:`` block of a spec's method entry (module docstring)."""

    what: ClassVar[str] = "a mapping of selection settings (strategy, batch, rounds, pool, max_similarity, min_tokens)"

    strategy: Annotated[str, expect(lambda v: v in STRATEGIES, "{value} is not a strategy (" + ", ".join(STRATEGIES) + ")")]
    batch: Annotated[int, positive("whole number of sentences")] = 30  # chosen in each round
    rounds: Annotated[int, positive("whole number of rounds")] = 1
    # the candidates: the first `pool` sentences of the rest of the split in the draw's order (0: all)
    pool: Annotated[int, expect(lambda v: whole(v) and v >= 0, "{value} is not a whole number of sentences (0: all the rest)")] = 2000
    max_similarity: Annotated[float, expect(lambda v: isinstance(v, (int, float)) and not isinstance(v, bool) and 0 <= v <= 1,
                                            "{value} is not a Jaccard similarity between 0 and 1 (1: no guard)")] = DEFAULT_MAX_SIMILARITY
    # suggest's length guard: candidates of fewer tokens are skipped (the default: off)
    min_tokens: Annotated[int, positive("whole number of tokens")] = MIN_TOKENS_OFF

    def settings(self) -> Dict[str, Any]:
        """The settings, defaults filled in, but the length guard only when on: it came after the
        loop's first cells, whose keys hash their settings without it."""
        out = self.model_dump()
        if out["min_tokens"] == MIN_TOKENS_OFF:
            del out["min_tokens"]
        return out


def cell_settings(cell) -> SelectionSettings:
    """The loop's settings of ``cell`` (a `cells.Cell`), refused in one line when it has none."""
    settings = (cell.extras or {}).get(SELECTION)
    if settings is None:
        raise ValueError(f"{cell.id}: the selection loop needs the method's selection: block (strategy, batch, rounds, pool)")
    if cell.size is None:
        raise ValueError(f"{cell.id}: the selection loop starts from a draw: give the study sizes")
    return SelectionSettings(**settings)


def rest_order(n_sentences: int, size: int, seed: int) -> List[int]:
    """The split's sentences that the draw of ``size`` with ``seed`` leaves out, in the draw's
    seeded order (the order whose first ``size`` are the draw, `draw_indices`)."""
    from spacy_auc_ner.api import draw_indices

    return draw_indices(n_sentences, n_sentences, seed)[size:]


def pool_indices(rest: Sequence[int], exclude: Sequence[int] = (), limit: Optional[int] = None) -> List[int]:
    """The first ``limit`` (None: all) of ``rest`` not in ``exclude``, in corpus order (as
    ``spacy_auc_ner.Pool.v1`` reads a cell's pool: with nothing excluded, the same sentences)."""
    left = set(exclude)
    kept = [i for i in rest if i not in left]
    return sorted(kept if limit is None else kept[:limit])


def unlabeled(docs: Sequence[Any]) -> List[Any]:
    """New Docs of the tokens of ``docs``: what the model sees of a candidate (no gold)."""
    from spacy.tokens import Doc

    return [Doc(d.vocab, words=[t.text for t in d], spaces=[bool(t.whitespace_) for t in d]) for d in docs]


def choose(nlp, docs: Sequence[Any], candidates: Sequence[int], settings: SelectionSettings, seed: int) -> Tuple[List[int], List[Optional[float]]]:
    """The ``batch`` candidates (indices into ``docs``) that ``settings.strategy`` ranks first on
    the model ``nlp``, best first, and their scores (None for random), as ``suggest`` does."""
    shown = unlabeled([docs[i] for i in candidates])
    found = suggest_docs(nlp, shown, settings.batch, settings.strategy, seed=seed, max_similarity=settings.max_similarity,
                         min_tokens=settings.min_tokens, progress=False)
    return [candidates[s.pool_index] for s in found], [s.score for s in found]


def config_on(config: Config, folder: Path, docs: Sequence[Any], indices: Sequence[int], draw: int) -> Config:
    """``config`` (the cell's) training on ``docs[indices]``: the cell's own when they are its
    draw (the first ``draw`` of them and no more), else a .spacy file of them in ``folder``."""
    from spacy_auc_ner.api import write_docs

    config = config.copy()
    if len(indices) > draw:
        path = folder / "train.spacy"
        write_docs(path, [docs[i] for i in indices])
        config["corpora"]["train"] = file_block(config["corpora"]["train"])
        config["paths"]["train"] = str(path)
    return config  # train_steps writes the steps of its [budget] on these sentences


def rest_writer(docs: Sequence[Any], rest: Sequence[int], exclude: Sequence[int]):
    """The pool writer of `train_with_extras`: the rest of the split without ``exclude`` (the
    sentences chosen so far), unlabeled."""
    from spacy_auc_ner.api import write_unlabeled

    exclude = list(exclude)

    def write(path: Path, limit: Optional[int]) -> int:
        return write_unlabeled(path, [docs[i] for i in pool_indices(rest, exclude, limit)])

    return write


def run_cell(cell) -> Dict[str, Any]:
    """The loop on ``cell`` (module docstring): its last model's scores, ``extras`` and ``selection``."""
    import spacy
    from spacy.vocab import Vocab

    from spacy_auc_ner.api import draw_indices, read_docs

    from .experiment import cell_config

    settings = cell_settings(cell)
    start = time.perf_counter()
    config = cell_config(cell)
    docs = read_docs(cell.train, Vocab())
    draw = draw_indices(len(docs), cell.size, cell.seed)
    rest = rest_order(len(docs), cell.size, cell.seed)
    candidates = pool_indices(rest, limit=settings.pool or None)
    wanted = settings.rounds * settings.batch
    if len(candidates) < wanted:
        raise ValueError(f"{cell.id}: {settings.rounds} round(s) of {settings.batch} need {wanted} candidates; the rest of {cell.train} holds {len(candidates)}")
    chosen: List[int] = []
    record: Dict[str, Any] = {**settings.settings(), "candidates": len(candidates), "draw": draw, "batches": [], "trainings": []}
    with tempfile.TemporaryDirectory() as tmp:
        for k in range(settings.rounds + 1):
            last, nlp = k == settings.rounds, None
            if last or settings.strategy != "random":  # random reads no model: only the last training runs
                folder = Path(tmp) / f"training-{k}"
                folder.mkdir()
                begin = time.perf_counter()
                summary, dev_config, info = train_with_extras(cell, config_on(config, folder, docs, draw + chosen, len(draw)), folder,
                                                              rest_writer(docs, rest, chosen))
                record["trainings"].append({"sentences": len(draw) + len(chosen), "seconds": time.perf_counter() - begin})
                nlp = None if last else spacy.load(summary["model"])
            if last:
                break
            begin = time.perf_counter()
            taken = set(chosen)
            picked, scores = choose(nlp, docs, [i for i in candidates if i not in taken], settings, cell.seed + k)
            if len(picked) < settings.batch:
                raise ValueError(f"{cell.id}: round {k + 1} found {len(picked)} of {settings.batch} sentences that the diversity guard "
                                 f"(max_similarity {settings.max_similarity}) lets through")
            chosen += picked
            record["batches"].append({"selected": picked, "scores": scores, "tokens": sum(len(docs[i]) for i in picked),
                                      "entities": sum(len(docs[i].ents) for i in picked), "rank_seconds": time.perf_counter() - begin})
        train_seconds = time.perf_counter() - start
        result = extras_scores(summary, dev_config, cell.test_split())
    result.update(train_seconds=train_seconds, extras=info, selection=record)
    return result
