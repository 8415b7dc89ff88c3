"""The lab's own dependencies (projects/lab/requirements.txt: matplotlib, Ray, ...), which the
library does not carry: a missing one is a one-line error naming the command that brings it."""
from importlib import import_module
from types import ModuleType

INSTALL = "pip install -r projects/lab/requirements.txt (or: spacy project run setup projects/lab)"


class MissingRequirement(ImportError):
    """A module of the lab's requirements is not installed."""


def require(module: str, what: str) -> ModuleType:
    """``import module``, or :class:`MissingRequirement` saying that `what` needs it."""
    try:
        return import_module(module)
    except ImportError as err:
        raise MissingRequirement(f"{what} needs {module.split('.')[0]}, which is not installed ({err}): {INSTALL}") from None
