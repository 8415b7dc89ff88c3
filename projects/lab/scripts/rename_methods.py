"""Rename methods in a study's results file after its spec renamed them, keeping every score.

A cell id hashes the method's name, config file name and extras (projects/lab/auc_ner_lab/spec.py),
so when a spec gives a method a new name (or its config file a new name, content unchanged),
the rows already trained no longer match and the study would train them again. This rewrites
each such row's identity (cell_id, method, config, overrides, extras) from the renamed cell of
the spec, with the same corpus, size, value and partition (or tuning trial), and leaves every
other row byte for byte as it was.

It is only true when the renamed cell trains what the row trained: a test must show that for
each rename (tests/test_study_training_extras.py does for the recipe's). It refuses, changing
nothing, when an old method has no rows, a row has no renamed cell in the spec, or a new id is
already in the file; the file is replaced only once all rows are rewritten, and the old one is
kept beside it (<file>.before-rename).

    python scripts/rename_methods.py results/lowres_recipe.jsonl studies/lowres_recipe.yaml \\
        spacy_ner_extras=recipe recipe=crf_auc_extras ...
"""
import json
import shutil
import sys
from pathlib import Path
from typing import Dict, List, Sequence

from auc_ner_lab.runner import row_identity
from auc_ner_lab.spec import load_spec


# what a rename changes: the fields that name the method and what it trains
IDENTITY_KEYS = ("cell_id", "method", "config", "overrides")


def _key(corpus, size, value, partition, tuning) -> str:
    return json.dumps([corpus, size, value, partition, tuning], sort_keys=True, default=str)


def rename(lines: Sequence[str], cells: Sequence, renames: Dict[str, str], where: str) -> List[str]:
    """The results ``lines`` with the rows of each old method in ``renames`` given the identity
    of the spec's cell of its new name (``cells``: the spec's cells)."""
    by_key = {(c.method, _key(c.corpus, c.size, c.value, c.partition, c.tuning)): c for c in cells}
    rows = []
    for lineno, line in enumerate(lines, 1):
        try:
            rows.append(json.loads(line))
        except json.JSONDecodeError:
            raise SystemExit(f"Error: {where}:{lineno}: not a JSON row (a study still writing to it? stop it first)") from None
    for old, new in renames.items():
        if not any(r["method"] == old for r in rows):
            raise SystemExit(f"Error: {where}: no rows of method {old!r} to rename")
        if not any(c.method == new for c in cells):
            raise SystemExit(f"Error: {where}: the spec has no method {new!r}")
    kept_ids = {r["cell_id"] for r in rows if r["method"] not in renames}
    out, renamed_ids = [], set()
    for lineno, (line, row) in enumerate(zip(lines, rows), 1):
        if row["method"] not in renames:
            out.append(line)
            continue
        key = (renames[row["method"]], _key(row["corpus"], row["size"], row["value"], row["partition"], row.get("tuning")))
        cell = by_key.get(key)
        if cell is None:
            raise SystemExit(f"Error: {where}:{lineno}: the spec has no cell {key[0]} for {row['cell_id']}")
        identity = row_identity(cell)
        row.update({key: identity[key] for key in IDENTITY_KEYS})
        row.pop("extras", None)  # the renamed cell's identity says whether it has extras
        if "extras" in identity:
            row["extras"] = identity["extras"]
        renamed_ids.add(row["cell_id"])
        out.append(json.dumps(row, sort_keys=True))
    clash = sorted(renamed_ids & kept_ids)
    if clash:
        raise SystemExit(f"Error: {where}: renamed rows would take ids already in the file ({clash[0]}, ...)")
    return out


def main(argv: Sequence[str]) -> str:
    if len(argv) < 3 or not all("=" in a for a in argv[2:]):
        raise SystemExit("usage: python scripts/rename_methods.py RESULTS SPEC OLD=NEW [OLD=NEW ...]")
    results, spec_path = Path(argv[0]), Path(argv[1])
    renames = dict(a.split("=", 1) for a in argv[2:])
    if not results.is_file():
        raise SystemExit(f"Error: {results}: no such results file")
    text = results.read_text(encoding="utf8")
    lines = [line for line in text.splitlines() if line.strip()]
    spec = load_spec(spec_path)
    new_lines = rename(lines, list(spec.cells()), renames, str(results))
    shutil.copy2(results, results.with_name(results.name + ".before-rename"))
    tmp = results.with_name(results.name + ".tmp")
    tmp.write_text("".join(line + "\n" for line in new_lines), encoding="utf8")
    tmp.replace(results)
    changed = sum(a != b for a, b in zip(lines, new_lines))
    return f"{results}: {changed} of {len(lines)} rows renamed"


if __name__ == "__main__":
    print(main(sys.argv[1:]))
