"""docs/evidence/campaign_status.md, how far each campaign has got, and the cells each campaign
spec holds (evidence/specs/<campaign>.md, for evidence.md's list of the campaigns)."""
from ..spec import load_spec
from ..store import latest_rows, superseded
from . import committed
from .committed import results_store
from .reports import OTHER_STUDIES


def status_table() -> str:
    """How far each campaign has got: finished cells of its grid, tuning trials apart, those
    whose row is superseded by a fix of the code it ran (`store.superseded`: read by the
    reports until `study run` trains them again, which it does), and the training time its
    rows record (summed over cells, so about twice the wall time with 2 workers), and the
    reported rows trained from a working tree with uncommitted changes that no stored diff
    records (`ResultsStore.untraced`: their commit alone does not say what code ran)."""
    lines = [
        "| study | reported cells done | tuning trials done | of them superseded (to train again) | failed | training hours recorded "
        "| reported rows from uncommitted trees (no stored diff) |",
        "|---|---:|---:|---:|---:|---:|---:|",
    ]
    specs = sorted((committed.ROOT / "studies").glob("campaign_*.yaml")) + [committed.ROOT / "studies" / f"{name}.yaml" for name in OTHER_STUDIES]
    for spec_path in specs:
        cells = load_spec(spec_path).cells()
        store = results_store(spec_path.stem)
        rows = latest_rows(store.rows_for(cells))
        done = {key for key, row in rows.items() if row.get("status") == "ok"}
        failed = sum(1 for c in cells if c.key in rows and rows[c.key].get("status") != "ok")
        trials = [c for c in cells if c.tuning is not None]
        reported = [c for c in cells if c.tuning is None]
        hours = sum(float(rows[c.key].get("seconds") or 0.0) for c in cells if c.key in rows) / 3600
        stale = sum(1 for c in cells if c.key in done and superseded(rows[c.key]))
        untraced = len(store.untraced([rows[c.key] for c in reported if c.key in done]))
        lines.append(
            f"| `{spec_path.stem}` | {sum(c.key in done for c in reported)} of {len(reported)} "
            f"| {sum(c.key in done for c in trials)} of {len(trials)} | {stale} | {failed} | {hours:.1f} | {untraced} |"
        )
    return "\n".join(lines) + "\n"


def spec_counts() -> dict:
    """{evidence/specs/<campaign>.md: "trials + reported"}: the cells each campaign spec holds
    (the MiniLM pair summed as campaign_minilm.md), for evidence.md's list of the campaigns."""
    counts = {}
    for spec in sorted((committed.ROOT / "studies").glob("campaign_*.yaml")):
        cells = load_spec(spec).cells()
        trials = sum(c.tuning is not None for c in cells)
        name = "campaign_minilm" if spec.stem.startswith("campaign_minilm") else spec.stem
        t, r = counts.get(name, (0, 0))
        counts[name] = (t + trials, r + len(cells) - trials)
    return {f"evidence/specs/{name}.md": f"{t} + {r}\n" for name, (t, r) in counts.items()}
