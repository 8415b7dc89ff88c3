"""Settings of the no-dev recipe chosen leaving one corpus out (issue 44 points 1 and 2).

A user with only their n sentences keeps the last step of a fixed schedule, so the schedule
itself (how many epochs, whether the weights are averaged) has to be chosen in the lab, on
corpora that are not the user's. The cells of ``studies/campaign_trf_budget.yaml`` train as
that user does (``corpora.dev`` is NoDev.v1: the whole budget, the last step kept), one method
per setting. `run_cell` then scores the kept model on a sample of the dev split its training
never saw (200 sentences, seed 0: the sample campaign_trf_recipe selects on) and on test.
`leave_one_corpus_out` chooses, for each corpus, the setting whose cells on the other corpora
have the best mean dev score; test scores are never read to choose.
"""
from typing import Any, Dict, Mapping, Sequence

from spacy_auc_ner.api import has_dev

from .execution import StudyError
from .sets import sample_config
from .tuning import Choice, choose

DEV_SAMPLE = 200  # sentences of the dev split, as campaign_trf_recipe's dev_size
DEV_SEED = 0  # its draw


def run_cell(cell) -> Dict[str, Any]:
    """Train the cell's config without a dev set, score the model it keeps on test and on the
    dev sample (its ``dev_scores``)."""
    from .experiment import cell_config, train_and_evaluate

    config = cell_config(cell)
    if has_dev(config):
        raise StudyError(f"{cell.id}: nodev_choice cells train without a dev set; give the spec overrides "
                         "corpora.dev: {'@readers': 'spacy_auc_ner.NoDev.v1'}")
    sample = sample_config(str(cell.dev), DEV_SAMPLE, DEV_SEED)
    return train_and_evaluate(config, test=cell.test_split(), gpu_id=cell.gpu_id, dev_sample=sample)


def leave_one_corpus_out(rows: Sequence[Mapping[str, Any]], methods: Sequence[str], corpora: Sequence[str], metric: str) -> Dict[str, Choice]:
    """For each of `corpora`, the method of `methods` whose rows on the other corpora (every
    size and partition; `rows`: the latest row of each cell) have the best mean dev `metric`
    (`tuning.choose`: the first of `methods` on a tie). A method missing a row on the other
    corpora is not a candidate."""
    chosen = {}
    for held_out in corpora:
        others = [r for r in rows if r["corpus"] != held_out]
        cells = sorted({(r["corpus"], r["size"], r["partition"]) for r in others})
        by_method = {(r["method"], r["corpus"], r["size"], r["partition"]): r for r in others}
        trial_rows = [[by_method.get((m, *cell)) for cell in cells] for m in methods]
        chosen[held_out] = choose([{"method": m} for m in methods], trial_rows, metric)
    return chosen
