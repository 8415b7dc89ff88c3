"""The ``spacy-auc-ner`` command line. :func:`main` runs the typer app with click's own error
handling off, so that a usage error ends as one ``Error: ...`` line (exit status 2) like every
other error of the package, not click's usage box; a tool built on the package (the lab's
``auc-ner-lab``) passes its own ``app`` and ``prog_name`` to get the same (``spacy_auc_ner.api``).
"""
import inspect
from typing import List, Optional

import typer

from .app import app

__all__ = ["app", "main"]
EXIT_USAGE = 2  # click's status for usage errors, kept


def main(argv: Optional[List[str]] = None, app: typer.Typer = app, prog_name: str = "spacy-auc-ner") -> int:
    """Run the command line `app` on `argv` (None: ``sys.argv[1:]``); returns the exit status."""
    one_line_summaries(app)
    try:
        status = app(args=argv, prog_name=prog_name, standalone_mode=False)
    except typer.Abort:
        typer.echo("Error: aborted", err=True)
        return 1
    except typer.TyperException as err:  # click's usage errors (typer vendors click)
        ctx = getattr(err, "ctx", None)
        hint = f" (see: {ctx.command_path} --help)" if ctx is not None else ""
        message = " ".join(err.format_message().split())
        typer.echo(f"Error: {message}{hint}", err=True)
        return int(getattr(err, "exit_code", EXIT_USAGE))
    return status if isinstance(status, int) else 0


def one_line_summaries(app: typer.Typer) -> None:
    """Give each command of `app` (and of its sub-apps) without a short help the first paragraph
    of its docstring on one line: typer's command list prints that paragraph with the
    docstring's own line breaks, which cut the list's column mid-sentence."""
    for info in app.registered_commands:
        if info.short_help is None and info.callback is not None:
            summary = (info.help or inspect.getdoc(info.callback) or "").split("\n\n")[0]
            info.short_help = " ".join(summary.split())
    for group in app.registered_groups:
        if group.typer_instance is not None:
            one_line_summaries(group.typer_instance)
