"""Expected failures of every command as one line on stderr, ``Error: <what>``, exit status 1:
:class:`DataError`, ``OSError`` and ``ValueError`` carry a message naming the file and line or
the key. Anything else is a bug and keeps its traceback; ``SPACY_AUC_NER_TRACEBACK=1`` shows
the traceback of an expected failure too. An error about a config function of an extra that is
not installed (spaCy's unknown registry or function) says which extra brings it.
"""
import functools
import os
import re
from typing import Callable, NoReturn, Tuple

import typer

from ..data.files import DataError, os_error_text
from ..extras import MissingExtra, install_command, missing_for

EXIT_ERROR = 1  # an expected failure (also the lab's `study run` when a cell failed, unless --no-strict)
EXPECTED = (DataError, OSError, ValueError, MissingExtra)


_NEWLINES = re.compile(r"\s*\n\s*")


def error_text(err: BaseException) -> str:
    """The error's message on one line."""
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
        except expected as err:
            if os.environ.get("SPACY_AUC_NER_TRACEBACK"):
                raise
            text = error_text(err)
            if not isinstance(err, MissingExtra):
                for extra in missing_for(text):
                    text += f" (a function of the {extra!r} extra, which is not installed: {install_command(extra)})"
            fail(text)

    return run
