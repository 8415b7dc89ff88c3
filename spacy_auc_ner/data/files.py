"""Paths, the one-line data error, and writing output files whole or not at all: every file
the package writes goes through :func:`atomic_output` (a temporary file in the target folder,
renamed onto the target when the writer finished), so a failure leaves the target as it was.
"""
import json
import math
import os
import tempfile
from contextlib import contextmanager
from pathlib import Path
from typing import Any, Iterator, Union

PathLike = Union[str, Path]


class DataError(ValueError):
    """Bad input data or settings: the message is one line naming the file and line (or key)."""


def is_whole(value: Any, low: int = 0) -> bool:
    """A whole number >= `low`: not a bool, nor the string a quoted number in a config file
    reaches a registered function as (confection checks that "3" reads as an int, and passes
    it on as written: comparing it raised a TypeError)."""
    return isinstance(value, int) and not isinstance(value, bool) and value >= low


def is_number(value: Any) -> bool:
    """A real number, not a bool nor the string of a quoted one (as `is_whole`)."""
    return isinstance(value, (int, float)) and not isinstance(value, bool)


# the largest seed: spaCy's check of a config writes [system] and the components' settings as
# JSON (srsly's ujson), whose integers end at 2**64 - 1; a [system.seed] of 1e41 was a SystemError
# inside it, and spaCy reads a command-line override as JSON too. What the seeds feed takes more:
# random.Random and numpy's default_rng any size, numpy's RandomState seed % 2**32 (thinc's
# fix_random_seed), so 2**32 - 1 is no limit of theirs. Every seed keeps to the one range, as the
# readers take ${system.seed} and the pool command's --seed repeats a reader's draw.
MAX_SEED = 2**64 - 1


def check_seed(seed: Any, name: str) -> None:
    """Refuse a seed that is not a whole number from 0 to :data:`MAX_SEED`, in one line naming
    its option or config key (``--seed``, ``[system.seed]``): numpy refuses a negative seed only
    deep in a run, with no word of the option, and ``random.Random`` takes ``abs(seed)``, so -1
    would quietly draw what 1 draws."""
    if not is_whole(seed, 0):
        raise DataError(f"{name} must be a whole number >= 0, not {json.dumps(seed, default=repr)}")
    if seed > MAX_SEED:
        raise DataError(f"{name} must be at most 2**64 - 1 = {MAX_SEED}, the largest whole number of a config (JSON), not {seed}")


def os_error_text(err: OSError) -> str:
    """An OSError as one line: ``path: reason`` (``No such file or directory``, ...)."""
    reason = err.strerror or type(err).__name__
    if err.filename is not None and err.filename2 is not None:
        return f"{err.filename} -> {err.filename2}: {reason}"
    if err.filename is not None:
        return f"{err.filename}: {reason}"
    return str(err) or reason


def read_text(path: PathLike) -> str:
    """A UTF-8 text file's text, without the byte-order mark that Windows editors put first (it
    would be the first character of the first line: a config's first header unread, a raw
    text's first word with an invisible character); line ends read as ``\n`` (universal
    newlines); a file that is not UTF-8 is one line naming it."""
    try:
        return Path(path).read_text(encoding="utf-8-sig")
    except UnicodeDecodeError as err:
        raise not_utf8(path, err) from None


def not_utf8(path: PathLike, err: UnicodeDecodeError) -> DataError:
    """The one-line error of a file that is not UTF-8: its path, the line and the byte (of the
    file: utf-8-sig's offsets start after the byte-order mark)."""
    line = bytes(err.object[: err.start]).count(b"\n") + 1
    byte = err.start + (3 if _starts_with_bom(path) and not bytes(err.object).startswith(b"\xef\xbb\xbf") else 0)
    return DataError(f"{path}:{line}: not UTF-8 text ({err.reason} at byte {byte})")


def _starts_with_bom(path: PathLike) -> bool:
    try:
        with open(path, "rb") as f:
            return f.read(3) == b"\xef\xbb\xbf"
    except OSError:
        return False


def check_utf8(path: PathLike) -> None:
    """Refuse an existing file that is not UTF-8 text (a missing one is left to the reader)."""
    if Path(path).is_file():
        read_text(path)


@contextmanager
def atomic_output(path: PathLike) -> Iterator[Path]:
    """Yield a temporary path next to ``path`` (same suffix, for writers that pick a format by
    it), renamed onto ``path`` when the block ends without error, deleted otherwise; OSErrors
    are raised as DataError."""
    path = Path(path)
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp_name = tempfile.mkstemp(prefix=f".{path.stem}.", suffix=f".tmp{path.suffix}", dir=path.parent)
        os.close(fd)
    except OSError as err:
        raise DataError(f"{path}: cannot write here ({os_error_text(err)})") from None
    tmp = Path(tmp_name)
    try:
        yield tmp
        os.chmod(tmp, 0o666 & ~_umask())  # mkstemp makes it 0600; give what open() would
        os.replace(tmp, path)
    except OSError as err:
        tmp.unlink(missing_ok=True)
        raise DataError(f"{path}: cannot write ({os_error_text(err)})") from None
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise


def write_text(path: PathLike, text: str) -> None:
    """Write a UTF-8 text file atomically."""
    with atomic_output(path) as tmp:
        tmp.write_text(text, encoding="utf-8")


def write_json(path: PathLike, data: Any, indent: int = 2) -> None:
    """Write JSON and a final newline atomically; NaN and infinities (not JSON) become null."""
    write_text(path, json.dumps(finite_or_none(data), indent=indent, allow_nan=False, default=str) + "\n")


def finite_or_none(data: Any) -> Any:
    """``data`` with every NaN or infinite float (in nested dicts, lists, tuples) as None."""
    if isinstance(data, float):
        return data if math.isfinite(data) else None
    if isinstance(data, dict):
        return {k: finite_or_none(v) for k, v in data.items()}
    if isinstance(data, (list, tuple)):
        return [finite_or_none(v) for v in data]
    return data


def _umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask
