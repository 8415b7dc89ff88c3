"""Optional extras (``transformers``): a missing one is a one-line error
naming the pip command, as spacy-experimental does for torch.
"""
from importlib import import_module
from types import ModuleType


class MissingExtra(ImportError):
    """An optional dependency is not installed; the message says which extra brings it."""


def require(module: str, extra: str, what: str) -> ModuleType:
    """``import module``, or :class:`MissingExtra` saying that `what` needs the `extra`."""
    try:
        return import_module(module)
    except ImportError as err:
        raise MissingExtra(
            f"{what} needs {module.split('.')[0]}, which is not installed ({err}): "
            f"pip install 'spacy-auc-ner[{extra}]'"
        ) from None
