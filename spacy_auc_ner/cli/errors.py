"""Expected failures of every command as one line on stderr, ``Error: <what>``, exit status 1:
:class:`DataError`, ``OSError`` and ``ValueError`` carry a message naming the file and line or
the key. Anything else is a bug and keeps its traceback; ``SPACY_AUC_NER_TRACEBACK=1`` shows
the traceback of an expected failure too. An error about a config function of an extra that is
not installed (spaCy's unknown registry or function) says which extra brings it.
"""
import functools
import json
import os
import re
import sys
from typing import Any, Callable, NoReturn, Tuple

import typer
from thinc.api import ConfigValidationError

from ..data.files import DataError, os_error_text
from ..extras import MissingExtra, install_command, missing_for

EXIT_ERROR = 1  # an expected failure (also the lab's `study run` when a cell failed, unless --no-strict)
EXPECTED = (DataError, OSError, ValueError, MissingExtra)


_NEWLINES = re.compile(r"\s*\n\s*")


# what a setting must be, by pydantic's error type or the type confection names ("'abc' is
# not <class 'float'>"): spaCy's text is a type's name, and its str() dumps the whole config
_MUST_BE = {
    "int": "must be a whole number", "int_type": "must be a whole number", "int_parsing": "must be a whole number",
    "int_from_float": "must be a whole number", "float": "must be a number", "float_type": "must be a number",
    "float_parsing": "must be a number", "bool": "must be true or false", "bool_type": "must be true or false",
    "bool_parsing": "must be true or false", "str": "must be a string", "string_type": "must be a string",
}
_CLASS = re.compile(r"is not <class '(\w+)'>")
_MISSING = object()


def _value_text(value: Any) -> str:
    if isinstance(value, str):
        return repr(value)
    try:
        return json.dumps(value)
    except (TypeError, ValueError):
        return repr(value)


def config_error_line(err: ConfigValidationError) -> str:
    """A ConfigValidationError of spaCy's or confection's as one line, ``[key]: must be ..., not
    'abc'`` per error, its location the full dotted key where the package located it
    (data.config_files.located_error) and the parent spaCy gave otherwise, without the
    config spaCy's own text dumps."""
    parts = []
    for e in err.errors or []:
        loc = [str(p) for p in ([err.parent] if err.parent else []) + list(e.get("loc") or [])]
        msg = str(e.get("msg", "")).removeprefix("at root: ")
        kind = _CLASS.search(msg)
        must = _MUST_BE.get(kind.group(1) if kind else str(e.get("type")))
        value = e.get("input", _MISSING)
        if must is not None:
            msg = must if value is _MISSING else f"{must}, not {_value_text(value)}"
        parts.append(f"[{'.'.join(loc)}]: {msg}" if loc else msg)
    return "; ".join(parts) or (err.title or "config validation error")


def error_text(err: BaseException) -> str:
    """The error's message on one line."""
    if isinstance(err, ConfigValidationError):
        return config_error_line(err)
    text = os_error_text(err) if isinstance(err, OSError) else str(err) or type(err).__name__
    return _NEWLINES.sub(" ", text).strip()


def fail(message: str) -> NoReturn:
    """Print ``Error: message`` (one line) to stderr and exit with `EXIT_ERROR`."""
    one_line = _NEWLINES.sub(" ", message).strip()
    typer.echo(f"Error: {one_line}", err=True)
    raise typer.Exit(EXIT_ERROR)


def one_line_errors(command: Callable, expected: Tuple[type, ...] = EXPECTED) -> Callable:
    """Decorate a typer command so that the `expected` failures end it through :func:`fail`
    (a tool built on the package passes its own errors on top of `EXPECTED`)."""

    @functools.wraps(command)
    def run(*args, **kwargs):
        try:
            return command(*args, **kwargs)
        except BrokenPipeError:
            # the reader of stdout is gone (`config --list | head`): nothing to tell it; stdout
            # goes to devnull so that Python's flush at exit does not raise again
            os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
            raise typer.Exit(EXIT_ERROR) from None
        except expected as err:
            if os.environ.get("SPACY_AUC_NER_TRACEBACK"):
                raise
            text = error_text(err)
            if not isinstance(err, MissingExtra):
                for extra in missing_for(text):
                    text += f" (a function of the {extra!r} extra, which is not installed: {install_command(extra)})"
            fail(text)

    return run
