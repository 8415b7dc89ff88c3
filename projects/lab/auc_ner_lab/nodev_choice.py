"""Settings of the no-dev recipe chosen leaving one corpus out (issue 44 points 1 and 2).

A user with only their n sentences keeps the last step of a fixed schedule, so the schedule
itself (how many epochs, or a held-out share of their sentences) has to be chosen in the lab,
on corpora that are not the user's. `run_cell` trains as that user does (``corpora.dev`` is
NoDev.v1: the last step kept) and scores the model on test and on a sample of the dev split
its training never saw (200 sentences, seed 0: the sample campaign_trf_recipe selects on).
`run_held_out_cell` sets a share of the draw aside (`HELD_OUT_SHARE`, the last of its seeded
order) and keeps the checkpoint best on it. `leave_one_corpus_out` chooses, for each corpus,
the setting whose cells on the other corpora have the best mean dev score on the lab's sample.
"""
from typing import Any, Dict, Iterator, Mapping, Sequence

from spacy.util import registry

from spacy_auc_ner.api import has_dev

from .execution import StudyError
from .sets import sample_config
from .tuning import Choice, choices_leaving_out

DEV_SAMPLE = 200  # sentences of the dev split, as campaign_trf_recipe's dev_size
DEV_SEED = 0  # its draw
HELD_OUT_SHARE = 0.25  # of the user's n sentences, set aside to choose the checkpoint on
PARTS = ("train", "held_out")


@registry.readers("auc_ner_lab.Share.v1")
class Share:
    """One part of the examples of the reader ``corpus``, in its order: ``held_out`` the last
    ``share`` of them (at least one), ``train`` the others. Over a LowResource.v1 draw, whose
    order is seeded, the held-out sentences are a random share of the draw."""

    def __init__(self, corpus, share: float, part: str):
        if not 0 < share < 1 or part not in PARTS:
            raise ValueError(f"[auc_ner_lab.Share.v1] share {share!r} must be in (0, 1) and part {part!r} one of {PARTS}")
        self.corpus, self.share, self.part = corpus, share, part

    def __call__(self, nlp) -> Iterator:
        examples = list(self.corpus(nlp))
        cut = len(examples) - max(1, round(self.share * len(examples)))
        if cut < 1:
            raise ValueError(f"[auc_ner_lab.Share.v1] {len(examples)} sentences leave none to train on beside a held-out share")
        yield from examples[:cut] if self.part == "train" else examples[cut:]


def run_cell(cell) -> Dict[str, Any]:
    """Train the cell's config without a dev set, score the model it keeps on test and on the
    dev sample (its ``dev_scores``)."""
    from .experiment import cell_config

    config = cell_config(cell)
    if has_dev(config):
        raise StudyError(f"{cell.id}: nodev_choice cells train without a dev set; give the spec overrides "
                         "corpora.dev: {'@readers': 'spacy_auc_ner.NoDev.v1'}")
    return _trained_and_scored(cell, config)


def run_held_out_cell(cell) -> Dict[str, Any]:
    """Train the cell's config on its draw less a held-out share, choosing the checkpoint on that
    share (its [budget]'s evaluation and patience), then score as `run_cell` does."""
    from .experiment import cell_config

    config = cell_config(cell)
    draw = config["corpora"]["train"]
    for role, part in (("train", "train"), ("dev", "held_out")):
        config["corpora"][role] = {"@readers": "auc_ner_lab.Share.v1", "corpus": dict(draw), "share": HELD_OUT_SHARE, "part": part}
    return _trained_and_scored(cell, config)


def _trained_and_scored(cell, config) -> Dict[str, Any]:
    """`config` trained (through the recipe's steps when it has any, as study cells do), scored
    on test and on the lab's dev sample."""
    from .experiment import train_and_evaluate
    from .training_extras import run_cell_with_extras, steps

    sample = sample_config(str(cell.dev), DEV_SAMPLE, DEV_SEED)
    if steps(cell):
        return run_cell_with_extras(cell, config, dev_sample=sample)
    return train_and_evaluate(config, test=cell.test_split(), gpu_id=cell.gpu_id, dev_sample=sample)


def leave_one_corpus_out(rows: Sequence[Mapping[str, Any]], methods: Sequence[str], corpora: Sequence[str], metric: str) -> Dict[str, Choice]:
    """For each of `corpora`, the method of `methods` whose latest `rows` on the other corpora
    have the best mean dev `metric` (`tuning.choices_leaving_out`); a method missing a row
    there is not a candidate."""
    by_cell = {(r["method"], r["corpus"], r["size"], r["partition"]): r for r in rows}
    draws = sorted({key[1:] for key in by_cell})

    def rows_of(point, held_out):
        return [by_cell.get((point["method"], *draw)) for draw in draws if draw[0] != held_out]

    return choices_leaving_out(corpora, [{"method": m} for m in methods], rows_of, metric)
