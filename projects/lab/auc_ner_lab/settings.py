"""The settings a study varies (the training set's size, an entity type's share, missing
annotation, resampling), the spec key that lists each one's values, how those values are named
in cell ids and results, and what reports show unless a spec says otherwise: the score, and the
baseline each result is paired with."""
from typing import Dict, Optional

# setting -> the spec key holding its values (None: the values are the sizes themselves)
SETTINGS: Dict[str, Optional[str]] = {
    "lowres": None,
    "imbalance": "shares",
    "missing": "mask_p",
    "resampling": "resamplers",
}
# how a setting's value is named in cell ids and results
VALUE_NAMES = {"lowres": None, "imbalance": "share", "missing": "mask_p", "resampling": "resampler"}
# the score a study's tables show unless its spec names another (`metric:`)
DEFAULT_METRIC = "ents_seqeval_micro_f"
# what its reports pair every result with unless its spec says (`baseline:`, `baseline.Baseline`)
DEFAULT_BASELINE = "ce"
# the cell functions that train the method's own config (its recipe, layers, augmentation), as a
# plain cell does, and add a step around it; any other runner (the Hugging Face peer) trains alone
SELECTION_RUNNER = "auc_ner_lab.selection_loop:run_cell"  # the annotation loop, with its `selection:` settings
CONFIG_RUNNERS = (SELECTION_RUNNER, "auc_ner_lab.nodev_choice:run_cell", "auc_ner_lab.nodev_choice:run_held_out_cell")
