"""The claims file (``studies/claims.yaml``): each claim of the papers names two sides, each a
method (``a: ova_auc``) or a method at a setting value (``a: {method: ce, value: sCRD}``), the
cells where the papers compare them (`Where`), what the paper found (``expect``) and the
results stores that hold the evidence; read into pydantic models so that bad input is one line
naming the file and the key. The rules that judge a claim are in `verdicts.py`."""
from dataclasses import dataclass
from pathlib import Path
from typing import Annotated, Any, Dict, List, Optional, Tuple

import srsly
from pydantic import BeforeValidator, model_validator

from spacy_auc_ner.api import PathLike

from .settings import DEFAULT_METRIC
from .validation import At, Section, validate
from .validation import expect as check

EXPECTATIONS = ("better", "similar", "worse", "rising", "falling")
TREND_EXPECTATIONS = ("rising", "falling")
DEFAULT_MARGIN = 0.02


class ClaimsError(ValueError):
    """A claims file that cannot be read; the message names the file and the key."""


@dataclass(frozen=True)
class Claim:
    id: str
    claim: str
    paper: str
    results: Tuple[str, ...]
    a: Dict[str, Any]
    b: Dict[str, Any]
    where: Dict[str, Tuple[Any, ...]]
    expect: str = "better"
    metric: str = DEFAULT_METRIC
    margin: float = DEFAULT_MARGIN
    trend: Optional[str] = None  # the axis a rising/falling claim reads ("value")
    note: str = ""  # a caveat printed under the table
    repeats: Optional[str] = None  # the id of the claim this one repeats on another encoder


def _side(value: Any) -> Any:
    if isinstance(value, str):
        return {"method": value}
    if isinstance(value, dict) and "method" in value and set(value) <= {"method", "value"}:
        return dict(value)
    raise ValueError(f"expected a method name or {{method: NAME, value: VALUE}}, not {value!r}")


def _listed(value: Any) -> Any:
    return value if isinstance(value, list) else [value]


Listed = Annotated[Optional[List[Any]], BeforeValidator(_listed)]  # one value, or a list of several


class Where(Section):
    """The cells a claim compares its sides on; a list for several values."""

    corpus: Listed = None
    setting: Listed = None
    size: Listed = None
    value: Listed = None


class ClaimEntry(Section):
    """A claim of `studies/claims.yaml` (see the module's docstring)."""

    id: str
    claim: str
    paper: str = ""
    results: Annotated[List[str], BeforeValidator(_listed)]
    a: Annotated[Dict[str, Any], BeforeValidator(_side)]
    b: Annotated[Dict[str, Any], BeforeValidator(_side)]
    where: Annotated[Where, BeforeValidator(lambda v: v or {})] = Where()
    expect: Annotated[str, check(lambda v: v in EXPECTATIONS, "{value} is not one of " + ", ".join(EXPECTATIONS))] = "better"
    metric: str = DEFAULT_METRIC
    margin: Annotated[float, check(lambda v: isinstance(v, (int, float)) and not isinstance(v, bool) and v > 0,
                                    "must be a positive number, not {value}")] = DEFAULT_MARGIN
    trend: Annotated[Optional[str], check(lambda v: v in (None, "value", "size"), "{value} is not an axis (value or size)")] = None
    note: str = ""
    repeats: Optional[str] = None

    @model_validator(mode="after")
    def _trend_with_its_expectations(self) -> "ClaimEntry":
        if (self.trend is None) != (self.expect not in TREND_EXPECTATIONS):
            raise ValueError(f"expect {', '.join(TREND_EXPECTATIONS)} goes with a trend axis and only with one")
        return self


class ClaimsFile(Section):
    claims: Annotated[List[ClaimEntry], check(lambda v: isinstance(v, list) and v, "a non-empty list of claims is expected, not {value}")]

    @model_validator(mode="after")
    def _ids_once(self) -> "ClaimsFile":
        seen = set()
        for i, claim in enumerate(self.claims):
            if claim.id in seen:
                raise At(("claims", i, "id"), f"{claim.id!r} is used twice")
            seen.add(claim.id)
        for i, claim in enumerate(self.claims):
            if claim.repeats is not None and claim.repeats not in seen:
                raise At(("claims", i, "repeats"), f"{claim.repeats!r} is not the id of a claim of this file")
        return self


def load_claims(path: PathLike) -> List[Claim]:
    """The claims of a claims file; its results stores' paths are relative to it."""
    path = Path(path)
    try:
        data = srsly.read_yaml(path)
    except OSError as err:
        raise ClaimsError(f"{path}: cannot read: {err.strerror or err}") from None
    except ValueError as err:  # srsly's "Invalid YAML" names the line and column
        raise ClaimsError(f"{path}: not valid YAML: {' '.join(str(err).split())}") from None
    if not isinstance(data, dict):
        raise ClaimsError(f"{path}: expected a mapping with a non-empty list under 'claims'")
    parsed = validate(ClaimsFile, data, source=str(path), error=ClaimsError)
    return [Claim(**{**dict(c), "margin": float(c.margin),
                     "results": tuple(str(path.parent / r) if not Path(r).is_absolute() else r for r in c.results),
                     "where": {k: tuple(v) for k, v in c.where.model_dump(exclude_none=True).items()}})
            for c in parsed.claims]


def side_name(side: Dict[str, Any]) -> str:
    return side["method"] if "value" not in side else f"{side['method']} ({side['value']})"
