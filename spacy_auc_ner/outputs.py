"""What a command may write: **never delete or replace anything it did not create itself, never
write over one of its own inputs, and check every input before deleting or writing.**
A single output file is refused when it is an input or exists without ``--overwrite``
(:func:`check_output_file`); an output folder records every entry *before* writing it, in
``OUTPUT/.spacy-auc-ner-outputs.json``, so that ``--overwrite`` removes only what a run of the
same command recorded, even a killed one (:class:`OutputFolder`).

What ``--overwrite`` may remove is bounded by the folder, whatever the record says (it is a
file a user can edit, copy or replace): a name that is absolute, empty, ``.`` or holds ``..``
is not one this package writes, so such a record is refused whole; every name must resolve to
a path inside the resolved folder; and nothing is removed, or written, through a symbolic link
(a link that is itself a recorded entry is removed as a link, its target kept).

The inputs are every file the command reads, a config's included whatever its key
(:func:`config_inputs`): an input that lies in what the run would write or remove is refused.
A claim holds the folder until :meth:`OutputFolder.release` (a lock on the folder, released by
the system when the process dies), so that two runs started together cannot both pass the
checks and then write over each other.
"""
import json
import os
import shutil
from pathlib import Path, PurePosixPath
from typing import Any, Dict, Iterable, List, Mapping, Optional, Sequence, Tuple, Union

from .data.files import DataError, PathLike, write_json

try:
    import fcntl
except ImportError:  # Windows: no flock, and a folder cannot be opened to lock it
    fcntl = None  # type: ignore[assignment]

MANIFEST = ".spacy-auc-ner-outputs.json"
# an input of a command: a path, or (the config key that names it, the path); None: not given
Input = Union[None, PathLike, Tuple[str, PathLike]]


def _resolved(path: PathLike) -> Path:
    return Path(path).expanduser().resolve()


def same_or_inside(path: PathLike, container: PathLike) -> bool:
    """Whether ``path`` is ``container`` or lies inside it, links resolved."""
    p, c = _resolved(path), _resolved(container)
    if p == c or c in p.parents:
        return True
    try:  # hard links and other aliases of one file
        return Path(path).exists() and Path(container).exists() and Path(path).samefile(container)
    except OSError:
        return False


def config_inputs(config: Mapping[str, Any], prefix: str = "") -> List[Tuple[str, Path]]:
    """Every string of an interpolated config, at any depth and in lists, that names an existing
    file or folder, with its full key (``paths.init_tok2vec``, ``corpora.train.path``, a key of
    the user's own): a config names its inputs under keys no command can list in advance, so
    any value that is a path is taken for one. Registered function names (``@...`` keys) and
    empty strings (the current folder, to ``Path``) are not paths."""
    found: List[Tuple[str, Path]] = []
    for key, value in config.items():
        full = f"{prefix}{key}"
        if isinstance(value, Mapping):
            found.extend(config_inputs(value, f"{full}."))
            continue
        if str(key).startswith("@"):
            continue
        for item in value if isinstance(value, (list, tuple)) else [value]:
            if isinstance(item, str) and item and _exists(item):
                found.append((full, Path(item)))
    return found


def _exists(text: str) -> bool:
    try:
        return os.path.lexists(text)
    except (OSError, ValueError):  # a name too long, a NUL: not a path
        return False


def bad_name(name: object) -> Optional[str]:
    """Why ``name`` cannot be an entry this package records in an output folder (None when it
    can): a relative path of plain parts, no ``.``, ``..`` or empty part, not the record itself."""
    if not isinstance(name, str) or not name:
        return "an empty name" if name == "" else f"not a name ({name!r})"
    if "\\" in name or "\0" in name or PurePosixPath(name).is_absolute():  # a backslash: a separator on Windows
        return f"{name!r} is not a relative path"
    parts = name.split("/")
    if any(part in ("", ".", "..") for part in parts):
        return f"{name!r} is not a plain relative path (an empty, '.' or '..' part)"
    if parts[0] == MANIFEST:
        return f"{name!r} is the record itself"
    return None


def check_output_file(output: PathLike, inputs: Iterable[Optional[PathLike]], overwrite: bool = False, option: str = "--overwrite") -> None:
    """Refuse to write ``output`` over one of ``inputs``, or over any existing file unless
    ``overwrite``; a folder is never replaced by a file."""
    output = Path(output)
    for path in inputs:
        if path is not None and same_or_inside(output, path):
            raise DataError(f"{output}: is an input of this command ({path}); write the output to another file")
    if output.is_dir():
        raise DataError(f"{output}: is a folder; give a file name")
    if output.exists() and not overwrite:
        raise DataError(f"{output}: already exists; choose another file, or pass {option} to replace it")


class OutputFolder:
    """An output folder and the record of what ``command`` wrote there."""

    def __init__(self, folder: PathLike, command: str):
        self.folder, self.command = Path(folder), command
        if self.folder.exists() and not self.folder.is_dir():
            raise DataError(f"{self.folder}: exists and is not a folder")
        # what each recorded folder held when its run ended: --overwrite removes a recorded
        # folder whole, so a file the user put in it later must stop it (`_check`)
        self.contents: Dict[str, List[str]] = {}
        # whether the run the record is of ended: False from a claim until `finish`, so that a
        # killed run's record says so (a record without the key is a finished one's)
        self.finished = True
        self.recorded: List[str] = self._read()
        self._lock: Optional[int] = None  # the folder's descriptor while a claim holds it
        self._claimed = False  # a claim succeeded: this run writes here until `release`
        # what this run made, for `discard`: the entries it recorded and the folders that did
        # not exist before (the output folder, data/), so that a failed run removes only those
        self._written: List[str] = []
        self._made: List[Path] = []

    @property
    def manifest(self) -> Path:
        return self.folder / MANIFEST

    def _read(self) -> List[str]:
        if not self.manifest.exists():
            return []
        try:
            data = json.loads(self.manifest.read_text(encoding="utf-8"))
            names = data["written"]
            command = data["command"]
            contents = data.get("contents", {})  # absent from records older than it
            if not isinstance(names, list) or not isinstance(contents, dict) or not all(
                    isinstance(v, list) and all(isinstance(f, str) for f in v) for v in contents.values()):
                raise TypeError
        except (OSError, ValueError, KeyError, TypeError):
            raise DataError(f"{self.manifest}: not a record of written outputs this package can read; move it or choose another output folder") from None
        if command != self.command:
            raise DataError(f"{self.folder}: holds the outputs of a '{command}' run, which '{self.command}' does not replace; choose another output folder")
        for name in names:
            why = bad_name(name)
            if why is not None:
                raise DataError(f"{self.manifest}: not a record this package wrote ({why}); nothing was removed; move it or choose another output folder")
        self.contents = {name: list(files) for name, files in contents.items() if name in names}
        self.finished = data.get("finished", True) is not False
        return list(names)

    def _unsafe(self, name: str) -> Optional[str]:
        """Why the entry ``name`` may be neither removed nor written (None when it may): a
        folder on its way is a symbolic link (or not a folder), or it resolves outside the
        folder. The entry itself may be a link: removing it removes the link only."""
        path = self.folder
        for part in name.split("/")[:-1]:
            path = path / part
            if path.is_symlink():
                return f"{path} is a symbolic link"
            if path.exists() and not path.is_dir():
                return f"{path} is not a folder"
        entry = self.folder / name
        # a link is checked where it lies (its parent resolved), not where it points
        inside = _resolved(entry.parent) / entry.name if entry.is_symlink() else _resolved(entry)
        root = _resolved(self.folder)
        if inside != root and root not in inside.parents:
            return f"{self.folder / name} lies outside {self.folder}"
        return None

    def _present(self, names: Iterable[str]) -> List[str]:
        return sorted({n for n in names if (self.folder / n).exists() or (self.folder / n).is_symlink()})

    def claim(self, names: Sequence[str], inputs: Iterable[Input], overwrite: bool, what: str) -> None:
        """Check that the run may write ``names`` (relative to the folder): none of them, nor
        anything ``overwrite`` would remove, nor the record, holds an input (a path, or a config
        key and its path); without ``overwrite`` nothing of an earlier run is there; with it,
        every one present was recorded by this command. Then hold the folder for this run
        (`release`) and check again what another run may have written meanwhile: the checks
        delete nothing, and a refused claim holds nothing."""
        inputs = list(inputs)
        self.recorded = self._read()  # as the folder is now, not as it was when this object was made
        try:
            self._check(names, inputs, overwrite, what)  # before the folder is made or locked
        except DataError:
            # read while another run writes (its entries made, its record not yet read here), the
            # refusal would call that run's output foreign; say what it is: a run holds the folder
            self._refuse_if_held()
            raise
        self._written, self._made = [], self._missing(self.folder)
        self._hold()
        try:
            self.recorded = self._read()
            self._check(names, inputs, overwrite, what)
        except BaseException:
            self.release()
            raise
        self._claimed = True
        self.finished = False

    def finish(self) -> None:
        """Note, last, that the run ended with everything written: its record says so from now
        on (written atomically), and a model in the folder may be used."""
        self.finished = True
        if self.recorded:
            self._write()

    def _hold(self) -> None:
        """Lock the folder (made if need be) for this run: flock, which the system releases when
        the process ends, so a killed run leaves no stale lock; one open of the folder per claim,
        so two claims conflict even within one process. Without flock (Windows) nothing is held."""
        if fcntl is None or self._lock is not None:
            return
        try:
            self.folder.mkdir(parents=True, exist_ok=True)
            fd = os.open(self.folder, os.O_RDONLY)
        except OSError as err:
            raise DataError(f"{self.folder}: cannot write here ({err.strerror})") from None
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError:
            os.close(fd)
            raise self._held_error() from None
        self._lock = fd

    def _held_error(self) -> DataError:
        return DataError(f"{self.folder}: another '{self.command}' run is writing into it now; wait for it to end or choose another output folder")

    def _refuse_if_held(self) -> None:
        """Raise `_held_error` when another claim holds the folder now; otherwise nothing (the
        probe's lock is let go at once, and a folder that cannot be opened is left to the caller's
        error)."""
        if fcntl is None or self._lock is not None:
            return
        try:
            fd = os.open(self.folder, os.O_RDONLY)
        except OSError:
            return
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError:
            raise self._held_error() from None
        finally:
            os.close(fd)

    def _listing(self, name: str) -> List[str]:
        """Every entry below the recorded folder ``name``, relative to it (links not followed)."""
        top = self.folder / name
        found = []
        for here, dirs, files in os.walk(top):
            found += [str((Path(here) / entry).relative_to(top)) for entry in [*dirs, *files]]
        return sorted(found)

    def _seal(self) -> None:
        """Note what each recorded folder holds now, at the end of the run that wrote it."""
        folders = [n for n in self.recorded if (self.folder / n).is_dir() and not (self.folder / n).is_symlink()]
        self.contents = {n: self._listing(n) for n in folders}
        if self.recorded:
            self._write()

    def release(self) -> None:
        """Note what the run's folders hold (`_seal`) and let another run claim the folder (the
        end of this run's writing)."""
        if self._claimed:  # a refused claim wrote nothing: its listing would bless what is there
            self._claimed = False
            self._seal()
        if self._lock is not None:
            os.close(self._lock)  # closing the descriptor releases the flock
            self._lock = None

    def _check(self, names: Sequence[str], inputs: Sequence[Input], overwrite: bool, what: str) -> None:
        for name in names:
            why = bad_name(name)
            if why is not None:
                raise ValueError(f"OutputFolder.claim: {why}")
        previous = self._present(self.recorded)
        for name in sorted(set(previous) | set(names)):
            why = self._unsafe(name)
            if why is not None:
                raise DataError(f"{why}: nothing is removed or written through it; move it or choose another output folder")
        clashes = self._present(names)
        # foreign first: --overwrite would not replace them, so it is not the way out
        foreign = [n for n in clashes if n not in self.recorded]
        if foreign:
            raise DataError(
                f"{self.folder}: {', '.join(foreign)} not written by an earlier '{self.command}' run here "
                f"(no record in {MANIFEST}), so --overwrite leaves it; move it or choose another output folder"
            )
        for name in previous:
            if name in self.contents and (self.folder / name).is_dir():
                added = sorted(set(self._listing(name)) - set(self.contents[name]))
                if added:
                    raise DataError(
                        f"{self.folder / name / added[0]}: not written by the earlier '{self.command}' run here (its record "
                        f"in {MANIFEST} lists what {name} held), so --overwrite would remove it with {name}; move it or "
                        "choose another output folder")
        if previous and not overwrite and not self.finished:
            raise DataError(f"{self.folder}: an earlier '{self.command}' run here did not finish (killed, or failed after its first "
                            f"round), so its model-best may be an early checkpoint; rerun with --overwrite to replace what it wrote")
        if (previous or clashes) and not overwrite:
            found = ", ".join(sorted(set(previous) | set(clashes)))
            raise DataError(f"{self.folder}: already holds {what} ({found}); choose another output folder or overwrite it (--overwrite)")
        for given in inputs:
            if given is None:
                continue
            key, path = given if isinstance(given, tuple) else (None, given)
            named = f"[{key}] {path}" if key is not None else str(path)
            # the record is rewritten by every run, so it counts as written too
            for name in [*sorted(set(names) | set(previous)), MANIFEST]:
                entry = self.folder / name
                if same_or_inside(path, entry):
                    raise DataError(f"{named}: an input of this command lies in {entry}, which it would write over; "
                                    "move the input or choose another output folder")
                # a folder of the output folder's (data/) that holds an entry: writing the entry
                # changes the input; the output folder itself, or one above it, is no such input
                if same_or_inside(entry, path) and not same_or_inside(self.folder, path):
                    raise DataError(f"{named}: an input of this command holds {entry}, which it would write over; "
                                    "move the input or choose another output folder")

    def clear(self) -> None:
        """Remove what earlier runs of this command recorded (after `claim` and reading the
        inputs); each entry checked again just before, a link removed as a link."""
        for name in self._present(self.recorded):
            why = self._unsafe(name)
            if why is not None:
                raise DataError(f"{why}: nothing is removed through it; move it or choose another output folder")
            path = self.folder / name
            if not os.path.lexists(path):  # inside a recorded folder removed just before
                continue
            if path.is_dir() and not path.is_symlink():
                shutil.rmtree(path)
            else:
                os.unlink(path)
        self.recorded = []
        if self.manifest.exists():
            self._write()

    def record(self, *names: str) -> Path:
        """Note ``names`` as written by this run, before writing them; returns the first's path."""
        for name in names:
            why = bad_name(name) or self._unsafe(name)
            if why is not None:
                raise DataError(f"{self.folder}: cannot record {name!r} ({why})")
        new = [n for n in names if n not in self.recorded]
        for name in names:  # the folders its writer will make on the way (data/ of data/train.spacy)
            self._made += [p for p in self._missing((self.folder / name).parent) if p not in self._made]
        self._written += [n for n in names if n not in self._written]
        if new:
            self.recorded.extend(new)
            self._write()
        return self.folder / names[0]

    @staticmethod
    def _missing(folder: Path) -> List[Path]:
        """``folder`` and the folders above it that do not exist yet, deepest first."""
        return [p for p in [folder, *folder.parents] if not os.path.lexists(p)]

    def discard(self) -> None:
        """Remove what this run wrote, for a run that failed (call before `release`): the
        entries it recorded since its claim, then the record if it lists nothing else, then the
        folders the run made that are left empty. An earlier run's entries, the user's files and
        any folder that held something else are kept, so that the corrected command runs again
        without --overwrite."""
        for name in sorted(self._written, key=lambda n: n.count("/"), reverse=True):
            path = self.folder / name
            if self._unsafe(name) is not None or not os.path.lexists(path):
                continue
            if path.is_dir() and not path.is_symlink():
                shutil.rmtree(path)
            else:
                os.unlink(path)
        self.recorded = [n for n in self.recorded if n not in self._written]
        self.contents = {n: files for n, files in self.contents.items() if n in self.recorded}
        self._written = []
        if self.recorded:
            self._write()
        elif self.manifest.is_file() and not self.manifest.is_symlink():
            self.manifest.unlink()
        for folder in sorted(self._made, key=lambda p: len(p.parts), reverse=True):
            try:
                folder.rmdir()  # only an empty one: anything put there since stays
            except OSError:
                pass
        self._made = []

    def _write(self) -> None:
        contents = {n: files for n, files in self.contents.items() if n in self.recorded}
        write_json(self.manifest, {"command": self.command, "written": self.recorded, "contents": contents, "finished": self.finished})


def unfinished_run(model: PathLike) -> Optional[Path]:
    """The record of the run that wrote the pipeline folder ``model`` (``OUT/model-best`` or
    ``OUT/round-K/model-best``) when that run did not finish, else None."""
    model = Path(model)
    for folder in (model.parent, model.parent.parent):
        manifest = folder / MANIFEST
        if not manifest.is_file():
            continue
        try:
            data = json.loads(manifest.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            return None
        top = model.relative_to(folder).parts[0]
        written = data.get("written") if isinstance(data, dict) else None
        if isinstance(written, list) and top in written and data.get("finished", True) is False:
            return manifest
        return None
    return None
