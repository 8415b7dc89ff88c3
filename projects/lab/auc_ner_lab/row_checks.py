"""What a readable results row is (`row_problem`), which the results store asks of every file
it reads: a row is read only when it is what its folder says (its ``key`` is its folder's name,
its ``cell_id`` names its corpus, method, size and partition and the key it was written for;
read through a spec, what the key hashes is that of the spec's cell of that key, and so is its
method where no cell_id vouches for the key, an imported or rekeyed row, unless the spec has no
method of the row's name) and its fields are well formed: every score a finite number in
[0, 1], timings and counts finite and not negative.
"""
import json
import math
from typing import Any, Iterable, Optional

from spacy_auc_ner.api import METRICS

UNMATCHED = "unmatched"  # the folder of rows of the old format that matched no cell: key None
_KEY_CHARS = set("0123456789abcdef")
_KEY_LENGTH = 16
STATUSES = ("ok", "failed")
# numbers in `scores` that are timings or counts, not fractions: finite and >= 0
_UNBOUNDED_SUFFIXES = ("_seconds", "_words", "_per_second")


def is_key(name: str) -> bool:
    """Whether `name` is a cell key as `cells.cell_key` writes it (16 hexadecimal digits)."""
    return len(name) == _KEY_LENGTH and set(name) <= _KEY_CHARS


def _number_problem(where: str, value: Any, bounded: bool = True, required: bool = False) -> Optional[str]:
    if isinstance(value, bool) or (required and not isinstance(value, (int, float))):
        return f"{where} is {json.dumps(value)}, not a number"
    if not isinstance(value, (int, float)):
        return None
    if not math.isfinite(value):
        return f"{where} is {value}, not a finite number"
    if bounded and not 0.0 <= value <= 1.0:
        return f"{where} is {value:g}, not a score in [0, 1]"
    if not bounded and value < 0:
        return f"{where} is {value:g}, below 0"
    return None


def scores_problem(scores: Any) -> Optional[str]:
    """Why a row's ``scores`` cannot be read (None when they can): not a mapping, or a score (at
    its top level, in ``dev_scores``, an ``ents_per_type`` p, r or f) not a finite number in
    [0, 1], or a timing or count negative or not finite. The scorer's scores (`METRICS`) and
    p, r, f must be numbers where present: the scorer never writes null or a string."""
    if not isinstance(scores, dict):
        return f"'scores' is {json.dumps(scores) if scores is None else 'a ' + type(scores).__name__}, not a mapping"
    for name in ("dev_scores", "ents_per_type"):
        if scores.get(name) is not None and not isinstance(scores[name], dict):
            return f"'scores.{name}' is a {type(scores[name]).__name__}, not a mapping"
    for name, value in scores.items():
        if name == "dev_scores" and isinstance(value, dict):
            found = [_number_problem(f"'scores.dev_scores.{k}'", v, required=k in METRICS) for k, v in value.items()]
        elif name == "ents_per_type" and isinstance(value, dict):
            found = [_number_problem(f"'scores.ents_per_type.{t}.{k}'", v, required=True) for t, prf in value.items()
                     if isinstance(prf, dict) for k, v in prf.items() if k in ("p", "r", "f")]
        else:
            found = [_number_problem(f"'scores.{name}'", value, bounded=not str(name).endswith(_UNBOUNDED_SUFFIXES),
                                     required=name in METRICS)]
        why = next((w for w in found if w is not None), None)
        if why is not None:
            return why
    return None


def _int_or_none(value: Any) -> bool:
    return value is None or (isinstance(value, int) and not isinstance(value, bool) and value >= 0)


def row_problem(row: Any, folder: Optional[str] = None, cell=None, methods: Iterable[str] = ()) -> Optional[str]:
    """Why `row` is not a readable results row (None when it is; module docstring); `folder`:
    its folder's name, `cell`: the spec's cell of its key, `methods`: the spec's methods."""
    if not isinstance(row, dict):
        return f"a {type(row).__name__}, not a row"
    if row.get("status") not in STATUSES:
        return f"'status' is {json.dumps(row.get('status'))}, not one of {', '.join(STATUSES)}"
    for name in ("cell_id", "corpus", "method", "setting"):
        if not isinstance(row.get(name), str) or not row[name]:
            return f"no '{name}'" if name not in row else f"'{name}' is {json.dumps(row[name])}, not a name"
    for name in ("size", "partition"):
        if not _int_or_none(row.get(name)):
            return f"'{name}' is {json.dumps(row.get(name))}, not a whole number"
    if row.get("size") == 0:
        return "'size' is 0"
    value = row.get("value")
    if isinstance(value, bool) or not (value is None or isinstance(value, (int, float, str))):
        return f"'value' is {json.dumps(value)}, not a number or a name"
    for name in ("tuning", "tuned", "imported"):
        if row.get(name) is not None and not isinstance(row[name], dict):
            return f"'{name}' is a {type(row[name]).__name__}, not a mapping"
    rekeyed = row.get("rekeyed_from")
    if rekeyed is not None and not (isinstance(rekeyed, list) and rekeyed and all(isinstance(k, str) and is_key(k) for k in rekeyed)):
        return f"'rekeyed_from' is {json.dumps(rekeyed)}, not a list of cell keys"
    if row.get("imported") is not None and not _int_or_none(row["imported"].get("line")):
        return f"'imported.line' is {json.dumps(row['imported'].get('line'))}, not a line number"
    seconds = row.get("seconds")
    if seconds is not None and (why := _number_problem("'seconds'", seconds, bounded=False, required=True)):
        return why
    if folder is not None:
        own = None if folder == UNMATCHED else folder
        if row.get("key") != own:
            return (f"its key {json.dumps(row.get('key'))} is not its folder's ({folder}): a row copied or moved "
                    "into another cell's folder is not read; put it back in its own folder")
    label, sep, digest = row["cell_id"].partition("#")
    label = label.split("/")
    if sep and len(label) > 2:  # an id as the lab writes them (`cells.cell_label`): corpus/method/n=.../p0#...
        if label[:2] != [row["corpus"], row["method"]]:
            return f"its cell_id {row['cell_id']!r} names another corpus or method than its fields ({row['corpus']}, {row['method']})"
        if row["size"] is not None and f"n={row['size']}" not in label:
            return f"its cell_id {row['cell_id']!r} names another size than its 'size' ({row['size']})"
        if row["partition"] is not None and label[-1] != f"p{row['partition']}":
            return f"its cell_id {row['cell_id']!r} names another partition than its 'partition' ({row['partition']})"
        # the key it was written for, which the digest of an id of the lab's names (`Cell.id`: 10
        # hexadecimal digits); an imported row's id is of the old format, which hashed names
        written = (row.get("rekeyed_from") or [row.get("key")])[0]
        if written and not row.get("imported") and len(digest) == 10 and set(digest) <= _KEY_CHARS and digest != written[:10]:
            where = "its folder's" if written == row["key"] else "the first it was rekeyed from"
            return (f"its cell_id {row['cell_id']!r} was written for another key than {where} ({written}): a row copied "
                    "or moved into another cell's folder is not read; put it back in its own folder")
    if cell is not None:
        described = cell.describe()
        # what the key hashes (not the method's name: a method renamed in a spec keeps its rows)
        names = ["corpus", "setting", "size", "value", "partition", "seed", "tuning", "runner", "scored_on", "extras"]
        if (row.get("imported") or row.get("rekeyed_from")) and row["method"] in methods:
            names.append("method")  # no cell_id vouches for its key: another method of the spec is that method's row
        for name in names:
            if row.get(name) != described.get(name):
                return (f"its {name} ({json.dumps(row.get(name))}) is not that of the cell of its key "
                        f"({json.dumps(described.get(name))}, {cell.id})")
    if "scores" in row:  # an ok row without scores has no score to report (aggregate says so)
        return scores_problem(row["scores"])
    return None
