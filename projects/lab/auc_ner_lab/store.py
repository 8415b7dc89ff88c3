"""The results store of a study: one JSON file per results row, ``<store>/<cell key>/<row>.json``.

Why this shape (it replaced one append-only JSONL file per study, whose rows were matched to
cells by ids that hashed names, and three scripts that merged, renamed and archived rows):

- a row's folder is its cell's key, which hashes what the cell trains (`spec.cell_key`: the
  training config as assembled, overrides, extras, draw; not the method's or a file's name),
  so a method or config file renamed in a spec, or a config rewritten that trains the same,
  keeps its rows, and rows are read through the spec: a report shows the spec's names
  (`rows_for`), whatever names a row was written under (a row's folder says its cell; its
  ``key`` field, the key it was written under);
- a row's file name is a digest of the row itself, and each file is written whole and then
  renamed into place: several processes, or clones of the repository, may write into one
  store, combining two stores is copying files (``cp -rn a/. b/``; the same row has the same
  name), and importing a file twice adds nothing;
- a file per row, not per cell: a cell may have several rows (a failed run then an ok one, a
  run again after a fix of the code: ``study run --again``), and the compute tables count
  every run;
- nothing is deleted: a newer row supersedes the cell's older ones in reports (they read a
  cell's latest ``ok`` row), rows of cells the spec no longer has are not read by its reports
  (``study status`` lists them), and rows of the old format that match no cell are kept under
  ``unmatched/``.

Rows keep the JSON of `json`, not srsly's: ``srsly.json_dumps(0.08450704225352114)`` writes
``0.0845070423``, so scores would change on the way through the store.
Rows of the old format (a study's JSONL file, as a campaign still running from an older
checkout writes it) come in through `import_jsonl`, the one place that knows their ids; rows
of a store written before keys hashed the assembled config, or before pretraining and
self-training were config, move to today's keys with `rekey`, this module the one place that
knows those keys (`previous_cell_key`, `extras_cell_key`).
"""
import hashlib
import json
import os
from functools import lru_cache
from pathlib import Path
from typing import Any, Callable, Dict, Iterable, List, NamedTuple, Optional, Sequence

from spacy_auc_ner.data.files import PathLike, os_error_text

UNMATCHED = "unmatched"
_KEY_CHARS = set("0123456789abcdef")


class StoreError(RuntimeError):
    """A results store that cannot be read or written; the message names the path."""


def row_key(row: Dict[str, Any]) -> str:
    """The cell a row belongs to: its key (rows written before keys existed: their id)."""
    return row.get("key") or row["cell_id"]


def latest_rows(rows: Iterable[Dict[str, Any]]) -> Dict[str, Dict[str, Any]]:
    """Per cell, its last ok row, or its last row when it never succeeded."""
    out: Dict[str, Dict[str, Any]] = {}
    for row in rows:
        key = row_key(row)
        prev = out.get(key)
        if prev is None or row["status"] == "ok" or prev["status"] != "ok":
            out[key] = row
    return out


def row_name(row: Dict[str, Any]) -> str:
    """A row's file name: a digest of the row as `study run` wrote it (without the store's
    `key` and `imported`), so that the same row has the same name in every store."""
    own = {k: v for k, v in row.items() if k not in ("key", "imported")}
    return hashlib.sha1(json.dumps(own, sort_keys=True).encode("utf8")).hexdigest()[:16] + ".json"


def _order(row: Dict[str, Any], name: str):
    """A store's rows in the order they came in: imported rows as their file had them, before
    rows written to the store, which come in the order they finished."""
    imported = row.get("imported")
    if imported:
        return (0, str(imported.get("from")), int(imported.get("line") or 0), name)
    return (1, str(row.get("finished") or ""), name)


class ResultsStore:
    """The folder of a study's results rows (see the module's docstring)."""

    def __init__(self, path: PathLike):
        self.path = Path(path)

    def __str__(self) -> str:
        return str(self.path)

    def check(self) -> None:
        """Refuse a path that is not a results store (a file, a folder of other things), before
        anything is written into it; a path that does not exist is a new, empty store."""
        if not self.path.exists():
            return
        hint = "; bring the rows of an old results file in with 'study import'" if self.path.suffix == ".jsonl" else ""
        if not self.path.is_dir():
            raise StoreError(f"{self.path}: not a results store (a folder 'study run' writes); give a folder it wrote, or a new one{hint}")
        for entry in self.path.iterdir():
            if not (entry.is_dir() and (entry.name == UNMATCHED or set(entry.name) <= _KEY_CHARS)):
                raise StoreError(f"{self.path}: not a results store ({entry.name} is not a cell's folder); give a folder 'study run' wrote, or a new one")

    def files(self, keys: Optional[Iterable[str]] = None) -> List[Path]:
        """The row files of the store (of the cells `keys` only, when given)."""
        if not self.path.is_dir():
            return []
        if keys is None:
            return sorted(self.path.glob("*/*.json"))
        return sorted(path for key in set(keys) for path in (self.path / key).glob("*.json"))

    def rows(self, warn: Optional[Callable[[str], None]] = None, keys: Optional[Iterable[str]] = None) -> List[Dict[str, Any]]:
        """Every row of the store (of the cells `keys` only, when given), those of `unmatched/`
        included (their key is None), in the order they came in (`_order`); a file that is not
        a row is skipped with a warning."""
        if keys is None:
            self.check()
        found = []
        for path in self.files(keys):
            try:
                row = json.loads(path.read_text(encoding="utf8"))
            except (ValueError, OSError) as err:
                if warn is not None:
                    warn(f"{path}: skipping a file that is not a results row ({err})")
                continue
            if not isinstance(row, dict) or "status" not in row:
                if warn is not None:
                    warn(f"{path}: skipping a file that is not a results row")
                continue
            row["key"] = None if path.parent.name == UNMATCHED else path.parent.name
            found.append((_order(row, path.name), row))
        return [row for _, row in sorted(found, key=lambda pair: pair[0])]

    def rows_for(self, cells: Sequence, warn: Optional[Callable[[str], None]] = None) -> List[Dict[str, Any]]:
        """The rows of `cells` (their keys), each named as its cell is named now (the cell's
        `describe()` over the row's own identity); rows of other keys are not read."""
        self.check()
        by_key = {cell.key: cell for cell in cells}
        return [{**row, **by_key[row["key"]].describe()} for row in self.rows(warn, keys=by_key)]

    def add(self, row: Dict[str, Any], key: Optional[str] = None) -> Path:
        """Write `row` into the folder of cell `key` (default: the row's own; None: unmatched),
        whole and durably, then renamed into place; a row already there is left as it is."""
        key = row.get("key") if key is None else key
        folder = self.path / (key or UNMATCHED)
        target = folder / row_name(row)
        if target.exists():
            return target
        tmp = folder / f".{target.name}.{os.getpid()}.tmp"
        try:
            folder.mkdir(parents=True, exist_ok=True)
            with tmp.open("w", encoding="utf8") as f:
                f.write(json.dumps({**row, "key": key or None}, sort_keys=True) + "\n")
                f.flush()
                os.fsync(f.fileno())
            os.replace(tmp, target)
        except OSError as err:
            raise StoreError(f"{target}: cannot write the results row ({os_error_text(err)})") from None
        return target


# ---- the old format: one JSONL file per study ------------------------------------------------
# config files renamed after rows were trained from them -> the name the old ids hashed
# (lowres_spacy_ner.cfg was lowres_best.cfg until the package's head took that name on
# 2026-11-24; today's lowres_best.cfg hashed another name, so that its cells never matched the
# spaCy-ner rows)
OLD_ID_CONFIG_NAMES = {"lowres_spacy_ner.cfg": "lowres_best.cfg", "lowres_best.cfg": "lowres_best.cfg (bilstm_crf, 2026-11-24)"}


def old_cell_id(cell) -> str:
    """The id a cell's rows had in a study's JSONL file: its label and a hash of its method
    config file's name, base config name, overrides, extras and tune block."""
    from .spec import cell_label
    from .training_extras import hashable

    config_name = Path(cell.config).name
    content: Dict[str, Any] = {
        "method_config": OLD_ID_CONFIG_NAMES.get(config_name, config_name),
        # a recipe was a full config file (no base) until 2026-11-24
        "base_config": Path(cell.base_config).name if cell.base_config and not cell.layers else None,
        "overrides": cell.overrides,
    }
    if cell.extras:
        content["extras"] = hashable(cell.extras)
    if cell.selection is not None:
        content["tune"] = {k: cell.selection[k] for k in ("points", "partitions", "metric")}
    payload = json.dumps(content, sort_keys=True, default=str)
    return cell_label(cell) + "#" + hashlib.sha1(payload.encode("utf8")).hexdigest()[:10]


class Imported(NamedTuple):
    rows: int  # complete rows in the file
    matched: int  # of them, found by a cell of the spec (by the id they had)
    unmatched: int  # kept under unmatched/
    new: int  # written now (the others were in the store already)


def import_jsonl(path: PathLike, cells: Sequence, store: ResultsStore, warn: Optional[Callable[[str], None]] = None) -> Imported:
    """Bring the rows of an old results file into `store`: each row whose id is a cell's (as
    `old_cell_id` computes it) into that cell's folder, the others into ``unmatched/``
    (a row of unmatched/ that now matches moves to its cell). Each row notes where it came from
    (``imported``: file name and line), which orders the store's rows as the file did. Only
    complete lines are read: a campaign may be appending to the file."""
    path = Path(path)
    try:
        text = path.read_text(encoding="utf8")
    except (OSError, UnicodeDecodeError) as err:
        reason = err.reason if isinstance(err, UnicodeDecodeError) else os_error_text(err)
        raise StoreError(f"{path}: cannot read the results file ({reason})") from None
    store.check()
    by_old_id = {old_cell_id(cell): cell for cell in cells}
    rows = matched = new = 0
    for lineno, line in enumerate(text[: text.rfind("\n") + 1].split("\n"), 1):
        if not line.strip():
            continue
        try:
            row = json.loads(line)
        except ValueError:
            row = None
        if not isinstance(row, dict) or "cell_id" not in row or "status" not in row:
            if warn is not None:
                warn(f"{path}:{lineno}: skipping a line that is not a results row")
            continue
        rows += 1
        cell = by_old_id.get(row["cell_id"])
        matched += cell is not None
        row = {**row, "imported": {"from": path.name, "line": lineno}}
        name = row_name(row)
        key = cell.key if cell is not None else None
        if (store.path / (key or UNMATCHED) / name).exists():
            continue
        store.add(row, key or "")
        stray = store.path / UNMATCHED / name
        if key is not None and stray.exists():  # kept unmatched before, its cell is known now: moved
            stray.unlink()
            continue
        new += 1
    return Imported(rows, matched, rows - matched, new)


# ---- the store's first keys (until 2026-11-24): a method file's content and its base's name ----
def previous_cell_key(cell) -> str:
    """The key a cell had until keys hashed its assembled training config: its method (or full)
    config file's parsed content and its base config's name, plus what the cell adds. A change
    to a base was invisible to these keys; a full config rewritten as base + partial lost them
    (a recipe, a full config file until 2026-11-24: its config as assembled, no base)."""
    from .spec import cell_additions

    content = {
        "method_config": _recipe_content(cell) if cell.layers else _file_content(cell.config),
        "base_config": Path(cell.base_config).name if cell.base_config and not cell.layers else None,
        **cell_additions(cell),
    }
    return hashlib.sha1(json.dumps(content, sort_keys=True, default=str).encode("utf8")).hexdigest()[:16]


def _recipe_content(cell) -> Any:
    return _assembled_content(cell.base_config, tuple(cell.layers), cell.config)


@lru_cache(maxsize=16)
def _assembled_content(base_config: str, layers: tuple, config: str) -> Any:
    from .spec import assembled_config

    return json.loads(json.dumps(assembled_config(base_config, [*layers, config]), sort_keys=True, default=str))


def _file_content(path: PathLike) -> Any:
    path = Path(path)
    try:
        stat = path.stat()
    except OSError:
        return {"unread": path.name}
    return _parsed_config(str(path.resolve()), stat.st_mtime_ns, stat.st_size)


@lru_cache(maxsize=256)
def _parsed_config(path: str, mtime_ns: int, size: int) -> Any:
    from thinc.api import Config

    text = Path(path).read_text(encoding="utf8")
    try:
        return json.loads(json.dumps(Config().from_str(text, interpolate=False), sort_keys=True, default=str))
    except (ValueError, KeyError):  # a file thinc cannot parse: by its text
        return {"text": text}


# ---- the keys until 2026-11-26: pretraining and self-training as a cell's extras ----------------
# The procedure's keys a spec sets since, and the blocks the recipes hold since (configs/self_training.cfg)
PROCEDURE_KEYS = ("pretraining.max_epochs", "corpora.pretrain.limit", "corpora.pool.limit")
PROCEDURE_LAYERS = ("self_training.cfg", "characters.cfg")  # the second a recipe has always had


def extras_cell(cell):
    """The cell as it was written until 2026-11-26, when a spec gave pretraining and
    self-training as extras (``pretrain: {objective, epochs, pool | text: draw}``,
    ``self_train: {rounds, threshold, pool, low_confidence}``) rather than as config: the
    procedure's overrides and layers taken out and said as those extras."""
    from .training_extras import OBJECTIVES, pretrains, self_trains

    config = cell.training_config()
    extras = dict(cell.extras or {})
    if pretrains(config):
        block = config["pretraining"]
        objective = OBJECTIVES[block["objective"]["@architectures"]]
        source = {"text": "draw"} if cell.pretrain_text == "draw" else {"pool": config["corpora"]["pretrain"]["limit"]}
        extras["pretrain"] = {"objective": objective, "epochs": block["max_epochs"], **source, "fragment": f"{objective}.cfg"}
    if self_trains(config):
        block = config["self_training"]
        extras["self_train"] = {"rounds": block["rounds"], "threshold": block["threshold"], "pool": config["corpora"]["pool"]["limit"],
                                "low_confidence": block["low_confidence"]}
    overrides = {k: v for k, v in cell.overrides.items() if not (k in PROCEDURE_KEYS or k.startswith("self_training."))}
    recipe = Path(cell.config).parent.name == "recipes"
    layers = [p for p in cell.layers if Path(p).name != PROCEDURE_LAYERS[0] and (recipe or Path(p).name != PROCEDURE_LAYERS[1])]
    return cell.redefined(overrides=overrides, extras=extras or None, layers=layers, pretrain_text="pool")


def extras_cell_key(cell) -> str:
    """The key of `extras_cell`: its assembled config's digest without the self-training blocks
    (they were not in its files), plus what the cell added."""
    from .spec import CELL_PATHS, cell_additions

    old = extras_cell(cell)
    config = _assembled_content(old.base_config, tuple(old.layers), old.config) if old.base_config else _file_content(old.config)
    config = json.loads(json.dumps(config))
    for name in CELL_PATHS:
        config.get("paths", {}).pop(name, None)
    config.pop("self_training", None)
    config.get("corpora", {}).pop("pool", None)
    digest = hashlib.sha1(json.dumps(config, sort_keys=True).encode("utf8")).hexdigest()
    content = {"config": digest, **cell_additions(old)}
    return hashlib.sha1(json.dumps(content, sort_keys=True, default=str).encode("utf8")).hexdigest()[:16]


REKEY_FROM = {"assembled": previous_cell_key, "extras": extras_cell_key}  # `study rekey --from`


class Rekeyed(NamedTuple):
    cells: int  # cells whose folder moved (or merged) to today's key
    rows: int  # row files moved
    kept: int  # row files left where they were: the same row is in the new folder already


def rekey(store: ResultsStore, cells: Sequence, old_key: Callable[[Any], str] = previous_cell_key) -> Rekeyed:
    """Move the rows of each cell of `cells` from the folder of its `old_key` to that of its
    key today. Nothing is deleted: a row already in the new folder stays in the old one too
    (its old folder then remains), rows that match no cell stay where they are, and running
    it again moves nothing."""
    store.check()
    moves: Dict[str, set] = {}
    for cell in cells:
        moves.setdefault(old_key(cell), set()).add(cell.key)
    split = [old for old, new in moves.items() if len(new) > 1]
    if split:
        raise StoreError(f"{store.path}: the rows of {split[0]} belong to {len(moves[split[0]])} cells today; nothing moved")
    moved_cells = moved_rows = kept = 0
    for old, (new,) in sorted(moves.items()):
        source = store.path / old
        if old == new or not source.is_dir():
            continue
        target = store.path / new
        moved = 0
        for path in sorted(source.glob("*.json")):
            if (target / path.name).exists():
                kept += 1
                continue
            try:
                target.mkdir(exist_ok=True)
                os.replace(path, target / path.name)
            except OSError as err:
                raise StoreError(f"{path}: cannot move the row to {target} ({os_error_text(err)})") from None
            moved += 1
        moved_cells += moved > 0
        moved_rows += moved
        if not any(source.iterdir()):
            source.rmdir()
    return Rekeyed(moved_cells, moved_rows, kept)
