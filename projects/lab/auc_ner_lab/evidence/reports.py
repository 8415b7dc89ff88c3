"""Each study's report as `study report --spec` writes it (report.md, summary.json,
compute.json under docs/evidence/<study>/), without the plots, which scripts/evidence.py adds."""
from pathlib import Path

from ..report import write_report
from ..spec import load_spec
from . import committed

# the studies reported here besides the campaigns, with the baseline of their paired tests
OTHER_STUDIES = {"lowres_recipe": "spacy_ner"}


def report_texts(name: str, baseline=None) -> dict:
    """{docs-relative path: text} of a study's report (report.md, summary.json, compute.json)
    as `study report --spec studies/<name>.yaml` writes it, without plots; {} when the study
    has no report yet (no reported cell finished)."""
    import tempfile

    study = load_spec(committed.ROOT / "studies" / f"{name}.yaml")
    baseline = study.baseline if baseline is None else baseline
    with tempfile.TemporaryDirectory() as tmp:
        try:
            write_report(committed.ROOT / "results" / name, tmp, metric=study.metric, baseline=baseline or None, plots=False,
                         cells=study.cells(), value_order=[v for v in study.values if v is not None])
        except (FileNotFoundError, ValueError):
            return {}
        return {f"evidence/{name}/{f}": (Path(tmp) / f).read_text(encoding="utf8") for f in ("report.md", "summary.json", "compute.json")}
