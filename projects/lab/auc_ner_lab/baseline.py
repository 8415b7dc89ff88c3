"""What a study's reports pair each result with: another method at the same draw (``ce``), or
the same method at one value of the setting (``resampler=none``)."""
from dataclasses import dataclass
from typing import Any, Optional, Protocol

from .settings import VALUE_NAMES
from .tuning import value_text


class Located(Protocol):
    """Where a result was measured, what `Baseline` reads of it (`aggregate.MethodResult` has
    it; aggregate imports this module, not the other way)."""

    corpus: str
    setting: str
    size: Optional[int]
    value: Any
    method: str


@dataclass(frozen=True)
class Baseline:
    """What each result is paired with: `Baseline.parse("ce")` the method ce at the same corpus,
    size and value; `Baseline.parse("resampler=none")` the same method at the value none of the
    setting whose values are named resampler (`settings.VALUE_NAMES`)."""

    method: Optional[str] = None
    value_name: Optional[str] = None
    value: Optional[str] = None

    @classmethod
    def parse(cls, text: Optional[str]) -> Optional["Baseline"]:
        if not text:
            return None
        if "=" in text:
            name, value = (part.strip() for part in text.split("=", 1))
            try:  # 0.70 names the value 0.7
                value = value_text(float(value))
            except ValueError:
                pass
            return cls(value_name=name, value=value)
        return cls(method=text)

    def __str__(self) -> str:
        return self.method if self.method is not None else f"{self.value_name}={self.value}"

    def describe(self) -> str:
        """For report sentences: '`ce`' or 'the same method at resampler=none'."""
        return f"`{self.method}`" if self.method is not None else f"the same method at {self}"

    def is_baseline(self, r: Located) -> bool:
        if self.method is not None:
            return r.method == self.method
        return VALUE_NAMES.get(r.setting) == self.value_name and value_text(r.value) == self.value

    def coordinates(self, r: Located) -> Optional[tuple]:
        """The lookup key (corpus, setting, size, value text, method) of r's baseline; None
        when r is a baseline itself or its setting has no such value."""
        if self.is_baseline(r):
            return None
        if self.method is not None:
            return (r.corpus, r.setting, r.size, value_text(r.value), self.method)
        if VALUE_NAMES.get(r.setting) != self.value_name:
            return None
        return (r.corpus, r.setting, r.size, self.value, r.method)
