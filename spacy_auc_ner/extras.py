"""Optional extras (``transformers``): a missing one is a one-line error naming the pip
command, as spacy-experimental does for torch. A config can name an extra's registered
functions (``base_trf.cfg`` names spacy-transformers' span getter), which spaCy then does not
know: :func:`missing_for` finds such names, so that ``config --all`` skips those configs and
every command's error says which extra brings them.
"""
from importlib import import_module
from types import ModuleType
from typing import Dict, List, Tuple

# each extra: the module that shows it is installed, and the marks of its functions in a
# config or in spaCy's error about one (an unknown registry or function name)
EXTRAS: Dict[str, Tuple[str, Tuple[str, ...]]] = {
    "transformers": ("spacy_transformers", ("spacy-transformers.", "span_getters")),
}


class MissingExtra(ImportError):
    """An optional dependency is not installed; the message says which extra brings it."""


def install_command(extra: str) -> str:
    return f"pip install 'spacy-auc-ner[{extra}]'"


def require(module: str, extra: str, what: str) -> ModuleType:
    """``import module``, or :class:`MissingExtra` saying that `what` needs the `extra`."""
    try:
        return import_module(module)
    except ImportError as err:
        raise MissingExtra(
            f"{what} needs {module.split('.')[0]}, which is not installed ({err}): {install_command(extra)}"
        ) from None


def installed(extra: str) -> bool:
    """Whether the extra's module imports (importing it registers its functions with spaCy)."""
    try:
        import_module(EXTRAS[extra][0])
    except ImportError:
        return False
    return True


def missing_for(text: str) -> List[str]:
    """The extras that are not installed and whose functions `text` (a config, or an error
    about one) names."""
    return [extra for extra, (_, marks) in EXTRAS.items() if any(m in text for m in marks) and not installed(extra)]
