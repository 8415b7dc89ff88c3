"""docs/reference.md's tables of what a registry holds name exactly what it holds: the readers,
the update strategies, the methods and the component's settings (the losses and schemes have
their own contract tests, tests/test_loss_contract.py and tests/test_scheme_contract.py)."""
import re
from pathlib import Path

from spacy.language import Language
from spacy.util import registry

import spacy_auc_ner  # noqa: F401  (registers the package's functions)
from spacy_auc_ner.methods import method_names

REFERENCE = Path(__file__).resolve().parents[1] / "docs" / "reference.md"


def _first_column(section: str):
    """The names in the first column of the first table under the heading ``## section``."""
    text = REFERENCE.read_text(encoding="utf8")
    body = text[text.index(f"## {section}\n"):]
    body = body[: body.find("\n## ", 1) if "\n## " in body[1:] else len(body)]
    rows = [line for line in body.splitlines() if line.startswith("| `")]
    return {name for row in rows for name in re.findall(r"`([\w.]+)", row.split("|")[1])}


def _registered(kind: str, module: str):
    return {name for name, func in getattr(registry, kind).get_all().items()
            if name.startswith("spacy_auc_ner.") and getattr(func, "__module__", "") == module}


def test_the_readers_table_names_every_registered_reader():
    readers = {n for n in registry.readers.get_all() if n.startswith("spacy_auc_ner.")}
    assert _first_column("Readers") == readers


def test_the_strategies_table_names_every_registered_update_strategy():
    assert _first_column("Update strategies (`ova`)") == _registered("misc", "spacy_auc_ner.pipeline.strategies")


def test_the_methods_table_names_every_method():
    assert _first_column("Configs") == set(method_names())


def test_the_settings_table_names_every_setting_of_the_component():
    assert _first_column("Settings of `auc_ner`") == set(Language.get_factory_meta("auc_ner").default_config)
