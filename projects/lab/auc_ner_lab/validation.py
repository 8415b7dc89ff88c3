"""Validation of the lab's YAML files (study specs, claims) with pydantic, and the one place
that turns a pydantic ``ValidationError`` into the lab's one-line message
``<file>: <full.key.path>: <what is wrong>``, as spaCy and weasel turn theirs into
``[key -> path] message`` lines (``spacy/schemas.py``, ``weasel/schemas.py``: ``validate``).

A model of a file section derives from `Section`: an unknown key is refused with the keys the
section allows. A validator that knows better where the problem is than the field it checks
raises `At` with the key path relative to that field (a model validator of the whole spec can
so name ``sizes`` or ``methods[2]``).
"""
from typing import Any, ClassVar, Dict, Sequence, Tuple, Type, TypeVar

from pydantic import BaseModel, BeforeValidator, ConfigDict, ValidationError, model_validator

M = TypeVar("M", bound=BaseModel)
Loc = Tuple[Any, ...]


class At(ValueError):
    """A validation problem at key path `loc` below the field or model that raised it."""

    def __init__(self, loc: Loc, message: str):
        super().__init__(message)
        self.loc = tuple(loc)


class Section(BaseModel):
    """A mapping of a lab file: unknown keys are refused, naming those it allows (in the
    order the model declares them); ``noun`` names its keys in that message."""

    model_config = ConfigDict(extra="forbid")
    noun: ClassVar[str] = "key(s)"

    @model_validator(mode="before")
    @classmethod
    def _known_keys(cls, data: Any) -> Any:
        if isinstance(data, dict):
            allowed = list(cls.model_fields)
            unknown = sorted(str(k) for k in data if k not in allowed)
            if unknown:
                raise ValueError(f"unknown {cls.noun} {', '.join(unknown)}; allowed: {', '.join(allowed)}")
        return data


def expect(test, message: str) -> BeforeValidator:
    """A validator (for ``Annotated[type, expect(...)]``) refusing a value for which `test` is
    false with `message`, a format of the value's repr (``{value}``) saying what was expected."""

    def check(value):
        if not test(value):
            raise ValueError(message.format(value=repr(value)))
        return value

    return BeforeValidator(check)


def whole(value: Any) -> bool:
    """A whole number (YAML's true is not one)."""
    return isinstance(value, int) and not isinstance(value, bool)


def positive(what: str = "whole number") -> BeforeValidator:
    return expect(lambda v: whole(v) and v >= 1, "{value} is not a positive " + what)


def key_path(loc: Loc, data: Any = None) -> str:
    """A pydantic location as the lab's messages write it: ``methods[0] (ce).pretrain.epochs``
    (a list item of `data` that is a mapping with a ``name`` is followed by the name; a dict
    key's own validation is named by the key)."""
    text, node = "", data
    for part in loc:
        if part == "[key]":
            continue
        if isinstance(part, int):
            text += f"[{part}]"
            node = node[part] if isinstance(node, list) and -len(node) <= part < len(node) else None
            if isinstance(node, dict) and isinstance(node.get("name"), str):
                text += f" ({node['name']})"
            continue
        text += f".{part}" if text else str(part)
        node = node.get(part) if isinstance(node, dict) else None
    return text


def messages(err: ValidationError, data: Any = None) -> Sequence[str]:
    """One ``key.path: message`` per problem (``message`` alone for the whole file)."""
    out: Dict[str, None] = {}
    for error in err.errors():
        loc, cause = tuple(error.get("loc", ())), (error.get("ctx") or {}).get("error")
        if isinstance(cause, At):
            loc += cause.loc
        if isinstance(cause, ValueError):  # ours: its text as written, without pydantic's "Value error, "
            text = str(cause)
        elif error["type"] == "missing":
            text = "missing"
        else:  # pydantic's own: what it expected, and what it got
            text = f"{error['msg'][0].lower()}{error['msg'][1:]}, not {error.get('input')!r}"
        path = key_path(loc, data)
        out[f"{path}: {text}" if path else text] = None
    return list(out)


def validate(model: Type[M], data: Any, *, source: str, error: Type[Exception], context: Any = None) -> M:
    """`data` as a `model`, or `error` with one line: ``<source>: <key.path>: <message>``
    (several problems joined by ``; ``)."""
    try:
        return model.model_validate(data, context=context)
    except ValidationError as err:
        raise error(f"{source}: " + "; ".join(messages(err, data))) from None
