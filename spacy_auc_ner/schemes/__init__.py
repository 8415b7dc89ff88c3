"""The component schemes, registered blocks of ``[components.auc_ner.scheme]`` (as spaCy's
suggesters are): output columns, targets from gold BIO, the loss over the columns, decoding,
and each scheme's default loss and decoder. The interface: :mod:`.base`. One module per scheme:

- ``spacy_auc_ner.OVA.v1`` (:mod:`.ova`): one sigmoid classifier per BIO label (OVA-AUC);
- ``spacy_auc_ner.TwoTask.v1`` (:mod:`.two_task`): AUC-2T's entity and beginning tasks;
- ``spacy_auc_ner.Softmax.v1`` (:mod:`.softmax`): the CE baseline;
- ``spacy_auc_ner.CRF.v1`` (:mod:`.crf`): a linear-chain CRF's emissions.

A scheme may also be written as its name (``scheme = "two_task"``), the short form of its block
with the block's defaults (:func:`scheme_config`); a setting of the scheme (two_task's ``lam``
and ``threshold``) is set in the block, ``[components.auc_ner.scheme]``.
"""
import inspect
import typing
from typing import Any, Dict, List

from spacy.util import registry

from .base import DECODERS, BIOScheme, Scheme, Targets
from .crf import CRFScheme
from .ova import OVAScheme
from .softmax import SoftmaxScheme
from .two_task import TwoTaskScheme

# the string form of a scheme -> its registered block
NAMED_SCHEMES: Dict[str, str] = {
    "ova": "spacy_auc_ner.OVA.v1",
    "two_task": "spacy_auc_ner.TwoTask.v1",
    "softmax": "spacy_auc_ner.Softmax.v1",
    "crf": "spacy_auc_ner.CRF.v1",
}

__all__ = [
    "DECODERS", "NAMED_SCHEMES", "BIOScheme", "CRFScheme", "OVAScheme", "Scheme", "SoftmaxScheme", "Targets",
    "TwoTaskScheme", "make_scheme", "scheme_config", "scheme_names",
]


def scheme_config(name: str, **settings: Any) -> Dict[str, Any]:
    """The block that the string `name` stands for, with the block's `settings` if any (KeyError
    for an unknown name)."""
    return {"@misc": NAMED_SCHEMES[name], **settings}


def make_scheme(name: str, **settings: Any) -> Scheme:
    """The scheme that the string `name` stands for, built from its registered block (with the
    block's `settings`: ``make_scheme("two_task", lam=3.0)``)."""
    return registry.resolve({"scheme": scheme_config(name, **settings)})["scheme"]


def scheme_names() -> List[str]:
    """Every registered scheme, sorted: the ``registry.misc`` entries (entry points included)
    that are classes with :class:`Scheme`'s members, or functions that return one (as spaCy's
    suggesters do); nothing is built."""
    return sorted(name for name, func in registry.misc.get_all().items() if _makes_a_scheme(func))


SCHEME_MEMBERS = tuple(sorted({*Scheme.__annotations__, *(n for n in vars(Scheme) if not n.startswith("_"))}))


def _makes_a_scheme(func) -> bool:
    if not inspect.isclass(func):
        try:
            func = typing.get_type_hints(func).get("return")
        except Exception:  # unresolvable annotations: not ours to judge
            return False
    return inspect.isclass(func) and (func is Scheme or all(hasattr(func, m) for m in SCHEME_MEMBERS))
