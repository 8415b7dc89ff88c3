"""How a study's results are laid out in its report's tables and plots: one panel per corpus
(lowres) or per corpus and size (the other settings), a column per size or setting value, and
the setting's axis label."""
from collections import OrderedDict
from typing import Any, List, Optional, Sequence

from .aggregate import MethodResult

AXIS_LABELS = {
    "lowres": "training set size (sentences)",
    "imbalance": "entity tokens in the training set (%)",
    "missing": "probability an entity annotation is removed",
    "resampling": "resampling method",
}


def column_name(setting: str, size: Optional[int], value: Any) -> str:
    if setting == "lowres":
        return "all" if size is None else str(size)
    if setting == "imbalance":
        return f"{value * 100:g}%"
    if setting == "missing":
        return f"p={value:g}"
    return str(value)


def by_panel(results: Sequence[MethodResult]) -> "OrderedDict[tuple, List[MethodResult]]":
    """Results by panel: corpus (lowres) or corpus x size (the other settings)."""
    panels: "OrderedDict[tuple, List[MethodResult]]" = OrderedDict()
    for r in results:
        key = (r.corpus, r.setting) if r.setting == "lowres" else (r.corpus, r.setting, r.size)
        panels.setdefault(key, []).append(r)
    return panels


def panel_title(key: tuple) -> str:
    if len(key) == 2:
        return key[0]
    corpus, _, size = key
    return corpus if size is None else f"{corpus}, n={size}"
