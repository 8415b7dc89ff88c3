"""The results store of a study: one JSON file per results row, ``<store>/<cell key>/<row>.json``.

Why this shape (it replaced one append-only JSONL file per study, whose rows were matched to
cells by ids that hashed names, and three scripts that merged, renamed and archived rows):

- a row's folder is its cell's key, which hashes what the cell trains (`cells.cell_key`), not
  a method's or a file's name: a method or config file renamed in a spec keeps its rows, and
  reports read rows through the spec, under the spec's names (`rows_for`);
- a row's file name is a digest of the row itself, written whole and then renamed into place:
  several processes or clones may write into one store, and combining two stores is copying
  files (``cp -rn a/. b/``; the same row has the same name);
- a file per row, not per cell: a cell may have several rows (a failed run then an ok one,
  ``study run --again``), and the compute tables count every run;
- nothing is deleted: reports read a cell's latest ``ok`` row, rows of cells the spec no longer
  has are not read (``study status`` lists them), and old-format rows that match no cell are
  kept under ``unmatched/``.

Rows keep the JSON of `json`, not srsly's: ``srsly.json_dumps(0.08450704225352114)`` writes
``0.0845070423``, so scores would change on the way through the store. Rows of the old format
came in once with the ``imported`` field that orders them, rows written under older keys moved
to today's with ``rekeyed_from``; the code that did both was deleted on 2026-11-27 (git tag
``lab-migrations-2026-11-27``).

What is read is checked, as a row is a file anyone can copy, move or edit: a store is a folder
holding the marker file ``.results-store``, and a row is read only when `row_checks.row_problem`
finds nothing wrong with it; any other file is skipped with a warning naming it, so that
`study run` trains its cell again and no report prints a number from it.
"""
import contextlib
import hashlib
import json
import os
import warnings
from pathlib import Path
from typing import Any, Callable, Dict, Iterable, List, NamedTuple, Optional, Sequence

from spacy_auc_ner.api import PathLike

from .row_checks import UNMATCHED, is_key, row_problem

# <store>/diffs/<sha256>.patch: the uncommitted changes of the working tree rows were trained
# from (`ResultsStore.save_diff`), named in their ``versions.git_diff_digest``
DIFFS = "diffs"
MARKER = ".results-store"  # what makes a folder a results store: written by the lab into each
MARKER_TEXT = '{"format": "auc_ner_lab results store", "layout": "<cell key>/<row digest>.json"}\n'
# the fields a row's file name does not hash: what the store adds to the row `study run` wrote
_STORE_FIELDS = ("key", "imported", "rekeyed_from")


class StoreError(RuntimeError):
    """A results store that cannot be read or written; the message names the path."""


def latest_rows(rows: Iterable[Dict[str, Any]]) -> Dict[str, Dict[str, Any]]:
    """Per cell, its last ok row, or its last row when it never succeeded."""
    out: Dict[str, Dict[str, Any]] = {}
    for row in rows:
        key = row.get("key") or row["cell_id"]  # rows written before keys existed: their id
        prev = out.get(key)
        if prev is None or row["status"] == "ok" or prev["status"] != "ok":
            out[key] = row
    return out


def superseded(row: Dict[str, Any]) -> Optional[str]:
    """Why an ok row no longer stands for what its cell trains although its key is the same (a
    fix of the code it ran), or None; `study run` trains such a cell again. One case so far: a
    self-training row without ``extras.tokens`` read its draw and dev sample re-tokenized
    (fixed on 2026-11-26, `training_extras.on_annotated_tokens`). Tuning trials stand: the
    reported cells trained with the point they chose, which training them again could change."""
    extras = (row.get("scores") or {}).get("extras") or {}
    if not row.get("tuning") and extras.get("rounds") and extras.get("tokens") != "annotated":
        return "self-trained on re-tokenized text (before 2026-11-26)"
    return None


def device_kind(row: Dict[str, Any]) -> str:
    """"GPU" for a row trained on a CUDA device (``device`` says ``cuda:N ...``), else "CPU"
    (rows from before rows recorded a device trained on the CPU)."""
    return "GPU" if str(row.get("device") or "").startswith("cuda") else "CPU"


def diff_digest(diff: bytes) -> str:
    """The sha256 hex digest of a working tree's diff (`ResultsStore.save_diff`)."""
    return hashlib.sha256(diff).hexdigest()


def spec_of(store: PathLike) -> Path:
    """The spec whose cells a lab store holds: results/<name>/ is studies/<name>.yaml's (the
    lab's layout, the one place it is written down; the file need not exist)."""
    store = Path(store)
    return store.parent.parent / "studies" / f"{store.name}.yaml"


def row_name(row: Dict[str, Any]) -> str:
    """A row's file name: a digest of the row without the store's fields, the same in every store."""
    own = {k: v for k, v in row.items() if k not in _STORE_FIELDS}
    return hashlib.sha1(json.dumps(own, sort_keys=True).encode("utf8")).hexdigest()[:16] + ".json"


def _order(row: Dict[str, Any], name: str):
    """Imported rows as their file had them, then the others in the order they finished."""
    imported = row.get("imported")
    if imported:
        return (0, str(imported.get("from")), int(imported.get("line") or 0), name)
    return (1, str(row.get("finished") or ""), name)


def enclosing_store(path: PathLike) -> Optional[Path]:
    """The results store `path` is or lies in (links resolved), or None."""
    path = Path(path).resolve()
    return next((folder for folder in (path, *path.parents) if (folder / MARKER).is_file()), None)


def check_not_in_store(path: PathLike) -> None:
    """Refuse an output of another command in a results store (a foreign entry makes it unreadable)."""
    store = enclosing_store(path)
    if store is not None:
        where = "is" if store == Path(path).resolve() else f"lies in {store}, which is"
        raise StoreError(f"{path}: {where} a results store, which holds rows only; write it to another folder")


def _write_whole(target: Path, data: bytes, what: str, link: bool = False) -> None:
    """Write `data` to `target` whole and durably (a temporary file, synced, then renamed into
    place; with `link`, linked into place, never over a file there), or StoreError."""
    tmp = target.parent / f".{target.name}.{os.getpid()}.tmp"
    try:
        target.parent.mkdir(parents=True, exist_ok=True)
        with tmp.open("wb") as f:
            f.write(data)
            f.flush()
            os.fsync(f.fileno())
        if not link:
            os.replace(tmp, target)
            return
        try:
            with contextlib.suppress(FileExistsError):  # a file there is never overwritten
                os.link(tmp, target)
        finally:
            tmp.unlink()
    except OSError as err:
        raise StoreError(f"{target}: cannot {what} ({err.strerror or err})") from None


class UnreadableRow(UserWarning):
    """A row file skipped by a read given no `warn`: no reader drops a row without a word
    (`lab.py docs` collects these and refuses to write)."""


class Skipped(NamedTuple):
    path: Path
    reason: str

    def warning(self) -> str:
        return f"{self.path}: skipping {self.reason}"


class Read(NamedTuple):
    rows: List[Dict[str, Any]]
    skipped: List[Skipped]


class ResultsStore:
    """The folder of a study's results rows (see the module's docstring)."""

    def __init__(self, path: PathLike):
        self.path = Path(path)

    def __str__(self) -> str:
        return str(self.path)

    def check(self) -> None:
        """Refuse a path that is not a results store before anything is written into it; a path
        that does not exist is a new, empty store."""
        outer = enclosing_store(self.path.parent)
        if outer is not None:  # a store's subfolders are its cells' (a new store in one would spoil it)
            raise StoreError(f"{self.path}: lies in {outer}, which is a results store; give a folder of its own")
        if not self.path.exists():
            return
        if not self.path.is_dir():
            raise StoreError(f"{self.path}: not a results store (a folder 'study run' writes); give a folder it wrote, or a new one")
        entries = [entry for entry in self.path.iterdir() if entry.name != MARKER]
        if not self.marker.is_file():
            if entries:  # an empty folder is a new store; anything else is not the lab's
                raise StoreError(
                    f"{self.path}: not a results store (it has no {MARKER}, which the lab writes into every store); give a folder "
                    f"'study run' wrote, or a new one (a store written before stores were marked: create {self.marker} to mark it)"
                )
            return
        for entry in entries:
            if not (entry.is_dir() and not entry.is_symlink() and (entry.name in (UNMATCHED, DIFFS) or is_key(entry.name))):
                raise StoreError(f"{self.path}: not a results store ({entry.name} is not a cell's folder); give a folder 'study run' wrote, or a new one")

    @property
    def marker(self) -> Path:
        return self.path / MARKER

    def mark(self) -> None:
        """Make the folder a results store (a new folder, or one `check` accepted)."""
        if self.marker.is_file():
            return
        self.check()
        try:
            self.path.mkdir(parents=True, exist_ok=True)
            self.marker.write_text(MARKER_TEXT, encoding="utf8")
        except OSError as err:
            raise StoreError(f"{self.marker}: cannot write the marker of a results store ({err.strerror or err})") from None

    def diff_path(self, digest: str) -> Path:
        return self.path / DIFFS / f"{digest}.patch"

    def save_diff(self, diff: bytes) -> str:
        """Keep `diff`, the uncommitted changes rows are trained from, at diffs/<sha256>.patch and
        return the digest (rows record it as ``versions.git_diff_digest``). Never overwritten: a
        file there of another digest is refused (StoreError)."""
        digest = diff_digest(diff)
        target = self.diff_path(digest)
        if target.is_file():
            if diff_digest(target.read_bytes()) != digest:
                raise StoreError(f"{target}: holds a diff of another digest; move it away (it is not what rows named)")
            return digest
        self.mark()
        _write_whole(target, diff, "store the working tree's diff", link=True)
        return digest

    def untraced(self, rows: Iterable[Dict[str, Any]]) -> List[Dict[str, Any]]:
        """Of `rows`, those trained from uncommitted changes ("+changes") whose diff this store
        does not hold: their commit alone does not say what code ran."""
        def traced(versions: Dict[str, Any]) -> bool:
            digest = versions.get("git_diff_digest")
            return isinstance(digest, str) and len(digest) == 64 and self.diff_path(digest).is_file()

        return [r for r in rows if str((r.get("versions") or {}).get("git_commit") or "").endswith("+changes")
                and not traced(r.get("versions") or {})]

    def untraced_warning(self, rows: Sequence[Dict[str, Any]]) -> str:
        """A warning when some of the finished `rows` are `untraced`, else ""."""
        untraced = self.untraced(rows)
        if not untraced:
            return ""
        return (f"Warning: {len(untraced)} of the {len(rows)} finished rows were trained from a working tree with uncommitted "
                f"changes that no stored diff records (versions.git_commit ends in '+changes', no {DIFFS}/<digest>.patch in "
                f"{self.path}): their commit alone does not say what code ran")

    def files(self, keys: Optional[Iterable[str]] = None) -> List[Path]:
        """The row files of the store (of the cells `keys` only, when given)."""
        if not self.path.is_dir():
            return []
        if keys is None:
            return sorted(self.path.glob("*/*.json"))
        return sorted(path for key in set(keys) for path in (self.path / key).glob("*.json"))

    def read(self, keys: Optional[Iterable[str]] = None, cells: Sequence = ()) -> "Read":
        """The rows of the store (of the cells `keys` only, when given; `unmatched/`'s with key
        None) in the order they came in, and the files skipped with why (`row_problem`; with
        `cells`, a row of one of their keys must also be that cell's)."""
        if keys is None:
            self.check()
        by_key = {cell.key: cell for cell in cells}
        methods = {cell.method for cell in cells}
        found, skipped = [], []
        for path in self.files(keys):
            folder = path.parent.name
            try:
                row = json.loads(path.read_text(encoding="utf8"))
            except (ValueError, OSError) as err:
                skipped.append(Skipped(path, f"a file that is not a results row ({err})"))
                continue
            why = row_problem(row, folder, by_key.get(folder), methods)
            if why is not None:
                skipped.append(Skipped(path, f"a file that is not a readable results row: {why}"))
                continue
            found.append((_order(row, path.name), row))
        return Read([row for _, row in sorted(found, key=lambda pair: pair[0])], skipped)

    def rows(self, warn: Optional[Callable[[str], None]] = None, keys: Optional[Iterable[str]] = None, cells: Sequence = ()) -> List[Dict[str, Any]]:
        """The rows `read` finds, warning of each file skipped (`warn`, else `UnreadableRow`)."""
        read = self.read(keys, cells)
        for skipped in read.skipped:
            if warn is not None:
                warn(skipped.warning())
            else:
                warnings.warn(skipped.warning(), UnreadableRow, stacklevel=2)
        return read.rows

    def rows_for(self, cells: Sequence, warn: Optional[Callable[[str], None]] = None, others: bool = False) -> List[Dict[str, Any]]:
        """The rows of `cells`, each named as its cell is now (its `describe()` over the row's);
        rows of other keys are not read, or with `others` kept as written (a claim may read
        cells a spec has dropped)."""
        self.check()
        by_key = {cell.key: cell for cell in cells}
        rows = self.rows(warn, keys=None if others else by_key, cells=cells)
        return [{**row, **by_key[row["key"]].describe()} if row.get("key") in by_key else row for row in rows]

    def add(self, row: Dict[str, Any], key: Optional[str] = None) -> Path:
        """Write `row` into the folder of cell `key` (default: the row's own; None: unmatched); a
        row already there is left as it is."""
        key = row.get("key") if key is None else key
        if key and not is_key(key):
            raise StoreError(f"{self.path}: {key!r} is not a cell key; a row goes into its cell's folder")
        self.mark()
        folder = self.path / (key or UNMATCHED)
        target = folder / row_name(row)
        if target.exists():
            return target
        _write_whole(target, (json.dumps({**row, "key": key or None}, sort_keys=True) + "\n").encode("utf8"),
                     "write the results row")
        return target
